/*
 * Unit tests of the context-variable reader (src/python/contextvars.c) on
 * memory laid out as each interpreter 3.8-3.15 lays it out: every object
 * placed with that version's own struct offsets (generated from its
 * headers: py_offsets_builtin for 3.8-3.12, the _Py_DebugOffsets block of
 * debug_blocks.h read by py_offsets_from_debug for 3.13+), sys.modules and
 * a module's dict in that version's dict layout. Variables get chosen hashes,
 * so the HAMT takes every shape: a bitmap root, an array root (more than 16
 * entries) over bitmap nodes, a collision node; then what a hostile or torn
 * target can hold: a missing key, a path deeper than a HAMT can be, a cycle,
 * objects of the wrong type (a heap type named like a node type included),
 * and a variable's cache that is or is not the thread's; and a context
 * object read by itself (a suspended asyncio task's own), where no cache
 * may answer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "python/contextvars.h"
#include "python/discover.h"
#include "python/objects.h"
#include "python/offsets.h"
#include "python/reader.h"
#include "target/memory.h"
#include "debug_blocks.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define RUNTIME_ADDR 0x10000000ull
#define RUNTIME_LEN 0x10000
#define OBJ_ADDR 0x20000000ull
#define OBJ_LEN (1u << 20)
#define TYPE_TYPE 0x7f0077770000ull

struct image {
	int minor;
	struct py_offsets off;
	const struct py_objects_layout *lo;
	uint8_t *runtime, *obj;
	struct mem_region regions[2];
	size_t next;
	uint64_t str_type, int_type, dict_type, module_type, float_type;
	uint64_t context_type, var_type, hamt_type, bitmap_type, array_type, collision_type;
	uint64_t interp, tstate;
};

static uint64_t alloc(struct image *im, size_t size)
{
	uint64_t a = OBJ_ADDR + im->next;

	im->next += (size + 15) & ~(size_t)15;
	assert_true(im->next <= OBJ_LEN);
	return a;
}

static void put(struct image *im, uint64_t addr, const void *v, size_t n)
{
	assert_true(addr >= OBJ_ADDR && addr + n <= OBJ_ADDR + OBJ_LEN);
	memcpy(im->obj + (addr - OBJ_ADDR), v, n);
}

static void put64(struct image *im, uint64_t addr, int32_t off, uint64_t v)
{
	assert_true(off >= 0);
	put(im, addr + (uint64_t)off, &v, 8);
}

static void put32(struct image *im, uint64_t addr, int32_t off, uint32_t v)
{
	assert_true(off >= 0);
	put(im, addr + (uint64_t)off, &v, 4);
}

static uint64_t object(struct image *im, size_t size, uint64_t type)
{
	uint64_t a = alloc(im, size);

	put64(im, a, im->off.object_type, type);
	return a;
}

static uint64_t make_type(struct image *im, const char *name, uint64_t flags)
{
	uint64_t t = object(im, 1024, TYPE_TYPE), s = alloc(im, strlen(name) + 1);

	put(im, s, name, strlen(name) + 1);
	put64(im, t, im->lo->type_name, s);
	put64(im, t, im->lo->type_basicsize, 64);
	put64(im, t, im->lo->type_flags, flags);
	return t;
}

/* A compact str of len bytes (1-byte kind; ascii when it is). */
static uint64_t make_strn(struct image *im, const char *s, size_t n)
{
	int ascii = 1;
	uint64_t a;

	for (size_t i = 0; i < n; i++)
		ascii &= (unsigned char)s[i] < 0x80;
	a = object(im, (size_t)im->off.unicode_compact_data + n + 1, im->str_type);
	put64(im, a, im->off.unicode_length, n);
	put32(im, a, im->off.unicode_state, 1u << 2 | 1u << 5 | (uint32_t)ascii << 6);
	put(im, a + (uint64_t)(ascii ? im->off.unicode_ascii_data : im->off.unicode_compact_data),
	    s, n);
	return a;
}

static uint64_t make_str(struct image *im, const char *s)
{
	return make_strn(im, s, strlen(s));
}

/* A non-negative int of one 30-bit digit. */
static uint64_t make_int(struct image *im, uint32_t v)
{
	uint64_t a = object(im, 64, im->int_type);

	if (im->lo->long_tag >= 0)
		put64(im, a, im->lo->long_tag, v ? 1u << 3 : 1);
	else
		put64(im, a, im->lo->long_size, v ? 1 : 0);
	put32(im, a, im->lo->long_digits, v);
	return a;
}

/* A combined dict of n entries (at most 5), in the version's keys layout. */
static uint64_t make_dict(struct image *im, size_t n, const uint64_t *keys, const uint64_t *vals)
{
	const struct py_objects_layout *lo = im->lo;
	size_t esize = (size_t)lo->dk_entry_size;
	uint64_t d = object(im, 128, im->dict_type);
	uint64_t k = alloc(im, (size_t)lo->dk_indices + 8 + 8 * esize);
	uint8_t index_bytes[8];

	assert_true(n <= 5);
	put64(im, d, lo->dict_used, n);
	put64(im, d, lo->dict_keys, k);
	put64(im, d, lo->dict_values, 0);
	if (lo->dict_model == PY_DICT_LOG2) {
		put(im, k + (uint64_t)lo->dk_log2_size, &(uint8_t){ 3 }, 1);
		put(im, k + (uint64_t)lo->dk_log2_index_bytes, &(uint8_t){ 3 }, 1);
		put(im, k + (uint64_t)lo->dk_kind, &(uint8_t){ 0 }, 1);
	} else {
		put64(im, k, lo->dk_size, 8);
	}
	put64(im, k, lo->dk_nentries, n);
	memset(index_bytes, 0xff, sizeof(index_bytes));
	for (size_t i = 0; i < n; i++) {
		uint64_t e = k + (uint64_t)lo->dk_indices + 8 + i * esize;

		index_bytes[i] = (uint8_t)i;
		put64(im, e, 0, 0x5eed + i);
		put64(im, e, 8, keys[i]);
		put64(im, e, 16, vals[i]);
	}
	put(im, k + (uint64_t)lo->dk_indices, index_bytes, 8);
	return d;
}

