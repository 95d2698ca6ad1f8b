/*
 * Capturing samples: a session over one or more targets, sampled by one
 * backend (sampler/backend.h) into one profile, driven by one loop that paces
 * ticks by absolute deadlines, drains the backend's events, follows children,
 * and ends on the duration, a stop request, every target's exit or the
 * caller's hook, whichever comes first. Whatever was gathered stays in the
 * profile, so the caller always writes its output.
 */
#ifndef FRAMEWALK_SAMPLER_SAMPLER_H
#define FRAMEWALK_SAMPLER_SAMPLER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "python/discover.h"
#include "sampler/pacing.h"
#include "util/strbuf.h"
#include "util/util.h"

enum backend {
	BACKEND_AUTO = 0,         /* backend_choose picks one */
	BACKEND_VM,               /* process_vm_readv only: Python frames, never stops */
	BACKEND_PTRACE,           /* stops a running thread while reading it */
	BACKEND_BPF,              /* perf_event + BPF: everything at the sample's instant */
	BACKEND_COUNT
};

enum sample_mode {
	MODE_CPU = 0,             /* threads on a CPU only */
	MODE_WALL,                /* every thread; waiting ones get a [wait] leaf */
	MODE_GIL,                 /* the thread holding the GIL only */
	MODE_EXCEPTION,           /* threads raising or handling an exception (as wall) */
	MODE_COUNT
};

/* 1 << mode for every mode */
#define EVERY_MODE ((1u << MODE_COUNT) - 1u)

/*
 * --label NAME=MODULE:VARIABLE: each sample carries label NAME, the value of
 * the contextvars.ContextVar MODULE.VARIABLE as the sampled thread (or the
 * asyncio task it runs) sees it at the sample's instant (sampler/labels.h).
 */
#define LABELS_MAX 4
#define LABEL_NAME_MAX 64         /* bytes of NAME, NUL included */
#define LABEL_VAR_MAX 40          /* bytes of MODULE or VARIABLE (python/contextvars.h) */

#define LABEL_TRACE_ARG "trace"  /* --label trace: OpenTelemetry's current span */

enum label_kind {
	LABEL_CONTEXTVAR,         /* NAME=MODULE:VARIABLE: the variable's value */
	LABEL_TRACE,              /* trace: the labels trace_id, span_id, span_name */
};

struct label_spec {
	enum label_kind kind;
	char name[LABEL_NAME_MAX];
	char module[LABEL_VAR_MAX];
	char variable[LABEL_VAR_MAX];
};

struct label_specs {
	struct label_spec l[LABELS_MAX];
	size_t n;                 /* --label options given */
};

/*
 * --vm-cpu: where the vm backend reads a single-threaded target from. On its
 * CPU (the default), the scheduler keeps the target off that CPU for the
 * microseconds of each copy: one moment is copied, and the target waits
 * those microseconds. From anywhere, it never waits, and a copy may mix
 * moments of a stack that changes under it (docs/BENCHMARKS.md, issue 25).
 */
enum vm_cpu {
	VM_CPU_UNSET,             /* not given: the target's */
	VM_CPU_TARGET,
	VM_CPU_ANY,
};

struct sampler_opts {
	enum backend backend;
	enum sample_mode mode;
	int native;               /* unwind native frames (--native, or backend_choose's default) */
	int python_only;          /* --python-only: Python frames alone, whatever the backend */
	int kernel;               /* add kernel frames */
	int native_all;           /* keep interpreter internals */
	int async_tasks;          /* --async: asyncio task stacks (sampler/pyview.h) */
	int no_debuginfod;        /* ask no debuginfod server for debug files */
	int no_inline;            /* no frames for inlined functions (symbols/symbolize.h) */
	enum vm_cpu vm_cpu;       /* --vm-cpu: where vm reads a single-threaded target from */
	int announce;             /* say on stderr which backend was chosen, and why */
	int subprocesses;         /* follow children created during the capture */
	int count_calls;          /* --count-calls: exact counts beside the samples
	                           * (python/callcount.h; the command runs it) */
	int fixed_targets;        /* the targets are known at the start (record, top): the bpf
	                           * backend's events go on their threads, not on every CPU */
	struct label_specs labels;
	double rate_hz;           /* ticks per second */
	double duration_s;        /* 0: until stopped or the target exits */
	double refresh_s;         /* how often targets are looked at: exit, exec, new
	                           * threads, children (0: every 0.1 s) */
	double batch_s;           /* records of a backend that writes them (bpf) may wait
	                           * this long before they are handled, in batches, where
	                           * the loop does not tick (cpu mode); the agent: its
	                           * profiles are cut seconds apart. The loop's passes
	                           * for them and for its clocks' restarts come that far
	                           * apart at most. 0: at every pass */
	int status_line;          /* draw the live status line on stderr */
	/* set by backend_choose: auto picked the backend (it may fall back), and
	 * whether the whole-stacks choice was the user's (--native/--python-only) */
	int backend_auto;
	int stacks_asked;
	pid_t child;              /* > 0: a child we started; reaped on exit */
	const struct elf_env *env; /* what the environment says (elf/elffile.h); NULL: nothing */
	volatile sig_atomic_t *stop;  /* set (by a signal handler) to end the capture */
};

