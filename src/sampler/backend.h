/*
 * The backend interface (like perf's unwind ops): each backend is one ops
 * table with its own state, and they all record into the profile through the
 * same helpers here, so the capture loop (capture.c), the outputs and the
 * tests never care how a sample was taken.
 *
 *   vm.c      process_vm_readv only; never stops the target
 *   ptrace.c  stops a thread that is on a CPU while reading it
 *   bpf.c     a perf_event BPF program reads a running thread at the sample's
 *             instant; a task iterator reads the waiting ones (wall, gil)
 *
 * Threads that are off a CPU are not changing their stacks: every backend may
 * read them without stopping, as long as they stay off a CPU across the read
 * (sampler_read_waiting).
 *
 * What a backend is called and how the user is told about it (name, how it
 * reads, what it needs) is its row in choose.c (struct backend_info), which
 * also points at its ops: adding a backend is a row there and its own file.
 */
#ifndef FRAMEWALK_SAMPLER_BACKEND_H
#define FRAMEWALK_SAMPLER_BACKEND_H

#include <sys/types.h>

#include "python/gilstate.h"
#include "python/objects.h"
#include "python/thread_names.h"
#include "python/reader.h"
#include "sampler/sample.h"
#include "sampler/sampler.h"
#include "symbols/symbolize.h"
#include "target/memory.h"
#include "target/proc.h"
#include "target/taskstat.h"
#include "elf/modules.h"

/* What a backend read of one thread at one instant says (bpf's record, ptrace's stop). */
struct thread_instant {
	uint64_t tstate;            /* its thread state, 0: no Python thread */
	int on_cpu;                 /* running (or runnable) at that instant */
	int gil_locked;             /* the GIL's state then ... */
	uint64_t gil_holder;        /* ... and its holder */
	long syscall_nr;            /* the system call it was in, -1: none known */
	uint64_t syscall_arg0;
	int collecting;             /* the cyclic collector was running */
	int handling;               /* sampler_read_at_instant's answer (exception mode) */
	uint64_t at_ns;             /* when it was read (monotonic; 0: when read_instant returned) */
};

