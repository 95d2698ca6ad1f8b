/*
 * framewalk diff: compare two saved profiles (pprof or collapsed, read by
 * profile_load), each normalised to its own total so captures of different
 * lengths compare. Prints the functions whose share changed most and writes
 * a differential flame graph (grown in red, shrunk in blue) with -o FILE.html.
 */
#include <errno.h>
#include <getopt.h>

#include "cmd/cmd.h"
#include "input/load.h"
#include "output/diff.h"
#include "output/output.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_OUTPUTS 8

static void diff_usage(void)
{
	struct strbuf sb = STRBUF_INIT;

	outfmt_readable(&sb);
	printf("usage: framewalk diff [options] BEFORE AFTER\n"
	       "\n"
	       "Compare two saved profiles (%s), each normalised to its own\n"
	       "total: print the functions whose share changed most (self and total share\n"
	       "before, after, and the delta in percentage points), and write a\n"
	       "differential flame graph with -o FILE.html (red: grew, blue: shrank).\n"
	       "\n"
	       "  -o, --output FILE      also write FILE; may be given several times\n",
	       strbuf_str(&sb));
	cmd_print_format_option(stdout, OUTFMT_DIFF);
	fputs("      --limit N          rows in the table (default 20)\n"
	      "      --thread T         compare only threads named T (or with tid T)\n"
	      "  -q, --quiet            no table on stdout (only the -o files)\n"
	      "  -h, --help             this help\n", stdout);
	strbuf_release(&sb);
}

struct diff_opts {
	const char *before, *after;
	const char *outputs[MAX_OUTPUTS];
	const struct outfmt *formats[MAX_OUTPUTS];
	int noutputs;
	const struct outfmt *format;   /* -f, NULL: by extension */
	int quiet;
	struct output_opts out;
};

static int usage_error(const char *fmt, const char *arg)
{
	return cmd_usage_error("diff", fmt, arg);
}

static int parse_diff_args(int argc, char **argv, struct diff_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'L' },
		{ "thread", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	output_opts_default(&o->out);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:f:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (o->noutputs == MAX_OUTPUTS)
				return usage_error("%s", "too many -o options (at most 8)");
			o->outputs[o->noutputs++] = optarg;
			break;
		case 'f':
			o->format = outfmt_find(optarg, OUTFMT_DIFF);
			if (!o->format)
				return cmd_unknown_format("diff", optarg, OUTFMT_DIFF);
			break;
		case 'L':
		case 'M':
		case 'T':
			if (cmd_output_filter_option("diff", c, optarg, &o->out))
				return FW_EXIT_USAGE;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			diff_usage();
			return -1;
		default:
			return usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", "give two profiles: framewalk diff BEFORE AFTER");
	o->before = argv[optind];
	o->after = argv[optind + 1];
	for (int i = 0; i < o->noutputs; i++)
		o->formats[i] = o->format ? o->format :
			outfmt_for_path(o->outputs[i], OUTFMT_DIFF);
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
	struct outfile of[MAX_OUTPUTS];
	struct profile before, after;
	int ret, code = FW_EXIT_OK;

	ret = parse_diff_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	code = cmd_open_outputs(of, o.outputs, o.noutputs);
	if (code)
		return code;
	if (load(o.before, &before)) {
		cmd_abort_outputs(of, o.noutputs);
		return FW_EXIT_BAD_INPUT;
	}
	if (load(o.after, &after)) {
		cmd_abort_outputs(of, o.noutputs);
		profile_release(&before);
		return FW_EXIT_BAD_INPUT;
	}
	for (int i = 0; i < o.noutputs; i++) {
		ret = o.formats[i]->write_diff(&before, o.before, &after, o.after, of[i].f, &o.out);
		if (cmd_finish_output(&of[i], o.outputs[i], ret))
			code = FW_EXIT_OUTPUT;
	}
	if (!o.quiet && (output_diff_text(&before, o.before, &after, o.after, stdout, &o.out)))
		code = FW_EXIT_OUTPUT;
	profile_release(&before);
	profile_release(&after);
	return code;
}
