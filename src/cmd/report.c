/*
 * framewalk report: re-render a saved profile (pprof, as `record -o x.pb.gz`
 * writes it, or collapsed stacks) in any output format. The input is
 * untrusted: a corrupt, truncated or empty file is one error line and exit
 * code FW_EXIT_BAD_INPUT. Outputs land whole or not at all (util/outfile.h).
 */
#include <errno.h>
#include <getopt.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "input/load.h"
#include "output/output.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_OUTPUTS 8

static void report_usage(void)
{
	struct strbuf sb = STRBUF_INIT;

	outfmt_readable(&sb);
	printf("usage: framewalk report [options] FILE\n"
	       "\n"
	       "Render a saved profile (%s; '-' reads standard input)\n"
	       "as a report or in another format.\n"
	       "\n"
	       "  -o, --output FILE      write to FILE (default: standard output); may be given\n"
	       "                         several times\n", strbuf_str(&sb));
	cmd_print_format_option(stdout, OUTFMT_PROFILE);
	fputs("      --limit N          rows in the report's top tables (default 20)\n"
	      "      --min-percent P    hide call-tree branches under P% (default 0.5)\n"
	      "      --thread T         only the thread named T or with tid T\n"
	      "  -h, --help             this help\n"
	      "\n"
	      "See docs/FORMATS.md.\n", stdout);
	strbuf_release(&sb);
}

struct report_opts {
	const char *input;
	const char *outputs[MAX_OUTPUTS];
	const struct outfmt *formats[MAX_OUTPUTS];
	int noutputs;
	const struct outfmt *format;   /* -f, NULL: by extension */
	struct output_opts out;
};

static int usage_error(const char *fmt, const char *arg)
{
	return cmd_usage_error("report", fmt, arg);
}

static int parse_report_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "limit", required_argument, NULL, 'L' },
		{ "min-percent", required_argument, NULL, 'M' },
		{ "thread", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	output_opts_default(&o->out);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (o->noutputs == MAX_OUTPUTS)
				return usage_error("%s", "too many -o options (at most 8)");
			o->outputs[o->noutputs++] = optarg;
			break;
		case 'f':
			o->format = outfmt_find(optarg, OUTFMT_PROFILE);
			if (!o->format)
				return cmd_unknown_format("report", optarg, OUTFMT_PROFILE);
			break;
		case 'L':
		case 'M':
		case 'T':
			if (cmd_output_filter_option("report", c, optarg, &o->out))
				return FW_EXIT_USAGE;
			break;
		case 'h':
			report_usage();
			return -1;
		default:
			return usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no input: give the saved profile to read");
	if (optind + 1 < argc)
		return usage_error("more than one input: '%s'", argv[optind + 1]);
	o->input = argv[optind];
	if (!o->noutputs)
		o->outputs[o->noutputs++] = "-";
	for (int i = 0; i < o->noutputs; i++) {
		int is_stdout = !strcmp(o->outputs[i], "-");

		o->formats[i] = o->format ? o->format :
			outfmt_for_path(o->outputs[i], OUTFMT_PROFILE);
		if (is_stdout && (o->formats[i]->flags & OUTFMT_BINARY) && isatty(STDOUT_FILENO))
			return cmd_usage_error("report", "%s is binary: write it to a file with -o FILE%s",
					       o->formats[i]->name, o->formats[i]->extensions ?
					       o->formats[i]->extensions[0] : "");
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct outfile of[MAX_OUTPUTS];
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
	code = cmd_open_outputs(of, o.outputs, o.noutputs);
	if (code) {
		profile_release(&prof);
		return code;
	}
	for (int i = 0; i < o.noutputs; i++) {
		ret = outfmt_write(o.formats[i], &prof, of[i].f, &o.out);
		if (cmd_finish_output(&of[i], o.outputs[i], ret))
			code = FW_EXIT_OUTPUT;
	}
	profile_release(&prof);
	return code;
}
