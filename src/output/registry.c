/*
 * The table of formats (output.h): the one place a format is named. Adding
 * one: write output/NAME.c with its writer (and input/NAME.c with a reader
 * when it can be read back), declare them, add the row below, document the
 * format in docs/FORMATS.md.
 */
#include <errno.h>

#include "input/readers.h"
#include "output/diff.h"
#include "output/output.h"
#include "util/util.h"

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct outfmt formats[] = {
	{ "text", NULL, NAMES(".txt", ".report"), "text", OUTFMT_STDOUT,
	  output_text, output_diff_text, NULL },
	{ "collapsed", NULL, NULL, "collapsed", OUTFMT_OTHER,
	  output_collapsed, NULL, read_collapsed },
	{ "html", NULL, NAMES(".html", ".htm"), "flame graph", 0,
	  output_html, output_html_diff, NULL },
	{ "pprof", NULL, NAMES(".pb.gz", ".pprof", ".pb"), "pprof", OUTFMT_BINARY,
	  output_pprof, NULL, read_pprof },
	/* docs/FORMATS.md: plain .json is speedscope, as py-spy writes it */
	{ "speedscope", NULL, NAMES(".speedscope.json", ".json"), "speedscope", 0,
	  output_speedscope, NULL, NULL },
	{ "gecko", NAMES("firefox"), NAMES(".gecko.json"), "Firefox Profiler", 0,
	  output_gecko, NULL, NULL },
};

static int serves(const struct outfmt *f, enum outfmt_use use)
{
	return use == OUTFMT_DIFF ? f->write_diff != NULL : f->write != NULL;
}

static const struct outfmt *with_flag(unsigned flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].flags & flag)
			return &formats[i];
	return NULL;
}

static int in_list(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

const struct outfmt *outfmt_find(const char *name, enum outfmt_use use)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if ((!strcmp(formats[i].name, name) || in_list(formats[i].aliases, name)) &&
		    serves(&formats[i], use))
			return &formats[i];
	return NULL;
}

const struct outfmt *outfmt_for_path(const char *path, enum outfmt_use use)
{
	const struct outfmt *best = NULL;
	size_t best_len = 0;

	if (!strcmp(path, "-"))
		return with_flag(OUTFMT_STDOUT);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		for (const char *const *e = formats[i].extensions; e && *e; e++) {
			if (str_ends_with(path, *e) && strlen(*e) > best_len) {
				best = &formats[i];
				best_len = strlen(*e);
			}
		}
	}
	if (!best)
		best = with_flag(OUTFMT_OTHER);
	return serves(best, use) ? best : with_flag(OUTFMT_STDOUT);
}

const struct outfmt *outfmt_reader(int binary)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].read && !(formats[i].flags & OUTFMT_BINARY) == !binary)
			return &formats[i];
	return NULL;
}

/* "a, b or c" of the rows keep() selects. */
static void list_names(struct strbuf *sb, int (*keep)(const struct outfmt *, int), int arg)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		n += keep(&formats[i], arg) != 0;
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!keep(&formats[i], arg))
			continue;
		if (k++)
			strbuf_addstr(sb, k == n ? " or " : ", ");
		strbuf_addstr(sb, formats[i].name);
	}
}

static int keep_use(const struct outfmt *f, int use)
{
	return serves(f, (enum outfmt_use)use);
}

static int keep_readable(const struct outfmt *f, int unused)
{
	(void)unused;
	return f->read != NULL;
}

void outfmt_names(struct strbuf *sb, enum outfmt_use use)
{
	list_names(sb, keep_use, (int)use);
}

void outfmt_readable(struct strbuf *sb)
{
	list_names(sb, keep_readable, 0);
}

void outfmt_endings(struct strbuf *sb, enum outfmt_use use)
{
	const struct outfmt *other = with_flag(OUTFMT_OTHER);

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		const struct outfmt *f = &formats[i];

		if (!f->extensions || !serves(f, use))
			continue;
		for (const char *const *e = f->extensions; *e; e++)
			strbuf_addf(sb, "%s%s", *e, e[1] ? "/" : " ");
		strbuf_addf(sb, "%s, ", f->label);
	}
	if (!serves(other, use))
		other = with_flag(OUTFMT_STDOUT);
	strbuf_addf(sb, "anything else %s", other->label);
}

int outfmt_write(const struct outfmt *fmt, const struct profile *p, FILE *f,
		 const struct output_opts *o)
{
	if (!fmt || !fmt->write)
		return -EINVAL;
	return fmt->write(p, f, o);
}
