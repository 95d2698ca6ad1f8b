/*
 * Native stack unwinding from a thread's registers and memory. Each step
 * takes the cheapest trustworthy rule: the frame-pointer step in modules
 * that keep frame pointers (not for the innermost frame, which may sit in a
 * prologue or epilogue), the DWARF CFI step (libdw) elsewhere, switching back
 * and forth within one stack. Memory comes through a callback so the same
 * code serves a stopped thread (ptrace) and a copied stack (eBPF).
 */
#ifndef FRAMEWALK_UNWIND_UNWIND_H
#define FRAMEWALK_UNWIND_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "elf/modules.h"

#define UNWIND_MAX 512

enum unwind_end {
	UNWIND_END_COMPLETE = 1,  /* reached the outermost frame (CFI: return address undefined, or fp 0) */
	UNWIND_END_NO_INFO,       /* no CFI and no usable frame pointer */
	UNWIND_END_BAD_MEMORY,    /* a needed read failed */
	UNWIND_END_DEPTH,         /* depth cap */
	UNWIND_END_NO_MODULE,     /* pc in no known module and frame pointer unusable */
	UNWIND_END_BAD_FRAME,     /* the stack did not grow toward its base */
};

enum unwind_step {
	UNWIND_STEP_FIRST = 0,
	UNWIND_STEP_FP,
	UNWIND_STEP_CFI,
};

struct unwind_result {
	size_t n;
	uint64_t pcs[UNWIND_MAX];        /* innermost first; pcs[0] is the interrupted pc */
	uint64_t sps[UNWIND_MAX];        /* stack pointer in frame i: its frame spans [sps[i], sps[i+1]) */
	uint8_t steps[UNWIND_MAX];       /* how frame i was reached */
	uint8_t signal_frame[UNWIND_MAX];/* frame i's pc is exact (do not subtract 1) */
	enum unwind_end end;
	const struct fw_module *end_module;  /* where an incomplete chain broke */
	uint32_t fp_steps, cfi_steps;
};

/* Read 8 bytes of target memory at addr. 0 or -errno. */
typedef int (*unwind_read_fn)(void *ctx, uint64_t addr, uint64_t *val);

int unwind_stack(struct module_map *mm, const struct arch_regs *regs,
		 unwind_read_fn read, void *ctx, struct unwind_result *out);

const char *unwind_end_text(enum unwind_end e);

#endif
