/*
 * The subcommands (one file each, like git's builtin/; check is check.c with
 * its renderers check_text.c and check_json.c; agent is agent.c over
 * agent/) and the helpers they share:
 * attaching to a target with one clear message per failure and the exit
 * code for each (attach.c), the output options of every command that
 * writes profiles (outputs.c) and the sampling options of those that sample
 * (sampling.c). To add a command: write cmd/NAME.c with
 * cmd_NAME() parsing its options from one table (util/options.h, which
 * prints its --help too), declare it here, add it to the table in main.c,
 * document it in docs/framewalk.1 and README.md, and give it a --help test.
 */
#ifndef FRAMEWALK_CMD_CMD_H
#define FRAMEWALK_CMD_CMD_H

#include <signal.h>
#include <sys/types.h>

#include "output/output.h"
#include "python/discover.h"
#include "sampler/sampler.h"
#include "target/memory.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_agent(int argc, char **argv);

/*
 * Discover the Python runtime of pid, printing the error and its fix on
 * failure. Returns FW_EXIT_OK or the exit code to use.
 */
int cmd_attach(pid_t pid, struct py_target *t);

/*
 * The environment library code is told (cmd/environ.c): debug files'
 * servers, cache and budget, the frame-pointer trace. Read once.
 */
struct elf_env;
const struct elf_env *cmd_elf_env(void);

/* Print the permission-denied hints for pid (capability, ptrace_scope, user). */
void cmd_permission_hints(pid_t pid);

/*
 * Stop signals (SIGINT, SIGTERM, SIGHUP) received so far, once
 * cmd_install_signals ran: the first ends the capture; 0 none.
 */
extern volatile sig_atomic_t cmd_stop_requested;
/* Install those handlers (no SA_RESTART, so sleeps end at once); ignore SIGPIPE. */
void cmd_install_signals(void);

/*
 * backend_choose with the messages: the announcement on stderr when
 * so->announce, or the error. Returns FW_EXIT_OK, FW_EXIT_USAGE for a
 * combination that cannot work, FW_EXIT_PERMISSION when the backend asked
 * for cannot run here.
 */
int cmd_choose_backend(const char *cmd, struct sampler_opts *so, pid_t probe_pid);

/*
 * A capture's backend could not start, after the session's one fallback
 * (backend_fall_back): "the NAME backend could not start: WHY", and the
 * exit code for err (-EPERM/-EACCES: FW_EXIT_PERMISSION, else
 * FW_EXIT_FAILURE). Every sampling command ends this way.
 */
int cmd_backend_failed(const char *name, int err, const struct strbuf *why);

/*
 * How a capture that ran ended, for every sampling command: the words
 * ("duration reached", "target exited", ...), and whether it is an error,
 * with its message and exit code (lost access to a target:
 * FW_EXIT_PERMISSION). The one table of stop reasons (attach.c).
 */
struct cmd_stop_outcome {
	const char *text;           /* "interrupted", ... */
	const char *error;          /* NULL, or the error to print */
	int code;                   /* FW_EXIT_OK, or the exit code of error */
	int complete;               /* it ended by itself or as asked (the time, a signal, the
	                             * target's end): what it read last stands (top's last table) */
	int by_target;              /* the target ended it (exit, exec): said naming the process */
};
const struct cmd_stop_outcome *cmd_stop_outcome(enum sampler_stop reason);

/*
 * "framewalk: error: <message>" and a hint to see `framewalk CMD --help`.
 * Returns FW_EXIT_USAGE. (The option parser's, util/options.h.)
 */
#define cmd_usage_error(...) opts_usage_error(__VA_ARGS__)

/*
 * cmd/sampling.c: the sampling options, each defined once (name, help,
 * default, check). A command takes those its use names, includes the
 * table made for it (OPT_INCLUDE(t.table)) where they belong in its help,
 * and finds the values in a struct sampler_opts (--kernel and --native-all
 * set native too; --nonblocking is --backend vm).
 */
