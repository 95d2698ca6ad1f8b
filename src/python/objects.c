/*
 * Implementation of objects.h: Python objects read from outside, with the
 * target's struct py_objects_layout. The only branches on the version are
 * on the layout's dict and managed-attribute models.
 */
#include <errno.h>

#include "python/objects.h"
#include "util/util.h"

#define TYPE_RECHECK_NS 1000000000ull
#define MODULE_RECHECK_NS 1000000000ull
#define TYPE_CACHE_MAX 4096
#define KEY_MAX 39
#define BASES_MAX 8
#define READV_BATCH 128
#define DK_LOG2_MAX 24           /* 16M slots: more than any dict we read */

int py_obj_word(struct py_objects *ob, uint64_t addr, uint64_t *v)
{
	return mem_read_uncached(ob->r->mem, addr, v, sizeof(*v));
}

int py_objects_init(struct py_objects *ob, struct py_reader *r)
{
	memset(ob, 0, sizeof(*ob));
	ob->r = r;
	ob->lo = &r->off->objects;
	if (!ob->lo->known || ob->lo->dict_model == PY_DICT_NONE)
		return -ENOTSUP;
	return 0;
}

void py_objects_release(struct py_objects *ob)
{
	free(ob->types);
	memset(ob, 0, sizeof(*ob));
}

/* ---- types ---------------------------------------------------------------- */

static size_t type_slot(const struct py_objects *ob, uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (ob->types_cap - 1);

	while (ob->types[i].addr && ob->types[i].addr != addr)
		i = (i + 1) & (ob->types_cap - 1);
	return i;
}

static void type_cache_grow(struct py_objects *ob)
{
	struct py_type_info *old = ob->types;
	size_t oldcap = ob->types_cap;

	/* A process with more types than this churns them: start over. */
	if (oldcap >= TYPE_CACHE_MAX) {
		memset(ob->types, 0, oldcap * sizeof(*ob->types));
		ob->ntypes = 0;
		return;
	}
	ob->types_cap = oldcap ? oldcap * 2 : 64;
	ob->types = xcalloc(ob->types_cap, sizeof(*ob->types));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].addr)
			ob->types[type_slot(ob, old[i].addr)] = old[i];
	free(old);
}

static int read_type(struct py_objects *ob, uint64_t addr, struct py_type_info *t)
{
	const struct py_objects_layout *lo = ob->lo;
	uint8_t buf[512];
	int32_t need = 0;
	const int32_t fields[] = { lo->type_name, lo->type_basicsize, lo->type_flags,
				   lo->type_dictoffset, lo->type_base };
	uint64_t name;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		if (fields[i] < 0)
			return -EFAULT;
		if (fields[i] + 8 > need)
			need = fields[i] + 8;
	}
	if ((size_t)need > sizeof(buf) || (addr & 7))
		return -EFAULT;
	ret = mem_read_uncached(ob->r->mem, addr, buf, (size_t)need);
	if (ret)
		return ret;
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->flags = load_u64(buf, (size_t)lo->type_flags);
	t->basicsize = (int64_t)load_u64(buf, (size_t)lo->type_basicsize);
	t->dictoffset = (int64_t)load_u64(buf, (size_t)lo->type_dictoffset);
	t->base = load_u64(buf, (size_t)lo->type_base);
	if (t->basicsize < 16 || t->basicsize > (1 << 20))
		return -EFAULT;
	name = load_u64(buf, (size_t)lo->type_name);
	/* tp_name is a C string; near the end of a mapping a long read fails: shorter ones then. */
	for (size_t len = sizeof(t->name) - 1; name && len >= 8; len /= 2) {
		if (!mem_read_uncached(ob->r->mem, name, t->name, len)) {
			t->name[len] = '\0';
			t->name[strnlen(t->name, len)] = '\0';
			break;
		}
		t->name[0] = '\0';
	}
	if (!t->name[0])
		return -EFAULT;
	for (char *p = t->name; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			return -EFAULT;
	if ((t->flags & lo->tpflags_heaptype) && lo->heaptype_cached_keys >= 0)
		mem_read_uncached(ob->r->mem, addr + (uint64_t)lo->heaptype_cached_keys, &t->cached_keys,
		   sizeof(t->cached_keys));
	t->checked_ns = fw_now_ns();
	return 0;
}