/* A ContextVar whose hash folds to h (its low word; the high word 0). */
static uint64_t make_var(struct image *im, uint32_t h, uint64_t dflt)
{
	uint64_t v = object(im, 96, im->var_type);

	put64(im, v, im->lo->contextvar_default, dflt);
	put64(im, v, im->lo->contextvar_hash, h);
	if (im->lo->contextvar_cached >= 0)
		put64(im, v, im->lo->contextvar_cached, 0);
	return v;
}

/* A bitmap node of n (key, value) pairs placed at the bits of their hashes at shift. */
static uint64_t make_bitmap(struct image *im, size_t n, const uint32_t *bits, const uint64_t *keys,
			    const uint64_t *vals)
{
	uint64_t node = object(im, (size_t)im->lo->hamt_bitmap_array + 16 * n, im->bitmap_type);
	uint32_t bitmap = 0;

	for (size_t i = 0; i < n; i++) {
		assert_true(!i || bits[i] > bits[i - 1]);       /* in bit order, as CPython keeps them */
		bitmap |= 1u << bits[i];
		put64(im, node, im->lo->hamt_bitmap_array + (int32_t)(16 * i), keys[i]);
		put64(im, node, im->lo->hamt_bitmap_array + (int32_t)(16 * i + 8), vals[i]);
	}
	put64(im, node, im->lo->hamt_bitmap_size, 2 * n);
	put32(im, node, im->lo->hamt_bitmap_bitmap, bitmap);
	return node;
}

static uint64_t make_hamt(struct image *im, uint64_t root, int64_t count)
{
	uint64_t h = object(im, 64, im->hamt_type);

	put64(im, h, im->lo->hamt_root, root);
	put64(im, h, im->lo->hamt_count, (uint64_t)count);
	return h;
}

static uint64_t make_context(struct image *im, uint64_t hamt)
{
	uint64_t c = object(im, 64, im->context_type);

	put64(im, c, im->lo->context_vars, hamt);
	return c;
}

/* The thread state's context, its version and the state's id. */
static void set_thread(struct image *im, uint64_t ctx, uint64_t ver)
{
	put64(im, im->tstate, im->lo->tstate_context, ctx);
	if (im->lo->tstate_context_ver >= 0) {
		put64(im, im->tstate, im->lo->tstate_context_ver, ver);
		put64(im, im->tstate, im->lo->tstate_id, 7);
	}
}

/* The offsets a target of this minor version gets (3.13+: from its block). */
static void version_offsets(int minor, struct py_offsets *off, uint8_t *runtime)
{
	const struct py_offsets *b = py_offsets_builtin(minor);
	const struct py_debug_offsets_layout *l;

	if (b) {
		*off = *b;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		const struct debug_block *db = &debug_blocks[i];

		if (db->minor != minor || db->free_threaded)
			continue;
		memcpy(runtime, "xdebugpy", 8);
		for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
			memcpy(runtime + v->pos, &v->value, 8);
		l = py_debug_layout_of_block(minor, runtime, RUNTIME_LEN);
		assert_non_null(l);
		assert_int_equal(py_offsets_from_debug(l, runtime, (size_t)l->block_size, off), 0);
		return;
	}
	fail_msg("no layout for 3.%d", minor);
}

static void image_init(struct image *im, int minor)
{
	const struct py_objects_layout *lo;
	uint32_t heap;

	memset(im, 0, sizeof(*im));
	im->minor = minor;
	im->runtime = calloc(1, RUNTIME_LEN);
	im->obj = calloc(1, OBJ_LEN);
	assert_non_null(im->runtime);
	assert_non_null(im->obj);
	version_offsets(minor, &im->off, im->runtime);
	im->lo = lo = &im->off.objects;
	assert_true(lo->known);
	im->regions[0] = (struct mem_region){ RUNTIME_ADDR, im->runtime, RUNTIME_LEN };
	im->regions[1] = (struct mem_region){ OBJ_ADDR, im->obj, OBJ_LEN };
	im->next = 16;
	heap = lo->tpflags_heaptype;
	im->str_type = make_type(im, "str", lo->tpflags_unicode);
	im->int_type = make_type(im, "int", lo->tpflags_long);
	im->dict_type = make_type(im, "dict", lo->tpflags_dict);
	im->module_type = make_type(im, "module", 0);
	im->float_type = make_type(im, "float", 0);
	/* 3.8/3.9 name them without their module */
	im->context_type = make_type(im, minor <= 9 ? "Context" : "_contextvars.Context", 0);
	im->var_type = make_type(im, minor <= 9 ? "ContextVar" : "_contextvars.ContextVar", 0);
	im->hamt_type = make_type(im, "hamt", 0);
	im->bitmap_type = make_type(im, "hamt_bitmap_node", 0);
	im->array_type = make_type(im, "hamt_array_node", 0);
	im->collision_type = make_type(im, "hamt_collision_node", 0);
	(void)heap;
	/* the runtime's one interpreter (id 0) and its thread */
	im->interp = alloc(im, 0x2000);
	put64(im, im->interp, im->off.interp_id, 0);
	put64(im, im->interp, im->off.interp_next, 0);
	im->tstate = alloc(im, 0x1000);
	memcpy(im->runtime + im->off.runtime_interpreters_head, &im->interp, 8);
}

static void image_free(struct image *im)
{
	free(im->runtime);
	free(im->obj);
}

/* sys.modules = {"app": a module whose globals are names[i] = vals[i]} */
static void make_modules(struct image *im, size_t n, const char *const *names, const uint64_t *vals)
{
	uint64_t keys[5], mod, modules, k;

	assert_true(n <= 5);
	for (size_t i = 0; i < n; i++)
		keys[i] = make_str(im, names[i]);
	mod = object(im, 64, im->module_type);
	put64(im, mod, im->lo->module_dict, make_dict(im, n, keys, vals));
	k = make_str(im, "app");
	modules = make_dict(im, 1, &k, &mod);
	put64(im, im->interp, im->lo->interp_modules, modules);
}

struct reader {
	struct py_target t;
	struct target_mem mem;
	struct py_reader r;
	struct py_objects ob;
	struct py_contextvars cv;
};