enum sampler_stop {
	SAMPLER_STOP_DURATION = 1,
	SAMPLER_STOP_SIGNAL,
	SAMPLER_STOP_TARGET_EXIT,
	SAMPLER_STOP_ERROR,
	SAMPLER_STOP_HOOK,        /* the caller's hook asked to end (top: q) */
	SAMPLER_STOP_EXEC,        /* the target exec'd a program that is not Python */
};

struct backend_ops;           /* how it samples (sampler/backend.h) */
struct elf_env;

/*
 * How a backend reaches a target: what `check` judges (src/audit/env.c
 * judges each mechanism once; a backend that reads by one already there
 * needs nothing of its own).
 */
enum backend_access {
	ACCESS_READ_MEMORY,       /* process_vm_readv */
	ACCESS_TRACE,             /* PTRACE_SEIZE, and process_vm_readv */
	ACCESS_BPF,               /* bpf() and perf_event_open() */
};

/*
 * What is known about a backend, at one place (the table in choose.c):
 * everything that names a backend, describes it to the user, or sizes what
 * it needs reads its row, so a new backend is a row here and its own file.
 * The texts are clauses the callers put in their sentences.
 */
struct backend_info {
	enum backend id;
	const char *name;           /* "vm", "ptrace", "bpf": --backend's value */
	const struct backend_ops *ops;
	enum backend_access access; /* how it reaches a target (check's verdict) */
	const char *help;           /* --backend's help: how it reads (NULL: reads) ... */
	uint64_t needs;             /* ... and the capabilities it needs beyond the
	                             * target's own (FW_CAP_BIT()s, target/privilege.h) */
	const char *reads;          /* how a capture reads with it, after "backend NAME: "
	                             * or "going on with NAME, " */
	const char *caveat;         /* what it gets wrong, said when auto picks it (NULL) */
	const char *header[3];      /* the report's Backend line: Python frames alone,
	                             * with native frames, with kernel frames too
	                             * (NULL: the one before) */
	const char *by_default;     /* what record and top give with it by default
	                             * (check's "default:" line) */
	const char *changing_hint;  /* the report's word when 1% or more of the stacks were
	                             * dropped for changing while read (NULL: it reads
	                             * at one instant) */
	int native;                 /* it can read native frames (--native, --kernel) */
	int labels;                 /* it reads a thread's context with its stack (--label) */
	int labels_trace;           /* ... and OpenTelemetry's span through it (--label trace) */
	unsigned whole_stacks;      /* 1 << mode: whole stacks unless told otherwise */
	unsigned fds_fixed;         /* descriptors it holds beyond any capture's ... */
	unsigned fds_per_cpu;       /* ... and per CPU of the machine */
};

/* The row of backend b; NULL for BACKEND_AUTO (not a backend). */
const struct backend_info *backend_info(enum backend b);
/* The row named by a profile's backend line ("vm (process_vm_readv; ..."); NULL if none. */
const struct backend_info *backend_info_described(const char *description);
/*
 * The i-th backend in the order auto prefers them (backend_auto_pick: bpf,
 * ptrace, vm), BACKEND_AUTO past the last: for lists shown to the user.
 */
enum backend backend_preferred(size_t i);
/*
 * The first backend in auto's order that reads native frames and holds no
 * descriptors per CPU (what to use when the open-file limit is reached);
 * BACKEND_AUTO: none.
 */