static int type_info(struct py_objects *ob, uint64_t addr, const struct py_type_info **out)
{
	uint64_t now = fw_now_ns();
	struct py_type_info t;
	size_t slot;
	int ret;

	if (!addr || (addr & 7))
		return -EFAULT;
	if (ob->types_cap) {
		slot = type_slot(ob, addr);
		if (ob->types[slot].addr == addr && now - ob->types[slot].checked_ns < TYPE_RECHECK_NS) {
			*out = &ob->types[slot];
			return 0;
		}
	}
	ret = read_type(ob, addr, &t);
	if (ret)
		return ret;
	if ((ob->ntypes + 1) * 2 > ob->types_cap)
		type_cache_grow(ob);
	slot = type_slot(ob, addr);
	if (!ob->types[slot].addr)
		ob->ntypes++;
	ob->types[slot] = t;
	*out = &ob->types[slot];
	return 0;
}

int py_obj_type(struct py_objects *ob, uint64_t obj, const struct py_type_info **out)
{
	uint64_t type;
	int ret;

	if (!obj || (obj & 7))
		return -EFAULT;
	ret = mem_read_uncached(ob->r->mem, obj + (uint64_t)ob->r->off->object_type, &type, sizeof(type));
	if (ret)
		return ret;
	return type_info(ob, type, out);
}

int py_type_at(struct py_objects *ob, uint64_t type, const struct py_type_info **out)
{
	return type_info(ob, type, out);
}

int py_obj_isinstance(struct py_objects *ob, uint64_t obj, const char *name)
{
	const struct py_type_info *t;
	int ret = py_obj_type(ob, obj, &t);

	for (int depth = 0; !ret && depth < BASES_MAX; depth++) {
		uint64_t base = t->base;

		if (!strcmp(t->name, name))
			return 1;
		if (!base)
			return 0;
		ret = type_info(ob, base, &t);
	}
	return ret ? ret : 0;
}

int py_obj_is_none(struct py_objects *ob, uint64_t obj)
{
	const struct py_type_info *t;
	int ret;

	if (ob->none_addr)
		return obj == ob->none_addr;
	ret = py_obj_type(ob, obj, &t);
	if (ret)
		return ret;
	if (strcmp(t->name, "NoneType"))
		return 0;
	ob->none_addr = obj;
	return 1;
}

/* ---- str and int ---------------------------------------------------------- */

int py_obj_str(struct py_objects *ob, uint64_t obj, size_t cap, char **out)
{
	const struct py_type_info *t;
	int ret = py_obj_type(ob, obj, &t);

	if (ret)
		return ret;
	if (!(t->flags & ob->lo->tpflags_unicode))
		return -EFAULT;
	mem_uncached_begin(ob->r->mem);
	ret = py_reader_str(ob->r, obj, cap, out);
	mem_uncached_end(ob->r->mem);
	return ret;
}

#define LONG_DIGITS_MAX 5        /* 30-bit digits: up to 150 bits, enough for 128 */

/*
 * An int's digits (least significant first, each checked to fit the
 * version's digit width), how many, and its sign. -EFAULT when obj is no
 * int, -ERANGE when it has more than LONG_DIGITS_MAX digits.
 */
