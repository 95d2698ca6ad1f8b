/*
 * Implementation of asyncio.h: tasks, their await chains and who awaits
 * them, read with objects.h and the reader's single-frame read. The
 * version-specific parts are the layouts (python/offsets.h: the objects
 * layout and the measured C Future/Task layout; 3.14+ the interpreter's own
 * .AsyncioDebug section) and three switches on them: where a coroutine's
 * frame is (inside it, or a pointer), where its value stack's top is, and
 * whether who-awaits-whom is kept by the interpreter (3.14+) or read from
 * done-callbacks.
 */
#include <errno.h>

#include "python/asyncio.h"
#include "python/discover.h"
#include "util/util.h"

#define TASK_READ_MAX 512
#define CALLBACKS_MAX 64
#define CLOSURE_MAX 32
#define SECTION_RETRY_NS 1000000000ull
#define RESCAN_NS 200000000ull
#define COROS_MAX (1u << 17)

struct py_async_label {
	struct py_code code;        /* marker: code.name is the text */
	uint64_t hash;
};

/* A task as read: C (layout) or pure-Python (attributes). */
struct task_info {
	uint64_t addr;
	int c_task;
	uint64_t coro, loop, fut_waiter, name;
	uint64_t context;           /* its own PyContext, 0: unread (as read: checked by its reader) */
	int pending;
};

/* Low bits of a tagged reference (3.14+ _PyStackRef), cleared. */
static uint64_t untag(const struct py_async *a, uint64_t v)
{
	int32_t mask = a->r->off->frame_code_tagged;

	return mask != PYOFF_NONE && mask > 0 ? v & ~(uint64_t)mask : v & ~(uint64_t)7;
}

int py_async_supported(int minor, int free_threaded, struct strbuf *why)
{
	const struct py_offsets *builtin = py_offsets_builtin(minor);

	if (free_threaded) {
		strbuf_addf(why, "--async is not supported on free-threaded builds (Python 3.%dt)", minor);
		return -ENOTSUP;
	}
	/*
	 * <= 3.10 the running task reads right but a suspended coroutine's
	 * awaited object is not reliably on its value stack: refused rather
	 * than shown half right.
	 */
	if (minor < 11) {
		strbuf_addf(why, "--async is not supported on Python 3.%d (asyncio task stacks "
			    "need CPython 3.11 or later)", minor);
		return -ENOTSUP;
	}
	if (!py_asyncio_layout(minor) || (builtin && !builtin->objects.known) ||
	    (!builtin && !py_debug_layout(minor, 0))) {
		strbuf_addf(why, "--async is not supported on Python 3.%d", minor);
		return -ENOTSUP;
	}
	return 0;
}

int py_async_init(struct py_async *a, struct py_reader *r, struct py_objects *ob,
		  struct strbuf *why)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->r = r;
	a->ob = ob;
	ret = py_async_supported(r->target->minor, r->off->free_threaded, why);
	if (ret)
		return ret;
	if (!ob || !ob->lo || !ob->lo->known) {
		strbuf_addf(why, "--async is not supported on Python %s", r->target->version);
		return -ENOTSUP;
	}
	a->al = py_asyncio_layout(r->target->minor);
	a->debug_wanted = r->target->minor >= 14;
	return 0;
}

void py_async_release(struct py_async *a)
{
	for (size_t i = 0; i < a->labels_cap; i++) {
		if (a->labels && a->labels[i]) {
			free(a->labels[i]->code.name);
			free(a->labels[i]);
		}
	}
	free(a->labels);
	free(a->coros);
	memset(a, 0, sizeof(*a));
}

/* ---- labels: "[task] NAME", "[await] WHAT" -------------------------------- */

static uint64_t text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

static size_t label_slot(const struct py_async *a, const char *text, uint64_t h)
{
	size_t i = (size_t)h & (a->labels_cap - 1);

	while (a->labels[i] && (a->labels[i]->hash != h || strcmp(a->labels[i]->code.name, text)))
		i = (i + 1) & (a->labels_cap - 1);
	return i;
}

static const struct py_code *label(struct py_async *a, const char *text)
{
	uint64_t h = text_hash(text);
	struct py_async_label *l;
	size_t slot;

	if (a->labels_cap) {
		slot = label_slot(a, text, h);
		if (a->labels[slot])
			return &a->labels[slot]->code;
	}
	if (a->nlabels >= PY_ASYNC_LABELS_MAX)
		text = "[task] (more names than framewalk keeps)";
	if ((a->nlabels + 1) * 2 > a->labels_cap) {
		struct py_async_label **old = a->labels;
		size_t oldcap = a->labels_cap;

		a->labels_cap = oldcap ? oldcap * 2 : 256;
		a->labels = xcalloc(a->labels_cap, sizeof(*a->labels));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				a->labels[label_slot(a, old[i]->code.name, old[i]->hash)] = old[i];
		free(old);
	}
	h = text_hash(text);
	slot = label_slot(a, text, h);
	if (a->labels[slot])
		return &a->labels[slot]->code;
	l = xcalloc(1, sizeof(*l));
	l->hash = h;
	l->code.name = xstrdup(text);
	l->code.file = NULL;
	l->code.marker = 1;
	l->code.code_units = -1;
	a->labels[slot] = l;
	a->nlabels++;
	return &l->code;
}

static void put_label(struct py_frame_info *f, const struct py_code *code)
{
	memset(f, 0, sizeof(*f));
	f->code = code;
}

/* ---- coroutine -> task cache ------------------------------------------------ */

static size_t coro_slot(const struct py_async *a, uint64_t coro)
{
	size_t i = (size_t)((coro * 0x9e3779b97f4a7c15ull) >> 20) & (a->coros_cap - 1);

	while (a->coros[i].coro && a->coros[i].coro != coro)
		i = (i + 1) & (a->coros_cap - 1);
	return i;
}

