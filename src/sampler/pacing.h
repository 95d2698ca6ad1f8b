/*
 * Sampling intervals that cannot lock onto a periodic target.
 *
 * A sampler reading at fixed intervals reads a workload paced by the same
 * period (a 100 Hz poller, a frame loop, a batch timer) at the same phase
 * every time: a thread spending half of each 10 ms in one function and half
 * in another was shown 100% in one of them at -r 100. A reader that stops
 * the target paces it by its own clock and locks onto nearly periodic code
 * too (callshapes.py: the stopped reference drifted 5-11 points from two
 * instant readers that agreed within 2). Every gap between two of the
 * capture loop's ticks is therefore drawn uniformly from 0.5 to 1.5 of the
 * mean interval: the rate holds on average, the phase does not.
 *
 * The bpf backend's cpu-mode samples come from perf cpu-clock events, whose
 * period the kernel keeps fixed. Changing it (PERF_EVENT_IOC_PERIOD)
 * restarts the countdown from the moment of the change:
 *  - an event per CPU counts that CPU's wall time: restarted at moments
 *    drawn as the ticks' gaps are (a few periods apart; where the loop
 *    batches, at its first pass from then), its phase against
 *    the target's is drawn again each time. A restart throws away the part
 *    of a period gone since the last sample, half a period on average, so
 *    the restarted clock runs a little faster (pacing_rephase_period) and
 *    the mean rate holds;
 *  - an event on a thread counts that thread's CPU time: a restart would
 *    throw away a thread's progress towards its next sample, and one using
 *    less CPU than a period between two restarts would never be sampled.
 *    Those stay periodic in each thread's CPU time, as perf's are
 *    (docs/BENCHMARKS.md, "A periodic target").
 */
#ifndef FRAMEWALK_SAMPLER_PACING_H
#define FRAMEWALK_SAMPLER_PACING_H

#include <stdint.h>

struct pacing {
	uint64_t state;           /* xorshift64: no quality needed beyond breaking the phase */
};

/* Seed (any value; 0 is replaced). */
void pacing_init(struct pacing *p, uint64_t seed);

/* The next gap between two samples, uniform in [mean/2, 3*mean/2). */
uint64_t pacing_gap(struct pacing *p, uint64_t mean);

/*
 * A kernel clock giving a sample every interval on average, restarted at
 * spread moments: the mean gap drawn between two restarts (four intervals,
 * at least 200 ms: each restart is a call on every CPU, 24-38 us each
 * measured on this project's 2-CPU VM), and at least batch where the
 * capture loop batches its passes (sampler_opts.batch_s: the agent's, a
 * pass at least once a second): there a restart waits for the first pass
 * from the moment drawn.
 */
uint64_t pacing_rephase_mean(uint64_t interval, uint64_t batch);

/*
 * The period the restarted clock runs at until the next restart, drawn
 * too: c * u with u uniform in [0.9, 1.1), so that within one restart gap
 * the samples also slide against a target paced at the interval (a whole
 * cycle in 7 to 10 samples at the period farthest from it), while a
 * capture's sample count stays within about 1% of the rate's. A gap of
 * mean R holds
 * R * E[1/(c u)] - 1/2 samples on average (the gaps' spread is wider than
 * a period): R/interval when c = E[1/u] * interval / (1 + interval / (2R)),
 * E[1/u] = 5 ln(11/9). R is the mean drawn, and where restarts wait for
 * the loop's passes (batch) half a batch more, the wait for the next pass
 * (taking the mean drawn alone gave ~4% more samples than the rate at
 * 49 Hz with a 200 ms mean, and ~0.5-1% with a mean of the batch).
 */
uint64_t pacing_rephase_period(struct pacing *p, uint64_t interval, uint64_t mean,
			       uint64_t batch);

/*
 * The capture loop's tick moments, drawn with pacing_gap each from the last
 * one (never from when a tick ended), and counted. A read in a tick comes
 * late when the target holds what the read needs: its memory map's lock,
 * taken by process_vm_readv and held by the target in brk, mmap or
 * mprotect; a stop, which waits for a system call to return. The moments
 * that pass meanwhile are not taken late (a tick at once after a long one,
 * or a fresh gap from its end, reads just after what the target did then:
 * a pile-up or a dead zone); the read stands for them: its thread was in
 * that state while the read waited on it (tick_clock_weight). So does a
 * tick that began late: what the loop did between ticks waits on the same
 * lock (the memory maps' refresh reads /proc/PID/maps): without them vm
 * read maplock.py's mprotect at 68% of its 88%. A wait longer than
 * TICK_WAIT_MAX_NS is taken for framewalk's own (stopped, Ctrl-Z): the read
 * stands for its moment alone.
 */
#define TICK_WAIT_MAX_NS 1000000000ull

struct tick_clock {
	struct pacing pace;
	uint64_t interval;        /* the mean gap; 0: not running (no capture loop: dump) */
	uint64_t next;            /* the next moment */
	uint64_t passed;          /* moments passed so far */
	uint64_t tick_first;      /* passed before the tick now taken was due */
	uint64_t tick_begun;      /* passed when it began */
	uint64_t tick_moments;    /* moments from when the tick before began to when this one did */
};

/* Start the clock at start (its first moment). A clock never started counts nothing. */
void tick_clock_init(struct tick_clock *c, uint64_t start, uint64_t interval);
/* Count the moments up to t; next moves past t. How many passed. */
uint64_t tick_clock_pass(struct tick_clock *c, uint64_t t);
/* Is a tick due at now? */
static inline int tick_clock_due(const struct tick_clock *c, uint64_t now)
{
	return now >= c->next;
}
/* A tick begins at now (due): its moment, and those passed while the loop was busy. */
void tick_clock_begin(struct tick_clock *c, uint64_t now);
/*
 * A thread read at t in the tick now taken: the moments the read stands
 * for, the tick's own and those passed since it was due until t (1 past
 * TICK_WAIT_MAX_NS). 1 on a clock not running.
 */
uint64_t tick_clock_weight(struct tick_clock *c, uint64_t t);

#endif
