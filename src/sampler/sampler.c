/*
 * What every backend shares (backend.h): a target's set-up and release,
 * the mode's decision of which threads count this tick, the stable read of
 * a waiting thread, and recording a Python-only or merged native sample
 * into the profile. Its threads' labels and accounting: threads.c.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "sampler/backend.h"
#include "sampler/labels.h"
#include "sampler/merge.h"
#include "sampler/pyview.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MERGED_MAX (UNWIND_MAX + PY_MAX_DEPTH + KERNEL_MAX_FRAMES)
#define MODULES_CHECK_NS 100000000ull
/*
 * A library loaded where an unloaded one was leaves no pc unknown: look
 * anyway, after a second, and after twice as long each time the mappings
 * are found as they were, up to MODULES_STABLE_NS (an agent re-read each
 * process's maps every second: issue 25).
 */
#define MODULES_RECHECK_NS 1000000000ull
#define MODULES_STABLE_NS 8000000000ull
/*
 * A thread's scheduler state is read afresh for every sample: threads that
 * share the GIL change state every few milliseconds, and a state kept for
 * 10 ms counted a thread waiting for the GIL as on a CPU (in cpu mode, two
 * such threads showed 53-73% where a reader at one instant showed 18%).
 * One system call per thread per tick.
 */
#define STATE_MAX_AGE_NS 0ull
#define TIDS_REFRESH_NS 200000000ull
/* gil mode's leaves for a thread not holding the GIL */
#define GIL_WAITING "<waiting for GIL>"
#define GIL_RELEASED "<running without GIL>"
int sampler_init(struct sampler *s, const struct py_target *t, struct profile *prof,
		 const struct sampler_opts *opts, const struct backend_ops *ops,
		 struct elf_cache *files, struct strbuf *without)
{
	struct strbuf why = STRBUF_INIT;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->target = *t;
	s->prof = prof;
	s->opts = *opts;
	s->cpu_weighted = opts->mode == MODE_CPU && (ops->tick_modes & 1u << MODE_CPU);
	prof->meta.cpu_weighted |= s->cpu_weighted;
	proc_program_id(t->pid, &s->life.program);
	if (proc_watch_open(&s->life.watch, t->pid))
		s->life.watch.dirfd = s->life.watch.statfd = -1;
	mem_init_pid(&s->mem, t->pid);
	taskstat_init(&s->tasks, t->pid);
	py_reader_init(&s->reader, &s->mem, &s->target);
	s->reader.keep_internal = opts->native_all;
	s->have_objects = py_objects_init(&s->objects, &s->reader) == 0;
	if (s->have_objects)
		py_thread_names_init(&s->py_names, &s->objects);
	/* The command checked the first targets; a later one (a child) is only told. */
	s->pyview = pyview_new(s, &why);
	if (why.len)
		strbuf_addf(without, "task stacks (%s)", strbuf_str(&why));
	if (opts->labels.n) {
		strbuf_reset(&why);
		s->labels = labels_new(s, &why);
		if (!s->labels)
			strbuf_addf(without, "%slabels (%s)", without->len ? ", " : "",
				    strbuf_str(&why));
	}
	strbuf_release(&why);
	s->threads.py = xcalloc(PY_MAX_THREADS, sizeof(*s->threads.py));
	s->frames = xcalloc(PY_MAX_DEPTH, sizeof(*s->frames));
	s->frame_ids = xcalloc(MERGED_MAX, sizeof(*s->frame_ids));
	s->native.ns.py = s->frames;
	if (s->opts.native) {
		modules_load(&s->native.mm, t->pid, files,
			     s->opts.no_debuginfod ? MODULES_NO_DEBUGINFOD : 0, s->opts.stop);
		symbolizer_init(&s->native.sym, &s->native.mm);
		s->native.sym.no_inline = s->opts.no_inline;
		s->native.syms = xcalloc(UNWIND_MAX, sizeof(*s->native.syms));
		s->native.modules_ns = fw_now_ns();
	}
	if (ops->target_init)
		ret = ops->target_init(s);
	return ret;
}

void sampler_release(struct sampler *s, const struct backend_ops *ops)
{
	if (ops->target_release)
		ops->target_release(s);
	labels_free(s->labels);
	pyview_free(s->pyview);
	if (s->have_objects) {
		py_thread_names_release(&s->py_names);
		py_objects_release(&s->objects);
	}
	py_reader_release(&s->reader);
	mem_release(&s->mem);
	taskstat_release(&s->tasks);
	proc_watch_close(&s->life.watch);
	if (s->opts.native) {
		native_sample_clear(&s->native.ns);
		symbolizer_release(&s->native.sym);
		modules_release(&s->native.mm);
		free(s->native.syms);
	}
	for (size_t i = 0; i < s->native.nbreaks; i++)
		free(s->native.breaks[i].module);
	free(s->native.breaks);
	free(s->threads.names);
	hidx_release(&s->threads.names_index);
	free(s->threads.tids);
	free(s->threads.py);
	hidx_release(&s->threads.py_index);
	free(s->frames);
	free(s->frame_ids);
	memset(s, 0, sizeof(*s));
}