static void coro_remember(struct py_async *a, uint64_t coro, uint64_t task)
{
	size_t slot;

	if (!coro)
		return;
	if ((a->ncoros + 1) * 2 > a->coros_cap) {
		__typeof__(a->coros) old = a->coros;
		size_t oldcap = a->coros_cap;

		/* Past the bound the cache starts over: it is refilled by a scan. */
		a->coros_cap = oldcap >= COROS_MAX ? oldcap : oldcap ? oldcap * 2 : 256;
		a->coros = xcalloc(a->coros_cap, sizeof(*a->coros));
		a->ncoros = 0;
		for (size_t i = 0; oldcap < COROS_MAX && i < oldcap; i++) {
			if (old[i].coro) {
				a->coros[coro_slot(a, old[i].coro)] = old[i];
				a->ncoros++;
			}
		}
		free(old);
	}
	slot = coro_slot(a, coro);
	if (!a->coros[slot].coro)
		a->ncoros++;
	a->coros[slot].coro = coro;
	a->coros[slot].task = task;
}

static uint64_t coro_task(const struct py_async *a, uint64_t coro)
{
	size_t slot;

	if (!a->coros_cap)
		return 0;
	slot = coro_slot(a, coro);
	return a->coros[slot].coro == coro ? a->coros[slot].task : 0;
}

/* ---- 3.14+: the .AsyncioDebug section ---------------------------------------- */

static int load_debug(struct py_async *a)
{
	uint64_t addr, size, now = fw_now_ns();
	uint64_t v[13];

	if (a->debug_known)
		return 0;
	if (a->debug_looked_ns && now - a->debug_looked_ns < SECTION_RETRY_NS)
		return -EAGAIN;
	a->debug_looked_ns = now;
	/* In the executable, libpython or the _asyncio extension, once loaded. */
	if (py_find_section(a->r->target->pid, ".AsyncioDebug", &addr, &size) || size < sizeof(v))
		return -EAGAIN;
	if (mem_read_uncached(a->r->mem, addr, v, sizeof(v)))
		return -EAGAIN;
	a->dbg = (struct py_asyncio_debug){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
					    v[9], v[10], v[11], v[12] };
	/* Untrusted: every offset inside the object it is an offset of. */
	if (a->dbg.task_size < 64 || a->dbg.task_size > TASK_READ_MAX ||
	    a->dbg.task_name + 8 > a->dbg.task_size || a->dbg.task_coro + 8 > a->dbg.task_size ||
	    a->dbg.task_awaited_by + 8 > a->dbg.task_size || a->dbg.task_is_task >= a->dbg.task_size ||
	    a->dbg.task_awaited_by_is_set >= a->dbg.task_size ||
	    a->dbg.task_node + 16 > a->dbg.task_size || a->dbg.tstate_size > (1u << 16) ||
	    a->dbg.tstate_running_task + 8 > a->dbg.tstate_size ||
	    a->dbg.tstate_running_loop + 8 > a->dbg.tstate_size ||
	    a->dbg.tstate_tasks_head + 16 > a->dbg.tstate_size ||
	    a->dbg.interp_tasks_head + 16 > (1u << 20) ||
	    /* the measured layout and the target's own must agree */
	    (int64_t)a->dbg.task_coro != a->al->task_coro ||
	    (int64_t)a->dbg.task_name != a->al->task_name)
		return -EPROTO;
	a->debug_known = 1;
	return 0;
}

/* ---- tasks -------------------------------------------------------------------- */

static int is_c_task(struct py_async *a, uint64_t obj)
{
	const struct py_type_info *t;
	int ret = py_obj_type(a->ob, obj, &t);

	if (ret)
		return ret;
	if (a->task_type && t->addr == a->task_type)
		return 1;
	ret = py_obj_isinstance(a->ob, obj, "_asyncio.Task");
	if (ret == 1 && !strcmp(t->name, "_asyncio.Task"))
		a->task_type = t->addr;
	return ret;
}

/* Is obj a task (C or pure-Python)? 1, 0 or -errno. */
static int is_task(struct py_async *a, uint64_t obj)
{
	int ret = is_c_task(a, obj);

	if (ret)
		return ret;
	return py_obj_isinstance(a->ob, obj, "Task");
}

static int read_task(struct py_async *a, uint64_t addr, struct task_info *t)
{
	const struct py_asyncio_layout *al = a->al;
	uint8_t buf[TASK_READ_MAX];
	int ret = is_c_task(a, addr);

	memset(t, 0, sizeof(*t));
	t->addr = addr;
	if (ret < 0)
		return ret;
	if (ret == 1) {
		size_t size = (size_t)al->task_size;

		if (size > sizeof(buf) || al->task_coro < 0 || al->task_name < 0 ||
		    al->task_fut_waiter < 0 || al->fut_loop < 0 || al->fut_state < 0)
			return -EFAULT;
		ret = mem_read_uncached(a->r->mem, addr, buf, size);
		if (ret)
			return ret;
		t->c_task = 1;
		t->coro = untag(a, load_u64(buf, (size_t)al->task_coro));
		t->name = untag(a, load_u64(buf, (size_t)al->task_name));
		t->fut_waiter = untag(a, load_u64(buf, (size_t)al->task_fut_waiter));
		t->loop = untag(a, load_u64(buf, (size_t)al->fut_loop));
		/* a plain PyObject *, never tagged: kept as read */
		if (al->task_context >= 0 && (size_t)al->task_context + 8 <= size)
			t->context = load_u64(buf, (size_t)al->task_context);
		{
			int32_t state;

			memcpy(&state, buf + al->fut_state, sizeof(state));
			t->pending = state == al->state_pending;
		}
	} else {
		uint64_t state;
		char *text = NULL;

		if (py_obj_isinstance(a->ob, addr, "Task") != 1)
			return -EFAULT;
		if (py_obj_attr(a->ob, addr, "_coro", &t->coro) ||
		    py_obj_attr(a->ob, addr, "_loop", &t->loop))
			return -EFAULT;
		if (py_obj_attr(a->ob, addr, "_name", &t->name))
			t->name = 0;
		if (py_obj_attr(a->ob, addr, "_context", &t->context))
			t->context = 0;
		if (py_obj_attr(a->ob, addr, "_fut_waiter", &t->fut_waiter) ||
		    py_obj_is_none(a->ob, t->fut_waiter) == 1)
			t->fut_waiter = 0;
		/*
		 * A Python future's _state is its class's (_PENDING) until it is
		 * done: the instance has none of its own while pending.
		 */
		ret = py_obj_attr(a->ob, addr, "_state", &state);
		t->pending = ret == -ENOENT ||
			(!ret && !py_obj_str(a->ob, state, 16, &text) && !strcmp(text, "PENDING"));
		free(text);
	}
	if (!t->coro || (t->coro & 7))
		return -EFAULT;
	if (t->fut_waiter && py_obj_is_none(a->ob, t->fut_waiter) == 1)
		t->fut_waiter = 0;
	return 0;
}

