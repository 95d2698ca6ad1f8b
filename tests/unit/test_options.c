/*
 * Unit tests of the option parser (src/util/options.c) and the format
 * table (src/output/registry.c): what a table of options accepts and
 * refuses, where arguments end up, the help printed from the table, a table
 * included in another; and that every format row is complete, names and
 * endings choose the right format, and the lists in help texts and errors
 * come from the rows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/output.h"
#include "util/options.h"

struct seen {
	int quiet, json;
	const char *output, *name;
	const char *site;
	int site_given;
	long limit;
};

static int take_limit(const struct opt *o, const char *arg, struct strbuf *err)
{
	long v;

	if (parse_long(arg, &v) || v < 1) {
		strbuf_addf(err, "bad --limit: '%s'", arg);
		return -1;
	}
	((struct seen *)o->value)->limit = v;
	return 0;
}

static int take_site(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct seen *s = o->value;

	(void)err;
	s->site = arg;
	s->site_given = 1;
	return 0;
}

/* Parse a NULL-terminated argument list (after the command's name). */
static int parse(struct seen *s, unsigned flags, int *nargs, char **argv, ...)
{
	const struct opt opts[] = {
		OPT_BOOL('q', "quiet", &s->quiet, "say less"),
		OPT_BOOL(0, "json", &s->json, "as JSON"),
		OPT_STR('o', "output", &s->output, "FILE", "write FILE"),
		OPT_STR(0, "name", &s->name, "N", "a name"),
		OPT_STR(0, "named", &s->name, "N", "a name too (makes --name ambiguous as --na)"),
		OPT_CALL(0, "limit", s, "N", "rows", take_limit),
		OPT_CALL_OPTARG(0, "site", s, "DIR", "a site", take_site),
		OPT_BOOL('x', "hidden", &s->json, NULL),
		OPT_TERMINATOR,
	};
	const struct opt_command cmd = { "test", "usage: test [options] ARGS\n", NULL, NULL,
					 opts, flags };
	va_list ap;
	int argc = 1;

	memset(s, 0, sizeof(*s));
	argv[0] = (char *)"test";
	va_start(ap, argv);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	return opts_parse(&cmd, argc, argv, nargs);
}

static void test_parse_forms(void **state)
{
	char *argv[16];
	struct seen s;
	int n;

	(void)state;
	assert_int_equal(parse(&s, 0, &n, argv, "-q", "--output", "a.txt", "--limit=5", NULL), 0);
	assert_true(s.quiet);
	assert_string_equal(s.output, "a.txt");
	assert_int_equal(s.limit, 5);
	assert_int_equal(n, 0);
	/* bundles, a value glued to its option, = for long ones */
	assert_int_equal(parse(&s, 0, &n, argv, "-qob.txt", "--name=", NULL), 0);
	assert_true(s.quiet);
	assert_string_equal(s.output, "b.txt");
	assert_string_equal(s.name, "");
	/* a value may start with a dash */
	assert_int_equal(parse(&s, 0, &n, argv, "-o", "-1", NULL), 0);
	assert_string_equal(s.output, "-1");
	/* abbreviations: unique prefixes only; an exact name wins over longer ones */
	assert_int_equal(parse(&s, 0, &n, argv, "--qu", "--js", "--name", "x", NULL), 0);
	assert_true(s.quiet && s.json);
	assert_string_equal(s.name, "x");
	assert_int_equal(parse(&s, 0, &n, argv, "--na", "x", NULL), FW_EXIT_USAGE);
	/* an optional value only with = */
	assert_int_equal(parse(&s, 0, &n, argv, "--site", "later", NULL), 0);
	assert_true(s.site_given && !s.site);
	assert_int_equal(n, 1);
	assert_string_equal(argv[1], "later");
	assert_int_equal(parse(&s, 0, &n, argv, "--site=/v", NULL), 0);
	assert_string_equal(s.site, "/v");
}

