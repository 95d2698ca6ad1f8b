/*
 * The sampling options of every command that samples (record, top, dump,
 * agent), each defined once: its name, help, default and check, and which
 * commands take it (the uses below, with the reason where one is left out
 * or limited on purpose). A command includes the table made for its use
 * (OPT_INCLUDE) where the options belong in its help, and gets the values
 * in a struct sampler_opts. Also the backends' names and --backend's help
 * from their table (sampler.h), and the check, before sampling, that a
 * target can give what --async, --mode exception and --label read.
 */
#include <stddef.h>

#include "cmd/cmd.h"
#include "python/asyncio.h"
#include "python/contextvars.h"
#include "python/excstate.h"
#include "sampler/labels.h"
#include "target/privilege.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

/* ---- who takes what ------------------------------------------------------- */

#define CAPTURE_OPTS (CMD_SO_DURATION | CMD_SO_RATE | CMD_SO_MODE | CMD_SO_ASYNC | \
		      CMD_SO_PYTHON_ONLY | CMD_SO_NATIVE | CMD_SO_NO_INLINE | \
		      CMD_SO_NO_DEBUGINFOD | CMD_SO_BACKEND | CMD_SO_NONBLOCKING | CMD_SO_VM_CPU)

/* everything */
const struct cmd_sampling_use cmd_sampling_record = {
	"record", CAPTURE_OPTS | CMD_SO_SUBPROCESSES | CMD_SO_KERNEL | CMD_SO_NATIVE_ALL |
	CMD_SO_LABEL | CMD_SO_COUNT_CALLS,
	100, RATE_MAX_HZ, EVERY_MODE, "Ctrl-C or exit",
};

/* one process's functions: no --subprocesses; --kernel and --native-all not offered so far */
const struct cmd_sampling_use cmd_sampling_top = {
	"top", CAPTURE_OPTS | CMD_SO_LABEL | CMD_SO_COUNT_CALLS, 100, RATE_MAX_HZ, EVERY_MODE, "q, Ctrl-C or the target's exit",
};

/*
 * one read of every thread, no capture: no rate, duration, mode or backend
 * (ptrace with --native, else its own reader; its own --nonblocking says how)
 */
const struct cmd_sampling_use cmd_sampling_dump = {
	"dump", CMD_SO_NATIVE | CMD_SO_KERNEL | CMD_SO_NATIVE_ALL | CMD_SO_NO_INLINE |
	CMD_SO_NO_DEBUGINFOD, 0, 0, 0, NULL,
};

/*
 * always on: a low rate by default and at most 10 kHz; periods instead of a
 * duration; no gil mode (refused as before this table); every process the
 * selectors choose instead of --subprocesses; no --async, --native-all,
 * --no-inline or --nonblocking (--backend vm) (not offered so far)
 */
const struct cmd_sampling_use cmd_sampling_agent = {
	"agent", CMD_SO_RATE | CMD_SO_MODE | CMD_SO_PYTHON_ONLY | CMD_SO_NATIVE | CMD_SO_KERNEL |
	CMD_SO_NO_DEBUGINFOD | CMD_SO_BACKEND | CMD_SO_COUNT_CALLS | CMD_SO_CONTEXT_LABEL, 19, 10000,
	1u << MODE_CPU | 1u << MODE_WALL | 1u << MODE_EXCEPTION, NULL,
};

/* ---- the options ---------------------------------------------------------- */

static const struct cmd_sampling_use *use_of(const struct opt *o)
{
	return ((const struct cmd_sampling_opts *)o->value)->use;
}

static struct sampler_opts *so_of(const struct opt *o)
{
	return ((const struct cmd_sampling_opts *)o->value)->so;
}

/* "10 kHz" */
static void add_hz(struct strbuf *sb, double hz)
{
	if (hz >= 1e6)
		strbuf_addf(sb, "%g MHz", hz / 1e6);
	else if (hz >= 1e3)
		strbuf_addf(sb, "%g kHz", hz / 1e3);
	else
		strbuf_addf(sb, "%g Hz", hz);
}