void native_sample_clear(struct native_sample *ns)
{
	for (size_t i = 0; i < ns->nkernel; i++)
		free(ns->kernel[i]);
	ns->nkernel = 0;
	ns->npy = 0;
	ns->py_ok = 0;
	ns->gc = 0;
	ns->unwound = 0;
	ns->stopped_ns = 0;
	ns->read_ns = 0;
	ns->stopped_read = 0;
	ns->gil_holder = 0;
	ns->gil_locked = ns->collecting = 0;
	ns->syscall_nr = -1;
	ns->syscall_arg0 = 0;
	ns->uw.n = 0;
}

void sampler_profile_reset(struct sampler *s)
{
	sampler_threads_reset(s);
	/* Code objects keep their names; only the string ids go. */
	for (size_t i = 0; i < s->reader.codes_cap; i++) {
		if (s->reader.codes[i]) {
			s->reader.codes[i]->user_name = 0;
			s->reader.codes[i]->user_file = 0;
		}
	}
	for (size_t i = 0; i < s->native.nbreaks; i++)
		free(s->native.breaks[i].module);
	s->native.nbreaks = 0;
	memset(&s->native.sym.stats, 0, sizeof(s->native.sym.stats));
	labels_profile_reset(s->labels);
	pyview_profile_reset(s);
}

void sampler_wait_label(struct sampler *s, pid_t tid, char *wait, size_t size)
{
	char state, label[160];

	wait[0] = '\0';
	if (tid > 0 && !taskstat_state_recent(&s->tasks, tid, fw_now_ns(), STATE_MAX_AGE_NS,
					      &state, label, sizeof(label)) && state != 'R')
		xsnprintf(wait, size, "[wait] %s", label);
}

int sampler_mode_filter(struct sampler *s, pid_t tid, uint64_t tstate, uint64_t gil_holder,
			char *wait, size_t size)
{
	char state;
	int waiting;

	wait[0] = '\0';
	s->tick.marker[0] = '\0';
	/* A thread with no Python state handles no exception; an unreadable one is not counted. */
	if (s->opts.mode == MODE_EXCEPTION &&
	    (!tstate || pyview_exception(s, tstate, s->tick.marker, sizeof(s->tick.marker)) != 1))
		return 0;
	if (tid <= 0 || taskstat_state_recent(&s->tasks, tid, fw_now_ns(), STATE_MAX_AGE_NS,
					      &state, NULL, 0))
		return s->opts.mode != MODE_GIL || (gil_holder && tstate == gil_holder);
	/* every thread, a waiting one with its [wait] leaf (wall, exception) */
	if (sample_mode_waits(s->opts.mode)) {
		if (state != 'R')
			sampler_wait_label(s, tid, wait, size);
		return 1;
	}
	switch (s->opts.mode) {
	case MODE_CPU:
		return state == 'R';
	case MODE_GIL: {
		uint32_t thread = sampler_thread(s, tid, fw_now_ns());   /* may move the table */
		struct pf_thread *t = &s->prof->threads[thread];
		int holds = gil_holder && tstate == gil_holder, sampled = holds, flag;
		uint64_t arg0 = 0;
		long nr = -1;

		if (!holds) {
			/* a runnable thread woken in take_gil is still in its futex call */
			if (taskstat_held(&s->tasks, tid) || taskstat_syscall(&s->tasks, tid, &nr, &arg0))
				nr = -1;      /* stopped first: its registers tell, at the read */
			sampled = sampler_gil_marker(s, tstate, state == 'R', nr, arg0);
		}
		/*
		 * The share of ticks waiting counts a runnable thread without it as
		 * waiting, unless its own flag (3.15+) says: /proc shows a woken
		 * waiter and one running native code alike ("running"). Samples
		 * are told apart by the registers at their instant (bpf, ptrace).
		 */
		waiting = !strcmp(s->tick.marker, GIL_WAITING) ||
			  (!holds && state == 'R' && tstate &&
			   py_gil_requested(&s->reader, tstate, &flag) == -ENOTSUP);
		t->gil_ticks++;
		t->gil_held += holds;
		t->gil_waiting += waiting;
		return sampled;
	}
	default:
		return 1;
	}
}

void sampler_read_gil(struct sampler *s)
{
	int locked;

	if (s->opts.mode != MODE_GIL)
		return;
	if (py_reader_gil(&s->reader, &s->tick.gil_holder, &locked) || !locked)
		s->tick.gil_holder = 0;
	/* 3.12+ find the GIL through the interpreter, which a new one may replace */
	if (py_gil_waits(&s->reader, &s->tick.gil_waits))
		memset(&s->tick.gil_waits, 0, sizeof(s->tick.gil_waits));
}

