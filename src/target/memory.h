/*
 * Reading another process's memory. One interface, two sources: the live
 * target (process_vm_readv: never stops it) and an in-memory image (fuzzing
 * and unit tests feed the Python reader crafted memory through it). A read is
 * all or nothing: a short read is an error, so callers never see half a
 * struct. Counters let the sampler report reads per sample.
 */
#ifndef FRAMEWALK_TARGET_MEMORY_H
#define FRAMEWALK_TARGET_MEMORY_H

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

struct mem_span {
	uint64_t addr;
	uint32_t len;
	uint32_t off;                   /* prefetch: offset in the snapshot buffer */
};

/*
 * Bytes the next prefetch checks (a word, or a range that stays unchanged
 * while its owner does not move), and what they vouch for (a thread).
 */
struct mem_guard {
	uint64_t addr;
	uint32_t len;                   /* 1..MEM_MAX_GUARD_LEN */
	uint64_t owner;
};

#define MEM_MAX_GUARDS 128
#define MEM_MAX_GUARD_LEN 512

struct target_mem {
	pid_t pid;                      /* > 0: live process */
	const struct mem_region *image; /* else: these regions */
	size_t nimage;
	uint64_t reads;                 /* system calls (or image lookups) made */
	uint64_t bytes;
	uint64_t snapshot_hits;         /* reads served from the tick's prefetch */
	int last_error;                 /* -errno of the last failed read */
	/* Prefetch: what one tick read, fetched in one call at the next tick. */
	int prefetch;                   /* log reads for mem_tick_begin (samplers) */
	int log_off;                    /* > 0: reads are not logged (cache fills) */
	struct mem_span *log;
	size_t nlog, log_alloc;
	struct mem_span *snap;          /* sorted, non-overlapping */
	size_t nsnap, snap_alloc;
	uint8_t *snap_buf;
	size_t snap_buf_alloc;
	int snap_active;
	size_t overlay_bytes;
	struct mem_guard *guards;
	size_t nguards, guards_alloc;
	uint8_t *guard_buf;             /* before and after copies of the guards */
	size_t guard_buf_alloc;
	int plan_reusable;              /* this tick read nothing outside the copy */
	unsigned plan_age;              /* ticks the same spans were reused */
	uint64_t moved_owners[MEM_MAX_GUARDS];  /* this tick: owners whose guard moved */
	size_t nmoved;
	uint64_t torn_prefetches;       /* copies in which a guard moved */
};

void mem_init_pid(struct target_mem *m, pid_t pid);
void mem_init_image(struct target_mem *m, const struct mem_region *r, size_t n);

/* Read len bytes at addr. 0, or -EFAULT (unmapped/short), -ESRCH, -EPERM. */
int mem_read(struct target_mem *m, uint64_t addr, void *buf, size_t len);

/*
 * Read several pieces in as few system calls as possible. Each piece's ok
 * says whether it was read whole. Returns the number of pieces read whole,
 * or -ESRCH / -EPERM when the process cannot be read at all.
 */
int mem_readv(struct target_mem *m, struct mem_iov *iov, size_t n);

/*
 * Tick boundaries for prefetching. mem_tick_begin reads, in as few system
 * calls as possible, every region the previous tick read (merged), and
 * serves this tick's reads from that copy when they fall inside it; reads
 * outside go to the target and are remembered for the next tick. The copy
 * is never used after mem_tick_end, so no data outlives its tick.
 */
void mem_tick_begin(struct target_mem *m);
/*
 * Serve reads from copies taken elsewhere (e.g. by the BPF program at the
 * instant of a sample) until mem_tick_end: add each copy, then activate.
 */
void mem_overlay_reset(struct target_mem *m);
void mem_overlay_add(struct target_mem *m, uint64_t addr, const void *data, uint32_t len);
void mem_overlay_activate(struct target_mem *m);
void mem_overlay_deactivate(struct target_mem *m);
void mem_tick_end(struct target_mem *m);
/*
 * Words the prefetch reads both before and after everything else (a
 * seqlock without the lock): when a guard differs, its owner (a thread)
 * changed while being copied; the copy is taken once more, and an owner
 * whose guard moved again is reported by mem_owner_moved, for that thread
 * alone to be copied again (mem_retake_owner) or read live (the innermost
 * frame of each thread is the word to guard: it changes whenever a call
 * starts or ends).
 */
void mem_set_guards(struct target_mem *m, const struct mem_guard *g, size_t n);
/* Did a guard of owner move during this tick's copy? */
int mem_owner_moved(const struct target_mem *m, uint64_t owner);
/*
 * Copy again, in one call between owner's guards, the spans that hold those
 * guards (a thread's state and its frames' data stack): 0 when the guards
 * held still this time (the owner is no longer "moved"), -EAGAIN when not.
 * Other owners' data in those spans becomes newer: read them first.
 */
int mem_retake_owner(struct target_mem *m, uint64_t owner);
void mem_release(struct target_mem *m);

static inline int mem_read_u64(struct target_mem *m, uint64_t addr, uint64_t *v)
{
	return mem_read(m, addr, v, sizeof(*v));
}

#endif
