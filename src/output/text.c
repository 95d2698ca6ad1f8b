/*
 * The text report: a header about the capture, the top functions by self and
 * total share, and a caller tree in the style of `perf report -g` (callers
 * above callees, percentages of all samples, branches sorted by weight).
 * The tree is itself built as a struct profile keyed by function, so the
 * same interning code serves both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output/format.h"
#include "output/output.h"
#include "sampler/sampler.h"
#include "symbols/symbolize.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_DEPTH 4096

void output_opts_default(struct output_opts *o)
{
	o->limit = 20;
	o->min_percent = 0.5;
	o->thread = NULL;
	o->by = NULL;
	o->where = NULL;
}

/* ---- the function-keyed view ----------------------------------------- */

struct fn_view {
	struct profile tree;       /* nodes keyed by (thread frame, function frames) */
	uint64_t *node_total;      /* inclusive count per tree node */
	uint64_t *fn_self, *fn_total;  /* per function frame of tree */
	uint64_t total;
};

/* The function frame in tree for a frame of p (line dropped). */
static uint32_t fn_frame(struct profile *tree, const struct profile *p, uint32_t frame)
{
	const struct pf_frame *f = &p->frames[frame];
	uint32_t name = profile_cstring(tree, profile_str(p, f->name));
	uint32_t file = f->file ? profile_cstring(tree, profile_str(p, f->file)) : 0;
	uint32_t module = f->module ? profile_cstring(tree, profile_str(p, f->module)) : 0;

	return profile_frame_module(tree, (enum frame_kind)f->kind, name, file, 0, module, 0);
}

/* The tree: each count's stack, thread first, re-interned by function. */
static void fn_view_intern(struct fn_view *v, const struct profile *p, const struct output_opts *o,
			   uint32_t *frames)
{
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		struct strbuf label = STRBUF_INIT;
		size_t depth;

		if (o && !thread_matches(p, c->thread, o->thread))
			continue;
		format_thread(&label, p, c->thread, ESCAPE_TERMINAL);
		frames[0] = profile_frame(&v->tree, FRAME_OTHER,
					  profile_cstring(&v->tree, strbuf_str(&label)), 0, 0);
		strbuf_release(&label);
		depth = profile_node_frames(p, c->node, frames + 1, MAX_DEPTH);
		for (size_t k = 1; k <= depth; k++)
			frames[k] = fn_frame(&v->tree, p, frames[k]);
		profile_add(&v->tree, 0, profile_stack(&v->tree, frames, depth + 1), c->count);
		v->total += c->count;
	}
}

/* Self and total per function (recursion counted once per stack), and inclusive node totals. */
static void fn_view_tally(struct fn_view *v, uint32_t *frames)
{
	uint32_t *seen = xcalloc(v->tree.nframes, sizeof(*seen));
	uint32_t generation = 0;

	v->fn_self = xcalloc(v->tree.nframes, sizeof(*v->fn_self));
	v->fn_total = xcalloc(v->tree.nframes, sizeof(*v->fn_total));
	for (size_t i = 0; i < v->tree.ncounts; i++) {
		const struct pf_count *c = &v->tree.counts[i];
		size_t depth = profile_node_frames(&v->tree, c->node, frames, MAX_DEPTH + 1);

		generation++;
		/* frames[0] is the thread */
		if (depth > 1)
			v->fn_self[frames[depth - 1]] += c->count;
		for (size_t k = 1; k < depth; k++) {
			if (seen[frames[k]] == generation)
				continue;
			seen[frames[k]] = generation;
			v->fn_total[frames[k]] += c->count;
		}
	}
	/* inclusive node totals: children have higher ids than parents */
	v->node_total = xcalloc(v->tree.nnodes, sizeof(*v->node_total));
	for (size_t i = 0; i < v->tree.ncounts; i++)
		v->node_total[v->tree.counts[i].node] += v->tree.counts[i].count;
	for (size_t n = v->tree.nnodes; n-- > 1;)
		v->node_total[v->tree.nodes[n].parent] += v->node_total[n];
	free(seen);
}

static void fn_view_build(struct fn_view *v, const struct profile *p, const struct output_opts *o)
{
	uint32_t *frames = xmalloc(sizeof(*frames) * (MAX_DEPTH + 1));

	memset(v, 0, sizeof(*v));
	profile_init(&v->tree);
	fn_view_intern(v, p, o, frames);
	fn_view_tally(v, frames);
	free(frames);
}