static int long_digits(struct py_objects *ob, uint64_t obj, uint32_t *digits, int64_t *ndigits,
		       int *negative)
{
	const struct py_objects_layout *lo = ob->lo;
	const struct py_type_info *t;
	uint8_t buf[64];
	int64_t nd;
	int ret;

	ret = py_obj_type(ob, obj, &t);
	if (ret)
		return ret;
	if (!(t->flags & lo->tpflags_long) || lo->long_digits < 0 || lo->long_shift <= 0 ||
	    (size_t)lo->long_digits + 4 > sizeof(buf))
		return -EFAULT;
	ret = mem_read_uncached(ob->r->mem, obj, buf, (size_t)lo->long_digits + 4);
	if (ret)
		return ret;
	if (lo->long_tag >= 0) {
		uint64_t tag = load_u64(buf, (size_t)lo->long_tag);

		nd = (int64_t)(tag >> 3);
		*negative = (tag & 3) == 2;
	} else if (lo->long_size >= 0) {
		nd = (int64_t)load_u64(buf, (size_t)lo->long_size);
		if (nd == INT64_MIN)
			return -EFAULT;                 /* no size; and -nd would overflow */
		*negative = nd < 0;
		if (*negative)
			nd = -nd;
	} else {
		return -EFAULT;
	}
	if (nd < 0 || nd > LONG_DIGITS_MAX)
		return nd > LONG_DIGITS_MAX ? -ERANGE : -EFAULT;
	if (nd > 1 && mem_read_uncached(ob->r->mem, obj + (uint64_t)lo->long_digits, digits, (size_t)nd * 4))
		return -EFAULT;
	if (nd == 1)
		memcpy(&digits[0], buf + lo->long_digits, 4);
	for (int64_t i = 0; i < nd; i++)
		if (digits[i] >> lo->long_shift)
			return -EFAULT;
	*ndigits = nd;
	return 0;
}

int py_obj_long(struct py_objects *ob, uint64_t obj, int64_t *v)
{
	uint32_t digits[LONG_DIGITS_MAX] = { 0 };
	int64_t ndigits;
	uint64_t mag = 0;
	int negative, ret;

	ret = long_digits(ob, obj, digits, &ndigits, &negative);
	if (ret)
		return ret;
	for (int64_t i = ndigits; i-- > 0;) {
		if (mag >> (63 - ob->lo->long_shift))
			return -ERANGE;
		mag = (mag << ob->lo->long_shift) | digits[i];
	}
	if (mag > INT64_MAX)
		return -ERANGE;
	*v = negative ? -(int64_t)mag : (int64_t)mag;
	return 0;
}

int py_obj_uint128(struct py_objects *ob, uint64_t obj, uint64_t *hi, uint64_t *lo)
{
	uint32_t digits[LONG_DIGITS_MAX] = { 0 };
	unsigned shift = (unsigned)ob->lo->long_shift;
	uint64_t h = 0, l = 0;
	int64_t ndigits;
	int negative, ret;

	ret = long_digits(ob, obj, digits, &ndigits, &negative);
	if (ret)
		return ret;
	if (negative)
		return -ERANGE;
	for (int64_t i = ndigits; i-- > 0;) {
		if (h >> (64 - shift))
			return -ERANGE;
		h = (h << shift) | (l >> (64 - shift));
		l = (l << shift) | digits[i];
	}
	*hi = h;
	*lo = l;
	return 0;
}

/* ---- dicts ----------------------------------------------------------------- */

/* Where one dict's entries are and how to read them. */
struct dict_view {
	uint64_t entries;         /* first entry */
	int64_t nentries;
	size_t esize;             /* bytes per entry */
	size_t koff, voff;        /* key and value inside an entry */
	uint64_t values;          /* split table: the values array (value of entry i at [i]) */
};

