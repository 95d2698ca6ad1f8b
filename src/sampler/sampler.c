/*
 * Implementation of sampler.h with the non-stopping reader backend
 * (process_vm_readv only). A tick reads every thread's Python stack; a torn
 * read drops that one thread's sample and counts an error.
 */
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/bpf.h"
#include "sampler/merge.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MERGED_MAX (UNWIND_MAX + PY_MAX_DEPTH + KERNEL_MAX_FRAMES)
#define NAME_REFRESH_NS 1000000000ull
#define STATUS_EVERY_NS 250000000ull
#define TIDS_REFRESH_NS 200000000ull
#define MODULES_CHECK_NS 100000000ull
/* A library loaded where an unloaded one was leaves no pc unknown: look anyway. */
#define MODULES_RECHECK_NS 1000000000ull
/* Threads that moved during the tick's copy: their own spans copied again, this much per tick. */
#define RETAKE_TRIES 32
#define RETAKE_BUDGET_NS 200000ull
/*
 * A thread's scheduler state is re-read at most this often (and whenever its
 * Python frame moves): exact at rates up to 100 Hz, one system call per
 * thread per 10 ms above.
 */
#define STATE_MAX_AGE_NS 10000000ull

volatile sig_atomic_t sampler_stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	sampler_stop_requested = 1;
}

void sampler_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;          /* no SA_RESTART: sleeps end at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void sampler_init(struct sampler *s, const struct py_target *t, struct profile *prof,
		  const struct sampler_opts *opts)
{
	sampler_init_files(s, t, prof, opts, NULL);
}

void sampler_init_files(struct sampler *s, const struct py_target *t, struct profile *prof,
			const struct sampler_opts *opts, struct elf_cache *files)
{
	memset(s, 0, sizeof(*s));
	s->target = *t;
	s->prof = prof;
	s->opts = *opts;
	mem_init_pid(&s->mem, t->pid);
	s->mem.prefetch = 1;
	taskstat_init(&s->tasks, t->pid);
	py_reader_init(&s->reader, &s->mem, &s->target);
	s->threads = xcalloc(PY_MAX_THREADS, sizeof(*s->threads));
	s->deferred = xcalloc(PY_MAX_THREADS, sizeof(*s->deferred));
	s->frames = xcalloc(PY_MAX_DEPTH, sizeof(*s->frames));
	s->frame_ids = xcalloc(MERGED_MAX, sizeof(*s->frame_ids));
	if (s->opts.backend == BACKEND_PTRACE || s->opts.backend == BACKEND_BPF) {
		modules_load(&s->mm, t->pid, files);
		symbolizer_init(&s->sym, &s->mm);
		s->sr = stack_reader_new();
		s->ns.py = s->frames;
		s->syms = xcalloc(UNWIND_MAX, sizeof(*s->syms));
		s->modules_ns = fw_now_ns();
	}
}

void sampler_release(struct sampler *s)
{
	py_reader_release(&s->reader);
	mem_release(&s->mem);
	taskstat_release(&s->tasks);
	if (s->opts.backend == BACKEND_PTRACE || s->opts.backend == BACKEND_BPF) {
		native_sample_clear(&s->ns);
		symbolizer_release(&s->sym);
		modules_release(&s->mm);
		stack_reader_free(s->sr);
		free(s->syms);
	}
	for (size_t i = 0; i < s->nbreaks; i++)
		free(s->breaks[i].module);
	free(s->breaks);
	free(s->tids);
	free(s->names);
	free(s->threads);
	free(s->deferred);
	free(s->frames);
	free(s->frame_ids);
	memset(s, 0, sizeof(*s));
}

static struct thread_name_cache *thread_cache(struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].tid == tid)
			return &s->names[i];
	return NULL;
}

uint32_t sampler_thread(struct sampler *s, pid_t tid, uint64_t now)
{
	char name[64];
	struct thread_name_cache *c = thread_cache(s, tid);
	uint64_t cpu;

	if (c) {
		c->seen_last_ns = now;
		if (now - c->refreshed_ns < NAME_REFRESH_NS)
			return c->thread;
		/* CPU time going backwards: the kernel reused the tid for a new thread. */
		if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu) && cpu < c->cpu_last_ns) {
			c->cpu_first_ns = c->cpu_last_ns = cpu;
			c->seen_first_ns = now;
		}
	}
	if (tid <= 0 || proc_task_comm(s->target.pid, tid, name, sizeof(name)))
		xsnprintf(name, sizeof(name), "%s", tid > 0 ? "?" : "unknown");
	if (!c) {
		s->names = xgrow(s->names, sizeof(*s->names), s->nnames + 1, &s->names_alloc);
		c = &s->names[s->nnames++];
		memset(c, 0, sizeof(*c));
		c->tid = tid;
		c->seen_first_ns = c->seen_last_ns = now;
		if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu))
			c->cpu_first_ns = c->cpu_last_ns = cpu;
	} else if (tid > 0 && !taskstat_cpu_ns(&s->tasks, tid, &cpu)) {
		c->cpu_last_ns = cpu;
	}
	c->thread = profile_thread(s->prof, s->target.pid, tid, name);
	c->refreshed_ns = now;
	return c->thread;
}

