/*
 * Firefox Profiler input in the Gecko profile format (meta.version 24, the
 * version the profiler's own `perf script` importer produces; the profiler
 * upgrades it on load): meta with categories, and per thread a stringTable,
 * a frameTable, a stackTable (prefix tree) and samples.
 *
 * The profile keeps counts, not a timeline, so each counted sample becomes
 * one Gecko sample, with synthetic times spaced by the sampling interval and
 * grouped by stack: the call tree and flame graph are exact, the timeline
 * order is not the order of capture. Past GECKO_MAX_SAMPLES the counts are
 * scaled down (each stack keeping at least one sample), so a huge or hostile
 * count cannot make the file unbounded; meta.misc then says so. Frame kinds map to categories; a frame's
 * location string is "name (file)", or "name (in module)" for native code,
 * which the profiler turns into a library resource.
 */
#include <errno.h>

#include "output/format.h"
#include "output/json.h"
#include "output/output.h"
#include "util/strbuf.h"
#include "util/util.h"

#define GECKO_MAX_SAMPLES 1000000u

static const struct {
	const char *name, *color;
} categories[] = {
	[FRAME_PYTHON] = { "Python", "yellow" },
	[FRAME_NATIVE] = { "Native", "blue" },
	[FRAME_KERNEL] = { "Kernel", "orange" },
	[FRAME_OTHER] = { "Other", "grey" },
};

struct gk_thread {
	struct profile strings;     /* interner: ids are stringTable indexes */
	int64_t *node_stack;        /* node -> stack index, -1 = none (shared, reset per thread) */
	uint32_t *frame_local;      /* frame -> frame index + 1 (shared, reset per thread) */
	uint32_t *stack_prefix;     /* per stack: prefix stack + 1, 0 = none */
	uint32_t *stack_frame;      /* per stack: frame index */
	size_t nstacks, stacks_alloc, prefix_alloc;
	uint32_t *frames;           /* per frame index: profile frame id */
	size_t nframes, frames_alloc;
	uint32_t *touched;          /* nodes given a stack */
	size_t ntouched, touched_alloc;
};

static uint32_t local_frame(struct gk_thread *g, uint32_t frame)
{
	if (!g->frame_local[frame]) {
		g->frames = xgrow(g->frames, sizeof(*g->frames), g->nframes + 1, &g->frames_alloc);
		g->frames[g->nframes++] = frame;
		g->frame_local[frame] = (uint32_t)g->nframes;
	}
	return g->frame_local[frame] - 1;
}

/* The stack index of node, creating its ancestors first. */
static int64_t node_stack(struct gk_thread *g, const struct profile *p, uint32_t node)
{
	uint32_t chain_buf[64], *chain = chain_buf;
	size_t n = 0, cap = ARRAY_SIZE(chain_buf);
	int64_t prefix;

	if (!node)
		return -1;
	for (uint32_t nd = node; nd && g->node_stack[nd] < 0; nd = p->nodes[nd].parent) {
		if (n == cap) {
			uint32_t *bigger = xmalloc(sizeof(*bigger) * cap * 2);
			memcpy(bigger, chain, sizeof(*chain) * n);
			if (chain != chain_buf)
				free(chain);
			chain = bigger;
			cap *= 2;
		}
		chain[n++] = nd;
	}
	while (n-- > 0) {
		uint32_t nd = chain[n];

		prefix = p->nodes[nd].parent ? g->node_stack[p->nodes[nd].parent] : -1;
		g->stack_prefix = xgrow(g->stack_prefix, sizeof(*g->stack_prefix), g->nstacks + 1,
					&g->prefix_alloc);
		g->stack_frame = xgrow(g->stack_frame, sizeof(*g->stack_frame), g->nstacks + 1,
				       &g->stacks_alloc);
		g->stack_prefix[g->nstacks] = (uint32_t)(prefix + 1);
		g->stack_frame[g->nstacks] = local_frame(g, p->nodes[nd].frame);
		g->node_stack[nd] = (int64_t)g->nstacks++;
		g->touched = xgrow(g->touched, sizeof(*g->touched), g->ntouched + 1, &g->touched_alloc);
		g->touched[g->ntouched++] = nd;
	}
	if (chain != chain_buf)
		free(chain);
	return g->node_stack[node];
}

static void schema(struct json *j, const char *const *names, size_t n)
{
	json_key(j, "schema");
	json_begin_object(j);
	for (size_t i = 0; i < n; i++) {
		json_key(j, names[i]);
		json_uint(j, i);
	}
	json_end_object(j);
}

/* Samples written for a count: all of them, or scaled when the total is too big. */
static uint64_t scaled(uint64_t count, double scale)
{
	double n;

	if (scale >= 1.0)
		return count;
	n = (double)count * scale + 0.5;
	return n < 1.0 ? 1 : (uint64_t)n;
}

/* A table of the Gecko format: its schema, then the rows write_rows() writes. */
static void table_begin(struct json *j, const char *key, const char *const *cols, size_t n)
{
	json_key(j, key);
	json_begin_object(j);
	schema(j, cols, n);
	json_key(j, "data");
	json_begin_array(j);
}