#define CMD_SO_SUBPROCESSES (1u << 0)   /* --subprocesses */
#define CMD_SO_DURATION (1u << 1)       /* -d SECS */
#define CMD_SO_RATE (1u << 2)           /* -r RATE */
#define CMD_SO_MODE (1u << 3)           /* --mode M */
#define CMD_SO_ASYNC (1u << 4)          /* --async */
#define CMD_SO_PYTHON_ONLY (1u << 5)    /* --python-only */
#define CMD_SO_NATIVE (1u << 6)         /* --native */
#define CMD_SO_KERNEL (1u << 7)         /* --kernel */
#define CMD_SO_NATIVE_ALL (1u << 8)     /* --native-all */
#define CMD_SO_NO_INLINE (1u << 9)      /* --no-inline */
#define CMD_SO_NO_DEBUGINFOD (1u << 10) /* --no-debuginfod */
#define CMD_SO_BACKEND (1u << 11)       /* --backend B */
#define CMD_SO_NONBLOCKING (1u << 12)   /* --nonblocking: --backend vm */
#define CMD_SO_LABEL (1u << 13)         /* --label NAME=MODULE:VARIABLE */
#define CMD_SO_COUNT_CALLS (1u << 14)   /* --count-calls (3.14+ remote execution) */
#define CMD_SO_CONTEXT_LABEL (1u << 15) /* the agent's --context-label NAME=MODULE:VARIABLE */
#define CMD_SO_VM_CPU (1u << 16)        /* --vm-cpu target|any: where vm reads from */

/* What a command takes (cmd/sampling.c has each command's, with its reasons). */
struct cmd_sampling_use {
	const char *cmd;
	unsigned opts;              /* CMD_SO_* */
	double rate_hz, rate_max;   /* --rate's default and bound */
	unsigned modes;             /* 1 << mode: the modes --mode takes */
	const char *until;          /* how a capture without -d ends, for its help */
};
extern const struct cmd_sampling_use cmd_sampling_record, cmd_sampling_top, cmd_sampling_dump,
	cmd_sampling_agent;

#define CMD_SAMPLING_MAX 17

/* The options made for one use, their values going to so; not to be copied. */
struct cmd_sampling_opts {
	const struct cmd_sampling_use *use;
	struct sampler_opts *so;
	struct opt table[CMD_SAMPLING_MAX + 1];    /* ended by OPT_END */
	struct strbuf help[CMD_SAMPLING_MAX];
	size_t n;
};
void cmd_sampling_opts_init(struct cmd_sampling_opts *t, const struct cmd_sampling_use *use,
			    struct sampler_opts *so);
void cmd_sampling_opts_release(struct cmd_sampling_opts *t);
/* The defaults of use into so (before the first parse), and the environment (cmd_elf_env). */
void cmd_sampling_defaults(const struct cmd_sampling_use *use, struct sampler_opts *so);
/* Do a and b hold the same sampling options? */
int cmd_sampling_same(const struct sampler_opts *a, const struct sampler_opts *b);

/* "vm, ptrace or bpf" from the backends' table ("auto, vm, ..." with with_auto). */
void cmd_backend_names(struct strbuf *sb, int with_auto);
/* --backend's help: auto's rule, then each backend, how it reads and what it needs. */
void cmd_backend_help(struct strbuf *sb);

/*
 * Before sampling t: can it give what so asks beyond stacks (--async's
 * tasks, --mode exception's state)? FW_EXIT_OK, or FW_EXIT_UNSUPPORTED
 * after one error and a hint ("VERB it without --async").
 */
int cmd_check_views(const char *verb, const struct py_target *t, const struct sampler_opts *so);

/* The exit code and message for an unusable output path. */
int cmd_output_error(const char *path, int err);

/*
 * Before a capture (cmd/limits.c): raise the soft open-file limit to the
 * hard one, fail with one line naming the limit and the fix when the
 * backend (0, not chosen yet: the least any capture needs) cannot run under
 * it, warn when per-thread files of the targets (may be none yet) will be
 * reopened per reading. Returns FW_EXIT_OK or the exit code, message printed.
 */
int cmd_fd_limits(const struct sampler_opts *so, const struct py_target *targets, size_t n);
/* Descriptors a capture with these options needs: open_now plus its own. */
size_t cmd_fd_need(const struct sampler_opts *so, size_t open_now, int ncpus);

/* cmd/outputs.c: the output options every rendering command shares. */

#define CMD_MAX_OUTPUTS 8

