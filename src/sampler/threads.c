/*
 * The target's threads as the profile shows them (backend.h): each one's
 * label (Python's name for it where it has one, the kernel's beside it, its
 * interpreter, its exec generation), its CPU and wall time, and the Python
 * thread states of the latest read of the interpreter's list, found by tid.
 * Below the mode's policy (sampler.c) and Python's own view (pyview.c),
 * which both call in here; nothing here calls them.
 */
#include <errno.h>
#include <unistd.h>

#include "sampler/backend.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

/* A thread label not (yet) in the profile: after sampler_threads_reset. */
#define THREAD_NONE UINT32_MAX
#define NAME_REFRESH_NS 1000000000ull
/*
 * A thread labelled without Python's name (a thread just started: threading
 * sets its native id as it starts) is looked at again this often during its
 * first NAME_YOUNG_NS, so a short capture does not keep the kernel's name
 * for a thread Python names a moment later. Young from when this sampler
 * first saw it, not from each period's start: an agent's long-lived thread
 * that Python never names (threading not imported) was read for ten times a
 * second for the first 3 s of every period, most of the agent's reads.
 */
#define NAME_UNNAMED_REFRESH_NS 100000000ull
#define NAME_YOUNG_NS 3000000000ull
/*
 * Otherwise a label is made again once a second while it changes, and less
 * often while it comes out the same (each such look doubles the wait, up to
 * NAME_STABLE_NS): a look reads the kernel's name and CPU time from /proc
 * and threading's table, and an agent's long-lived threads were looked at
 * every second, most of its reads of its targets (issue 25).
 */
#define NAME_STABLE_NS 8000000000ull

/*
 * Threads by tid: a hash index over the label caches (names) and over this
 * tick's thread states (threads), so matching a sample to its thread costs
 * the same with 5000 threads as with 5 (a linear search made a tick
 * quadratic in the threads).
 */
static uint64_t tid_hash(pid_t tid)
{
	return hash_mix64((uint64_t)(uint32_t)tid);
}

static uint64_t name_hash(const void *owner, uint32_t id)
{
	return tid_hash(((const struct sampler *)owner)->threads.names[id].tid);
}

static uint64_t py_thread_hash(const void *owner, uint32_t id)
{
	return tid_hash(((const struct sampler *)owner)->threads.py[id].tid);
}

struct thread_name_cache *sampler_thread_cache(struct sampler *s, pid_t tid)
{
	size_t pos = hidx_start(&s->threads.names_index, tid_hash(tid));

	for (uint32_t id; (id = hidx_next(&s->threads.names_index, &pos)) != HIDX_NONE;)
		if (s->threads.names[id].tid == tid)
			return &s->threads.names[id];
	return NULL;
}

struct thread_name_cache *sampler_thread_entry(struct sampler *s, pid_t tid, uint64_t now)
{
	struct thread_name_cache *c = sampler_thread_cache(s, tid);

	if (!c) {
		sampler_thread(s, tid, now);
		c = sampler_thread_cache(s, tid);
	}
	return c;
}

static void names_reindex(struct sampler *s)
{
	hidx_clear(&s->threads.names_index);
	for (size_t i = 0; i < s->threads.nnames; i++)
		hidx_insert(&s->threads.names_index, tid_hash(s->threads.names[i].tid), (uint32_t)i,
			    name_hash, s);
}

static int young(const struct thread_name_cache *c, uint64_t now)
{
	return !c || now - c->born_ns < NAME_YOUNG_NS;
}

/* Python's name for thread tid (threading's), or NULL (none, unreadable). */
static const char *python_name(struct sampler *s, pid_t tid, int young, uint64_t now)
{
	if (!s->have_objects || tid <= 0)
		return NULL;
	return py_thread_name(&s->py_names, tid, young, now);
}

/*
 * Read threading's names again now (the capture's end: threads still
 * unnamed), up to three times while a read fails (the table changed under
 * it). 0 or -errno (-ENOTSUP: names cannot be read here).
 */
