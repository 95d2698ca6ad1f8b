/*
 * Sampling intervals that cannot lock onto a periodic target.
 *
 * A sampler reading at fixed intervals reads a workload paced by the same
 * period (a 100 Hz poller, a frame loop, a batch timer) at the same phase
 * every time: a thread spending half of each 10 ms in one function and half
 * in another was shown 100% in one of them at -r 100, by every backend.
 * A reader that stops the target paces it by its own clock and locks onto
 * nearly periodic code too (callshapes.py: the stopped reference drifted
 * 5-11 points from two instant readers that agreed within 2). Every gap
 * between two samples is therefore drawn uniformly from 0.5 to 1.5 of the
 * mean interval: the rate holds on average, the phase does not.
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
 * A period kept for a while (a perf event's, until it is drawn again): its
 * rate uniform in [rate/2, 3*rate/2), so that the number of samples holds
 * on average (a period drawn as pacing_gap draws gaps gave 10% more, the
 * mean of 1/x over [1/2, 3/2) being ln 3).
 */
uint64_t pacing_period(struct pacing *p, double rate_hz);

#endif
