/*
 * Implementation of pyview.h.
 *
 * Suspended tasks (wall mode) are sampled like waiting threads: each tick,
 * every suspended task of a loop thread seen in the last second counts one
 * sample, on that thread, under the loop's callers (the frames outer of its
 * _run_once, as last sampled), so a task's samples group with those it took
 * while running. Reading every task at every tick would cost the target's
 * memory reads in proportion to its tasks: the set and their stacks are
 * read again when the last read is older than half a tick and than twenty
 * times what that read took (under 5% of the time spent reading), and the
 * stacks of the last read count in between, but for the task the loop
 * thread's latest sample saw running (waiting_task: a task running at a
 * read, or not read whole, keeps an earlier one's stack).
 *
 * With --label, a suspended task's sample carries its own context's labels
 * (sampler/labels.h: labels_of_context), read with its stack: what the
 * task sees once resumed; its thread's context is another task's (or
 * none) meanwhile. Samples between reads keep the labels of the last one.
 */
#include <errno.h>

#include "python/asyncio.h"
#include "python/excstate.h"
#include "python/objects.h"
#include "sampler/backend.h"
#include "sampler/labels.h"
#include "sampler/merge.h"
#include "sampler/pyview.h"
#include "util/util.h"

#define LOOPS_MAX 16
#define LOOP_FORGET_NS 1000000000ull
#define BASE_MAX 256
#define WAITING_COST_FACTOR 20
#define WAITING_KEEP_NS LOOP_FORGET_NS

/* A suspended task as the last read saw it. */
struct waiting_entry {
	uint64_t task, coro, context;
	const struct py_code *name;   /* its "[task] NAME" (interned: compared by address) */
	uint32_t stack;               /* its profile node */
	uint32_t labels;              /* its label set (0: none) */
	uint64_t read_ns;             /* when its chain was read (a later read found it running) */
};

/* The suspended tasks of one read: the last (now) and the one being made (next). */
struct waiting_set {
	struct waiting_entry *e;
	size_t n, alloc;
};

struct loop_thread {
	pid_t tid;
	uint64_t loop, tstate, running;
	uint64_t seen_ns;
	uint32_t base[BASE_MAX];      /* the loop's callers, outermost first (profile frames) */
	size_t nbase;
	struct waiting_set now, next;
	uint64_t read_ns, read_cost_ns;
};

struct pyview {
	struct py_async async;
	int have_async;
	struct py_frame_info *out;    /* the task view of one sample */
	size_t out_max;
	struct loop_thread loops[LOOPS_MAX];
	size_t nloops;
	/* a native merge to come: find this Python frame in it to learn the loop's callers */
	pid_t pending_tid;
	uint32_t pending_frame;
	/* pyview_tick: the loop being read, for the callback */
	struct sampler *s;
	struct loop_thread *cur;
	uint64_t cur_ns;
	uint32_t *ids;
	size_t ids_max;
};

static void loop_thread_release(struct loop_thread *l)
{
	free(l->now.e);
	free(l->next.e);
}

struct pyview *pyview_new(struct sampler *s, struct strbuf *no_tasks)
{
	struct pyview *v = xcalloc(1, sizeof(*v));

	v->s = s;
	if (s->opts.async_tasks && s->have_objects &&
	    py_async_init(&v->async, &s->reader, &s->objects, no_tasks) == 0) {
		v->have_async = 1;
		v->async.native_merge = s->opts.native;
		/* What the sampler records at most (its frame ids hold that many). */
		v->out_max = PY_MAX_DEPTH;
		v->out = xcalloc(v->out_max, sizeof(*v->out));
		v->ids_max = BASE_MAX + PY_ASYNC_CHAIN_MAX * (PY_ASYNC_PARENTS_MAX + 1) + 64;
		v->ids = xcalloc(v->ids_max, sizeof(*v->ids));
	} else if (s->opts.async_tasks && !no_tasks->len) {
		strbuf_addstr(no_tasks, "its objects cannot be read");
	}
	return v;
}

void pyview_free(struct pyview *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nloops; i++)
		loop_thread_release(&v->loops[i]);
	if (v->have_async)
		py_async_release(&v->async);
	free(v->out);
	free(v->ids);
	free(v);
}

int pyview_exception(struct sampler *s, uint64_t tstate, char *marker, size_t size)
{
	uint64_t exc;
	int is_type, ret;

	if (!s->have_objects)
		return -ENOTSUP;
	ret = py_exc_current(&s->objects, tstate, &exc, &is_type);
	if (ret || !exc)
		return ret;
	xsnprintf(marker, size, "<exception %s>", py_exc_type_name(&s->objects, exc, is_type));
	return 1;
}

