/*
 * The vm backend: reads every thread's Python stack with process_vm_readv
 * only, never stopping the target. A tick copies, in one system call, what
 * the previous tick read (target/memory.h), in the order that keeps a copy
 * of a changing stack consistent (a thread's C-stack frames, then its thread
 * state, then its frames), and walks each thread's frames from that copy.
 *
 * A copy spans a microsecond or two while short calls change the stack
 * every ~100 ns, so some copies mix moments. A reader that drops or re-reads
 * what changed keeps exactly the moments when nothing changes, i.e. long
 * callers, and under-counts short callees (docs/BENCHMARKS.md, "Accuracy").
 * So nothing is re-read or checked for change: a chain is kept as it was
 * copied (a frame just popped keeps its contents, a slot just reused holds
 * whatever runs there, in proportion to its time), a generator copied just
 * after it yielded is placed at its last caller (python/reader.c), and only
 * a chain that cannot be placed (invalid, or cut short) is dropped and
 * counted.
 */
#include <errno.h>
#include <sched.h>

#include "sampler/backend.h"
#include "sampler/labels.h"
#include "util/util.h"

struct vm_state {
	pid_t follow;             /* the thread to follow; -1 none (several threads) */
};

/*
 * This process's CPU affinity is one for all its targets: taken before the
 * first vm target starts, put back when the last one is released, and a
 * target is followed onto its CPU only while no other target is being
 * sampled (several, as --subprocesses or the agent give, would each repin
 * the one profiler thread every tick; one that exited is no longer ticked,
 * and after ALONE_NS the one left is followed again).
 */
#define ALONE_NS 500000000ull
static struct {
	cpu_set_t original;
	int have_original;
	int pinned;               /* the affinity was changed */
	int cannot_pin;           /* a target's CPU is not ours to run on */
	unsigned targets;         /* vm targets made and not released */
	pid_t last_ticked;        /* the target ticked last ... */
	uint64_t other_ns;        /* ... and when a tick last came from another */
} affinity;

static void affinity_restore(void)
{
	if (affinity.pinned && affinity.have_original &&
	    !sched_setaffinity(0, sizeof(affinity.original), &affinity.original))
		affinity.pinned = 0;
}

static int vm_target_init(struct sampler *s)
{
	struct vm_state *v = xcalloc(1, sizeof(*v));

	s->reader.place_live = 1;
	if (!affinity.targets++) {
		affinity.have_original = !sched_getaffinity(0, sizeof(affinity.original),
							    &affinity.original);
		affinity.pinned = affinity.cannot_pin = 0;
		affinity.last_ticked = 0;
		affinity.other_ns = 0;
	}
	s->state = v;
	return 0;
}

static void vm_target_release(struct sampler *s)
{
	if (s->state && !--affinity.targets)
		affinity_restore();
	free(s->state);
	s->state = NULL;
}

/*
 * Read a running interpreter from the CPU it runs on. While this thread
 * runs there, the scheduler keeps the target's thread off that CPU, so the
 * tick's copy (a microsecond or two) sees one moment of it instead of a
 * stack that changes every ~100 ns under the copy; the target waits those
 * microseconds, as for any process sharing its CPU, and is never stopped.
 * The thread followed is the interpreter's only thread (running_thread).
 * Where this process
 * may not run on that CPU (a container's cpuset refuses it), it reads from
 * where it is; its own affinity is put back at the end.
 */
static void follow_target(struct sampler *s, struct vm_state *v, uint64_t now)
{
	pid_t tid = v->follow > 0 ? v->follow : s->target.pid;
	cpu_set_t set;
	char state;
	int cpu;

	if (affinity.last_ticked != s->target.pid) {
		if (affinity.last_ticked)
			affinity.other_ns = now;
		affinity.last_ticked = s->target.pid;
	}
	if (s->opts.vm_cpu == VM_CPU_ANY)
		return;         /* --vm-cpu any: wherever the scheduler puts this process */
	if (v->follow < 0 || (affinity.other_ns && now - affinity.other_ns < ALONE_NS)) {
		/* Threads were started, or other targets: run where the scheduler likes. */
		affinity_restore();
		return;
	}
	if (affinity.cannot_pin || taskstat_state_cpu(&s->tasks, tid, &state, &cpu) || state != 'R' ||
	    cpu < 0 || cpu >= CPU_SETSIZE || cpu == sched_getcpu())
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		affinity.cannot_pin = 1;
	else
		affinity.pinned = 1;
}