static void reader_init(struct reader *rd, struct image *im)
{
	memset(rd, 0, sizeof(*rd));
	rd->t.pid = 1;
	rd->t.major = 3;
	rd->t.minor = im->minor;
	rd->t.runtime_addr = RUNTIME_ADDR;
	rd->t.offsets = im->off;
	mem_init_image(&rd->mem, im->regions, ARRAY_SIZE(im->regions));
	py_reader_init(&rd->r, &rd->mem, &rd->t);
	if (py_objects_init(&rd->ob, &rd->r))
		fail_msg("3.%d: objects not readable", im->minor);
	if (py_contextvars_init(&rd->cv, &rd->ob))
		fail_msg("3.%d: no contextvars layout", im->minor);
}

static void reader_release(struct reader *rd)
{
	py_contextvars_release(&rd->cv);
	py_objects_release(&rd->ob);
	py_reader_release(&rd->r);
	mem_release(&rd->mem);
}

/* The value of variable idx as thread im->tstate sees it now. */
static const char *value_of(struct reader *rd, struct image *im, int idx, struct py_ctxvalue *v)
{
	static struct py_ctxvalue all[PY_CTXVARS_MAX];

	assert_true((size_t)idx < rd->cv.nvars);
	py_context_values(&rd->cv, im->tstate, all, rd->cv.nvars);
	*v = all[idx];
	assert_int_equal(v->len, strlen(v->text));
	return v->text;
}

#define ASSERT_VALUE(rd, im, idx, kind_, text_) do { \
	struct py_ctxvalue v_; \
	const char *got_ = value_of(rd, im, idx, &v_); \
	if (strcmp(got_, text_) || v_.kind != (kind_)) \
		fail_msg("3.%d line %d: variable %d is '%s' (kind %d), expected '%s' (kind %d)", \
			 (im)->minor, __LINE__, idx, got_, v_.kind, text_, kind_); \
} while (0)

/*
 * A bitmap root of four variables: str, int, another type, and a str with
 * escape sequences (kept as its bytes); a fifth variable not in the context
 * (its default, then none), a global that is no ContextVar, and a name
 * that is no global.
 */
static void bitmap_one(int minor)
{
	static const char *const names[] = { "route", "count", "obj", "evil", "other" };
	struct image im;
	struct reader rd;
	uint64_t vars[5], gl[5], keys[4], vals[4], ctx;
	uint32_t bits[4] = { 1, 4, 9, 30 };
	int idx[8];

	image_init(&im, minor);
	vals[0] = make_str(&im, "/orders");
	vals[1] = make_int(&im, 42);
	vals[2] = object(&im, 32, im.float_type);
	vals[3] = make_str(&im, "\x1b[31mred\x1b[0m;\n");
	for (int i = 0; i < 4; i++)
		keys[i] = vars[i] = make_var(&im, bits[i] | 0x12340u << 5, 0);
	vars[4] = make_var(&im, 7, make_str(&im, "fallback"));
	memcpy(gl, vars, sizeof(gl));
	gl[4] = make_int(&im, 5);              /* "other": an int, no ContextVar */
	make_modules(&im, 5, names, gl);
	ctx = make_context(&im, make_hamt(&im, make_bitmap(&im, 4, bits, keys, vals), 4));
	set_thread(&im, ctx, 3);

	reader_init(&rd, &im);
	idx[0] = py_contextvars_add(&rd.cv, "app", "route", NULL);
	idx[1] = py_contextvars_add(&rd.cv, "app", "count", NULL);
	idx[2] = py_contextvars_add(&rd.cv, "app", "obj", NULL);
	idx[3] = py_contextvars_add(&rd.cv, "app", "evil", NULL);
	idx[4] = py_contextvars_add(&rd.cv, "app", "other", NULL);
	idx[5] = py_contextvars_add(&rd.cv, "app", "nosuch", NULL);
	idx[6] = py_contextvars_add(&rd.cv, "nomodule", "route", NULL);
	for (int i = 0; i < 7; i++)
		assert_int_equal(idx[i], i);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "/orders");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_INT, "42");
	ASSERT_VALUE(&rd, &im, 2, PY_CTXVALUE_OTHER, "<float>");
	ASSERT_VALUE(&rd, &im, 3, PY_CTXVALUE_STR, "\x1b[31mred\x1b[0m;\n");
	ASSERT_VALUE(&rd, &im, 4, PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	ASSERT_VALUE(&rd, &im, 5, PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	ASSERT_VALUE(&rd, &im, 6, PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	assert_int_equal(rd.cv.stats.unreadable, 0);
	reader_release(&rd);

	/* "other" a ContextVar with a default, not set in the context */
	gl[4] = vars[4];
	make_modules(&im, 5, names, gl);
	reader_init(&rd, &im);
	py_contextvars_add(&rd.cv, "app", "other", NULL);
	py_contextvars_add(&rd.cv, "app", "route", NULL);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "fallback");
	/* no context at all (the thread never entered one): defaults only */
	set_thread(&im, 0, 0);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "fallback");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	/* an empty HAMT: unset */
	set_thread(&im, make_context(&im, make_hamt(&im, make_bitmap(&im, 0, NULL, NULL, NULL), 0)), 4);
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	reader_release(&rd);
	image_free(&im);
}

/*
 * More than 16 variables: an array root (32 sub-nodes by the hash's low 5
 * bits), each sub-node a bitmap node at shift 5; two variables share the
 * low bits (one sub-node of two pairs). Each is found; one absent from the
 * context, whose slot in the array is empty, is unset.
 */
