/*
 * Implementation of memory.h. process_vm_readv stops at the first remote
 * piece it cannot read, so mem_readv retries the rest one by one: a bad
 * pointer in one piece never hides the good ones.
 */
#include <errno.h>
#include <sys/uio.h>

#include "target/memory.h"
#include "util/util.h"

#define MAX_IOV 512
#define PREFETCH_MAX_SPANS 256
#define PREFETCH_MAX_SPAN (64u << 10)
#define PREFETCH_MAX_BYTES (512u << 10)
#define PREFETCH_MERGE_GAP 1024
#define LOG_MAX 4096

void mem_init_pid(struct target_mem *m, pid_t pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
}

void mem_init_image(struct target_mem *m, const struct mem_region *r, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->image = r;
	m->nimage = n;
}

static int image_read(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < m->nimage; i++) {
		const struct mem_region *r = &m->image[i];

		if (addr >= r->addr && addr - r->addr <= r->len &&
		    len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->data + (addr - r->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

static int errno_to_read_error(int e)
{
	if (e == ESRCH || e == EPERM)
		return -e;
	return -EFAULT;
}

void mem_release(struct target_mem *m)
{
	free(m->log);
	free(m->snap);
	free(m->snap_buf);
	free(m->guards);
	free(m->guard_buf);
	m->guard_buf = NULL;
	m->guard_buf_alloc = 0;
	m->guards = NULL;
	m->nguards = m->guards_alloc = 0;
	m->log = m->snap = NULL;
	m->snap_buf = NULL;
	m->nlog = m->log_alloc = m->nsnap = m->snap_alloc = m->snap_buf_alloc = 0;
	m->snap_active = 0;
}

static void log_read(struct target_mem *m, uint64_t addr, size_t len)
{
	if (!m->prefetch || m->log_off || m->nlog >= LOG_MAX || len > PREFETCH_MAX_SPAN)
		return;
	m->log = xgrow(m->log, sizeof(*m->log), m->nlog + 1, &m->log_alloc);
	m->log[m->nlog].addr = addr;
	m->log[m->nlog].len = (uint32_t)len;
	m->log[m->nlog].off = 0;
	m->nlog++;
}

/* The snapshot span holding addr, or -1. */
static long span_of(const struct target_mem *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsnap;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < m->snap[mid].addr)
			hi = mid;
		else if (addr >= m->snap[mid].addr + m->snap[mid].len)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* Serve a read from the active snapshot; 0 when it is wholly inside one span. */
static int snapshot_read(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	long i = span_of(m, addr);
	const struct mem_span *s;

	if (i < 0)
		return -EFAULT;
	s = &m->snap[i];
	if (len > s->addr + s->len - addr)
		return -EFAULT;
	memcpy(buf, m->snap_buf + s->off + (addr - s->addr), len);
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct mem_span *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Merge the previous tick's reads into at most PREFETCH_MAX_SPANS spans. */
static void plan_prefetch(struct target_mem *m)
{
	size_t total = 0;

	m->nsnap = 0;
	if (!m->nlog)
		return;
	qsort(m->log, m->nlog, sizeof(*m->log), cmp_span);
	for (size_t i = 0; i < m->nlog; i++) {
		const struct mem_span *l = &m->log[i];
		struct mem_span *last = m->nsnap ? &m->snap[m->nsnap - 1] : NULL;
		uint64_t end = l->addr + l->len;

		if (last && l->addr <= last->addr + last->len + PREFETCH_MERGE_GAP &&
		    end - last->addr <= PREFETCH_MAX_SPAN) {
			if (end > last->addr + last->len) {
				total += end - (last->addr + last->len);
				last->len = (uint32_t)(end - last->addr);
			}
			continue;
		}
		if (m->nsnap == PREFETCH_MAX_SPANS || total + l->len > PREFETCH_MAX_BYTES)
			break;
		m->snap = xgrow(m->snap, sizeof(*m->snap), m->nsnap + 1, &m->snap_alloc);
		m->snap[m->nsnap].addr = l->addr;
		m->snap[m->nsnap].len = l->len;
		m->nsnap++;
		total += l->len;
	}
	m->nlog = 0;
}

void mem_set_guards(struct target_mem *m, const struct mem_guard *g, size_t n)
{
	size_t bytes = 0;

	if (n > MEM_MAX_GUARDS)
		n = MEM_MAX_GUARDS;
	m->guards = xgrow(m->guards, sizeof(*m->guards), n, &m->guards_alloc);
	m->nguards = 0;
	for (size_t i = 0; i < n; i++) {
		if (!g[i].len || g[i].len > MEM_MAX_GUARD_LEN)
			continue;
		m->guards[m->nguards++] = g[i];
		bytes += g[i].len;
	}
	if (2 * bytes > m->guard_buf_alloc) {
		free(m->guard_buf);
		m->guard_buf_alloc = 2 * bytes;
		m->guard_buf = xmalloc(m->guard_buf_alloc);
	}
}

int mem_owner_moved(const struct target_mem *m, uint64_t owner)
{
	for (size_t i = 0; i < m->nmoved; i++)
		if (m->moved_owners[i] == owner)
			return 1;
	return 0;
}

static void note_moved_owner(struct target_mem *m, uint64_t owner)
{
	if (mem_owner_moved(m, owner) || m->nmoved == MEM_MAX_GUARDS)
		return;
	m->moved_owners[m->nmoved++] = owner;
}

static void forget_moved_owner(struct target_mem *m, uint64_t owner)
{
	for (size_t i = 0; i < m->nmoved; i++)
		if (m->moved_owners[i] == owner) {
			m->moved_owners[i] = m->moved_owners[--m->nmoved];
			return;
		}
}

/* One iovec per guard, their bytes laid out one after another in buf. */
static size_t guard_iovs(struct mem_iov *iov, const struct mem_guard *g, size_t n, uint8_t *buf)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		iov[i].addr = g[i].addr;
		iov[i].buf = buf + off;
		iov[i].len = g[i].len;
		off += g[i].len;
	}
	return n;
}

#define RETAKE_MAX_GUARDS 8

int mem_retake_owner(struct target_mem *m, uint64_t owner)
{
	struct mem_iov iov[3 * RETAKE_MAX_GUARDS];
	uint8_t before[RETAKE_MAX_GUARDS * MEM_MAX_GUARD_LEN], after[sizeof(before)];
	struct mem_guard mine[RETAKE_MAX_GUARDS];
	size_t ng = 0, spans[RETAKE_MAX_GUARDS], nspans = 0, n, off = 0;

	if (!m->snap_active)
		return -EAGAIN;
	for (size_t i = 0; i < m->nguards && ng < RETAKE_MAX_GUARDS; i++) {
		long sp;
		size_t k;

		if (m->guards[i].owner != owner)
			continue;
		mine[ng++] = m->guards[i];
		sp = span_of(m, m->guards[i].addr);
		for (k = 0; sp >= 0 && k < nspans && spans[k] != (size_t)sp; k++)
			;
		if (sp >= 0 && k == nspans)
			spans[nspans++] = (size_t)sp;
	}
	if (!ng || !nspans)
		return -EAGAIN;
	n = guard_iovs(iov, mine, ng, before);
	for (size_t i = 0; i < nspans; i++, n++) {
		iov[n].addr = m->snap[spans[i]].addr;
		iov[n].buf = m->snap_buf + m->snap[spans[i]].off;
		iov[n].len = m->snap[spans[i]].len;
	}
	n += guard_iovs(iov + n, mine, ng, after);
	if (mem_readv(m, iov, n) != (int)n)
		return -EAGAIN;
	for (size_t i = 0; i < ng; off += mine[i++].len)
		if (memcmp(before + off, after + off, mine[i].len))
			return -EAGAIN;
	forget_moved_owner(m, owner);
	return 0;
}

/* Taken once more when a guard moved; owners still moving are retaken on their own. */
#define PREFETCH_TRIES 2
/* The same spans serve while a tick reads nothing outside them, this long. */
#define PLAN_MAX_AGE 64

/* Spans for this tick: the last tick's again, or a new plan from its reads. */
static void choose_spans(struct target_mem *m)
{
	if (m->plan_reusable && m->nsnap && ++m->plan_age < PLAN_MAX_AGE) {
		m->nlog = 0;
	} else {
		m->plan_age = 0;
		plan_prefetch(m);
	}
	m->plan_reusable = 1;
}

void mem_tick_begin(struct target_mem *m)
{
	size_t nguard = m->nguards, gbytes = m->guard_buf_alloc / 2;
	struct mem_iov iov[PREFETCH_MAX_SPANS + 2 * MEM_MAX_GUARDS];
	uint8_t *before = m->guard_buf, *after = before ? before + gbytes : NULL;
	size_t off = 0, keep = 0, n = 0;

	if (!before)
		nguard = 0;             /* no guards set yet */

	m->snap_active = 0;
	m->nmoved = 0;
	choose_spans(m);
	if (!m->nsnap)
		return;
	for (size_t i = 0; i < m->nsnap; i++) {
		m->snap[i].off = (uint32_t)off;
		off += m->snap[i].len;
	}
	if (off > m->snap_buf_alloc) {
		free(m->snap_buf);
		m->snap_buf = xmalloc(off);
		m->snap_buf_alloc = off;
	}
	n = guard_iovs(iov, m->guards, nguard, before);
	for (size_t i = 0; i < m->nsnap; i++, n++) {
		iov[n].addr = m->snap[i].addr;
		iov[n].buf = m->snap_buf + m->snap[i].off;
		iov[n].len = m->snap[i].len;
	}
	n += guard_iovs(iov + n, m->guards, nguard, after);
	for (int tries = 1;; tries++) {
		if (mem_readv(m, iov, n) <= 0) {
			m->nsnap = 0;
			return;
		}
		m->nmoved = 0;
		off = 0;
		for (size_t g = 0; g < nguard; g++) {
			if (iov[g].ok && iov[nguard + m->nsnap + g].ok &&
			    memcmp(before + off, after + off, m->guards[g].len))
				note_moved_owner(m, m->guards[g].owner);
			off += m->guards[g].len;
		}
		if (!m->nmoved)
			break;
		m->torn_prefetches++;
		if (tries == PREFETCH_TRIES)
			break;
	}
	/* Keep only the spans that were read whole. */
	for (size_t i = 0; i < m->nsnap; i++)
		if (iov[nguard + i].ok)
			m->snap[keep++] = m->snap[i];
	m->nsnap = keep;
	m->snap_active = 1;
}

void mem_overlay_reset(struct target_mem *m)
{
	m->snap_active = 0;
	m->plan_reusable = 0;
	m->nsnap = 0;
	m->nlog = 0;
	m->overlay_bytes = 0;
}

void mem_overlay_add(struct target_mem *m, uint64_t addr, const void *data, uint32_t len)
{
	size_t off = m->overlay_bytes;

	if (!len)
		return;
	if (off + len > m->snap_buf_alloc) {
		size_t n = m->snap_buf_alloc ? m->snap_buf_alloc : 4096;
		while (n < off + len)
			n *= 2;
		m->snap_buf = xrealloc(m->snap_buf, n);
		m->snap_buf_alloc = n;
	}
	memcpy(m->snap_buf + off, data, len);
	m->snap = xgrow(m->snap, sizeof(*m->snap), m->nsnap + 1, &m->snap_alloc);
	m->snap[m->nsnap].addr = addr;
	m->snap[m->nsnap].len = len;
	m->snap[m->nsnap].off = (uint32_t)off;
	m->nsnap++;
	m->overlay_bytes = off + len;
}

void mem_overlay_activate(struct target_mem *m)
{
	size_t keep = 0;

	qsort(m->snap, m->nsnap, sizeof(*m->snap), cmp_span);
	/* Drop overlapping copies (a frame seen twice): keep the first. */
	for (size_t i = 0; i < m->nsnap; i++) {
		if (keep && m->snap[i].addr < m->snap[keep - 1].addr + m->snap[keep - 1].len)
			continue;
		m->snap[keep++] = m->snap[i];
	}
	m->nsnap = keep;
	m->snap_active = 1;
	m->log_off++;
}

void mem_tick_end(struct target_mem *m)
{
	m->snap_active = 0;
}

void mem_overlay_deactivate(struct target_mem *m)
{
	m->snap_active = 0;
	if (m->log_off)
		m->log_off--;
}

int mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	struct iovec local, remote;
	ssize_t n;
	int ret;

	if (!len)
		return 0;
	if (addr == 0 || addr + len < addr)
		return m->last_error = -EFAULT;
	if (m->snap_active && !snapshot_read(m, addr, buf, len)) {
		m->snapshot_hits++;
		log_read(m, addr, len);
		return 0;
	}
	m->reads++;
	if (!m->log_off)
		m->plan_reusable = 0;       /* outside the copy: plan anew next tick */
	if (!m->pid) {
		ret = image_read(m, addr, buf, len);
		if (ret)
			m->last_error = ret;
		else
			log_read(m, addr, len);
		return ret;
	}
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len) {
		m->bytes += len;
		log_read(m, addr, len);
		return 0;
	}
	return m->last_error = (n < 0 ? errno_to_read_error(errno) : -EFAULT);
}

