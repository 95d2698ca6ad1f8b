/*
 * The ptrace backend: stops one thread at a time (PTRACE_SEIZE +
 * PTRACE_INTERRUPT), reads its registers, unwinds its native stack, reads its
 * Python frames and kernel stack while it is stopped, and detaches it again
 * (PTRACE_DETACH, re-delivering any signal that arrived meanwhile). Between
 * samples the target is not traced at all, so a profiler killed with SIGKILL
 * leaves nothing behind: the kernel detaches a dead tracer's tracees.
 */
#ifndef FRAMEWALK_SAMPLER_PTRACE_H
#define FRAMEWALK_SAMPLER_PTRACE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

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
	int stopped_read;               /* what while_stopped returned (0 when none) */
};

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

void native_sample_clear(struct native_sample *ns);

/* How long a thread may take to stop, and to be reaped once killed while stopped. */
#define PTRACE_STOP_WAIT_NS (200 * 1000000ull)
#define PTRACE_REAP_WAIT_NS (100 * 1000000ull)

/*
 * Stop one thread (PTRACE_SEIZE + PTRACE_INTERRUPT, wait for the stop, at
 * most PTRACE_STOP_WAIT_NS and not past *stop when stop is given).
 * 0 stopped: the caller must ptrace_resume_thread(tid, *sig) it; -EPERM
 * ptrace refused; -ESRCH the thread is gone (nothing to resume);
 * -ETIMEDOUT it did not stop in time (asleep in the kernel: skip it; later
 * calls return -ETIMEDOUT at once until it has stopped and been let go);
 * -EINTR *stop was set. While a thread is stopped or seized, SIGTSTP,
 * SIGTTIN and SIGTTOU are blocked in the calling thread (a pending one
 * takes effect once none is held), so framewalk never stops itself with a
 * target thread stopped; other threads of framewalk must block them.
 */
int ptrace_stop_thread(pid_t tid, const volatile sig_atomic_t *stop, int *sig);
/*
 * Detach a stopped thread, re-delivering the signal that arrived meanwhile;
 * one killed while stopped is reaped (at most PTRACE_REAP_WAIT_NS here, else
 * by a later call), so its process's exit or execve is not held back.
 */
void ptrace_resume_thread(pid_t tid, int sig);
/* Let go of every thread still seized (ptrace_stop_thread's -ETIMEDOUT), waiting up to wait_ns. */
void ptrace_release_held(uint64_t wait_ns);

/* Kernel stack of a thread from /proc/PID/task/TID/stack, innermost first. */
size_t kernel_stack_read(pid_t pid, pid_t tid, char **out, size_t max);

#endif
