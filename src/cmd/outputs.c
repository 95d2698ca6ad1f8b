/*
 * What every command that writes profiles shares about its outputs: the
 * --format help and "unknown format" error from the format table
 * (output/registry.c), and opening, writing and committing the -o files so
 * each lands whole or not at all (util/outfile.h).
 */
#include <errno.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

void cmd_format_help(struct strbuf *sb, enum outfmt_use use)
{
	outfmt_names(sb, use);
	strbuf_addstr(sb, use == OUTFMT_DIFF ? ", for every -o FILE (default: from its extension: "
		      : ", for every output (default: from each FILE's extension: ");
	outfmt_endings(sb, use);
	strbuf_addstr(sb, "; text on standard output)");
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

int cmd_opt_output(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct cmd_outputs *outs = o->value;

	if (outs->n == CMD_MAX_OUTPUTS) {
		strbuf_addf(err, "too many -o options (at most %d)", CMD_MAX_OUTPUTS);
		return -1;
	}
	outs->paths[outs->n++] = arg;
	return 0;
}

int cmd_opt_format(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct cmd_outputs *outs = o->value;

	outs->format = outfmt_find(arg, outs->use);
	if (outs->format)
		return 0;
	strbuf_addf(err, "unknown format: '%s' (", arg);
	outfmt_names(err, outs->use);
	strbuf_addch(err, ')');
	return -1;
}

void cmd_outputs_resolve(struct cmd_outputs *outs, int to_stdout)
{
	if (!outs->n && to_stdout)
		outs->paths[outs->n++] = "-";
	for (int i = 0; i < outs->n; i++)
		outs->formats[i] = outs->format ? outs->format :
			outfmt_for_path(outs->paths[i], outs->use);
}

int cmd_opt_limit(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct output_opts *out = o->value;
	long v;

	if (parse_long(arg, &v) || v < 1 || v > 1000000) {
		strbuf_addf(err, "bad --limit: '%s' (1 or more)", arg);
		return -1;
	}
	out->limit = (int)v;
	return 0;
}

int cmd_opt_min_percent(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct output_opts *out = o->value;
	double pct;

	if (parse_seconds(arg, &pct) || pct > 100) {
		strbuf_addf(err, "bad --min-percent: '%s' (0 to 100)", arg);
		return -1;
	}
	out->min_percent = pct;
	return 0;
}

int cmd_opt_by(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (!*arg) {
		strbuf_addstr(err, "--by needs a label's name");
		return -1;
	}
	((struct output_opts *)o->value)->by = arg;
	return 0;
}

int cmd_opt_where(const struct opt *o, const char *arg, struct strbuf *err)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg) {
		strbuf_addf(err, "bad --where '%s': NAME=VALUE (a label's name and one of its values)",
			    arg);
		return -1;
	}
	((struct output_opts *)o->value)->where = arg;
	return 0;
}

size_t cmd_apply_where(struct profile *p, const struct output_opts *o)
{
	const char *eq;
	char *key;
	size_t kept;

	if (!o->where || !(eq = strchr(o->where, '=')))
		return p->ncounts;
	key = xstrndup(o->where, (size_t)(eq - o->where));
	kept = profile_keep_label(p, key, eq + 1);
	free(key);
	return kept;
}

int cmd_opt_thread(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)err;
	((struct output_opts *)o->value)->thread = arg;
	return 0;
}

void cmd_output_table_init(struct cmd_output_table *t, struct cmd_outputs *outs,
			   struct output_opts *out, const char *output_help)
{
	t->format_help = (struct strbuf)STRBUF_INIT;
	t->output_help = (struct strbuf)STRBUF_INIT;
	cmd_format_help(&t->format_help, outs->use);
	strbuf_addf(&t->output_help, "%s; may be given several times", output_help);
	{
		const struct opt table[] = {
			OPT_CALL('o', "output", outs, "FILE", strbuf_str(&t->output_help),
				 cmd_opt_output),
			OPT_CALL('f', "format", outs, "FMT", strbuf_str(&t->format_help),
				 cmd_opt_format),
			OPT_CALL(0, "limit", out, "N", "rows in the report's top tables (default 20)",
				 cmd_opt_limit),
			OPT_CALL(0, "min-percent", out, "P", "hide call-tree branches under P% "
				 "(default 0.5)", cmd_opt_min_percent),
			OPT_CALL(0, "thread", out, "T", "only the thread named T or with tid T",
				 cmd_opt_thread),
			OPT_CALL(0, "by", out, "NAME", CMD_BY_HELP, cmd_opt_by),
			OPT_CALL(0, "where", out, "NAME=VALUE", CMD_WHERE_HELP, cmd_opt_where),
			OPT_TERMINATOR,
		};

		_Static_assert(ARRAY_SIZE(table) == ARRAY_SIZE(t->table), "cmd_output_table's size");
		memcpy(t->table, table, sizeof(table));
	}
}

void cmd_output_table_release(struct cmd_output_table *t)
{
	strbuf_release(&t->format_help);
	strbuf_release(&t->output_help);
}