struct backend_ops {
	unsigned tick_modes;             /* 1 << mode: modes in which the loop ticks it */
	/* The whole capture (optional): bpf loads its program here. 0 or -errno + why. */
	int (*start)(struct session *sess, struct strbuf *why);
	/* After the loop, when start succeeded: last events, statistics, release. */
	void (*stop)(struct session *sess);
	/* One target's own state (optional). 0 or -errno. */
	int (*target_init)(struct sampler *s);
	void (*target_release)(struct sampler *s);
	/*
	 * A tick, the loop's (sampler_tick): the mode's policy on each thread
	 * of a target, and what the backend reads. read_instant reads thread
	 * tid (Python thread state pt, NULL: none), on a CPU, at one instant:
	 * s->native.ns, *in, and sampler_read_at_instant at that instant. 0 read;
	 * -EPERM refused (the target is); -ETIMEDOUT not read in time (counted
	 * as dropped); another -errno (-ESRCH): the thread went away.
	 * NULL: the backend's events sample the threads on a CPU (bpf).
	 */
	int (*read_instant)(struct sampler *s, pid_t tid, struct py_thread_info *pt,
			    struct thread_instant *in);
	/*
	 * A backend that stops a thread to read it (optional; ptrace):
	 * stop_first stops thread tid, on a CPU, before the tick reads
	 * anything of its process (0, or -errno: not stopped, read as
	 * usual); read_instant reads it stopped; tick_done lets go of those
	 * not read, at the end of the tick. Both or neither.
	 */
	int (*stop_first)(struct sampler *s, pid_t tid);
	void (*tick_done)(struct sampler *s);
	/*
	 * The threads off a CPU read by the backend itself (optional; bpf's
	 * task iterator): reads_waiting says whether it will this tick (the
	 * loop then reads none of them and only counts gil mode's ticks of
	 * the threads it looks at: Python's under --python-only), and
	 * read_waiting does it after the loop. Both or neither.
	 */
	int (*reads_waiting)(struct sampler *s);
	void (*read_waiting)(struct sampler *s);
	/*
	 * A tick of the backend's own instead (vm, which reads the
	 * interpreter's thread states live). 0, -ESRCH gone, -EPERM refused.
	 * A backend with tick_modes has this, read_instant or reads_waiting.
	 */
	int (*tick)(struct sampler *s, uint64_t now);
	/* Events that arrive by themselves (optional): handle what is there. */
	int (*drain)(struct session *sess, uint64_t now);
	/* A descriptor that becomes readable when events pile up (-1: none). */
	int (*wait_fd)(struct session *sess);
	/* Housekeeping about every 100 ms (optional): targets added or exited. */
	void (*refresh)(struct session *sess, uint64_t now);
	/*
	 * A backend that can report its targets' execs and exits
	 * (sampler_life_reported; optional): 0 when it reports them and none
	 * was lost since the last call; else (not reporting, or reports lost)
	 * the loop checks every target. Asked at each housekeeping, so a
	 * backend replaced mid-capture (a fallback) leaves no stale answer.
	 */
	int (*life_missed)(struct session *sess);
	/*
	 * Samples paced by a clock of the kernel's, on every CPU's wall time
	 * (optional; in every mode: where the loop ticks, that clock still
	 * samples the threads on a CPU): start that clock again now, its next
	 * sample period_ns from now and every period_ns after (the loop draws
	 * the moments and period_ns around its own interval: pacing.h), on
	 * every CPU where it sampled a target since (all: every CPU).
	 * The number of CPUs' clocks restarted, or -ENOTSUP when its clock is not restartable so
	 * (events that count a thread's CPU time): the loop stops asking; or
	 * another -errno: the loop stops too, asking once more with the
	 * interval (a failure part way leaves no CPU at a drawn period).
	 */
	int (*rephase)(struct session *sess, uint64_t period_ns, int all);
};

extern const struct backend_ops backend_vm_ops, backend_ptrace_ops, backend_bpf_ops;

/*
 * One tick of target s (the capture loop's, and dump's): ops->tick where
 * the backend has its own, else every thread under the mode's rules
 * (sampler_mode_filter, before any read: a read may stop the thread), a
 * waiting one read without stopping it (sampler_record_waiting; its native
 * frames only at an instant), a running one by read_instant and kept by
 * the rule at its instant (sampler_instant_keep). 0, -ESRCH, -EPERM.
 */
int sampler_tick(struct sampler *s, const struct backend_ops *ops, uint64_t now);
/*
 * What is read of thread tid (thread state tstate) at a read's instant,
 * while it is stopped: its context (--label) and, in exception mode,
 * whether it is handling an exception (sets s->tick.marker). Returns that (1),
 * else 0.
 */
int sampler_read_at_instant(struct sampler *s, pid_t tid, uint64_t tstate);

struct thread_name_cache {
	pid_t tid;
	uint32_t thread;          /* profile thread index */
	int python_named;         /* labelled with Python's name (else the kernel's) */
	uint64_t refreshed_ns;
	uint64_t label_every;     /* before the label is made again (threads.c; 0: a second), */
	uint64_t label_hash;      /* and what it was made of last time */
	uint64_t cpu_first_ns, cpu_last_ns;   /* CPU time at first and last look */
	uint64_t seen_first_ns, seen_last_ns; /* this period's first and last sighting */
	uint64_t born_ns;         /* first seen by this sampler, kept across periods: how
	                           * young it is for its naming (threads.c) */
	uint64_t leaf_addr;       /* innermost Python frame and instruction last tick */
	int64_t leaf_instr;
	char interp[32];          /* the interpreter label the name was made with */
	/* cpu mode by ticks (sampler_cpu_weight): CPU time at its last sample, and the
	 * part of a period not yet counted */
	uint64_t weight_cpu_ns, weight_carry_ns;
	int weight_started;
	/* bpf, gil mode: read off a CPU at the loop's tick still_seq, with
	 * still_switches context switches (sampler_still_weight) */
	uint64_t still_seq, still_switches;
	/* bpf, gil mode: when the kernel's clock last sampled it on a CPU (0: never) */
	uint64_t oncpu_ns;
	/* bpf, wall mode: the moment up to which its ticks are counted
	 * (0: none yet; sampler_ticks_counted) */
	uint64_t counted_ns;
};