void sampler_finish_threads(struct sampler *s)
{
	uint64_t now = fw_now_ns(), cpu;

	for (size_t i = 0; i < s->nnames; i++) {
		struct thread_name_cache *c = &s->names[i];
		struct pf_thread *t = &s->prof->threads[c->thread];

		if (c->tid > 0 && !taskstat_cpu_ns(&s->tasks, c->tid, &cpu)) {
			c->cpu_last_ns = cpu;
			c->seen_last_ns = now;
		}
		t->cpu_ns = c->cpu_last_ns >= c->cpu_first_ns ? c->cpu_last_ns - c->cpu_first_ns : 0;
		t->wall_ns = c->seen_last_ns >= c->seen_first_ns ? c->seen_last_ns - c->seen_first_ns : 0;
	}
}

int sampler_mode_filter(struct sampler *s, pid_t tid, uint64_t tstate, uint64_t gil_holder,
			char *wait, size_t size)
{
	char state, label[160];
	int waiting;

	wait[0] = '\0';
	label[0] = '\0';
	if (tid <= 0 || taskstat_state_recent(&s->tasks, tid, fw_now_ns(), STATE_MAX_AGE_NS,
					      &state, NULL, 0))
		return s->opts.mode != MODE_GIL || (gil_holder && tstate == gil_holder);
	switch (s->opts.mode) {
	case MODE_CPU:
		return state == 'R';
	case MODE_WALL:
		if (state != 'R' && !taskstat_state_recent(&s->tasks, tid, fw_now_ns(),
							   STATE_MAX_AGE_NS, &state, label,
							   sizeof(label)))
			xsnprintf(wait, size, "[wait] %s", label);
		return 1;
	case MODE_GIL: {
		struct pf_thread *t = &s->prof->threads[sampler_thread(s, tid, fw_now_ns())];
		int holds = gil_holder && tstate == gil_holder;

		/* Not holding it but wanting to run: runnable, or parked on a futex. */
		waiting = !holds && (state == 'R' ||
			  (!taskstat_wait(&s->tasks, tid, label, sizeof(label)) &&
			   !strncmp(label, "futex", 5)));
		t->gil_ticks++;
		t->gil_held += holds;
		t->gil_waiting += waiting;
		return holds;
	}
	}
	return 1;
}

static int is_gone(int ret)
{
	return ret == -ESRCH || ret == -EPERM;
}

static int sample_threads(struct sampler *s, uint64_t now);
static int ptrace_tick(struct sampler *s, uint64_t now);

int sampler_tick(struct sampler *s)
{
	uint64_t now = fw_now_ns();
	int ret;

	if (s->opts.backend == BACKEND_PTRACE)
		return ptrace_tick(s, now);
	taskstat_prune(&s->tasks);
	mem_tick_begin(&s->mem);
	ret = sample_threads(s, now);
	mem_tick_end(&s->mem);
	mem_set_guards(&s->mem, s->guards, s->nguards);
	return ret;
}

/* One tick's work, with the tick's prefetched memory active. */
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

static int thread_gone(struct sampler *s, pid_t tid)
{
	char path[96];

	if (tid <= 0)
		return 0;
	xsnprintf(path, sizeof(path), "/proc/%d/task/%d", (int)s->target.pid, (int)tid);
	return access(path, F_OK) != 0;
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
	struct thread_name_cache *c = tid > 0 ? thread_cache(s, tid) : NULL;
	int moved = !c || c->leaf_addr != leaf->addr || c->leaf_instr != leaf->instr;

	wait[0] = '\0';
	if (c) {
		c->leaf_addr = leaf->addr;
		c->leaf_instr = leaf->instr;
	}
	if (!moved)
		sampler_mode_filter(s, tid, 0, 0, wait, size);
}