static void fn_view_release(struct fn_view *v)
{
	profile_release(&v->tree);
	free(v->node_total);
	free(v->fn_self);
	free(v->fn_total);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- header ------------------------------------------------------------ */

#define NAMES_TOP_MODULES 3

struct unnamed_module {
	uint32_t module;
	uint32_t name;              /* a frame's name, for code outside any file */
	uint64_t samples;
};

static int cmp_unnamed(const void *a, const void *b)
{
	const struct unnamed_module *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/*
 * "Names:" line: of the samples whose innermost frame (below kernel and
 * [wait] frames) is native code, the share with a function name, and the
 * modules of the rest (where a debug package or debuginfod would help).
 */
static void print_names(const struct profile *p, FILE *f, struct strbuf *sb)
{
	struct unnamed_module *mods = NULL;
	size_t nmods = 0, alloc = 0;
	uint64_t native = 0, named = 0, by_start = 0;

	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		const struct pf_frame *fr = NULL;
		size_t k;

		for (uint32_t node = c->node; node; node = p->nodes[node].parent) {
			fr = &p->frames[p->nodes[node].frame];
			if (fr->kind != FRAME_KERNEL && fr->kind != FRAME_OTHER)
				break;
			fr = NULL;
		}
		if (!fr || fr->kind != FRAME_NATIVE)
			continue;
		native += c->count;
		if (!symbolize_name_is_address(profile_str(p, fr->name))) {
			named += c->count;
			continue;
		}
		/* By module; code outside any file by its range ("[anon]", "[vdso]"). */
		for (k = 0; k < nmods && mods[k].module != fr->module; k++)
			;
		if (k == nmods) {
			mods = xgrow(mods, sizeof(*mods), nmods + 1, &alloc);
			mods[nmods].module = fr->module;
			mods[nmods].name = fr->name;
			mods[nmods++].samples = 0;
		}
		mods[k].samples += c->count;
	}
	if (!native)
		return;
	/* Functions in files known by their start: one frame each, however many addresses. */
	for (size_t i = 1; i < p->nframes; i++)
		by_start += p->frames[i].kind == FRAME_NATIVE && p->frames[i].module &&
			    symbolize_name_is_address(profile_str(p, p->frames[i].name));
	sort_array(mods, nmods, sizeof(*mods), cmp_unnamed);
	fprintf(f, "Names:     %.1f%% of %" PRIu64 " samples in native code have a function name",
		pct(named, native), native);
	for (size_t k = 0; k < nmods && k < NAMES_TOP_MODULES; k++) {
		const char *path = profile_str(p, mods[k].module);
		const char *base = strrchr(path, '/');
		const char *name = profile_str(p, mods[k].name);

		sb->len = 0;
		if (mods[k].module)
			escape_append(sb, base ? base + 1 : path, ESCAPE_TERMINAL);
		else
			strbuf_add(sb, name, strcspn(name, "+"));
		fprintf(f, "%s%s %" PRIu64, k ? ", " : "; without: ", strbuf_str(sb), mods[k].samples);
	}
	if (nmods > NAMES_TOP_MODULES)
		fprintf(f, ", ...");
	fputc('\n', f);
	if (by_start)
		fprintf(f, "           %" PRIu64 " function%s in files without a name, each known by"
			" its start from the unwind tables (module+0xSTART)\n", by_start,
			by_start == 1 ? "" : "s");
	free(mods);
}

static void print_header(const struct profile *p, FILE *f)
{
	const struct profile_meta *m = &p->meta;
	const struct label_counts *lc = &m->label_counts;
	const struct backend_info *bi;
	struct strbuf sb = STRBUF_INIT;
	double secs = (double)m->duration_ns / 1e9;
	uint64_t attempts = m->samples + m->errors;

	escape_append(&sb, m->target ? m->target : "", ESCAPE_TERMINAL);
	if (m->pid)
		fprintf(f, "Target:    PID %d: %s\n", (int)m->pid, strbuf_str(&sb));
	else
		fprintf(f, "Targets:   %s\n", strbuf_str(&sb));
	fprintf(f, "Python:    %s\n", m->python_version ? m->python_version : "unknown");
	fprintf(f, "Backend:   %s\n", m->backend ? m->backend : "unknown");
	if (m->mode)
		fprintf(f, "Mode:      %s\n", m->mode);
	fprintf(f, "Duration:  %.2f s at %.0f Hz requested\n", secs, m->rate_hz);
	if (m->calls_note) {
		struct strbuf note = STRBUF_INIT;

		escape_append(&note, m->calls_note, ESCAPE_TERMINAL);
		if (p->ncalls)
			fprintf(f, "Calls:     %s; counted for %.2f s\n", strbuf_str(&note),
				(double)m->calls_window_ns / 1e9);
		else
			fprintf(f, "Calls:     not counted: %s\n", strbuf_str(&note));
		strbuf_release(&note);
	}
	if (m->ticks_requested)
		fprintf(f, "Samples:   %" PRIu64 " stacks from %" PRIu64 " of %" PRIu64
			" requested ticks (%.1f%%; %.0f ticks/s achieved)\n",
			m->samples, m->ticks_taken, m->ticks_requested,
			pct(m->ticks_taken, m->ticks_requested),
			secs > 0 ? (double)m->ticks_taken / secs : 0);
	if (m->moments_waited)
		fprintf(f, "           (%" PRIu64 " of them moments that passed while a tick came late or\n"
			"            its read waited, on the target's memory map's lock or its stop: the\n"
			"            read stands for them)\n",
			m->moments_waited);
	if (m->ticks_requested && m->cpu_weighted)
		fprintf(f, "           (cpu mode: a stack counts once per 1/%.0f s of CPU time its thread\n"
			"            used since its last sample, not once per tick it was runnable)\n",
			m->rate_hz);
	if (!m->ticks_requested)
		fprintf(f, "Samples:   %" PRIu64 " on-CPU stacks (cpu-clock at %.0f Hz %s; "
			"%" PRIu64 " lost to a full ring buffer)\n", m->samples, m->rate_hz,
			m->events_per_thread ? "of each target thread's CPU time" : "per CPU", m->lost);
	if (!m->ticks_requested && m->drains)
		fprintf(f, "           (taken from the ring buffer %" PRIu64 " times)\n", m->drains);
	if (m->rephases)
		fprintf(f, "           (%sphase drawn again at %" PRIu64 " moments, on the CPUs "
			"where a target ran: %" PRIu64 " clocks restarted; a periodic "
			"target is not read in step)\n",
			m->ticks_requested ? "threads on a CPU read by a per-CPU cpu-clock, its " :
			"its ", m->rephases, m->clock_restarts);
	if (m->label_specs) {
		sb.len = 0;
		escape_append(&sb, m->label_specs, ESCAPE_TERMINAL);
		fprintf(f, "Labels:    %s\n", strbuf_str(&sb));
		if (lc->reads)
			fprintf(f, "           read for %" PRIu64 " samples, mean %.1f us each; values: "
				"%" PRIu64 " from the variable's cache, %" PRIu64 " by walking the "
				"context, %" PRIu64 " unreadable, %" PRIu64 " past the cap\n",
				lc->reads, (double)lc->ns_total / (double)lc->reads / 1e3,
				lc->cached, lc->walked, lc->unreadable, lc->folded);
		if (lc->changed)
			fprintf(f, "           %" PRIu64 " samples dropped: their labels changed while "
				"the stack was read (a request ended mid-read)\n", lc->changed);
	}
	if (m->bpf_run_cnt)
		fprintf(f, "BPF:       program mean %.1f us per run over %" PRIu64 " runs\n",
			(double)m->bpf_run_ns / (double)m->bpf_run_cnt / 1e3, m->bpf_run_cnt);
	fprintf(f, "Errors:    %" PRIu64 " dropped samples (%.2f%%)\n", m->errors,
		pct(m->errors, attempts));
	/* A reader that does not stop the target drops a stack that changed under it. */
	bi = m->backend ? backend_info_described(m->backend) : NULL;
	if (m->errors > lc->changed && pct(m->errors - lc->changed, attempts) >= 1.0 && bi && bi->changing_hint)
		fprintf(f, "           %s\n", bi->changing_hint);
	if (!m->ticks_requested)
		fprintf(f, "Profiler:  %.2f s CPU in user space\n", (double)m->profiler_cpu_ns / 1e9);
	else
		fprintf(f, "Per tick:  mean %.1f us, max %.1f us; profiler CPU %.2f s\n",
			m->ticks_taken ? (double)m->sample_ns_total / (double)m->ticks_taken / 1e3 : 0.0,
			(double)m->sample_ns_max / 1e3, (double)m->profiler_cpu_ns / 1e9);
	if (m->py_threads_cap)
		fprintf(f, "Threads:   %zu; %" PRIu64 " of %" PRIu64 " Python threads read (cap)\n",
			p->nthreads, m->py_threads_cap, m->py_threads_listed);
	else
		fprintf(f, "Threads:   %zu\n", p->nthreads);
	if (m->native_stacks) {
		fprintf(f, "Unwinding: %.1f%% of %" PRIu64 " native stacks complete; %" PRIu64
			" frame-pointer and %" PRIu64 " CFI steps\n",
			pct(m->native_complete, m->native_stacks), m->native_stacks, m->fp_steps,
			m->cfi_steps);
		if (m->unwind_breaks) {
			sb.len = 0;
			escape_append(&sb, m->unwind_breaks, ESCAPE_TERMINAL);
			fprintf(f, "Breaks:    %s\n", strbuf_str(&sb));
		}
		print_names(p, f, &sb);
		if (m->merge_mismatches)
			fprintf(f, "Merging:   %" PRIu64 " stacks had Python frames no evaluator frame claimed\n",
				m->merge_mismatches);
	}
	if (m->stopped_ns_total) {
		/* Files from before "stops" was kept stopped only for native stacks. */
		uint64_t stops = m->stops ? m->stops : m->native_stacks;

		if (stops)
			fprintf(f, "Stopped:   mean %.1f us, max %.1f us per thread sample\n",
				(double)m->stopped_ns_total / (double)stops / 1e3,
				(double)m->stopped_ns_max / 1e3);
	}
	if (m->modules_loaded || m->modules_reused)
		fprintf(f, "Modules:   %" PRIu64 " files loaded, %" PRIu64 " reused; mappings re-read "
			"%" PRIu64 " time%s\n", m->modules_loaded, m->modules_reused,
			m->modules_refreshes, m->modules_refreshes == 1 ? "" : "s");
	if (m->modules_capped || m->symbols_capped)
		fprintf(f, "Caps:      %" PRIu64 " mapped files over the modules cap, %" PRIu64
			" code symbols over the per-file index cap (unnamed)\n",
			m->modules_capped, m->symbols_capped);
	if (m->symbol_lookups)
		fprintf(f, "Symbols:   %" PRIu64 " native frames named, %" PRIu64 " looked up in "
			"their files, %" PRIu64 " cache entries evicted\n", m->symbol_lookups,
			m->symbols_resolved, m->symbols_evicted);
	if (m->debug_info_ended)
		fprintf(f, "Debug info: let go %" PRIu64 " time%s when unused, opened again %" PRIu64
			" time%s\n", m->debug_info_ended, m->debug_info_ended == 1 ? "" : "s",
			m->debug_info_reopened, m->debug_info_reopened == 1 ? "" : "s");
	if (m->modules_unreadable) {
		sb.len = 0;
		escape_append(&sb, m->modules_unreadable, ESCAPE_TERMINAL);
		fprintf(f, "Unreadable: %s\n", strbuf_str(&sb));
	}
	if (m->events) {
		sb.len = 0;
		escape_append(&sb, m->events, ESCAPE_TERMINAL);
		fprintf(f, "Events:    %s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
}

/* ---- top functions ----------------------------------------------------- */

struct fn_row {
	uint32_t frame;
	uint64_t self, total;
};

static int cmp_self(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->total < y->total ? 1 : (x->total > y->total ? -1 : 0);
}

static int cmp_total(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->self < y->self ? 1 : (x->self > y->self ? -1 : 0);
}

static void print_top(const struct fn_view *v, FILE *f, const struct output_opts *o,
		      int by_total)
{
	struct fn_row *rows = xcalloc(v->tree.nframes, sizeof(*rows));
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;

	for (uint32_t i = 1; i < v->tree.nframes; i++) {
		if (v->tree.frames[i].kind == FRAME_OTHER && !v->fn_self[i])
			continue;
		if (!v->fn_total[i])
			continue;
		rows[n].frame = i;
		rows[n].self = v->fn_self[i];
		rows[n].total = v->fn_total[i];
		n++;
	}
	sort_array(rows, n, sizeof(*rows), by_total ? cmp_total : cmp_self);
	fprintf(f, "\nTop functions (%s)\n", by_total ? "total" : "self");
	fprintf(f, "   Self%%  Total%%    Samples  Function\n");
	for (size_t i = 0; i < n && (int)i < o->limit; i++) {
		if (!by_total && !rows[i].self)
			break;
		strbuf_reset(&sb);
		format_function(&sb, &v->tree, rows[i].frame, ESCAPE_TERMINAL);
		fprintf(f, " %6.2f%% %6.2f%% %10" PRIu64 "  %s\n", pct(rows[i].self, v->total),
			pct(rows[i].total, v->total), by_total ? rows[i].total : rows[i].self,
			strbuf_str(&sb));
	}
	strbuf_release(&sb);
	free(rows);
}

/* ---- exact call counts (--count-calls) ---------------------------------- */

struct call_row {
	uint32_t frame;             /* the function in the view's tree, 0: never sampled */
	uint32_t name, file;        /* string ids in the profile p */
	int32_t firstline;
	uint64_t starts, resumes, total;
};

/*
 * Counted functions first (the table is about calls: a function sampled
 * but never called in the window, <module> or start-up's importlib, must
 * not push one counted out of the --limit rows), each part hottest first.
 */
static int cmp_call_row(const void *a, const void *b)
{
	const struct call_row *x = a, *y = b;
	int xc = x->starts + x->resumes > 0, yc = y->starts + y->resumes > 0;

	if (xc != yc)
		return yc - xc;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->starts + x->resumes != y->starts + y->resumes)
		return x->starts + x->resumes < y->starts + y->resumes ? 1 : -1;
	return 0;
}

/* "1.23 us": a time per call, in the unit that reads best */
static void add_duration(struct strbuf *sb, double s)
{
	if (s >= 1)
		strbuf_addf(sb, "%.2f s", s);
	else if (s >= 1e-3)
		strbuf_addf(sb, "%.2f ms", s * 1e3);
	else if (s >= 1e-6)
		strbuf_addf(sb, "%.2f us", s * 1e6);
	else
		strbuf_addf(sb, "%.0f ns", s * 1e9);
}

static int cmp_call_key(const void *a, const void *b)
{
	const struct call_row *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/*
 * Exact counts beside the samples: each counted function (code objects of
 * one name and file summed), then each sampled Python function not
 * entered in the window, each part hottest first (cmp_call_row), with its
 * calls and its sampled time per call.
 */
static void print_calls(const struct profile *p, const struct fn_view *v, FILE *f,
			const struct output_opts *o)
{
	struct call_row *rows;
	struct strbuf sb = STRBUF_INIT;
	int rate = profile_rate_known(&p->meta);
	size_t n = 0, counted;

	if (!p->ncalls)
		return;
	rows = xcalloc(p->ncalls + v->tree.nframes, sizeof(*rows));
	/* code objects of one name and file (a function defined again) summed */
	for (size_t i = 0; i < p->ncalls; i++) {
		rows[i].name = p->calls[i].name;
		rows[i].file = p->calls[i].file;
		rows[i].firstline = p->calls[i].firstline;
		rows[i].starts = p->calls[i].starts;
		rows[i].resumes = p->calls[i].resumes;
	}
	sort_array(rows, p->ncalls, sizeof(*rows), cmp_call_key);
	for (size_t i = 0; i < p->ncalls; i++) {
		if (n && !cmp_call_key(&rows[n - 1], &rows[i])) {
			rows[n - 1].starts += rows[i].starts;
			rows[n - 1].resumes += rows[i].resumes;
			if (rows[i].firstline < rows[n - 1].firstline)
				rows[n - 1].firstline = rows[i].firstline;
			continue;
		}
		rows[n++] = rows[i];
	}
	counted = n;
	/* each sampled Python function: its counts, or a row of its own */
	for (uint32_t i = 1; i < v->tree.nframes; i++) {
		const struct pf_frame *fr = &v->tree.frames[i];
		const char *name = profile_str(&v->tree, fr->name);
		const char *file = profile_str(&v->tree, fr->file);
		struct call_row key = { 0 }, *hit = NULL;

		if (fr->kind != FRAME_PYTHON || !v->fn_total[i])
			continue;
		key.name = profile_string_find(p, name, strlen(name));
		key.file = profile_string_find(p, file, strlen(file));
		if (key.name != UINT32_MAX && key.file != UINT32_MAX)
			hit = bsearch(&key, rows, counted, sizeof(*rows), cmp_call_key);
		if (!hit) {
			/* past the merged rows: a slot the merge may have left a copy in */
			hit = &rows[n++];
			memset(hit, 0, sizeof(*hit));
		}
		hit->frame = i;
		hit->total = v->fn_total[i];
	}
	sort_array(rows, n, sizeof(*rows), cmp_call_row);
	fprintf(f, "\nCalls (exact, counted in the target over the capture; time per call = "
		"sampled time / calls)\n");
	fprintf(f, "        Calls     Resumes    Samples   Time/call  Function\n");
	for (size_t i = 0; i < n && (int)i < o->limit; i++) {
		struct call_row *r = &rows[i];
		uint64_t runs = r->starts + r->resumes;

		strbuf_reset(&sb);
		if (r->name) {
			escape_append(&sb, profile_str(p, r->name), ESCAPE_TERMINAL);
			strbuf_addstr(&sb, " (");
			escape_append(&sb, profile_str(p, r->file), ESCAPE_TERMINAL);
			strbuf_addf(&sb, ":%d)", (int)r->firstline);
		} else {
			format_function(&sb, &v->tree, r->frame, ESCAPE_TERMINAL);
		}
		fprintf(f, " %12" PRIu64 " %11" PRIu64 " %10" PRIu64 "  ", r->starts, r->resumes,
			r->total);
		{
			struct strbuf t = STRBUF_INIT;

			if (rate && runs && r->total)
				add_duration(&t, (double)r->total / p->meta.rate_hz / (double)runs);
			else
				strbuf_addstr(&t, "-");
			fprintf(f, "%10s  %s\n", strbuf_str(&t), strbuf_str(&sb));
			strbuf_release(&t);
		}
	}
	if (n > (size_t)o->limit)
		fprintf(f, "  ... and %zu more functions (--limit shows more)\n",
			n - (size_t)o->limit);
	strbuf_release(&sb);
	free(rows);
}

/* ---- call tree --------------------------------------------------------- */

struct children {
	uint32_t *first;   /* per node: index into list */
	uint32_t *count;
	uint32_t *list;
};

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct fn_view *v = arg;
	uint64_t x = v->node_total[*(const uint32_t *)a];
	uint64_t y = v->node_total[*(const uint32_t *)b];
	return x < y ? 1 : (x > y ? -1 : 0);
}

static void children_build(struct children *ch, const struct fn_view *v)
{
	size_t n = v->tree.nnodes;
	uint32_t *fill = xcalloc(n, sizeof(*fill));

	ch->first = xcalloc(n, sizeof(*ch->first));
	ch->count = xcalloc(n, sizeof(*ch->count));
	ch->list = xcalloc(n, sizeof(*ch->list));
	for (size_t i = 1; i < n; i++)
		ch->count[v->tree.nodes[i].parent]++;
	for (size_t i = 1, pos = 0; i <= n; i++) {
		ch->first[i - 1] = (uint32_t)pos;
		pos += ch->count[i - 1];
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t parent = v->tree.nodes[i].parent;
		ch->list[ch->first[parent] + fill[parent]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < n; i++)
		sort_array_r(ch->list + ch->first[i], ch->count[i], sizeof(uint32_t), cmp_child, (void *)v);
	free(fill);
}

static void children_release(struct children *ch)
{
	free(ch->first);
	free(ch->count);
	free(ch->list);
}

struct tree_printer {
	const struct fn_view *v;
	const struct children *ch;
	const struct output_opts *o;
	FILE *f;
	struct strbuf prefix;
	struct strbuf label;
};

static size_t visible_children(struct tree_printer *tp, uint32_t node)
{
	size_t n = 0;
	for (uint32_t i = 0; i < tp->ch->count[node]; i++) {
		uint32_t c = tp->ch->list[tp->ch->first[node] + i];
		if (pct(tp->v->node_total[c], tp->v->total) >= tp->o->min_percent)
			n++;
	}
	return n;
}

/*
 * One node and its descendants. line_prefix goes before this node's name,
 * tp->prefix before its children's connectors. A chain of only children
 * prints as a straight column, so deep single paths stay readable.
 */
static void print_node(struct tree_printer *tp, uint32_t node, const char *line_prefix,
		       int depth)
{
	size_t nvis, keep;
	uint32_t cur = node;
	int first = 1;

	for (;;) {
		strbuf_reset(&tp->label);
		format_function(&tp->label, &tp->v->tree, tp->v->tree.nodes[cur].frame, ESCAPE_TERMINAL);
		fprintf(tp->f, "%7.2f%%  %s%s\n", pct(tp->v->node_total[cur], tp->v->total),
			first ? line_prefix : strbuf_str(&tp->prefix), strbuf_str(&tp->label));
		first = 0;
		nvis = visible_children(tp, cur);
		if (nvis != 1 || depth > 512)
			break;
		for (uint32_t i = 0; i < tp->ch->count[cur]; i++) {
			uint32_t c = tp->ch->list[tp->ch->first[cur] + i];
			if (pct(tp->v->node_total[c], tp->v->total) >= tp->o->min_percent) {
				cur = c;
				break;
			}
		}
		depth++;
	}
	if (depth > 512)
		return;
	keep = tp->prefix.len;
	for (uint32_t i = 0, shown = 0; i < tp->ch->count[cur]; i++) {
		uint32_t c = tp->ch->list[tp->ch->first[cur] + i];
		struct strbuf lp = STRBUF_INIT;
		int last;

		if (pct(tp->v->node_total[c], tp->v->total) < tp->o->min_percent)
			continue;
		last = ++shown == nvis;
		strbuf_add(&lp, tp->prefix.buf ? tp->prefix.buf : "", keep);
		strbuf_addstr(&lp, last ? "`- " : "|- ");
		strbuf_addstr(&tp->prefix, last ? "   " : "|  ");
		print_node(tp, c, strbuf_str(&lp), depth + 1);
		strbuf_release(&lp);
		tp->prefix.len = keep;
		if (tp->prefix.buf)
			tp->prefix.buf[keep] = '\0';
	}
}

static void print_tree(const struct fn_view *v, FILE *f, const struct output_opts *o)
{
	struct children ch;
	struct tree_printer tp = { v, &ch, o, f, STRBUF_INIT, STRBUF_INIT };

	children_build(&ch, v);
	fprintf(f, "\nCall tree (callers above callees; %% of all samples; "
		"branches under %.1f%% hidden)\n", o->min_percent);
	for (uint32_t i = 0; i < ch.count[0]; i++) {
		uint32_t c = ch.list[ch.first[0] + i];
		if (pct(v->node_total[c], v->total) < o->min_percent)
			continue;
		strbuf_reset(&tp.prefix);
		print_node(&tp, c, "", 0);
	}
	strbuf_release(&tp.prefix);
	strbuf_release(&tp.label);
	children_release(&ch);
}

/* Per thread: what its [wait] leaves say it waited in, as shares of its samples. */
static void wait_summary(const struct profile *p, uint32_t thread, struct strbuf *out)
{
	struct { char name[32]; uint64_t n; } top[6];
	uint64_t total = 0;
	size_t ntop = 0;

	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		const struct pf_frame *leaf;
		const char *name;
		char word[32];
		size_t k, len;

		if (c->thread != thread)
			continue;
		total += c->count;
		leaf = &p->frames[p->nodes[c->node].frame];
		name = profile_str(p, leaf->name);
		if (leaf->kind != FRAME_OTHER || strncmp(name, "[wait] ", 7))
			continue;
		len = strcspn(name + 7, " ");
		if (len >= sizeof(word))
			len = sizeof(word) - 1;
		memcpy(word, name + 7, len);
		word[len] = '\0';
		for (k = 0; k < ntop; k++)
			if (!strcmp(top[k].name, word))
				break;
		if (k == ntop) {
			if (ntop == ARRAY_SIZE(top))
				continue;
			memcpy(top[ntop].name, word, len + 1);
			top[ntop++].n = 0;
		}
		top[k].n += c->count;
	}
	for (size_t a = 0; a < ntop; a++) {
		for (size_t b = a + 1; b < ntop; b++) {
			if (top[b].n > top[a].n) {
				char tn[32];
				uint64_t tc = top[a].n;

				memcpy(tn, top[a].name, sizeof(tn));
				top[a] = top[b];
				memcpy(top[b].name, tn, sizeof(tn));
				top[b].n = tc;
			}
		}
	}
	for (size_t a = 0; a < ntop && a < 3 && total; a++) {
		strbuf_addstr(out, a ? ", " : " - waiting: ");
		escape_append(out, top[a].name, ESCAPE_TERMINAL);
		strbuf_addf(out, " %.0f%%", pct(top[a].n, total));
	}
}

static int cmp_thread_cpu(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	const struct pf_thread *x = &p->threads[*(const uint32_t *)a];
	const struct pf_thread *y = &p->threads[*(const uint32_t *)b];

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* CPU and wall time per thread from the kernel's accounting, not from samples. */
static void print_time_summary(const struct profile *p, FILE *f, const struct output_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t cpu = 0, any = 0;
	uint32_t *order;
	size_t shown = 0;
	double wall = (double)p->meta.duration_ns / 1e9;

	for (size_t i = 0; i < p->nthreads; i++) {
		cpu += p->threads[i].cpu_ns;
		any |= p->threads[i].wall_ns;
	}
	if (!any)
		return;
	fprintf(f, "\nTime (kernel accounting over the capture, independent of sampling)\n");
	fprintf(f, "  process: %.1f s wall, %.2f s CPU (%.0f%% of one CPU)\n", wall,
		(double)cpu / 1e9, wall > 0 ? 100.0 * (double)cpu / 1e9 / wall : 0.0);
	order = xmalloc(sizeof(*order) * (p->nthreads ? p->nthreads : 1));
	for (size_t i = 0; i < p->nthreads; i++)
		order[i] = (uint32_t)i;
	sort_array_r(order, p->nthreads, sizeof(*order), cmp_thread_cpu, (void *)p);
	for (size_t k = 0; k < p->nthreads; k++) {
		size_t i = order[k];
		const struct pf_thread *t = &p->threads[i];
		double tw = (double)t->wall_ns / 1e9;

		if (!thread_matches(p, (uint32_t)i, o->thread))
			continue;
		if (shown == (size_t)o->limit) {
			uint64_t rest = 0;
			size_t nrest = 0;
			for (size_t j = k; j < p->nthreads; j++) {
				if (!thread_matches(p, order[j], o->thread))
					continue;
				rest += p->threads[order[j]].cpu_ns;
				nrest++;
			}
			fprintf(f, "  ... and %zu more threads: %.2f s CPU together (--limit shows more)\n",
				nrest, (double)rest / 1e9);
			break;
		}
		shown++;
		strbuf_reset(&sb);
		format_thread(&sb, p, (uint32_t)i, ESCAPE_TERMINAL);
		fprintf(f, "  %s: %.1f s wall, %.2f s CPU (%.0f%%)", strbuf_str(&sb), tw,
			(double)t->cpu_ns / 1e9, tw > 0 ? 100.0 * (double)t->cpu_ns / 1e9 / tw : 0.0);
		strbuf_reset(&sb);
		wait_summary(p, (uint32_t)i, &sb);
		fprintf(f, "%s\n", strbuf_str(&sb));
		if (t->gil_ticks)
			fprintf(f, "      GIL: held %.0f%%, waiting %.0f%% of %" PRIu64 " ticks\n",
				pct(t->gil_held, t->gil_ticks), pct(t->gil_waiting, t->gil_ticks),
				t->gil_ticks);
	}
	free(order);
	strbuf_release(&sb);
}

static void print_threads(const struct profile *p, FILE *f, uint64_t total,
			  const struct output_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t *per = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*per));

	for (size_t i = 0; i < p->ncounts; i++)
		per[p->counts[i].thread] += p->counts[i].count;
	fprintf(f, "\nThreads\n");
	for (size_t i = 0; i < p->nthreads; i++) {
		if (!thread_matches(p, (uint32_t)i, o->thread))
			continue;
		strbuf_reset(&sb);
		format_thread(&sb, p, (uint32_t)i, ESCAPE_TERMINAL);
		fprintf(f, " %6.2f%% %10" PRIu64 "  %s", pct(per[i], total), per[i], strbuf_str(&sb));
		if (p->threads[i].dropped)
			fprintf(f, "  (%" PRIu64 " dropped, %.1f%%)", p->threads[i].dropped,
				pct(p->threads[i].dropped, per[i] + p->threads[i].dropped));
		fputc('\n', f);
	}
	free(per);
	strbuf_release(&sb);
}

/* ---- by label (--by NAME) ---------------------------------------------- */

#define BY_TOP_FUNCTIONS 3
#define BY_NONE UINT32_MAX        /* the row of samples without the label */

/* A (value, function) count: tmp's thread is the value's string id in p, or BY_NONE. */
static int cmp_by_value(const void *a, const void *b)
{
	const struct pf_count *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

struct by_row {
	uint32_t value;             /* string id in p, or BY_NONE */
	uint64_t samples;
	size_t first, n;            /* its (value, function) counts */
};

static int cmp_by_row(const void *a, const void *b)
{
	const struct by_row *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/* The innermost Python frame of a stack, else its innermost frame. */
static uint32_t by_frame(const struct profile *p, uint32_t node)
{
	for (uint32_t n = node; n; n = p->nodes[n].parent)
		if (p->frames[p->nodes[n].frame].kind == FRAME_PYTHON)
			return p->nodes[n].frame;
	return p->nodes[node].frame;
}

/*
 * Each value of label o->by: its share of the samples, and the functions
 * (the innermost Python one of each stack) that took most of its samples.
 */
static void print_by(const struct profile *p, FILE *f, const struct output_opts *o, uint64_t total)
{
	uint32_t key = profile_string_find(p, o->by, strlen(o->by));
	struct strbuf sb = STRBUF_INIT;
	struct profile tmp;
	struct pf_count *cs;
	struct by_row *rows = NULL;
	size_t nrows = 0, alloc = 0;

	sb.len = 0;
	escape_append(&sb, o->by, ESCAPE_TERMINAL);
	fprintf(f, "\nBy %s (label; %% of all samples; the innermost Python functions of each value)\n",
		strbuf_str(&sb));
	profile_init(&tmp);
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		uint32_t value = BY_NONE, fn;

		if (!thread_matches(p, c->thread, o->thread) || !c->node)
			continue;
		if (key != UINT32_MAX)
			profile_label_get(p, c->labels, key, &value);
		fn = fn_frame(&tmp, p, by_frame(p, c->node));
		profile_add(&tmp, value, profile_stack(&tmp, &fn, 1), c->count);
	}
	cs = xmalloc(sizeof(*cs) * (tmp.ncounts ? tmp.ncounts : 1));
	memcpy(cs, tmp.counts, sizeof(*cs) * tmp.ncounts);
	sort_array(cs, tmp.ncounts, sizeof(*cs), cmp_by_value);
	for (size_t i = 0; i < tmp.ncounts; i++) {
		if (!nrows || rows[nrows - 1].value != cs[i].thread) {
			rows = xgrow(rows, sizeof(*rows), nrows + 1, &alloc);
			rows[nrows++] = (struct by_row){ cs[i].thread, 0, i, 0 };
		}
		rows[nrows - 1].samples += cs[i].count;
		rows[nrows - 1].n++;
	}
	sort_array(rows, nrows, sizeof(*rows), cmp_by_row);
	if (key == UINT32_MAX)
		fprintf(f, "  no sample carries it (labels: record --label NAME=MODULE:VARIABLE)\n");
	for (size_t r = 0; r < nrows && (int)r < o->limit; r++) {
		strbuf_reset(&sb);
		if (rows[r].value == BY_NONE)
			strbuf_addstr(&sb, "(without the label)");
		else
			escape_append(&sb, profile_str(p, rows[r].value), ESCAPE_TERMINAL);
		fprintf(f, " %6.2f%% %10" PRIu64 "  %s\n", pct(rows[r].samples, total), rows[r].samples,
			strbuf_str(&sb));
		for (size_t k = 0; k < rows[r].n && k < BY_TOP_FUNCTIONS; k++) {
			const struct pf_count *c = &cs[rows[r].first + k];

			strbuf_reset(&sb);
			format_function(&sb, &tmp, tmp.nodes[c->node].frame, ESCAPE_TERMINAL);
			fprintf(f, "          %6.2f%% of it  %s\n", pct(c->count, rows[r].samples),
				strbuf_str(&sb));
		}
	}
	if (nrows > (size_t)o->limit)
		fprintf(f, "  ... and %zu more values (--limit shows more)\n", nrows - (size_t)o->limit);
	free(rows);
	free(cs);
	profile_release(&tmp);
	strbuf_release(&sb);
}

int output_text(const struct profile *p, FILE *f, const struct output_opts *opts)
{
	struct output_opts def;
	struct fn_view v;

	if (!opts) {
		output_opts_default(&def);
		opts = &def;
	}
	print_header(p, f);
	if (opts->where) {
		struct strbuf sb = STRBUF_INIT;

		escape_append(&sb, opts->where, ESCAPE_TERMINAL);
		fprintf(f, "Where:     %s (only the samples carrying that label)\n", strbuf_str(&sb));
		strbuf_release(&sb);
	}
	print_time_summary(p, f, opts);
	fn_view_build(&v, p, opts);
	if (!v.total) {
		fprintf(f, "\nNo samples were recorded.\n");
		print_calls(p, &v, f, opts);
		fn_view_release(&v);
		return ferror(f) ? -EIO : 0;
	}
	print_threads(p, f, v.total, opts);
	if (opts->by)
		print_by(p, f, opts, v.total);
	print_top(&v, f, opts, 0);
	print_top(&v, f, opts, 1);
	print_calls(p, &v, f, opts);
	print_tree(&v, f, opts);
	fn_view_release(&v);
	return ferror(f) ? -EIO : 0;
}
