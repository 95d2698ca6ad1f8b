/*
 * Implementation of ptrace.h: a thread read while it is stopped (stopping
 * and letting go are target/ptrace.h's), and the ptrace backend. While the
 * thread is stopped, its registers, one copy of its live stack (from just
 * below sp to where its outermost frame was last seen, in one system call)
 * and its Python frames are read; it is detached before the native walk,
 * which runs over the copy, and names and merging come after that. What is
 * stopped is only the one thread, and only for the reading.
 */
#include <errno.h>
#include <signal.h>
#include <sys/uio.h>

#include "arch/arch.h"
#include "sampler/backend.h"
#include "sampler/labels.h"
#include "sampler/ptrace.h"
#include "sampler/pyview.h"
#include "target/proc.h"
#include "target/ptrace.h"
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

struct stopped_read {
	struct sampler *s;
	pid_t tid;
	uint64_t tstate;
};

/*
 * Read while the thread is stopped, of its stack's instant: its context
 * (--label) and, in --mode exception, its exception state again (sets
 * s->marker; what it returns is kept as stopped_read).
 */
static int read_while_stopped(void *arg)
{
	struct stopped_read *e = arg;

	if (e->tstate)
		labels_read(e->s, e->tid, e->tstate);
	if (e->s->opts.mode != MODE_EXCEPTION)
		return 0;
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
	struct thread_instant in;
	int ret, holds;

	/* The thread list is read live: a copy would predate the stops. */
	if ((ret = sampler_tick_begin(s, now)))
		return ret;
	for (size_t i = 0; i < s->ntids && !sampler_stopping(s); i++) {
		pid_t tid = s->tids[i];
		struct py_thread_info *pt = sampler_tick_thread(s, i, now);
		struct stopped_read rd = { s, tid, pt ? pt->tstate : 0 };
		struct while_stopped stopped = { read_while_stopped, &rd };

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
					   s->opts.mode == MODE_EXCEPTION || s->labels ? &stopped : NULL,
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
		/*
		 * the mode's rule at the stop's instant: the holder chosen at the
		 * tick may have let go before it, and what a thread does without
		 * the GIL only its stopped registers tell
		 */
		in.tstate = pt ? pt->tstate : 0;
		in.on_cpu = 1;
		in.gil_locked = s->ns.gil_locked;
		in.gil_holder = s->ns.gil_holder;
		in.syscall_nr = s->ns.syscall_nr;
		in.syscall_arg0 = s->ns.syscall_arg0;
		if (!sampler_instant_keep(s, &in, &holds)) {
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
	.tick_modes = 1u << MODE_CPU | 1u << MODE_WALL | 1u << MODE_GIL | 1u << MODE_EXCEPTION,
	.target_init = ptrace_target_init,
	.target_release = ptrace_target_release,
	.tick = ptrace_tick,
};
