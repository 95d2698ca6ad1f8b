/*
 * framewalk check: can this machine profile, with which backends, and will
 * native stacks get through every module? The facts come from
 * audit/gather.h (environment, the target's or an installation's
 * interpreter and modules, each module's frame pointers and unwind tables);
 * this file turns them into problems and the exit code that lets scripts
 * gate on the result (docs/CHECK.md), and hands both to the text or JSON
 * renderer (check_text.c, check_json.c).
 */
#include <errno.h>

#include "cmd/check.h"
#include "cmd/cmd.h"
#include "sampler/bpf.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

static void problem(struct check *c, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);

/*
 * Record a failure: its message and the exit code it asks for. Target
 * problems (3, 4, 5, 8, then 1 for anything unexpected) outrank permission
 * (6), which outranks the rest (9).
 */
static void problem(struct check *c, int code, const char *fmt, ...)
{
	static const int rank[] = { FW_EXIT_CHECK_FAILED, FW_EXIT_PERMISSION, FW_EXIT_FAILURE,
				    FW_EXIT_BAD_INPUT, FW_EXIT_UNSUPPORTED, FW_EXIT_NOT_PYTHON,
				    FW_EXIT_NO_PROCESS };
	int old = -1, new = -1;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (c->nproblems < ARRAY_SIZE(c->problems))
		strbuf_addstr(&c->problems[c->nproblems++], buf);
	for (int i = 0; i < (int)ARRAY_SIZE(rank); i++) {
		if (rank[i] == c->exit_code)
			old = i;
		if (rank[i] == code)
			new = i;
	}
	if (new > old)
		c->exit_code = code;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static int opt_site(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)err;
	*(const char **)o->value = arg ? arg : "";
	return 0;
}

static int opt_backend(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct check_opts *co = o->value;
	enum backend b;

	if (backend_parse(arg, &b) || b == BACKEND_AUTO) {
		strbuf_addf(err, "unknown backend: '%s' (", arg);
		cmd_backend_names(err, 0);
		strbuf_addch(err, ')');
		return -1;
	}
	co->need |= CHECK_NEED(b);
	co->need_given = 1;
	return 0;
}