/* The view of a keys object, with the values array of a split table (0: combined). */
static int keys_view(struct py_objects *ob, uint64_t keys, uint64_t values, struct dict_view *v)
{
	const struct py_objects_layout *lo = ob->lo;
	uint8_t buf[72];
	int general = 1, empty;
	int ret;

	if (!keys || (keys & 7) || lo->dk_nentries < 0 || lo->dk_indices < 0 ||
	    (size_t)lo->dk_indices + 8 > sizeof(buf))
		return -EFAULT;
	/* the header and the first 8 index bytes (Py_EMPTY_KEYS has exactly 8) */
	ret = mem_read_uncached(ob->r->mem, keys, buf, (size_t)lo->dk_indices + 8);
	if (ret)
		return ret;
	v->nentries = (int64_t)load_u64(buf, (size_t)lo->dk_nentries);
	/*
	 * Py_EMPTY_KEYS, every empty dict's (a dict subclass's too: an
	 * OpenTelemetry Context()): no entries, every index DKIX_EMPTY (-1), and
	 * below, its size 1 (before 3.11) or its log 0 with unicode keys and an
	 * index log of 0 (3.11-3.13) or 3 (3.14+, and Debian's 3.13). Zeroed or
	 * freed memory is none of these: it stays an error, not an empty dict.
	 */
	empty = v->nentries == 0 && load_u64(buf, (size_t)lo->dk_indices) == UINT64_MAX;
	if (lo->dict_model == PY_DICT_LOG2) {
		unsigned log2 = buf[lo->dk_log2_size], log2_index = buf[lo->dk_log2_index_bytes];
		unsigned kind = buf[lo->dk_kind];

		if (empty && log2 == 0 && (log2_index == 0 || log2_index == 3) && kind == 1) {
			memset(v, 0, sizeof(*v));
			return 0;
		}

		if (log2 < 3 || log2 > DK_LOG2_MAX || log2_index < log2 || log2_index > log2 + 3 ||
		    kind > 2)
			return -EFAULT;
		general = kind == 0;
		v->entries = keys + (uint64_t)lo->dk_indices + (1ull << log2_index);
		if (v->nentries > (int64_t)(1ull << log2))
			return -EFAULT;
	} else {
		int64_t size = (int64_t)load_u64(buf, (size_t)lo->dk_size);
		unsigned ix;

		if (empty && size == 1) {                /* Py_EMPTY_KEYS before 3.11 */
			memset(v, 0, sizeof(*v));
			return 0;
		}

		if (size < 8 || size > (1ll << DK_LOG2_MAX) || (size & (size - 1)))
			return -EFAULT;
		ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffll ? 4 : 8;
		v->entries = keys + (uint64_t)lo->dk_indices + (uint64_t)size * ix;
		if (v->nentries > size)
			return -EFAULT;
	}
	if (v->nentries < 0 || v->nentries > PY_OBJ_DICT_MAX)
		return -EFAULT;
	v->esize = (size_t)(general ? lo->dk_entry_size : lo->dk_unicode_entry_size);
	v->koff = general ? 8 : 0;
	v->voff = v->koff + 8;
	if (v->esize < v->voff + 8 || v->esize > 64)
		return -EFAULT;
	v->values = values;
	return 0;
}

static int is_dict(struct py_objects *ob, uint64_t obj)
{
	const struct py_type_info *t;
	int ret = py_obj_type(ob, obj, &t);

	if (ret)
		return ret;
	return (t->flags & ob->lo->tpflags_dict) ? 0 : -EFAULT;
}

/* The array a split table's values start at, from ma_values (or a managed values pointer). */
static uint64_t values_array(const struct py_objects_layout *lo, uint64_t values)
{
	if (!values)
		return 0;
	return values + (uint64_t)(lo->dictvalues_values > 0 ? lo->dictvalues_values : 0);
}

static int dict_view(struct py_objects *ob, uint64_t dict, struct dict_view *v)
{
	const struct py_objects_layout *lo = ob->lo;
	uint64_t keys, values;
	int ret = is_dict(ob, dict);

	if (ret)
		return ret;
	if (mem_read_uncached(ob->r->mem, dict + (uint64_t)lo->dict_keys, &keys, 8) ||
	    mem_read_uncached(ob->r->mem, dict + (uint64_t)lo->dict_values, &values, 8))
		return -EFAULT;
	return keys_view(ob, keys, values_array(lo, values), v);
}

