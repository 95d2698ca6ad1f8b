/*
 * Implementation of memory.h. process_vm_readv stops at the first remote
 * piece it cannot read, so mem_readv retries the rest one by one: a bad
 * pointer in one piece never hides the good ones. Snapshots and overlays
 * are target/snapshot.c's.
 */
#include <errno.h>
#include <sys/uio.h>

#include "target/memory.h"
#include "target/snapshot.h"
#include "util/util.h"

#define MAX_IOV 512

void mem_init_pid(struct target_mem *m, pid_t pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->order = MEM_ORDER_LATE;
}

void mem_init_image(struct target_mem *m, const struct mem_region *r, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->image = r;
	m->nimage = n;
	m->order = MEM_ORDER_LATE;
}

void mem_release(struct target_mem *m)
{
	snapshot_free(m->snap);
	m->snap = NULL;
	m->serving = 0;
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

/* Remember a read for the next tick (when snapshots are in use). */
static void remember(struct target_mem *m, uint64_t addr, size_t len)
{
	if (m->snap && !m->uncached)
		snapshot_log(m->snap, addr, len, m->order);
}

void mem_remember(struct target_mem *m, uint64_t addr, size_t len, enum mem_order order)
{
	if (m->snap && !m->uncached)
		snapshot_log(m->snap, addr, len, order);
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
	if (!mem_read_copied(m, addr, buf, len)) {
		remember(m, addr, len);
		return 0;
	}
	m->reads++;
	if (m->serving && !m->uncached)
		snapshot_missed(m->snap);     /* outside the copy: plan anew next tick */
	if (!m->pid) {
		ret = image_read(m, addr, buf, len);
		if (ret)
			m->last_error = ret;
		else
			remember(m, addr, len);
		return ret;
	}
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len) {
		m->bytes += len;
		remember(m, addr, len);
		return 0;
	}
	return m->last_error = (n < 0 ? errno_to_read_error(errno) : -EFAULT);
}

int mem_read_copied(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	if (!len || !m->serving || m->live || !addr || addr + len < addr ||
	    snapshot_serve(m->snap, addr, buf, len))
		return -ENOENT;
	m->snapshot_hits++;
	return 0;
}

int mem_write(struct target_mem *m, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local, remote;
	ssize_t n;

	if (m->pid <= 0 || !len || len > MEM_WRITE_MAX || !addr || addr + len < addr)
		return -EINVAL;
	local.iov_base = (void *)buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	n = process_vm_writev(m->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? errno_to_read_error(errno) : -EFAULT;
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

int mem_read_pieces(struct target_mem *m, struct mem_iov *iov, size_t n)
{
	struct mem_iov rest[MAX_IOV];
	size_t idx[MAX_IOV], nrest = 0, good = 0;
	int ret;

	if (n > MAX_IOV)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		iov[i].ok = 0;
		if (m->serving && !m->live &&
		    !snapshot_serve(m->snap, iov[i].addr, iov[i].buf, iov[i].len)) {
			m->snapshot_hits++;
			remember(m, iov[i].addr, iov[i].len);
			iov[i].ok = 1;
			good++;
			continue;
		}
		idx[nrest] = i;
		rest[nrest++] = iov[i];
	}
	if (!nrest)
		return (int)good;
	if (m->serving && !m->uncached)
		snapshot_missed(m->snap);
	ret = mem_readv(m, rest, nrest);
	if (ret < 0)
		return ret;
	for (size_t k = 0; k < nrest; k++) {
		if (!rest[k].ok)
			continue;
		iov[idx[k]].ok = 1;
		remember(m, rest[k].addr, rest[k].len);
		good++;
	}
	return (int)good;
}

static struct mem_snapshot *snap_of(struct target_mem *m)
{
	if (!m->snap)
		m->snap = snapshot_new();
	return m->snap;
}

void mem_tick_begin(struct target_mem *m)
{
	m->serving = 0;
	m->serving = snapshot_take(snap_of(m), m);
}

void mem_tick_end(struct target_mem *m)
{
	m->serving = 0;
}

void mem_overlay_begin(struct target_mem *m)
{
	m->serving = 0;
	snapshot_overlay_reset(snap_of(m));
}

void mem_overlay_add(struct target_mem *m, uint64_t addr, const void *data, uint32_t len)
{
	snapshot_overlay_add(snap_of(m), addr, data, len);
}

void mem_overlay_activate(struct target_mem *m)
{
	snapshot_overlay_ready(snap_of(m));
	m->serving = 1;
	m->uncached++;          /* an overlay's reads plan no tick */
}

void mem_overlay_end(struct target_mem *m)
{
	if (m->serving)
		m->uncached--;
	m->serving = 0;
}
