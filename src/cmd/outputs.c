/*
 * What every command that writes profiles shares about its outputs: the
 * --format help and "unknown format" error from the format table
 * (output/registry.c), and opening, writing and committing the -o files so
 * each lands whole or not at all (util/outfile.h).
 */
#include <errno.h>

#include "cmd/cmd.h"
#include "util/options.h"
#include "util/strbuf.h"

void cmd_format_help(struct strbuf *sb, enum outfmt_use use)
{
	outfmt_names(sb, use);
	strbuf_addstr(sb, use == OUTFMT_DIFF ? ", for every -o FILE (default: from its extension: "
		      : ", for every output (default: from each FILE's extension: ");
	outfmt_endings(sb, use);
	strbuf_addstr(sb, "; text on standard output)");
}

void cmd_print_format_option(FILE *f, enum outfmt_use use)
{
	struct strbuf sb = STRBUF_INIT;

	cmd_format_help(&sb, use);
	usage_option_help(f, "-f, --format FMT", strbuf_str(&sb), USAGE_HELP_COLUMN);
	strbuf_release(&sb);
}

int cmd_unknown_format(const char *cmd, const char *name, enum outfmt_use use)
{
	struct strbuf names = STRBUF_INIT;
	int ret;

	outfmt_names(&names, use);
	ret = cmd_usage_error(cmd, "unknown format: '%s' (%s)", name, strbuf_str(&names));
	strbuf_release(&names);
	return ret;
}

int cmd_open_outputs(struct outfile *of, const char *const *paths, int n)
{
	for (int i = 0; i < n; i++) {
		int ret = outfile_open(&of[i], paths[i]);

		if (ret) {
			cmd_abort_outputs(of, i);
			return cmd_output_error(paths[i], ret);
		}
	}
	return FW_EXIT_OK;
}

void cmd_abort_outputs(struct outfile *of, int n)
{
	for (int i = 0; i < n; i++)
		outfile_abort(&of[i]);
}

int cmd_finish_output(struct outfile *of, const char *path, int ret)
{
	if (!ret)
		ret = outfile_commit(of);
	else
		outfile_abort(of);
	if (!ret)
		return FW_EXIT_OK;
	/* A reader that went away (| head) is not an error worth a message. */
	if (!strcmp(path, "-") && (ret == -EPIPE || errno == EPIPE))
		return FW_EXIT_OK;
	fw_error("writing %s failed: %s", strcmp(path, "-") ? path : "standard output",
		 strerror(-ret));
	return FW_EXIT_OUTPUT;
}