static void array_one(int minor)
{
	enum { N = 20 };
	static const char *const names[] = { "v0", "v7", "v19", "vshared", "absent" };
	struct image im;
	struct reader rd;
	uint64_t vars[N + 1], vals[N + 1], root, gl[5], sub[2], subv[2];
	uint32_t bits[2];
	char text[32], longstr[201], cut[PY_CTXVALUE_CHARS + 1];

	memset(longstr, 'x', sizeof(longstr) - 1);
	longstr[sizeof(longstr) - 1] = '\0';
	memset(cut, 'x', sizeof(cut) - 1);
	cut[sizeof(cut) - 1] = '\0';
	image_init(&im, minor);
	root = object(&im, (size_t)im.lo->hamt_array_count + 8, im.array_type);
	for (uint32_t i = 0; i < N; i++) {
		/* low 5 bits i; the next 5 bits pick the slot in the sub-node */
		uint32_t h = i | (i % 3 + 1) << 5;

		snprintf(text, sizeof(text), "value %u", i);
		vars[i] = make_var(&im, h, 0);
		vals[i] = make_str(&im, text);
		/* a latin-1 str (not ASCII: read the long way), one longer than the cap */
		if (i == 19)
			vals[i] = make_str(&im, "caf\xe9 19");
		if (i == 7)
			vals[i] = make_str(&im, longstr);
		bits[0] = (h >> 5) & 31;
		put64(&im, root, im.lo->hamt_array_array + (int32_t)(8 * i),
		      make_bitmap(&im, 1, bits, &vars[i], &vals[i]));
	}
	/* "vshared": low bits 3 like v3, in v3's sub-node at another slot */
	vars[N] = make_var(&im, 3 | 17u << 5, 0);
	vals[N] = make_str(&im, "shared");
	bits[0] = (3 % 3 + 1);
	bits[1] = 17;
	sub[0] = vars[3];
	sub[1] = vars[N];
	subv[0] = vals[3];
	subv[1] = vals[N];
	put64(&im, root, im.lo->hamt_array_array + 8 * 3, make_bitmap(&im, 2, bits, sub, subv));
	put64(&im, root, im.lo->hamt_array_count, N);
	gl[0] = vars[0];
	gl[1] = vars[7];
	gl[2] = vars[19];
	gl[3] = vars[N];
	gl[4] = make_var(&im, 25, 0);          /* slot 25 of the array is empty */
	make_modules(&im, 5, names, gl);
	set_thread(&im, make_context(&im, make_hamt(&im, root, N + 1)), 1);

	reader_init(&rd, &im);
	for (int i = 0; i < 5; i++)
		assert_int_equal(py_contextvars_add(&rd.cv, "app", names[i], NULL), i);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "value 0");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_STR, cut);
	ASSERT_VALUE(&rd, &im, 2, PY_CTXVALUE_STR, "caf\xc3\xa9 19");
	ASSERT_VALUE(&rd, &im, 3, PY_CTXVALUE_STR, "shared");
	ASSERT_VALUE(&rd, &im, 4, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	assert_int_equal(rd.cv.stats.unreadable, 0);
	reader_release(&rd);
	image_free(&im);
}

/*
 * Two variables of one hash: a collision node under the bitmap root's slot
 * (a NULL key, the node as its value); a third of that hash is not in it.
 */
static void collision_one(int minor)
{
	static const char *const names[] = { "a", "b", "c", "d" };
	struct image im;
	struct reader rd;
	uint64_t a, b, c, d, coll, keys[2], vals[2], gl[4];
	uint32_t h = 0x0badf00d & 0x7fffffff, bits[2];

	image_init(&im, minor);
	a = make_var(&im, h, 0);
	b = make_var(&im, h, 0);
	c = make_var(&im, h, 0);
	d = make_var(&im, 0x1f, 0);              /* beside them in the root */
	coll = object(&im, (size_t)im.lo->hamt_collision_array + 32, im.collision_type);
	put64(&im, coll, im.lo->hamt_collision_size, 4);
	put32(&im, coll, im.lo->hamt_collision_hash, h);
	put64(&im, coll, im.lo->hamt_collision_array, a);
	put64(&im, coll, im.lo->hamt_collision_array + 8, make_str(&im, "first"));
	put64(&im, coll, im.lo->hamt_collision_array + 16, b);
	put64(&im, coll, im.lo->hamt_collision_array + 24, make_str(&im, "second"));
	bits[0] = h & 31;
	bits[1] = 31;
	assert_true(bits[0] < 31);
	keys[0] = 0;
	vals[0] = coll;
	keys[1] = d;
	vals[1] = make_int(&im, 0);
	gl[0] = a;
	gl[1] = b;
	gl[2] = c;
	gl[3] = d;
	make_modules(&im, 4, names, gl);
	set_thread(&im, make_context(&im, make_hamt(&im, make_bitmap(&im, 2, bits, keys, vals), 3)), 1);

	reader_init(&rd, &im);
	for (int i = 0; i < 4; i++)
		assert_int_equal(py_contextvars_add(&rd.cv, "app", names[i], NULL), i);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "first");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_STR, "second");
	ASSERT_VALUE(&rd, &im, 2, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	ASSERT_VALUE(&rd, &im, 3, PY_CTXVALUE_INT, "0");
	reader_release(&rd);
	image_free(&im);
}

/* A path of depth bitmap nodes, each a sub-node at bit 0; the last holds (key, value). */
static uint64_t make_path(struct image *im, int depth, uint64_t key, uint64_t value)
{
	uint32_t bit = 0;
	uint64_t node = make_bitmap(im, 1, &bit, &key, &value), zero = 0;

	for (int i = 1; i < depth; i++) {
		uint64_t sub = node;

		node = make_bitmap(im, 1, &bit, &zero, &sub);
	}
	return node;
}

/*
 * What a hostile or torn target can hold: a path of sub-nodes deeper than
 * a HAMT can be, a node that is its own sub-node, a context whose ctx_vars
 * is a dict, a thread whose context is no Context, a node of a heap type
 * named like a node type. Each lookup fails, bounded; the value is
 * "<unreadable>", never another's.
 */
