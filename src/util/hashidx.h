/*
 * A hash index over ids: the entries live in their owner's array (the
 * profile's strings, frames, nodes; the symbolizer's cache), the index maps
 * a hash to candidate ids by open addressing with linear probing, at most
 * half full. The owner compares candidates itself, so a lookup is a loop of
 * inline calls with no callback per probe:
 *
 *	size_t pos = hidx_start(&t, h);
 *	for (uint32_t id; (id = hidx_next(&t, &pos)) != HIDX_NONE;)
 *		if (same(owner, id, key))
 *			return id;
 *	hidx_insert(&t, h, new_id, hash_of, owner);
 *
 * Only growth calls back, to rehash the ids already there. A zeroed struct
 * hidx is an empty index.
 */
#ifndef FRAMEWALK_UTIL_HASHIDX_H
#define FRAMEWALK_UTIL_HASHIDX_H

#include <stddef.h>
#include <stdint.h>

#define HIDX_NONE UINT32_MAX

struct hidx {
	uint32_t *slots;            /* id + 1; 0 is empty */
	size_t cap, n;              /* cap: 0, or a power of two */
};

/* The hash of an id already in the index, for rehashing on growth. */
typedef uint64_t (*hidx_hash_fn)(const void *owner, uint32_t id);

/* Where the probe for hash h starts. */
static inline size_t hidx_start(const struct hidx *t, uint64_t h)
{
	return t->cap ? (size_t)h & (t->cap - 1) : 0;
}

/* The next candidate id of the probe at *pos, or HIDX_NONE when there is none. */
static inline uint32_t hidx_next(const struct hidx *t, size_t *pos)
{
	uint32_t s;

	if (!t->cap || !(s = t->slots[*pos]))
		return HIDX_NONE;
	*pos = (*pos + 1) & (t->cap - 1);
	return s - 1;
}

/* Add id (not in the index yet) under hash h; ids below HIDX_NONE. */
void hidx_insert(struct hidx *t, uint64_t h, uint32_t id, hidx_hash_fn hash, const void *owner);
/* Empty the index, keeping its slots for the next fill. */
void hidx_clear(struct hidx *t);
void hidx_release(struct hidx *t);

/* A 64-bit finalizer (murmur3's fmix64): every input bit moves every output bit. */
uint64_t hash_mix64(uint64_t h);
/* FNV-1a over n bytes, finalized by hash_mix64. */
uint64_t hash_bytes(const void *s, size_t n);

#endif
