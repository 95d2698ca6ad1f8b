/*
 * The reader's thread list (reader.h): every interpreter's thread states,
 * their kernel thread ids, and the GIL and the collector as the threads see
 * them.
 */
#include <errno.h>
#include <inttypes.h>

#include "python/reader.h"
#include "python/reader_impl.h"
#include "util/util.h"

#define PTHREAD_SCAN 2048
#define GLIBC_PTHREAD_TID_OFF 0x2d0

/* ---- threads ---------------------------------------------------------- */

/*
 * The interpreters, newest first (runtime->interpreters.head, then each
 * one's next): their ids and thread list heads into r->interps.
 */
static int read_interps(struct py_reader *r)
{
	const struct py_offsets *o = r->off;
	uint64_t interp;
	size_t n = 0;
	int ret;

	r->ninterps = 0;
	r->threads_head_ns = 0;
	ret = mem_read_u64(r->mem, r->target->runtime_addr + (uint64_t)o->runtime_interpreters_head,
			   &interp);
	if (ret)
		return ret;
	while (interp) {
		struct py_interp_seen *i = &r->interps[n];

		if (n == PY_MAX_INTERPS)
			return -EFAULT;
		for (size_t k = 0; k < n; k++)
			if (r->interps[k].addr == interp)
				return -EFAULT;
		i->addr = interp;
		ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_threads_head, &i->threads_head);
		if (!ret)
			ret = mem_read(r->mem, interp + (uint64_t)o->interp_id, &i->id, sizeof(i->id));
		if (!ret)
			ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_next, &interp);
		if (ret)
			return ret;
		n++;
	}
	if (!n)
		return -EAGAIN;
	r->ninterps = n;
	if (n > r->most_interps)
		r->most_interps = n;
	r->threads_head_ns = fw_now_ns();
	return 0;
}

/*
 * The main interpreter: the one with id 0 (the oldest, last in the list);
 * the GIL, the collector and sys.modules are read from it.
 */
static int read_interp(struct py_reader *r, uint64_t *interp)
{
	int ret;

	if (r->interp) {
		*interp = r->interp;
		return 0;
	}
	ret = read_interps(r);
	if (ret)
		return ret;
	r->interp = r->interps[r->ninterps - 1].addr;
	for (size_t k = 0; k < r->ninterps; k++)
		if (r->interps[k].id == 0)
			r->interp = r->interps[k].addr;
	*interp = r->interp;
	return 0;
}

/*
 * <= 3.10 thread states carry only the pthread_t. glibc keeps the kernel tid
 * inside struct pthread; find where once, from a thread whose tid is known
 * to be one of the process's tasks.
 */
static int32_t tid_from_pthread(struct py_reader *r, uint64_t pthread_id)
{
	uint8_t buf[PTHREAD_SCAN];
	pid_t *tids;
	size_t ntids;
	int32_t found = 0;

	if (!pthread_id)
		return 0;
	if (r->pthread_tid_off >= 0) {
		int32_t tid;
		if (mem_read(r->mem, pthread_id + (uint64_t)r->pthread_tid_off, &tid, sizeof(tid)))
			return 0;
		return tid > 0 ? tid : 0;
	}
	if (r->pthread_tid_off == -2 || mem_read(r->mem, pthread_id, buf, sizeof(buf)))
		return 0;
	/* The target's own numbers: in a container they are not ours. */
	if (pidns_target_tids(&r->tids, &tids, &ntids))
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (int off = pass ? 0 : GLIBC_PTHREAD_TID_OFF; off + 4 <= PTHREAD_SCAN; off += 4) {
			int32_t v = load_i32(buf, off);

			for (size_t i = 0; v > 0 && i < ntids; i++) {
				if (tids[i] == v) {
					r->pthread_tid_off = off;
					found = v;
					break;
				}
			}
			if (found || !pass)
				break;
		}
	}
	free(tids);
	return found;
}

static int read_threads(struct py_reader *r, const struct py_offsets *o, uint8_t *buf,
			struct py_thread_info *out, size_t max, size_t *n);

int py_reader_threads(struct py_reader *r, struct py_thread_info *out, size_t max, size_t *n)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[1024];
	size_t count = 0;
	int ret;

	*n = 0;
	if ((size_t)o->tstate_size > sizeof(buf))
		return -EFAULT;
	/* The thread states name each thread's current frame: the copy's anchor. */
	mem_set_order(r->mem, MEM_ORDER_ANCHOR);
	ret = read_threads(r, o, buf, out, max, &count);
	mem_set_order(r->mem, MEM_ORDER_LATE);
	if (!ret)
		*n = count;
	return ret;
}