int sampler_gil_marker(struct sampler *s, uint64_t tstate, int on_cpu, long nr, uint64_t arg0)
{
	const char *name = nr >= 0 ? arch_syscall_name(nr) : NULL;
	int requested = 0;

	s->tick.marker[0] = '\0';
	if (!tstate)
		return 0;            /* no Python thread: it never takes the GIL */
	if (py_gil_requested(&s->reader, tstate, &requested))
		requested = 0;
	if (requested || (name && !strcmp(name, "futex") && s->tick.gil_waits.cond &&
			  py_gil_waits_on(&s->tick.gil_waits, arg0)))
		xsnprintf(s->tick.marker, sizeof(s->tick.marker), "%s", GIL_WAITING);
	else if (on_cpu)
		xsnprintf(s->tick.marker, sizeof(s->tick.marker), "%s", GIL_RELEASED);
	return s->tick.marker[0] != '\0';
}

int sampler_instant_keep(struct sampler *s, const struct thread_instant *in, int *holds)
{
	*holds = in->tstate && in->gil_locked && in->gil_holder == in->tstate;
	if (s->opts.mode != MODE_GIL)
		return 1;
	if (*holds) {
		s->tick.marker[0] = '\0';
		return 1;
	}
	return sampler_gil_marker(s, in->tstate, in->on_cpu, in->syscall_nr, in->syscall_arg0);
}

uint64_t sampler_gc_thread(struct sampler *s)
{
	uint64_t holder = 0;
	int collecting, locked;

	if (py_reader_gc(&s->reader, &collecting) || !collecting)
		return 0;
	if (s->opts.mode == MODE_GIL)
		return s->tick.gil_holder;
	if (py_reader_gil(&s->reader, &holder, &locked) || !locked)
		return 0;
	return holder;
}

int sampler_read_waiting(struct sampler *s, struct py_thread_info *t, size_t *depth)
{
	uint64_t before, after;
	char state;
	int ret;

	*depth = 0;
	/* Thread-level failures (it exited) say "read it another way": -EAGAIN. */
	if (t->tid <= 0 || taskstat_switches(&s->tasks, t->tid, &before) ||
	    taskstat_state(&s->tasks, t->tid, &state) || state == 'R')
		return -EAGAIN;
	ret = py_reader_thread_frame(&s->reader, t);
	if (!ret && t->frame)
		ret = py_reader_stack(&s->reader, t, s->frames, PY_MAX_DEPTH, depth);
	if (ret)
		return ret;
	/* its context at the same still moment, kept only if it stayed still */
	labels_read(s, t->tid, t->tstate);
	if (taskstat_switches(&s->tasks, t->tid, &after) || after != before)
		return -EAGAIN;
	return 0;
}

/* The target's threads from /proc, listed again every TIDS_REFRESH_NS. 0 or -ESRCH. */
static int sampler_refresh_tids(struct sampler *s, uint64_t now)
{
	if (!s->threads.tids || now - s->threads.tids_ns > TIDS_REFRESH_NS) {
		free(s->threads.tids);
		s->threads.tids = NULL;
		s->threads.ntids = 0;
		if (proc_tasks(s->target.pid, &s->threads.tids, &s->threads.ntids))
			return -ESRCH;
		s->threads.tids_ns = now;
	}
	return 0;
}

int sampler_list_threads(struct sampler *s, uint64_t now)
{
	int ret;

	if (sampler_refresh_tids(s, now))
		return -ESRCH;
	ret = sampler_read_py_threads(s);
	if (ret == -ESRCH || ret == -EPERM)
		return ret;
	return 0;                /* not started yet, or torn: native threads only */
}

int sampler_tick_begin(struct sampler *s, uint64_t now)
{
	int ret = sampler_list_threads(s, now);

	if (ret)
		return ret;
	sampler_read_gil(s);
	taskstat_prune(&s->tasks);
	return 0;
}

struct py_thread_info *sampler_tick_thread(struct sampler *s, size_t i, uint64_t now)
{
	pid_t tid = s->threads.tids[i];

	sampler_thread(s, tid, now);
	return sampler_py_thread(s, tid);
}

int sampler_read_at_instant(struct sampler *s, pid_t tid, uint64_t tstate)
{
	if (tstate)
		labels_read(s, tid, tstate);
	if (s->opts.mode != MODE_EXCEPTION)
		return 0;
	return pyview_exception(s, tstate, s->tick.marker, sizeof(s->tick.marker)) == 1;
}

/* A thread on a CPU: read at one instant by the backend, kept by the mode's rule then. */
static int tick_read_instant(struct sampler *s, const struct backend_ops *ops, pid_t tid,
			     struct py_thread_info *pt, uint64_t now)
{
	struct thread_instant in = { 0 };
	int ret, holds;

