/*
 * What a thread that does not hold the GIL is doing with it, as gil mode's
 * leaf markers need it (sampler.c): is it waiting for the GIL? A thread
 * waiting in take_gil sleeps on the GIL's condition variable (or, woken,
 * on its mutex): a futex inside one of them, which the kernel names as the
 * first argument of the thread's futex call. 3.15+ also publish each
 * thread state's own gil_requested flag, which says it directly.
 * Addresses come from the version's layout (the same base as the GIL's
 * holder: the runtime, the interpreter, or the GIL the interpreter points to).
 */
#ifndef FRAMEWALK_PYTHON_GILSTATE_H
#define FRAMEWALK_PYTHON_GILSTATE_H

#include <stdint.h>

#include "python/reader.h"

struct py_gil_waits {
	uint64_t cond, cond_end;        /* the GIL's condition variable: [cond, cond_end) */
	uint64_t mutex, mutex_end;      /* its mutex's lock word */
};

/* Where waiters for the GIL sleep. 0, -ENOTSUP (no layout), -EAGAIN, or -errno. */
int py_gil_waits(struct py_reader *r, struct py_gil_waits *w);

/* Is futex address addr in the GIL's condition variable or mutex? */
int py_gil_waits_on(const struct py_gil_waits *w, uint64_t addr);

/* 3.15+: the thread state's gil_requested flag. 0, -ENOTSUP (no such flag), or -errno. */
int py_gil_requested(struct py_reader *r, uint64_t tstate, int *requested);

#endif