/* The entries of a view: keys[i] and values[i] (NULL key: a hole). */
static int view_entries(struct py_objects *ob, const struct dict_view *v, uint64_t *keys,
			uint64_t *vals)
{
	size_t n = (size_t)v->nentries, bytes = n * v->esize;
	uint8_t *buf;
	int ret;

	if (!n)
		return 0;
	buf = xmalloc(bytes);
	ret = mem_read_uncached(ob->r->mem, v->entries, buf, bytes);
	if (!ret && v->values)
		ret = mem_read_uncached(ob->r->mem, v->values, vals, n * 8);
	for (size_t i = 0; !ret && i < n; i++) {
		keys[i] = load_u64(buf, i * v->esize + v->koff);
		if (!v->values)
			vals[i] = load_u64(buf, i * v->esize + v->voff);
		if (keys[i] & 7)
			ret = -EFAULT;
	}
	free(buf);
	return ret;
}

static struct py_key_cache *key_cache(struct py_objects *ob, const char *key)
{
	for (size_t i = 0; i < ob->nkeys; i++)
		if (!strcmp(ob->keys[i].name, key))
			return &ob->keys[i];
	if (ob->nkeys == ARRAY_SIZE(ob->keys))
		return NULL;
	xsnprintf(ob->keys[ob->nkeys].name, sizeof(ob->keys[0].name), "%s", key);
	ob->keys[ob->nkeys].addr = 0;
	return &ob->keys[ob->nkeys++];
}

/* Does the str object whose first bytes are buf hold exactly key (ASCII)? */
static int str_equals(const struct py_offsets *o, const uint8_t *buf, const char *key, size_t klen)
{
	struct py_str_head h = py_str_head(o, buf);

	if (!py_str_compact_ascii(&h) || h.len != klen)
		return 0;
	return !memcmp(buf + o->unicode_ascii_data, key, klen);
}

/*
 * Which of n key objects holds the str key: first by the address this key
 * was last found at (interned names are one object), then by content, a
 * batch of keys per system call. The index, or -1.
 */
static ssize_t find_key(struct py_objects *ob, const uint64_t *keys, size_t n, const char *key)
{
	const struct py_offsets *o = ob->r->off;
	struct py_key_cache *kc = key_cache(ob, key);
	size_t klen = strlen(key), each = (size_t)o->unicode_ascii_data + klen;
	struct mem_iov iov[READV_BATCH];
	uint8_t (*bufs)[128];
	ssize_t found = -1;

	if (klen > KEY_MAX || each > 128)
		return -1;
	for (size_t i = 0; kc && kc->addr && i < n; i++)
		if (keys[i] == kc->addr)
			return (ssize_t)i;
	bufs = xmalloc(sizeof(*bufs) * READV_BATCH);
	mem_uncached_begin(ob->r->mem);
	for (size_t i = 0; i < n && found < 0;) {
		size_t k = 0;
		size_t idx[READV_BATCH];

		for (; i < n && k < READV_BATCH; i++) {
			if (!keys[i])
				continue;
			iov[k] = (struct mem_iov){ keys[i], bufs[k], each, 0 };
			idx[k++] = i;
		}
		if (!k || mem_readv(ob->r->mem, iov, k) < 0)
			break;
		for (size_t j = 0; j < k && found < 0; j++)
			if (iov[j].ok && str_equals(o, bufs[j], key, klen))
				found = (ssize_t)idx[j];
	}
	mem_uncached_end(ob->r->mem);
	free(bufs);
	if (found >= 0 && kc)
		kc->addr = keys[found];
	return found;
}

/* value of key in a view (0, -ENOENT, -errno). */
static int view_get(struct py_objects *ob, const struct dict_view *v, const char *key, uint64_t *value)
{
	size_t n = (size_t)v->nentries;
	uint64_t *keys, *vals;
	ssize_t i;
	int ret;

	if (!n)
		return -ENOENT;
	keys = xcalloc(n, sizeof(*keys));
	vals = xcalloc(n, sizeof(*vals));
	ret = view_entries(ob, v, keys, vals);
	if (!ret) {
		i = find_key(ob, keys, n, key);
		if (i < 0 || !vals[i])
			ret = -ENOENT;
		else if (vals[i] & 7)
			ret = -EFAULT;
		else
			*value = vals[i];
	}
	free(keys);
	free(vals);
	return ret;
}