/* "cpu, wall or exception" (last: " or "), the modes in mask */
static void add_modes(struct strbuf *sb, unsigned mask, const char *last)
{
	int n = 0, k = 0;

	for (int m = 0; m < MODE_COUNT; m++)
		n += (mask >> m) & 1;
	for (int m = 0; m < MODE_COUNT; m++) {
		if (!((mask >> m) & 1))
			continue;
		strbuf_addf(sb, "%s%s", k == 0 ? "" : k + 1 == n ? last : ", ",
			    sample_mode_name((enum sample_mode)m));
		k++;
	}
}

static int opt_rate(const struct opt *o, const char *arg, struct strbuf *err)
{
	const struct cmd_sampling_use *use = use_of(o);
	double hz;

	if (parse_rate(arg, &hz) || hz > use->rate_max) {
		strbuf_addf(err, "bad rate: '%s' (e.g. 100, 1k, 10khz; 1 Hz to ", arg);
		add_hz(err, use->rate_max);
		strbuf_addch(err, ')');
		return -1;
	}
	so_of(o)->rate_hz = hz;
	return 0;
}

static int opt_duration(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (parse_seconds(arg, &so_of(o)->duration_s)) {
		strbuf_addf(err, "bad duration: '%s' (seconds, e.g. 10 or 2.5)", arg);
		return -1;
	}
	return 0;
}

static int opt_mode(const struct opt *o, const char *arg, struct strbuf *err)
{
	unsigned modes = use_of(o)->modes;
	enum sample_mode mode;

	if (sample_mode_parse(arg, &mode) || !((modes >> mode) & 1)) {
		strbuf_addf(err, "unknown mode: '%s' (", arg);
		add_modes(err, modes, " or ");
		strbuf_addch(err, ')');
		return -1;
	}
	so_of(o)->mode = mode;
	return 0;
}

static int opt_backend(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (backend_parse(arg, &so_of(o)->backend)) {
		strbuf_addf(err, "unknown backend: '%s' (", arg);
		cmd_backend_names(err, 1);
		strbuf_addch(err, ')');
		return -1;
	}
	return 0;
}

static int opt_nonblocking(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)arg;
	(void)err;
	so_of(o)->backend = BACKEND_VM;
	return 0;
}

static int opt_vm_cpu(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (!strcmp(arg, "target"))
		so_of(o)->vm_cpu = VM_CPU_TARGET;
	else if (!strcmp(arg, "any"))
		so_of(o)->vm_cpu = VM_CPU_ANY;
	else {
		strbuf_addf(err, "unknown --%s: '%s' (target or any)", o->long_name, arg);
		return -1;
	}
	return 0;
}

/* --label NAME=MODULE:VARIABLE, repeatable (sampler/labels.h) */
static int opt_label(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct label_specs *ls = &so_of(o)->labels;

	if (ls->n == LABELS_MAX) {
		strbuf_addf(err, "too many --%s options (at most %d)", o->long_name, LABELS_MAX);
		return -1;
	}
	if (label_spec_parse(o->long_name, arg, &ls->l[ls->n], err))
		return -1;
	/* a label named trace (trace=MODULE:VARIABLE) is no --label trace: both may be given */
	for (size_t i = 0; i < ls->n; i++) {
		if (ls->l[i].kind == ls->l[ls->n].kind && !strcmp(ls->l[i].name, ls->l[ls->n].name)) {
			strbuf_addf(err, "--%s %s given twice", o->long_name, ls->l[i].name);
			return -1;
		}
	}
	ls->n++;
	return 0;
}

/* --kernel and --native-all ask for native frames too */
static int opt_kernel(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)arg;
	(void)err;
	so_of(o)->kernel = so_of(o)->native = 1;
	return 0;
}

static int opt_native_all(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)arg;
	(void)err;
	so_of(o)->native_all = so_of(o)->native = 1;
	return 0;
}

static void help_duration(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	strbuf_addf(sb, "stop after SECS seconds (default: until %s)", use->until);
}

