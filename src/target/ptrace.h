/*
 * Stopping one thread of another process and letting it go again
 * (PTRACE_SEIZE + PTRACE_INTERRUPT, PTRACE_DETACH), for the ptrace backend
 * and `dump`. Between two stops nothing is traced, so a framewalk killed
 * with SIGKILL leaves nothing behind: the kernel detaches a dead tracer's
 * tracees. A thread that will not stop in time is skipped and let go later;
 * one killed while stopped is reaped; job-control stops of framewalk wait
 * until no target thread is held.
 */
#ifndef FRAMEWALK_TARGET_PTRACE_H
#define FRAMEWALK_TARGET_PTRACE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

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

#endif
