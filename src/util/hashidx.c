/* Implementation of hashidx.h. */
#include <string.h>

#include "util/hashidx.h"
#include "util/util.h"

#define HIDX_MIN_CAP 64

uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

uint64_t hash_bytes(const void *s, size_t n)
{
	const unsigned char *p = s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return hash_mix64(h);
}

static void place(struct hidx *t, uint64_t h, uint32_t id)
{
	size_t i = (size_t)h & (t->cap - 1);

	while (t->slots[i])
		i = (i + 1) & (t->cap - 1);
	t->slots[i] = id + 1;
	t->n++;
}

static void grow(struct hidx *t, hidx_hash_fn hash, const void *owner)
{
	uint32_t *old = t->slots;
	size_t oldcap = t->cap;

	t->cap = oldcap ? oldcap * 2 : HIDX_MIN_CAP;
	t->slots = xcalloc(t->cap, sizeof(*t->slots));
	t->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			place(t, hash(owner, old[i] - 1), old[i] - 1);
	free(old);
}

void hidx_insert(struct hidx *t, uint64_t h, uint32_t id, hidx_hash_fn hash, const void *owner)
{
	if ((t->n + 1) * 2 > t->cap)
		grow(t, hash, owner);
	place(t, h, id);
}

void hidx_clear(struct hidx *t)
{
	if (t->cap)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->n = 0;
}

void hidx_release(struct hidx *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}
