/*
 * The vm backend: reads every thread's Python stack with process_vm_readv
 * only, never stopping the target. A tick copies, in one call, what the
 * previous tick read (target/memory.h's prefetch) and walks each thread's
 * frames from that copy; a torn read drops that one thread's sample and
 * counts an error.
 */
#include <errno.h>

#include "sampler/backend.h"
#include "util/util.h"

/* Threads that moved during the tick's copy: their own spans copied again, this much per tick. */
#define RETAKE_TRIES 32
#define RETAKE_BUDGET_NS 200000ull
/*
 * Next tick's prefetch checks, before and after its copy, each thread's
 * innermost-frame pointer and the instruction pointers of its nearest
 * callers seen this tick: those change only when a call ends, which is when
 * a copy can mix two moments (even when the same frame address is reused at
 * once). A guard that moved makes only its own thread be read live.
 */
#define GUARDED_CALLERS 2

struct vm_state {
	uint8_t *deferred;        /* this tick: read after the others (guards moved) */
	struct mem_guard guards[MEM_MAX_GUARDS];  /* words the next prefetch re-checks */
	size_t nguards;
};

static int vm_target_init(struct sampler *s)
{
	struct vm_state *v = xcalloc(1, sizeof(*v));

	v->deferred = xcalloc(PY_MAX_THREADS, sizeof(*v->deferred));
	s->state = v;
	s->mem.prefetch = 1;
	return 0;
}

static void vm_target_release(struct sampler *s)
{
	struct vm_state *v = s->state;

	if (v)
		free(v->deferred);
	free(v);
	s->state = NULL;
}

static int is_gone(int ret)
{
	return ret == -ESRCH || ret == -EPERM;
}

/*
 * Part of a walk came live from the target, not from the tick's one-call
 * copy: if the thread's innermost frame changed meanwhile, the frames may
 * mix two moments (<= 3.10 chains carry no end marker to tell).
 */
static int moved_meanwhile(struct sampler *s, const struct py_thread_info *t)
{
	struct py_thread_info now = *t;
	int active = s->mem.snap_active;

	s->mem.snap_active = 0;
	if (py_reader_thread_frame(&s->reader, &now))
		now.frame = 0;
	s->mem.snap_active = active;
	return now.frame != t->frame;
}

static void add_guard(struct vm_state *v, uint64_t addr, uint32_t len, uint64_t owner)
{
	if (addr && v->nguards < MEM_MAX_GUARDS) {
		v->guards[v->nguards].addr = addr;
		v->guards[v->nguards].len = len;
		v->guards[v->nguards++].owner = owner;
	}
}

/*
 * From 3.11 the callers' frames lie one after another on the thread's data
 * stack and none of their bytes change while they wait for their callee, so
 * the bytes from one guarded instruction pointer to the other are checked
 * as one range: one remote read instead of one per caller.
 */
static void guard_callers(struct sampler *s, const struct py_thread_info *t,
			  const struct py_frame_info *f, size_t depth)
{
	const struct py_offsets *o = &s->target.offsets;
	struct vm_state *v = s->state;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t k;

	for (k = 1; k < depth && k <= GUARDED_CALLERS; k++) {
		uint64_t a = f[k].addr + (uint64_t)o->frame_instr;

		lo = a < lo ? a : lo;
		hi = a + 8 > hi ? a + 8 : hi;
	}
	if (k == 1)
		return;
	if (o->version_hex >= 0x030b0000 && hi - lo <= MEM_MAX_GUARD_LEN) {
		add_guard(v, lo, (uint32_t)(hi - lo), t->tstate);
		return;
	}
	for (k = 1; k < depth && k <= GUARDED_CALLERS; k++)
		add_guard(v, f[k].addr + (uint64_t)o->frame_instr, 8, t->tstate);
}

/*
 * Read one thread's stack: from the tick's copy, or live when its guards
 * moved during the copy. A walk that read anything live is kept only if
 * the thread's innermost frame is still the same afterwards.
 */
