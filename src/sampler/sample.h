/*
 * One thread's sample before it is merged: its native walk, its Python
 * frames, its kernel stack and what was read at the same instant (the GIL,
 * the collector, the system call it waits in). Filled by the ptrace read of
 * a stopped thread and by bpf's records; merged by sampler.c.
 */
#ifndef FRAMEWALK_SAMPLER_SAMPLE_H
#define FRAMEWALK_SAMPLER_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "python/reader.h"
#include "unwind/unwind.h"

#define KERNEL_MAX_FRAMES 64

struct native_sample {
	struct unwind_result uw;
	struct py_frame_info *py;       /* caller-provided, PY_MAX_DEPTH */
	size_t npy;
	int py_ok;
	char *kernel[KERNEL_MAX_FRAMES];
	size_t nkernel;
	int gc;                         /* the collector was running in this thread */
	int unwound;                    /* uw holds a native walk (else Python frames only) */
	/* read while the thread was stopped (ptrace): the GIL and the collector */
	uint64_t gil_holder;            /* 0: none, or not read */
	int gil_locked, collecting;
	long syscall_nr;                /* the system call it was stopped in, -1 none */
	uint64_t syscall_arg0;
	uint64_t stopped_ns;
	uint64_t read_ns;               /* when the stopped reads ended (monotonic) */
	int stopped_read;               /* what while_stopped returned (0 when none) */
};

/* Empty ns for the next sample (its kernel frame names freed). */
void native_sample_clear(struct native_sample *ns);

#endif