/*
 * The thread to follow: an interpreter's only thread. With several (sharing
 * the GIL), following the holder measured worse than not following at all
 * (38 against 10 points on two threads trading the GIL: docs/BENCHMARKS.md),
 * so none is followed.
 */
static pid_t running_thread(struct sampler *s, size_t nthreads)
{
	return nthreads == 1 ? s->threads.py[0].tid : -1;
}

static int is_gone(int ret)
{
	return ret == -ESRCH || ret == -EPERM;
}

/*
 * Wall mode: is the thread waiting, and in what? A thread whose innermost
 * Python frame or instruction moved since the last tick has been running;
 * only one that stands still can be blocked, and only then is its state read
 * (one system call saved per running thread per tick).
 */
static void wall_wait_leaf(struct sampler *s, pid_t tid, const struct py_frame_info *leaf,
			   char *wait, size_t size)
{
	struct thread_name_cache *c = NULL;
	int moved;

	wait[0] = '\0';
	if (tid > 0) {
		sampler_thread(s, tid, fw_now_ns());
		c = sampler_thread_cache(s, tid);
	}
	moved = c && c->leaf_addr && (c->leaf_addr != leaf->addr || c->leaf_instr != leaf->instr);
	if (c) {
		c->leaf_addr = leaf->addr;
		c->leaf_instr = leaf->instr;
	}
	if (!moved)
		sampler_wait_label(s, tid, wait, size);
}

/* Read one thread's stack and add it to the profile. 0, or the target is gone. */
static int sample_one_thread(struct sampler *s, struct py_thread_info *t, uint64_t now,
			     uint64_t gc_thread)
{
	char wait[192];
	size_t depth;
	int ret;

	if (t->tid > 0)
		sampler_thread(s, t->tid, now);   /* counted in the time summary */
	if (!t->frame)
		return 0;     /* no Python code running in this thread */
	if (s->opts.mode != MODE_WALL &&
	    !sampler_mode_filter(s, t->tid, t->tstate, s->tick.gil_holder, wait, sizeof(wait)))
		return 0;
	wait[0] = '\0';
	/*
	 * its context (--label) before its stack and after it: the thread runs
	 * on while it is read, and a stack read while a request ended is of
	 * either (93.5-100% right with one read after, 3.15's threads)
	 */
	labels_read_first(s, t->tid, t->tstate);
	ret = py_reader_stack(&s->reader, t, s->frames, PY_MAX_DEPTH, &depth);
	if (is_gone(ret))
		return ret;
	if (ret || depth == 0 || labels_confirm(s, t->tid, t->tstate)) {
		labels_take(s, t->tid);
		sampler_record_dropped(s, t->tid, now);
		return 0;
	}
	if (sample_mode_waits(s->opts.mode))
		wall_wait_leaf(s, t->tid, &s->frames[0], wait, sizeof(wait));
	sampler_weigh_read(s, fw_now_ns());
	sampler_record_python(s, t->tid, s->frames, depth,
			      gc_thread && t->tstate == gc_thread && depth < PY_MAX_DEPTH, wait, now);
	return 0;
}

static int vm_tick(struct sampler *s, uint64_t now)
{
	uint64_t gc_thread;
	int ret;

	struct vm_state *v = s->state;

	taskstat_prune(&s->tasks);
	follow_target(s, v, now);
	mem_tick_begin(&s->mem);
	ret = sampler_read_py_threads(s);
	if (ret == -EAGAIN) {
		s->not_ready_ticks++;
		ret = 0;
		goto out;
	}
	if (ret) {
		if (!is_gone(ret)) {
			s->prof->meta.errors++;
			ret = 0;
		}
		goto out;
	}
	sampler_read_gil(s);
	gc_thread = sampler_gc_thread(s);
	for (size_t i = 0; i < s->threads.npy && !ret; i++)
		ret = sample_one_thread(s, &s->threads.py[i], now, gc_thread);
	v->follow = running_thread(s, s->threads.npy);
out:
	mem_tick_end(&s->mem);
	return ret;
}

const struct backend_ops backend_vm_ops = {
	.tick_modes = EVERY_MODE,
	.target_init = vm_target_init,
	.target_release = vm_target_release,
	.tick = vm_tick,
};