struct unwind_break {
	char *module;             /* where the chain broke, "" for no module */
	enum unwind_end reason;
	uint64_t count;
};

/* The mode's verdict on the thread being sampled, made per tick and per thread. */
struct sampler_tick_scratch {
	uint64_t gil_holder;      /* this tick's GIL holder (gil mode) */
	struct py_gil_waits gil_waits;  /* where waiters for it sleep (gil mode; 0s: unknown) */
	char wait[192];           /* [wait] leaf of the thread being sampled */
	char marker[128];         /* its interpreter-state leaf (<exception T>, <waiting for
	                           * GIL>, <running without GIL>), '' for none;
	                           * set by sampler_mode_filter, used by the next record */
	uint64_t weight;          /* the loop's moments the next record stands for (0: one;
	                           * sampler_ticks_counted, sampler_still_weight), used by it */
	int waited;               /* ... set by sampler_weigh_read (moments_waited) */
};

/* What the target's process did: the program it runs, its execs and its exit. */
struct sampler_life {
	struct proc_program_id program; /* the image sampled; an exec changes it */
	struct proc_watch watch;  /* exit and exec checks (target/proc.h) */
	struct proc_program_id watched; /* the image at the last exit check ... */
	int watched_ret;          /* ... proc_watch_read's answer then ... */
	uint64_t watched_ns;      /* ... and when (0: no fresh read) */
	uint64_t polled_ns;       /* the exit and exec checks last ran (sampler_life_due) */
	uint64_t reported_until;  /* the backend reported an exec or exit: checked until then */
	unsigned generation;      /* execs made (the profile's thread labels: "exec N") */
	uint64_t exec_seen_ns;    /* an exec was noticed then (0: none pending) */
	int child_status;         /* wait status when the child exited */
	int child_reaped;
};

/*
 * A target's threads: the kernel's (sampler_list_threads), the
 * interpreter's thread states, and each one's label and time
 * (sampler/threads.c).
 */
struct sampler_threads {
	pid_t *tids;
	size_t ntids;
	uint64_t tids_ns;         /* when tids was listed */
	struct py_thread_info *py; /* the Python thread states ... */
	size_t npy;
	struct hidx py_index;     /* ... by tid (sampler_py_thread) */
	struct thread_name_cache *names;
	size_t nnames, names_alloc;
	struct hidx names_index;  /* names by tid (sampler_thread_cache) */
};

/* A target's native frames (opts.native): modules, names, the sample being built. */
struct sampler_native {
	struct module_map mm;
	struct symbolizer sym;
	struct native_sample ns;
	struct native_symbol *syms;
	uint64_t modules_ns;
	uint64_t modules_every;   /* before the mappings are looked at again (0: a second) */
	struct unwind_break *breaks;
	size_t nbreaks, breaks_alloc;
};