static void hostile_one(int minor)
{
	static const char *const names[] = { "v" };
	struct image im;
	struct reader rd;
	uint64_t var, val, node, loop, fake_type, fake, gl[1], out;
	uint32_t bits[1] = { 0 };
	int ret;

	image_init(&im, minor);
	var = make_var(&im, 0, 0);       /* hash 0: slot 0 at every level */
	val = make_str(&im, "deep");
	gl[0] = var;
	make_modules(&im, 1, names, gl);
	reader_init(&rd, &im);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "v", NULL), 0);
	/* seven levels, what 32 bits of hash give: found */
	set_thread(&im, make_context(&im, make_hamt(&im, make_path(&im, 7, var, val), 1)), 1);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "deep");
	/* eight, and nine: no HAMT is that deep */
	node = make_path(&im, 8, var, val);
	ret = py_hamt_find(&rd.cv, make_hamt(&im, node, 1), 0, var, &out);
	if (ret != -EFAULT && ret != -ELOOP)
		fail_msg("3.%d: a path of 8 nodes: %d", minor, ret);
	node = make_path(&im, 9, var, val);
	ret = py_hamt_find(&rd.cv, make_hamt(&im, node, 1), 0, var, &out);
	if (ret != -EFAULT && ret != -ELOOP)
		fail_msg("3.%d: a path of 9 nodes: %d", minor, ret);
	set_thread(&im, make_context(&im, make_hamt(&im, node, 1)), 2);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* a cycle: a node whose sub-node is itself */
	loop = object(&im, (size_t)im.lo->hamt_bitmap_array + 16, im.bitmap_type);
	put64(&im, loop, im.lo->hamt_bitmap_size, 2);
	put32(&im, loop, im.lo->hamt_bitmap_bitmap, 1);
	put64(&im, loop, im.lo->hamt_bitmap_array, 0);
	put64(&im, loop, im.lo->hamt_bitmap_array + 8, loop);
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, loop, 1), 0, var, &out), -ELOOP);
	set_thread(&im, make_context(&im, make_hamt(&im, loop, 1)), 3);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* ctx_vars a dict, not a HAMT */
	set_thread(&im, make_context(&im, make_dict(&im, 0, NULL, NULL)), 4);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* the thread's context is a str */
	set_thread(&im, make_str(&im, "not a context"), 5);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* a bitmap size that disagrees with its bitmap */
	fake = make_bitmap(&im, 1, bits, &var, &val);
	put64(&im, fake, im.lo->hamt_bitmap_size, 40);
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, fake, 1), 0, var, &out), -EFAULT);
	reader_release(&rd);

	/*
	 * A class named hamt_bitmap_node (a heap type) before the real type
	 * was ever seen: not taken for it, then or later.
	 */
	reader_init(&rd, &im);
	fake_type = make_type(&im, "hamt_bitmap_node", im.lo->tpflags_heaptype);
	fake = object(&im, (size_t)im.lo->hamt_bitmap_array + 16, fake_type);
	put64(&im, fake, im.lo->hamt_bitmap_size, 2);
	put32(&im, fake, im.lo->hamt_bitmap_bitmap, 1);
	put64(&im, fake, im.lo->hamt_bitmap_array, var);
	put64(&im, fake, im.lo->hamt_bitmap_array + 8, val);
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, fake, 1), 0, var, &out), -EFAULT);
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, node, 1), 0, var, &out) < 0, 1);
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, fake, 1), 0, var, &out), -EFAULT);
	/* a HAMT object of a negative count, an unmapped root */
	assert_int_equal(py_hamt_find(&rd.cv, make_hamt(&im, fake, -1), 0, var, &out), -EFAULT);
	assert_true(py_hamt_find(&rd.cv, make_hamt(&im, 0x7000000000ull, 1), 0, var, &out) < 0);
	reader_release(&rd);
	image_free(&im);
}

/*
 * The variable's own cache (GIL builds): its value for thread state id
 * tsid at context version tsver is what ContextVar.get() answers there, so
 * it is taken when it is the thread's; another version or state walks the
 * HAMT. The cache here holds another value than the HAMT, to tell them apart.
 */
static void cache_one(int minor)
{
	static const char *const names[] = { "route" };
	struct image im;
	struct reader rd;
	uint64_t var, val, cached, gl[1];
	uint32_t bits[1] = { 5 };

	image_init(&im, minor);
	if (im.lo->contextvar_cached < 0) {
		image_free(&im);
		return;
	}
	var = make_var(&im, 5, 0);
	val = make_str(&im, "/from-hamt");
	cached = make_str(&im, "/from-cache");
	put64(&im, var, im.lo->contextvar_cached, cached);
	put64(&im, var, im.lo->contextvar_cached_tsid, 7);
	put64(&im, var, im.lo->contextvar_cached_tsver, 11);
	gl[0] = var;
	make_modules(&im, 1, names, gl);
	set_thread(&im, make_context(&im, make_hamt(&im, make_bitmap(&im, 1, bits, &var, &val), 1)),
		   11);
	reader_init(&rd, &im);
	py_contextvars_add(&rd.cv, "app", "route", NULL);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "/from-cache");
	assert_int_equal(rd.cv.stats.cached, 1);
	put64(&im, im.tstate, im.lo->tstate_context_ver, 12);     /* a context switch since */
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "/from-hamt");
	put64(&im, im.tstate, im.lo->tstate_context_ver, 11);
	put64(&im, im.tstate, im.lo->tstate_id, 8);               /* another thread's cache */
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "/from-hamt");
	assert_int_equal(rd.cv.stats.cached, 1);
	assert_int_equal(rd.cv.stats.walked, 2);
	reader_release(&rd);
	image_free(&im);
}

#define ASSERT_IS(minor_, v_, kind_, text_) do { \
	if (strcmp((v_).text, text_) || (v_).kind != (kind_) || (v_).len != strlen(text_)) \
		fail_msg("3.%d line %d: '%s' (kind %d), expected '%s' (kind %d)", minor_, \
			 __LINE__, (v_).text, (v_).kind, text_, kind_); \
} while (0)

/*
 * A context object read by itself (py_context_values_in: a suspended
 * asyncio task's own context, while its thread runs another): its HAMT
 * answers, never a variable's cache, even one that is the thread's now
 * (same state id and context version) and holds another value; the thread
 * still sees its own. No context: unset, or the default; an object that
 * is no Context: unreadable, the default not given for it.
 */