/* "[task] NAME": names are str, or (3.12+, until asked for) an int N for "Task-N". */
static const struct py_code *task_label(struct py_async *a, const struct task_info *t)
{
	struct strbuf sb = STRBUF_INIT;
	const struct py_code *code;
	char *text = NULL;
	int64_t n;

	strbuf_addstr(&sb, "[task] ");
	if (t->name && !py_obj_str(a->ob, t->name, PY_ASYNC_NAME_MAX, &text))
		strbuf_addstr(&sb, text);
	else if (t->name && !py_obj_long(a->ob, t->name, &n))
		strbuf_addf(&sb, "Task-%lld", (long long)n);
	else
		strbuf_addf(&sb, "0x%llx", (unsigned long long)t->addr);
	free(text);
	code = label(a, strbuf_str(&sb));
	strbuf_release(&sb);
	return code;
}

/* ---- coroutines ------------------------------------------------------------------ */

/* Is obj a coroutine (or a generator-based one)? 1, 0 or -errno. */
static int is_coroutine(struct py_async *a, uint64_t obj)
{
	const struct py_type_info *t;
	int ret = py_obj_type(a->ob, obj, &t);

	if (ret)
		return ret;
	return !strcmp(t->name, "coroutine") || !strcmp(t->name, "generator");
}

/* The coroutine's frame: inside it (3.11+) or pointed at (<= 3.10). */
static int coro_frame(struct py_async *a, uint64_t coro, uint64_t *frame)
{
	const struct py_objects_layout *lo = a->ob->lo;

	if (lo->gen_iframe >= 0) {
		*frame = coro + (uint64_t)lo->gen_iframe;
		return 0;
	}
	if (lo->gen_frame < 0 || mem_read_uncached(a->r->mem, coro + (uint64_t)lo->gen_frame, frame, 8))
		return -EFAULT;
	return *frame && !(*frame & 7) ? 0 : -EFAULT;
}

/* Is the coroutine suspended (not running, not finished)? 1, 0 or -errno. */
static int coro_suspended(struct py_async *a, uint64_t coro)
{
	const struct py_objects_layout *lo = a->ob->lo;
	int8_t state;

	if (!lo->has_frame_states)
		return 1;    /* <= 3.10: a frame that is not running is suspended (checked by caller) */
	if (lo->gen_frame_state < 0 || mem_read_uncached(a->r->mem, coro + (uint64_t)lo->gen_frame_state, &state, 1))
		return -EFAULT;
	return state == lo->state_suspended ||
	       (lo->has_yield_from_state && state == lo->state_suspended_yield_from);
}

/* What a suspended coroutine's frame awaits: the value-stack slot below the top. */
static int coro_awaits(struct py_async *a, uint64_t frame, uint64_t *yf)
{
	const struct py_objects_layout *lo = a->ob->lo;
	int64_t depth = a->al->yf_depth;
	uint64_t top, slot;

	*yf = 0;
	if (depth < 1 || depth > 4)
		return -EFAULT;
	if (lo->frame_stackpointer >= 0) {
		if (mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_stackpointer, &top, 8))
			return -EFAULT;
	} else if (lo->frame_stacktop >= 0 && lo->frame_localsplus >= 0) {
		int32_t index;

		if (mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_stacktop, &index, 4) || index < depth ||
		    index > 65536)
			return -EFAULT;
		top = frame + (uint64_t)lo->frame_localsplus + 8 * (uint64_t)index;
	} else if (lo->frame_stacktop_ptr >= 0) {
		if (mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_stacktop_ptr, &top, 8))
			return -EFAULT;
	} else if (lo->frame_valuestack >= 0 && lo->frame_stackdepth >= 0) {
		int32_t sdepth;

		if (mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_valuestack, &top, 8) ||
		    mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_stackdepth, &sdepth, 4) || sdepth < depth ||
		    sdepth > 65536)
			return -EFAULT;
		top += 8 * (uint64_t)sdepth;
	} else {
		return -EFAULT;
	}
	/* The top must lie just above the frame's own locals. */
	if (!top || (top & 7) || top < frame || top - frame > (1u << 20))
		return -EFAULT;
	slot = top - 8 * (uint64_t)depth;
	if (mem_read_uncached(a->r->mem, slot, yf, 8))
		return -EFAULT;
	*yf = untag(a, *yf);
	return 0;
}