/*
 * A thread inside Interpreter.exec has a state in its own interpreter
 * (waiting in the exec call) and one in the subinterpreter (running):
 * keep the first with a frame (states are listed newest interpreter
 * first), else the first. Returns the states kept, in order. A state
 * without a tid is kept as it is. Threads are found by tid through a hash
 * index, so thousands of threads cost a pass, not its square.
 */
static uint64_t state_tid_hash(const void *owner, uint32_t id)
{
	return hash_mix64((uint32_t)((const struct py_thread_info *)owner)[id].tid);
}

static size_t one_state_per_thread(struct hidx *by_tid, struct py_thread_info *t, size_t n)
{
	size_t kept = 0;

	hidx_clear(by_tid);
	for (size_t i = 0; i < n; i++) {
		uint64_t h = hash_mix64((uint32_t)t[i].tid);
		uint32_t k = HIDX_NONE;

		if (t[i].tid) {
			size_t pos = hidx_start(by_tid, h);

			for (uint32_t id; (id = hidx_next(by_tid, &pos)) != HIDX_NONE;)
				if (t[id].tid == t[i].tid) {
					k = id;
					break;
				}
		}
		if (k == HIDX_NONE) {
			t[kept] = t[i];
			if (t[kept].tid)
				hidx_insert(by_tid, h, (uint32_t)kept, state_tid_hash, t);
			kept++;
		} else if (!t[k].frame && t[i].frame) {
			t[k] = t[i];
		}
	}
	return kept;
}

void py_reader_interp_label(const struct py_reader *r, const struct py_thread_info *t,
			    char *buf, size_t size)
{
	if (r->most_interps < 2 || !t)
		xsnprintf(buf, size, "%s", "");
	else if (!t->interp_id)
		xsnprintf(buf, size, " [interp main]");
	else
		xsnprintf(buf, size, " [interp %lld]", (long long)t->interp_id);
}

/*
 * How many thread states the lists hold from ts (in interpreter k's list)
 * to the end of the last list: only each state's link is read. A link that
 * cannot be read ends the count (a thread ending as it is walked); a list
 * longer than PY_COUNT_THREADS_MAX (a cycle read while it changed) is
 * counted that far.
 */
static size_t count_states(struct py_reader *r, const struct py_offsets *o, uint64_t ts,
			   size_t k)
{
	size_t n = 0;

	for (size_t j = k; j < r->ninterps; j++) {
		if (j > k)
			ts = r->interps[j].threads_head;
		for (uint64_t next; ts && n < PY_COUNT_THREADS_MAX; ts = next, n++) {
			if (mem_read_u64(r->mem, ts + (uint64_t)o->tstate_next, &next))
				return n + 1;
			if (next == ts)
				return n + 1;
		}
	}
	return n;
}

static int read_threads(struct py_reader *r, const struct py_offsets *o, uint8_t *buf,
			struct py_thread_info *out, size_t max, size_t *n)
{
	uint64_t interp, ts, now;
	size_t count = 0, listed = 0, cap = max < PY_MAX_THREADS ? max : PY_MAX_THREADS;
	int ret;

	ret = read_interp(r, &interp);
	if (ret)
		return ret;
	/*
	 * The heads change only when a thread or an interpreter starts or
	 * ends; at high rates they are re-read every PY_THREADS_HEAD_NS (and
	 * after any failure), which saves a page of target memory per tick.
	 */
	now = fw_now_ns();
	if (!r->threads_head_ns || now - r->threads_head_ns >= PY_THREADS_HEAD_NS) {
		ret = read_interps(r);
		if (ret) {
			r->interp = 0;
			return ret;
		}
	}
	for (size_t k = 0; k < r->ninterps; k++) {
		for (ts = r->interps[k].threads_head; ts;) {
			struct py_thread_info *t;
			uint64_t frame;

			if (count >= cap) {
				/* beyond the cap: counted, not read (reader.h) */
				listed = count + count_states(r, o, ts, k);
				goto capped;
			}
			ret = mem_read(r->mem, ts, buf, (size_t)o->tstate_size);
			if (ret) {
				r->threads_head_ns = 0;
				return ret;
			}
			t = &out[count++];
			t->tstate = ts;
			t->interp_id = r->interps[k].id;
			t->pthread_id = load_u64(buf, o->tstate_thread_id);
			frame = load_u64(buf, o->tstate_frame);
			t->frame_slot = ts + (uint64_t)o->tstate_frame;
			t->cframe = 0;
			if (o->cframe_current_frame != PYOFF_NONE && frame) {
				t->cframe = frame;
				/*
				 * 3.11/3.12: the cframe lives on the C stack: copied
				 * before the anchor, with the C stack below it, where
				 * the cframes of nested evaluations will be.
				 */
				t->frame_slot = frame + (uint64_t)o->cframe_current_frame;
				mem_remember(r->mem, t->frame_slot - C_STACK_WINDOW, C_STACK_WINDOW,
					     MEM_ORDER_EARLY);
				mem_set_order(r->mem, MEM_ORDER_EARLY);
				ret = mem_read_u64(r->mem, t->frame_slot, &frame);
				mem_set_order(r->mem, MEM_ORDER_ANCHOR);
				if (ret)
					return ret;
			}
			t->frame = frame;
			if (o->tstate_native_thread_id != PYOFF_NONE)
				t->tid = (int32_t)load_u64(buf, o->tstate_native_thread_id);
			else
				t->tid = tid_from_pthread(r, t->pthread_id);
			t->tid = pidns_host_tid(&r->tids, t->tid);
			ts = load_u64(buf, o->tstate_next);
			if (ts == t->tstate)
				return -EFAULT;
		}
	}
capped:
	if (!count)
		return -EAGAIN;
	r->threads_listed = listed > count ? listed : count;
	if (listed > count) {
		r->stats.threads_capped++;
		if (listed > r->stats.threads_listed_most)
			r->stats.threads_listed_most = listed;
	}
	if (r->ninterps > 1)
		count = one_state_per_thread(&r->states_by_tid, out, count);
	*n = count;
	return 0;
}