static void context_object_one(int minor)
{
	static const char *const names[] = { "route", "tenant" };
	struct image im;
	struct reader rd;
	struct py_ctxvalue v[3];
	uint64_t route, tenant, task_val, thread_val, gl[2], task_ctx;
	uint32_t bits[1] = { 5 };

	image_init(&im, minor);
	route = make_var(&im, 5, 0);
	tenant = make_var(&im, 9, make_str(&im, "none"));
	task_val = make_str(&im, "/task");
	thread_val = make_str(&im, "/thread");
	gl[0] = route;
	gl[1] = tenant;
	make_modules(&im, 2, names, gl);
	task_ctx = make_context(&im, make_hamt(&im, make_bitmap(&im, 1, bits, &route, &task_val), 1));
	set_thread(&im, make_context(&im, make_hamt(&im, make_bitmap(&im, 1, bits, &route,
								     &thread_val), 1)), 11);
	if (im.lo->contextvar_cached >= 0) {
		put64(&im, route, im.lo->contextvar_cached, make_str(&im, "/thread-cache"));
		put64(&im, route, im.lo->contextvar_cached_tsid, 7);
		put64(&im, route, im.lo->contextvar_cached_tsver, 11);
	}
	reader_init(&rd, &im);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "route", NULL), 0);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "tenant", NULL), 1);
	py_context_values_in(&rd.cv, task_ctx, v, 3);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_STR, "/task");
	ASSERT_IS(minor, v[1], PY_CTXVALUE_STR, "none");
	ASSERT_IS(minor, v[2], PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	assert_int_equal(rd.cv.stats.cached, 0);
	assert_int_equal(rd.cv.stats.walked, 2);
	/* the thread, meanwhile, sees its own context (its cache where it has one) */
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR,
		     im.lo->contextvar_cached >= 0 ? "/thread-cache" : "/thread");
	/* no context: nothing set */
	py_context_values_in(&rd.cv, 0, v, 2);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_STR, "none");
	/* no Context (a str), misaligned, unmapped: unreadable, whatever the default */
	py_context_values_in(&rd.cv, make_str(&im, "not a context"), v, 2);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	py_context_values_in(&rd.cv, task_ctx + 4, v, 2);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	py_context_values_in(&rd.cv, 0x7000000000ull, v, 2);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	reader_release(&rd);
	image_free(&im);
}

/*
 * Nodes at the very end of a mapping, where a read of a whole node's
 * worth fails: read by their head, then slot by slot. A bitmap root and an
 * array root, each the last bytes of the image.
 */
static void mapping_end_one(int minor)
{
	static const char *const names[] = { "a", "b" };
	struct image im;
	struct reader rd;
	uint64_t vars[2], vals[2], gl[2], node, arr, sub;
	uint32_t bits[2] = { 3, 20 }, bit5 = 0;
	size_t bsize, asize;

	image_init(&im, minor);
	vars[0] = make_var(&im, 3, 0);
	vars[1] = make_var(&im, 20, 0);
	vals[0] = make_str(&im, "end-a");
	vals[1] = make_str(&im, "end-b");
	memcpy(gl, vars, sizeof(gl));
	make_modules(&im, 2, names, gl);
	/* the bitmap root: the image's last bytes */
	bsize = (size_t)im.lo->hamt_bitmap_array + 32;
	node = OBJ_ADDR + OBJ_LEN - bsize;
	put64(&im, node, im.off.object_type, im.bitmap_type);
	put64(&im, node, im.lo->hamt_bitmap_size, 4);
	put32(&im, node, im.lo->hamt_bitmap_bitmap, 1u << 3 | 1u << 20);
	for (int i = 0; i < 2; i++) {
		put64(&im, node, im.lo->hamt_bitmap_array + 16 * i, vars[i]);
		put64(&im, node, im.lo->hamt_bitmap_array + 16 * i + 8, vals[i]);
	}
	(void)bits;
	set_thread(&im, make_context(&im, make_hamt(&im, node, 2)), 1);
	reader_init(&rd, &im);
	py_contextvars_add(&rd.cv, "app", "a", NULL);
	py_contextvars_add(&rd.cv, "app", "b", NULL);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "end-a");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_STR, "end-b");
	reader_release(&rd);
	/* an array root just below it, its slots 3 and 20 bitmap nodes of one pair */
	asize = (size_t)im.lo->hamt_array_count + 8;
	arr = node - asize;
	memset(im.obj + (arr - OBJ_ADDR), 0, asize);
	put64(&im, arr, im.off.object_type, im.array_type);
	put64(&im, arr, im.lo->hamt_array_count, 2);
	sub = make_bitmap(&im, 1, &bit5, &vars[0], &vals[0]);
	put64(&im, arr, im.lo->hamt_array_array + 8 * 3, sub);
	sub = make_bitmap(&im, 1, &bit5, &vars[1], &vals[1]);
	put64(&im, arr, im.lo->hamt_array_array + 8 * 20, sub);
	set_thread(&im, make_context(&im, make_hamt(&im, arr, 2)), 2);
	reader_init(&rd, &im);
	py_contextvars_add(&rd.cv, "app", "a", NULL);
	py_contextvars_add(&rd.cv, "app", "b", NULL);
	ASSERT_VALUE(&rd, &im, 0, PY_CTXVALUE_STR, "end-a");
	ASSERT_VALUE(&rd, &im, 1, PY_CTXVALUE_STR, "end-b");
	reader_release(&rd);
	image_free(&im);
}

/* An int of n digits (least significant first) in the version's layout; negative: its sign. */
static uint64_t make_long(struct image *im, const uint32_t *digits, size_t n, int negative)
{
	uint64_t a = object(im, 64, im->int_type);

	if (im->lo->long_tag >= 0)
		put64(im, a, im->lo->long_tag, n ? ((uint64_t)n << 3) | (negative ? 2u : 0u) : 1);
	else
		put64(im, a, im->lo->long_size, negative ? (uint64_t)-(int64_t)n : n);
	for (size_t i = 0; i < n; i++)
		put32(im, a + 4 * i, im->lo->long_digits, digits[i]);
	return a;
}

/* The digits of hi:lo in base 2^shift. */
static size_t split_digits(uint64_t hi, uint64_t lo, unsigned shift, uint32_t *out)
{
	size_t n = 0;

	while (hi || lo) {
		out[n++] = (uint32_t)(lo & ((1u << shift) - 1));
		lo = (lo >> shift) | (hi << (64 - shift));
		hi >>= shift;
	}
	return n;
}

