/*
 * The in-memory profile every backend fills and every output reads. Each
 * distinct string, frame and stack is stored once: strings and frames in
 * interned tables, stacks as nodes of a prefix tree (a stack is the id of its
 * innermost node), so memory grows with the number of distinct stacks, not
 * with the number of samples. Counts are kept per (thread, stack, label
 * set). Each table
 * is an array with a hash index of its ids (util/hashidx.h).
 */
#ifndef FRAMEWALK_PROFILE_PROFILE_H
#define FRAMEWALK_PROFILE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/hashidx.h"

enum frame_kind {
	FRAME_PYTHON = 0,
	FRAME_NATIVE = 1,
	FRAME_KERNEL = 2,
	FRAME_OTHER = 3,    /* markers such as <unknown> or a wait reason */
};

struct pf_frame {
	uint32_t name;      /* string id */
	uint32_t file;      /* string id, 0 = none (python: co_filename; native: source file) */
	int32_t line;       /* 0 = unknown */
	uint8_t kind;
	uint32_t module;    /* string id of the native module (path), 0 = none */
	uint32_t build_id;  /* string id of the module's build-id (hex), 0 = none */
	uint32_t system_name; /* string id of the name in the file when name is demangled
	                       * (elf/demangle.h), 0 = none */
};

struct pf_node {
	uint32_t parent;    /* 0 = the root */
	uint32_t frame;
	uint32_t depth;
};

struct pf_thread {
	pid_t pid, tid;
	unsigned generation;  /* execs of its process before it (the same tid runs another program) */
	uint32_t name;      /* string id: Python's name for the thread, else the kernel's */
	uint32_t comm;      /* string id: the kernel's name (comm), 0 = unknown */
	/* kernel accounting over the capture, independent of sampling (0: unknown) */
	uint64_t cpu_ns;    /* CPU time used while seen */
	uint64_t wall_ns;   /* time the thread was seen alive */
	/* gil mode: ticks holding the GIL, waiting for it, and seen at all */
	uint64_t gil_held, gil_waiting, gil_ticks;
	uint64_t dropped;   /* samples of this thread dropped (unreadable or torn) */
};

struct pf_count {
	uint32_t thread;    /* index into threads */
	uint32_t node;      /* innermost node of the stack */
	uint32_t labels;    /* label set (0: none) */
	uint64_t count;
};

/*
 * Labels a sample carries (pprof's Sample.label, string values): (key,
 * value) string ids, e.g. a context variable's value (--label). A set of
 * them is interned as one id; 0 is the empty set. Counts are kept per
 * (thread, stack, label set).
 */
#define PROFILE_LABELS_MAX 8    /* labels in one set */

struct pf_label {
	uint32_t key, value;        /* string ids */
};

struct pf_labelset {
	uint32_t first;             /* index into label_items */
	uint32_t n;
};

/*
 * Exact call counts of one Python function (record --count-calls,
 * python/callcount.h): entries (PY_START) and resumes of a generator or
 * coroutine (PY_RESUME) over the counting window. A function is its code
 * object's (qualname, file, first line); samples name it by (name, file).
 */
struct pf_calls {
	uint32_t name, file;        /* string ids */
	int32_t firstline;
	uint32_t frame;             /* a Python frame (name, file, firstline) naming it in
	                             * saved formats (pprof's calls samples) */
	uint64_t starts, resumes;
};

/*
 * --label reads (sampler/labels.h): the whole capture's in the profile
 * header, one process's and one period's in the agent.
 */
struct label_counts {
	uint64_t reads;             /* label sets read: a thread's sample, a suspended
	                             * task's read (--async wall: its samples until
	                             * the next read share it) */
	uint64_t ns_total;          /* time spent reading them */
	uint64_t cached;            /* values taken from the variable's own cache */
	uint64_t walked;            /* values found walking the context's HAMT */
	uint64_t unreadable;        /* values given as <unreadable> */
	uint64_t folded;            /* values past the distinct-value cap (<other>) */
	uint64_t changed;           /* samples dropped: labels changed while the stack was
	                             * read (vm, which does not stop the thread) */
};

