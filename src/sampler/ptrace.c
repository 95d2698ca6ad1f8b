/*
 * Implementation of ptrace.h. While the thread is stopped, its registers,
 * one copy of its live stack (from just below sp to where its outermost
 * frame was last seen, in one system call) and its Python frames are read;
 * it is detached before the native walk, which runs over the copy, and
 * names and merging come after that. What is stopped is only the one thread,
 * and only for the reading.
 */
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "sampler/ptrace.h"
#include "util/util.h"

/* Below sp: the red zone, where an epilogue's CFI can still find registers. */
#define BELOW_SP 256
/* A thread's first copy, and the most a deeper stack may get. */
#define FIRST_COPY (64u << 10)
#define MAX_COPY (1u << 20)
/* Room past the last word a complete walk read (the outermost frame). */
#define END_SLACK 64
#define STACK_ENDS 256

struct stack_end {
	pid_t tid;
	uint64_t end;               /* where its stack ends, 0: not known yet */
	uint32_t want;              /* bytes to copy while end is unknown */
};

struct stack_reader {
	pid_t pid;
	uint8_t *data;              /* the copy: [base, base + len) */
	size_t alloc;
	uint64_t base;
	size_t len;
	uint64_t read_end;          /* highest byte the walk read + 1 */
	int beyond;                 /* the walk wanted a word past the copy */
	struct stack_end ends[STACK_ENDS];   /* per thread, by tid % STACK_ENDS */
};

/* How many bytes from base this thread's copy needs. */
static size_t copy_size(struct stack_reader *sr, pid_t tid, uint64_t base)
{
	struct stack_end *e = &sr->ends[(unsigned)tid % STACK_ENDS];

	if (e->tid != tid) {
		e->tid = tid;
		e->end = 0;
		e->want = FIRST_COPY;
	}
	if (e->end > base && e->end - base <= MAX_COPY)
		return (size_t)(e->end - base);
	return e->want;
}

/* Read [base, base + size) of the stopped thread: as much as is mapped. */
static void stack_copy(struct stack_reader *sr, uint64_t base, size_t size)
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
	sr->base = base;
	sr->len = n > 0 ? (size_t)n : 0;
	sr->read_end = 0;
	sr->beyond = 0;
}

static int stack_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct stack_reader *sr = ctx;

	if (addr < sr->base || addr + 8 < addr || addr + 8 > sr->base + sr->len) {
		if (addr >= sr->base + sr->len)
			sr->beyond = 1;
		return -EFAULT;
	}
	memcpy(val, sr->data + (addr - sr->base), 8);
	if (addr + 8 > sr->read_end)
		sr->read_end = addr + 8;
	return 0;
}

/*
 * After a walk: a complete one tells where the thread's stack ends (the
 * next copies stop there); one that ran past the copy asks for more.
 */
static void learn_stack_end(struct stack_reader *sr, pid_t tid, const struct unwind_result *uw)
{
	struct stack_end *e = &sr->ends[(unsigned)tid % STACK_ENDS];

	if (e->tid != tid)
		return;
	if (sr->beyond) {
		e->end = 0;
		if (sr->len == e->want && e->want < MAX_COPY)
			e->want *= 2;
		return;
	}
	if (uw->end == UNWIND_END_COMPLETE && sr->read_end)
		e->end = (sr->read_end + END_SLACK + 15) & ~15ull;
}

void native_sample_clear(struct native_sample *ns)
{
	for (size_t i = 0; i < ns->nkernel; i++)
		free(ns->kernel[i]);
	ns->nkernel = 0;
	ns->npy = 0;
	ns->py_ok = 0;
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

/* Wait for the interrupt to stop tid. 0 stopped, -ESRCH gone. *sig: a signal to re-deliver. */
static int wait_stopped(pid_t tid, int *sig)
{
	int status;

	*sig = 0;
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -ESRCH;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP)
			return 0;
		/* A signal arrived first: the thread is stopped anyway. */
		*sig = WSTOPSIG(status);
		return 0;
	}
}

int ptrace_stop_thread(pid_t tid, int *sig)
{
	int ret;

	*sig = 0;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return errno == EPERM ? -EPERM : -ESRCH;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -ESRCH;
	}
	ret = wait_stopped(tid, sig);
	return ret;     /* -ESRCH: the thread exited, nothing to detach */
}

void ptrace_resume_thread(pid_t tid, int sig)
{
	ptrace(PTRACE_DETACH, tid, 0, sig);
}

struct stack_reader *stack_reader_new(void)
{
	return xcalloc(1, sizeof(struct stack_reader));
}

void stack_reader_free(struct stack_reader *sr)
{
	if (sr)
		free(sr->data);
	free(sr);
}

int ptrace_sample_thread(pid_t pid, pid_t tid, struct module_map *mm, struct py_reader *r,
			 struct py_thread_info *py_thread, int kernel, struct stack_reader *sr,
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
	ret = ptrace_stop_thread(tid, &sig);
	if (ret)
		return ret;
	/* Everything below runs while the thread is stopped; detach follows. */
	ret = arch_ptrace_getregs(tid, &regs);
	/* Read before the stop; stale if the thread has since left the kernel. */
	if (!ret && !regs.in_syscall) {
		for (size_t i = 0; i < out->nkernel; i++)
			free(out->kernel[i]);
		out->nkernel = 0;
	}
	if (!ret) {
		uint64_t base = regs.r[arch_reg_sp] - BELOW_SP;

		sr->pid = pid;
		stack_copy(sr, base, copy_size(sr, tid, base));
		if (py_thread && !py_reader_thread_frame(r, py_thread) && py_thread->frame)
			out->py_ok = py_reader_stack(r, py_thread, out->py, PY_MAX_DEPTH, &out->npy) == 0;
	}
	t1 = fw_now_ns();
	ptrace_resume_thread(tid, sig);
	out->stopped_ns = t1 - t0;
	if (!ret) {
		unwind_stack(mm, &regs, stack_read, sr, &out->uw);
		learn_stack_end(sr, tid, &out->uw);
	}
	return ret;
}
