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

static const char diff_usage[] =
	"usage: framewalk diff [options] BEFORE AFTER\n"
	"\n"
	"Compare two saved profiles (pprof .pb.gz or collapsed stacks), each\n"
	"normalised to its own total: print the functions whose share changed most\n"
	"(self and total share before, after, and the delta in percentage points),\n"
	"and write a differential flame graph with -o FILE.html (red: grew,\n"
	"blue: shrank).\n"
	"\n"
	"  -o, --output FILE      also write FILE: the flame graph for .html/.htm, the\n"
	"                         table otherwise; may be given several times\n"
	"  -f, --format FMT       html or text, for every -o FILE\n"
	"      --limit N          rows in the table (default 20)\n"
	"      --thread T         compare only threads named T (or with tid T)\n"
	"  -q, --quiet            no table on stdout (only the -o files)\n"
	"  -h, --help             this help\n";

struct diff_opts {
	const char *before, *after;
	const char *outputs[MAX_OUTPUTS];
	int html[MAX_OUTPUTS];
	int noutputs;
	int format;               /* -1: by extension, 0 text, 1 html */
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
	o->format = -1;
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
			if (!strcmp(optarg, "html"))
				o->format = 1;
			else if (!strcmp(optarg, "text"))
				o->format = 0;
			else
				return usage_error("unknown format: '%s' (html or text)", optarg);
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
			fputs(diff_usage, stdout);
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
		o->html[i] = o->format >= 0 ? o->format :
			str_ends_with(o->outputs[i], ".html") || str_ends_with(o->outputs[i], ".htm");
	return 0;
}

static int load(const char *path, struct profile *p)
{
	struct strbuf err = STRBUF_INIT;
	int ret = profile_load(path, p, &err);

	if (ret) {
		if (err.len)
			fw_error("%s", strbuf_str(&err));
		else
			fw_error("cannot read profile %s: %s", path, strerror(-ret));
		fw_hint("diff reads pprof (.pb.gz, as record -o x.pb.gz writes) and collapsed stacks");
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
	for (int i = 0; i < o.noutputs; i++) {
		ret = outfile_open(&of[i], o.outputs[i]);
		if (ret) {
			for (int k = 0; k < i; k++)
				outfile_abort(&of[k]);
			return cmd_output_error(o.outputs[i], ret);
		}
	}
	if (load(o.before, &before)) {
		for (int i = 0; i < o.noutputs; i++)
			outfile_abort(&of[i]);
		return FW_EXIT_BAD_INPUT;
	}
	if (load(o.after, &after)) {
		for (int i = 0; i < o.noutputs; i++)
			outfile_abort(&of[i]);
		profile_release(&before);
		return FW_EXIT_BAD_INPUT;
	}
	for (int i = 0; i < o.noutputs; i++) {
		ret = o.html[i] ? output_html_diff(&before, o.before, &after, o.after, of[i].f, &o.out)
			: output_diff_text(&before, o.before, &after, o.after, of[i].f, &o.out);
		if (!ret)
			ret = outfile_commit(&of[i]);
		else
			outfile_abort(&of[i]);
		if (ret) {
			fw_error("writing %s failed: %s", strcmp(o.outputs[i], "-") ? o.outputs[i] : "stdout",
				 strerror(-ret));
			code = FW_EXIT_OUTPUT;
		}
	}
	if (!o.quiet && (output_diff_text(&before, o.before, &after, o.after, stdout, &o.out)))
		code = FW_EXIT_OUTPUT;
	profile_release(&before);
	profile_release(&after);
	return code;
}
