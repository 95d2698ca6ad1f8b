/*
 * Implementation of ptrace.h: a thread read while it is stopped (stopping
 * and letting go are target/ptrace.h's), and the ptrace backend. While the
 * thread is stopped, its registers, one copy of its live stack (from just
 * below sp to where its outermost frame was last seen, in one system call)
 * and its Python frames are read; it is detached before the native walk,
 * which runs over the copy, and names and merging come after that. What is
 * stopped is one thread at a time, for its read: the first thread on a CPU
 * from the start of a tick, before anything of its process is read
 * (sampler_tick says why), the others when their turn comes; a waiting
 * thread is read without a stop where its Python frames are all that is
 * read.
 */
#include <errno.h>
#include <string.h>
#include <signal.h>
#include <sys/uio.h>

#include "arch/arch.h"
#include "sampler/backend.h"
#include "sampler/ptrace.h"
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

int ptrace_first_stop(pid_t pid, pid_t tid, int kernel, const volatile sig_atomic_t *stop,
		      struct first_stop *fs)
{
	int ret;

	fs->tid = 0;
	/*
	 * The kernel stack is read before the thread is stopped: stopping it
	 * interrupts a blocking system call, whose path would be replaced by the
	 * ptrace stop's own. A thread running user code has no kernel stack.
	 */
	fs->nkernel = kernel ? kernel_stack_read(pid, tid, fs->kernel, KERNEL_MAX_FRAMES) : 0;
	fs->t0 = fw_now_ns();
	ret = ptrace_stop_thread(tid, stop, &fs->sig);
	if (ret) {
		for (size_t i = 0; i < fs->nkernel; i++)
			free(fs->kernel[i]);
		fs->nkernel = 0;
		return ret;
	}
	fs->tid = tid;
	return 0;
}

void ptrace_first_let_go(struct first_stop *fs)
{
	if (!fs->tid)
		return;
	ptrace_resume_thread(fs->tid, fs->sig);
	for (size_t i = 0; i < fs->nkernel; i++)
		free(fs->kernel[i]);
	fs->nkernel = 0;
	fs->tid = 0;
}

int ptrace_sample_thread(pid_t pid, pid_t tid, struct module_map *mm, struct py_reader *r,
			 struct py_thread_info *py_thread, int kernel, struct stack_reader *sr,
			 const struct while_stopped *also, const volatile sig_atomic_t *stop,
			 struct first_stop *first, struct native_sample *out)
{
	struct arch_regs regs;
	struct first_stop now;
	uint64_t t0, t1;
	int sig, ret;

	native_sample_clear(out);
	/* not stopped first: stopped now, the same way */
	if (!first || first->tid != tid) {
		if ((ret = ptrace_first_stop(pid, tid, kernel, stop, &now)))
			return ret;
		first = &now;
	}
	memcpy(out->kernel, first->kernel, first->nkernel * sizeof(*first->kernel));
	out->nkernel = first->nkernel;
	first->nkernel = 0;
	first->tid = 0;
	t0 = first->t0;
	sig = first->sig;
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
	out->read_ns = t1;
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
	struct first_stop first;   /* this tick's thread stopped first (tid 0: none) */
	int copying;               /* the tick's copy serves while it is held */
};

/*
 * While the first thread on a CPU is held, what the last hold read of the
 * process (its thread list, the GIL, this thread's frames and their code)
 * is copied again in one system call and this hold's reads are served from
 * that copy, taken at the stop's instant, instead of one call each while
 * it waits. Only a hold's reads are remembered for the next copy: the
 * reads of other threads after it (wall mode's waiting ones) would make the
 * next hold copy them all (up to 512 KiB) while its thread waits.
 */
static void held_copy_begin(struct sampler *s, struct ptrace_state *p)
{
	if (p->copying)
		return;
	mem_uncached_end(&s->mem);
	mem_tick_begin(&s->mem);
	p->copying = 1;
}

static void held_copy_end(struct sampler *s, struct ptrace_state *p)
{
	if (!p->copying)
		return;
	mem_tick_end(&s->mem);
	mem_uncached_begin(&s->mem);
	p->copying = 0;
}

static int ptrace_target_init(struct sampler *s)
{
	struct ptrace_state *p = xcalloc(1, sizeof(*p));

	p->sr = stack_reader_new();
	s->state = p;
	mem_uncached_begin(&s->mem);       /* nothing remembered outside a hold */
	return 0;
}

static void ptrace_target_release(struct sampler *s)
{
	struct ptrace_state *p = s->state;

	if (p) {
		held_copy_end(s, p);
		mem_uncached_end(&s->mem);
		stack_reader_free(p->sr);
		ptrace_first_let_go(&p->first);
	}
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

/* What the loop reads at the stop's instant (sampler_read_at_instant). */
static int read_while_stopped(void *arg)
{
	struct stopped_read *e = arg;

	return sampler_read_at_instant(e->s, e->tid, e->tstate);
}

/*
 * A thread on a CPU, stopped before the tick reads anything of its process
 * (sampler_tick says why); ptrace_read_instant reads it, ptrace_tick_done
 * lets go of the rest.
 */
static int ptrace_stop_first(struct sampler *s, pid_t tid)
{
	struct ptrace_state *p = s->state;
	int ret;

	held_copy_end(s, p);
	ptrace_first_let_go(&p->first);
	ret = ptrace_first_stop(s->target.pid, tid, s->opts.kernel, s->opts.stop, &p->first);
	if (!ret)
		held_copy_begin(s, p);
	return ret;
}

static void ptrace_tick_done(struct sampler *s)
{
	struct ptrace_state *p = s->state;

	held_copy_end(s, p);
	ptrace_first_let_go(&p->first);
}

/*
 * A thread on a CPU, read while it is stopped: its registers, stack and
 * Python frames (ptrace_sample_thread), and what the loop reads at that
 * instant. Which threads, and what is kept, is the loop's (sampler_tick).
 */
static int ptrace_read_instant(struct sampler *s, pid_t tid, struct py_thread_info *pt,
			       struct thread_instant *in)
{
	struct ptrace_state *p = s->state;
	struct stopped_read rd = { s, tid, pt ? pt->tstate : 0 };
	struct while_stopped stopped = { read_while_stopped, &rd };
	int ret;

	ret = ptrace_sample_thread(s->target.pid, tid, s->opts.native ? &s->native.mm : NULL,
				   &s->reader, pt, s->opts.kernel, p->sr, &stopped, s->opts.stop,
				   &p->first, &s->native.ns);
	held_copy_end(s, p);        /* let go: its copy no longer stands for it */
	if (ret)
		return ret;
	in->tstate = pt ? pt->tstate : 0;
	in->on_cpu = 1;
	in->gil_locked = s->native.ns.gil_locked;
	in->gil_holder = s->native.ns.gil_holder;
	in->syscall_nr = s->native.ns.syscall_nr;
	in->syscall_arg0 = s->native.ns.syscall_arg0;
	in->collecting = s->native.ns.collecting;
	in->handling = s->native.ns.stopped_read == 1;
	in->at_ns = s->native.ns.read_ns;
	return 0;
}

const struct backend_ops backend_ptrace_ops = {
	.tick_modes = EVERY_MODE,
	.target_init = ptrace_target_init,
	.target_release = ptrace_target_release,
	.read_instant = ptrace_read_instant,
	.stop_first = ptrace_stop_first,
	.tick_done = ptrace_tick_done,
};
