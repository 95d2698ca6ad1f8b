/*
 * Implementation of ptrace.h (target/): stopping one thread and letting it
 * go, with the threads that could not be let go yet held until they can.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "target/proc.h"
#include "target/ptrace.h"
#include "util/util.h"

/* ---- stopping and letting go of one thread ------------------------------ */

/*
 * Threads seized but not let go: one that did not stop within the bound
 * (uninterruptible sleep: the interrupt stops it when it wakes), and one
 * killed while stopped whose exit was not yet reported (it stays a traced
 * zombie, holding back its process's exit status or another thread's
 * execve, until its tracer reaps it). Each call that stops a thread first
 * settles them; past HELD_MAX the kernel's detach at framewalk's exit is
 * what is left.
 */
#define HELD_MAX 256
#define PF_EXITING_FLAG 0x4u     /* include/linux/sched.h */
#define SEIZE_TRIES 3
static pid_t held[HELD_MAX];
static size_t nheld;

/*
 * Job-control stops (Ctrl-Z, a background read or write) are blocked while
 * any target thread is stopped or seized, so framewalk never stops itself
 * holding one: the signal waits until the last is let go (nheld, nstopped:
 * however many are stopped at once), then stops it.
 */
static sigset_t job_blocked;    /* those of them this code blocked */
static int job_holding;
static size_t nstopped;         /* stopped by ptrace_stop_thread, not yet resumed */

static void job_signals_hold(void)
{
	static const int sigs[] = { SIGTSTP, SIGTTIN, SIGTTOU };
	sigset_t set, old;

	if (job_holding)
		return;
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sigemptyset(&job_blocked);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!sigismember(&old, sigs[i]))
			sigaddset(&job_blocked, sigs[i]);
	job_holding = 1;
}

static void job_signals_release(void)
{
	if (!job_holding || nheld || nstopped)
		return;
	job_holding = 0;
	pthread_sigmask(SIG_UNBLOCK, &job_blocked, NULL);
}

/* A ptrace stop's signal to re-deliver: none for our interrupt's (or a group-stop's) event stop. */
static int stop_signal(int status)
{
	return (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
}

/* Yield at first (the target stops within microseconds), then sleep up to 1 ms. */
static void backoff(unsigned *round)
{
	if (*round < 32) {
		sched_yield();
	} else {
		unsigned shift = *round - 32 < 7 ? *round - 32 : 7;
		struct timespec ts = { 0, 10000L << shift };

		nanosleep(&ts, NULL);
	}
	(*round)++;
}

/*
 * A seized thread that was not let go: detach it once it has stopped
 * (re-delivering the signal it stopped for), reap it once it has died.
 * 1 when it is no longer ours, 0 while it has not stopped yet.
 */
static int settle(pid_t tid)
{
	int status;
	pid_t w = waitpid(tid, &status, __WALL | WNOHANG);

	if (w < 0)
		return errno != EINTR;  /* ECHILD: reaped, or an execve took its tid */
	if (w == 0)
		return 0;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return 1;
	/* a failed detach: killed meanwhile, its exit is reported next */
	return WIFSTOPPED(status) && !ptrace(PTRACE_DETACH, tid, 0, stop_signal(status));
}

static void held_add(pid_t tid)
{
	if (nheld < HELD_MAX)
		held[nheld++] = tid;
}

static int held_find(pid_t tid)
{
	for (size_t i = 0; i < nheld; i++)
		if (held[i] == tid)
			return 1;
	return 0;
}

static void held_settle(void)
{
	for (size_t i = 0; i < nheld;) {
		if (settle(held[i]))
			held[i] = held[--nheld];
		else
			i++;
	}
	job_signals_release();
}

void ptrace_release_held(uint64_t wait_ns)
{
	uint64_t deadline = fw_now_ns() + wait_ns;
	unsigned round = 0;

	held_settle();
	while (nheld && fw_now_ns() < deadline) {
		backoff(&round);
		held_settle();
	}
}

/*
 * Let go of a seized thread: detach it, or, when it was killed while stopped
 * (exit_group, another thread's execve), reap it: until then its process's
 * parent gets no exit status and an execve waits in D. Bounded; one still
 * dying then is settled by the next stop.
 */
static void let_go(pid_t tid, int sig)
{
	uint64_t deadline;
	unsigned round = 0;

	if (!ptrace(PTRACE_DETACH, tid, 0, sig) || errno != ESRCH) {
		job_signals_release();
		return;
	}
	deadline = fw_now_ns() + PTRACE_REAP_WAIT_NS;
	while (!settle(tid)) {
		if (fw_now_ns() > deadline) {
			held_add(tid);
			break;
		}
		backoff(&round);
	}
	job_signals_release();
}

/*
 * Until the next child event (the tracee's stop sends SIGCHLD to its
 * tracer), at most STOP_POLL_NS: the stop is noticed when it happens.
 * Polling with growing sleeps noticed it up to a sleep later, so a thread
 * that was slow to stop (in a system call: brk, a page fault) stayed
 * stopped longer, and the moments after a tick, when no next tick can come,
 * covered more of what it was doing then: the stopped reference read
 * callshapes.py's zlib call 3.7 points under its own clock (issue 21). A
 * SIGCHLD that is not ours is taken too; nothing in framewalk waits for
 * one (children are reaped with waitpid). Without the signal (SA_NOCLDSTOP
 * inherited: none is sent for a stop) it is a poll every STOP_POLL_NS.
 */
#define STOP_SPINS 8
#define STOP_POLL_NS 1000000L

static void wait_child_event(unsigned *round, const sigset_t *chld)
{
	struct timespec ts = { 0, STOP_POLL_NS };

	if ((*round)++ < STOP_SPINS)
		sched_yield();
	else
		sigtimedwait(chld, NULL, &ts);
}

/*
 * Wait for the interrupt to stop tid, at most PTRACE_STOP_WAIT_NS and not
 * past a stop request, SIGCHLD blocked (wait_child_event). 0 stopped
 * (*sig: a signal to re-deliver), -ESRCH gone (reaped), -ETIMEDOUT, -EINTR.
 */
static int wait_stopped_blocked(pid_t tid, const volatile sig_atomic_t *stop, int *sig,
				const sigset_t *chld)
{
	uint64_t deadline = fw_now_ns() + PTRACE_STOP_WAIT_NS;
	unsigned round = 0;
	int status;

	*sig = 0;
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL | WNOHANG);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -ESRCH;
		}
		if (w == tid) {
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return -ESRCH;
			if (!WIFSTOPPED(status))
				continue;
			/* a signal may have stopped it first: stopped anyway */
			*sig = stop_signal(status);
			return 0;
		}
		if (stop && *stop)
			return -EINTR;
		if (fw_now_ns() > deadline)
			return -ETIMEDOUT;
		wait_child_event(&round, chld);
	}
}

