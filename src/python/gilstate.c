/*
 * Implementation of gilstate.h: the GIL's condition variable and mutex sit
 * beside its holder field, at offsets from the same base.
 */
#include <errno.h>

#include "python/gilstate.h"
#include "util/util.h"

/* pthread_mutex_t's lock word, the futex a contended lock sleeps on */
#define MUTEX_WORD 8

int py_gil_waits(struct py_reader *r, struct py_gil_waits *w)
{
	const struct py_offsets *o = r->off;
	const struct py_objects_layout *lo = &o->objects;
	uint64_t holder, locked, gc, head, base;
	int ret;

	memset(w, 0, sizeof(*w));
	if (!lo->known || lo->gil_cond < 0 || lo->gil_mutex < 0 || lo->gil_cond_size <= 0 ||
	    o->gil_holder == PYOFF_NONE || o->free_threaded)
		return -ENOTSUP;
	ret = py_reader_state_addrs(r, &holder, &locked, &gc, &head);
	if (ret)
		return ret;
	if (!holder)
		return -ENOTSUP;
	base = holder - (uint64_t)o->gil_holder;
	w->cond = base + (uint64_t)lo->gil_cond;
	w->cond_end = w->cond + (uint64_t)lo->gil_cond_size;
	w->mutex = base + (uint64_t)lo->gil_mutex;
	w->mutex_end = w->mutex + MUTEX_WORD;
	return 0;
}

int py_gil_waits_on(const struct py_gil_waits *w, uint64_t addr)
{
	return (addr >= w->cond && addr < w->cond_end) ||
	       (addr >= w->mutex && addr < w->mutex_end);
}

int py_gil_requested(struct py_reader *r, uint64_t tstate, int *requested)
{
	int32_t off = r->off->objects.tstate_gil_requested, v = 0;
	int ret;

	*requested = 0;
	if (!r->off->objects.known || off < 0)
		return -ENOTSUP;
	if (!tstate)
		return -EFAULT;
	ret = mem_read(r->mem, tstate + (uint64_t)off, &v, sizeof(v));
	if (ret)
		return ret;
	*requested = v != 0;
	return 0;
}
