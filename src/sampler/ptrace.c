/*
 * Implementation of ptrace.h. While the thread is stopped, its registers,
 * one copy of its live stack (from just below sp to where its outermost
 * frame was last seen, in one system call) and its Python frames are read;
 * it is detached before the native walk, which runs over the copy, and
 * names and merging come after that. What is stopped is only the one thread,
 * and only for the reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "sampler/ptrace.h"
#include "target/proc.h"
#include "unwind/stackcopy.h"
#include "util/util.h"

/* A thread's first copy, and the most a deeper stack may get. */
#define FIRST_COPY (64u << 10)
#define MAX_COPY (1u << 20)

struct stack_reader {
	pid_t pid;
	uint8_t *data;              /* the last copy */
	size_t alloc;
	struct stack_copy copy;
	struct stack_ends ends;
};

/* Read [base, base + size) of the stopped thread: as much as is mapped. */
static void stack_copy_take(struct stack_reader *sr, uint64_t base, size_t size)
{
	struct iovec local, remote;
	ssize_t n;

	if (size > sr->alloc) {
		free(sr->data);
		sr->data = xmalloc(size);
		sr->alloc = size;
	}
	local.iov_base = sr->data;
	local.iov_len = size;
	remote.iov_base = (void *)(uintptr_t)base;
	remote.iov_len = size;
	n = process_vm_readv(sr->pid, &local, 1, &remote, 1, 0);
	stack_copy_init(&sr->copy, sr->data, base, n > 0 ? (size_t)n : 0, MAX_COPY);
}

void native_sample_clear(struct native_sample *ns)
{
	for (size_t i = 0; i < ns->nkernel; i++)
		free(ns->kernel[i]);
	ns->nkernel = 0;
	ns->npy = 0;
	ns->py_ok = 0;
	ns->gc = 0;
	ns->unwound = 0;
	ns->stopped_ns = 0;
	ns->stopped_read = 0;
	ns->gil_holder = 0;
	ns->gil_locked = ns->collecting = 0;
	ns->syscall_nr = -1;
	ns->syscall_arg0 = 0;
	ns->uw.n = 0;
}

size_t kernel_stack_read(pid_t pid, pid_t tid, char **out, size_t max)
{
	char path[96], line[256];
	size_t n = 0;
	FILE *f;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* "[<0>] do_syscall_64+0x5b/0x110" */
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ']'), *end;

		if (!p)
			continue;
		p++;
		while (*p == ' ')
			p++;
		end = p + strcspn(p, "+ \n");
		if (end == p)
			continue;
		out[n++] = xstrndup(p, (size_t)(end - p));
	}
	fclose(f);
	/*
	 * A stack entered through an interrupt (asm_sysvec_*, asm_common_interrupt)
	 * belongs to a thread that was running user code and got preempted: the
	 * kernel frames are the scheduler's, not the thread's. Exceptions
	 * (asm_exc_page_fault) and system calls are kept.
	 */
	int ours = 0;

	/* Still leaving the previous sample's stop: the path is framewalk's own. */
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i], "ptrace_stop") || !strcmp(out[i], "ptrace_notify") ||
		    !strcmp(out[i], "get_signal") || !strcmp(out[i], "ptrace_do_notify"))
			ours = 1;
	if (n && (ours || !strncmp(out[n - 1], "asm_sysvec_", 11) ||
		  !strcmp(out[n - 1], "asm_common_interrupt"))) {
		for (size_t i = 0; i < n; i++)
			free(out[i]);
		n = 0;
	}
	return n;
}

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
 * holding one: the signal waits until the last is let go, then stops it.
 */
static sigset_t job_blocked;    /* those of them this code blocked */
static int job_holding;

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
	if (!job_holding || nheld)
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
 * Wait for the interrupt to stop tid, at most PTRACE_STOP_WAIT_NS and not
 * past a stop request. 0 stopped (*sig: a signal to re-deliver), -ESRCH
 * gone (reaped), -ETIMEDOUT, -EINTR.
 */
