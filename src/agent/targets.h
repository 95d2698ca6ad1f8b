/*
 * The agent's processes: which of the host's processes its selectors
 * choose and run Python. A scan starts sampling those in the capture's
 * session as they appear, and stops sampling those that exited, can no
 * longer be read or are no longer chosen (their last period still goes
 * out); an exec into another Python program relabels a process. A process
 * looked at and passed over is remembered by its start time and
 * executable, so it is read again only after an exec, or while it is young
 * (its interpreter may still be loading). Above the sampler (it adds and
 * removes the session's targets); cmd/agent.c drives it from its hook.
 */
#ifndef FRAMEWALK_AGENT_TARGETS_H
#define FRAMEWALK_AGENT_TARGETS_H

#include <stddef.h>

#include "agent/procinfo.h"
#include "agent/select.h"
#include "python/discover.h"
#include "sampler/sampler.h"

struct agent_calls;

/* A process being profiled (or, gone, waiting for its last period to go out). */
struct agent_target {
	struct procinfo info;        /* its labels, read again after an exec */
	uint64_t ino;                /* its /proc directory's inode number (0: not known) */
	struct py_target target;
	int in_session;
	int gone;
	struct agent_calls *calls;   /* --count-calls: its counting (agent/calls.h), NULL none */
	/*
	 * --context-label: its session's counts up to the last period, and the
	 * counts of a session it left (a restart, its exit) not reported yet
	 */
	struct label_counts labels_sent, labels_pending;
};

struct agent_examined;           /* a process passed over (targets.c) */

struct agent_targets {
	struct agent_target *t;      /* in the order they were found */
	size_t n, alloc;
	struct agent_examined *x;
	size_t nx, x_alloc;
	int quiet;                   /* say nothing when a process starts or stops being profiled */
};

/* A zeroed struct agent_targets is empty and valid. */
void agent_targets_release(struct agent_targets *tg);

/*
 * Keep what tr's sampler counted of its labels since the last period, for
 * the next one: before its sampler goes (its exit, a new session).
 */
void agent_target_bank_labels(struct agent_target *tr, const struct session *sess);

/* How many processes are being profiled (not gone). */
size_t agent_targets_profiled(const struct agent_targets *tg);

/*
 * Stop profiling the session's targets that exited, can no longer be read
 * or that sel no longer chooses (relabelling one that exec'd another Python
 * program); then start profiling every process sel lists or, when it scans
 * the host, chooses, that runs Python and is not profiled yet.
 */
void agent_targets_scan(struct agent_targets *tg, struct session *sess,
			const struct select_set *sel);

/* Forget the processes passed over: new selectors may choose them. */
void agent_targets_forget_examined(struct agent_targets *tg);
/* Forget the processes gone (their last period went out). */
void agent_targets_forget_gone(struct agent_targets *tg);
/* A new session: add every profiled process to it (one that cannot be is stopped). */
void agent_targets_resume(struct agent_targets *tg, struct session *sess);

#endif