/* One target of a session. */
struct sampler {
	struct py_target target;
	struct sampler_opts opts;
	struct profile *prof;
	struct target_mem mem;
	struct py_reader reader;
	/* its Python objects (types, dicts), one cache shared by thread names,
	 * exception mode, task stacks and labels; have_objects 0: unreadable */
	struct py_objects objects;
	int have_objects;
	struct py_thread_names py_names; /* threading's names (sampler/threads.c) */
	struct taskstat tasks;
	void *state;              /* the backend's own, per target */
	struct sampler_native native; /* native frames (opts.native) */
	struct sampler_threads threads;
	/* per-read scratch: a thread's frames and their profile ids */
	struct py_frame_info *frames;
	uint32_t *frame_ids;
	struct sampler_tick_scratch tick;
	enum sampler_stop stop_reason;
	struct sampler_life life;
	uint64_t last_sample_ns;
	uint64_t not_ready_ticks; /* ticks before the runtime had a thread */
	int cpu_weighted;         /* cpu mode, sampled by the loop's ticks (sampler_cpu_weight) */
	struct tick_clock *clock; /* the capture loop's moments (sampler_weigh_read); NULL: none (dump) */
	struct pyview *pyview;    /* exception mode, asyncio tasks (sampler/pyview.h) */
	struct labels *labels;    /* --label: context variables (sampler/labels.h), NULL none */
};

/*
 * Set up one target for the backend (ops->target_init included); its modules
 * share per-file data through files (NULL: its own). 0 or -errno. What was
 * asked for and cannot be read in it is added to without ("task stacks
 * (why), labels (why)"), for the session to tell.
 */
int sampler_init(struct sampler *s, const struct py_target *t, struct profile *prof,
		 const struct sampler_opts *opts, const struct backend_ops *ops,
		 struct elf_cache *files, struct strbuf *without);
void sampler_release(struct sampler *s, const struct backend_ops *ops);
/* After the capture: the unwind summary. */
void sampler_finish_meta(struct sampler *s);
/*
 * The profile s records into was emptied (session_take_profile): forget
 * the ids cached into it (thread labels, code objects' names) and the
 * unwind summary, restart each thread's accounting from now, and drop the
 * threads that exited.
 */
void sampler_profile_reset(struct sampler *s);

/* ---- the target's threads (sampler/threads.c) ---- */

/*
 * The profile's thread for tid: its label (Python's name where it has one,
 * else the kernel's; its interpreter; "exec N" after an exec), made once
 * and looked at again now and then (a name set later, a tid reused).
 */
uint32_t sampler_thread(struct sampler *s, pid_t tid, uint64_t now);
/* tid's label cache entry (sampler_thread makes it), or NULL. O(1). */
struct thread_name_cache *sampler_thread_cache(struct sampler *s, pid_t tid);
/* tid's entry, made by sampler_thread at its first look; NULL where none can be. */
struct thread_name_cache *sampler_thread_entry(struct sampler *s, pid_t tid, uint64_t now);
/*
 * After the capture: threads still labelled with the kernel's name are
 * named again, and each thread's CPU and wall time (kernel accounting)
 * goes into the profile.
 */
void sampler_finish_threads(struct sampler *s);
/*
 * The profile was emptied (sampler_profile_reset): the labels' profile
 * ids go, each thread's accounting starts again from now, and the
 * threads that exited are dropped.
 */
void sampler_threads_reset(struct sampler *s);
/*
 * The interpreter's thread states into s->threads.py / .npy, the one
 * list every backend keeps (sampler_py_thread reads it: thread names, the
 * task view, the GIL and exception markers); none after a failed read.
 * 0 or py_reader_threads' -errno.
 */
int sampler_read_py_threads(struct sampler *s);
/* The thread state of tid among s->threads, or NULL (not a Python thread). O(1). */
struct py_thread_info *sampler_py_thread(struct sampler *s, pid_t tid);
/* Is the thread still alive? (A thread that exited while read is not an error.) */
int sampler_thread_gone(const struct sampler *s, pid_t tid);

/* The loop asked to stop (a signal arrived)? */
static inline int sampler_stopping(const struct sampler *s)
{
	return s->opts.stop && *s->opts.stop;
}

/*
 * Decide whether thread tid is sampled this tick under the mode, and the
 * [wait] leaf for a waiting thread in wall and exception modes (wait[0] = 0:
 * none). gil mode samples the GIL's holder, and threads waiting for it or
 * running without it with their marker (sampler_gil_marker), and counts
 * the thread's held/waiting ticks; exception
 * mode samples only a thread (of thread state tstate) raising or handling
 * an exception, and sets s->tick.marker. 1 to sample, 0 to skip.
 */