static void table_end(struct json *j)
{
	json_end_array(j);
	json_end_object(j);
}

/* The thread's samples; builds its stack and frame tables as a side effect. */
static void write_samples(struct json *j, const struct profile *p, uint32_t t,
			  struct gk_thread *g, double interval, double scale)
{
	static const char *const cols[] = { "stack", "time", "responsiveness" };
	uint64_t seq = 0;

	table_begin(j, "samples", cols, ARRAY_SIZE(cols));
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		int64_t s;
		uint64_t n;

		if (c->thread != t)
			continue;
		s = node_stack(g, p, c->node);
		n = scaled(c->count, scale);
		for (uint64_t k = 0; k < n; k++) {
			json_begin_array(j);
			if (s < 0)
				json_null(j);
			else
				json_int(j, s);
			json_double(j, (double)seq++ * interval);
			json_uint(j, 0);
			json_end_array(j);
		}
	}
	table_end(j);
}

static void write_stack_table(struct json *j, const struct gk_thread *g)
{
	static const char *const cols[] = { "prefix", "frame" };

	table_begin(j, "stackTable", cols, ARRAY_SIZE(cols));
	for (size_t s = 0; s < g->nstacks; s++) {
		json_begin_array(j);
		if (g->stack_prefix[s])
			json_uint(j, g->stack_prefix[s] - 1);
		else
			json_null(j);
		json_uint(j, g->stack_frame[s]);
		json_end_array(j);
	}
	table_end(j);
}

/* A frame's location string: "name (file)", or "name (in lib)" for native code. */
static void frame_location(struct strbuf *sb, const struct profile *p, const struct pf_frame *fr)
{
	strbuf_reset(sb);
	strbuf_addstr(sb, profile_str(p, fr->name));
	if (fr->kind == FRAME_NATIVE && fr->module) {
		/* "name (in lib)" makes the profiler group it under the library */
		strbuf_addf(sb, " (in %s)", path_base(profile_str(p, fr->module)));
	} else if (fr->file) {
		strbuf_addf(sb, " (%s)", profile_str(p, fr->file));
	}
}

static void write_frame_table(struct json *j, const struct profile *p, struct gk_thread *g)
{
	static const char *const cols[] = { "location", "relevantForJS", "innerWindowID",
					    "implementation", "optimizations", "line",
					    "column", "category", "subcategory" };
	struct strbuf sb = STRBUF_INIT;

	table_begin(j, "frameTable", cols, ARRAY_SIZE(cols));
	for (size_t fi = 0; fi < g->nframes; fi++) {
		const struct pf_frame *fr = &p->frames[g->frames[fi]];
		unsigned kind = fr->kind < ARRAY_SIZE(categories) ? fr->kind : FRAME_OTHER;

		frame_location(&sb, p, fr);
		json_begin_array(j);
		json_uint(j, profile_string(&g->strings, sb.buf, sb.len));
		json_bool(j, 0);
		json_uint(j, 0);
		json_null(j);
		json_null(j);
		if (fr->line > 0)
			json_int(j, fr->line);
		else
			json_null(j);
		json_null(j);
		json_uint(j, kind);
		json_uint(j, 0);
		json_end_array(j);
	}
	table_end(j);
	strbuf_release(&sb);
}

/*
 * The thread's track title: Python's name, with the kernel's after it when
 * they differ ("reports (python3.12)").
 */
static void thread_title(struct strbuf *sb, const struct profile *p, const struct pf_thread *th)
{
	const char *name = profile_str(p, th->name), *comm = th->comm ? profile_str(p, th->comm) : "";

	/* target text: no control characters in a track title either */
	escape_append(sb, *name ? name : "thread", ESCAPE_TERMINAL);
	if (*comm && strcmp(comm, name)) {
		strbuf_addstr(sb, " (");
		escape_append(sb, comm, ESCAPE_TERMINAL);
		strbuf_addch(sb, ')');
	}
}

static void write_thread(struct json *j, const struct profile *p, uint32_t t,
			 struct gk_thread *g, double interval, double scale)
{
	struct strbuf title = STRBUF_INIT;
	static const char *const marker_cols[] = { "name", "startTime", "endTime", "phase",
						   "category", "data" };
	const struct pf_thread *th = &p->threads[t];

	json_newline(j);
	json_begin_object(j);
	json_key(j, "name");
	thread_title(&title, p, th);
	json_string(j, strbuf_str(&title));
	strbuf_release(&title);
	json_key(j, "processType");
	json_string(j, "default");
	json_key(j, "processName");
	json_string(j, p->meta.target ? p->meta.target : "python");
	json_key(j, "pid");
	json_int(j, th->pid);
	json_key(j, "tid");
	json_int(j, th->tid);
	json_key(j, "registerTime");
	json_uint(j, 0);
	json_key(j, "unregisterTime");
	json_null(j);
	table_begin(j, "markers", marker_cols, ARRAY_SIZE(marker_cols));
	table_end(j);
	write_samples(j, p, t, g, interval, scale);
	write_stack_table(j, g);
	write_frame_table(j, p, g);
	json_key(j, "stringTable");
	json_begin_array(j);
	for (size_t i = 0; i < g->strings.nstrings; i++)
		json_string_len(j, g->strings.strings[i], g->strings.string_len[i]);
	json_end_array(j);
	json_end_object(j);
}

