/*
 * The command line of every command, after git's parse-options: one table
 * per command says each option's short and long name, what it takes, its
 * help and where its value goes; the parser walks argv against the table
 * and the --help text is printed from the same table, so an option cannot
 * be parsed without being documented or documented without being parsed.
 * A table may include another (OPT_INCLUDE) where options shared by several
 * commands are defined once (cmd/sampling.c).
 * Also the value parsers the commands share (rates "1000", "1k", "10khz",
 * "250hz"; durations in seconds; process ids), each 0 or -EINVAL, and the
 * one way a usage error is reported.
 */
#ifndef FRAMEWALK_UTIL_OPTIONS_H
#define FRAMEWALK_UTIL_OPTIONS_H

#include <stdarg.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "util/util.h"

#define RATE_MAX_HZ 1000000.0

int parse_rate(const char *s, double *hz);
int parse_seconds(const char *s, double *secs);
int parse_pid(const char *s, int *pid);
/* A size in bytes: "1048576", "512k", "64M", "1G", "2T" (binary multiples; "KiB", "MB" too). */
int parse_size(const char *s, uint64_t *bytes);

enum opt_type {
	OPT_END = 0,            /* the end of a table */
	OPT_FLAG,               /* no value; *(int *)value = 1 */
	OPT_STRING,             /* *(const char **)value = the value */
	OPT_CALLBACK,           /* cb(opt, value, err) */
	OPT_TABLE,              /* the options of another table stand here */
};

#define OPT_OPTARG 1u           /* the value is optional, and only given as --long=VALUE */

struct opt {
	char short_name;        /* 0: none */
	const char *long_name;  /* NULL: none */
	enum opt_type type;
	const char *argh;       /* the value's name in the help ("FILE"); NULL: takes none */
	const char *help;       /* NULL: not listed in the help */
	union {
		void *value;    /* where the value goes; a callback's context */
		const struct opt *table;   /* OPT_TABLE: ended by OPT_TERMINATOR */
	};
	/*
	 * For OPT_CALLBACK: arg is the value (NULL when an optional one is not
	 * given). 0, or nonzero with the reason in err (the parser reports it
	 * as a usage error of the command).
	 */
	int (*cb)(const struct opt *o, const char *arg, struct strbuf *err);
	unsigned flags;
};

#define OPT_BOOL(s, l, v, h) { (s), (l), OPT_FLAG, NULL, (h), { (v) }, NULL, 0 }
#define OPT_STR(s, l, v, a, h) { (s), (l), OPT_STRING, (a), (h), { (v) }, NULL, 0 }
#define OPT_CALL(s, l, v, a, h, f) { (s), (l), OPT_CALLBACK, (a), (h), { (v) }, (f), 0 }
#define OPT_CALL_OPTARG(s, l, v, a, h, f) { (s), (l), OPT_CALLBACK, (a), (h), { (v) }, (f), OPT_OPTARG }
#define OPT_TERMINATOR { 0, NULL, OPT_END, NULL, NULL, { NULL }, NULL, 0 }
/* Every option of table t, in its order, as if written here (in the help too). */
#define OPT_INCLUDE(t) { .type = OPT_TABLE, .table = (t) }

/* A callback for -p PID: value is an int (pid_t); "bad process id: 'X'" otherwise. */
int opts_pid(const struct opt *o, const char *arg, struct strbuf *err);

/* Where a repeatable -p PID puts its values: at most max of them, in order. */
struct opt_pid_list {
	int *pids;
	int n, max;
};

/*
 * A callback for a repeatable -p PID: value is a struct opt_pid_list; "bad
 * process id: 'X'" as opts_pid, or "too many -p options (at most MAX)".
 */
int opts_pid_list(const struct opt *o, const char *arg, struct strbuf *err);

/* A command's line: its options and the text around them in its --help. */
struct opt_command {
	const char *name;       /* "report": for "see framewalk report --help" */
	const char *usage;      /* "usage: ..." lines, each ending in '\n' */
	const char *about;      /* what the command does, before the options */
	const char *footer;     /* after the options; NULL: none */
	const struct opt *opts; /* ended by OPT_TERMINATOR; -h/--help are implied */
	unsigned flags;         /* OPTS_* below */
};

#define OPTS_STOP_AT_ARG 1u     /* options end at the first argument (a command to run) */

/*
 * Parse argv[1 .. argc) (argv[0] is the command's name) against cmd's
 * table. Options may come in any order, between arguments too unless
 * OPTS_STOP_AT_ARG; "--" ends them. A long option may be abbreviated to a
 * prefix that is unambiguous; short ones may be bundled (-qh, -oFILE).
 * The arguments that are not options are moved, in order, to argv[1 ..],
 * and *nargs says how many there are. Returns 0; -1 when -h or --help
 * printed the help (the command then exits 0); or FW_EXIT_USAGE with the
 * message printed.
 */
int opts_parse(const struct opt_command *cmd, int argc, char **argv, int *nargs);

/*
 * A configuration file as the arguments of cmd's command line, so a file
 * and the flags are parsed by the same table (opts_parse; a later argument
 * wins where an option keeps one value). Each line is "name = value" or
 * "name value" (a long option's name without "--"; the value may be in
 * double quotes), or a flag's "name" alone or "name = yes|no|true|false|
 * on|off|1|0"; '#' starts a comment line, blank lines are skipped. A flag
 * set becomes "--name", a flag cleared nothing, anything else
 * "--name=value". On success *argv holds argv[0] = cmd->name and the
 * arguments, NULL-terminated, *argc their count (free with
 * opts_file_free). 0; -errno when the file cannot be read; -EINVAL for an
 * unknown name, a missing value or a bad flag value, with "PATH:LINE: ..."
 * in err.
 */
int opts_file_args(const struct opt_command *cmd, const char *path, int *argc, char ***argv,
		   struct strbuf *err);
void opts_file_free(int argc, char **argv);

/* The --help text of cmd: usage, about, one entry per listed option, footer. */
void opts_print_help(const struct opt_command *cmd, FILE *f);

/*
 * A usage error of command cmd: "framewalk: error: <message>" and a hint to
 * see `framewalk CMD --help`, on stderr. Returns FW_EXIT_USAGE.
 */
int usage_verror(const char *cmd, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);
int opts_usage_error(const char *cmd, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Help texts start at this column unless an option's names need more. */
#define USAGE_HELP_COLUMN 25
/* Help lines stay shorter than this. */
#define USAGE_WIDTH 80

/*
 * One option of a --help text: "  LEFT" padded to column col, then help
 * wrapped at USAGE_WIDTH with continuation lines indented to col ('\n' in
 * help starts a new line too). A LEFT too long for col gets a line of its own.
 */
void usage_option_help(FILE *f, const char *left, const char *help, int col);
/* Text wrapped at USAGE_WIDTH ('\n' keeps its line breaks, "\n\n" its paragraphs). */
void usage_paragraphs(FILE *f, const char *text);

#endif