	ret = ops->read_instant(s, tid, pt, &in);
	if (ret == -EPERM) {
		native_sample_clear(&s->native.ns);
		return ret;
	}
	/* could not be read in time (a stop not taken: asleep in the kernel): counted */
	if (ret == -ETIMEDOUT)
		sampler_record_dropped(s, tid, now);
	/*
	 * Not read (the thread exited meanwhile); or the handler the check
	 * before the read saw had ended by its instant; or, in gil mode, the
	 * holder chosen at the tick let go before it, or what a thread did
	 * without the GIL said otherwise at that instant.
	 */
	if (ret || (s->opts.mode == MODE_EXCEPTION && !in.handling) ||
	    !sampler_instant_keep(s, &in, &holds)) {
		native_sample_clear(&s->native.ns);
		return 0;
	}
	s->native.ns.gc = in.collecting && holds;
	sampler_weigh_read(s, in.at_ns ? in.at_ns : fw_now_ns());
	sampler_record_native(s, tid, now);
	native_sample_clear(&s->native.ns);
	return 0;
}

/*
 * A backend that stops a thread to read it (ptrace) stops a thread on a CPU
 * before the tick reads anything of its process. A read of its memory (the
 * thread list, the GIL) waits while the target holds its memory map's lock
 * (brk, mmap, mprotect), and a thread stopped after that read was read
 * where the call had led by then, not where it was at the tick: a stopped
 * reader on another CPU than the target read callshapes.py's zlib call 3-5
 * points under bpf and the target's own clock, one on its CPU (which cannot
 * run until the call returns: a kernel without preemption) 1.5-2.6 (issue
 * 21). Stopped first, a thread in such a call stops as it returns, inside
 * it. One thread, the first on a CPU (with --python-only, of those that
 * were Python threads at the last look), read and let go before any other
 * is stopped, and nothing is read while it is stopped that takes the
 * target's exec lock (another seize, /proc's syscall and stack files):
 * an execve in another thread waits for a thread held stopped to be reaped
 * while holding that lock, and would wait on framewalk forever. Its state
 * reads as before the stop (taskstat_hold). Returns its tid, or 0.
 */
static pid_t tick_stop_first(struct sampler *s, const struct backend_ops *ops, uint64_t now)
{
	char state;

	if (!ops->stop_first || sampler_refresh_tids(s, now))
		return 0;
	for (size_t i = 0; i < s->threads.ntids; i++) {
		pid_t tid = s->threads.tids[i];

		if (!s->opts.native && !sampler_py_thread(s, tid))
			continue;
		if (taskstat_state(&s->tasks, tid, &state) || state != 'R')
			continue;
		/* one try: refused or not stopped in time, it is read as any other */
		if (ops->stop_first(s, tid))
			return 0;
		taskstat_hold(&s->tasks, tid, state);
		return tid;
	}
	return 0;
}

/* The thread stopped first (tick_stop_first; 0: none) let go, whether it was read or not. */
static void tick_let_go_first(struct sampler *s, const struct backend_ops *ops, pid_t first)
{
	if (!first)
		return;
	ops->tick_done(s);
	taskstat_hold(&s->tasks, first, 0);
}

static int tick_threads(struct sampler *s, const struct backend_ops *ops, uint64_t now,
			pid_t first);

int sampler_tick(struct sampler *s, const struct backend_ops *ops, uint64_t now)
{
	pid_t first;
	int ret;

	if (ops->tick)
		return ops->tick(s, now);
	first = tick_stop_first(s, ops, now);
	ret = tick_threads(s, ops, now, first);
	tick_let_go_first(s, ops, first);       /* on every path (again: does nothing) */
	return ret;
}

/*
 * Thread s->threads.tids[i] under the mode's rules (sampler_tick). 0 (read, or not
 * to be), or -ESRCH/-EPERM for the whole target.
 */
static int tick_thread(struct sampler *s, const struct backend_ops *ops, size_t i, int in_kernel,
		       uint64_t now)
{
	pid_t tid = s->threads.tids[i];
	struct py_thread_info *pt = sampler_tick_thread(s, i, now);
	int ret;

	s->tick.weight = 0;     /* none left from a thread read before and not recorded */
	s->tick.waited = 0;
	if (!pt && !s->opts.native)
		return 0;      /* Python frames only, and it has none */
	/* the backend reads the waiting threads: gil mode still counts each one's tick */
	if (in_kernel && s->opts.mode != MODE_GIL)
		return 0;
	/* Decided before the read: stopping a thread changes its state. */
	if (!sampler_mode_filter(s, tid, pt ? pt->tstate : 0, s->tick.gil_holder, s->tick.wait,
				 sizeof(s->tick.wait)) || in_kernel)
		return 0;
	/*
	 * A waiting thread is read without a stop: its Python frames, and its
	 * native ones only where a read at an instant gives its registers. A
	 * backend without such a read (its events sample the running threads)
	 * reads only the waiting ones here.
	 */
	if (s->opts.mode != MODE_CPU && (!s->opts.native || !ops->read_instant)) {
		ret = sampler_record_waiting(s, tid, pt, now);
		if (ret == -ESRCH || ret == -EPERM)
			return ret;
		if (!ret || !ops->read_instant)
			return 0;
	}
	if (!ops->read_instant)
		return 0;
	return tick_read_instant(s, ops, tid, pt, now);
}

