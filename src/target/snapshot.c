/*
 * Implementation of snapshot.h. Spans are kept sorted by address for
 * lookups; the copy's order of pieces is a separate index sorted by (copy
 * order, address). The same spans are copied again while a tick reads
 * nothing outside them (no sort per tick), up to PLAN_MAX_AGE ticks.
 */
#include <errno.h>

#include "target/snapshot.h"
#include "util/util.h"

#define MAX_SPANS 256
#define MAX_SPAN (64u << 10)
#define MAX_BYTES (512u << 10)
#define MERGE_GAP 1024
#define LOG_MAX 4096
#define PLAN_MAX_AGE 64

struct span {
	uint64_t addr;
	uint32_t len;
	uint32_t off;                   /* in buf */
	uint8_t order;                  /* enum mem_order */
};

struct mem_snapshot {
	struct span *log;               /* this tick's reads */
	size_t nlog, log_alloc;
	struct span *spans;             /* sorted by address, non-overlapping */
	size_t nspans, spans_alloc;
	uint32_t *copy_order;           /* span indices in the order they are copied */
	struct mem_iov *iov;
	size_t iov_alloc;
	uint8_t *buf;
	size_t buf_alloc;
	size_t overlay_bytes;
	int plan_reusable;              /* this tick read nothing outside the copy */
	unsigned plan_age;
};

struct mem_snapshot *snapshot_new(void)
{
	return xcalloc(1, sizeof(struct mem_snapshot));
}

void snapshot_free(struct mem_snapshot *s)
{
	if (!s)
		return;
	free(s->log);
	free(s->spans);
	free(s->copy_order);
	free(s->iov);
	free(s->buf);
	free(s);
}

void snapshot_log(struct mem_snapshot *s, uint64_t addr, size_t len, enum mem_order order)
{
	if (s->nlog >= LOG_MAX || len > MAX_SPAN || !len)
		return;
	s->log = xgrow(s->log, sizeof(*s->log), s->nlog + 1, &s->log_alloc);
	s->log[s->nlog].addr = addr;
	s->log[s->nlog].len = (uint32_t)len;
	s->log[s->nlog].off = 0;
	s->log[s->nlog].order = (uint8_t)order;
	s->nlog++;
}

void snapshot_missed(struct mem_snapshot *s)
{
	s->plan_reusable = 0;
}

/* The span holding addr, or -1. */
static long span_of(const struct mem_snapshot *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nspans;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < s->spans[mid].addr)
			hi = mid;
		else if (addr >= s->spans[mid].addr + s->spans[mid].len)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