/*
 * Next tick's prefetch checks, before and after its copy, each thread's
 * innermost-frame pointer and the instruction pointers of its nearest
 * callers seen this tick: those change only when a call ends, which is when
 * a copy can mix two moments (even when the same frame address is reused at
 * once). A guard that moved makes only its own thread be read live.
 */
#define GUARDED_CALLERS 2

static void add_guard(struct sampler *s, uint64_t addr, uint32_t len, uint64_t owner)
{
	if (addr && s->nguards < MEM_MAX_GUARDS) {
		s->guards[s->nguards].addr = addr;
		s->guards[s->nguards].len = len;
		s->guards[s->nguards++].owner = owner;
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
		add_guard(s, lo, (uint32_t)(hi - lo), t->tstate);
		return;
	}
	for (k = 1; k < depth && k <= GUARDED_CALLERS; k++)
		add_guard(s, f[k].addr + (uint64_t)o->frame_instr, 8, t->tstate);
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

/* Read one thread's stack and add it to the profile. 0, or the target is gone. */
static int sample_one_thread(struct sampler *s, struct py_thread_info *t, uint64_t now,
			     uint64_t gc_thread)
{
	struct profile_meta *m = &s->prof->meta;
	uint32_t thread = 0, node;
	char wait[192];
	size_t depth;
	int ret;

	if (t->tid > 0)
		thread = sampler_thread(s, t->tid, now);   /* counted in the time summary */
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
		/* A thread that exited while being read is not an error. */
		if (!thread_gone(s, t->tid)) {
			m->errors++;
			if (t->tid > 0)
				s->prof->threads[thread].dropped++;
		}
		return 0;
	}
	guard_callers(s, t, s->frames, depth);
	if (s->opts.mode == MODE_WALL)
		wall_wait_leaf(s, t->tid, &s->frames[0], wait, sizeof(wait));
	/* Reader gives innermost first; the profile wants outermost first. */
	for (size_t k = 0; k < depth; k++)
		s->frame_ids[k] = merge_python_frame(s->prof, &s->frames[depth - 1 - k]);
	if (gc_thread && t->tstate == gc_thread && depth < PY_MAX_DEPTH)
		s->frame_ids[depth++] = profile_frame(s->prof, FRAME_OTHER,
						      profile_cstring(s->prof, "<GC>"), 0, 0);
	if (wait[0])
		s->frame_ids[depth++] = profile_frame(s->prof, FRAME_OTHER,
						      profile_cstring(s->prof, wait), 0, 0);
	if (t->tid <= 0)
		thread = sampler_thread(s, t->tid, now);
	node = profile_stack(s->prof, s->frame_ids, depth);
	profile_add(s->prof, thread, node, 1);
	m->samples++;
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
	struct profile_meta *m = &s->prof->meta;
	size_t nthreads;
	uint64_t gc_thread, retake_until;
	int ret, collecting;

	ret = py_reader_threads(&s->reader, s->threads, PY_MAX_THREADS, &nthreads);
	if (ret == -EAGAIN) {
		s->not_ready_ticks++;
		return 0;
	}
	if (is_gone(ret))
		return ret;
	if (ret) {
		m->errors++;
		return 0;
	}
	if (s->opts.mode == MODE_GIL) {
		int locked;
		if (py_reader_gil(&s->reader, &s->gil_holder, &locked) || !locked)
			s->gil_holder = 0;
	}
	s->nguards = 0;
	for (size_t i = 0; i < nthreads; i++)
		add_guard(s, s->threads[i].frame_slot, 8, s->threads[i].tstate);
	/* The collector runs in the thread that holds the GIL: mark it <GC>. */
	gc_thread = 0;
	if (!py_reader_gc(&s->reader, &collecting) && collecting) {
		int locked;
		if (s->opts.mode == MODE_GIL)
			gc_thread = s->gil_holder;
		else if (!py_reader_gil(&s->reader, &gc_thread, &locked) && !locked)
			gc_thread = 0;
	}
	/*
	 * Threads whose guards held still are read from the tick's copy first;
	 * the others get their own spans copied again (which may refresh data
	 * the first ones share) and are read after.
	 */
	for (size_t i = 0; i < nthreads; i++) {
		s->deferred[i] = s->mem.snap_active && mem_owner_moved(&s->mem, s->threads[i].tstate);
		if (!s->deferred[i] && (ret = sample_one_thread(s, &s->threads[i], now, gc_thread)))
			return ret;
	}
	retake_until = fw_now_ns() + RETAKE_BUDGET_NS;
	for (size_t i = 0; i < nthreads; i++) {
		if (!s->deferred[i])
			continue;
		retake_thread(s, &s->threads[i], retake_until);
		if ((ret = sample_one_thread(s, &s->threads[i], now, gc_thread)))
			return ret;
	}
	return 0;
}