int py_dict_get(struct py_objects *ob, uint64_t dict, const char *key, uint64_t *value)
{
	struct dict_view v;
	int ret = dict_view(ob, dict, &v);

	return ret ? ret : view_get(ob, &v, key, value);
}

int py_dict_items(struct py_objects *ob, uint64_t dict, struct py_kv *out, size_t max, size_t *n)
{
	struct dict_view v;
	uint64_t *keys, *vals;
	size_t count = 0;
	int ret = dict_view(ob, dict, &v);

	*n = 0;
	if (ret || !v.nentries)
		return ret;
	keys = xcalloc((size_t)v.nentries, sizeof(*keys));
	vals = xcalloc((size_t)v.nentries, sizeof(*vals));
	ret = view_entries(ob, &v, keys, vals);
	for (size_t i = 0; !ret && i < (size_t)v.nentries && count < max; i++) {
		if (!keys[i] || !vals[i] || (vals[i] & 7))
			continue;
		out[count].key = keys[i];
		out[count].value = vals[i];
		count++;
	}
	free(keys);
	free(vals);
	*n = count;
	return ret;
}

/* ---- instance attributes --------------------------------------------------- */

/* An attribute among values laid out by the type's shared keys. */
static int shared_get(struct py_objects *ob, const struct py_type_info *t, uint64_t values,
		      const char *name, uint64_t *value)
{
	struct dict_view v;
	int ret;

	if (!t->cached_keys)
		return -ENOENT;
	ret = keys_view(ob, t->cached_keys, values, &v);
	return ret ? ret : view_get(ob, &v, name, value);
}

int py_obj_attr(struct py_objects *ob, uint64_t obj, const char *name, uint64_t *value)
{
	const struct py_objects_layout *lo = ob->lo;
	const struct py_type_info *t;
	uint64_t dict = 0, word;
	int ret = py_obj_type(ob, obj, &t);

	if (ret)
		return ret;
	if (lo->managed_model != PY_MANAGED_NONE && (t->flags & lo->tpflags_managed_dict)) {
		if (obj < (uint64_t)lo->managed_dict_below ||
		    mem_read_uncached(ob->r->mem, obj - (uint64_t)lo->managed_dict_below, &word, 8))
			return -EFAULT;
		switch (lo->managed_model) {
		case PY_MANAGED_311: {
			uint64_t values;

			if (mem_read_uncached(ob->r->mem, obj - (uint64_t)lo->managed_values_below, &values, 8))
				return -EFAULT;
			if (values)
				return shared_get(ob, t, values_array(lo, values), name, value);
			dict = word;
			break;
		}
		case PY_MANAGED_312:
			if (word & 1)
				return shared_get(ob, t, values_array(lo, word + 1), name, value);
			dict = word;
			break;
		default: {
			uint8_t valid = 0;
			uint64_t values = obj + (uint64_t)t->basicsize;

			if (word) {
				dict = word;
				break;
			}
			if (!(t->flags & lo->tpflags_inline_values))
				return -ENOENT;
			if (lo->dictvalues_valid >= 0 &&
			    mem_read_uncached(ob->r->mem, values + (uint64_t)lo->dictvalues_valid, &valid, 1))
				return -EFAULT;
			if (!valid)
				return -ENOENT;
			return shared_get(ob, t, values_array(lo, values), name, value);
		}
		}
	} else if (t->dictoffset > 0 && t->dictoffset < t->basicsize) {
		if (mem_read_uncached(ob->r->mem, obj + (uint64_t)t->dictoffset, &dict, 8))
			return -EFAULT;
	} else {
		return -ENOENT;
	}
	if (!dict)
		return -ENOENT;
	return py_dict_get(ob, dict, name, value);
}