enum backend backend_fewer_descriptors(void);
/* How auto chooses, for --backend's help ("bpf where its program loads, ..."). */
extern const char backend_auto_rule[];

/*
 * Resolve BACKEND_AUTO and check the combination of options: the one rule
 * for which backend a capture gets (bpf when its program loads, else
 * ptrace when it may trace probe_pid (0: a command framewalk starts), else
 * vm for Python-only profiles; vm only when asked otherwise), and whether
 * the capture unwinds whole stacks when neither --native nor --python-only
 * said (where the backend reads them without stopping more: bpf; ptrace in
 * cpu mode, which stops the running thread anyway). 0, -EINVAL
 * for a combination that cannot work, -EPERM when the asked-for backend
 * cannot run here; the message is in why. announce gets the one line saying
 * which backend auto chose and why (empty when the user chose).
 */
int backend_choose(struct sampler_opts *so, pid_t probe_pid, struct strbuf *why,
		   struct strbuf *announce);
/* "auto", "vm", "ptrace" or "bpf". */
const char *backend_name(enum backend b);
/*
 * The first backend in auto's order (bpf, ptrace, vm) whose bit (1 << enum
 * backend) is set in usable; the last of the order when none is.
 */
enum backend backend_auto_pick(unsigned usable);
/* A bit of backend_auto_pick's mask: BACKEND_USABLE(BPF, loads). */
#define BACKEND_USABLE(name, yes) ((yes) ? 1u << BACKEND_##name : 0u)
/* Whether a capture on backend b in mode unwinds whole stacks unless told otherwise. */
int backend_whole_stacks_default(enum backend b, enum sample_mode mode);
/* "cpu", "wall", "gil", "exception" -> mode. 0 or -EINVAL. */
int sample_mode_parse(const char *name, enum sample_mode *out);
/*
 * The one fallback: the backend auto picked could not start (why says
 * what failed). When the user did not choose it, move so to the next one
 * auto would pick without it (bpf -> ptrace where it may trace probe_pid,
 * else vm for Python-only profiles), the whole-stacks default following,
 * and put the line to say in announce. 0, or -ENOENT: nothing to fall back
 * to (the user chose the backend, or none is left).
 */
int backend_fall_back(struct sampler_opts *so, pid_t probe_pid, const char *why,
		      struct strbuf *announce);
/*
 * What a mode is, one row per mode in choose.c (the one mode table): its
 * name, what it samples (--mode's help), and which backends can take it,
 * with the reason a backend cannot. Whether it makes a cpu or a wall-clock
 * profile is profile_mode_is_cpu's rule (profile/profile.h: saved profiles
 * carry the mode's name).
 */
struct mode_info {
	enum sample_mode id;
	const char *name;           /* --mode's value */
	const char *samples;        /* what it samples, for --mode's help */
	unsigned backends;          /* 1 << enum backend: the backends that take it */
	const char *why_not;        /* why the others do not, after "it " (NULL: all do) */
	int waits;                  /* it samples waiting threads too, each with a [wait] leaf */
};

/* The row of mode m (a valid mode). */
const struct mode_info *sample_mode_info(enum sample_mode mode);
/* The mode's name, as sample_mode_parse takes it. */
const char *sample_mode_name(enum sample_mode mode);
/* Does the mode sample waiting threads, with their [wait] leaf (its row's waits)? */
int sample_mode_waits(enum sample_mode mode);
/* "vm" / "ptrace" / "bpf" -> backend; "auto" -> BACKEND_AUTO. 0 or -EINVAL. */
int backend_parse(const char *name, enum backend *out);
/* One line describing the chosen backend, for the report's header. */
const char *backend_description(const struct sampler_opts *so);

struct sampler;               /* one target (sampler/backend.h) */

/* What the loop lets its caller do between passes (top draws and reads keys). */
struct capture_hook {
	void *ctx;
	int fd;                   /* wake the loop when readable; -1: none */
	/*
	 * Called after every pass of the loop; *next is when it wants to be
	 * called again at the latest. Nonzero ends the capture (SAMPLER_STOP_HOOK).
	 */
	int (*pass)(void *ctx, uint64_t now, uint64_t *next);
};

struct known_pid {
	pid_t pid;
	char exe[256];            /* what it ran when last looked at */
};

