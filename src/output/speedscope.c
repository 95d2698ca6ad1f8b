/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per thread over a shared frame list. A sample is a
 * distinct stack (frame indexes, outermost first) and its weight is its
 * sample count, or, when the sampling rate is known, count x period in
 * nanoseconds, so speedscope shows time. The busiest thread opens first.
 */
#include <errno.h>

#include "output/format.h"
#include "output/json.h"
#include "output/output.h"
#include "util/strbuf.h"
#include "util/util.h"

/* Round a non-negative value; past 2^53 every double is already integral. */
static double round_pos(double x)
{
	return x < 9007199254740992.0 ? (double)(uint64_t)(x + 0.5) : x;
}

/* Counts grouped by thread, in profile order within a thread. */
static int cmp_count(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t tx = p->counts[x].thread, ty = p->counts[y].thread;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

static uint32_t *counts_by_thread(const struct profile *p, const struct output_opts *o, size_t *n)
{
	uint32_t *idx = xcalloc(p->ncounts + 1, sizeof(*idx));

	*n = 0;
	for (size_t i = 0; i < p->ncounts; i++)
		if (!o || thread_matches(p, p->counts[i].thread, o->thread))
			idx[(*n)++] = (uint32_t)i;
	qsort_r(idx, *n, sizeof(*idx), cmp_count, (void *)p);
	return idx;
}

int output_speedscope(const struct profile *p, FILE *f, const struct output_opts *o)
{
	const struct profile_meta *m = &p->meta;
	/* weights in nanoseconds when the rate is known */
	double period = profile_rate_known(m) ? 1e9 / m->rate_hz : 0;
	uint32_t *frame_index = xcalloc(p->nframes + 1, sizeof(*frame_index));
	uint32_t *stack;
	size_t maxdepth = 1;
	struct strbuf sb = STRBUF_INIT;
	uint32_t nframes = 0, active = 0, nprofiles = 0;
	uint64_t best = 0;
	struct json j;
	size_t n;
	uint32_t *idx = counts_by_thread(p, o, &n);

	for (size_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i].depth > maxdepth)
			maxdepth = p->nodes[i].depth;
	stack = xmalloc(sizeof(*stack) * maxdepth);
	/* shared frames, in order of first use */
	for (size_t i = 0; i < n; i++)
		for (uint32_t nd = p->counts[idx[i]].node; nd && nd < p->nnodes; nd = p->nodes[nd].parent)
			if (!frame_index[p->nodes[nd].frame])
				frame_index[p->nodes[nd].frame] = ++nframes;
	/* the busiest thread becomes the active profile */
	for (size_t i = 0; i < n;) {
		uint32_t t = p->counts[idx[i]].thread;
		uint64_t sum = 0;

		for (; i < n && p->counts[idx[i]].thread == t; i++)
			sum += p->counts[idx[i]].count;
		if (sum > best) {
			best = sum;
			active = nprofiles;
		}
		nprofiles++;
	}

	json_init(&j, f);
	json_begin_object(&j);
	json_key(&j, "$schema");
	json_string(&j, "https://www.speedscope.app/file-format-schema.json");
	json_key(&j, "name");
	strbuf_addf(&sb, "framewalk: PID %d", (int)m->pid);
	if (m->target && *m->target)
		strbuf_addf(&sb, " %s", m->target);
	json_string(&j, strbuf_str(&sb));
	json_key(&j, "exporter");
	json_string(&j, "framewalk");
	json_key(&j, "activeProfileIndex");
	json_uint(&j, active);
	json_key(&j, "shared");
	json_begin_object(&j);
	json_key(&j, "frames");
	json_begin_array(&j);
	{
		uint32_t *order = xcalloc(nframes + 1, sizeof(*order));

		for (size_t fi = 1; fi < p->nframes; fi++)
			if (frame_index[fi])
				order[frame_index[fi] - 1] = (uint32_t)fi;
		for (uint32_t k = 0; k < nframes; k++) {
			const struct pf_frame *fr = &p->frames[order[k]];

			json_newline(&j);
			json_begin_object(&j);
			json_key(&j, "name");
			json_string(&j, profile_str(p, fr->name));
			if (fr->file || fr->module) {
				json_key(&j, "file");
				json_string(&j, profile_str(p, fr->file ? fr->file : fr->module));
			}
			if (fr->line > 0) {
				json_key(&j, "line");
				json_int(&j, fr->line);
			}
			json_end_object(&j);
		}
		free(order);
	}
	json_end_array(&j);
	json_end_object(&j);

	json_key(&j, "profiles");
	json_begin_array(&j);
	for (size_t i = 0; i < n;) {
		uint32_t t = p->counts[idx[i]].thread;
		size_t first = i, end;
		double total = 0;

		for (end = i; end < n && p->counts[idx[end]].thread == t; end++)
			total += period ? (double)p->counts[idx[end]].count * period
					: (double)p->counts[idx[end]].count;
		json_newline(&j);
		json_begin_object(&j);
		json_key(&j, "type");
		json_string(&j, "sampled");
		json_key(&j, "name");
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s (%d)", profile_str(p, p->threads[t].name), (int)p->threads[t].tid);
		json_string(&j, strbuf_str(&sb));
		json_key(&j, "unit");
		json_string(&j, period ? "nanoseconds" : "none");
		json_key(&j, "startValue");
		json_uint(&j, 0);
		json_key(&j, "endValue");
		json_double(&j, round_pos(total));
		json_key(&j, "samples");
		json_begin_array(&j);
		for (i = first; i < end; i++) {
			size_t depth = profile_node_frames(p, p->counts[idx[i]].node, stack, maxdepth);

			json_begin_array(&j);
			for (size_t k = 0; k < depth; k++)
				json_uint(&j, frame_index[stack[k]] - 1);
			json_end_array(&j);
		}
		json_end_array(&j);
		json_key(&j, "weights");
		json_begin_array(&j);
		for (i = first; i < end; i++) {
			uint64_t c = p->counts[idx[i]].count;
			json_double(&j, round_pos((double)c * (period ? period : 1)));
		}
		json_end_array(&j);
		json_end_object(&j);
		i = end;
	}
	json_end_array(&j);
	json_end_object(&j);
	json_newline(&j);

	strbuf_release(&sb);
	free(idx);
	free(stack);
	free(frame_index);
	return json_finish(&j);
}
