/*
 * framewalk report: re-render a saved profile (pprof, as `record -o x.pb.gz`
 * writes it, or collapsed stacks) in any output format. The input is
 * untrusted: a corrupt, truncated or empty file is one error line and exit
 * code FW_EXIT_BAD_INPUT. Outputs land whole or not at all (util/outfile.h).
 */
#include <errno.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "input/load.h"
#include "output/output.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

struct report_opts {
	const char *input;
	struct cmd_outputs outs;
	struct output_opts out;
};

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_report_args(int argc, char **argv, struct report_opts *o)
{
	struct strbuf about = STRBUF_INIT;
	struct cmd_output_table outputs;
	int ret, nargs;

	memset(o, 0, sizeof(*o));
	o->outs.use = OUTFMT_PROFILE;
	output_opts_default(&o->out);
	outfmt_readable(&about);
	strbuf_addstr(&about, "; '-' reads standard input) as a report or in another format.\n");
	cmd_output_table_init(&outputs, &o->outs, &o->out, "write to FILE (default: standard "
			      "output)");
	{
		const struct opt opts[] = {
			OPT_INCLUDE(outputs.table),
			OPT_TERMINATOR,
		};
		struct strbuf intro = STRBUF_INIT;
		struct opt_command cmd = {
			"report", "usage: framewalk report [options] FILE\n", NULL,
			"See docs/FORMATS.md.\n", opts, 0,
		};

		strbuf_addf(&intro, "Render a saved profile (%s", strbuf_str(&about));
		cmd.about = strbuf_str(&intro);
		ret = opts_parse(&cmd, argc, argv, &nargs);
		strbuf_release(&intro);
	}
	strbuf_release(&about);
	cmd_output_table_release(&outputs);
	if (ret)
		return ret;
	if (nargs < 1)
		return cmd_usage_error("report", "no input: give the saved profile to read");
	if (nargs > 1)
		return cmd_usage_error("report", "more than one input: '%s'", argv[2]);
	o->input = argv[1];
	cmd_outputs_resolve(&o->outs, 1);
	for (int i = 0; i < o->outs.n; i++) {
		const struct outfmt *f = o->outs.formats[i];

		if (!strcmp(o->outs.paths[i], "-") && (f->flags & OUTFMT_BINARY) &&
		    isatty(STDOUT_FILENO))
			return cmd_usage_error("report", "%s is binary: write it to a file with -o FILE%s",
					       f->name, f->extensions ? f->extensions[0] : "");
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct outfile of[CMD_MAX_OUTPUTS];
	struct report_opts o;
	struct profile prof;
	int ret, code = FW_EXIT_OK;

	ret = parse_report_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	ret = profile_load(o.input, &prof, &err);
	if (ret) {
		fw_error("cannot read %s", strbuf_str(&err));
		strbuf_release(&err);
		return FW_EXIT_BAD_INPUT;
	}
	strbuf_release(&err);
	cmd_apply_where(&prof, &o.out);
	code = cmd_open_outputs(of, o.outs.paths, o.outs.n);
	if (code) {
		profile_release(&prof);
		return code;
	}
	for (int i = 0; i < o.outs.n; i++) {
		ret = outfmt_write(o.outs.formats[i], &prof, of[i].f, &o.out);
		if (cmd_finish_output(&of[i], o.outs.paths[i], ret))
			code = FW_EXIT_OUTPUT;
	}
	profile_release(&prof);
	return code;
}