static int python_names_reread(struct sampler *s, uint64_t now)
{
	int ret = -ENOTSUP;

	if (!s->have_objects)
		return ret;
	for (int i = 0; i < 3 && ret && ret != -ENOENT && ret != -ESRCH; i++)
		ret = py_thread_names_read(&s->py_names, now);
	return ret;
}

uint32_t sampler_thread(struct sampler *s, pid_t tid, uint64_t now)
{
	char name[64], interp[32];
	struct thread_name_cache *c = sampler_thread_cache(s, tid);
	struct py_thread_info *pt;
	struct strbuf label = STRBUF_INIT;
	uint64_t label_hash;
	const char *pyname;
	uint64_t cpu;
	int comm;

	/*
	 * With subinterpreters: which interpreter the thread runs in (it may
	 * enter one); a tick whose thread list could not be read keeps it.
	 */
	pt = sampler_py_thread(s, tid);
	if (!pt && c)
		xsnprintf(interp, sizeof(interp), "%s", c->interp);
	else
		py_reader_interp_label(&s->reader, pt, interp, sizeof(interp));
	if (c) {
		uint64_t every = !c->python_named && young(c, now) ? NAME_UNNAMED_REFRESH_NS :
				 c->label_every ? c->label_every : NAME_REFRESH_NS;

		c->seen_last_ns = now;
		if (c->thread != THREAD_NONE && now - c->refreshed_ns < every &&
		    !strcmp(c->interp, interp))
			return c->thread;
		/* CPU time going backwards: the kernel reused the tid for a new thread. */
		if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu) && cpu < c->cpu_last_ns) {
			c->cpu_first_ns = c->cpu_last_ns = cpu;
			c->seen_first_ns = c->born_ns = now;
		}
	}
	comm = tid > 0 && !proc_task_comm(s->target.pid, tid, name, sizeof(name));
	if (!comm)
		xsnprintf(name, sizeof(name), "%s", tid > 0 ? "?" : "unknown");
	/* Python's name for the thread where it has one; the kernel's beside it */
	pyname = python_name(s, tid, young(c, now), now);
	/* a thread (or process) gone reads no name: the one it had stays */
	if (!pyname && !comm && c && c->thread != THREAD_NONE) {
		c->refreshed_ns = now;
		return c->thread;
	}
	strbuf_addstr(&label, pyname ? pyname : name);
	strbuf_addstr(&label, interp);
	/* After an exec the same thread ids run another program: labelled apart. */
	if (s->life.generation)
		strbuf_addf(&label, " (exec %u)", s->life.generation);
	if (!c) {
		s->threads.names = xgrow(s->threads.names, sizeof(*s->threads.names),
					 s->threads.nnames + 1, &s->threads.names_alloc);
		c = &s->threads.names[s->threads.nnames++];
		memset(c, 0, sizeof(*c));
		c->tid = tid;
		hidx_insert(&s->threads.names_index, tid_hash(tid), (uint32_t)(s->threads.nnames - 1),
			    name_hash, s);
		c->seen_first_ns = c->seen_last_ns = c->born_ns = now;
		if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu))
			c->cpu_first_ns = c->cpu_last_ns = cpu;
	} else if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu)) {
		c->cpu_last_ns = cpu;
	}
	c->thread = profile_thread_gen(s->prof, s->target.pid, tid, s->life.generation,
				       strbuf_str(&label));
	profile_thread_comm(s->prof, c->thread, comm ? name : NULL);
	xsnprintf(c->interp, sizeof(c->interp), "%s", interp);
	c->python_named = pyname != NULL;
	c->refreshed_ns = now;
	/* the same label as last time (also across a period's reset): wait longer */
	label_hash = hash_bytes(strbuf_str(&label), label.len) ^
		     hash_mix64(hash_bytes(name, strlen(name)));
	c->label_every = look_again_after(c->label_every, label_hash == c->label_hash,
					  NAME_REFRESH_NS, NAME_STABLE_NS);
	c->label_hash = label_hash;
	strbuf_release(&label);
	return c->thread;
}