/* One level of an await chain as read: a suspended coroutine, its frame, what it awaited. */
struct await_link {
	uint64_t coro, frame, awaits;
};

/* await_chain's one pass over the chain, each level's read kept in links. */
static int await_chain_read(struct py_async *a, uint64_t coro, struct py_frame_info *chain,
			    size_t max, size_t *n, uint64_t *awaited, struct await_link *links,
			    size_t *nlinks)
{
	*n = 0;
	*awaited = 0;
	*nlinks = 0;
	for (size_t depth = 0; depth < PY_ASYNC_CHAIN_MAX && *n < max; depth++) {
		uint64_t frame, yf;
		int ret;

		/*
		 * Below the outermost, coro is what the one above awaited, a
		 * coroutine when read: one that is not now was finished (and
		 * freed) as the task resumed while it was read.
		 */
		if (is_coroutine(a, coro) != 1)
			return depth ? -EBUSY : -EFAULT;
		if (coro_frame(a, coro, &frame))
			return -EFAULT;
		ret = py_reader_frame(a->r, frame, &chain[*n]);
		if (ret)
			return ret;
		(*n)++;
		if (coro_suspended(a, coro) != 1)
			return -EBUSY;
		/*
		 * A suspended coroutine (async def) waits at an await, its value
		 * stack readable: one that is not was resumed while it was read
		 * (the stack top is not kept while it runs), so it is as moving as
		 * one not suspended. A generator-based one (types.coroutine, as
		 * asyncio's __sleep0) may have yielded bare: its chain ends there.
		 */
		if (coro_awaits(a, frame, &yf))
			return py_obj_isinstance(a->ob, coro, "coroutine") == 1 ? -EBUSY : 0;
		/*
		 * Still suspended after its stack was read? If it was resumed
		 * meanwhile, the slot read is stale (a sleep(0) seen awaiting
		 * nothing): the task is moving, like one not suspended.
		 */
		if (coro_suspended(a, coro) != 1)
			return -EBUSY;
		/*
		 * ... and suspended at the same await as when its slot was read?
		 * A coroutine resumed and suspended again between the two checks
		 * (the reader descheduled for a few milliseconds) has a new value
		 * there: the first read saw the slot while it ran (CI: a task read
		 * as awaiting a non-coroutine leftover, 11 of 128 of a busy task's
		 * samples on 3.13).
		 */
		{
			uint64_t again;

			if (coro_awaits(a, frame, &again) || again != yf)
				return -EBUSY;
		}
		/*
		 * A suspended async def always awaits something: nothing at its
		 * await means it ran and suspended again between the two checks
		 * (the slot read while it ran), as moving as a running one. Only a
		 * generator-based coroutine may yield bare.
		 */
		if (!yf)
			return py_obj_isinstance(a->ob, coro, "coroutine") == 1 ? -EBUSY : 0;
		links[(*nlinks)++] = (struct await_link){ coro, frame, yf };
		if (is_coroutine(a, yf) == 1) {
			coro = yf;
			continue;
		}
		*awaited = yf;
		return 0;
	}
	return 0;
}

/*
 * The await chain of a suspended coroutine, outermost first into chain (at
 * most max): each coroutine's frame, down to what the innermost awaits
 * (*awaited: a future, a FutureIter, or 0). A coroutine in it that is not
 * suspended, the outermost (its caller saw it suspended a moment before) or
 * one it awaits, gives -EBUSY: the task runs now, its chain is moving, it is
 * no waiting task.
 *
 * The task's thread runs while the chain is read, level by level: a task
 * resumed after its upper levels were read finishes the coroutine it
 * awaited (asyncio.sleep's), and that memory is reused, so the chain read
 * ends early where it never did (CI: a busy task read as awaiting at
 * cpu_inner, or at cpu_outer, 3 in 100 of its samples on 3.11). So once
 * read, every level is checked again: still suspended, awaiting the same
 * object. One that is not was resumed meanwhile: -EBUSY. 0 or -errno.
 */
static int await_chain(struct py_async *a, uint64_t coro, struct py_frame_info *chain,
		       size_t max, size_t *n, uint64_t *awaited, uint64_t *outer_awaits)
{
	struct await_link links[PY_ASYNC_CHAIN_MAX];
	size_t nlinks;
	int ret = await_chain_read(a, coro, chain, max, n, awaited, links, &nlinks);

	if (ret)
		return ret;
	if (outer_awaits)
		*outer_awaits = nlinks ? links[0].awaits : 0;
	for (size_t i = 0; i < nlinks; i++) {
		uint64_t yf;

		if (coro_suspended(a, links[i].coro) != 1 || coro_awaits(a, links[i].frame, &yf) ||
		    yf != links[i].awaits)
			return -EBUSY;
	}
	return 0;
}

/* ---- what a task is parked on ------------------------------------------------------ */