static int wait_stopped(pid_t tid, const volatile sig_atomic_t *stop, int *sig)
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
		backoff(&round);
	}
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
	return ret;
}

void ptrace_resume_thread(pid_t tid, int sig)
{
	let_go(tid, sig);
}

struct stack_reader *stack_reader_new(void)
{
	struct stack_reader *sr = xcalloc(1, sizeof(*sr));

	stack_ends_init(&sr->ends, FIRST_COPY, MAX_COPY);
	return sr;
}

void stack_reader_free(struct stack_reader *sr)
{
	if (sr)
		free(sr->data);
	free(sr);
}

int ptrace_sample_thread(pid_t pid, pid_t tid, struct module_map *mm, struct py_reader *r,
			 struct py_thread_info *py_thread, int kernel, struct stack_reader *sr,
			 const struct while_stopped *also, const volatile sig_atomic_t *stop,
			 struct native_sample *out)
{
	struct arch_regs regs;
	uint64_t t0, t1;
	int sig = 0, ret;

	native_sample_clear(out);
	/*
	 * The kernel stack is read before the thread is stopped: stopping it
	 * interrupts a blocking system call, whose path would be replaced by the
	 * ptrace stop's own. A thread running user code has no kernel stack.
	 */
	if (kernel)
		out->nkernel = kernel_stack_read(pid, tid, out->kernel, KERNEL_MAX_FRAMES);
	t0 = fw_now_ns();
	ret = ptrace_stop_thread(tid, stop, &sig);
	if (ret)
		return ret;
	/* Everything below runs while the thread is stopped; detach follows. */
	ret = arch_ptrace_getregs(tid, &regs);
	if (!ret) {
		out->syscall_nr = regs.syscall_nr;
		out->syscall_arg0 = regs.syscall_arg0;
	}
	/* Read before the stop; stale if the thread has since left the kernel. */
	if (!ret && !regs.in_syscall) {
		for (size_t i = 0; i < out->nkernel; i++)
			free(out->kernel[i]);
		out->nkernel = 0;
	}
	if (!ret && mm) {
		uint64_t base = regs.r[arch_reg_sp] - STACK_COPY_BELOW_SP;

		sr->pid = pid;
		stack_copy_take(sr, base, stack_ends_copy_size(&sr->ends, tid, base));
	}
	if (!ret) {
		if (py_thread && !py_reader_thread_frame(r, py_thread))
			out->py_ok = !py_thread->frame ||
				py_reader_stack(r, py_thread, out->py, PY_MAX_DEPTH, &out->npy) == 0;
		/* Who holds the GIL, and is the collector running, at this instant. */
		if (py_thread && py_reader_gil(r, &out->gil_holder, &out->gil_locked))
			out->gil_holder = 0;
		if (py_thread && py_reader_gc(r, &out->collecting))
			out->collecting = 0;
		if (also)
			out->stopped_read = also->read(also->arg);
	}
	t1 = fw_now_ns();
	ptrace_resume_thread(tid, sig);
	out->stopped_ns = t1 - t0;
	if (!ret && mm) {
		uint64_t end;

		unwind_stack(mm, &regs, stack_copy_read, &sr->copy, &out->uw);
		out->unwound = 1;
		stack_ends_learn(&sr->ends, tid, &sr->copy, &out->uw, &end);
	}
	return ret;
}

/* ---- the ptrace backend (backend.h) ------------------------------------ */

#include "sampler/backend.h"
#include "sampler/pyview.h"

struct ptrace_state {
	struct stack_reader *sr;
};

static int ptrace_target_init(struct sampler *s)
{
	struct ptrace_state *p = xcalloc(1, sizeof(*p));

	p->sr = stack_reader_new();
	s->state = p;
	return 0;
}

static void ptrace_target_release(struct sampler *s)
{
	struct ptrace_state *p = s->state;

	if (p)
		stack_reader_free(p->sr);
	free(p);
	s->state = NULL;
	/* a thread that woke since its last try is not left stopped after the capture */
	ptrace_release_held(PTRACE_STOP_WAIT_NS);
}

struct exc_read {
	struct sampler *s;
	uint64_t tstate;
};