static void help_rate(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	strbuf_addf(sb, "samples per second: 100, 1k, 10khz (default %g", use->rate_hz);
	if (use->rate_max < RATE_MAX_HZ) {
		strbuf_addstr(sb, "; at most ");
		add_hz(sb, use->rate_max);
	}
	strbuf_addch(sb, ')');
}

static void help_mode(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	int n = 0, k = 0;

	for (int m = 0; m < MODE_COUNT; m++)
		n += (use->modes >> m) & 1;
	for (int m = 0; m < MODE_COUNT; m++) {
		if (!((use->modes >> m) & 1))
			continue;
		strbuf_addf(sb, "%s%s (%s%s)", k == 0 ? "" : k + 1 == n ? " or " : ", ",
			    sample_mode_name((enum sample_mode)m), m == MODE_CPU ? "default: " : "",
			    sample_mode_info((enum sample_mode)m)->samples);
		k++;
	}
}

/*
 * " (the default with bpf, and with ptrace in cpu mode)": where whole stacks
 * (whole) or Python frames alone are what a backend gives unless told, from
 * the backends' table, in the modes the command takes. Nothing for a command
 * that does not choose a backend.
 */
static void add_stacks_default(struct strbuf *sb, const struct cmd_sampling_use *use, int whole)
{
	const char *sep = " (the default with ";

	if (!(use->opts & CMD_SO_BACKEND))
		return;
	for (size_t i = 0; backend_preferred(i) != BACKEND_AUTO; i++) {
		const struct backend_info *bi = backend_info(backend_preferred(i));
		unsigned m = (whole ? bi->whole_stacks : ~bi->whole_stacks) & use->modes;

		if (!m)
			continue;
		strbuf_addf(sb, "%s%s", sep, bi->name);
		if (m != use->modes) {
			strbuf_addstr(sb, " in ");
			add_modes(sb, m, " and ");
			strbuf_addstr(sb, (m & (m - 1)) ? " modes" : " mode");
		}
		sep = ", and with ";
	}
	if (strcmp(sep, " (the default with "))
		strbuf_addch(sb, ')');
}

static void help_native(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	strbuf_addstr(sb, "whole stacks: Python, C extensions, native libraries");
	add_stacks_default(sb, use, 1);
}

static void help_python_only(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	strbuf_addstr(sb, "Python frames only");
	add_stacks_default(sb, use, 0);
}

static void help_backend(struct strbuf *sb, const struct cmd_sampling_use *use)
{
	(void)use;
	cmd_backend_help(sb);
}

#define FLAG(field) offsetof(struct sampler_opts, field)
#define NO_FLAG ((size_t)-1)

