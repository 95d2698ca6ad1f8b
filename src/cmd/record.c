/*
 * framewalk record: sample a running process (-p PID) or a command it
 * starts, for a duration or until Ctrl-C or the target's exit, and write the
 * profile. The output path is opened before sampling starts and the profile
 * is always written, whichever way the capture ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "output/format.h"
#include "output/output.h"
#include "sampler/labels.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/util.h"

#define LAUNCH_WAIT_NS (10ull * 1000000000ull)
#define MAX_PIDS 64
#define LIBPYTHON_WAIT_NS (1000ull * 1000000ull)

static const char record_usage[] =
	"usage: framewalk record [options] -p PID\n"
	"       framewalk record [options] -- COMMAND [ARGS...]\n";

static const char record_about[] =
	"Sample the stacks of every thread of a Python process and write a profile: "
	"whole stacks (Python, C extensions, native libraries) where the backend "
	"reads them without stopping more, Python frames with --python-only.\n";

static const char record_footer[] =
	"A command started by framewalk is profiled until it exits; when -d ends the "
	"capture first, the command is sent SIGTERM.\n";

struct record_opts {
	int pids[MAX_PIDS];
	struct opt_pid_list pid_list;     /* over pids */
	int all_python;
	struct cmd_outputs outs;
	int quiet;
	struct sampler_opts sampling;
	struct output_opts out;
	char **command;
};

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_record_args(int argc, char **argv, struct record_opts *o)
{
	struct cmd_sampling_opts sampling;
	struct cmd_output_table outputs;
	int ret, nargs;

	memset(o, 0, sizeof(*o));
	o->pid_list = (struct opt_pid_list){ o->pids, 0, MAX_PIDS };
	cmd_sampling_defaults(&cmd_sampling_record, &o->sampling);
	cmd_sampling_opts_init(&sampling, &cmd_sampling_record, &o->sampling);
	o->outs.use = OUTFMT_PROFILE;
	output_opts_default(&o->out);
	cmd_output_table_init(&outputs, &o->outs, &o->out, "write the profile to FILE (default: "
			      "text report on stdout)");
	{
		const struct opt opts[] = {
			OPT_CALL('p', "pid", &o->pid_list, "PID", "the process to profile (may be "
				 "given several times)", opts_pid_list),
			OPT_BOOL(0, "all-python", &o->all_python, "every Python process on the host "
				 "(each labeled)"),
			OPT_INCLUDE(sampling.table),
			OPT_INCLUDE(outputs.table),
			OPT_BOOL('q', "quiet", &o->quiet, "no live status line on stderr"),
			OPT_TERMINATOR,
		};
		const struct opt_command cmd = {
			"record", record_usage, record_about, record_footer, opts, OPTS_STOP_AT_ARG,
		};

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	cmd_output_table_release(&outputs);
	cmd_sampling_opts_release(&sampling);
	if (ret)
		return ret;
	if (nargs)
		o->command = argv + 1;
	if (!o->pid_list.n && !o->command && !o->all_python)
		return cmd_usage_error("record", "nothing to profile: give -p PID, --all-python or "
				       "-- COMMAND");
	if ((o->pid_list.n || o->all_python) && o->command)
		return cmd_usage_error("record", "give either -p PID / --all-python or a command, "
				       "not both");
	o->sampling.announce = !o->quiet;
	cmd_outputs_resolve(&o->outs, 1);
	return 0;
}

/* Start the command; return its pid once exec succeeded, or -errno. */
static pid_t launch(char **argv)
{
	int pipefd[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		close(pipefd[0]);
		execvp(argv[0], argv);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		return -err;
	}
	return pid;
}

/* Is pid a Python process? (Nothing printed.) */
static int is_python(pid_t pid)
{
	struct py_target t;
	int ret = py_discover_quiet(pid, &t);

	return ret == 0 || (ret != -ENOEXEC && ret != -ENOTSUP);
}

/* A Python process among pid's descendants (the first found), or 0. */
static pid_t python_descendant(pid_t pid)
{
	pid_t *kids, found = 0;
	size_t n;

	if (proc_descendants(pid, SESSION_CHILD_DEPTH, &kids, &n))
		return 0;
	for (size_t i = 0; i < n && !found; i++) {
		struct py_target t;

		if (!py_discover_quiet(kids[i], &t))
			found = kids[i];
	}
	free(kids);
	return found;
}

/* Has the started command exited? Reaps it and says so, once. */
static int child_exited(pid_t pid, int subprocesses)
{
	int status;

	if (waitpid(pid, &status, WNOHANG) != pid)
		return 0;
	fw_error("the command exited (%s %d) before a Python runtime appeared in %s",
		 WIFEXITED(status) ? "status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		 subprocesses ? "it or its descendants" : "it");
	return 1;
}

/*
 * Wait until pid shows a Python runtime (a command just started: child);
 * with --subprocesses, a process that is not Python itself (a shell, a
 * wrapper script) until a Python process appears among its descendants:
 * *target is the process found. The wait ends at wait_ns (-d; without it
 * 10 s, and with --subprocesses when the process exits), or Ctrl-C.
 */
static int wait_for_python(pid_t pid, int child, int subprocesses, uint64_t wait_ns,
			   struct py_target *t, pid_t *target)
{
	uint64_t started = fw_now_ns(), deadline = started + wait_ns;
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	int ret;

	*target = pid;
	mem_init_pid(&mem, pid);
	for (;;) {
		pid_t below;

		strbuf_reset(&why);
		if (!child && proc_exists(pid))
			break;          /* cmd_attach says so */
		if (child && child_exited(pid, subprocesses)) {
			mem_release(&mem);
			strbuf_release(&why);
			return FW_EXIT_NOT_PYTHON;
		}
		ret = py_discover(pid, &mem, t, &why);
		/* Gone from under the look: it is exiting; it is reaped above. */
		if (child && ret == -ESRCH && fw_now_ns() < deadline && !cmd_stop_requested) {
			usleep(5000);
			continue;
		}
		/* Right after exec the loader may not have mapped libpython yet. */
		if (ret == -ENOTSUP && fw_now_ns() - started < LIBPYTHON_WAIT_NS)
			ret = -ENOEXEC;
		if ((ret == -ENOEXEC || ret == -ENOTSUP) && subprocesses &&
		    (below = python_descendant(pid))) {
			*target = below;
			break;
		}
		if (ret != -ENOEXEC || fw_now_ns() > deadline || cmd_stop_requested)
			break;
		usleep(5000);
	}
	mem_release(&mem);
	strbuf_release(&why);
	/* It may have exited while it was looked at: that, not "no such process". */
	if (child && *target == pid && child_exited(pid, subprocesses))
		return FW_EXIT_NOT_PYTHON;
	return cmd_attach(*target, t);
}

/*
 * A started command is held (SIGSTOP) from the moment its Python runtime is
 * found until the capture's loop runs: loading the backend and reading the
 * interpreter's files takes up to a second or two, and a short command
 * would otherwise run its first second, or all of it, unsampled. Released
 * by the loop's first pass, and on every way out.
 */
struct held {
	pid_t pid;
};

static void release_held(struct held *h)
{
	if (h->pid > 0)
		kill(h->pid, SIGCONT);
	h->pid = 0;
}

/* The capture's hook: the held target goes on at the start; --count-calls asks each target. */
struct record_hook {
	struct held *held;
	struct cmd_calls *calls;    /* NULL: no --count-calls */
	const struct session *sess;
};

static int record_pass(void *ctx, uint64_t now, uint64_t *next)
{
	struct record_hook *h = ctx;

	release_held(h->held);
	*next = now + 3600ull * 1000000000ull;
	if (h->calls)
		cmd_calls_pass(h->calls, h->sess, now, next);
	return 0;
}

static void stop_child(pid_t child, const struct session *sess)
{
	int status;

	if (child <= 0 || session_child_reaped(sess))
		return;
	if (waitpid(child, &status, WNOHANG) == child)
		return;
	if (sess->stop_reason != SAMPLER_STOP_TARGET_EXIT)
		kill(child, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (waitpid(child, &status, WNOHANG) == child)
			return;
		usleep(10000);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

static void fill_meta(struct profile *prof, const struct session *sess,
		      const struct sampler_opts *so)
{
	struct strbuf target = STRBUF_INIT, versions = STRBUF_INIT;

	for (size_t i = 0; i < sess->n; i++) {
		const struct py_target *t = session_target(sess, i);
		char cmdline[1024] = "";

		proc_cmdline(t->pid, cmdline, sizeof(cmdline));
		if (sess->n > 1)
			strbuf_addf(&target, "%s%d: ", i ? "; " : "", (int)t->pid);
		strbuf_addstr(&target, cmdline[0] ? cmdline : t->exe);
		if (!strstr(strbuf_str(&versions), t->version))
			strbuf_addf(&versions, "%s%s", versions.len ? ", " : "", t->version);
	}
	prof->meta.pid = sess->n == 1 ? session_target(sess, 0)->pid : 0;
	prof->meta.mode = xstrdup(sample_mode_name(so->mode));
	prof->meta.target = strbuf_detach(&target);
	prof->meta.python_version = strbuf_detach(&versions);
	prof->meta.backend = xstrdup(backend_description(so));
	if (so->labels.n) {
		struct strbuf sb = STRBUF_INIT;

		label_specs_describe(so->labels.l, so->labels.n, &sb);
		prof->meta.label_specs = strbuf_detach(&sb);
	}
}

/* Write every output; each lands whole or not at all. */
static int write_outputs(const struct profile *prof, const struct record_opts *o,
			 struct outfile *of)
{
	int code = FW_EXIT_OK;

	for (int i = 0; i < o->outs.n; i++) {
		const char *path = o->outs.paths[i];
		int ret = outfmt_write(o->outs.formats[i], prof, of[i].f, &o->out);

		if (!ret)
			ret = outfile_commit(&of[i]);
		else
			outfile_abort(&of[i]);
		/* A reader that went away (| head) is not an error worth a message. */
		if (ret && !strcmp(path, "-") && errno == EPIPE)
			continue;
		if (ret) {
			fw_error("writing the profile to %s failed: %s",
				 strcmp(path, "-") ? path : "stdout", strerror(-ret));
			code = FW_EXIT_OUTPUT;
		}
	}
	return code;
}

/* The targets found before the capture starts. */
struct target_list {
	struct py_target *t;
	size_t n, alloc;
	size_t named;               /* the first ones, given by -p or the command */
};

static int listed(const struct target_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].pid == pid)
			return 1;
	return 0;
}

static void list_add(struct target_list *l, const struct py_target *t)
{
	if (listed(l, t->pid))
		return;
	l->t = xgrow(l->t, sizeof(*l->t), l->n + 1, &l->alloc);
	l->t[l->n++] = *t;
}

/* Every Python process on the host but ourselves (for --all-python). */
static void find_all_python(struct target_list *l)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct py_target t;
		long v;

		if (parse_long(de->d_name, &v) || v <= 0 || v == getpid())
			continue;
		if (!py_discover_quiet((pid_t)v, &t))
			list_add(l, &t);
	}
	closedir(d);
}