/* Every thread of the target, the one stopped first (first, 0: none) first of all. */
static int tick_threads(struct sampler *s, const struct backend_ops *ops, uint64_t now,
			pid_t first)
{
	int in_kernel, ret;

	if ((ret = sampler_tick_begin(s, now)))
		return ret;
	in_kernel = ops->reads_waiting && ops->read_waiting && ops->reads_waiting(s);
	if (first) {
		for (size_t i = 0; i < s->threads.ntids; i++) {
			if (s->threads.tids[i] != first)
				continue;
			ret = tick_thread(s, ops, i, in_kernel, now);
			break;
		}
		tick_let_go_first(s, ops, first);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < s->threads.ntids && !sampler_stopping(s); i++) {
		if (s->threads.tids[i] == first)
			continue;
		if ((ret = tick_thread(s, ops, i, in_kernel, now)))
			return ret;
	}
	if (in_kernel)
		ops->read_waiting(s);
	return 0;
}

int sampler_record_waiting(struct sampler *s, pid_t tid, struct py_thread_info *pt, uint64_t now)
{
	struct native_sample *ns = &s->native.ns;
	char state, label[160];
	size_t depth = 0;
	int ret;

	if (taskstat_state(&s->tasks, tid, &state) || state == 'R') {
		s->tick.wait[0] = '\0';      /* on a CPU (or about to be) */
		return -EAGAIN;
	}
	if (!s->tick.wait[0] && sample_mode_waits(s->opts.mode) &&
	    !taskstat_wait(&s->tasks, tid, label, sizeof(label)))
		xsnprintf(s->tick.wait, sizeof(s->tick.wait), "[wait] %s", label);
	if (pt && (ret = sampler_read_waiting(s, pt, &depth))) {
		s->tick.wait[0] = '\0';
		return ret == -ESRCH || ret == -EPERM ? ret : -EAGAIN;
	}
	if (!s->opts.native) {
		if (depth) {
			sampler_weigh_read(s, fw_now_ns());
			sampler_record_python(s, tid, s->frames, depth, 0, s->tick.wait, now);
		}
		return 0;
	}
	sampler_weigh_read(s, fw_now_ns());
	native_sample_clear(ns);
	if (s->opts.kernel)
		ns->nkernel = kernel_stack_read(s->target.pid, tid, ns->kernel, KERNEL_MAX_FRAMES);
	ns->npy = depth;
	ns->py_ok = pt != NULL;
	sampler_record_native(s, tid, now);
	native_sample_clear(ns);
	return 0;
}

/* ---- recording ------------------------------------------------------------ */

/*
 * How many samples a stack of thread tid counts. cpu mode, when the loop's
 * ticks take the samples (ptrace, vm): a tick that finds a thread runnable
 * has not found it on a CPU, it may be waiting for one, and a thread that
 * shares its CPU is runnable about twice as long as it runs. Counting one
 * per such tick gave a function run in that state half the samples where
 * it had a third of the CPU time (test_modes.py, cpu_contended.py); on an
 * intermittently loaded machine it weighted the loaded spans up (issue 21,
 * item 14: the ptrace reference 5-12 points from bpf, perf and the
 * target's own clock on callshapes). So the stack stands for the CPU time
 * the thread used since its previous sample (schedstat: exact for a thread
 * a stop took off its CPU, at most a scheduler tick behind for a running
 * one; the differences add up to the total either way), in whole sampling
 * periods, the rest carried to its next sample: 0, 1 or more. A thread's
 * first look in the capture starts its count. The bpf backend's cpu-mode
 * samples come from the kernel's CPU clock itself and count 1, as do the
 * other modes (wall time; bpf's records in wall mode stand for the ticks
 * since the thread's last: sampler_ticks_counted; its waiting threads in
 * gil mode at a late tick: sampler_still_weight).
 */
static uint64_t sampler_cpu_weight(struct sampler *s, pid_t tid, uint64_t now)
{
	struct thread_name_cache *c;
	uint64_t cpu, period, n;

	if (!s->cpu_weighted || tid <= 0)
		return 1;
	sampler_thread(s, tid, now);        /* its first look sets cpu_first_ns */
	c = sampler_thread_cache(s, tid);
	if (!c || taskstat_cpu_ns(&s->tasks, tid, &cpu))
		return 1;
	if (!c->weight_started || cpu < c->weight_cpu_ns) {
		/* first sample (or a new thread with a reused tid) */
		c->weight_started = 1;
		c->weight_cpu_ns = c->cpu_first_ns <= cpu ? c->cpu_first_ns : cpu;
		c->weight_carry_ns = 0;
	}
	period = s->opts.rate_hz > 0 ? (uint64_t)(1e9 / s->opts.rate_hz) : 0;
	if (!period)
		return 1;
	c->weight_carry_ns += cpu - c->weight_cpu_ns;
	c->weight_cpu_ns = cpu;
	n = c->weight_carry_ns / period;
	c->weight_carry_ns -= n * period;
	return n;
}