/* Where the GIL's holder and locked flag live: 0 or -errno (-ENOTSUP: no offsets). */
static int gil_addrs(struct py_reader *r, uint64_t *holder, uint64_t *locked)
{
	const struct py_offsets *o = r->off;
	uint64_t base, interp;
	int ret;

	if (o->gil_holder == PYOFF_NONE || o->gil_locked == PYOFF_NONE)
		return -ENOTSUP;
	if (!o->gil_in_interp) {
		base = r->target->runtime_addr;
	} else {
		ret = read_interp(r, &interp);
		if (ret)
			return ret;
		base = interp;
		if (o->interp_gil_ptr != PYOFF_NONE) {
			/* 3.12: interp->ceval.gil points at the GIL */
			ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_gil_ptr, &base);
			if (ret)
				return ret;
			if (!base)
				return -EAGAIN;
		}
	}
	*holder = base + (uint64_t)o->gil_holder;
	*locked = base + (uint64_t)o->gil_locked;
	return 0;
}

static int gc_addr(struct py_reader *r, uint64_t *addr)
{
	const struct py_offsets *o = r->off;
	uint64_t base;
	int ret;

	if (o->gc_collecting == PYOFF_NONE)
		return -ENOTSUP;
	if (o->gc_in_interp) {
		ret = read_interp(r, &base);
		if (ret)
			return ret;
	} else {
		base = r->target->runtime_addr;
	}
	*addr = base + (uint64_t)o->gc_collecting;
	return 0;
}

int py_reader_state_addrs(struct py_reader *r, uint64_t *gil_holder, uint64_t *gil_locked,
			  uint64_t *gc_collecting, uint64_t *threads_head)
{
	uint64_t interp;
	int ret;

	*gil_holder = *gil_locked = *gc_collecting = *threads_head = 0;
	ret = read_interp(r, &interp);
	if (ret)
		return ret;
	*threads_head = interp + (uint64_t)r->off->interp_threads_head;
	ret = gil_addrs(r, gil_holder, gil_locked);
	if (ret && ret != -ENOTSUP)
		return ret;
	ret = gc_addr(r, gc_collecting);
	return ret == -ENOTSUP ? 0 : ret;
}

int py_reader_main_interp(struct py_reader *r, uint64_t *interp)
{
	return read_interp(r, interp);
}

int py_reader_gil(struct py_reader *r, uint64_t *holder, int *locked)
{
	uint64_t holder_addr, locked_addr;
	int32_t lk = 0;
	int ret;

	*holder = 0;
	*locked = 0;
	ret = gil_addrs(r, &holder_addr, &locked_addr);
	if (!ret)
		ret = mem_read_u64(r->mem, holder_addr, holder);
	if (!ret)
		ret = mem_read(r->mem, locked_addr, &lk, sizeof(lk));
	if (ret)
		return ret;
	*locked = lk != 0;
	return 0;
}

int py_reader_gc(struct py_reader *r, int *collecting)
{
	uint64_t addr;
	int32_t v;
	int ret;

	*collecting = 0;
	ret = gc_addr(r, &addr);
	if (!ret)
		ret = mem_read(r->mem, addr, &v, sizeof(v));
	if (ret)
		return ret;
	*collecting = v != 0;
	return 0;
}

