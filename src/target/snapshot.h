/*
 * The copies behind target/memory.h, private to target/: what a tick read is
 * remembered (address, length, copy order), merged into at most a few
 * hundred spans, and copied again at the next tick's start in one
 * process_vm_readv, ordered by copy order; lookups find the span holding an
 * address by binary search. Overlays reuse the same spans for copies taken
 * elsewhere.
 */
#ifndef FRAMEWALK_TARGET_SNAPSHOT_H
#define FRAMEWALK_TARGET_SNAPSHOT_H

#include "target/memory.h"

struct mem_snapshot *snapshot_new(void);
void snapshot_free(struct mem_snapshot *s);

/* Remember a read for the next tick's copy. */
void snapshot_log(struct mem_snapshot *s, uint64_t addr, size_t len, enum mem_order order);
/* A read the copy did not serve: plan the spans anew next tick. */
void snapshot_missed(struct mem_snapshot *s);

/* Copy the spans for this tick (the last tick's, or a new plan). 1 when there is a copy. */
int snapshot_take(struct mem_snapshot *s, struct target_mem *m);

/* Serve a read wholly inside one copied span: 0, else -EFAULT. */
int snapshot_serve(const struct mem_snapshot *s, uint64_t addr, void *buf, size_t len);

void snapshot_overlay_reset(struct mem_snapshot *s);
void snapshot_overlay_add(struct mem_snapshot *s, uint64_t addr, const void *data, uint32_t len);
void snapshot_overlay_ready(struct mem_snapshot *s);

#endif
