/*
 * A copy of a thread's user stack taken at one instant (by the ptrace
 * backend while the thread is stopped, or by the BPF program at the
 * interrupt), the read function the unwinder walks it with, and what a walk
 * teaches about how much the next copy needs: a complete walk shows where
 * the thread's stack ends (its outermost frame), so later copies can stop
 * there instead of taking a fixed, much larger window.
 */
#ifndef FRAMEWALK_UNWIND_STACKCOPY_H
#define FRAMEWALK_UNWIND_STACKCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

/* Copies start this far below sp: the red zone, where CFI can find registers. */
#define STACK_COPY_BELOW_SP 256

struct stack_copy {
	const uint8_t *data;        /* [base, base + len) of the thread's memory */
	uint64_t base;
	size_t len;
	size_t limit;               /* the largest copy this one could have been */
	uint64_t read_end;          /* highest byte the walk read + 1 */
	int beyond;                 /* the walk wanted a word past the copy */
};

void stack_copy_init(struct stack_copy *sc, const void *data, uint64_t base, size_t len,
		     size_t limit);

/* unwind_read_fn over a struct stack_copy. */
int stack_copy_read(void *ctx, uint64_t addr, uint64_t *val);

/* Where each thread's stack ends, as far as walks have shown (by tid). */
#define STACK_ENDS 256
struct stack_end {
	pid_t tid;
	uint64_t end;               /* 0: not known yet */
	uint32_t want;              /* bytes to copy while end is unknown */
};
struct stack_ends {
	struct stack_end e[STACK_ENDS];
	uint32_t first, max;        /* first copy, and the most a deeper stack gets */
};

void stack_ends_init(struct stack_ends *se, uint32_t first, uint32_t max);

/* Bytes to copy from base for tid: up to its known end, else what it wants. */
size_t stack_ends_copy_size(struct stack_ends *se, pid_t tid, uint64_t base);

/*
 * After a walk over sc: 1 when it showed a further end for tid (in *end), -1
 * when it ran past the copy (the end is forgotten and the next copy of an
 * unknown end is larger), 0 when nothing changed.
 */
int stack_ends_learn(struct stack_ends *se, pid_t tid, const struct stack_copy *sc,
		     const struct unwind_result *uw, uint64_t *end);

#endif