/* -d in nanoseconds, or otherwise when none was given. */
static uint64_t duration_ns(const struct record_opts *o, uint64_t otherwise)
{
	return o->sampling.duration_s > 0 ? (uint64_t)(o->sampling.duration_s * 1e9) : otherwise;
}

/* Find every target the options name (starting the command). Returns an exit code. */
static int find_targets(struct record_opts *o, struct target_list *l, pid_t *child,
			pid_t *root, struct held *held)
{
	struct py_target target;
	int code;

	*child = 0;
	if (o->command) {
		pid_t pid = launch(o->command), found;
		uint64_t wait_ns = duration_ns(o, o->sampling.subprocesses ? UINT64_MAX / 2 :
					       LAUNCH_WAIT_NS);

		if (pid < 0) {
			fw_error("cannot run %s: %s", o->command[0], strerror((int)-pid));
			return FW_EXIT_FAILURE;
		}
		*child = pid;
		code = wait_for_python(pid, 1, o->sampling.subprocesses, wait_ns, &target, &found);
		if (!code && !kill(found, SIGSTOP))
			held->pid = found;
		if (code) {
			release_held(held);
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			*child = 0;
			return code;
		}
		list_add(l, &target);
		l->named = l->n;
		return FW_EXIT_OK;
	}
	for (int i = 0; i < o->pid_list.n; i++) {
		pid_t found = o->pids[i];

		/* --subprocesses -p SHELL: the Python processes under it (py-spy's too) */
		if (o->sampling.subprocesses && !is_python(o->pids[i]))
			code = wait_for_python(o->pids[i], 0, 1, duration_ns(o, UINT64_MAX / 2),
					       &target, &found);
		else
			code = cmd_attach(o->pids[i], &target);
		if (code)
			return code;
		if (found != o->pids[i])
			*root = o->pids[i];
		list_add(l, &target);
	}
	l->named = l->n;
	if (o->all_python)
		find_all_python(l);
	if (o->all_python && !l->n) {
		fw_error("no Python process found on this host");
		fw_hint("framewalk reads processes it may ptrace: run as root to see every user's");
		return FW_EXIT_NOT_PYTHON;
	}
	return FW_EXIT_OK;
}