struct session {
	struct profile *prof;
	struct sampler_opts opts;
	const struct backend_ops *ops;
	void *backend;            /* the backend's own state for the whole capture */
	const struct capture_hook *hook;
	struct sampler **targets;
	size_t n, alloc;
	int *exited;
	enum sampler_stop stop_reason;
	uint64_t start_ns;        /* when the loop started (monotonic) */
	uint64_t end_ns;          /* when it ended (monotonic; 0: not yet) */
	/* The loop's ticks: how many so far, and their moments (sampler/pacing.h) */
	uint64_t tick_seq;
	struct tick_clock clock;
	/* --subprocesses: descendants already looked at */
	struct known_pid *known;
	size_t nknown, known_alloc;
	uint64_t scanned_ns;
	pid_t root;               /* session_follow_root: a non-Python ancestor followed */
	struct elf_cache *files;  /* module files shared by the targets (elf/elffile.h) */
};

/* opts->backend must be chosen already (backend_choose). */
void session_init(struct session *sess, struct profile *prof, const struct sampler_opts *opts);
/*
 * The same over the given backend instead of opts->backend's (the seam of
 * tests/unit/test_capture.c, whose backend is scripted). No fallback is
 * tried unless opts->backend_auto.
 */
void session_init_ops(struct session *sess, struct profile *prof, const struct sampler_opts *opts,
		      const struct backend_ops *ops);
/* Add a discovered target (a copy is kept). 0 or -errno. */
int session_add(struct session *sess, const struct py_target *t);
/*
 * --subprocesses under a root that is not Python (a shell, a wrapper
 * script; a child of ours is reaped by the caller): its Python descendants
 * are sampled as they appear, and the capture goes on while it runs.
 */
void session_follow_root(struct session *sess, pid_t root);
/* How many generations below a target (or the root) --subprocesses looks. */
#define SESSION_CHILD_DEPTH 7
/* Is pid one of the targets? */
int session_has(const struct session *sess, pid_t pid);
/*
 * pid's --label reads since it became a target (profile/profile.h's struct
 * label_counts: the agent's per-process, per-period counts): 0, or -ESRCH
 * (not a target, or no labels read).
 */
int session_label_counts(const struct session *sess, pid_t pid, struct label_counts *out);
/* to += add, every count; to += now - then (then: an earlier reading of the same counts). */
void label_counts_add(struct label_counts *to, const struct label_counts *add);
void label_counts_add_since(struct label_counts *to, const struct label_counts *now,
			    const struct label_counts *then);
const struct py_target *session_target(const struct session *sess, size_t i);
/* The capture: until the duration, a stop request, every target's exit or the hook. */
int session_run(struct session *sess, const struct capture_hook *hook, struct strbuf *why);
/*
 * For a capture cut into periods (agent), from the hook between two passes:
 *
 * session_drain: handle what the running backend holds now (records that
 * wait for a batch, batch_s), so the profile and the targets' counts are
 * current.
 *
 * session_remove: stop sampling pid and release its target; what it
 * recorded stays in the profile (drained first), with its threads'
 * accounting so far. 0 or -ESRCH when it is not a target.
 */
void session_drain(struct session *sess);
int session_remove(struct session *sess, pid_t pid);
/*
 * session_take_profile: move everything gathered since the start (or the
 * last call) into *out, an uninitialised profile the caller then owns and
 * releases, with each thread's accounting and the unwind summary as the
 * end of session_run writes them; sampling goes on into a fresh, empty
 * profile (same rate; the caller sets the rest of its meta), so memory
 * stays bounded by one period's stacks. The targets' cached profile ids
 * are forgotten with the old contents.
 */
void session_take_profile(struct session *sess, struct profile *out);
/* One sample of every thread of every target (dump). 0 or -errno (-EPERM: refused). */
int session_sample_once(struct session *sess);
/*
 * Part of what was asked that the capture goes on without: a backend's
 * part that another read stands in for (bpf's task iterator refused: the
 * loop reads the waiting threads), a target's task stacks or labels
 * (session_add). A warning on stderr, once per call, and a line of the
 * profile's events, so the report says so too: the one place the library
 * tells the user of a capture's shortfalls.
 */
void session_fallback_note(struct session *sess, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* "vm", "ptrace" or "bpf". */
const char *session_backend_name(const struct session *sess);
/* The started child (opts.child) has been reaped by the capture. */
int session_child_reaped(const struct session *sess);
void session_release(struct session *sess);

#endif