/* ---- sets, sequences, references -------------------------------------------- */

int py_set_items(struct py_objects *ob, uint64_t set, uint64_t *out, size_t max, size_t *n)
{
	const struct py_objects_layout *lo = ob->lo;
	uint64_t table, mask;
	int64_t used;
	uint8_t *buf;
	size_t slots, count = 0;
	int ret;

	*n = 0;
	if (lo->set_table < 0 || lo->set_mask < 0 || lo->set_used < 0 || lo->set_entry_size < 16)
		return -EFAULT;
	if (mem_read_uncached(ob->r->mem, set + (uint64_t)lo->set_table, &table, 8) ||
	    mem_read_uncached(ob->r->mem, set + (uint64_t)lo->set_mask, &mask, 8) ||
	    mem_read_uncached(ob->r->mem, set + (uint64_t)lo->set_used, &used, 8))
		return -EFAULT;
	if (mask < 7 || mask >= (1u << DK_LOG2_MAX) || ((mask + 1) & mask) || used < 0 ||
	    (uint64_t)used > mask + 1 || (mask + 1) > 4 * (uint64_t)PY_OBJ_DICT_MAX)
		return -EFAULT;
	slots = (size_t)mask + 1;
	buf = xmalloc(slots * (size_t)lo->set_entry_size);
	ret = mem_read_uncached(ob->r->mem, table, buf, slots * (size_t)lo->set_entry_size);
	for (size_t i = 0; !ret && i < slots && count < max && count < (size_t)used; i++) {
		uint64_t key = load_u64(buf, i * (size_t)lo->set_entry_size);
		/*
		 * A removed key leaves a dummy (Objects/setobject.c: key the
		 * static _dummy_struct, hash -1, which no key's hash is): not an
		 * item, and not counted in used, so taken for one it hid the
		 * items after it (a WeakSet of short-lived tasks: its removals).
		 */
		int64_t hash = (int64_t)load_u64(buf, i * (size_t)lo->set_entry_size + 8);

		if (key && !(key & 7) && hash != -1)
			out[count++] = key;
	}
	free(buf);
	*n = count;
	return ret;
}

int py_seq_items(struct py_objects *ob, uint64_t seq, uint64_t *out, size_t max, size_t *n)
{
	const struct py_objects_layout *lo = ob->lo;
	const struct py_type_info *t;
	int64_t size;
	uint64_t items;
	int ret = py_obj_type(ob, seq, &t);

	*n = 0;
	if (ret)
		return ret;
	if (t->flags & lo->tpflags_list) {
		if (mem_read_uncached(ob->r->mem, seq + (uint64_t)lo->list_size, &size, 8) ||
		    mem_read_uncached(ob->r->mem, seq + (uint64_t)lo->list_items, &items, 8))
			return -EFAULT;
	} else if (t->flags & lo->tpflags_tuple) {
		if (mem_read_uncached(ob->r->mem, seq + (uint64_t)lo->tuple_size, &size, 8))
			return -EFAULT;
		items = seq + (uint64_t)lo->tuple_items;
	} else {
		return -EFAULT;
	}
	if (size < 0 || size > PY_OBJ_DICT_MAX)
		return -EFAULT;
	if ((size_t)size > max)
		size = (int64_t)max;
	if (size && mem_read_uncached(ob->r->mem, items, out, (size_t)size * 8))
		return -EFAULT;
	*n = (size_t)size;
	return 0;
}

int py_weakref_get(struct py_objects *ob, uint64_t ref, uint64_t *target)
{
	int ret = mem_read_uncached(ob->r->mem, ref + (uint64_t)ob->lo->weakref_object, target, 8);

	if (!ret && py_obj_is_none(ob, *target) == 1)
		*target = 0;    /* a dead reference points at None */
	return ret;
}