/* Each option once, in the order they show in a help. */
static const struct sampling_row {
	unsigned bit;
	char short_name;
	const char *long_name, *argh;
	const char *help;                /* or made for the use by ... */
	void (*make_help)(struct strbuf *sb, const struct cmd_sampling_use *use);
	int (*cb)(const struct opt *o, const char *arg, struct strbuf *err);
	size_t flag;                     /* a flag: its field in struct sampler_opts */
} rows[] = {
	{ CMD_SO_SUBPROCESSES, 0, "subprocesses", NULL, "also profile children started during "
	  "the capture (fork, multiprocessing, pre-forked workers, a child that execs Python "
	  "later); each labeled", NULL, NULL, FLAG(subprocesses) },
	{ CMD_SO_DURATION, 'd', "duration", "SECS", NULL, help_duration, opt_duration, NO_FLAG },
	{ CMD_SO_RATE, 'r', "rate", "RATE", NULL, help_rate, opt_rate, NO_FLAG },
	{ CMD_SO_MODE, 0, "mode", "M", NULL, help_mode, opt_mode, NO_FLAG },
	{ CMD_SO_ASYNC, 0, "async", NULL, "asyncio task stacks: a loop thread's running task as "
	  "[task] NAME under the tasks awaiting it; in wall mode every suspended task too, "
	  "ending in [await] WHAT (3.11+)", NULL, NULL, FLAG(async_tasks) },
	{ CMD_SO_PYTHON_ONLY, 0, "python-only", NULL, NULL, help_python_only, NULL,
	  FLAG(python_only) },
	{ CMD_SO_NATIVE, 0, "native", NULL, NULL, help_native, NULL, FLAG(native) },
	{ CMD_SO_KERNEL, 0, "kernel", NULL, "add kernel frames (implies --native; needs root)",
	  NULL, opt_kernel, NO_FLAG },
	{ CMD_SO_NATIVE_ALL, 0, "native-all", NULL, "keep the interpreter's own call machinery "
	  "frames (implies --native)", NULL, opt_native_all, NO_FLAG },
	{ CMD_SO_NO_INLINE, 0, "no-inline", NULL, "no frames for functions the compiler inlined "
	  "(read from debug info where a file has it)", NULL, NULL, FLAG(no_inline) },
	{ CMD_SO_NO_DEBUGINFOD, 0, "no-debuginfod", NULL, "ask no debuginfod server for missing "
	  "debug info (asked only when DEBUGINFOD_URLS is set)", NULL, NULL, FLAG(no_debuginfod) },
	{ CMD_SO_BACKEND, 0, "backend", "B", NULL, help_backend, opt_backend, NO_FLAG },
	{ CMD_SO_LABEL, 0, "label", "NAME=MODULE:VARIABLE", "label each sample NAME with the value "
	  "the sampled thread (or asyncio task) sees in the contextvars.ContextVar VARIABLE of "
	  "module MODULE; --label trace: trace_id, span_id and span_name of OpenTelemetry's "
	  "current span (repeatable, up to 4; docs/LABELS.md)", NULL, opt_label, NO_FLAG },
	/* the same where --label names something else (the agent's: one label per profile) */
	{ CMD_SO_CONTEXT_LABEL, 0, "context-label", "NAME=MODULE:VARIABLE", "label each sample "
	  "NAME with the value the sampled thread sees in the contextvars.ContextVar VARIABLE of "
	  "module MODULE, or trace (OpenTelemetry's current span): record's --label "
	  "(repeatable, up to 4; docs/LABELS.md)", NULL,
	  opt_label, NO_FLAG },
	{ CMD_SO_COUNT_CALLS, 0, "count-calls", NULL, "also count every Python function's "
	  "calls exactly, inside the target through Python 3.14+'s remote execution and "
	  "sys.monitoring (record: every process sampled, a command from its start, summed; "
	  "top: calls per second, read each refresh; agent: each process's per period; "
	  "removed at the end; docs/CALLCOUNTS.md)", NULL, NULL,
	  FLAG(count_calls) },
	{ CMD_SO_NONBLOCKING, 0, "nonblocking", NULL, "the same as --backend vm (never stops the "
	  "target)", NULL, opt_nonblocking, NO_FLAG },
	{ CMD_SO_VM_CPU, 0, "vm-cpu", "WHERE", "with --backend vm, where a single-threaded target "
	  "is read from: target (default), the CPU it runs on, so a read sees one moment and the "
	  "target waits its microseconds; any, wherever framewalk runs, so the target never "
	  "waits and short calls are under-counted (docs/BENCHMARKS.md)", NULL, opt_vm_cpu,
	  NO_FLAG },
};

_Static_assert(ARRAY_SIZE(rows) <= CMD_SAMPLING_MAX, "CMD_SAMPLING_MAX holds every row");

void cmd_sampling_opts_init(struct cmd_sampling_opts *t, const struct cmd_sampling_use *use,
			    struct sampler_opts *so)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	t->use = use;
	t->so = so;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct sampling_row *r = &rows[i];
		struct opt *o = &t->table[n];

		if (!(use->opts & r->bit))
			continue;
		if (r->make_help)
			r->make_help(&t->help[n], use);
		else
			strbuf_addstr(&t->help[n], r->help);
		o->short_name = r->short_name;
		o->long_name = r->long_name;
		o->argh = r->argh;
		o->help = strbuf_str(&t->help[n]);
		if (r->flag != NO_FLAG) {
			o->type = OPT_FLAG;
			o->value = (char *)so + r->flag;
		} else {
			o->type = OPT_CALLBACK;
			o->value = t;
			o->cb = r->cb;
		}
		n++;
	}
	t->n = n;
	t->table[n].type = OPT_END;
}