/* The backends that read native stacks, as CHECK_NEED bits. */
static unsigned native_backends(void)
{
	unsigned bits = 0;

	for (int b = BACKEND_VM; b < BACKEND_COUNT; b++)
		if (backend_info((enum backend)b)->native)
			bits |= CHECK_NEED(b);
	return bits;
}

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_args(int argc, char **argv, struct check_opts *o)
{
	struct strbuf backend_help = STRBUF_INIT, native_help = STRBUF_INIT;
	int ret, nargs;

	strbuf_addstr(&backend_help, "require backend B: ");
	cmd_backend_names(&backend_help, 0);
	strbuf_addf(&backend_help, " (repeatable; default %s for a machine or a process)",
		    backend_name(BACKEND_VM));
	strbuf_addf(&native_help, "require native stacks: %s, and every module unwindable",
		    backend_name(BACKEND_PTRACE));
	memset(o, 0, sizeof(*o));
	{
		const struct opt opts[] = {
			OPT_CALL('p', "pid", &o->pid, "PID", "a running process: its interpreter "
				 "and every module it has loaded", opts_pid),
			OPT_STR(0, "python", &o->python, "PATH", "an installation, read from its "
				"files (never run)"),
			OPT_CALL_OPTARG(0, "site-packages", &o->site, "DIR", "also every extension "
					"under its site-packages (or under DIR, e.g. a "
					"virtualenv's)", opt_site),
			OPT_STR(0, "root", &o->root, "DIR", "the installation lives in this sysroot "
				"(default: guessed from PATH, e.g. a chroot's DIR/usr/bin)"),
			OPT_CALL(0, "backend", o, "B", strbuf_str(&backend_help), opt_backend),
			OPT_BOOL(0, "native", &o->native, strbuf_str(&native_help)),
			OPT_BOOL(0, "json", &o->json, "the report as JSON"),
			OPT_BOOL('v', "verbose", &o->verbose, "per-module details (paths, counts, "
				 "debug files)"),
			OPT_TERMINATOR,
		};
		const struct opt_command cmd = {
			"check",
			"usage: framewalk check [-p PID] [--backend B]... [--native] [--json] [-v]\n"
			"       framewalk check --python PATH [--site-packages[=DIR]] [--root DIR] "
			"[--json] [-v]\n"
			"       framewalk check [options] ELF-FILE...\n",
			"Audit whether profiling works here: permissions and environment, which "
			"backends are usable (and the exact fix for each that is not), and for a "
			"process or an installation the interpreter's build and, for every module, "
			"frame pointers, unwind tables, symbols and build-id.\n",
			"Exit status: 0 when everything required works; 3 no such process, 4 not "
			"Python, 5 unsupported version, 8 unreadable file, 6 a required backend lacks "
			"a privilege, 9 something else required does not work (a module that cannot "
			"be unwound, a missing kernel feature).\n",
			opts, 0,
		};

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	strbuf_release(&backend_help);
	strbuf_release(&native_help);
	if (ret)
		return ret;
	o->files = argv + 1;
	o->nfiles = nargs;
	if (o->pid && o->python)
		return cmd_usage_error("check", "give either -p PID or --python PATH, not both");
	if ((o->site || o->root) && !o->python)
		return cmd_usage_error("check", "--site-packages and --root need --python PATH");
	if (o->pid)
		o->mode = CHECK_PROCESS;
	else if (o->python)
		o->mode = CHECK_INSTALL;
	else if (o->nfiles)
		o->mode = CHECK_FILES;
	else
		o->mode = CHECK_MACHINE;
	if (o->native && !(o->need & native_backends()))
		o->need |= CHECK_NEED(BACKEND_PTRACE);
	if (!o->need_given && !o->native && (o->mode == CHECK_MACHINE || o->mode == CHECK_PROCESS))
		o->need |= CHECK_NEED(BACKEND_VM);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */

const struct audit_backend *check_backend(const struct check *c, enum backend b)
{
	return &c->f.backends[b];
}

int check_requires(const struct check *c, enum backend b)
{
	return (c->o.need & CHECK_NEED(b)) != 0;
}

enum backend check_default_backend(const struct check *c, int *whole_stacks)
{
	enum backend b = backend_auto_pick(
		BACKEND_USABLE(BPF, check_backend(c, BACKEND_BPF)->status == AUDIT_USABLE) |
		BACKEND_USABLE(PTRACE, check_backend(c, BACKEND_PTRACE)->status != AUDIT_UNUSABLE) |
		BACKEND_USABLE(VM, 1));

	if (whole_stacks)
		*whole_stacks = backend_whole_stacks_default(b, MODE_CPU);
	return b;
}

/* What finding the interpreter said, as a problem. */
static void discovery_problem(struct check *c)
{
	const struct audit_facts *f = &c->f;
	const char *why = strbuf_str(&f->discover_why);

	switch (f->discover_err) {
	case 0:
		break;
	case -ESRCH:
		if (f->has_target && f->target.kthread)
			problem(c, FW_EXIT_NOT_PYTHON, "process %d (%s) is a kernel thread, not a "
				"Python process", (int)c->o.pid, f->comm);
		else
			problem(c, FW_EXIT_NO_PROCESS, "no such process: %d", (int)c->o.pid);
		break;
	case -ENOEXEC:
		problem(c, FW_EXIT_NOT_PYTHON, "%s", why);
		break;
	case -ENOTSUP:
	case -EPROTO:
		problem(c, FW_EXIT_UNSUPPORTED, "%s", why);
		break;
	case -EPERM:
	case -EACCES:
		problem(c, FW_EXIT_PERMISSION, "%s", why);
		break;
	default:
		problem(c, FW_EXIT_FAILURE, "%s", why);
		break;
	}
}

static void install_problem(struct check *c)
{
	int err = c->f.install_err;

	if (err)
		problem(c, err == -ESRCH ? FW_EXIT_NOT_PYTHON : err == -ENOTSUP ? FW_EXIT_UNSUPPORTED :
			FW_EXIT_BAD_INPUT, "%s", strbuf_str(&c->f.install_why));
}

/* The files named on the command line that could not be audited. */
static void file_problems(struct check *c)
{
	for (size_t i = 0; i < c->f.nmods; i++) {
		const struct audit_module *m = &c->f.mods[i];

		if (!m->given || !m->err)
			continue;
		if (m->err == -EISDIR)
			problem(c, FW_EXIT_BAD_INPUT, "%s is a directory (for a site-packages "
				"directory: --python PATH --site-packages=DIR)", m->given);
		else
			problem(c, FW_EXIT_BAD_INPUT, "%s: %s", m->given,
				m->err == -ENOEXEC ? "not a 64-bit ELF file" : strerror(-m->err));
	}
}

static void decide(struct check *c)
{
	const struct audit_facts *f = &c->f;
	int chain_needed = c->o.native || (c->o.need & native_backends()) ||
			   c->o.mode == CHECK_INSTALL || c->o.mode == CHECK_FILES;

	if (c->o.mode == CHECK_PROCESS)
		discovery_problem(c);
	install_problem(c);
	file_problems(c);
	for (int i = BACKEND_VM; i < BACKEND_COUNT; i++) {
		const struct audit_backend *b = check_backend(c, (enum backend)i);
		int ok = b->status == AUDIT_USABLE ||
			 (b->status == AUDIT_LIMITED && !f->has_target);

		if (!check_requires(c, (enum backend)i) || ok)
			continue;
		if (f->has_target && f->target.kthread)
			continue;       /* said once, as "not a Python process" */
		problem(c, b->failure == AUDIT_NO_PERMISSION ? FW_EXIT_PERMISSION :
			   b->failure == AUDIT_GONE ? FW_EXIT_NO_PROCESS : FW_EXIT_CHECK_FAILED,
			"backend %s is not usable: %s", backend_name((enum backend)i),
			strbuf_str(&b->reason));
	}
	if (f->maps_err)
		problem(c, f->maps_err == -ESRCH ? FW_EXIT_NO_PROCESS : FW_EXIT_PERMISSION,
			"cannot read /proc/%d/maps: %s", (int)c->o.pid, strerror(-f->maps_err));
	for (size_t i = 0; chain_needed && i < f->nmods; i++) {
		const struct audit_module *m = &f->mods[i];

		/* A file the unwinder cannot open: no CFI and no names there. */
		if (m->why[0])
			problem(c, m->err == -EPERM || m->err == -EACCES ? FW_EXIT_PERMISSION :
				FW_EXIT_CHECK_FAILED, "%s", m->why);
		if (audit_module_breaks(m) && fpa_unwind_of(&m->r) == FPA_UNWIND_NONE)
			problem(c, FW_EXIT_CHECK_FAILED, "%s: no frame pointers and no unwind tables: "
				"native stacks stop there", audit_module_basename(m));
	}
}

/* ------------------------------------------------------------------ */

/* framewalk's own BPF program through the verifier, when the trivial one loaded. */
static void probe_bpf_backend(struct audit_env *e)
{
	struct strbuf why = STRBUF_INIT;

	e->bpf_built = bpf_backend_built();
	if (!e->bpf_built || !audit_env_wants_bpf_backend(e))
		return;
	e->bpf_backend_err = bpf_backend_probe(&why);
	xsnprintf(e->bpf_backend_why, sizeof(e->bpf_backend_why), "%s", strbuf_str(&why));
	strbuf_release(&why);
}

static void check_release(struct check *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(c->problems); i++)
		strbuf_release(&c->problems[i]);
	audit_facts_release(&c->f);
}

int cmd_check(int argc, char **argv)
{
	struct check *c = xcalloc(1, sizeof(*c));
	int code, ret;

	ret = parse_args(argc, argv, &c->o);
	if (ret) {
		free(c);
		return ret < 0 ? FW_EXIT_OK : ret;
	}
	if (c->o.mode == CHECK_PROCESS && proc_exists(c->o.pid) == -ESRCH) {
		fw_error("no such process: %d", (int)c->o.pid);
		free(c);
		return FW_EXIT_NO_PROCESS;
	}
	audit_facts_init(&c->f);
	elf_cache_set_env(c->f.files, cmd_elf_env());
	probe_bpf_backend(&c->f.env);
	if (c->o.mode == CHECK_PROCESS)
		audit_gather_process(&c->f, c->o.pid);
	else if (c->o.mode == CHECK_INSTALL)
		audit_gather_install(&c->f, c->o.python, c->o.root, c->o.site);
	if (c->o.nfiles)
		audit_gather_files(&c->f, c->o.files, c->o.nfiles);
	audit_gather_backends(&c->f);
	decide(c);
	if (c->o.json) {
		ret = check_print_json(c);
		if (ret)
			fw_error("writing the JSON report failed: %s", strerror(-ret));
	} else {
		check_print_text(c);
	}
	code = c->exit_code;
	check_release(c);
	free(c);
	return code;
}