/*
 * Young threads still labelled with the kernel's name (started in the last
 * moments, or since the last look on a loaded machine): threading's names
 * are read once more and they are labelled again. A thread's label is its
 * profile entry's, so every sample of it takes the name. An older one
 * unnamed (threading not imported, a thread it does not know) waits for
 * its next look: read again at each period's end, the table was most of an
 * agent's reads.
 */
static void name_unnamed_threads(struct sampler *s, uint64_t now)
{
	int reread = 0;

	for (size_t i = 0; i < s->threads.nnames; i++) {
		struct thread_name_cache *c = &s->threads.names[i];

		if (c->thread == THREAD_NONE || c->python_named || c->tid <= 0 || !young(c, now))
			continue;
		uint64_t seen = c->seen_last_ns;    /* a look, not a sighting */

		if (!reread++ && python_names_reread(s, now))
			return;
		c->refreshed_ns = 0;
		sampler_thread(s, c->tid, now);
		c->seen_last_ns = seen;
	}
}

/* Fill each thread's CPU and wall time (kernel accounting) into the profile. */
void sampler_finish_threads(struct sampler *s)
{
	uint64_t now = fw_now_ns(), cpu;

	name_unnamed_threads(s, now);

	for (size_t i = 0; i < s->threads.nnames; i++) {
		struct thread_name_cache *c = &s->threads.names[i];
		struct pf_thread *t;

		if (c->thread == THREAD_NONE)
			continue;          /* not seen since the profile was emptied */
		t = &s->prof->threads[c->thread];
		if (c->tid > 0 && !taskstat_cpu_ns(&s->tasks, c->tid, &cpu)) {
			c->cpu_last_ns = cpu;
			c->seen_last_ns = now;
		}
		t->cpu_ns = c->cpu_last_ns >= c->cpu_first_ns ? c->cpu_last_ns - c->cpu_first_ns : 0;
		t->wall_ns = c->seen_last_ns >= c->seen_first_ns ? c->seen_last_ns - c->seen_first_ns : 0;
	}
}

void sampler_threads_reset(struct sampler *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->threads.nnames; i++) {
		struct thread_name_cache c = s->threads.names[i];

		if (sampler_thread_gone(s, c.tid))
			continue;
		c.thread = THREAD_NONE;
		c.refreshed_ns = 0;
		c.cpu_first_ns = c.cpu_last_ns;
		c.seen_first_ns = c.seen_last_ns;
		s->threads.names[kept++] = c;
	}
	s->threads.nnames = kept;
	names_reindex(s);
}

int sampler_read_py_threads(struct sampler *s)
{
	int ret = py_reader_threads(&s->reader, s->threads.py, PY_MAX_THREADS, &s->threads.npy);

	if (ret)
		s->threads.npy = 0;
	/* a tid listed twice (its first state kept by the reader) finds the first */
	hidx_clear(&s->threads.py_index);
	for (size_t k = 0; k < s->threads.npy; k++)
		if (!sampler_py_thread(s, s->threads.py[k].tid))
			hidx_insert(&s->threads.py_index, tid_hash(s->threads.py[k].tid), (uint32_t)k,
				    py_thread_hash, s);
	return ret;
}

struct py_thread_info *sampler_py_thread(struct sampler *s, pid_t tid)
{
	size_t pos = hidx_start(&s->threads.py_index, tid_hash(tid));

	for (uint32_t id; (id = hidx_next(&s->threads.py_index, &pos)) != HIDX_NONE;)
		if (s->threads.py[id].tid == tid)
			return &s->threads.py[id];
	return NULL;
}

int sampler_thread_gone(const struct sampler *s, pid_t tid)
{
	char path[96];

	if (tid <= 0)
		return 0;
	xsnprintf(path, sizeof(path), "/proc/%d/task/%d", (int)s->target.pid, (int)tid);
	return access(path, F_OK) != 0;
}