static int read_thread_stack(struct sampler *s, struct py_thread_info *t, size_t *depth)
{
	int active = s->mem.snap_active, ret;
	uint64_t live_reads = s->mem.reads;

	if (active && mem_owner_moved(&s->mem, t->tstate)) {
		s->mem.snap_active = 0;
		ret = py_reader_thread_frame(&s->reader, t);
		if (!ret && !t->frame)
			ret = -EAGAIN;
		if (!ret)
			ret = py_reader_stack(&s->reader, t, s->frames, PY_MAX_DEPTH, depth);
		s->mem.snap_active = active;
	} else {
		ret = py_reader_stack(&s->reader, t, s->frames, PY_MAX_DEPTH, depth);
	}
	if (!ret && s->mem.reads != live_reads && moved_meanwhile(s, t))
		ret = -EAGAIN;
	return ret;
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
		for (size_t i = 0; i < s->nnames && !c; i++)
			if (s->names[i].tid == tid)
				c = &s->names[i];
	}
	moved = !c || c->leaf_addr != leaf->addr || c->leaf_instr != leaf->instr;
	if (c) {
		c->leaf_addr = leaf->addr;
		c->leaf_instr = leaf->instr;
	}
	if (!moved)
		sampler_mode_filter(s, tid, 0, 0, wait, size);
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
	    !sampler_mode_filter(s, t->tid, t->tstate, s->gil_holder, wait, sizeof(wait)))
		return 0;
	wait[0] = '\0';
	ret = read_thread_stack(s, t, &depth);
	if (is_gone(ret))
		return ret;
	if (ret || depth == 0) {
		sampler_record_dropped(s, t->tid, now);
		return 0;
	}
	guard_callers(s, t, s->frames, depth);
	if (s->opts.mode == MODE_WALL)
		wall_wait_leaf(s, t->tid, &s->frames[0], wait, sizeof(wait));
	sampler_record_python(s, t->tid, s->frames, depth,
			      gc_thread && t->tstate == gc_thread && depth < PY_MAX_DEPTH, wait, now);
	return 0;
}

/*
 * A thread whose guards moved during the tick's copy: copy its own spans
 * again between its guards, up to RETAKE_TRIES times while the tick's
 * budget lasts, so a thread that calls functions every microsecond is read
 * whole rather than dropped.
 */
static void retake_thread(struct sampler *s, struct py_thread_info *t, uint64_t until)
{
	for (int tries = 0; tries < RETAKE_TRIES && fw_now_ns() < until; tries++) {
		if (!mem_retake_owner(&s->mem, t->tstate)) {
			if (py_reader_thread_frame(&s->reader, t))
				t->frame = 0;
			return;
		}
	}
}

static int sample_threads(struct sampler *s, uint64_t now)
{
	struct vm_state *v = s->state;
	size_t nthreads;
	uint64_t gc_thread, retake_until;
	int ret;

	ret = py_reader_threads(&s->reader, s->threads, PY_MAX_THREADS, &nthreads);
	if (ret == -EAGAIN) {
		s->not_ready_ticks++;
		return 0;
	}
	if (is_gone(ret))
		return ret;
	if (ret) {
		s->prof->meta.errors++;
		return 0;
	}
	sampler_read_gil(s);
	v->nguards = 0;
	for (size_t i = 0; i < nthreads; i++)
		add_guard(v, s->threads[i].frame_slot, 8, s->threads[i].tstate);
	gc_thread = sampler_gc_thread(s);
	/*
	 * Threads whose guards held still are read from the tick's copy first;
	 * the others get their own spans copied again (which may refresh data
	 * the first ones share) and are read after.
	 */
	for (size_t i = 0; i < nthreads; i++) {
		v->deferred[i] = s->mem.snap_active && mem_owner_moved(&s->mem, s->threads[i].tstate);
		if (!v->deferred[i] && (ret = sample_one_thread(s, &s->threads[i], now, gc_thread)))
			return ret;
	}
	retake_until = fw_now_ns() + RETAKE_BUDGET_NS;
	for (size_t i = 0; i < nthreads; i++) {
		if (!v->deferred[i])
			continue;
		retake_thread(s, &s->threads[i], retake_until);
		if ((ret = sample_one_thread(s, &s->threads[i], now, gc_thread)))
			return ret;
	}
	return 0;
}

static int vm_tick(struct sampler *s, uint64_t now)
{
	struct vm_state *v = s->state;
	int ret;

	taskstat_prune(&s->tasks);
	mem_tick_begin(&s->mem);
	ret = sample_threads(s, now);
	mem_tick_end(&s->mem);
	mem_set_guards(&s->mem, v->guards, v->nguards);
	return ret;
}

const struct backend_ops backend_vm_ops = {
	.name = "vm",
	.tick_modes = 1u << MODE_CPU | 1u << MODE_WALL | 1u << MODE_GIL,
	.target_init = vm_target_init,
	.target_release = vm_target_release,
	.tick = vm_tick,
};