static int wait_stopped(pid_t tid, const volatile sig_atomic_t *stop, int *sig)
{
	sigset_t chld, old;
	int ret;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	ret = wait_stopped_blocked(tid, stop, sig, &chld);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/*
 * Is tid gone or on its way out (PF_EXITING in its stat flags, field 9: set
 * from the start of its exit, before it is a zombie)?
 */
static int thread_exiting(pid_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	/* after the name's last ')': state ppid pgrp session tty_nr tpgid flags */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & PF_EXITING_FLAG) != 0;
}

/* TracerPid of tid, 0 none or unknown. */
static pid_t thread_tracer(pid_t tid)
{
	char path[64], buf[2048], *p;
	ssize_t n;
	int fd;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)tid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nTracerPid:");
	return p ? (pid_t)strtol(p + 12, NULL, 10) : 0;
}

/*
 * PTRACE_SEIZE: 0 (also when it is ours already), -EPERM refused, -ESRCH
 * gone. The kernel refuses an exiting thread too, and, for a moment, the
 * thread that takes over the process's id in another thread's execve (the
 * old leader's zombie is still there): a refusal that does not last is not
 * one. A thread seized (and not let go: ptrace_stop_thread's -ETIMEDOUT) that
 * execs takes the leader's id and stays ours: it is stopped again under it.
 */
static int seize(pid_t tid)
{
	unsigned round = 0;

	for (int tries = 0;; tries++) {
		if (!ptrace(PTRACE_SEIZE, tid, 0, 0))
			return 0;
		if (errno != EPERM || thread_exiting(tid))
			return -ESRCH;
		/* ours already: a thread seized under another tid took this one in its execve */
		if (thread_tracer(tid) == getpid())
			return 0;
		if (tries == SEIZE_TRIES)
			return -EPERM;
		for (int i = 0; i < 40; i++)
			backoff(&round);
	}
}

int ptrace_stop_thread(pid_t tid, const volatile sig_atomic_t *stop, int *sig)
{
	int ret;

	*sig = 0;
	held_settle();
	if (held_find(tid))
		return -ETIMEDOUT;      /* still asleep in the kernel since the last try */
	job_signals_hold();
	if ((ret = seize(tid))) {
		job_signals_release();
		return ret;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		let_go(tid, 0);
		return -ESRCH;
	}
	ret = wait_stopped(tid, stop, sig);
	if (ret == -ETIMEDOUT || ret == -EINTR)
		held_add(tid);  /* it stops when it wakes: let go at the next call */
	if (ret)
		job_signals_release();
	else
		nstopped++;
	return ret;
}

void ptrace_resume_thread(pid_t tid, int sig)
{
	if (nstopped)
		nstopped--;
	let_go(tid, sig);
}
