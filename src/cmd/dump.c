/*
 * framewalk dump: print every thread's current Python stack once, like
 * py-spy dump: thread name and native id, on or off CPU, frames innermost
 * last with file:line. Each thread is stopped (ptrace) for the moment its
 * stack is read, so the chain is one instant's; with --nonblocking, or when
 * ptrace is refused, the target keeps running and a read is retried until
 * two in a row agree.
 */
#include <errno.h>

#include "cmd/cmd.h"
#include "output/format.h"
#include "python/reader.h"
#include "python/thread_names.h"
#include "target/ptrace.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#define DUMP_TRIES 5

/* "Thread TID "NAME" on-cpu|off-cpu", the name made safe for a terminal. */
static void print_thread_header(pid_t pid, pid_t tid, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char state = '?';

	if (tid > 0)
		proc_task_state(pid, tid, &state);
	escape_append(&sb, name, ESCAPE_TERMINAL);
	printf("\nThread %d \"%s\" %s\n", (int)tid, strbuf_str(&sb),
	       state == 'R' ? "on-cpu" : "off-cpu");
	strbuf_release(&sb);
}

/* --native: one ptrace tick through the sampler, then print each stack. */
static int dump_native(const struct py_target *t, const struct sampler_opts *so)
{
	struct session sess;
	struct profile prof;
	struct strbuf sb = STRBUF_INIT;
	uint32_t *frames = xmalloc(sizeof(*frames) * 8192);
	int ret;

	profile_init(&prof);
	session_init(&sess, &prof, so);
	ret = session_add(&sess, t);
	if (!ret)
		ret = session_sample_once(&sess);
	if (ret == -EPERM) {
		fw_error("ptrace refused for process %d", (int)t->pid);
		cmd_permission_hints(t->pid);
	}
	for (size_t th = 0; th < prof.nthreads; th++) {
		print_thread_header(t->pid, prof.threads[th].tid,
				    profile_str(&prof, prof.threads[th].name));
		for (size_t i = 0; i < prof.ncounts; i++) {
			size_t depth;

			if (prof.counts[i].thread != th)
				continue;
			depth = profile_node_frames(&prof, prof.counts[i].node, frames, 8192);
			for (size_t k = 0; k < depth; k++) {
				strbuf_reset(&sb);
				format_frame(&sb, &prof, frames[k], ESCAPE_TERMINAL);
				printf("  %s\n", strbuf_str(&sb));
			}
		}
	}
	free(frames);
	strbuf_release(&sb);
	session_release(&sess);
	profile_release(&prof);
	return ret == -EPERM ? FW_EXIT_PERMISSION : FW_EXIT_OK;
}

static int same_stack(const struct py_frame_info *a, size_t na,
		      const struct py_frame_info *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].code != b[i].code || a[i].line != b[i].line || a[i].addr != b[i].addr)
			return 0;
	return 1;
}

/*
 * The target keeps running while it is read: a stack is printed only when
 * two reads in a row agree, so a dump never shows a chain that mixes two
 * moments. A thread that never stands still gets its last good read.
 */
static int read_stable_stack(struct py_reader *r, struct py_thread_info *t,
			     struct py_frame_info *frames, size_t *depth)
{
	struct py_frame_info *again = xcalloc(PY_MAX_DEPTH, sizeof(*again));
	size_t n2 = 0;
	int ret = -EFAULT, have = 0;

	for (int i = 0; i < DUMP_TRIES * 4; i++) {
		if (py_reader_thread_frame(r, t))
			break;
		ret = py_reader_stack(r, t, again, PY_MAX_DEPTH, &n2);
		if (ret)
			continue;
		if (have && same_stack(frames, *depth, again, n2))
			break;
		memcpy(frames, again, n2 * sizeof(*again));
		*depth = n2;
		have = 1;
	}
	free(again);
	return have ? 0 : ret;
}

/*
 * Read t's stack while the thread is stopped. -EPERM when ptrace is refused
 * (the caller falls back to reading it running), -ETIMEDOUT when it did not
 * stop in time (asleep in the kernel), -ESRCH when it is gone. A thread
 * stopped in the few instructions where its chain is not whole (a
 * generator yielding: its frame current, its caller link already cleared;
 * -EAGAIN) is let go and stopped again, at another instant.
 */