int sampler_mode_filter(struct sampler *s, pid_t tid, uint64_t tstate, uint64_t gil_holder,
			char *wait, size_t size);
/* The [wait] leaf of thread tid if it is off a CPU, else wait[0] = 0. */
void sampler_wait_label(struct sampler *s, pid_t tid, char *wait, size_t size);

/* This tick's GIL holder into s->tick.gil_holder (gil mode; 0 when none). */
void sampler_read_gil(struct sampler *s);
/*
 * gil mode, a thread (of thread state tstate) not holding the GIL: is it
 * waiting for it (3.15+ its gil_requested flag; else in system call nr,
 * futex, on an address arg0 in the GIL, blocked or woken and runnable) or
 * running without it (on_cpu: runnable, not in such a call)? Sets
 * s->tick.marker and returns 1 for either; 0 (blocked elsewhere: not sampled).
 * nr < 0: not known to be in a system call.
 */
int sampler_gil_marker(struct sampler *s, uint64_t tstate, int on_cpu, long nr, uint64_t arg0);

/*
 * The mode's rule on a thread read at one instant, which may differ from
 * the tick's guess made before it (the holder may have let go since): in
 * gil mode the holder then is sampled as it is, another only with its
 * marker (sampler_gil_marker: waiting for the GIL, or running without it).
 * Returns 1 to record the read, 0 to drop it; *holds: held the GIL then.
 */
int sampler_instant_keep(struct sampler *s, const struct thread_instant *in, int *holds);
/* The thread state running the cyclic collector (it holds the GIL), or 0. */
uint64_t sampler_gc_thread(struct sampler *s);

/*
 * Record one Python-only stack (frames innermost first, as the reader gives
 * them) for thread tid, with the <GC> marker when gc is set and the [wait]
 * leaf when wait is not empty.
 */
void sampler_record_python(struct sampler *s, pid_t tid, const struct py_frame_info *frames,
			   size_t depth, int gc, const char *wait, uint64_t now);
/* A sample of thread tid that could not be read (torn or invalid): counted. */
void sampler_record_dropped(struct sampler *s, pid_t tid, uint64_t now);

/* Symbolize, merge and count the native sample in s->native.ns for thread tid. */
void sampler_record_native(struct sampler *s, pid_t tid, uint64_t now);
/* Reload the module map if the target's executable mappings changed (rate-limited). 1 reloaded. */
int sampler_refresh_modules(struct sampler *s, uint64_t now);

/*
 * Read the Python stack of a thread that is off a CPU, without stopping it:
 * it is read live and kept only if the thread was not scheduled in meanwhile
 * (its context-switch count did not move). 0 with *depth frames; -EAGAIN
 * when it ran (or is on a CPU: read it at one instant instead); -errno.
 */
int sampler_read_waiting(struct sampler *s, struct py_thread_info *t, size_t *depth);

/*
 * Every thread of the target (s->threads.tids, re-listed every 200 ms) and the
 * interpreter's thread states (s->threads.py, read now). 0, or -ESRCH/-EPERM
 * when the target is gone or unreadable.
 */
int sampler_list_threads(struct sampler *s, uint64_t now);
/*
 * The start of a tick that looks at every thread (ptrace, bpf's waiting
 * ones): the lists above, the GIL holder (gil mode), the per-thread files of
 * threads gone closed. 0 or -ESRCH/-EPERM. Then, for each i < s->threads.ntids while
 * !sampler_stopping(s), sampler_tick_thread labels thread s->threads.tids[i] for
 * the profile and returns its Python thread state (NULL: none).
 */
