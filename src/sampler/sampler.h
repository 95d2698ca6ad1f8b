/*
 * The sampling loop: paces ticks by absolute deadlines (no drift at high
 * rates), takes one sample of every thread per tick through a backend, and
 * stops on the duration, a stop request (SIGINT/SIGTERM), or the target's
 * exit, whichever comes first. Whatever was gathered stays in the profile so
 * the caller always writes its output.
 */
#ifndef FRAMEWALK_SAMPLER_SAMPLER_H
#define FRAMEWALK_SAMPLER_SAMPLER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "python/discover.h"
#include "python/reader.h"
#include "sampler/ptrace.h"
#include "symbols/symbolize.h"
#include "target/memory.h"
#include "target/taskstat.h"
#include "elf/modules.h"

enum backend {
	BACKEND_VM = 1,           /* process_vm_readv only: Python frames, never stops */
	BACKEND_PTRACE,           /* stops one thread at a time: Python + native + kernel */
	BACKEND_BPF,              /* perf_event + BPF: everything at the sample's instant */
};

enum sample_mode {
	MODE_CPU = 0,             /* threads on a CPU only */
	MODE_WALL,                /* every thread; waiting ones get a [wait] leaf */
	MODE_GIL,                 /* the thread holding the GIL only */
};

struct sampler_opts {
	enum backend backend;
	enum sample_mode mode;
	int native;               /* unwind native frames */
	int kernel;               /* add kernel frames */
	int native_all;           /* keep interpreter internals */
	int announce;             /* say on stderr which backend auto chose, and why */
	int subprocesses;         /* follow children created during the capture */
	double rate_hz;           /* ticks per second */
	double duration_s;        /* 0: until stopped or the target exits */
	int status_line;          /* draw the live status line on stderr */
	pid_t child;              /* > 0: a child we started; reaped on exit */
};

enum sampler_stop {
	SAMPLER_STOP_DURATION = 1,
	SAMPLER_STOP_SIGNAL,
	SAMPLER_STOP_TARGET_EXIT,
	SAMPLER_STOP_ERROR,
};

struct thread_name_cache {
	pid_t tid;
	uint32_t thread;          /* profile thread index */
	uint64_t refreshed_ns;
	uint64_t cpu_first_ns, cpu_last_ns;   /* CPU time at first and last look */
	uint64_t seen_first_ns, seen_last_ns;
	uint64_t cpu_checked_ns;
	uint64_t leaf_addr;       /* innermost Python frame and instruction last tick */
	int64_t leaf_instr;
};

struct unwind_break {
	char *module;             /* where the chain broke, "" for no module */
	enum unwind_end reason;
	uint64_t count;
};

struct sampler {
	struct target_mem mem;
	struct taskstat tasks;
	/* native backends */
	struct module_map mm;
	struct symbolizer sym;
	struct native_sample ns;
	struct native_symbol *syms;
	struct stack_reader *sr;
	pid_t *tids;
	size_t ntids;
	uint64_t tids_ns, modules_ns;
	struct unwind_break *breaks;
	size_t nbreaks, breaks_alloc;
	int ptrace_denied;
	int bpf_configured;       /* its configuration is in the BPF program's map */
	struct py_target target;
	struct py_reader reader;
	struct profile *prof;
	struct sampler_opts opts;
	struct thread_name_cache *names;
	size_t nnames, names_alloc;
	struct py_thread_info *threads;
	uint8_t *deferred;        /* this tick: read after the others (guards moved) */
	struct py_frame_info *frames;
	uint32_t *frame_ids;
	enum sampler_stop stop_reason;
	int child_status;         /* wait status when the child exited */
	int child_reaped;
	uint64_t not_ready_ticks; /* ticks before the runtime had a thread */
	uint64_t gil_holder;      /* this tick's GIL holder (gil mode) */
	char wait[192];           /* [wait] leaf of the thread being sampled */
	struct mem_guard guards[MEM_MAX_GUARDS];  /* words the next prefetch re-checks */
	size_t nguards;
};

/* Set by the signal handler; the loop checks it every tick. */
extern volatile sig_atomic_t sampler_stop_requested;

/* Install SIGINT/SIGTERM handlers that request a stop (no SA_RESTART). */
void sampler_install_signals(void);

/* Prepare a sampler for an already discovered target. */
void sampler_init(struct sampler *s, const struct py_target *t, struct profile *prof,
		  const struct sampler_opts *opts);
/* The same, sharing per-file module data through files (NULL: its own). */
void sampler_init_files(struct sampler *s, const struct py_target *t, struct profile *prof,
			const struct sampler_opts *opts, struct elf_cache *files);
void sampler_release(struct sampler *s);

/* Take one sample of every thread into the profile. 0, or -ESRCH when gone. */
int sampler_tick(struct sampler *s);

/* Run until the duration, a stop request or the target's exit. */
int sampler_run(struct sampler *s);

/* Has the target (a zombie, gone, or our reaped child) exited? */
int sampler_target_exited(struct sampler *s);

/*
 * A capture of one or more targets into one profile (each sample labeled
 * with its process through the thread's pid). The loop stops on the
 * duration, a stop request, or when every target has exited.
 */
struct known_pid {
	pid_t pid;
	char exe[256];            /* what it ran when last looked at */
};

struct session {
	struct profile *prof;
	struct sampler_opts opts;
	struct sampler **targets;
	size_t n, alloc;
	int *exited;
	enum sampler_stop stop_reason;
	/* --subprocesses: descendants already looked at */
	struct known_pid *known;
	size_t nknown, known_alloc;
	uint64_t scanned_ns;
	struct elf_cache *files;  /* module files shared by the targets */
};

void session_init(struct session *sess, struct profile *prof, const struct sampler_opts *opts);
/* Add a discovered target (a copy is kept). Returns its sampler. */
struct sampler *session_add(struct session *sess, const struct py_target *t);
int session_run(struct session *sess);
void session_release(struct session *sess);
/* The target sampling pid, or NULL. */
struct sampler *session_find(struct session *sess, pid_t pid);

/*
 * --subprocesses: add every Python descendant of the targets not seen
 * before, and re-look at a child whose executable changed (exec). Non-Python
 * children are skipped. Returns how many targets were added.
 */
size_t session_follow_children(struct session *sess, uint64_t now);

/* Reload the module map if the target's executable mappings changed (rate-limited). */
int sampler_refresh_modules(struct sampler *s, uint64_t now);
/* Symbolize, merge and count the native sample in s->ns for thread tid. */
void sampler_record_native(struct sampler *s, pid_t tid, uint64_t now);

/* Has the target (or the child we started) exited? */
int sampler_child_exited(struct sampler *s);

/* Fill each thread's CPU and wall time (kernel accounting) into the profile. */
void sampler_finish_threads(struct sampler *s);

/*
 * Decide whether thread tid is sampled this tick under the mode, and the
 * [wait] leaf for a waiting thread in wall mode (wait[0] = 0: none).
 * Returns 1 to sample, 0 to skip.
 */
int sampler_mode_filter(struct sampler *s, pid_t tid, uint64_t tstate, uint64_t gil_holder,
			char *wait, size_t size);

/* Write the unwind-quality summary into the profile's meta (native backends). */
void sampler_finish_meta(struct sampler *s);

/* Profile label for a thread: reads and caches its name from /proc. */
uint32_t sampler_thread(struct sampler *s, pid_t tid, uint64_t now);

#endif