uint64_t sampler_still_weight(struct sampler *s, pid_t tid, uint64_t switches, uint64_t seq,
			      uint64_t moments, uint64_t now)
{
	struct thread_name_cache *c;
	uint64_t weight = 1;

	if (tid <= 0)
		return weight;
	sampler_thread(s, tid, now);
	c = sampler_thread_cache(s, tid);
	if (!c)
		return weight;
	if (seq && c->still_seq + 1 == seq && c->still_switches == switches && moments > 1)
		weight = moments;
	c->still_seq = seq;
	c->still_switches = switches;
	return weight;
}

uint64_t sampler_ticks_counted(struct sampler *s, pid_t tid, uint64_t t, uint64_t now)
{
	struct thread_name_cache *c = sampler_thread_entry(s, tid, now);
	uint64_t interval = s->clock ? s->clock->interval : 0;     /* the loop's tick */
	uint64_t n;

	if (!c || !interval)
		return 1;
	if (!c->counted_ns || t < c->counted_ns || t - c->counted_ns > TICK_WAIT_MAX_NS) {
		c->counted_ns = t - interval / 2;
		return 1;
	}
	n = (t - c->counted_ns) / interval;
	c->counted_ns += n * interval;
	return n;
}

void sampler_weigh_read(struct sampler *s, uint64_t t)
{
	if (!s->clock || s->cpu_weighted)
		return;
	s->tick.weight = tick_clock_weight(s->clock, t);
	s->tick.waited = 1;
}

/* The weight of the record being made: CPU time by ticks (cpu mode), else what
 * the backend set for it (sampler_ticks_counted, sampler_still_weight,
 * sampler_weigh_read), else one. */
static uint64_t sample_weight(struct sampler *s, pid_t tid, uint64_t now)
{
	uint64_t w = s->tick.weight;

	s->tick.weight = 0;
	if (s->cpu_weighted)
		return sampler_cpu_weight(s, tid, now);
	if (s->tick.waited && w > 1)
		s->prof->meta.moments_waited += w - 1;
	s->tick.waited = 0;
	return w ? w : 1;
}

static uint32_t marker_frame(struct sampler *s, const char *text)
{
	return profile_frame(s->prof, FRAME_OTHER, profile_cstring(s->prof, text), 0, 0);
}

void sampler_record_python(struct sampler *s, pid_t tid, const struct py_frame_info *frames,
			   size_t depth, int gc, const char *wait, uint64_t now)
{
	uint64_t weight;
	uint32_t labels;
	size_t n = 0;

	frames = pyview_frames(s, tid, frames, &depth);
	/* The reader gives innermost first; the profile wants outermost first. */
	for (size_t k = 0; k < depth; k++)
		s->frame_ids[n++] = merge_python_frame(s->prof, &frames[depth - 1 - k]);
	if (gc)
		s->frame_ids[n++] = marker_frame(s, "<GC>");
	if (s->tick.marker[0])
		s->frame_ids[n++] = marker_frame(s, s->tick.marker);
	s->tick.marker[0] = '\0';
	if (wait && wait[0])
		s->frame_ids[n++] = marker_frame(s, wait);
	weight = sample_weight(s, tid, now);
	labels = labels_take(s, tid);
	if (weight) {
		profile_add_labeled(s->prof, sampler_thread(s, tid, now),
				    profile_stack(s->prof, s->frame_ids, n), labels, weight);
		s->prof->meta.samples += weight;
	}
	s->last_sample_ns = now;
}

void sampler_record_dropped(struct sampler *s, pid_t tid, uint64_t now)
{
	s->tick.weight = 0;
	s->tick.waited = 0;
	labels_take(s, tid);
	/* A thread that exited while being read is not an error. */
	if (sampler_thread_gone(s, tid))
		return;
	s->prof->meta.errors++;
	if (tid > 0) {
		/*
		 * The index first: sampler_thread may grow (move) the table, and
		 * the order in which one expression reads the table's address and
		 * calls it is unspecified (a first sample that was a dropped one
		 * wrote through the table's old, NULL, address).
		 */
		uint32_t thread = sampler_thread(s, tid, now);

		s->prof->threads[thread].dropped++;
	}
}

/* module: where the chain broke, "" for an anonymous mapping (copied before any refresh) */
static void count_break(struct sampler *s, const struct unwind_result *uw, const char *module)
{
	for (size_t i = 0; i < s->native.nbreaks; i++) {
		if (s->native.breaks[i].reason == uw->end && !strcmp(s->native.breaks[i].module, module)) {
			s->native.breaks[i].count++;
			return;
		}
	}
	s->native.breaks = xgrow(s->native.breaks, sizeof(*s->native.breaks),
				 s->native.nbreaks + 1, &s->native.breaks_alloc);
	s->native.breaks[s->native.nbreaks].module = xstrdup(module);
	s->native.breaks[s->native.nbreaks].reason = uw->end;
	s->native.breaks[s->native.nbreaks].count = 1;
	s->native.nbreaks++;
}