int sampler_child_exited(struct sampler *s)
{
	if (s->opts.child > 0 && !s->child_reaped &&
	    waitpid(s->opts.child, &s->child_status, WNOHANG) == s->opts.child)
		s->child_reaped = 1;
	return s->opts.child > 0 && s->child_reaped;
}

/* Has the target gone away (exited, zombie, or our child reaped)? */
int sampler_target_exited(struct sampler *s)
{
	char state;

	if (sampler_child_exited(s))
		return 1;
	if (proc_task_state(s->target.pid, s->target.pid, &state))
		return 1;
	return state == 'Z' || state == 'X';
}




/* ---- the ptrace backend's tick -------------------------------------- */

static void count_break(struct sampler *s, const struct unwind_result *uw)
{
	const char *module = uw->end_module ? uw->end_module->name : "";

	for (size_t i = 0; i < s->nbreaks; i++) {
		if (s->breaks[i].reason == uw->end && !strcmp(s->breaks[i].module, module)) {
			s->breaks[i].count++;
			return;
		}
	}
	s->breaks = xgrow(s->breaks, sizeof(*s->breaks), s->nbreaks + 1, &s->breaks_alloc);
	s->breaks[s->nbreaks].module = xstrdup(module);
	s->breaks[s->nbreaks].reason = uw->end;
	s->breaks[s->nbreaks].count = 1;
	s->nbreaks++;
}

/*
 * A pc in no executable mapping we know: a library loaded since? Re-read
 * the mappings (at most every MODULES_CHECK_NS) and reload the modules only
 * when they changed. 1 when reloaded.
 */
int sampler_refresh_modules(struct sampler *s, uint64_t now)
{
	if (now - s->modules_ns < MODULES_CHECK_NS)
		return 0;
	s->modules_ns = now;
	if (!modules_changed(&s->mm))
		return 0;
	symbolizer_reset(&s->sym);
	modules_refresh(&s->mm);
	return 1;
}

/* Symbolize the native frames; reload the module map if a pc is in none. */
static void symbolize_native(struct sampler *s, uint64_t now)
{
	struct unwind_result *uw = &s->ns.uw;

	if (now - s->modules_ns >= MODULES_RECHECK_NS)
		sampler_refresh_modules(s, now);
	for (size_t i = 0; i < uw->n; i++)
		if (!modules_find_range(&s->mm, uw->pcs[i]) && sampler_refresh_modules(s, now))
			break;
	for (size_t i = 0; i < uw->n; i++)
		symbolize_pc(&s->sym, uw->pcs[i], uw->signal_frame[i], &s->syms[i]);
}

void sampler_record_native(struct sampler *s, pid_t tid, uint64_t now)
{
	struct profile_meta *m = &s->prof->meta;
	struct native_sample *ns = &s->ns;
	struct merge_input in;
	size_t depth, leftover;
	int complete;

	symbolize_native(s, now);
	complete = ns->uw.end == UNWIND_END_COMPLETE ||
		   (ns->uw.n && s->syms[ns->uw.n - 1].is_thread_entry);
	m->native_stacks++;
	if (complete)
		m->native_complete++;
	else
		count_break(s, &ns->uw);
	m->fp_steps += ns->uw.fp_steps;
	m->cfi_steps += ns->uw.cfi_steps;
	m->stopped_ns_total += ns->stopped_ns;
	if (ns->stopped_ns > m->stopped_ns_max)
		m->stopped_ns_max = ns->stopped_ns;
	memset(&in, 0, sizeof(in));
	in.native = &ns->uw;
	in.syms = s->syms;
	in.py = ns->py_ok ? ns->py : NULL;
	in.npy = ns->py_ok ? ns->npy : 0;
	in.kernel = ns->kernel;
	in.nkernel = ns->nkernel;
	in.wait = s->wait[0] ? s->wait : NULL;
	in.native_all = s->opts.native_all;
	depth = merge_stack(s->prof, &in, s->frame_ids, MERGED_MAX, &leftover);
	if (leftover)
		m->merge_mismatches++;
	if (depth) {
		profile_add(s->prof, sampler_thread(s, tid, now),
			    profile_stack(s->prof, s->frame_ids, depth), 1);
		m->samples++;
	} else {
		m->errors++;
	}
}