int py_method_self(struct py_objects *ob, uint64_t meth, uint64_t *self)
{
	const struct py_type_info *t;
	int ret = py_obj_type(ob, meth, &t);

	if (ret)
		return ret;
	if (!strcmp(t->name, "method"))
		return mem_read_uncached(ob->r->mem, meth + (uint64_t)ob->lo->method_self, self, 8);
	if (!strcmp(t->name, "builtin_function_or_method"))
		return mem_read_uncached(ob->r->mem, meth + (uint64_t)ob->lo->cfunction_self, self, 8);
	return -ENOENT;
}

int py_function_closure(struct py_objects *ob, uint64_t func, uint64_t *out, size_t max, size_t *n)
{
	const struct py_type_info *t;
	uint64_t closure;
	int ret = py_obj_type(ob, func, &t);

	*n = 0;
	if (ret)
		return ret;
	if (strcmp(t->name, "function"))
		return -ENOENT;
	if (mem_read_uncached(ob->r->mem, func + (uint64_t)ob->lo->function_closure, &closure, 8))
		return -EFAULT;
	if (!closure)
		return 0;
	ret = py_seq_items(ob, closure, out, max, n);
	for (size_t i = 0; !ret && i < *n; i++)
		if (mem_read_uncached(ob->r->mem, out[i] + (uint64_t)ob->lo->cell_ref, &out[i], 8))
			out[i] = 0;
	return ret;
}

/* ---- modules ---------------------------------------------------------------- */

static int interp_addr(struct py_objects *ob, uint64_t *interp)
{
	int ret = py_reader_main_interp(ob->r, interp);

	return ret == -EAGAIN ? ret : ret ? -EFAULT : 0;
}

/* A module object's __dict__, checked to be a dict. */
static int module_dict(struct py_objects *ob, uint64_t module, uint64_t *dict)
{
	if (ob->lo->module_dict < 0 ||
	    py_obj_isinstance(ob, module, "module") != 1 ||
	    mem_read_uncached(ob->r->mem, module + (uint64_t)ob->lo->module_dict, dict, 8))
		return -EFAULT;
	return is_dict(ob, *dict);
}

static int module_entry(struct py_objects *ob, const char *name, struct py_module_cache **out)
{
	uint64_t now = fw_now_ns(), interp, modules, module, dict;
	struct py_module_cache *c = NULL;
	int ret;

	for (size_t i = 0; i < ob->nmodules; i++)
		if (!strcmp(ob->modules[i].name, name))
			c = &ob->modules[i];
	if (c && c->module && now - c->checked_ns < MODULE_RECHECK_NS) {
		*out = c;
		return 0;
	}
	if (ob->lo->interp_modules < 0)
		return -ENOTSUP;
	ret = interp_addr(ob, &interp);
	if (!ret)
		ret = mem_read_uncached(ob->r->mem, interp + (uint64_t)ob->lo->interp_modules, &modules, 8);
	if (!ret && !modules)
		ret = -EAGAIN;
	if (!ret)
		ret = py_dict_get(ob, modules, name, &module);
	if (!ret)
		ret = module_dict(ob, module, &dict);
	if (ret)
		return ret;
	if (!c) {
		if (ob->nmodules == ARRAY_SIZE(ob->modules))
			ob->nmodules = 0;   /* a handful of names is ever asked for */
		c = &ob->modules[ob->nmodules++];
		xsnprintf(c->name, sizeof(c->name), "%s", name);
	}
	c->module = module;
	c->dict = dict;
	c->checked_ns = now;
	*out = c;
	return 0;
}

int py_module(struct py_objects *ob, const char *name, uint64_t *module)
{
	struct py_module_cache *c;
	int ret = module_entry(ob, name, &c);

	if (!ret)
		*module = c->module;
	return ret;
}

int py_module_attr(struct py_objects *ob, const char *module, const char *name, uint64_t *value)
{
	struct py_module_cache *c;
	int ret = module_entry(ob, module, &c);

	if (ret)
		return ret;
	ret = py_dict_get(ob, c->dict, name, value);
	if (ret == -EFAULT)
		c->module = 0;    /* look the module up again next time */
	return ret;
}
