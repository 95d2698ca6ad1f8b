/*
 * The per-function table of diff.h, and diff's text report: the functions
 * whose share of their own profile changed most between two profiles
 * (self and total share before, after, and the delta in percentage points).
 * Normalising each profile to its own total lets captures of different
 * lengths or rates be compared.
 */
#include <errno.h>
#include <inttypes.h>

#include "output/diff.h"
#include "output/format.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_DEPTH 4096

void fn_table_init(struct fn_table *t)
{
	memset(t, 0, sizeof(*t));
	profile_init(&t->keys);
}

void fn_table_release(struct fn_table *t)
{
	profile_release(&t->keys);
	for (int c = 0; c < 2; c++) {
		free(t->self[c]);
		free(t->total[c]);
	}
	free(t->seen);
	memset(t, 0, sizeof(*t));
}

/* Make the per-function arrays cover every interned function. */
static void fn_table_fit(struct fn_table *t)
{
	size_t need = t->keys.nframes, old = t->alloc, alloc;

	if (need <= old)
		return;
	alloc = old ? old : 64;
	while (alloc < need)
		alloc *= 2;
	for (int c = 0; c < 2; c++) {
		t->self[c] = xrealloc(t->self[c], alloc * sizeof(uint64_t));
		t->total[c] = xrealloc(t->total[c], alloc * sizeof(uint64_t));
		memset(t->self[c] + old, 0, (alloc - old) * sizeof(uint64_t));
		memset(t->total[c] + old, 0, (alloc - old) * sizeof(uint64_t));
	}
	t->seen = xrealloc(t->seen, alloc * sizeof(uint32_t));
	memset(t->seen + old, 0, (alloc - old) * sizeof(uint32_t));
	t->alloc = alloc;
}

static uint32_t fn_key(struct fn_table *t, const struct profile *p, uint32_t frame)
{
	const struct pf_frame *f = &p->frames[frame];
	uint32_t name = profile_cstring(&t->keys, profile_str(p, f->name));
	uint32_t file = f->file ? profile_cstring(&t->keys, profile_str(p, f->file)) : 0;

	return profile_frame(&t->keys, (enum frame_kind)f->kind, name, file, 0);
}

void fn_table_add(struct fn_table *t, int col, const struct profile *p, const char *thread,
		  const uint64_t *base, size_t nbase)
{
	uint32_t *map = xcalloc(p->nframes ? p->nframes : 1, sizeof(*map));
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint32_t key = UINT32_MAX, value = UINT32_MAX, got;

	if (t->where && strchr(t->where, '=')) {
		const char *eq = strchr(t->where, '=');

		key = profile_string_find(p, t->where, (size_t)(eq - t->where));
		value = profile_string_find(p, eq + 1, strlen(eq + 1));
	}
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		uint64_t n = c->count;
		size_t depth;

		if (base && i < nbase)
			n = n > base[i] ? n - base[i] : 0;
		if (!n || !thread_matches(p, c->thread, thread))
			continue;
		if (t->where && (key == UINT32_MAX || value == UINT32_MAX ||
				 !profile_label_get(p, c->labels, key, &got) || got != value))
			continue;
		depth = profile_node_frames(p, c->node, frames, MAX_DEPTH);
		t->samples[col] += n;
		if (!depth)
			continue;
		if (++t->generation == 0) {
			memset(t->seen, 0, t->alloc * sizeof(*t->seen));
			t->generation = 1;
		}
		for (size_t k = 0; k < depth; k++) {
			uint32_t key = map[frames[k]];

			if (!key) {
				key = map[frames[k]] = fn_key(t, p, frames[k]);
				fn_table_fit(t);
			}
			if (t->seen[key] != t->generation) {
				t->seen[key] = t->generation;
				t->total[col][key] += n;
			}
			if (k == depth - 1)
				t->self[col][key] += n;
		}
	}
	free(frames);
	free(map);
}

/* ---- diff's text report ------------------------------------------------ */

struct diff_row {
	uint32_t fn;
	double self[2], total[2];
	double rank;
};

static int cmp_row(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	if (x->total[1] != y->total[1])
		return x->total[1] < y->total[1] ? 1 : -1;
	return x->fn < y->fn ? -1 : (x->fn > y->fn);
}