static struct loop_thread *loop_thread(struct pyview *v, pid_t tid, uint64_t now)
{
	struct loop_thread *l = NULL, *oldest = NULL;

	for (size_t i = 0; i < v->nloops; i++) {
		if (v->loops[i].tid == tid)
			return &v->loops[i];
		if (!oldest || v->loops[i].seen_ns < oldest->seen_ns)
			oldest = &v->loops[i];
	}
	if (v->nloops < LOOPS_MAX) {
		l = &v->loops[v->nloops++];
	} else {
		l = oldest;
		loop_thread_release(l);
	}
	memset(l, 0, sizeof(*l));
	l->tid = tid;
	l->seen_ns = now;
	return l;
}

const struct py_frame_info *pyview_frames(struct sampler *s, pid_t tid,
					  const struct py_frame_info *in, size_t *depth)
{
	struct pyview *v = s->pyview;
	struct py_thread_info *pt;
	struct py_async_thread th;
	struct loop_thread *l;
	uint64_t now = fw_now_ns();
	size_t nout = 0;
	int ret;

	if (!v || !v->have_async || !*depth)
		return in;
	pt = sampler_py_thread(s, tid);
	ret = py_async_stack(&v->async, pt ? pt->tstate : 0, in, *depth, v->out, v->out_max,
			     &nout, &th);
	if (!th.in_loop)
		return in;
	l = loop_thread(v, tid, now);
	l->seen_ns = now;
	if (th.loop)
		l->loop = th.loop;
	if (pt)
		l->tstate = pt->tstate;
	l->running = th.task;
	/* The loop's callers (outer of _run_once), for the suspended tasks' samples. */
	if (!s->opts.native) {
		l->nbase = 0;
		for (size_t k = *depth; k-- > th.base && l->nbase < BASE_MAX;)
			l->base[l->nbase++] = merge_python_frame(s->prof, &in[k]);
	} else if (th.base < *depth) {
		v->pending_tid = tid;
		v->pending_frame = merge_python_frame(s->prof, &in[th.base]);
	}
	if (ret)
		return in;
	*depth = nout;
	return v->out;
}

/* Is profile frame id a "[task] NAME" label? */
static int is_task_label(const struct profile *p, uint32_t id)
{
	return id < p->nframes && p->frames[id].kind == FRAME_OTHER &&
	       !strncmp(profile_str(p, p->frames[id].name), "[task] ", 7);
}

size_t pyview_merged(struct sampler *s, pid_t tid, uint32_t *ids, size_t n)
{
	struct pyview *v = s->pyview;
	size_t k = 0;
	int fold = 0;

	if (!v || !v->have_async)
		return n;
	if (v->pending_tid && v->pending_tid == tid) {
		struct loop_thread *l = loop_thread(v, tid, fw_now_ns());

		v->pending_tid = 0;
		for (size_t i = 0; i < n; i++) {
			if (ids[i] == v->pending_frame) {
				l->nbase = i + 1 < BASE_MAX ? i + 1 : BASE_MAX;
				memcpy(l->base, ids, l->nbase * sizeof(*ids));
				break;
			}
		}
	}
	if (s->opts.native_all)
		return n;
	/*
	 * Between a task's label and its coroutine's frame lie the C Task's
	 * step (_asyncio's task_step, the send into the coroutine): the loop's
	 * machinery, folded like its Python part.
	 */
	for (size_t i = 0; i < n; i++) {
		const struct pf_frame *f = ids[i] < s->prof->nframes ? &s->prof->frames[ids[i]] : NULL;

		if (fold && f && f->kind == FRAME_NATIVE)
			continue;
		fold = is_task_label(s->prof, ids[i]);
		ids[k++] = ids[i];
	}
	return k;
}

static struct waiting_entry *waiting_add(struct waiting_set *w)
{
	w->e = xgrow(w->e, sizeof(*w->e), w->n + 1, &w->alloc);
	return &w->e[w->n++];
}

/*
 * Keep what an earlier read saw of a task that runs at this one: the same
 * task (address, coroutine, context and name: a finished task's memory
 * goes to the next one made alike, and only its name tells them apart),
 * read under WAITING_KEEP_NS ago.
 */
static void keep_earlier(struct pyview *v, struct loop_thread *l,
			 const struct py_async_waiting_task *t)
{
	for (size_t k = 0; k < l->now.n; k++) {
		const struct waiting_entry *e = &l->now.e[k];

		if (e->task == t->task && e->coro == t->coro && e->context == t->context &&
		    e->name == t->name && v->cur_ns - e->read_ns < WAITING_KEEP_NS) {
			*waiting_add(&l->next) = *e;
			return;
		}
	}
}

