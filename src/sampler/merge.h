/*
 * Merging one thread's native, Python and kernel frames into one stack:
 * each native frame running the interpreter's frame evaluator is replaced by
 * the Python frames it was running (up to the frame that entered that
 * C-level eval call), the interpreter's own frames around them fold by
 * position and module (merge.c says which) unless asked for, JIT code is
 * folded into the Python frame it runs, and kernel frames go innermost.
 */
#ifndef FRAMEWALK_SAMPLER_MERGE_H
#define FRAMEWALK_SAMPLER_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "python/reader.h"
#include "symbols/symbolize.h"
#include "unwind/unwind.h"

struct merge_input {
	const struct unwind_result *native;     /* NULL: Python frames only */
	const struct native_symbol *syms;       /* one per native frame */
	const struct py_frame_info *py;         /* innermost first */
	size_t npy;
	char **kernel;                          /* innermost first */
	size_t nkernel;
	int native_all;                         /* keep interpreter internals and JIT frames */
	const char *wait;                       /* "[wait] ..." leaf, or NULL */
	int gc;                                 /* add the <GC> marker */
	const char *marker;                     /* an interpreter-state leaf (<exception T>), or NULL */
};

/* Profile frame id of a Python frame (interns its strings once per code). */
uint32_t merge_python_frame(struct profile *p, const struct py_frame_info *f);

/*
 * Build the merged stack, outermost first, into out (capacity max). Returns
 * its depth; *leftover counts Python frames no evaluator frame claimed.
 */
size_t merge_stack(struct profile *p, const struct merge_input *in, uint32_t *out, size_t max,
		   size_t *leftover);

#endif