struct profile_meta {
	pid_t pid;
	char *target;            /* command line of the target */
	char *python_version;
	char *backend;
	uint64_t start_unix_ns;
	uint64_t duration_ns;
	double rate_hz;          /* requested */
	uint64_t ticks_requested;
	uint64_t ticks_taken;
	uint64_t samples;        /* stacks recorded (one per thread per tick; cpu_weighted: periods;
	                          * else the tick's moments a read stands for: moments_waited) */
	uint64_t moments_waited; /* ... those of them that passed while a read waited on the target */
	int cpu_weighted;        /* cpu mode by ticks: a stack counts the periods of CPU time it stands for */
	int events_per_thread;   /* bpf: cpu-clock events on the targets' threads, not per CPU */
	uint64_t rephases;       /* ... per CPU: restarts of their clock (sampler/pacing.h) */
	uint64_t clock_restarts; /* ... the CPUs' clocks restarted then (those that sampled a target) */
	uint64_t drains;         /* times the backend's records were taken (bpf: its ring buffer) */
	uint64_t errors;         /* samples dropped as torn or invalid */
	uint64_t sample_ns_total;/* time spent taking ticks */
	uint64_t sample_ns_max;
	uint64_t profiler_cpu_ns;
	char *mode;                  /* the sampling mode's name (profile_mode_is_cpu) */
	/* a process with more Python threads than the reader reads per tick (PY_MAX_THREADS) */
	uint64_t py_threads_cap;     /* the cap (0: never reached) ... */
	uint64_t py_threads_listed;  /* ... and the most thread states listed at once */
	char *labels;                /* "key=value ..." the agent gives each profile, or NULL */
	/* native unwinding (ptrace / bpf backends) */
	uint64_t native_stacks;      /* stacks unwound */
	uint64_t native_complete;    /* ... that reached the thread's entry */
	uint64_t stops;              /* thread stops (ptrace), each one sample */
	uint64_t stopped_ns_total;   /* time threads were stopped (ptrace) */
	uint64_t stopped_ns_max;
	uint64_t fp_steps, cfi_steps;
	uint64_t merge_mismatches;   /* Python frames left over after merging */
	char *unwind_breaks;         /* "module: reason N; ..." for incomplete stacks */
	/* the module layer (elf/modules.h): debug counters over every target */
	uint64_t modules_loaded;     /* ELF files opened and parsed */
	uint64_t modules_reused;     /* modules whose file was already known */
	uint64_t modules_refreshes;  /* times a target's mappings changed and were re-read */
	uint64_t symbol_lookups;     /* native frames named (symbols/symbolize.h) ... */
	uint64_t symbols_resolved;   /* ... that no cache had: libdw was asked */
	uint64_t symbols_evicted;    /* symbol cache entries dropped for room */
	uint64_t debug_info_ended;   /* files' debug info let go, no lookup needing it (elffile.h) */
	uint64_t debug_info_reopened;/* ... and opened again for a lookup */
	/* caps met, the most in any one target */
	uint64_t modules_capped;     /* mapped files left without a module (MODULES_MAX) */
	uint64_t symbols_capped;     /* code symbols left out of its files' indexes (ELF_SYMIDX_MAX) */
	char *modules_unreadable;    /* "path: why; ..." for files that could not be opened */
	char *events;                /* what happened to the targets: "exec at 2.0 s: ...; ..." */
	/* --label: context variables read per sample (sampler/labels.h) */
	char *label_specs;           /* "route=app:route ...", or NULL */
	/* --count-calls: how the counts were taken, or why there are none (NULL: not asked) */
	char *calls_note;
	uint64_t calls_window_ns;    /* the counting window (0: unknown) */
	struct label_counts label_counts;  /* their reads (the header's label_* keys) */
	/* bpf backend */
	uint64_t lost;               /* samples the ring buffer had no room for */
	uint64_t bpf_run_ns, bpf_run_cnt;  /* program run time (kernel statistics) */
};

struct profile {
	/* strings: id 0 is "" */
	char **strings;
	uint32_t *string_len;
	size_t nstrings, strings_alloc;
	struct hidx string_index;
	/* frames: id 0 unused */
	struct pf_frame *frames;
	size_t nframes, frames_alloc;
	struct hidx frame_index;
	/* nodes: id 0 is the root */
	struct pf_node *nodes;
	size_t nnodes, nodes_alloc;
	struct hidx node_index;
	/* threads */
	struct pf_thread *threads;
	size_t nthreads, threads_alloc;
	/* label sets: id 0 is the empty set */
	struct pf_label *label_items;
	size_t nlabel_items, label_items_alloc;
	struct pf_labelset *labelsets;
	size_t nlabelsets, labelsets_alloc;
	struct hidx labelset_index;
	/* exact call counts (--count-calls), one entry per code object */
	struct pf_calls *calls;
	size_t ncalls, calls_alloc;
	/* counts */
	struct pf_count *counts;
	size_t ncounts, counts_alloc;
	struct hidx count_index;
	struct profile_meta meta;
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);