/*
 * Ints of 64 to 128 bits (OpenTelemetry's span and trace ids: python/otel.h)
 * and an empty dict (Context(), every empty dict: Py_EMPTY_KEYS) in each
 * version's layout.
 */
static void ints_and_empty_one(int minor)
{
	struct image im;
	struct reader rd;
	uint32_t d[8];
	unsigned shift;
	uint64_t hi, lo, big, neg, wide, i63, i64, empty, zeroed, k;
	int64_t v;
	struct py_kv kv[4];
	size_t n;

	image_init(&im, minor);
	shift = (unsigned)im.lo->long_shift;
	big = make_long(&im, d, split_digits(0x0123456789abcdefull, 0xfedcba9876543210ull, shift, d), 0);
	neg = make_long(&im, d, split_digits(0, 5, shift, d), 1);
	{
		/* 2^128: one bit past */
		uint32_t w[6] = { 0 };
		size_t nd = 128 / shift + 1;

		w[nd - 1] = 1u << (128 % shift);
		wide = make_long(&im, w, nd, 0);
	}
	i63 = make_long(&im, d, split_digits(0, (uint64_t)INT64_MAX, shift, d), 0);
	i64 = make_long(&im, d, split_digits(0, 1ull << 63, shift, d), 0);
	/*
	 * Py_EMPTY_KEYS: no entries, 8 index bytes DKIX_EMPTY, and size 1
	 * (before 3.11) or log2 size 0, unicode keys, index bytes' log 0
	 * (3.11-3.13) or 3 (3.14+)
	 */
	empty = object(&im, 128, im.dict_type);
	k = alloc(&im, (size_t)im.lo->dk_indices + 16);
	put64(&im, empty, im.lo->dict_used, 0);
	put64(&im, empty, im.lo->dict_keys, k);
	put64(&im, empty, im.lo->dict_values, 0);
	if (im.lo->dict_model == PY_DICT_LOG2) {
		put(&im, k + (uint64_t)im.lo->dk_log2_index_bytes, &(uint8_t){ minor >= 14 ? 3 : 0 }, 1);
		put(&im, k + (uint64_t)im.lo->dk_kind, &(uint8_t){ 1 }, 1);
	} else {
		put64(&im, k, im.lo->dk_size, 1);
	}
	put64(&im, k, im.lo->dk_nentries, 0);
	put64(&im, k, im.lo->dk_indices, UINT64_MAX);
	/* the same dict over zeroed keys (freed or fresh memory): no empty dict */
	zeroed = object(&im, 128, im.dict_type);
	put64(&im, zeroed, im.lo->dict_keys, alloc(&im, (size_t)im.lo->dk_indices + 16));
	put64(&im, zeroed, im.lo->dict_values, 0);
	reader_init(&rd, &im);
	assert_int_equal(py_obj_uint128(&rd.ob, big, &hi, &lo), 0);
	assert_true(hi == 0x0123456789abcdefull && lo == 0xfedcba9876543210ull);
	assert_int_equal(py_obj_uint128(&rd.ob, neg, &hi, &lo), -ERANGE);
	assert_int_equal(py_obj_uint128(&rd.ob, wide, &hi, &lo), -ERANGE);
	assert_int_equal(py_obj_long(&rd.ob, big, &v), -ERANGE);
	assert_int_equal(py_obj_long(&rd.ob, i63, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(py_obj_long(&rd.ob, i64, &v), -ERANGE);
	assert_int_equal(py_obj_uint128(&rd.ob, i64, &hi, &lo), 0);
	assert_true(hi == 0 && lo == 1ull << 63);
	assert_int_equal(py_obj_long(&rd.ob, neg, &v), 0);
	assert_true(v == -5);
	n = 99;
	assert_int_equal(py_dict_items(&rd.ob, empty, kv, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(py_dict_get(&rd.ob, empty, "x", &hi), -ENOENT);
	assert_int_equal(py_dict_items(&rd.ob, zeroed, kv, 4, &n), -EFAULT);
	put64(&im, k, im.lo->dk_nentries, 1);     /* no empty dict any more: its keys are torn */
	assert_int_equal(py_dict_items(&rd.ob, empty, kv, 4, &n), -EFAULT);
	reader_release(&rd);
	image_free(&im);
}

/*
 * What another reader found at a sample's instant (the bpf program:
 * py_context_values_found): a value rendered from the head it copied then,
 * not from memory now; a value found by a walk kept only if the context
 * and HAMT types read with it are theirs, one from the variable's cache
 * whatever they were; not set gives the default or <unset>; a variable
 * that reader did not know yet, or that is no ContextVar, <no variable>;
 * a failed read <unreadable>. The variable's object and hash, and the node
 * types learnt, as that reader is told them.
 */
static void found_one(int minor)
{
	static const char *const names[] = { "route", "other", "bare" };
	struct image im;
	struct reader rd;
	uint64_t gl[3], now, then, types[3], var;
	uint8_t head[PY_CTXVALUE_READ];
	struct py_ctx_found f[4];
	struct py_ctxvalue v[4];
	int32_t hash;

	image_init(&im, minor);
	gl[0] = make_var(&im, 5, 0);
	gl[1] = make_var(&im, 6, make_str(&im, "fallback"));
	gl[2] = make_var(&im, 9, 0);
	make_modules(&im, 3, names, gl);
	now = make_str(&im, "/now");
	then = make_str(&im, "/then");
	memcpy(head, im.obj + (then - OBJ_ADDR), sizeof(head));
	reader_init(&rd, &im);
	py_contextvars_add(&rd.cv, "app", "route", NULL);
	py_contextvars_add(&rd.cv, "app", "other", NULL);
	py_contextvars_add(&rd.cv, "app", "bare", NULL);
	py_contextvars_add(&rd.cv, "app", "nosuch", NULL);

	py_contextvars_var(&rd.cv, 0, &var, &hash);
	assert_true(var == gl[0] && hash == 5);
	py_contextvars_var(&rd.cv, 3, &var, &hash);
	assert_true(var == 0 && hash == 0);
	py_contextvars_node_types(&rd.cv, types);
	assert_true(!types[0] && !types[1] && !types[2]);
	assert_int_equal(py_contextvars_node_kind(&rd.cv, im.float_type), -EFAULT);
	assert_int_equal(py_contextvars_node_kind(&rd.cv, im.bitmap_type), PY_CTX_TYPE_BITMAP);
	assert_int_equal(py_contextvars_node_kind(&rd.cv, im.collision_type), PY_CTX_TYPE_COLLISION);
	py_contextvars_node_types(&rd.cv, types);
	assert_true(types[0] == im.bitmap_type && !types[1] && types[2] == im.collision_type);

	/* found by a walk, the head copied then: its text, not memory's now */
	memset(f, 0, sizeof(f));
	f[0] = (struct py_ctx_found){ 0, 0, now, head };
	f[1] = (struct py_ctx_found){ -ENOENT, 0, 0, NULL };
	f[2] = (struct py_ctx_found){ -ENOENT, 0, 0, NULL };
	f[3] = (struct py_ctx_found){ 0, 0, now, head };
	py_context_values_found(&rd.cv, im.context_type, im.hamt_type, f, v, 4);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_STR, "/then");
	ASSERT_IS(minor, v[1], PY_CTXVALUE_STR, "fallback");
	ASSERT_IS(minor, v[2], PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	ASSERT_IS(minor, v[3], PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	assert_int_equal(rd.cv.stats.walked, 1);
	/* an int is rendered from its copy too, not from memory now */
	{
		uint64_t inow = make_int(&im, 42), ithen = make_int(&im, 7);
		uint8_t ihead[PY_CTXVALUE_READ];

		memcpy(ihead, im.obj + (ithen - OBJ_ADDR), sizeof(ihead));
		f[0] = (struct py_ctx_found){ 0, 1, inow, ihead };
		py_context_values_found(&rd.cv, 0, 0, f, v, 1);
		ASSERT_IS(minor, v[0], PY_CTXVALUE_INT, "7");
		f[0] = (struct py_ctx_found){ 0, 0, now, head };
	}
	/* not set in a context that was no Context: unreadable, not the default */
	f[1] = (struct py_ctx_found){ -ENOENT, 0, 0, NULL };
	py_context_values_found(&rd.cv, im.hamt_type, im.hamt_type, f, v, 2);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* no context at all (ctx_type 0): its default */
	py_context_values_found(&rd.cv, 0, 0, f, v, 2);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_STR, "fallback");
	/* no head copied: read now */
	f[0].head = NULL;
	py_context_values_found(&rd.cv, im.context_type, im.hamt_type, f, v, 1);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_STR, "/now");
	/* a walk through a context that was no Context (or its HAMT no HAMT) */
	f[0].head = head;
	py_context_values_found(&rd.cv, im.hamt_type, im.hamt_type, f, v, 1);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	py_context_values_found(&rd.cv, im.context_type, im.str_type, f, v, 1);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	/* the variable's own cache: no context read, no types to check */
	f[0].cached = 1;
	py_context_values_found(&rd.cv, 0, 0, f, v, 1);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_STR, "/then");
	assert_int_equal(rd.cv.stats.cached, 2);     /* the int's, and this one */
	/* not known to that reader then; a read that failed there */
	f[0] = (struct py_ctx_found){ -ESRCH, 0, 0, NULL };
	f[1] = (struct py_ctx_found){ -EFAULT, 0, 0, NULL };
	py_context_values_found(&rd.cv, 0, 0, f, v, 2);
	ASSERT_IS(minor, v[0], PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	ASSERT_IS(minor, v[1], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	reader_release(&rd);
	image_free(&im);
}

static void every_version(void (*fn)(int))
{
	for (int minor = 8; minor <= 15; minor++)
		fn(minor);
}

static void test_bitmap_node(void **state) { (void)state; every_version(bitmap_one); }
static void test_array_node(void **state) { (void)state; every_version(array_one); }
static void test_collision_node(void **state) { (void)state; every_version(collision_one); }
static void test_hostile(void **state) { (void)state; every_version(hostile_one); }
static void test_variable_cache(void **state) { (void)state; every_version(cache_one); }
static void test_mapping_end(void **state) { (void)state; every_version(mapping_end_one); }
static void test_context_object(void **state) { (void)state; every_version(context_object_one); }
static void test_ints_and_empty_dicts(void **state) { (void)state; every_version(ints_and_empty_one); }
static void test_found_elsewhere(void **state) { (void)state; every_version(found_one); }

/* The layouts exist for every version, and the names a label may give are checked. */
static void test_layouts_and_names(void **state)
{
	struct image im;
	struct reader rd;
	char long_name[64];

	(void)state;
	for (int minor = 8; minor <= 15; minor++) {
		image_init(&im, minor);
		reader_init(&rd, &im);
		reader_release(&rd);
		image_free(&im);
	}
	image_init(&im, 12);
	reader_init(&rd, &im);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(py_contextvars_add(&rd.cv, "app", long_name, NULL), -EINVAL);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "with space", NULL), -EINVAL);
	assert_int_equal(py_contextvars_add(&rd.cv, "", "x", NULL), -EINVAL);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "caf\xc3\xa9", NULL), -EINVAL);
	for (int i = 0; i < PY_CTXVARS_MAX; i++)
		assert_int_equal(py_contextvars_add(&rd.cv, "app", "x", NULL), i);
	assert_int_equal(py_contextvars_add(&rd.cv, "app", "x", NULL), -E2BIG);
	/* the fold of a 64-bit hash (Python/hamt.c: hamt_hash) */
	assert_int_equal(py_hamt_hash(5), 5);
	assert_int_equal(py_hamt_hash((int64_t)0x0000000100000001ll), 0);
	assert_int_equal(py_hamt_hash(-1), 0);
	assert_int_equal(py_hamt_hash((int64_t)0xffffffff00000000ull), -2);
	reader_release(&rd);
	image_free(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts_and_names),
		cmocka_unit_test(test_bitmap_node),
		cmocka_unit_test(test_array_node),
		cmocka_unit_test(test_collision_node),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_variable_cache),
		cmocka_unit_test(test_mapping_end),
		cmocka_unit_test(test_context_object),
		cmocka_unit_test(test_ints_and_empty_dicts),
		cmocka_unit_test(test_found_elsewhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