static double dabs(double x)
{
	return x < 0 ? -x : x;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_source(FILE *f, const char *label, const char *name, const struct profile *p,
			 uint64_t samples)
{
	struct strbuf sb = STRBUF_INIT;

	escape_append(&sb, name ? name : "", ESCAPE_TERMINAL);
	fprintf(f, "%s %s: %" PRIu64 " samples", label, strbuf_str(&sb), samples);
	if (p->meta.pid) {
		strbuf_reset(&sb);
		escape_append(&sb, p->meta.target ? p->meta.target : "", ESCAPE_TERMINAL);
		fprintf(f, " (PID %d%s%s)", (int)p->meta.pid, sb.len ? ": " : "", strbuf_str(&sb));
	}
	fputc('\n', f);
	strbuf_release(&sb);
}

/* ---- exact call counts (record --count-calls) ---------------------------- */

struct calls_row {
	uint32_t fn;                /* in keys */
	uint64_t calls[2];
	double rate[2];             /* calls per second of its profile's counting window */
	double rank;
};

static int cmp_calls_row(const void *a, const void *b)
{
	const struct calls_row *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return x->fn < y->fn ? -1 : (x->fn > y->fn);
}

/*
 * Functions whose exact call rate changed most (the N+1 query a deploy
 * brought): calls per second of each profile's counting window, functions
 * keyed by (name, file). Nothing when neither profile has counts.
 */
static void print_calls_diff(const struct profile *pr[2], FILE *f, int limit)
{
	struct profile keys;
	uint64_t *calls[2];
	struct calls_row *rows;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0, cap = pr[0]->ncalls + pr[1]->ncalls + 1;
	double secs[2];

	if (!pr[0]->ncalls && !pr[1]->ncalls)
		return;
	profile_init(&keys);
	calls[0] = xcalloc(cap + 1, sizeof(*calls[0]));
	calls[1] = xcalloc(cap + 1, sizeof(*calls[1]));
	for (int c = 0; c < 2; c++) {
		secs[c] = profile_calls_seconds(pr[c]);
		for (size_t i = 0; i < pr[c]->ncalls; i++) {
			const struct pf_calls *k = &pr[c]->calls[i];
			uint32_t fn = profile_frame(&keys, FRAME_PYTHON,
						    profile_cstring(&keys, profile_str(pr[c], k->name)),
						    profile_cstring(&keys, profile_str(pr[c], k->file)), 0);

			if (fn <= cap)
				calls[c][fn] += k->starts + k->resumes;
		}
	}
	rows = xcalloc(keys.nframes ? keys.nframes : 1, sizeof(*rows));
	for (uint32_t i = 1; i < keys.nframes && i <= cap; i++) {
		struct calls_row *r = &rows[n++];

		r->fn = i;
		for (int c = 0; c < 2; c++) {
			r->calls[c] = calls[c][i];
			r->rate[c] = secs[c] > 0 ? (double)calls[c][i] / secs[c] : 0;
		}
		r->rank = dabs(r->rate[1] - r->rate[0]);
	}
	sort_array(rows, n, sizeof(*rows), cmp_calls_row);
	fprintf(f, "\nCalls whose rate changed most (exact counts, per second of each counting "
		"window: %.2f s before, %.2f s after)\n", secs[0], secs[1]);
	fprintf(f, "  %12s %12s  %12s %12s %8s  %s\n", "calls before", "after", "per s before",
		"after", "ratio", "Function");
	for (size_t i = 0; i < n && (int)i < limit; i++) {
		const struct calls_row *r = &rows[i];

		strbuf_reset(&sb);
		format_function(&sb, &keys, r->fn, ESCAPE_TERMINAL);
		fprintf(f, "  %12" PRIu64 " %12" PRIu64 "  %12.1f %12.1f ", r->calls[0], r->calls[1],
			r->rate[0], r->rate[1]);
		if (!pr[0]->ncalls || !pr[1]->ncalls)
			fprintf(f, "%8s", "-");
		else if (r->rate[0] > 0)
			fprintf(f, "%7.2fx", r->rate[1] / r->rate[0]);
		else
			fprintf(f, "%8s", "new");
		fprintf(f, "  %s\n", strbuf_str(&sb));
	}
	if (!pr[0]->ncalls || !pr[1]->ncalls)
		fprintf(f, "  (only the %s profile has counts: record both with --count-calls)\n",
			pr[0]->ncalls ? "before" : "after");
	free(rows);
	free(calls[0]);
	free(calls[1]);
	strbuf_release(&sb);
	profile_release(&keys);
}

int output_diff_text(const struct profile *before, const char *before_name,
		     const struct profile *after, const char *after_name, FILE *f,
		     const struct output_opts *o)
{
	struct fn_table t;
	struct diff_row *rows;
	struct strbuf sb = STRBUF_INIT;
	const char *thread = o ? o->thread : NULL;
	int limit = o && o->limit > 0 ? o->limit : 20;
	size_t n = 0;

	fn_table_init(&t);
	fn_table_add(&t, 0, before, thread, NULL, 0);
	fn_table_add(&t, 1, after, thread, NULL, 0);
	print_source(f, "Before:", before_name, before, t.samples[0]);
	print_source(f, "After: ", after_name, after, t.samples[1]);
	fprintf(f, "Shares are %% of each profile's own samples; delta in percentage points.\n");
	rows = xcalloc(t.keys.nframes ? t.keys.nframes : 1, sizeof(*rows));
	for (uint32_t i = 1; i < t.keys.nframes; i++) {
		struct diff_row *r = &rows[n++];

		r->fn = i;
		for (int c = 0; c < 2; c++) {
			r->self[c] = share(t.self[c][i], t.samples[c]);
			r->total[c] = share(t.total[c][i], t.samples[c]);
		}
		r->rank = dabs(r->self[1] - r->self[0]);
		if (dabs(r->total[1] - r->total[0]) > r->rank)
			r->rank = dabs(r->total[1] - r->total[0]);
	}
	sort_array(rows, n, sizeof(*rows), cmp_row);
	fprintf(f, "\nFunctions whose share changed most\n");
	fprintf(f, "  %-26s  %s\n", "Self %", "Total %");
	fprintf(f, "  %8s %8s %8s  %8s %8s %8s  %s\n", "before", "after", "delta",
		"before", "after", "delta", "Function");
	for (size_t i = 0; i < n && (int)i < limit; i++) {
		const struct diff_row *r = &rows[i];

		strbuf_reset(&sb);
		format_function(&sb, &t.keys, r->fn, ESCAPE_TERMINAL);
		fprintf(f, "  %8.2f %8.2f %+8.2f  %8.2f %8.2f %+8.2f  %s\n", r->self[0], r->self[1],
			r->self[1] - r->self[0], r->total[0], r->total[1], r->total[1] - r->total[0],
			strbuf_str(&sb));
	}
	if (!n)
		fprintf(f, "  (no samples in either profile)\n");
	{
		const struct profile *pr[2] = { before, after };

		print_calls_diff(pr, f, limit);
	}
	free(rows);
	strbuf_release(&sb);
	fn_table_release(&t);
	return ferror(f) ? -EIO : 0;
}
