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
 * A thread stopped before anything of its process is read (the backend's
 * stop_first), with its kernel stack read just before the stop; until
 * ptrace_sample_thread reads it, or ptrace_first_let_go lets it go.
 */
struct first_stop {
	pid_t tid;                /* 0: read and let go */
	int sig;                  /* the signal to re-deliver */
	uint64_t t0;              /* when the stop was asked for */
	size_t nkernel;
	char *kernel[KERNEL_MAX_FRAMES];
};

/* Stop tid of pid into *fs (kernel: its kernel stack first). 0 or ptrace_stop_thread's -errno. */
int ptrace_first_stop(pid_t pid, pid_t tid, int kernel, const volatile sig_atomic_t *stop,
		      struct first_stop *fs);
/* Let it go unread (nothing when it was read). */
void ptrace_first_let_go(struct first_stop *fs);

/*
 * Sample thread tid of pid, stopped while it is read: already, when first
 * (ptrace_first_stop's, or NULL) is tid's, else here. py_thread is its thread
 * state (NULL for a thread without Python); mm NULL: Python frames only (no
 * native walk); also, when given, calls also->read while it is stopped.
 * Returns 0, -ESRCH when the thread is gone, -EPERM when ptrace is refused,
 * other -errno on failure.
 */
int ptrace_sample_thread(pid_t pid, pid_t tid, struct module_map *mm, struct py_reader *r,
			 struct py_thread_info *py_thread, int kernel, struct stack_reader *sr,
			 const struct while_stopped *also, const volatile sig_atomic_t *stop,
			 struct first_stop *first, struct native_sample *out);

#endif