/* --mode exception: the state again, of the stopped stack's instant (sets s->marker) */
static int read_exception_stopped(void *arg)
{
	struct exc_read *e = arg;

	return pyview_exception(e->s, e->tstate, e->s->marker, sizeof(e->s->marker));
}

/*
 * Each thread the mode counts is read at one instant: stopped while it is
 * read if it is on a CPU; one that is off a CPU (wall, gil and exception
 * modes) is not changing its stack and, for Python frames, is read without
 * stopping it.
 */
static int ptrace_tick(struct sampler *s, uint64_t now)
{
	struct ptrace_state *p = s->state;
	int ret, holds;

	/* The thread list is read live: a copy would predate the stops. */
	if ((ret = sampler_list_threads(s, now)))
		return ret;
	sampler_read_gil(s);
	taskstat_prune(&s->tasks);
	for (size_t i = 0; i < s->ntids && !sampler_stopping(s); i++) {
		pid_t tid = s->tids[i];
		struct py_thread_info *pt = sampler_py_thread(s, tid);
		struct exc_read exc = { s, pt ? pt->tstate : 0 };
		struct while_stopped exc_again = { read_exception_stopped, &exc };

		sampler_thread(s, tid, now);
		if (!pt && !s->opts.native)
			continue;      /* Python frames only, and it has none */
		/* Decided before the stop: stopping a thread changes its state. */
		if (!sampler_mode_filter(s, tid, pt ? pt->tstate : 0, s->gil_holder, s->wait,
					 sizeof(s->wait)))
			continue;
		/*
		 * Python frames only: a waiting thread is read without a stop.
		 * Its native frames need its registers, which only a stop gives
		 * (the bpf backend reads them in the kernel, nothing stopped).
		 */
		if (s->opts.mode != MODE_CPU && !s->opts.native) {
			ret = sampler_record_waiting(s, tid, pt, now);
			if (ret == -ESRCH || ret == -EPERM)
				return ret;
			if (!ret)
				continue;
		}
		ret = ptrace_sample_thread(s->target.pid, tid, s->opts.native ? &s->mm : NULL,
					   &s->reader, pt, s->opts.kernel, p->sr,
					   s->opts.mode == MODE_EXCEPTION ? &exc_again : NULL,
					   s->opts.stop, &s->ns);
		if (ret == -EPERM)
			return -EPERM;
		/* could not be stopped in time (asleep in the kernel): skipped, counted */
		if (ret == -ETIMEDOUT)
			sampler_record_dropped(s, tid, now);
		if (ret) {
			native_sample_clear(&s->ns);
			continue;      /* the thread exited meanwhile */
		}
		/* the handler the check before the stop saw may have ended since */
		if (s->opts.mode == MODE_EXCEPTION && s->ns.stopped_read != 1) {
			native_sample_clear(&s->ns);
			continue;
		}
		holds = pt && s->ns.gil_locked && s->ns.gil_holder == pt->tstate;
		/*
		 * gil mode: the holder chosen at the tick may have let go before
		 * the stop; a thread running without it may have taken it since.
		 */
		if (s->opts.mode == MODE_GIL && holds)
			s->marker[0] = '\0';
		/* what the stopped registers say it does without it: the tick's guess can't tell */
		if (s->opts.mode == MODE_GIL && !holds &&
		    !sampler_gil_marker(s, pt ? pt->tstate : 0, 1, s->ns.syscall_nr,
					s->ns.syscall_arg0)) {
			native_sample_clear(&s->ns);
			continue;
		}
		s->ns.gc = s->ns.collecting && holds;
		sampler_record_native(s, tid, now);
		native_sample_clear(&s->ns);
	}
	return 0;
}

const struct backend_ops backend_ptrace_ops = {
	.name = "ptrace",
	.tick_modes = 1u << MODE_CPU | 1u << MODE_WALL | 1u << MODE_GIL | 1u << MODE_EXCEPTION,
	.target_init = ptrace_target_init,
	.target_release = ptrace_target_release,
	.tick = ptrace_tick,
};
