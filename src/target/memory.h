/*
 * Reading another process's memory. One interface, two sources: the live
 * target (process_vm_readv: never stops it) and an in-memory image (fuzzing
 * and unit tests feed the Python reader crafted memory through it). A read is
 * all or nothing: a short read is an error, so callers never see half a
 * struct. Counters let the sampler report reads per sample.
 *
 * Two kinds of copies can serve reads in place of the target
 * (target/snapshot.c):
 *  - a tick's snapshot (mem_tick_begin/end): everything the previous tick
 *    read, copied again in one system call, in the order the readers asked
 *    for (mem_set_order), so one tick's reads see (nearly) one moment;
 *  - an overlay (mem_overlay_*): copies taken elsewhere, e.g. by the BPF
 *    program at the instant of a sample.
 * Nothing copied outlives its tick or overlay.
 */
#ifndef FRAMEWALK_TARGET_MEMORY_H
#define FRAMEWALK_TARGET_MEMORY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mem_iov {
	uint64_t addr;
	void *buf;
	size_t len;
	int ok;            /* set by mem_readv: 1 when this piece was read whole */
};

struct mem_region {
	uint64_t addr;
	const uint8_t *data;
	size_t len;
};

/*
 * When the next snapshot copies what a read touched, relative to the rest
 * of one call (the kernel copies in order). A reader copying a stack that
 * changes while it is copied wants memory whose stale contents stay
 * consistent (a C stack a call just left: copy it before the pointer to
 * it) before the anchor (the thread state naming the current frame), and
 * the frames the anchor points at after it (a frame just popped keeps its
 * contents until the next call).
 */
enum mem_order {
	MEM_ORDER_EARLY = 0,
	MEM_ORDER_ANCHOR,
	MEM_ORDER_LATE,           /* and later: MEM_ORDER_LATE + k, up to 15 */
};

struct mem_snapshot;           /* target/snapshot.c */

/* Fields are the implementation's: use the functions below. */
struct target_mem {
	pid_t pid;                      /* > 0: live process */
	const struct mem_region *image; /* else: these regions */
	size_t nimage;
	uint64_t reads;                 /* system calls (or image lookups) made */
	uint64_t bytes;
	uint64_t snapshot_hits;         /* reads served from a snapshot or overlay */
	int last_error;                 /* -errno of the last failed read */
	struct mem_snapshot *snap;      /* NULL until snapshots or overlays are used */
	int serving;                    /* a snapshot or overlay serves reads now */
	int live;                       /* > 0: reads go to the target regardless */
	int uncached;                   /* > 0: reads are not remembered for the next tick */
	enum mem_order order;           /* of the reads being made */
};

void mem_init_pid(struct target_mem *m, pid_t pid);
void mem_init_image(struct target_mem *m, const struct mem_region *r, size_t n);
void mem_release(struct target_mem *m);

/* Read len bytes at addr. 0, or -EFAULT (unmapped/short), -ESRCH, -EPERM. */
int mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len);

static inline int mem_read_u64(struct target_mem *m, uint64_t addr, uint64_t *v)
{
	return mem_read(m, addr, v, sizeof(*v));
}

/*
 * Read len bytes at addr from the copy that serves reads now (a tick's
 * snapshot, an overlay: the sample's instant), never from the target: 0, or
 * -ENOENT when no copy serves or none holds them all.
 */
int mem_read_copied(struct target_mem *m, uint64_t addr, void *buf, size_t len);
/*
 * Write len bytes (at most MEM_WRITE_MAX) at addr of a live target, all or
 * nothing: process_vm_writev, never an image. The one writer of target
 * memory (python/remote_exec.c: PEP 768's request fields); not cached, and
 * a snapshot serving reads is not updated. 0, -EINVAL (too long, no live
 * target), -EFAULT, -ESRCH, -EPERM.
 */
#define MEM_WRITE_MAX 4096
int mem_write(struct target_mem *m, uint64_t addr, const void *buf, size_t len);

/*
 * Read several pieces in as few system calls as possible, in order. Each
 * piece's ok says whether it was read whole. Returns the number of pieces
 * read whole, or -ESRCH / -EPERM when the process cannot be read at all.
 */
int mem_readv(struct target_mem *m, struct mem_iov *iov, size_t n);

/*
 * mem_readv for readers: pieces a snapshot or overlay holds are served from
 * it, the rest read in as few system calls as possible, and every piece
 * read is remembered for the next tick like mem_read's. Same returns.
 */
int mem_read_pieces(struct target_mem *m, struct mem_iov *iov, size_t n);

/*
 * Ticks (samplers): mem_tick_begin copies, in one system call where it can,
 * every region the previous tick read (merged), and serves this tick's reads
 * from that copy when they fall inside it; reads outside go to the target and
 * are remembered for the next tick. mem_tick_end ends serving.
 */
void mem_tick_begin(struct target_mem *m);
void mem_tick_end(struct target_mem *m);

/* The copy order of the reads that follow (remembered with them). */
static inline void mem_set_order(struct target_mem *m, enum mem_order order)
{
	m->order = order;
}

/* Remember [addr, addr + len) for the next tick's copy at this order, without reading. */
void mem_remember(struct target_mem *m, uint64_t addr, size_t len, enum mem_order order);

/* Reads between these go to the target even while a copy serves. Nestable. */
static inline void mem_live_begin(struct target_mem *m) { m->live++; }
static inline void mem_live_end(struct target_mem *m) { m->live--; }

/* Reads between these are not remembered for the next tick (cache fills). Nestable. */
static inline void mem_uncached_begin(struct target_mem *m) { m->uncached++; }
static inline void mem_uncached_end(struct target_mem *m) { m->uncached--; }

/*
 * One object's bytes for a cache of the reader's (names, types, dicts):
 * not remembered for the next tick; a NULL or wrapping address is -EFAULT.
 */
static inline int mem_read_uncached(struct target_mem *m, uint64_t addr, void *buf, size_t len)
{
	int ret;

	if (!addr || addr + len < addr)
		return -EFAULT;
	mem_uncached_begin(m);
	ret = mem_read(m, addr, buf, len);
	mem_uncached_end(m);
	return ret;
}

/*
 * Overlays: serve reads from copies taken elsewhere until mem_overlay_end.
 * Begin, add each copy (it is copied), activate, read, end.
 */
void mem_overlay_begin(struct target_mem *m);
void mem_overlay_add(struct target_mem *m, uint64_t addr, const void *data, uint32_t len);
void mem_overlay_activate(struct target_mem *m);
void mem_overlay_end(struct target_mem *m);

#endif