int snapshot_serve(const struct mem_snapshot *s, uint64_t addr, void *buf, size_t len)
{
	long i = span_of(s, addr);
	const struct span *sp;

	if (i < 0)
		return -EFAULT;
	sp = &s->spans[i];
	if (len > sp->addr + sp->len - addr)
		return -EFAULT;
	memcpy(buf, s->buf + sp->off + (addr - sp->addr), len);
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Merge the previous tick's reads into at most MAX_SPANS spans; a merged span copies at its earliest order. */
static void plan(struct mem_snapshot *s)
{
	size_t total = 0;

	s->nspans = 0;
	if (!s->nlog)
		return;
	sort_array(s->log, s->nlog, sizeof(*s->log), cmp_addr);
	for (size_t i = 0; i < s->nlog; i++) {
		const struct span *l = &s->log[i];
		struct span *last = s->nspans ? &s->spans[s->nspans - 1] : NULL;
		uint64_t end = l->addr + l->len;

		if (last && l->addr <= last->addr + last->len + MERGE_GAP &&
		    end - last->addr <= MAX_SPAN) {
			if (end > last->addr + last->len) {
				total += end - (last->addr + last->len);
				last->len = (uint32_t)(end - last->addr);
			}
			if (l->order < last->order)
				last->order = l->order;
			continue;
		}
		if (s->nspans == MAX_SPANS || total + l->len > MAX_BYTES)
			break;
		s->spans = xgrow(s->spans, sizeof(*s->spans), s->nspans + 1, &s->spans_alloc);
		s->spans[s->nspans] = *l;
		s->nspans++;
		total += l->len;
	}
	s->nlog = 0;
	/* The copy's order: by copy order, then address (one stable pass per order). */
	s->copy_order = xrealloc(s->copy_order, (s->nspans ? s->nspans : 1) * sizeof(*s->copy_order));
	unsigned max_order = 0;
	for (size_t i = 0; i < s->nspans; i++)
		if (s->spans[i].order > max_order)
			max_order = s->spans[i].order;
	size_t k = 0;
	for (unsigned order = 0; order <= max_order; order++)
		for (size_t i = 0; i < s->nspans; i++)
			if (s->spans[i].order == order)
				s->copy_order[k++] = (uint32_t)i;
}

int snapshot_take(struct mem_snapshot *s, struct target_mem *m)
{
	size_t off = 0, keep = 0;

	if (s->plan_reusable && s->nspans && ++s->plan_age < PLAN_MAX_AGE) {
		s->nlog = 0;
	} else {
		s->plan_age = 0;
		plan(s);
	}
	s->plan_reusable = 1;
	if (!s->nspans)
		return 0;
	for (size_t i = 0; i < s->nspans; i++) {
		s->spans[i].off = (uint32_t)off;
		off += s->spans[i].len;
	}
	if (off > s->buf_alloc) {
		free(s->buf);
		s->buf = xmalloc(off);
		s->buf_alloc = off;
	}
	s->iov = xgrow(s->iov, sizeof(*s->iov), s->nspans, &s->iov_alloc);
	for (size_t k = 0; k < s->nspans; k++) {
		const struct span *sp = &s->spans[s->copy_order[k]];

		s->iov[k].addr = sp->addr;
		s->iov[k].buf = s->buf + sp->off;
		s->iov[k].len = sp->len;
	}
	if (mem_readv(m, s->iov, s->nspans) <= 0) {
		s->nspans = 0;
		return 0;
	}
	/* Keep only the spans that were read whole (still sorted by address). */
	for (size_t k = 0; k < s->nspans; k++)
		if (!s->iov[k].ok)
			s->spans[s->copy_order[k]].len = 0;
	for (size_t i = 0; i < s->nspans; i++)
		if (s->spans[i].len)
			s->spans[keep++] = s->spans[i];
	if (keep != s->nspans) {
		s->nspans = keep;
		s->plan_reusable = 0;     /* the copy order indices no longer match */
	}
	return keep > 0;
}

void snapshot_overlay_reset(struct mem_snapshot *s)
{
	s->plan_reusable = 0;
	s->nspans = 0;
	s->nlog = 0;
	s->overlay_bytes = 0;
}

void snapshot_overlay_add(struct mem_snapshot *s, uint64_t addr, const void *data, uint32_t len)
{
	size_t off = s->overlay_bytes;

	if (!len)
		return;
	if (off + len > s->buf_alloc) {
		size_t n = s->buf_alloc ? s->buf_alloc : 4096;
		while (n < off + len)
			n *= 2;
		s->buf = xrealloc(s->buf, n);
		s->buf_alloc = n;
	}
	memcpy(s->buf + off, data, len);
	s->spans = xgrow(s->spans, sizeof(*s->spans), s->nspans + 1, &s->spans_alloc);
	s->spans[s->nspans].addr = addr;
	s->spans[s->nspans].len = len;
	s->spans[s->nspans].off = (uint32_t)off;
	s->spans[s->nspans].order = MEM_ORDER_LATE;
	s->nspans++;
	s->overlay_bytes = off + len;
}

void snapshot_overlay_ready(struct mem_snapshot *s)
{
	size_t keep = 0;

	sort_array(s->spans, s->nspans, sizeof(*s->spans), cmp_addr);
	/* Drop overlapping copies (a frame seen twice): keep the first. */
	for (size_t i = 0; i < s->nspans; i++) {
		if (keep && s->spans[i].addr < s->spans[keep - 1].addr + s->spans[keep - 1].len)
			continue;
		s->spans[keep++] = s->spans[i];
	}
	s->nspans = keep;
}