static void test_parse_arguments(void **state)
{
	char *argv[16];
	struct seen s;
	int n;

	(void)state;
	/* arguments between options, in order; "-" is one; "--" ends the options */
	assert_int_equal(parse(&s, 0, &n, argv, "a", "-q", "-", "--", "-o", "b", NULL), 0);
	assert_true(s.quiet);
	assert_null(s.output);
	assert_int_equal(n, 4);
	assert_string_equal(argv[1], "a");
	assert_string_equal(argv[2], "-");
	assert_string_equal(argv[3], "-o");
	assert_string_equal(argv[4], "b");
	/* OPTS_STOP_AT_ARG: a command to run keeps its own options */
	assert_int_equal(parse(&s, OPTS_STOP_AT_ARG, &n, argv, "-q", "python", "-q", NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(argv[1], "python");
	assert_string_equal(argv[2], "-q");
	assert_int_equal(parse(&s, OPTS_STOP_AT_ARG, &n, argv, "--", "--json", NULL), 0);
	assert_false(s.json);
	assert_int_equal(n, 1);
}

static void test_parse_errors(void **state)
{
	char *argv[16];
	struct seen s;
	int n;

	(void)state;
	assert_int_equal(parse(&s, 0, &n, argv, "--nope", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&s, 0, &n, argv, "-z", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&s, 0, &n, argv, "-qz", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&s, 0, &n, argv, "--output", NULL), FW_EXIT_USAGE);  /* no value */
	assert_int_equal(parse(&s, 0, &n, argv, "-o", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&s, 0, &n, argv, "--quiet=1", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&s, 0, &n, argv, "--limit", "0", NULL), FW_EXIT_USAGE);
	assert_int_equal(s.limit, 0);
	/* a hidden option is parsed all the same */
	assert_int_equal(parse(&s, 0, &n, argv, "-x", NULL), 0);
	assert_true(s.json);
}

/* A repeatable -p: every value in order, up to the list's bound; bad ones refused. */
static void test_pid_list(void **state)
{
	int pids[2];
	struct opt_pid_list l = { pids, 0, 2 };
	const struct opt opts[] = {
		OPT_CALL('p', "pid", &l, "PID", "a process", opts_pid_list),
		OPT_TERMINATOR,
	};
	const struct opt_command cmd = { "test", "usage: test -p PID...\n", NULL, NULL, opts, 0 };
	const struct opt longonly = OPT_CALL(0, "target", &l, "PID", NULL, opts_pid_list);
	struct strbuf err = STRBUF_INIT;
	char *ok[] = { "test", "-p", "12", "--pid=34", NULL };
	char *three[] = { "test", "-p1", "-p", "2", "-p", "3", NULL };
	char *bad[] = { "test", "-p", "x", NULL };
	int n;

	(void)state;
	assert_int_equal(opts_parse(&cmd, 4, ok, &n), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 34);
	l.n = 0;
	assert_int_equal(opts_parse(&cmd, 6, three, &n), FW_EXIT_USAGE);
	assert_int_equal(l.n, 2);
	assert_int_equal(pids[1], 2);
	l.n = 0;
	assert_int_equal(opts_parse(&cmd, 3, bad, &n), FW_EXIT_USAGE);
	assert_int_equal(l.n, 0);
	/* the messages, by the option's own name */
	assert_int_not_equal(opts_pid_list(&opts[0], "0", &err), 0);
	assert_string_equal(strbuf_str(&err), "bad process id: '0'");
	strbuf_reset(&err);
	l.n = 2;
	assert_int_not_equal(opts_pid_list(&opts[0], "5", &err), 0);
	assert_string_equal(strbuf_str(&err), "too many -p options (at most 2)");
	strbuf_reset(&err);
	assert_int_not_equal(opts_pid_list(&longonly, "5", &err), 0);
	assert_string_equal(strbuf_str(&err), "too many --target options (at most 2)");
	strbuf_release(&err);
}

static char *captured(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void print_help(FILE *f, void *arg)
{
	opts_print_help(arg, f);
}

static void test_help_from_table(void **state)
{
	const char *long_help = "one two three four five six seven eight nine ten eleven "
				"twelve thirteen fourteen fifteen";
	struct seen s;
	const struct opt opts[] = {
		OPT_BOOL('q', "quiet", &s.quiet, "say less"),
		OPT_STR(0, "name", &s.name, "N", long_help),
		OPT_CALL_OPTARG(0, "site", &s, "DIR", "a site", take_site),
		OPT_BOOL('x', "hidden", &s.json, NULL),
		OPT_TERMINATOR,
	};
	struct opt_command cmd = { "test", "usage: test [options]\n", "What it does.\n",
				   "Footer.\n", opts, 0 };
	char *text = captured(print_help, &cmd), *line;

	(void)state;
	assert_non_null(strstr(text, "usage: test [options]\n\nWhat it does.\n\n"));
	assert_non_null(strstr(text, "\n  -q, --quiet            say less\n"));
	assert_non_null(strstr(text, "\n      --site[=DIR]       a site\n"));
	assert_non_null(strstr(text, "\n  -h, --help             this help\n"));
	assert_null(strstr(text, "hidden"));
	assert_non_null(strstr(text, "\n\nFooter.\n"));
	/* long help wraps under its column, no line past the width */
	assert_non_null(strstr(text, "\n                         "));
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		assert_true(strcspn(line, "\n") < USAGE_WIDTH);
	assert_non_null(strstr(text, "fifteen\n"));
	free(text);
}

/*
 * An included table (OPT_INCLUDE): its options parse, abbreviate, come from
 * a configuration file and show in the help as if written in its place.
 */
static void test_included_table(void **state)
{
	struct seen s;
	const struct opt shared[] = {
		OPT_BOOL(0, "json", &s.json, "as JSON"),
		OPT_STR('o', "output", &s.output, "FILE", "write FILE"),
		OPT_TERMINATOR,
	};
	const struct opt inner[] = {
		OPT_INCLUDE(shared),
		OPT_CALL(0, "limit", &s, "N", "at most N", take_limit),
		OPT_TERMINATOR,
	};
	const struct opt opts[] = {
		OPT_BOOL('q', "quiet", &s.quiet, "say less"),
		OPT_INCLUDE(inner),
		OPT_STR(0, "name", &s.name, "N", "a name"),
		OPT_STR(0, "named", &s.name, "N", "a name too"),
		OPT_TERMINATOR,
	};
	struct opt_command cmd = { "test", "usage: test [options]\n", NULL, NULL, opts, 0 };
	char *argv[] = { "test", "-qoOUT", "--js", "--lim=3", "--name", "x", NULL };
	char *ambiguous[] = { "test", "--na", NULL };
	char path[] = "/tmp/fw-test-options-XXXXXX";
	const char conf[] = "json = yes\nlimit 7\n";
	struct strbuf err = STRBUF_INIT;
	char **fargv, *text;
	int n, fargc, fd;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(opts_parse(&cmd, 6, argv, &n), 0);
	assert_int_equal(n, 0);
	assert_true(s.quiet);
	assert_string_equal(s.output, "OUT");
	assert_true(s.json);
	assert_int_equal(s.limit, 3);
	assert_string_equal(s.name, "x");
	assert_int_equal(opts_parse(&cmd, 2, ambiguous, &n), FW_EXIT_USAGE);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, conf, sizeof(conf) - 1), (ssize_t)sizeof(conf) - 1);
	close(fd);
	assert_int_equal(opts_file_args(&cmd, path, &fargc, &fargv, &err), 0);
	unlink(path);
	assert_int_equal(fargc, 3);
	assert_string_equal(fargv[1], "--json");
	assert_string_equal(fargv[2], "--limit=7");
	opts_file_free(fargc, fargv);

	/* the help: in the table's order, the included ones where they stand */
	text = captured(print_help, &cmd);
	assert_non_null(strstr(text, "  -q, --quiet            say less\n"
				     "      --json             as JSON\n"
				     "  -o, --output FILE      write FILE\n"
				     "      --limit N          at most N\n"
				     "      --name N           a name\n"));
	free(text);
	strbuf_release(&err);
}

/* ---- the format table ------------------------------------------------------ */

static void test_format_rows(void **state)
{
	static const char *const names[] = { "text", "collapsed", "html", "pprof", "speedscope",
					      "gecko" };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct outfmt *f = outfmt_find(names[i], OUTFMT_PROFILE);

		assert_non_null(f);
		assert_string_equal(f->name, names[i]);
		assert_non_null(f->write);
		assert_non_null(f->label);
	}
	assert_ptr_equal(outfmt_find("firefox", OUTFMT_PROFILE), outfmt_find("gecko", OUTFMT_PROFILE));
	assert_null(outfmt_find("svg", OUTFMT_PROFILE));
	/* diff formats are the rows with a comparison writer */
	assert_non_null(outfmt_find("html", OUTFMT_DIFF));
	assert_non_null(outfmt_find("text", OUTFMT_DIFF));
	assert_null(outfmt_find("pprof", OUTFMT_DIFF));
	outfmt_names(&sb, OUTFMT_PROFILE);
	assert_string_equal(strbuf_str(&sb), "text, collapsed, html, pprof, speedscope or gecko");
	strbuf_reset(&sb);
	outfmt_names(&sb, OUTFMT_DIFF);
	assert_string_equal(strbuf_str(&sb), "text or html");
	strbuf_reset(&sb);
	outfmt_readable(&sb);
	assert_string_equal(strbuf_str(&sb), "collapsed or pprof");
	strbuf_reset(&sb);
	outfmt_endings(&sb, OUTFMT_PROFILE);
	assert_non_null(strstr(strbuf_str(&sb), ".gecko.json Firefox Profiler"));
	assert_non_null(strstr(strbuf_str(&sb), "anything else collapsed"));
	strbuf_reset(&sb);
	outfmt_endings(&sb, OUTFMT_DIFF);
	assert_non_null(strstr(strbuf_str(&sb), "anything else text"));
	assert_null(strstr(strbuf_str(&sb), "pprof"));
	strbuf_release(&sb);
}