int sampler_tick_begin(struct sampler *s, uint64_t now);
struct py_thread_info *sampler_tick_thread(struct sampler *s, size_t i, uint64_t now);
/*
 * Thread tid was read off a CPU at the loop's tick seq, with switches
 * context switches: the weight of its record (s->tick.weight). Where a backend's clock
 * samples the threads on a CPU (bpf, gil mode), the ticks count only the waiting
 * ones, and a tick that came late stands for the moments that passed before
 * it (moments: struct session's tick_moments): a thread read at the tick
 * before with the same count stayed off a CPU, the same, at each of them.
 * Else one.
 */
uint64_t sampler_still_weight(struct sampler *s, pid_t tid, uint64_t switches, uint64_t seq,
			      uint64_t moments, uint64_t now);
/*
 * bpf in wall mode: how many ticks a record of thread tid at t (the
 * kernel's monotonic clock) stands for. Every thread counts one sample a
 * tick, from one of two sources: the kernel's clock samples the threads on
 * a CPU, the tick's iterator reads the ones off a CPU (each thread of a
 * target, every tick). The two are not aligned, so a record stands for the
 * ticks since the thread's last counted one, and one in a tick already
 * counted is not kept (0). Before (counted_once, which gil mode keeps): an
 * off-CPU read was dropped when the clock had sampled the thread within the
 * last interval (a busy thread whose CPU the tick itself took for a moment
 * was counted by both: 1,065 samples for 1,000 ticks), and a thread that
 * ran at the tick's moment (so the iterator left it) but not at the clock's
 * went uncounted for that tick: sharing its CPU with another process in
 * slices shorter than a tick it was 24% short (test_modes.py's
 * ..._sharing_its_cpu). A tick that came late is stood for the same way:
 * its reads of the threads off a CPU count the moments since their last
 * record. The count starts half a tick before a thread's first record, so
 * a clock that samples it once an interval, with jitter, counts one each
 * time; a thread seen again after TICK_WAIT_MAX_NS (framewalk itself
 * stalled) starts its count again. (In gil mode the same rule read
 * callshapes.py 2.6-4.7 points from the stopped reference, against 1.7-2.0
 * with counted_once: a record's GIL state is not the state of the ticks it
 * stands for.)
 */
uint64_t sampler_ticks_counted(struct sampler *s, pid_t tid, uint64_t t, uint64_t now);
/*
 * A thread read at t (monotonic) in the loop's tick, recorded next: its
 * record stands for the tick's moment and those that passed until t
 * (tick_clock_weight: the read waited on the target meanwhile), in every
 * mode but cpu mode's CPU-time weight (sampler_cpu_weight). Outside the
 * loop (dump) one.
 */
void sampler_weigh_read(struct sampler *s, uint64_t t);

/*
 * wall and gil modes: record thread tid, which is off a CPU, without
 * stopping it: its Python frames (pt may be NULL) read by
 * sampler_read_waiting, its kernel frames with --kernel, and s->tick.wait. Its
 * native frames would need its registers and are left out. 0 recorded;
 * -EAGAIN it is on a CPU (or ran meanwhile): read it at one instant instead.
 */
int sampler_record_waiting(struct sampler *s, pid_t tid, struct py_thread_info *pt, uint64_t now);

/* Has the target exited (a zombie, gone, or our reaped child)? */
int sampler_target_exited(struct sampler *s);

/*
 * Does the target run another executable than when it was set up (an exec)?
 * Right after sampler_target_exited (the housekeeping asks both in turn)
 * its read answers this too.
 */
int sampler_exec_changed(struct sampler *s);

/*
 * The backend saw the target exec, or its main thread exit (bpf's
 * scheduler tracepoints): its checks run at the housekeeping from now on,
 * for as long as an exit takes to show in /proc.
 */
void sampler_life_reported(struct sampler *s, uint64_t now);

/*
 * Are the target's exit and exec checks due now? Always, unless the
 * backend reports execs and exits (reported): then after a report, while
 * an exec found is waiting for its interpreter, and every few seconds
 * (a safety net: a report cannot be lost unseen, but a process's last
 * thread may end after its main thread's report window).
 */
int sampler_life_due(struct sampler *s, int reported, uint64_t now);

#endif