static int ptrace_tick(struct sampler *s, uint64_t now)
{
	size_t nthreads = 0;
	int ret;

	if (!s->tids || now - s->tids_ns > TIDS_REFRESH_NS) {
		free(s->tids);
		s->tids = NULL;
		if (proc_tasks(s->target.pid, &s->tids, &s->ntids))
			return -ESRCH;
		s->tids_ns = now;
	}
	/* The thread list is read live: the snapshot would predate the stops. */
	ret = py_reader_threads(&s->reader, s->threads, PY_MAX_THREADS, &nthreads);
	if (s->opts.mode == MODE_GIL) {
		int locked;
		if (py_reader_gil(&s->reader, &s->gil_holder, &locked) || !locked)
			s->gil_holder = 0;
	}
	taskstat_prune(&s->tasks);
	if (ret == -ESRCH || ret == -EPERM)
		return ret;
	if (ret)
		nthreads = 0;
	for (size_t i = 0; i < s->ntids && !sampler_stop_requested; i++) {
		struct py_thread_info *pt = NULL;
		pid_t tid = s->tids[i];

		for (size_t k = 0; k < nthreads; k++)
			if (s->threads[k].tid == tid)
				pt = &s->threads[k];
		sampler_thread(s, tid, now);
		/* Decided before the stop: stopping a thread changes its state. */
		if (!sampler_mode_filter(s, tid, pt ? pt->tstate : 0, s->gil_holder, s->wait,
					 sizeof(s->wait)))
			continue;
		ret = ptrace_sample_thread(s->target.pid, tid, &s->mm, &s->reader, pt,
					   s->opts.kernel, s->sr, &s->ns);
		if (ret == -EPERM) {
			s->ptrace_denied = 1;
			return -EPERM;
		}
		if (ret) {
			native_sample_clear(&s->ns);
			continue;      /* the thread exited meanwhile */
		}
		sampler_record_native(s, tid, now);
		native_sample_clear(&s->ns);
	}
	return 0;
}

static int cmp_break(const void *a, const void *b)
{
	const struct unwind_break *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The module layer's debug counters, summed over the targets, and what it could not open. */
static void modules_meta(struct sampler *s)
{
	struct profile_meta *m = &s->prof->meta;
	struct strbuf sb = STRBUF_INIT;
	char why[PATH_MAX + 256];

	m->modules_loaded += s->mm.stats.loaded;
	m->modules_reused += s->mm.stats.reused;
	m->modules_refreshes += s->mm.stats.refreshes;
	for (size_t i = 0; i < s->mm.n; i++) {
		if (!module_problem(&s->mm.mods[i], s->target.pid, why, sizeof(why)))
			continue;
		strbuf_addf(&sb, "%s%s", sb.len || m->modules_unreadable ? "; " : "", why);
	}
	if (sb.len) {
		struct strbuf all = STRBUF_INIT;

		strbuf_addf(&all, "%s%s", m->modules_unreadable ? m->modules_unreadable : "",
			    strbuf_str(&sb));
		free(m->modules_unreadable);
		m->modules_unreadable = strbuf_detach(&all);
	}
	strbuf_release(&sb);
}

void sampler_finish_meta(struct sampler *s)
{
	struct strbuf sb = STRBUF_INIT;
	char *old = s->prof->meta.unwind_breaks;

	modules_meta(s);
	if (!s->nbreaks)
		return;
	qsort(s->breaks, s->nbreaks, sizeof(*s->breaks), cmp_break);
	if (old)
		strbuf_addf(&sb, "%s; ", old);
	for (size_t i = 0; i < s->nbreaks && i < 8; i++)
		strbuf_addf(&sb, "%s%s: %s (%llu)", i ? "; " : "",
			    s->breaks[i].module[0] ? s->breaks[i].module : "[no module]",
			    unwind_end_text(s->breaks[i].reason), (unsigned long long)s->breaks[i].count);
	free(old);
	s->prof->meta.unwind_breaks = strbuf_detach(&sb);
}