uint32_t profile_string(struct profile *p, const char *s, size_t len);
static inline uint32_t profile_cstring(struct profile *p, const char *s)
{
	return profile_string(p, s, s ? __builtin_strlen(s) : 0);
}
const char *profile_str(const struct profile *p, uint32_t id);

uint32_t profile_frame(struct profile *p, enum frame_kind kind, uint32_t name,
		       uint32_t file, int32_t line);
/* The same with the native module (path) and its build-id. */
uint32_t profile_frame_module(struct profile *p, enum frame_kind kind, uint32_t name,
			      uint32_t file, int32_t line, uint32_t module, uint32_t build_id);
/*
 * Record a frame's linkage name (the name in the file, when its name is the
 * demangled one). A frame has one: the first given stays.
 */
void profile_frame_set_system_name(struct profile *p, uint32_t frame, uint32_t system_name);
/* Intern a stack given outermost frame first; returns its innermost node. */
uint32_t profile_stack(struct profile *p, const uint32_t *frames, size_t n);
/* Thread index for (pid, tid); the name is updated when given. */
uint32_t profile_thread(struct profile *p, pid_t pid, pid_t tid, const char *name);
/* Set a thread's kernel name (NULL or "": unknown). */
void profile_thread_comm(struct profile *p, uint32_t thread, const char *comm);
/* The same for the thread after the process's generation-th exec. */
uint32_t profile_thread_gen(struct profile *p, pid_t pid, pid_t tid, unsigned generation,
			    const char *name);
void profile_add(struct profile *p, uint32_t thread, uint32_t node, uint64_t count);
/* The same for a sample carrying the label set labels (profile_labels; 0: none). */
void profile_add_labeled(struct profile *p, uint32_t thread, uint32_t node, uint32_t labels,
			 uint64_t count);

/* Seconds the exact counts of p cover (the counting window, else the capture); 0 unknown. */
static inline double profile_calls_seconds(const struct profile *p)
{
	return (double)(p->meta.calls_window_ns ? p->meta.calls_window_ns :
			p->meta.duration_ns) / 1e9;
}

/*
 * Add exact counts for one code object. Two code objects may share a key
 * (code made by exec): entries are not merged, readers sum them.
 */
void profile_add_calls(struct profile *p, const char *name, const char *file, int firstline,
		       uint64_t starts, uint64_t resumes);

/* The id of string s (len bytes) if the profile has it, else UINT32_MAX; nothing is added. */
uint32_t profile_string_find(const struct profile *p, const char *s, size_t len);

/*
 * Intern the set of n labels, in their order (at most PROFILE_LABELS_MAX
 * are kept); n 0 is set 0.
 */
uint32_t profile_labels(struct profile *p, const struct pf_label *labels, size_t n);
/* The labels of set id (0, or out of range: none). */
size_t profile_labelset(const struct profile *p, uint32_t set, const struct pf_label **out);
/* Is key (a string id) in set? 1 with its value's string id, or 0. */
int profile_label_get(const struct profile *p, uint32_t set, uint32_t key, uint32_t *value);
/*
 * Keep only the counts whose labels give key the value value (the
 * reports' --where); the frames and stacks stay. Returns the counts kept.
 */
size_t profile_keep_label(struct profile *p, const char *key, const char *value);
/* Does any count carry a label? */
int profile_has_labels(const struct profile *p);

/*
 * Frames of a node, outermost first, into out (capacity max); of a stack
 * deeper than max, its innermost max frames. Returns how many.
 */
size_t profile_node_frames(const struct profile *p, uint32_t node, uint32_t *out, size_t max);

uint64_t profile_total(const struct profile *p);

/*
 * Whether a profile of this mode ("cpu", "wall", "gil", "exception", as
 * meta.mode holds it) counts CPU time: only cpu mode samples threads on a
 * CPU; every other mode samples threads whatever they do, so a sample
 * stands for wall-clock time. The one rule the writers and the agent's
 * encoders use for a profile's type (pprof cpu/wall, OTLP, Pyroscope).
 */
int profile_mode_is_cpu(const char *mode);
/* The same as the type's name every format gives it: "cpu" or "wall". */
static inline const char *profile_mode_type(const char *mode)
{
	return profile_mode_is_cpu(mode) ? "cpu" : "wall";
}
/* The unit every format gives that time (and a thread's CPU and wall time) in. */
#define PROFILE_TIME_UNIT "nanoseconds"

/*
 * Is the requested rate usable to turn counts into time? A rate read from a
 * file can be anything (0, negative, NaN, 1e300): only 1 mHz to 1 GHz is.
 */
int profile_rate_known(const struct profile_meta *m);

#endif