/* Sample every listed target. Returns an exit code. */
static int add_targets(struct session *sess, const struct target_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		int ret = session_add(sess, &l->t[i]);

		if (ret) {
			fw_error("cannot sample process %d: %s", (int)l->t[i].pid, strerror(-ret));
			return FW_EXIT_FAILURE;
		}
	}
	return FW_EXIT_OK;
}

/* --async and --mode exception on targets that cannot give them: one error, before sampling. */
static int check_views(const struct target_list *tl, const struct sampler_opts *so)
{
	int code = FW_EXIT_OK;

	for (size_t i = 0; i < tl->n && !code; i++)
		code = cmd_check_views("record", &tl->t[i], so);
	return code;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct outfile of[CMD_MAX_OUTPUTS];
	struct sampler_opts so;
	struct session sess;
	struct profile prof;
	struct strbuf why = STRBUF_INIT;
	struct target_list targets = { NULL, 0, 0, 0 };
	struct held held = { 0 };
	pid_t root = 0;
	struct record_hook rh = { &held, NULL, NULL };
	struct capture_hook hook = { &rh, -1, record_pass };
	pid_t child = 0;
	const struct cmd_stop_outcome *outcome;
	int ret, code;

	ret = parse_record_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	/* Check the outputs before anything else happens. */
	code = cmd_open_outputs(of, o.outs.paths, o.outs.n);
	if (code)
		return code;
	/* A low ulimit -n: one clear line now, not a capture with holes. */
	code = cmd_fd_limits(&o.sampling, NULL, 0);
	if (code) {
		cmd_abort_outputs(of, o.outs.n);
		return code;
	}
	cmd_install_signals();
	so = o.sampling;
	so.stop = &cmd_stop_requested;
	so.status_line = !o.quiet && isatty(STDERR_FILENO);
	profile_init(&prof);
	code = find_targets(&o, &targets, &child, &root, &held);
	so.child = child;
	if (!code)
		code = check_views(&targets, &so);
	/*
	 * A process named with -p (or the command) that cannot count ends the
	 * command with its reason; one --all-python found is said and sampled
	 * without counts (cmd_calls_pass), as a --subprocesses child is.
	 */
	if (!code && so.count_calls)
		code = cmd_calls_check("record", targets.named, targets.t);
	/* The backend is chosen once the targets are known: ptrace is probed on one. */
	if (!code)
		code = cmd_choose_backend("record", &so, child ? 0 : targets.n ? targets.t[0].pid : 0);
	if (!code)
		code = cmd_fd_limits(&so, targets.t, targets.n);
	so.fixed_targets = 1;
	session_init(&sess, &prof, &so);
	if (!code)
		code = add_targets(&sess, &targets);
	/* the command (or -p process) is not Python itself: its Python descendants are followed */
	if (!code && child && so.subprocesses && targets.n && targets.t[0].pid != child)
		root = child;
	if (!code && root)
		session_follow_root(&sess, root);
	free(targets.t);
	if (code) {
		release_held(&held);
		if (child) {
			kill(child, SIGTERM);
			waitpid(child, NULL, 0);
		}
		cmd_abort_outputs(of, o.outs.n);
		session_release(&sess);
		profile_release(&prof);
		return code;
	}
	fill_meta(&prof, &sess, &so);
	if (so.count_calls)
		rh.calls = cmd_calls_new(&so, &prof);
	rh.sess = &sess;
	ret = session_run(&sess, held.pid || rh.calls ? &hook : NULL, &why);
	release_held(&held);
	if (rh.calls)
		cmd_calls_finish(rh.calls, &sess);
	if (ret) {
		/* nothing was captured: no empty outputs, the true reason */
		code = cmd_backend_failed(session_backend_name(&sess), ret, &why);
		strbuf_release(&why);
		if (child)
			stop_child(child, &sess);
		cmd_abort_outputs(of, o.outs.n);
		session_release(&sess);
		profile_release(&prof);
		return code;
	}
	strbuf_release(&why);
	/* the backend may have fallen back: the profile names the one that ran */
	free(prof.meta.backend);
	prof.meta.backend = xstrdup(backend_description(&sess.opts));
	if (child)
		stop_child(child, &sess);
	if (sess.stop_reason == SAMPLER_STOP_TARGET_EXIT && !prof.meta.samples) {
		/* nothing to show: no empty profile in place of one the user has */
		struct strbuf what = STRBUF_INIT;

		if (child) {
			/* as given, and the Python program it ran if another (chroot, env) */
			const char *cmd = strrchr(o.command[0], '/'), *exe;

			cmd = cmd ? cmd + 1 : o.command[0];
			escape_append(&what, cmd, ESCAPE_TERMINAL);
			if (sess.n) {
				exe = strrchr(session_target(&sess, 0)->exe, '/');
				exe = exe ? exe + 1 : session_target(&sess, 0)->exe;
				if (strcmp(exe, cmd)) {
					strbuf_addstr(&what, " (");
					escape_append(&what, exe, ESCAPE_TERMINAL);
					strbuf_addstr(&what, ")");
				}
			}
		}
		fw_error("%s%s exited after %.1f s, before any sample was taken",
			 child ? "the command " : "the target", strbuf_str(&what),
			 (double)prof.meta.duration_ns / 1e9);
		fw_hint("%s; a target that ran on no CPU gives no samples in cpu mode: "
			"--mode wall samples it whatever it does; no output was written", child ?
			"a command that ends this quickly has nothing to profile: profile a longer run" :
			"profile it while it runs");
		strbuf_release(&what);
		cmd_abort_outputs(of, o.outs.n);
		session_release(&sess);
		profile_release(&prof);
		return FW_EXIT_NO_SAMPLES;
	}
	cmd_apply_where(&prof, &o.out);
	code = write_outputs(&prof, &o, of);
	outcome = cmd_stop_outcome(sess.stop_reason);
	if (!code && !o.quiet) {
		fw_note("%s after %.1f s: %llu samples, %llu errors", outcome->text,
			(double)prof.meta.duration_ns / 1e9, (unsigned long long)prof.meta.samples,
			(unsigned long long)prof.meta.errors);
		for (int i = 0; i < o.outs.n; i++)
			if (strcmp(o.outs.paths[i], "-"))
				fw_note("wrote %s", o.outs.paths[i]);
	}
	if (outcome->error && !code) {
		fw_error("%s", outcome->error);
		code = outcome->code;
	}
	session_release(&sess);
	profile_release(&prof);
	return code;
}
