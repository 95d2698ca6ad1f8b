/*
 * The ptrace backend, and the read of one stopped thread it and `dump`
 * make: the thread is stopped (target/ptrace.h), its registers, a copy of
 * its native stack, its Python frames and its kernel stack are read, and it
 * is let go again (re-delivering any signal that arrived meanwhile) before
 * the native walk runs over the copy.
 */
#ifndef FRAMEWALK_SAMPLER_PTRACE_H
#define FRAMEWALK_SAMPLER_PTRACE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/reader.h"
#include "sampler/sample.h"
#include "unwind/unwind.h"

/*
 * A read of the caller's own, made while the thread is stopped (beside its
 * stack): a state that must be of the stack's instant. Its return value is
 * kept in native_sample.stopped_read.
 */
struct while_stopped {
	int (*read)(void *arg);
	void *arg;
};

struct stack_reader;

struct stack_reader *stack_reader_new(void);
void stack_reader_free(struct stack_reader *sr);

/*
 * Sample thread tid of pid, stopped while it is read. py_thread is its thread
 * state (NULL for a thread without Python); mm NULL: Python frames only (no
 * native walk); also, when given, calls also->read while it is stopped.
 * Returns 0, -ESRCH when the thread is gone, -EPERM when ptrace is refused,
 * other -errno on failure.
 */
int ptrace_sample_thread(pid_t pid, pid_t tid, struct module_map *mm, struct py_reader *r,
			 struct py_thread_info *py_thread, int kernel, struct stack_reader *sr,
			 const struct while_stopped *also, const volatile sig_atomic_t *stop,
			 struct native_sample *out);

#endif