/*
 * A pc in no executable mapping we know: a library loaded since? Re-read
 * the mappings (at most every MODULES_CHECK_NS) and reload the modules only
 * when they changed.
 */
int sampler_refresh_modules(struct sampler *s, uint64_t now)
{
	int changed;

	if (now - s->native.modules_ns < MODULES_CHECK_NS)
		return 0;
	s->native.modules_ns = now;
	changed = modules_changed(&s->native.mm);
	s->native.modules_every = look_again_after(s->native.modules_every, !changed,
						   MODULES_RECHECK_NS, MODULES_STABLE_NS);
	if (!changed)
		return 0;
	symbolizer_reset(&s->native.sym);
	modules_refresh(&s->native.mm);
	return 1;
}

/* Symbolize the native frames; reload the module map if a pc is in none. */
static void symbolize_native(struct sampler *s, uint64_t now)
{
	struct unwind_result *uw = &s->native.ns.uw;

	if (now - s->native.modules_ns >= (s->native.modules_every ? s->native.modules_every :
					     MODULES_RECHECK_NS))
		sampler_refresh_modules(s, now);
	for (size_t i = 0; i < uw->n; i++)
		if (!modules_find_range(&s->native.mm, uw->pcs[i]) && sampler_refresh_modules(s, now))
			break;
	symbolize_stack(&s->native.sym, uw->pcs, uw->signal_frame, uw->n, s->native.syms);
}