/* A coroutine of asyncio's own, by file and function, and what waiting in it means. */
static const struct {
	const char *file, *func, *what;
} parked_in[] = {
	{ "asyncio/tasks.py", "sleep", "sleep" },
	{ "asyncio/tasks.py", "wait_for", "wait_for" },
	{ "asyncio/tasks.py", "_wait", "wait" },
	{ "asyncio/tasks.py", "wait", "wait" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_recv", "socket read" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_recv_into", "socket read" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_recvfrom", "socket read" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_recvfrom_into", "socket read" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_sendall", "socket write" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_sendto", "socket write" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_connect", "socket connect" },
	{ "asyncio/selector_events.py", "BaseSelectorEventLoop.sock_accept", "socket accept" },
	{ "asyncio/streams.py", "StreamReader._wait_for_data", "stream read" },
	{ "asyncio/streams.py", "FlowControlMixin._drain_helper", "stream write" },
	{ "asyncio/locks.py", "Lock.acquire", "Lock" },
	{ "asyncio/locks.py", "Event.wait", "Event" },
	{ "asyncio/locks.py", "Condition.wait", "Condition" },
	{ "asyncio/locks.py", "Semaphore.acquire", "Semaphore" },
	{ "asyncio/locks.py", "Barrier._block", "Barrier" },
	{ "asyncio/locks.py", "Barrier._wait", "Barrier" },
	{ "asyncio/queues.py", "Queue.get", "Queue.get" },
	{ "asyncio/queues.py", "Queue.put", "Queue.put" },
	{ "asyncio/queues.py", "Queue.join", "Queue.join" },
	{ "asyncio/taskgroups.py", "TaskGroup.__aexit__", "TaskGroup" },
	{ "asyncio/taskgroups.py", "TaskGroup._aexit", "TaskGroup" },
	{ "asyncio/threads.py", "to_thread", "to_thread" },
	{ "asyncio/base_events.py", "BaseEventLoop.sock_sendfile", "socket write" },
};

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A code name (qualified from 3.11, bare before) against a qualified name. */
static int same_function(const char *name, const char *qual)
{
	const char *dot = strrchr(qual, '.');

	return !strcmp(name, qual) || (dot && !strchr(name, '.') && !strcmp(name, dot + 1));
}

/* The leaf of a suspended task: "[await] WHAT". */
static const struct py_code *parked_label(struct py_async *a, const struct task_info *t,
					  const struct py_frame_info *innermost)
{
	struct strbuf sb = STRBUF_INIT;
	const struct py_type_info *ty;
	const struct py_code *code;
	const char *what = NULL;

	if (innermost && innermost->code && innermost->code->file) {
		for (size_t i = 0; i < ARRAY_SIZE(parked_in) && !what; i++)
			if (ends_with(innermost->code->file, parked_in[i].file) &&
			    same_function(innermost->code->name, parked_in[i].func))
				what = parked_in[i].what;
	}
	strbuf_addstr(&sb, "[await] ");
	if (what) {
		strbuf_addstr(&sb, what);
	} else if (t->fut_waiter && is_task(a, t->fut_waiter) == 1) {
		struct task_info child;

		if (!read_task(a, t->fut_waiter, &child)) {
			const struct py_code *name = task_label(a, &child);

			strbuf_addf(&sb, "task %s", name->name + strlen("[task] "));
		} else {
			strbuf_addstr(&sb, "task");
		}
	} else if (t->fut_waiter && !py_obj_type(a->ob, t->fut_waiter, &ty)) {
		const char *dot = strrchr(ty->name, '.');
		const char *type = dot ? dot + 1 : ty->name;

		strbuf_addstr(&sb, !strcmp(type, "_GatheringFuture") ? "gather" : type);
	} else {
		strbuf_addstr(&sb, "Future");
	}
	code = label(a, strbuf_str(&sb));
	strbuf_release(&sb);
	return code;
}

/* ---- who awaits a task ---------------------------------------------------------------- */

/* The done-callbacks of a future or task (callback objects, not their contexts). */
static int future_callbacks(struct py_async *a, uint64_t fut, uint64_t *out, size_t max, size_t *n)
{
	const struct py_asyncio_layout *al = a->al;
	uint64_t list = 0, items[CALLBACKS_MAX], pair[2];
	size_t nitems = 0, got;

	*n = 0;
	if (py_obj_isinstance(a->ob, fut, "_asyncio.Future") == 1 ||
	    py_obj_isinstance(a->ob, fut, "_asyncio.Task") == 1) {
		uint64_t cb0;

		if (mem_read_uncached(a->r->mem, fut + (uint64_t)al->fut_callback0, &cb0, 8) ||
		    mem_read_uncached(a->r->mem, fut + (uint64_t)al->fut_callbacks, &list, 8))
			return -EFAULT;
		if (cb0 && *n < max)
			out[(*n)++] = cb0;
	} else if (py_obj_attr(a->ob, fut, "_callbacks", &list)) {
		return -ENOENT;
	}
	if (!list || py_obj_is_none(a->ob, list) == 1)
		return 0;
	if (py_seq_items(a->ob, list, items, ARRAY_SIZE(items), &nitems))
		return -EFAULT;
	/* Each entry is a (callback, context) tuple. */
	for (size_t i = 0; i < nitems && *n < max; i++)
		if (!py_seq_items(a->ob, items[i], pair, 2, &got) && got == 2 && pair[0])
			out[(*n)++] = pair[0];
	return 0;
}

/* The task a callback wakes, or the TaskGroup's parent task, or 0. */
static uint64_t callback_task(struct py_async *a, uint64_t cb)
{
	const struct py_type_info *t;
	uint64_t self = 0, parent;

	if (py_obj_type(a->ob, cb, &t))
		return 0;
	/* 3.8/3.9: a TaskWakeupMethWrapper holds its task */
	if (a->al->wakeup_task >= 0 && ends_with(t->name, "TaskWakeupMethWrapper")) {
		if (!mem_read_uncached(a->r->mem, cb + (uint64_t)a->al->wakeup_task, &self, 8) && is_task(a, self) == 1)
			return self;
		return 0;
	}
	if (py_method_self(a->ob, cb, &self) || !self)
		return 0;
	if (is_task(a, self) == 1)
		return self;       /* a task's __wakeup */
	if (py_obj_isinstance(a->ob, self, "TaskGroup") == 1 &&
	    !py_obj_attr(a->ob, self, "_parent_task", &parent) && is_task(a, parent) == 1)
		return parent;     /* TaskGroup._on_task_done */
	return 0;
}

/* gather's _done_callback: the _GatheringFuture its closure holds, or 0. */
static uint64_t callback_gathering(struct py_async *a, uint64_t cb)
{
	uint64_t cells[CLOSURE_MAX];
	size_t n;

	if (py_function_closure(a->ob, cb, cells, ARRAY_SIZE(cells), &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (cells[i] && py_obj_isinstance(a->ob, cells[i], "_GatheringFuture") == 1)
			return cells[i];
	return 0;
}

/* <= 3.13: who awaits fut, from its done-callbacks. */
static uint64_t waiter_by_callbacks(struct py_async *a, uint64_t fut, int depth)
{
	uint64_t cbs[CALLBACKS_MAX];
	size_t n;

	if (future_callbacks(a, fut, cbs, ARRAY_SIZE(cbs), &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t task = callback_task(a, cbs[i]), outer;

		if (task && task != fut)
			return task;
		if (depth == 0 && (outer = callback_gathering(a, cbs[i])))
			if ((task = waiter_by_callbacks(a, outer, 1)))
				return task;
	}
	return 0;
}

/* 3.14+: the task's awaited_by (one task, or a set of them). */
static uint64_t waiter_by_awaited_by(struct py_async *a, const struct task_info *t)
{
	uint64_t by, items[8];
	uint8_t is_set;
	size_t n;

	if (!t->c_task) {
		/* a pure-Python future keeps them in a set attribute */
		if (py_obj_attr(a->ob, t->addr, "_Future__asyncio_awaited_by", &by) ||
		    py_obj_is_none(a->ob, by) == 1)
			return 0;
		is_set = 1;
	} else if (mem_read_uncached(a->r->mem, t->addr + a->dbg.task_awaited_by, &by, 8) ||
		   mem_read_uncached(a->r->mem, t->addr + a->dbg.task_awaited_by_is_set, &is_set, 1)) {
		return 0;
	}
	by = untag(a, by);
	if (!by)
		return 0;
	if (!is_set)
		return is_task(a, by) == 1 ? by : 0;
	if (py_set_items(a->ob, by, items, ARRAY_SIZE(items), &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (is_task(a, items[i]) == 1)
			return items[i];
	return 0;
}

static uint64_t task_waiter(struct py_async *a, const struct task_info *t)
{
	if (a->debug_wanted && load_debug(a) == 0)
		return waiter_by_awaited_by(a, t);
	return waiter_by_callbacks(a, t->addr, 0);
}

/*
 * The tasks awaiting task t, nearest first, each as its await chain
 * (innermost first) and its "[task] NAME", appended to out[*n..max).
 */
static void append_waiters(struct py_async *a, const struct task_info *t,
			   struct py_frame_info *out, size_t max, size_t *n)
{
	struct py_frame_info chain[PY_ASYNC_CHAIN_MAX];
	uint64_t seen[PY_ASYNC_PARENTS_MAX + 1];
	struct task_info cur = *t, parent;
	size_t nseen = 0;

	seen[nseen++] = t->addr;
	for (int depth = 0; depth < PY_ASYNC_PARENTS_MAX; depth++) {
		uint64_t waiter = task_waiter(a, &cur), awaited;
		size_t nchain;
		int loop = 0;

		for (size_t i = 0; i < nseen; i++)
			loop |= seen[i] == waiter;
		if (!waiter || loop || read_task(a, waiter, &parent))
			return;
		seen[nseen++] = waiter;
		coro_remember(a, parent.coro, parent.addr);
		if (await_chain(a, parent.coro, chain, ARRAY_SIZE(chain), &nchain, &awaited, NULL))
			nchain = 0;
		for (size_t k = nchain; k-- > 0 && *n < max;)
			out[(*n)++] = chain[k];
		if (*n < max)
			put_label(&out[(*n)++], task_label(a, &parent));
		cur = parent;
	}
}

/* ---- the running task -------------------------------------------------------------------- */

/* Is the frame the loop's _run_once (asyncio/base_events.py)? */
static int is_run_once(const struct py_frame_info *f)
{
	return f->code && f->code->file && !f->code->marker &&
	       ends_with(f->code->file, "asyncio/base_events.py") &&
	       same_function(f->code->name, "BaseEventLoop._run_once");
}

/* A frame's first local (self of a method). */
static int frame_self(struct py_async *a, uint64_t frame, uint64_t *self)
{
	const struct py_objects_layout *lo = a->ob->lo;

	if (lo->frame_localsplus < 0 || mem_read_uncached(a->r->mem, frame + (uint64_t)lo->frame_localsplus, self, 8))
		return -EFAULT;
	*self = untag(a, *self);
	return *self ? 0 : -EFAULT;
}

/* The tasks the interpreter says are running now: their number, into out. */
static size_t running_candidates(struct py_async *a, uint64_t tstate, uint64_t *out, size_t max)
{
	struct py_kv items[16];
	uint64_t current;
	size_t n = 0, got = 0;

	if (a->debug_wanted && load_debug(a) == 0 && tstate) {
		uint64_t task;

		if (!mem_read_uncached(a->r->mem, tstate + a->dbg.tstate_running_task, &task, 8) && (task = untag(a, task)))
			out[n++] = task;
		return n;
	}
	if (py_module_attr(a->ob, "asyncio.tasks", "_current_tasks", &current) ||
	    py_dict_items(a->ob, current, items, ARRAY_SIZE(items), &got))
		return 0;
	for (size_t i = 0; i < got && n < max; i++)
		out[n++] = items[i].value;
	return n;
}

static int tasks_of_all(struct py_async *a, uint64_t loop, uint64_t tstate, uint64_t *out,
			size_t max, size_t *n);

/* The task whose coroutine owns frame (a frame of a coroutine), or 0. */
static uint64_t task_of_frame(struct py_async *a, uint64_t tstate, uint64_t frame,
			      uint64_t coro, uint64_t loop)
{
	uint64_t cands[16], task;
	size_t n = running_candidates(a, tstate, cands, ARRAY_SIZE(cands));

	for (size_t i = 0; i < n; i++) {
		struct task_info t;
		uint64_t f;

		if (!read_task(a, cands[i], &t) && !coro_frame(a, t.coro, &f) && f == frame) {
			coro_remember(a, t.coro, t.addr);
			return t.addr;
		}
	}
	if (!coro)
		return 0;
	if ((task = coro_task(a, coro)))
		return task;
	/* Unknown: every task of the loop, at most every RESCAN_NS. */
	if (loop && fw_now_ns() - a->scanned_ns >= RESCAN_NS) {
		uint64_t *all = xcalloc(PY_ASYNC_TASKS_MAX, sizeof(*all));
		size_t nall = 0;

		a->scanned_ns = fw_now_ns();
		a->stats.rescans++;
		if (!tasks_of_all(a, loop, tstate, all, PY_ASYNC_TASKS_MAX, &nall)) {
			for (size_t i = 0; i < nall; i++) {
				struct task_info t;

				if (!read_task(a, all[i], &t))
					coro_remember(a, t.coro, t.addr);
			}
		}
		free(all);
		return coro_task(a, coro);
	}
	return 0;
}

/* The coroutine whose frame this is (3.11+: around it; <= 3.10: its f_gen), or 0. */
static uint64_t frame_coro(struct py_async *a, uint64_t frame)
{
	const struct py_objects_layout *lo = a->ob->lo;
	uint64_t coro;

	if (lo->gen_iframe >= 0) {
		if (frame < (uint64_t)lo->gen_iframe)
			return 0;
		coro = frame - (uint64_t)lo->gen_iframe;
	} else if (a->r->off->frame_gen >= 0) {
		if (mem_read_uncached(a->r->mem, frame + (uint64_t)a->r->off->frame_gen, &coro, 8))
			return 0;
	} else {
		return 0;
	}
	return coro && is_coroutine(a, coro) == 1 ? coro : 0;
}

int py_async_stack(struct py_async *a, uint64_t tstate, const struct py_frame_info *in,
		   size_t n, struct py_frame_info *out, size_t max, size_t *nout,
		   struct py_async_thread *th)
{
	size_t m, j, k = 0;
	uint64_t coro, task_addr, loop = 0;
	struct task_info task;
	int entry = 0, keep_entries = a->native_merge && a->r->off->frame_model == PY_FRAMES_OBJECTS;
	uint64_t shim = 0;

	memset(th, 0, sizeof(*th));
	*nout = 0;
	/* The innermost _run_once: the loop's frames are the ones outer of it. */
	for (m = 0; m < n && !is_run_once(&in[m]); m++)
		;
	if (m == n)
		return -ENOENT;
	th->in_loop = 1;
	th->base = m + 1;
	if (!frame_self(a, in[m].addr, &loop))
		th->loop = loop;
	/*
	 * The task's coroutine: the outermost coroutine frame inside _run_once
	 * (a task steps its coroutine itself); what lies between is the loop's
	 * machinery (Handle._run, a Python Task's step), whatever file it is
	 * in: a task's coroutine may be asyncio's own (staggered's run_one_coro).
	 */
	coro = 0;
	for (j = m; j-- > 0 && !(in[j].generator && (coro = frame_coro(a, in[j].addr)));)
		;
	if (j >= m || !coro) {
		a->stats.no_task++;
		return -ENOENT;
	}
	task_addr = task_of_frame(a, tstate, in[j].addr, coro, loop);
	if (!task_addr || read_task(a, task_addr, &task) || task.coro != coro) {
		a->stats.unmatched++;
		return -ENOENT;
	}
	th->task = task_addr;
	a->stats.running++;
	/* The running task's own frames, as sampled. */
	for (k = 0; k <= j && k < max; k++)
		out[k] = in[k];
	if (k < max)
		put_label(&out[k++], task_label(a, &task));
	/*
	 * Between the task and _run_once, asyncio's machinery folds away. A
	 * frame that began a C-level eval call keeps that mark on what takes
	 * its place (native merging pairs those with evaluator frames); where
	 * each such frame has its own evaluator frame (<= 3.10) with native
	 * frames merged, the machinery is kept instead.
	 */
	for (size_t i = j + 1; i <= m; i++) {
		if (in[i].entry && keep_entries) {
			if (k < max)
				out[k++] = in[i];
			continue;
		}
		if (in[i].entry) {
			entry = 1;
			shim = in[i].shim;
		}
	}
	append_waiters(a, &task, out, max, &k);
	if (entry && k > 0) {
		out[k - 1].entry = 1;
		out[k - 1].shim = shim;
	}
	for (size_t i = m + 1; i < n && k < max; i++)
		out[k++] = in[i];
	*nout = k;
	return 0;
}

/* ---- the tasks of a loop ----------------------------------------------------------------------- */

/* 3.14+: a list of tasks linked through task_node, from the node at head. */
static void tasks_of_list(struct py_async *a, uint64_t head, uint64_t *out, size_t max, size_t *n)
{
	uint64_t node;

	if (mem_read_uncached(a->r->mem, head, &node, 8))
		return;
	for (size_t steps = 0; node && node != head && steps < PY_ASYNC_TASKS_MAX && *n < max;
	     steps++) {
		if (node & 7 || node < a->dbg.task_node)
			return;
		out[(*n)++] = node - a->dbg.task_node;
		if (mem_read_uncached(a->r->mem, node, &node, 8))
			return;
	}
}

/* The objects a WeakSet holds. */
static void weakset_items(struct py_async *a, uint64_t ws, uint64_t *out, size_t max, size_t *n)
{
	uint64_t data, *refs;
	size_t nrefs = 0;

	if (py_obj_attr(a->ob, ws, "data", &data))
		return;
	refs = xcalloc(PY_ASYNC_TASKS_MAX, sizeof(*refs));
	if (!py_set_items(a->ob, data, refs, PY_ASYNC_TASKS_MAX, &nrefs)) {
		for (size_t i = 0; i < nrefs && *n < max; i++) {
			uint64_t obj;

			if (!py_weakref_get(a->ob, refs[i], &obj) && obj)
				out[(*n)++] = obj;
		}
	}
	free(refs);
}

/* Every task the interpreter lists for this loop's thread (not filtered by loop). */
static int tasks_of_all(struct py_async *a, uint64_t loop, uint64_t tstate, uint64_t *out,
			size_t max, size_t *n)
{
	uint64_t set;

	(void)loop;
	*n = 0;
	if (a->debug_wanted) {
		uint64_t interp = a->r->interp;

		if (load_debug(a))
			return -EAGAIN;
		if (tstate)
			tasks_of_list(a, tstate + a->dbg.tstate_tasks_head, out, max, n);
		if (interp)
			tasks_of_list(a, interp + a->dbg.interp_tasks_head, out, max, n);
		return 0;
	}
	if (!py_module_attr(a->ob, "asyncio.tasks", "_scheduled_tasks", &set))
		weakset_items(a, set, out, max, n);
	else if (!py_module_attr(a->ob, "asyncio.tasks", "_all_tasks", &set))
		weakset_items(a, set, out, max, n);
	if (!py_module_attr(a->ob, "asyncio.tasks", "_eager_tasks", &set)) {
		size_t got = 0;

		if (!py_set_items(a->ob, set, out + *n, max - *n, &got))
			*n += got;
	}
	return 0;
}

int py_async_still_waiting(struct py_async *a, const struct py_async_waiting_task *t)
{
	struct task_info now;
	uint64_t frame, yf;
	int ret;

	/*
	 * The same task, not another at its address: a task that finished
	 * has its objects freed, and the next one (the next request's, made
	 * alike) gets them back, LIFO, coroutine and context included; its
	 * name (Task-N, N counting) tells it apart.
	 */
	if ((ret = read_task(a, t->task, &now)))
		return ret;
	if (!now.pending || now.coro != t->coro || now.context != t->context ||
	    task_label(a, &now) != t->name)
		return 0;
	ret = coro_suspended(a, t->coro);
	if (ret != 1 || !t->awaits)
		return ret;
	if (coro_frame(a, t->coro, &frame) || coro_awaits(a, frame, &yf))
		return -EFAULT;
	return yf == t->awaits;
}

int py_async_waiting(struct py_async *a, uint64_t loop, uint64_t tstate,
		     py_async_task_fn fn, void *arg)
{
	struct py_frame_info *frames, chain[PY_ASYNC_CHAIN_MAX];
	uint64_t *tasks = xcalloc(PY_ASYNC_TASKS_MAX, sizeof(*tasks));
	size_t ntasks = 0, max = PY_ASYNC_CHAIN_MAX * (PY_ASYNC_PARENTS_MAX + 1) + 64, nnow;
	uint64_t now[16];
	int given = 0, ret;

	ret = tasks_of_all(a, loop, tstate, tasks, PY_ASYNC_TASKS_MAX, &ntasks);
	if (ret) {
		free(tasks);
		return ret;
	}
	/*
	 * Each task once: the lists are read while the loop changes them (a
	 * node moved, two lists holding one task on 3.14), and a task given
	 * twice would count twice a tick.
	 */
	ntasks = sort_unique_u64(tasks, ntasks);
	/*
	 * The task running now (the loop may have moved on since its last
	 * sample) is no waiting one: its chain is changing as it is read. It,
	 * and one found running or resumed as it is read (the loop moves on
	 * while the tasks are read), is given without frames, for the caller
	 * to keep what it knew.
	 */
	nnow = running_candidates(a, tstate, now, ARRAY_SIZE(now));
	frames = xcalloc(max, sizeof(*frames));
	for (size_t i = 0; i < ntasks; i++) {
		struct task_info t;
		size_t nchain = 0, n = 0;
		uint64_t awaited, outer = 0;
		const struct py_code *name;
		int runs = 0;

		for (size_t k = 0; k < nnow; k++)
			runs |= tasks[i] == now[k];
		if (read_task(a, tasks[i], &t)) {
			a->stats.bad_tasks++;
			continue;
		}
		if (!t.pending || (loop && t.loop != loop))
			continue;
		coro_remember(a, t.coro, t.addr);
		ret = runs ? -EBUSY : coro_suspended(a, t.coro) != 1 ? -EBUSY :
			await_chain(a, t.coro, chain, ARRAY_SIZE(chain), &nchain, &awaited, &outer);
		/* its chain unreadable as it is read (it was resumed, or torn): as one running */
		if (ret || !nchain) {
			if (ret != -EBUSY)
				a->stats.bad_tasks++;
			fn(arg, &(struct py_async_waiting_task){ .task = t.addr, .context = t.context,
								 .coro = t.coro,
								 .name = task_label(a, &t) });
			continue;
		}
		put_label(&frames[n++], parked_label(a, &t, &chain[nchain - 1]));
		for (size_t k = nchain; k-- > 0 && n < max;)
			frames[n++] = chain[k];
		name = task_label(a, &t);
		if (n < max)
			put_label(&frames[n++], name);
		append_waiters(a, &t, frames, max, &n);
		a->stats.waiting++;
		fn(arg, &(struct py_async_waiting_task){ t.addr, t.context, frames, n, t.coro, outer,
							name });
		given++;
	}
	free(frames);
	free(tasks);
	return given;
}
