/*
 * Exact call counts of a running 3.14+ interpreter (framewalk record
 * --count-calls): a fixed script framewalk ships (callcount_script.py) is
 * placed in a directory of framewalk's own inside the target's root and run
 * by the target through PEP 768 remote execution (remote_exec.h). It
 * registers a sys.monitoring tool counting PY_START and PY_RESUME per code
 * object, with a watcher that removes it at a deadline the script carries
 * (so a framewalk killed mid-capture leaves nothing behind for long); a
 * second run removes it and writes the counts, which are read back with the
 * bounded safe opener. Every file placed is removed by callcount_release.
 */
#ifndef FRAMEWALK_PYTHON_CALLCOUNT_H
#define FRAMEWALK_PYTHON_CALLCOUNT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "python/discover.h"
#include "python/remote_exec.h"
#include "target/memory.h"
#include "util/strbuf.h"

#define CALLCOUNT_MAX_FUNCS 200000        /* code objects kept from the counts file */
#define CALLCOUNT_MAX_BYTES (64u << 20)   /* bytes read of it */
#define CALLCOUNT_WAIT_NS (5ull * 1000000000ull) /* for the target to run a request */
/* how often a starting process is looked at again (callcount_check: ready yet?) */
#define CALLCOUNT_RETRY_NS 10000000ull

/*
 * How one process's counting stands, for a command that counts in several
 * (record's processes, the agent's): its interpreter not running yet (asked
 * again every CALLCOUNT_RETRY_NS), counting, or off (refused, failed,
 * ended).
 */
enum callcount_state { CALLCOUNT_WAITING, CALLCOUNT_COUNTING, CALLCOUNT_OFF };

struct callcount_fn {
	char *file, *name;          /* co_filename, co_qualname (UTF-8, as the target gave) */
	int firstline;
	uint64_t starts, resumes;   /* PY_START, PY_RESUME events */
};

struct callcount {
	pid_t pid;
	struct target_mem mem;
	int tmp_fd;                 /* the target's temporary directory (O_PATH), -1 */
	int dir_fd;                 /* framewalk's directory in it (O_PATH), -1 */
	char dirname[80];           /* its name in tmp */
	char tpath[256];            /* its path as the target sees it */
	/* the start request's directory, kept while counting: the script writes
	 * the counts into its "counts" file if the process exits first (atexit) */
	int keep_tmp_fd, keep_fd;
	char keep_dirname[80];
	int at_exit;                /* the counts were written at the target's exit */
	uint64_t start_ticks;       /* the process's start time: a reused pid is not asked */
	char name[64];              /* the tool's name (with a random part) */
	int tool_id;
	double deadline_s;
	struct callcount_fn *fns;
	size_t n;
	uint64_t start_us, stop_us; /* how long each request held the target's thread */
	uint64_t peek_us;           /* ... the last peek */
	/*
	 * Stop signals received (counted by a signal handler); NULL: none
	 * looked at. Any gives up a start request the target has not taken yet
	 * (withdrawn, -EINTR); a stop, peek or take is given up (-EINTR) once
	 * more than stop_base came (-1: as many as when that request began).
	 */
	volatile sig_atomic_t *stop;
	int stop_base;
	/* told each script path the target is asked to run (start, stop; a peek
	 * runs the same script often: not), for the command to log; NULL: none */
	void (*announce)(pid_t pid, const char *path, const char *mode);
};

/*
 * Can t count? 0; -EAGAIN while it starts (ask again later); else the
 * refusal of py_rexec_check (-ENOTSUP, -EPERM, -EOPNOTSUPP, -errno), why
 * saying it. Nothing is asked of the target.
 */
int callcount_check(struct target_mem *m, const struct py_target *t, struct strbuf *why);

/*
 * What record, top and the agent share of a counting: the log line of each
 * script a target is asked to run (for cc->announce), the counts added to a
 * profile, and the warning for a counting left unread (a stop signal).
 */
void callcount_log_request(pid_t pid, const char *path, const char *mode);
void callcount_add_counts(const struct callcount *cc, struct profile *p);
void callcount_warn_unread(pid_t pid);

/* Ready cc for pid (nothing done in the target). */
void callcount_init(struct callcount *cc, pid_t pid);

/*
 * Start counting in t: refusals as py_rexec_check (-ENOTSUP, -EPERM,
 * -EOPNOTSUPP), -EBUSY (every sys.monitoring tool id is taken: why names
 * who holds them), -ETIMEDOUT (the target did not run the request within
 * CALLCOUNT_WAIT_NS: blocked in C, or a build without remote debugging;
 * the request is withdrawn), -errno placing the files; after a failure cc
 * is as callcount_init made it (its stop and announce kept), its files
 * gone. The counting removes itself deadline_s seconds after it starts
 * unless stopped first.
 */
int callcount_start(struct callcount *cc, const struct py_target *t, double deadline_s,
		    struct strbuf *why);

/*
 * Stop counting and read the counts into cc->fns. A process that exited
 * (or is exiting) while counted wrote them at its exit: those are read
 * (cc->at_exit set). 0; -ENOENT when the counting had already removed
 * itself (deadline) or the process ended without running its exit
 * handlers (a signal, os._exit); -ETIMEDOUT as above.
 */
int callcount_stop(struct callcount *cc, const struct py_target *t, struct strbuf *why);

/*
 * The counts so far into cc->fns, the counting going on (top): the same
 * returns as callcount_stop. The target's thread is held for the report
 * (cc->peek_us), and the peek's own calls are not counted. The counting's
 * deadline moves to cc->deadline_s from now.
 */
int callcount_peek(struct callcount *cc, const struct py_target *t, struct strbuf *why);

/*
 * The counts since the last take (or the start) into cc->fns, the counting
 * going on from zero (the agent's periods: the target lets go of the code
 * objects counted so far). As callcount_peek otherwise. A call another
 * thread makes at the very instant of the take can be lost (its callback
 * in flight when the counts change hands).
 */
int callcount_take(struct callcount *cc, const struct py_target *t, struct strbuf *why);

/* Has the process counted ended (exited, or its pid taken by another)? */
int callcount_ended(const struct callcount *cc);

/* Remove every file and the directory placed; free the counts. */
void callcount_release(struct callcount *cc);

/*
 * callcount_release, then cc as callcount_init makes it for the same pid,
 * its stop and announce kept: ready to be asked again.
 */
void callcount_reset(struct callcount *cc);

/* Parse a counts file's text into cc (exposed for unit tests). 0 or -EPROTO. */
int callcount_parse(struct callcount *cc, char *text, size_t len);

#endif