static void test_format_for_path(void **state)
{
	static const struct { const char *path, *profile, *diff; } cases[] = {
		{ "-", "text", "text" },
		{ "out.txt", "text", "text" },
		{ "out.report", "text", "text" },
		{ "flame.html", "html", "html" },
		{ "flame.htm", "html", "html" },
		{ "prof.pb.gz", "pprof", "text" },
		{ "prof.pprof", "pprof", "text" },
		{ "prof.pb", "pprof", "text" },
		{ "x.speedscope.json", "speedscope", "text" },
		{ "x.json", "speedscope", "text" },
		{ "x.gecko.json", "gecko", "text" },   /* the longer ending wins */
		{ "x.folded", "collapsed", "text" },
		{ "noext", "collapsed", "text" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(outfmt_for_path(cases[i].path, OUTFMT_PROFILE)->name,
				    cases[i].profile);
		assert_string_equal(outfmt_for_path(cases[i].path, OUTFMT_DIFF)->name, cases[i].diff);
	}
	/* readers: pprof for binary data, collapsed for text */
	assert_string_equal(outfmt_reader(1)->name, "pprof");
	assert_string_equal(outfmt_reader(0)->name, "collapsed");
	assert_int_equal(outfmt_write(NULL, NULL, NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_arguments),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_help_from_table),
		cmocka_unit_test(test_included_table),
		cmocka_unit_test(test_format_rows),
		cmocka_unit_test(test_format_for_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