void cmd_sampling_opts_release(struct cmd_sampling_opts *t)
{
	for (size_t i = 0; i < t->n; i++)
		strbuf_release(&t->help[i]);
	t->n = 0;
}

void cmd_sampling_defaults(const struct cmd_sampling_use *use, struct sampler_opts *so)
{
	so->rate_hz = use->rate_hz;
	so->mode = MODE_CPU;
	so->backend = BACKEND_AUTO;
	so->env = cmd_elf_env();
}

static int same_labels(const struct label_specs *a, const struct label_specs *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->l[i].kind != b->l[i].kind || strcmp(a->l[i].name, b->l[i].name) || strcmp(a->l[i].module, b->l[i].module) ||
		    strcmp(a->l[i].variable, b->l[i].variable))
			return 0;
	return 1;
}

int cmd_sampling_same(const struct sampler_opts *a, const struct sampler_opts *b)
{
	return same_labels(&a->labels, &b->labels) && a->rate_hz == b->rate_hz &&
	       a->duration_s == b->duration_s && a->mode == b->mode &&
	       a->backend == b->backend && a->native == b->native &&
	       a->python_only == b->python_only && a->kernel == b->kernel &&
	       a->native_all == b->native_all && a->async_tasks == b->async_tasks &&
	       a->subprocesses == b->subprocesses && a->no_inline == b->no_inline &&
	       a->no_debuginfod == b->no_debuginfod && a->count_calls == b->count_calls &&
	       a->vm_cpu == b->vm_cpu;
}

/* ---- the backends' names ---------------------------------------------------- */

void cmd_backend_names(struct strbuf *sb, int with_auto)
{
	if (with_auto)
		strbuf_addstr(sb, "auto, ");
	for (int b = BACKEND_VM; b < BACKEND_COUNT; b++)
		strbuf_addf(sb, "%s%s", b == BACKEND_VM ? "" : b + 1 == BACKEND_COUNT ? " or " : ", ",
			    backend_name((enum backend)b));
}

void cmd_backend_help(struct strbuf *sb)
{
	strbuf_addf(sb, "auto (default: %s)", backend_auto_rule);
	for (size_t i = 0; backend_preferred(i) != BACKEND_AUTO; i++) {
		const struct backend_info *bi = backend_info(backend_preferred(i));

		strbuf_addf(sb, "%s%s (%s", backend_preferred(i + 1) == BACKEND_AUTO ? " or " :
			    ", ", bi->name, bi->help ? bi->help : bi->reads);
		if (bi->needs) {
			strbuf_addstr(sb, "; ");
			privilege_cap_names(sb, bi->needs, "", " + ", 0);
		}
		strbuf_addch(sb, ')');
	}
}

/* ---- before sampling -------------------------------------------------------- */

int cmd_check_views(const char *verb, const struct py_target *t, const struct sampler_opts *so)
{
	struct strbuf why = STRBUF_INIT;
	int code = FW_EXIT_OK;

	if (so->async_tasks && py_async_supported(t->minor, t->offsets.free_threaded, &why)) {
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it without --async", verb);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->mode == MODE_GIL && t->offsets.free_threaded) {
		fw_error("process %d: Python %s is free-threaded: it has no GIL to wait for or hold",
			 (int)t->pid, t->version);
		fw_hint("%s it with --mode cpu or wall", verb);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->mode == MODE_EXCEPTION && py_exc_supported(&t->offsets, t->version, &why)) {
		struct strbuf others = STRBUF_INIT;

		add_modes(&others, EVERY_MODE & ~(1u << MODE_EXCEPTION), " or ");
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it in another mode (--mode %s)", verb, strbuf_str(&others));
		strbuf_release(&others);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->labels.n && py_contextvars_supported(&t->offsets, t->version, &why)) {
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it without --label", verb);
		code = FW_EXIT_UNSUPPORTED;
	}
	strbuf_release(&why);
	return code;
}