static int read_stopped_stack(struct py_reader *r, struct py_thread_info *t,
			      struct py_frame_info *frames, size_t *depth)
{
	int sig, ret = -EAGAIN;

	for (int i = 0; i < DUMP_TRIES * 4 && ret == -EAGAIN; i++) {
		ret = ptrace_stop_thread((pid_t)t->tid, NULL, &sig);
		if (ret)
			return ret;
		ret = py_reader_thread_frame(r, t);
		if (!ret && t->frame)
			ret = py_reader_stack(r, t, frames, PY_MAX_DEPTH, depth);
		else if (!ret)
			*depth = 0;
		ptrace_resume_thread((pid_t)t->tid, sig);
	}
	return ret;
}

/* How stacks are read: *may_stop drops to 0 on the first ptrace refusal. */
static int read_thread_stack(struct py_reader *r, struct py_thread_info *t,
			     struct py_frame_info *frames, size_t *depth, int *may_stop)
{
	int ret;

	if (*may_stop && t->tid > 0) {
		ret = read_stopped_stack(r, t, frames, depth);
		/*
		 * asleep in the kernel: its stack is not changing, read it
		 * running; never caught with its chain whole: read it running
		 * until two reads agree
		 */
		if (ret == -ETIMEDOUT || ret == -EAGAIN)
			return read_stable_stack(r, t, frames, depth);
		if (ret != -EPERM)
			return ret;
		*may_stop = 0;
		fw_warning("ptrace refused for thread %d: reading without stopping the target; "
			"stacks of threads that change fast may be retried or approximate",
			(int)t->tid);
	}
	return read_stable_stack(r, t, frames, depth);
}