int mem_readv(struct target_mem *m, struct mem_iov *iov, size_t n)
{
	struct iovec local[MAX_IOV], remote[MAX_IOV];
	size_t i, done = 0, good = 0;

	for (i = 0; i < n; i++)
		iov[i].ok = 0;
	if (!m->pid) {
		for (i = 0; i < n; i++) {
			iov[i].ok = image_read(m, iov[i].addr, iov[i].buf, iov[i].len) == 0;
			good += iov[i].ok;
		}
		m->reads++;
		return (int)good;
	}
	while (done < n) {
		size_t batch = n - done < MAX_IOV ? n - done : MAX_IOV;
		ssize_t got;

		for (i = 0; i < batch; i++) {
			local[i].iov_base = iov[done + i].buf;
			local[i].iov_len = iov[done + i].len;
			remote[i].iov_base = (void *)(uintptr_t)iov[done + i].addr;
			remote[i].iov_len = iov[done + i].len;
		}
		m->reads++;
		got = process_vm_readv(m->pid, local, batch, remote, batch, 0);
		if (got < 0) {
			if (errno == ESRCH || errno == EPERM)
				return m->last_error = -errno;
			got = 0;
		}
		m->bytes += (uint64_t)got;
		/* Pieces fully covered by the byte count were read whole. */
		for (i = 0; i < batch && (size_t)got >= iov[done + i].len; i++) {
			got -= (ssize_t)iov[done + i].len;
			iov[done + i].ok = 1;
			good++;
		}
		if ((size_t)got == 0 && i == batch) {
			done += batch;
			continue;
		}
		/* Piece i failed (or was partial): skip it, go on after it. */
		done += i + 1;
	}
	return (int)good;
}