/*
 * One task of a read. A suspended one (frames innermost first): under the
 * loop's callers, as a profile stack, with the labels of its own context.
 * One running as it is read, or not read whole (no frames), keeps what an
 * earlier read saw of it (keep_earlier): a task that takes turns with
 * others (each awaiting sleep(0), or woken in turn) is suspended at the
 * sampled instants it does not run, and dropping it would lose those for a
 * whole read's interval (CI: a busy task of three seen waiting 5 times in
 * 2 s instead of ~130).
 */
static void waiting_task(void *arg, const struct py_async_waiting_task *t)
{
	struct pyview *v = arg;
	struct loop_thread *l = v->cur;
	size_t depth = 0;
	uint32_t labels;

	if (!t->n) {
		keep_earlier(v, l, t);
		return;
	}
	labels = labels_of_context(v->s, t->context);

	/*
	 * Its context read after its chain: kept if the task is still
	 * suspended at the same await, so the context was its own, alive and
	 * unchanged (a task that finished meanwhile had its context freed:
	 * CPython recycles it with no variables, read as "<unreadable>";
	 * 3.12 vm, a task in 30-60 of 2000-2500 samples of a run). Else it is
	 * no waiting task any more: like one that resumed while its chain was
	 * read, it keeps what an earlier read saw of it.
	 */
	if (labels && py_async_still_waiting(&v->async, t) != 1) {
		keep_earlier(v, l, t);
		return;
	}
	memcpy(v->ids, l->base, l->nbase * sizeof(*v->ids));
	depth = l->nbase;
	for (size_t k = t->n; k-- > 0 && depth < v->ids_max;)
		v->ids[depth++] = merge_python_frame(v->s->prof, &t->frames[k]);
	*waiting_add(&l->next) = (struct waiting_entry){
		.task = t->task, .coro = t->coro, .context = t->context, .name = t->name,
		.labels = labels, .read_ns = v->cur_ns,
		.stack = profile_stack(v->s->prof, v->ids, depth) };
}

void pyview_profile_reset(struct sampler *s)
{
	struct pyview *v = s->pyview;

	if (!v)
		return;
	/*
	 * The loops' callers, the last read's stacks and their label sets are
	 * ids of the profile taken: forgotten, each loop learnt again at its
	 * thread's next sample (wall mode samples it every tick).
	 */
	for (size_t i = 0; i < v->nloops; i++)
		loop_thread_release(&v->loops[i]);
	memset(v->loops, 0, sizeof(v->loops));
	v->nloops = 0;
	v->pending_tid = 0;
}

void pyview_tick(struct sampler *s, uint64_t now)
{
	struct pyview *v = s->pyview;
	uint64_t interval;

	if (!v || !v->have_async || s->opts.mode != MODE_WALL)
		return;
	interval = s->opts.rate_hz > 0 ? (uint64_t)(1e9 / s->opts.rate_hz) : 10000000ull;
	for (size_t i = 0; i < v->nloops; i++) {
		struct loop_thread *l = &v->loops[i];
		uint64_t every;
		uint32_t thread;

		/*
		 * now is the tick's start: a loop thread sampled in this tick was
		 * seen after it (now - seen_ns wrapped, and the loop whose thread
		 * had just been sampled was taken for one not seen for a second).
		 */
		if (!l->loop || l->seen_ns + LOOP_FORGET_NS < now || sampler_thread_gone(s, l->tid))
			continue;
		every = interval / 2;
		if (WAITING_COST_FACTOR * l->read_cost_ns > every)
			every = WAITING_COST_FACTOR * l->read_cost_ns;
		if (!l->read_ns || now - l->read_ns >= every) {
			uint64_t t0 = fw_now_ns();
			struct waiting_set last = l->now;

			v->cur = l;
			v->cur_ns = now;
			l->next.n = 0;
			py_async_waiting(&v->async, l->loop, l->tstate, waiting_task, v);
			l->now = l->next;
			l->next = last;
			l->read_ns = now;
			l->read_cost_ns = fw_now_ns() - t0;
		}
		thread = sampler_thread(s, l->tid, now);
		for (size_t k = 0; k < l->now.n; k++) {
			const struct waiting_entry *e = &l->now.e[k];

			/*
			 * The task the loop thread's latest sample saw running
			 * counts there. That sample may come after the tick
			 * (bpf's ring is read as it fills): one of the last two
			 * ticks' is taken, an older one (its samples failing)
			 * says nothing of now.
			 */
			if (e->task == l->running && l->seen_ns + 2 * interval >= now)
				continue;
			profile_add_labeled(s->prof, thread, e->stack, e->labels, 1);
			s->prof->meta.samples++;
		}
	}
}
