/*
 * C for tests/functional/test_names.py, built with -O2 -g and loaded with
 * ctypes: the hot loop is in a function the compiler must inline, so only
 * the debug info says it is there (fwinl_work: one function; fwinl_nested:
 * one inlined into another).
 */
static inline __attribute__((always_inline)) unsigned long mix(unsigned long a, unsigned long x)
{
	for (int i = 0; i < 64; i++)
		a = a * 31 + (x ^ (unsigned long)i);    /* @mix_body */
	return a;
}

__attribute__((noinline)) unsigned long fwinl_work(int rounds)
{
	unsigned long acc = 0;

	for (long r = 0; r < rounds * 2000L; r++)
		acc = mix(acc, (unsigned long)r);       /* @call_mix */
	return acc;
}

/* A function inlined into an inlined function: each a frame of its own. */
static inline __attribute__((always_inline)) unsigned long inner(unsigned long a, unsigned long x)
{
	return a * 31 + (x ^ 7);                /* @inner_body */
}

static inline __attribute__((always_inline)) unsigned long outer(unsigned long a, unsigned long x)
{
	for (int i = 0; i < 64; i++)
		a = inner(a, x + (unsigned long)i);     /* @call_inner */
	return a;
}

__attribute__((noinline)) unsigned long fwinl_nested(int rounds)
{
	unsigned long acc = 0;

	for (long r = 0; r < rounds * 2000L; r++)
		acc = outer(acc, (unsigned long)r);     /* @call_outer */
	return acc;
}