static void empty_array(struct json *j, const char *key)
{
	json_key(j, key);
	json_begin_array(j);
	json_end_array(j);
}

static void write_meta(struct json *j, const struct profile *p, double interval, double scale)
{
	static const char *const zero_fields[] = { "debug", "gcpoison", "asyncstack", "processType" };
	const struct profile_meta *m = &p->meta;
	struct strbuf sb = STRBUF_INIT;

	json_key(j, "meta");
	json_begin_object(j);
	json_key(j, "version");
	json_uint(j, 24);
	json_key(j, "startTime");
	json_double(j, (double)m->start_unix_ns / 1e6);
	json_key(j, "shutdownTime");
	json_null(j);
	json_key(j, "interval");
	json_double(j, interval);
	json_key(j, "stackwalk");
	json_uint(j, 1);
	for (size_t i = 0; i < ARRAY_SIZE(zero_fields); i++) {
		json_key(j, zero_fields[i]);
		json_uint(j, 0);
	}
	json_key(j, "presymbolicated");
	json_bool(j, 1);
	json_key(j, "product");
	format_profile_title(&sb, p);
	json_string(j, strbuf_str(&sb));
	json_key(j, "platform");
	json_string(j, "Linux");
	json_key(j, "misc");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "Python %s; %llu samples, %llu errors",
		    m->python_version ? m->python_version : "unknown",
		    (unsigned long long)m->samples, (unsigned long long)m->errors);
	if (scale < 1.0)
		strbuf_addf(&sb, "; sample counts scaled by %.3g to fit %u samples", scale,
			    GECKO_MAX_SAMPLES);
	json_string(j, strbuf_str(&sb));
	json_key(j, "categories");
	json_begin_array(j);
	for (size_t i = 0; i < ARRAY_SIZE(categories); i++) {
		json_begin_object(j);
		json_key(j, "name");
		json_string(j, categories[i].name);
		json_key(j, "color");
		json_string(j, categories[i].color);
		json_key(j, "subcategories");
		json_begin_array(j);
		json_string(j, "Other");
		json_end_array(j);
		json_end_object(j);
	}
	json_end_array(j);
	empty_array(j, "markerSchema");
	json_end_object(j);
	strbuf_release(&sb);
}

/* Forget the previous thread's stacks and frames (the maps are shared). */
static void gk_thread_reset(struct gk_thread *g)
{
	for (size_t i = 0; i < g->ntouched; i++)
		g->node_stack[g->touched[i]] = -1;
	for (size_t i = 0; i < g->nframes; i++)
		g->frame_local[g->frames[i]] = 0;
	g->ntouched = g->nstacks = g->nframes = 0;
}

static void gk_thread_release(struct gk_thread *g)
{
	free(g->node_stack);
	free(g->frame_local);
	free(g->stack_prefix);
	free(g->stack_frame);
	free(g->frames);
	free(g->touched);
}

int output_gecko(const struct profile *p, FILE *f, const struct output_opts *o)
{
	const struct profile_meta *m = &p->meta;
	/* ms between samples; 1 when the rate is unknown */
	double interval = profile_rate_known(m) ? 1000.0 / m->rate_hz : 1.0;
	uint8_t *has_samples = xcalloc(p->nthreads + 1, 1);
	double total = 0, scale = 1.0;
	struct gk_thread g;
	struct json j;

	memset(&g, 0, sizeof(g));
	g.node_stack = xmalloc(sizeof(*g.node_stack) * (p->nnodes + 1));
	for (size_t i = 0; i <= p->nnodes; i++)
		g.node_stack[i] = -1;
	g.frame_local = xcalloc(p->nframes + 1, sizeof(*g.frame_local));
	for (size_t i = 0; i < p->ncounts; i++) {
		if (o && !thread_matches(p, p->counts[i].thread, o->thread))
			continue;
		has_samples[p->counts[i].thread] = 1;
		total += (double)p->counts[i].count;
	}
	if (total > GECKO_MAX_SAMPLES)
		scale = GECKO_MAX_SAMPLES / total;

	json_init(&j, f);
	json_begin_object(&j);
	write_meta(&j, p, interval, scale);
	empty_array(&j, "libs");
	json_key(&j, "threads");
	json_begin_array(&j);
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if (!has_samples[t])
			continue;
		profile_init(&g.strings);
		write_thread(&j, p, t, &g, interval, scale);
		profile_release(&g.strings);
		gk_thread_reset(&g);
	}
	json_end_array(&j);
	empty_array(&j, "processes");
	empty_array(&j, "pausedRanges");
	json_end_object(&j);
	json_newline(&j);

	free(has_samples);
	gk_thread_release(&g);
	return json_finish(&j);
}
