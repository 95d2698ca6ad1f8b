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
	sort_array_r(idx, *n, sizeof(*idx), cmp_count, (void *)p);
	return idx;
}

/* The counts of one speedscope file, grouped by thread, and its shared frames. */
struct ss_writer {
	const struct profile *p;
	struct json j;
	double period;              /* ns per sample; 0: weights are counts */
	uint32_t *idx;              /* count indexes, grouped by thread */
	size_t n;
	uint32_t *frame_index;      /* profile frame -> shared frame index + 1, 0: unused */
	uint32_t nframes;
	uint32_t *stack;            /* scratch for one stack */
	size_t maxdepth;
};

/* The shared frame list, in order of first use. */
static void index_frames(struct ss_writer *w)
{
	const struct profile *p = w->p;

	w->frame_index = xcalloc(p->nframes + 1, sizeof(*w->frame_index));
	for (size_t i = 0; i < w->n; i++)
		for (uint32_t nd = p->counts[w->idx[i]].node; nd && nd < p->nnodes; nd = p->nodes[nd].parent)
			if (!w->frame_index[p->nodes[nd].frame])
				w->frame_index[p->nodes[nd].frame] = ++w->nframes;
}

/* The busiest thread's profile index: the one speedscope opens first. */
static uint32_t busiest_profile(const struct ss_writer *w)
{
	const struct profile *p = w->p;
	uint32_t active = 0, nprofiles = 0;
	uint64_t best = 0;

	for (size_t i = 0; i < w->n;) {
		uint32_t t = p->counts[w->idx[i]].thread;
		uint64_t sum = 0;

		for (; i < w->n && p->counts[w->idx[i]].thread == t; i++)
			sum += p->counts[w->idx[i]].count;
		if (sum > best) {
			best = sum;
			active = nprofiles;
		}
		nprofiles++;
	}
	return active;
}

static void write_frames(struct ss_writer *w)
{
	const struct profile *p = w->p;
	uint32_t *order = xcalloc(w->nframes + 1, sizeof(*order));

	json_key(&w->j, "shared");
	json_begin_object(&w->j);
	json_key(&w->j, "frames");
	json_begin_array(&w->j);
	for (size_t fi = 1; fi < p->nframes; fi++)
		if (w->frame_index[fi])
			order[w->frame_index[fi] - 1] = (uint32_t)fi;
	for (uint32_t k = 0; k < w->nframes; k++) {
		const struct pf_frame *fr = &p->frames[order[k]];

		json_newline(&w->j);
		json_begin_object(&w->j);
		json_key(&w->j, "name");
		json_string(&w->j, profile_str(p, fr->name));
		if (fr->file || fr->module) {
			json_key(&w->j, "file");
			json_string(&w->j, profile_str(p, fr->file ? fr->file : fr->module));
		}
		if (fr->line > 0) {
			json_key(&w->j, "line");
			json_int(&w->j, fr->line);
		}
		json_end_object(&w->j);
	}
	json_end_array(&w->j);
	json_end_object(&w->j);
	free(order);
}

/* One "sampled" profile: the thread of counts idx[first .. end). */
static void write_thread_profile(struct ss_writer *w, size_t first, size_t end)
{
	const struct profile *p = w->p;
	const struct pf_thread *th = &p->threads[p->counts[w->idx[first]].thread];
	struct strbuf name = STRBUF_INIT;
	double total = 0;

	for (size_t i = first; i < end; i++)
		total += w->period ? (double)p->counts[w->idx[i]].count * w->period
				   : (double)p->counts[w->idx[i]].count;
	json_newline(&w->j);
	json_begin_object(&w->j);
	json_key(&w->j, "type");
	json_string(&w->j, "sampled");
	json_key(&w->j, "name");
	strbuf_addf(&name, "%s (%d)", profile_str(p, th->name), (int)th->tid);
	json_string(&w->j, strbuf_str(&name));
	json_key(&w->j, "unit");
	json_string(&w->j, w->period ? PROFILE_TIME_UNIT : "none");
	json_key(&w->j, "startValue");
	json_uint(&w->j, 0);
	json_key(&w->j, "endValue");
	json_double(&w->j, round_pos(total));
	json_key(&w->j, "samples");
	json_begin_array(&w->j);
	for (size_t i = first; i < end; i++) {
		size_t depth = profile_node_frames(p, p->counts[w->idx[i]].node, w->stack, w->maxdepth);

		json_begin_array(&w->j);
		for (size_t k = 0; k < depth; k++)
			json_uint(&w->j, w->frame_index[w->stack[k]] - 1);
		json_end_array(&w->j);
	}
	json_end_array(&w->j);
	json_key(&w->j, "weights");
	json_begin_array(&w->j);
	for (size_t i = first; i < end; i++) {
		uint64_t c = p->counts[w->idx[i]].count;

		json_double(&w->j, round_pos((double)c * (w->period ? w->period : 1)));
	}
	json_end_array(&w->j);
	json_end_object(&w->j);
	strbuf_release(&name);
}

int output_speedscope(const struct profile *p, FILE *f, const struct output_opts *o)
{
	const struct profile_meta *m = &p->meta;
	struct strbuf sb = STRBUF_INIT;
	struct ss_writer w;

	memset(&w, 0, sizeof(w));
	w.p = p;
	/* weights in nanoseconds when the rate is known */
	w.period = profile_rate_known(m) ? 1e9 / m->rate_hz : 0;
	w.idx = counts_by_thread(p, o, &w.n);
	w.maxdepth = 1;
	for (size_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i].depth > w.maxdepth)
			w.maxdepth = p->nodes[i].depth;
	w.stack = xmalloc(sizeof(*w.stack) * w.maxdepth);
	index_frames(&w);

	json_init(&w.j, f);
	json_begin_object(&w.j);
	json_key(&w.j, "$schema");
	json_string(&w.j, "https://www.speedscope.app/file-format-schema.json");
	json_key(&w.j, "name");
	format_profile_title(&sb, p);
	json_string(&w.j, strbuf_str(&sb));
	json_key(&w.j, "exporter");
	json_string(&w.j, "framewalk");
	json_key(&w.j, "activeProfileIndex");
	json_uint(&w.j, busiest_profile(&w));
	write_frames(&w);
	json_key(&w.j, "profiles");
	json_begin_array(&w.j);
	for (size_t i = 0, end; i < w.n; i = end) {
		uint32_t t = p->counts[w.idx[i]].thread;

		for (end = i; end < w.n && p->counts[w.idx[end]].thread == t; end++)
			;
		write_thread_profile(&w, i, end);
	}
	json_end_array(&w.j);
	json_end_object(&w.j);
	json_newline(&w.j);

	strbuf_release(&sb);
	free(w.idx);
	free(w.stack);
	free(w.frame_index);
	return json_finish(&w.j);
}
