/*
 * A plain shared library for tests/functional/test_realities.py: the
 * workload loads a fresh copy of it, calls fw_churn, and unloads it, over
 * and over, to check that framewalk's open files stay flat while a target's
 * libraries come and go.
 */
#define NOINLINE __attribute__((noinline))

static volatile long sink;

static NOINLINE long churn_step(long i, long s)
{
	return s + (i ^ (s >> 3));
}

long fw_churn(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s = churn_step(i, s);
	sink = s;
	return s;
}