static void print_thread(struct py_reader *r, struct py_thread_info *t,
			 struct py_thread_names *names, struct py_frame_info *frames,
			 int *may_stop)
{
	struct strbuf sb = STRBUF_INIT;
	const char *pyname = NULL;
	struct strbuf label = STRBUF_INIT;
	char name[64] = "?", interp[32];
	size_t depth = 0;
	int ret = -EFAULT;

	/* Python's name for the thread where it has one (as record labels it), else the kernel's */
	if (t->tid > 0 && names)
		pyname = py_thread_name(names, (pid_t)t->tid, 1, fw_now_ns());
	if (t->tid > 0 && !pyname)
		proc_task_comm(r->target->pid, t->tid, name, sizeof(name));
	py_reader_interp_label(r, t, interp, sizeof(interp));
	strbuf_addf(&label, "%s%s", pyname ? pyname : name, interp);
	print_thread_header(r->target->pid, t->tid, strbuf_str(&label));
	strbuf_release(&label);
	if (!t->frame) {
		printf("  (no Python frames)\n");
		strbuf_release(&sb);
		return;
	}
	ret = read_thread_stack(r, t, frames, &depth, may_stop);
	if (ret == -ESRCH)
		printf("  (the thread exited while being read)\n");
	else if (ret)
		printf("  (stack unreadable: %s)\n", strerror(-ret));
	else if (!depth)
		printf("  (no Python frames)\n");
	for (size_t k = 0; !ret && k < depth; k++) {
		size_t i = depth - 1 - k;

		strbuf_reset(&sb);
		escape_append(&sb, frames[i].code->name, ESCAPE_TERMINAL);
		strbuf_addstr(&sb, " (");
		escape_append(&sb, frames[i].code->file, ESCAPE_TERMINAL);
		strbuf_addf(&sb, ":%d)", frames[i].line);
		printf("  %s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
}

struct dump_opts {
	struct sampler_opts so;
	int pid;
	int nonblocking;
};

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_dump_args(int argc, char **argv, struct dump_opts *o)
{
	struct cmd_sampling_opts sampling;
	int ret, nargs;

	memset(o, 0, sizeof(*o));
	cmd_sampling_defaults(&cmd_sampling_dump, &o->so);
	o->so.rate_hz = 1;
	cmd_sampling_opts_init(&sampling, &cmd_sampling_dump, &o->so);
	{
		/* not the sampling options' --nonblocking (--backend vm): dump has no backend */
		const struct opt opts[] = {
			OPT_CALL('p', "pid", &o->pid, "PID", "the process", opts_pid),
			OPT_BOOL(0, "nonblocking", &o->nonblocking, "never stop the target (Python "
				 "frames only): a stack is printed when two reads in a row agree"),
			OPT_INCLUDE(sampling.table),
			OPT_TERMINATOR,
		};
		const struct opt_command cmd = {
			"dump", "usage: framewalk dump [--native [--kernel]] [--nonblocking] -p PID\n",
			"Print the current stack of every thread of a process once, innermost frame "
			"last. Each thread is stopped (ptrace) for the moment its stack is read, so "
			"every stack is one instant's.\n", NULL, opts, 0,
		};

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	cmd_sampling_opts_release(&sampling);
	if (ret)
		return ret;
	if (nargs)
		return cmd_usage_error("dump", "unexpected argument: '%s' (dump reads a running "
				       "process: -p PID)", argv[1]);
	if (!o->pid) {
		fw_error("nothing to dump: give -p PID");
		return FW_EXIT_USAGE;
	}
	if (o->so.native && o->nonblocking) {
		fw_error("--native stops each thread to read its registers; it cannot be --nonblocking");
		return FW_EXIT_USAGE;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o;
	struct sampler_opts so;
	struct py_thread_info *threads;
	struct py_frame_info *frames;
	struct target_mem mem;
	struct py_target t;
	struct py_reader r;
	struct strbuf sb = STRBUF_INIT;
	struct py_objects ob;
	struct py_thread_names names;
	char comm[64] = "?";
	size_t n = 0;
	int pid, ret, code, may_stop, have_names;

	ret = parse_dump_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	so = o.so;
	pid = o.pid;
	may_stop = !o.nonblocking;
	ret = -EFAULT;
	code = cmd_attach(pid, &t);
	if (code)
		return code;
	if (so.native) {
		so.backend = BACKEND_PTRACE;
		/*
		 * Every thread's stack once: wall mode. In cpu mode a first tick
		 * weighs the CPU time since a previous sample, which a dump does
		 * not have (nothing printed), and skips the sleeping threads.
		 */
		so.mode = MODE_WALL;
		proc_task_comm(pid, pid, comm, sizeof(comm));
		escape_append(&sb, comm, ESCAPE_TERMINAL);
		printf("Process %d (%s), Python %s\n", pid, strbuf_str(&sb), t.version);
		strbuf_release(&sb);
		return dump_native(&t, &so);
	}
	mem_init_pid(&mem, pid);
	py_reader_init(&r, &mem, &t);
	threads = xcalloc(PY_MAX_THREADS, sizeof(*threads));
	frames = xcalloc(PY_MAX_DEPTH, sizeof(*frames));
	for (int i = 0; i < DUMP_TRIES && ret; i++)
		ret = py_reader_threads(&r, threads, PY_MAX_THREADS, &n);
	proc_task_comm(pid, pid, comm, sizeof(comm));
	escape_append(&sb, comm, ESCAPE_TERMINAL);
	printf("Process %d (%s), Python %s\n", pid, strbuf_str(&sb), t.version);
	if (ret == -EAGAIN)
		printf("\n(the interpreter has no threads: starting up or shutting down)\n");
	else if (ret)
		fw_error("cannot read the thread list of process %d: %s", pid, strerror(-ret));
	else if (r.stats.threads_capped)
		printf("(%zu of %zu Python threads shown: at most %d are read, the newest)\n", n,
		       r.threads_listed, PY_MAX_THREADS);
	have_names = !ret && !py_objects_init(&ob, &r);
	if (have_names)
		py_thread_names_init(&names, &ob);
	for (size_t i = 0; !ret && i < n; i++)
		print_thread(&r, &threads[i], have_names ? &names : NULL, frames, &may_stop);
	if (have_names) {
		py_thread_names_release(&names);
		py_objects_release(&ob);
	}
	free(threads);
	free(frames);
	py_reader_release(&r);
	strbuf_release(&sb);
	/* a thread that did not stop in time is still seized: let it go */
	ptrace_release_held(PTRACE_STOP_WAIT_NS);
	return ret && ret != -EAGAIN ? FW_EXIT_FAILURE : FW_EXIT_OK;
}
