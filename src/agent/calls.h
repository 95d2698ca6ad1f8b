/*
 * agent --count-calls: exact call counts per profiled process, in periods.
 * Each process gets its own counting (python/callcount.h) once its
 * interpreter runs; at every period's end the counts since the previous
 * end are taken (the counting goes on from zero, so the target lets go of
 * the code objects counted: nothing grows over days) and travel in that
 * period's profile as its calls; the counting stops when the process
 * leaves or the agent stops, and removes itself at its deadline (the
 * period + a margin, moved at every take) if the agent is killed.
 */
#ifndef FRAMEWALK_AGENT_CALLS_H
#define FRAMEWALK_AGENT_CALLS_H

#include <signal.h>

#include "profile/profile.h"
#include "python/callcount.h"

struct agent_calls {
	struct callcount cc;
	enum callcount_state state;
	uint64_t since_ns;          /* the counts taken next cover from then (monotonic) */
	uint64_t tried_ns;          /* the last look at a waiting process */
	struct py_target program;   /* the program counted (an exec ends it) */
	struct profile taken;       /* the last take: its calls, note and window */
};

/* Ready c for process pid (nothing asked of it). */
void agent_calls_init(struct agent_calls *c, pid_t pid);

/*
 * A waiting process: start counting once its interpreter runs (looked at
 * every 10 ms at most); a refusal is said once and ends its counting.
 * deadline_s: how long the counting outlives a silent agent.
 */
void agent_calls_try_start(struct agent_calls *c, const struct py_target *t, double deadline_s,
			   volatile sig_atomic_t *stop, uint64_t now);

/*
 * A period's end: the counts since the last take into c->taken (emptied
 * first; a failure is its note). final: stop the counting (the process
 * left, or the agent stops); a process that exited is read from what its
 * exit handler wrote.
 */
void agent_calls_take(struct agent_calls *c, const struct py_target *t, int final);

/*
 * Leave a counting unread (a stop signal came while the agent's last
 * period was being read): said, its files removed; the counting removes
 * itself at its deadline. c->taken says why; c is off. Nothing done to a
 * process not counting.
 */
void agent_calls_abandon(struct agent_calls *c, pid_t pid);

/* Stop a counting still on (without reading it) and free what c holds. */
void agent_calls_release(struct agent_calls *c, const struct py_target *t);

#endif
