/* Sampling intervals spread around their mean (pacing.h says why). */
#include "sampler/pacing.h"

void pacing_init(struct pacing *p, uint64_t seed)
{
	p->state = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* The next draw, uniform in [0, 1). */
static double pacing_unit(struct pacing *p)
{
	uint64_t x = p->state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	p->state = x;
	return (double)(x >> 11) / (double)(1ull << 53);     /* the top 53 bits */
}

uint64_t pacing_gap(struct pacing *p, uint64_t mean)
{
	return mean / 2 + (uint64_t)(pacing_unit(p) * (double)mean);
}

#define REPHASE_INTERVALS 4
#define MEAN_INVERSE_U 1.0033534773107562   /* E[1/u], u uniform in [0.9, 1.1): 5 ln(11/9) */
#define REPHASE_MIN_NS 200000000ull

uint64_t pacing_rephase_mean(uint64_t interval, uint64_t batch)
{
	uint64_t mean = REPHASE_INTERVALS * interval;

	if (mean < REPHASE_MIN_NS)
		mean = REPHASE_MIN_NS;
	return mean > batch ? mean : batch;
}

uint64_t pacing_rephase_period(struct pacing *p, uint64_t interval, uint64_t mean,
			       uint64_t batch)
{
	double gap = (double)mean + (double)batch / 2.0;
	double c = MEAN_INVERSE_U * (double)interval / (1.0 + (double)interval / (2.0 * gap));
	uint64_t period = (uint64_t)(c * (0.9 + 0.2 * pacing_unit(p)));

	return period ? period : 1;
}

void tick_clock_init(struct tick_clock *c, uint64_t start, uint64_t interval)
{
	pacing_init(&c->pace, start);
	c->interval = interval ? interval : 1;
	c->next = start;          /* the first tick at once */
	c->passed = c->tick_first = c->tick_begun = c->tick_moments = 0;
}

uint64_t tick_clock_pass(struct tick_clock *c, uint64_t t)
{
	uint64_t n = 0;

	if (!c->interval)
		return 0;
	if (t > c->next && t - c->next > TICK_WAIT_MAX_NS) {
		/* a long gap (framewalk itself was stopped): counted, not drawn */
		n = (t - c->next) / c->interval;
		c->next += n * c->interval;
	}
	while (c->next <= t) {
		uint64_t gap = pacing_gap(&c->pace, c->interval);

		c->next += gap ? gap : 1;
		n++;
	}
	c->passed += n;
	return n;
}

void tick_clock_begin(struct tick_clock *c, uint64_t now)
{
	c->tick_first = c->passed;
	tick_clock_pass(c, now);
	c->tick_moments = c->passed - c->tick_begun;
	c->tick_begun = c->passed;
}

uint64_t tick_clock_weight(struct tick_clock *c, uint64_t t)
{
	uint64_t waited, most;

	if (!c->interval)
		return 1;
	tick_clock_pass(c, t);
	waited = c->passed > c->tick_first ? c->passed - c->tick_first - 1 : 0;
	most = TICK_WAIT_MAX_NS / c->interval;
	/* longer: framewalk itself stalled (stopped, Ctrl-Z), not the target */
	return waited <= most ? 1 + waited : 1;
}