void sampler_record_native(struct sampler *s, pid_t tid, uint64_t now)
{
	struct profile_meta *m = &s->prof->meta;
	struct native_sample *ns = &s->native.ns;
	struct merge_input in;
	size_t depth, leftover;
	char end_module[256];
	int complete;

	m->stops += ns->stopped_ns != 0;
	m->stopped_ns_total += ns->stopped_ns;
	if (ns->stopped_ns > m->stopped_ns_max)
		m->stopped_ns_max = ns->stopped_ns;
	if (!s->opts.native) {
		if (!ns->py_ok)
			sampler_record_dropped(s, tid, now);
		else if (ns->npy)
			sampler_record_python(s, tid, ns->py, ns->npy, ns->gc, s->tick.wait, now);
		return;          /* no Python code running in this thread */
	}
	/*
	 * The module the chain broke in, named now: symbolizing may re-read the
	 * module map and free the module the unwinder pointed at.
	 */
	end_module[0] = '\0';
	if (ns->unwound && ns->uw.end_module && ns->uw.end_module->name)
		xsnprintf(end_module, sizeof(end_module), "%s", ns->uw.end_module->name);
	ns->uw.end_module = NULL;
	symbolize_native(s, now);
	if (ns->unwound) {
		complete = ns->uw.end == UNWIND_END_COMPLETE ||
			   (ns->uw.n && s->native.syms[ns->uw.n - 1].is_thread_entry);
		m->native_stacks++;
		if (complete)
			m->native_complete++;
		else
			count_break(s, &ns->uw, end_module);
		m->fp_steps += ns->uw.fp_steps;
		m->cfi_steps += ns->uw.cfi_steps;
	}
	memset(&in, 0, sizeof(in));
	in.native = ns->unwound ? &ns->uw : NULL;
	in.syms = s->native.syms;
	in.py = ns->py_ok ? ns->py : NULL;
	in.npy = ns->py_ok ? ns->npy : 0;
	if (in.py)
		in.py = pyview_frames(s, tid, in.py, &in.npy);
	in.kernel = ns->kernel;
	in.nkernel = ns->nkernel;
	in.wait = s->tick.wait[0] ? s->tick.wait : NULL;
	in.native_all = s->opts.native_all;
	in.gc = ns->gc;
	in.marker = s->tick.marker[0] ? s->tick.marker : NULL;
	depth = merge_stack(s->prof, &in, s->frame_ids, MERGED_MAX, &leftover);
	depth = pyview_merged(s, tid, s->frame_ids, depth);
	if (leftover)
		m->merge_mismatches++;
	s->tick.marker[0] = '\0';
	if (depth) {
		uint64_t weight = sample_weight(s, tid, now);
		uint32_t labels = labels_take(s, tid);

		if (weight) {
			profile_add_labeled(s->prof, sampler_thread(s, tid, now),
					    profile_stack(s->prof, s->frame_ids, depth), labels, weight);
			m->samples += weight;
		}
		s->last_sample_ns = now;
	} else {
		sampler_record_dropped(s, tid, now);
	}
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
	uint64_t ended, reopened;

	m->modules_loaded += s->native.mm.stats.loaded;
	m->modules_reused += s->native.mm.stats.reused;
	m->modules_refreshes += s->native.mm.stats.refreshes;
	/* what this profile's frames cost: counted from its start (sampler_profile_reset) */
	m->symbol_lookups += s->native.sym.stats.lookups;
	m->symbols_resolved += s->native.sym.stats.resolved;
	m->symbols_evicted += s->native.sym.stats.evicted;
	/* the files' debug info let go and opened again: the whole capture's, shared */
	elf_cache_lookup_counts(s->native.mm.cache, &ended, &reopened);
	if (ended > m->debug_info_ended)
		m->debug_info_ended = ended;
	if (reopened > m->debug_info_reopened)
		m->debug_info_reopened = reopened;
	/* caps: the most any one target met */
	if (s->native.mm.stats.capped > m->modules_capped)
		m->modules_capped = s->native.mm.stats.capped;
	for (size_t i = 0, capped = 0; i < s->native.mm.n; i++) {
		if (s->native.mm.mods[i].file)
			capped += s->native.mm.mods[i].file->symbols_capped;
		if (capped > m->symbols_capped)
			m->symbols_capped = capped;
	}
	for (size_t i = 0; i < s->native.mm.n; i++) {
		if (!module_problem(&s->native.mm.mods[i], s->target.pid, why, sizeof(why)))
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

/* Write the unwind-quality summary into the profile's meta (native backends). */
void sampler_finish_meta(struct sampler *s)
{
	struct strbuf sb = STRBUF_INIT;
	char *old = s->prof->meta.unwind_breaks;
	struct profile_meta *m = &s->prof->meta;

	modules_meta(s);
	if (s->reader.stats.threads_listed_most) {
		m->py_threads_cap = PY_MAX_THREADS;
		if (s->reader.stats.threads_listed_most > m->py_threads_listed)
			m->py_threads_listed = s->reader.stats.threads_listed_most;
	}
	if (!s->native.nbreaks)
		return;
	sort_array(s->native.breaks, s->native.nbreaks, sizeof(*s->native.breaks), cmp_break);
	if (old)
		strbuf_addf(&sb, "%s; ", old);
	for (size_t i = 0; i < s->native.nbreaks && i < 8; i++)
		strbuf_addf(&sb, "%s%s: %s (%llu)", i ? "; " : "",
			    s->native.breaks[i].module[0] ? s->native.breaks[i].module : "[no module]",
			    unwind_end_text(s->native.breaks[i].reason), (unsigned long long)s->native.breaks[i].count);
	free(old);
	s->prof->meta.unwind_breaks = strbuf_detach(&sb);
}

/* ---- the target's life ------------------------------------------------------ */

static int child_exited(struct sampler *s)
{
	if (s->opts.child > 0 && !s->life.child_reaped &&
	    waitpid(s->opts.child, &s->life.child_status, WNOHANG) == s->opts.child)
		s->life.child_reaped = 1;
	return s->opts.child > 0 && s->life.child_reaped;
}

/* A read of the exit check this recent answers the exec check too. */
#define WATCH_FRESH_NS 2000000ull
/*
 * After a reported exec or exit, how long the checks run at each
 * housekeeping: the main thread's exit is reported in do_exit, before
 * /proc shows it a zombie, and a process may outlive its main thread.
 */
#define LIFE_REPORTED_NS 1000000000ull
/* With reports, how often a target is checked without one. */
#define LIFE_QUIET_NS 5000000000ull

void sampler_life_reported(struct sampler *s, uint64_t now)
{
	s->life.reported_until = now + LIFE_REPORTED_NS;
}

int sampler_life_due(struct sampler *s, int reported, uint64_t now)
{
	int due = !reported || s->life.exec_seen_ns || now < s->life.reported_until ||
		  !s->life.polled_ns || now - s->life.polled_ns >= LIFE_QUIET_NS;

	if (due)
		s->life.polled_ns = now;
	return due;
}

int sampler_exec_changed(struct sampler *s)
{
	struct proc_program_id now;
	char state;
	int fresh = s->life.watched_ns && fw_now_ns() - s->life.watched_ns < WATCH_FRESH_NS;

	s->life.watched_ns = 0;
	if (fresh) {
		/* a live process whose image was read (sampler_target_exited said 0) */
		if (s->life.watched_ret)
			return 0;
		now = s->life.watched;
	} else if (s->life.watch.statfd >= 0) {
		if (proc_watch_read(&s->life.watch, &state, &now) || state == 'Z' || state == 'X')
			return 0;
	} else if (proc_program_id(s->target.pid, &now)) {
		/* /proc/PID/exe names the file mapped, even when deleted since. */
		return 0;
	}
	return proc_program_changed(&s->life.program, &now);
}

int sampler_target_exited(struct sampler *s)
{
	char state;

	s->life.watched_ns = 0;
	if (child_exited(s))
		return 1;
	if (s->life.watch.statfd >= 0) {
		int ret = proc_watch_read(&s->life.watch, &state, &s->life.watched);

		if (ret < 0)
			return 1;
		if (state == 'Z' || state == 'X')
			return 1;
		s->life.watched_ret = ret;
		s->life.watched_ns = fw_now_ns();
		return 0;
	} else if (proc_task_state(s->target.pid, s->target.pid, &state)) {
		return 1;
	}
	return state == 'Z' || state == 'X';
}
