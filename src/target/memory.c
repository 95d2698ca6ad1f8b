/*
 * Implementation of memory.h. process_vm_readv stops at the first remote
 * piece it cannot read, so mem_readv retries the rest one by one: a bad
 * pointer in one piece never hides the good ones.
 */
#include <errno.h>
#include <sys/uio.h>

#include "target/memory.h"
#include "util/util.h"

#define MAX_IOV 64

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

int mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	struct iovec local, remote;
	ssize_t n;
	int ret;

	m->reads++;
	if (!len)
		return 0;
	if (addr == 0 || addr + len < addr)
		return m->last_error = -EFAULT;
	if (!m->pid) {
		ret = image_read(m, addr, buf, len);
		if (ret)
			m->last_error = ret;
		return ret;
	}
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len) {
		m->bytes += len;
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
		size_t want = 0;
		ssize_t got;

		for (i = 0; i < batch; i++) {
			local[i].iov_base = iov[done + i].buf;
			local[i].iov_len = iov[done + i].len;
			remote[i].iov_base = (void *)(uintptr_t)iov[done + i].addr;
			remote[i].iov_len = iov[done + i].len;
			want += iov[done + i].len;
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
		(void)want;
		done += i + 1;
	}
	return (int)good;
}
