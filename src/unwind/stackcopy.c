/*
 * Implementation of stackcopy.h.
 */
#include <errno.h>
#include <string.h>

#include "unwind/stackcopy.h"

/* Room past the last word a complete walk read (the outermost frame). */
#define END_SLACK 64

void stack_copy_init(struct stack_copy *sc, const void *data, uint64_t base, size_t len,
		     size_t limit)
{
	sc->data = data;
	sc->base = base;
	sc->len = len;
	sc->limit = limit;
	sc->read_end = 0;
	sc->beyond = 0;
}

int stack_copy_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct stack_copy *sc = ctx;

	if (addr < sc->base || addr + 8 < addr || addr + 8 > sc->base + sc->len) {
		if (addr >= sc->base + sc->len && addr < sc->base + sc->limit)
			sc->beyond = 1;
		return -EFAULT;
	}
	memcpy(val, sc->data + (addr - sc->base), 8);
	if (addr + 8 > sc->read_end)
		sc->read_end = addr + 8;
	return 0;
}

void stack_ends_init(struct stack_ends *se, uint32_t first, uint32_t max)
{
	memset(se, 0, sizeof(*se));
	se->first = first;
	se->max = max;
}

/* tid's entry, taken over from another thread when they share the slot. */
static struct stack_end *entry(struct stack_ends *se, pid_t tid)
{
	struct stack_end *e = &se->e[(unsigned)tid % STACK_ENDS];

	if (e->tid != tid) {
		e->tid = tid;
		e->end = 0;
		e->want = se->first;
	}
	return e;
}

size_t stack_ends_copy_size(struct stack_ends *se, pid_t tid, uint64_t base)
{
	struct stack_end *e = entry(se, tid);

	if (e->end > base && e->end - base <= se->max)
		return (size_t)(e->end - base);
	return e->want;
}

int stack_ends_learn(struct stack_ends *se, pid_t tid, const struct stack_copy *sc,
		     const struct unwind_result *uw, uint64_t *end)
{
	struct stack_end *e = entry(se, tid);
	uint64_t learnt;

	if (sc->beyond) {
		e->end = 0;
		if (sc->len == e->want && e->want < se->max)
			e->want *= 2;
		return -1;
	}
	if (uw->end != UNWIND_END_COMPLETE || !sc->read_end)
		return 0;
	learnt = (sc->read_end + END_SLACK + 15) & ~15ull;
	if (learnt <= e->end)
		return 0;           /* an end only grows: copies never get shorter */
	e->end = learnt;
	*end = learnt;
	return 1;
}
