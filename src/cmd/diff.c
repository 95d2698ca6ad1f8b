/*
 * framewalk diff: compare two saved profiles (pprof or collapsed, read by
 * profile_load), each normalised to its own total so captures of different
 * lengths compare. Prints the functions whose share changed most and writes
 * a differential flame graph (grown in red, shrunk in blue) with -o FILE.html.
 */
#include <errno.h>

#include "cmd/cmd.h"
#include "input/load.h"
#include "output/diff.h"
#include "output/output.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

struct diff_opts {
	const char *before, *after;
	struct cmd_outputs outs;
	int quiet;
	struct output_opts out;
};

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_diff_args(int argc, char **argv, struct diff_opts *o)
{
	struct strbuf about = STRBUF_INIT, format_help = STRBUF_INIT;
	int ret, nargs;

	memset(o, 0, sizeof(*o));
	o->outs.use = OUTFMT_DIFF;
	output_opts_default(&o->out);
	strbuf_addstr(&about, "Compare two saved profiles (");
	outfmt_readable(&about);
	strbuf_addstr(&about, "), each normalised to its own total: print the functions whose "
		      "share changed most (self and total share before, after, and the delta in "
		      "percentage points), and write a differential flame graph with -o FILE.html "
		      "(red: grew, blue: shrank).\n");
	cmd_format_help(&format_help, OUTFMT_DIFF);
	{
		const struct opt opts[] = {
			OPT_CALL('o', "output", &o->outs, "FILE", "also write FILE, in the format "
				 "-f or its extension says; may be given several times", cmd_opt_output),
			OPT_CALL('f', "format", &o->outs, "FMT", strbuf_str(&format_help),
				 cmd_opt_format),
			OPT_CALL(0, "limit", &o->out, "N", "rows in the table (default 20)",
				 cmd_opt_limit),
			OPT_CALL(0, "thread", &o->out, "T", "compare only threads named T (or with "
				 "tid T)", cmd_opt_thread),
			OPT_CALL(0, "where", &o->out, "NAME=VALUE", "compare only the samples whose "
				 "label NAME has the value VALUE (--label), in both profiles",
				 cmd_opt_where),
			OPT_BOOL('q', "quiet", &o->quiet, "no table on stdout (only the -o files)"),
			OPT_TERMINATOR,
		};
		const struct opt_command cmd = {
			"diff", "usage: framewalk diff [options] BEFORE AFTER\n", strbuf_str(&about),
			NULL, opts, 0,
		};

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	strbuf_release(&about);
	strbuf_release(&format_help);
	if (ret)
		return ret;
	if (nargs != 2)
		return cmd_usage_error("diff", "give two profiles: framewalk diff BEFORE AFTER");
	o->before = argv[1];
	o->after = argv[2];
	cmd_outputs_resolve(&o->outs, 0);
	return 0;
}

static int load(const char *path, struct profile *p)
{
	struct strbuf err = STRBUF_INIT, readable = STRBUF_INIT;
	int ret = profile_load(path, p, &err);

	if (ret) {
		if (err.len)
			fw_error("%s", strbuf_str(&err));
		else
			fw_error("cannot read profile %s: %s", path, strerror(-ret));
		outfmt_readable(&readable);
		fw_hint("diff reads %s (record -o x.pb.gz writes pprof)", strbuf_str(&readable));
		strbuf_release(&readable);
	}
	strbuf_release(&err);
	return ret;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o;
	struct outfile of[CMD_MAX_OUTPUTS];
	struct profile before, after;
	int ret, code = FW_EXIT_OK;

	ret = parse_diff_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	code = cmd_open_outputs(of, o.outs.paths, o.outs.n);
	if (code)
		return code;
	if (load(o.before, &before)) {
		cmd_abort_outputs(of, o.outs.n);
		return FW_EXIT_BAD_INPUT;
	}
	if (load(o.after, &after)) {
		cmd_abort_outputs(of, o.outs.n);
		profile_release(&before);
		return FW_EXIT_BAD_INPUT;
	}
	/* one label's profile before and after (--where route=/orders) */
	cmd_apply_where(&before, &o.out);
	cmd_apply_where(&after, &o.out);
	for (int i = 0; i < o.outs.n; i++) {
		ret = o.outs.formats[i]->write_diff(&before, o.before, &after, o.after, of[i].f, &o.out);
		if (cmd_finish_output(&of[i], o.outs.paths[i], ret))
			code = FW_EXIT_OUTPUT;
	}
	if (!o.quiet && (output_diff_text(&before, o.before, &after, o.after, stdout, &o.out)))
		code = FW_EXIT_OUTPUT;
	profile_release(&before);
	profile_release(&after);
	return code;
}
