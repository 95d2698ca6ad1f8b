/*
 * Collapsed stacks (Brendan Gregg's folded format), one line per distinct
 * (thread, stack), whatever labels its samples carry: "thread;outer;...;inner
 * count". Read by flamegraph.pl,
 * speedscope and inferno. Lines are sorted so equal profiles give equal files.
 */
#include <errno.h>
#include <stdlib.h>

#include "output/format.h"
#include "output/output.h"
#include "util/util.h"

struct line {
	char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int output_collapsed(const struct profile *p, FILE *f, const struct output_opts *o)
{
	uint32_t *frames = xmalloc(sizeof(*frames) * (p->nnodes ? 4096 : 1));
	struct line *lines = xcalloc(p->ncounts ? p->ncounts : 1, sizeof(*lines));
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		size_t depth;

		if (o && !thread_matches(p, c->thread, o->thread))
			continue;
		strbuf_reset(&sb);
		format_thread(&sb, p, c->thread, ESCAPE_COLLAPSED);
		depth = profile_node_frames(p, c->node, frames, 4096);
		for (size_t k = 0; k < depth; k++) {
			strbuf_addch(&sb, ';');
			format_frame(&sb, p, frames[k], ESCAPE_COLLAPSED);
		}
		lines[n].text = xstrdup(strbuf_str(&sb));
		lines[n].count = c->count;
		n++;
	}
	sort_array(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		/* one line per stack: a stack under several label sets (--label) is one */
		if (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text)) {
			lines[i + 1].count += lines[i].count;
			free(lines[i].text);
			continue;
		}
		if (fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].count) < 0)
			ret = -EIO;
		free(lines[i].text);
	}
	free(lines);
	free(frames);
	strbuf_release(&sb);
	return ret;
}