/* -o FILE (repeatable) and -f FMT, and the format each output gets. */
struct cmd_outputs {
	enum outfmt_use use;
	const char *paths[CMD_MAX_OUTPUTS];
	const struct outfmt *formats[CMD_MAX_OUTPUTS];
	int n;
	const struct outfmt *format;         /* -f; NULL: by each path */
};

/* Option callbacks (util/options.h): value is a struct cmd_outputs. */
int cmd_opt_output(const struct opt *o, const char *arg, struct strbuf *err);
int cmd_opt_format(const struct opt *o, const char *arg, struct strbuf *err);
/* The same for struct output_opts: --limit N, --min-percent P, --thread T. */
int cmd_opt_limit(const struct opt *o, const char *arg, struct strbuf *err);
int cmd_opt_min_percent(const struct opt *o, const char *arg, struct strbuf *err);
int cmd_opt_thread(const struct opt *o, const char *arg, struct strbuf *err);
/* --by NAME (text: a breakdown by a label) and --where NAME=VALUE (value: struct output_opts). */
int cmd_opt_by(const struct opt *o, const char *arg, struct strbuf *err);
int cmd_opt_where(const struct opt *o, const char *arg, struct strbuf *err);
#define CMD_BY_HELP "the text report breaks the samples down by the values of label NAME " \
	"(--label), with each value's hottest functions"
#define CMD_WHERE_HELP "keep only the samples whose label NAME has the value VALUE, in " \
	"every output"
/*
 * The options of a command that renders one profile (record, report), each
 * defined once here and included into its table (OPT_INCLUDE(t.table)): -o,
 * -f, --limit, --min-percent, --thread, --by and --where, their values going
 * to outs and out. output_help says what -o writes and where the output goes
 * without one. Not to be copied.
 */
struct cmd_output_table {
	struct opt table[8];        /* ended by OPT_END */
	struct strbuf format_help, output_help;
};
void cmd_output_table_init(struct cmd_output_table *t, struct cmd_outputs *outs,
			   struct output_opts *out, const char *output_help);
void cmd_output_table_release(struct cmd_output_table *t);
/* Apply --where to p (before writing it): the counts kept. */
size_t cmd_apply_where(struct profile *p, const struct output_opts *o);
/* After parsing: each output's format; standard output first when no -o was given and to_stdout. */
void cmd_outputs_resolve(struct cmd_outputs *outs, int to_stdout);

/* The help of -f/--format: the format names and file endings from the table. */
void cmd_format_help(struct strbuf *sb, enum outfmt_use use);
/*
 * Open the n outputs (util/outfile.h) before any work: FW_EXIT_OK, or the
 * exit code of the first unusable path (message printed, the others aborted).
 */
int cmd_open_outputs(struct outfile *of, const char *const *paths, int n);
void cmd_abort_outputs(struct outfile *of, int n);
/*
 * Finish one output after its writer returned ret: committed when ret is 0,
 * else removed. FW_EXIT_OK, or FW_EXIT_OUTPUT with the message printed.
 */
int cmd_finish_output(struct outfile *of, const char *path, int ret);

/*
 * --count-calls (cmd/callcounts.c). check: before sampling, the targets
 * known can run it (one still starting is asked later): FW_EXIT_OK or the
 * exit code, its error said. begin: start counting in one target (0, or
 * -errno said as a warning: the capture goes on without counts). end:
 * stop, merge the counts into prof, remove what was placed.
 */
struct callcount;
struct profile;
int cmd_calls_check(const char *verb, size_t ntargets, const struct py_target *t);
int cmd_calls_begin(struct callcount *cc, const struct py_target *t,
		    const struct sampler_opts *so, struct profile *prof);
void cmd_calls_end(struct callcount *cc, const struct py_target *t, struct profile *prof,
		   uint64_t window_ns);
/*
 * The same over every process of a capture (record): pass, from the
 * capture's hook, starts counting in each target of sess once its
 * interpreter runs (*next: when to be called again); finish stops them
 * all, sums their counts into prof, says what could not be counted, and
 * frees c.
 */
struct cmd_calls;
struct cmd_calls *cmd_calls_new(const struct sampler_opts *so, struct profile *prof);
void cmd_calls_pass(struct cmd_calls *c, const struct session *sess, uint64_t now,
		    uint64_t *next);
void cmd_calls_finish(struct cmd_calls *c, const struct session *sess);

#endif
