/*
 * Unit tests of the reader on free-threaded builds (3.13t-3.15t), which no
 * machine here can run: a target's memory is laid out as CPython lays it
 * out, from the _Py_DebugOffsets block each build publishes and the struct
 * facts of its own headers (debug_blocks.h, generated from those headers
 * compiled with Py_GIL_DISABLED), never from framewalk's tables. Then
 * discovery's layout choice, py_offsets_from_debug and the reader walk it:
 * thread list, frames (innermost included), code objects with 16-byte
 * longer object headers, tagged executables, and (3.14t+) a thread running
 * its own copy of the bytecode; then the objects beside the frames: the
 * threading module's table of threads through sys.modules (Python's thread
 * names) and a thread's exception state. The GIL builds' blocks run
 * through the same tests as a control.
 */
#include <inttypes.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd/cmd.h"
#include "python/discover.h"
#include "python/excstate.h"
#include "python/reader.h"
#include "python/thread_names.h"
#include "target/memory.h"
#include "debug_blocks.h"
#include "linetable_vectors.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { R_RUNTIME, R_INTERP, R_TSTATE, R_FRAME, R_CODE, R_STR, R_BYTES, R_TLBC, R_OBJ, R_COUNT };
#define REGION_LEN 0x10000
#define REGION_ADDR(i) (0x10000000ull * ((uint64_t)(i) + 1))
#define CODE_TYPE 0x7f00c0de0000ull
#define STR_TYPE 0x7f0057720000ull

struct image {
	uint8_t *data[R_COUNT];
	struct mem_region regions[R_COUNT];
	const struct debug_block *db;
};

/* A value of the block (a struct offset) or of the facts, by name; -1 absent. */
static int64_t blockval(const struct debug_block *db, const char *name)
{
	for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
		if (!strcmp(v->name, name))
			return (int64_t)v->value;
	for (const struct debug_block_value *v = db->facts; v->name; v++)
		if (!strcmp(v->name, name))
			return (int64_t)v->value;
	return -1;
}

static int64_t need(const struct debug_block *db, const char *name)
{
	int64_t v = blockval(db, name);

	if (v < 0)
		fail_msg("%s: no %s", db->source, name);
	return v;
}

static uint64_t at(int reg, size_t off)
{
	return REGION_ADDR(reg) + off;
}

static void put(struct image *im, int reg, size_t off, const void *v, size_t n)
{
	assert_true(off + n <= REGION_LEN);
	memcpy(im->data[reg] + off, v, n);
}

static void put64(struct image *im, int reg, size_t off, uint64_t v)
{
	put(im, reg, off, &v, 8);
}

static void put32(struct image *im, int reg, size_t off, uint32_t v)
{
	put(im, reg, off, &v, 4);
}

/* A compact ASCII str at slot. */
static uint64_t make_str(struct image *im, int slot, const char *s)
{
	const struct debug_block *db = im->db;
	size_t off = (size_t)slot * 0x100, n = strlen(s);
	uint32_t state = 1 | 1u << 2 | 1u << 5 | 1u << 6;   /* interned, 1-byte, compact, ascii */

	put64(im, R_STR, off + (size_t)need(db, "object_type"), STR_TYPE);
	put64(im, R_STR, off + (size_t)need(db, "unicode_length"), n);
	put32(im, R_STR, off + (size_t)need(db, "unicode_state"), state);
	put(im, R_STR, off + (size_t)need(db, "unicode_asciiobject_size"), s, n + 1);
	return at(R_STR, off);
}

static uint64_t make_bytes(struct image *im, int slot, const uint8_t *b, size_t n)
{
	const struct debug_block *db = im->db;
	size_t off = (size_t)slot * 0x200;

	assert_true(n < 0x200 - 64);
	put64(im, R_BYTES, off + (size_t)need(db, "bytes_size"), n);
	put(im, R_BYTES, off + (size_t)need(db, "bytes_data"), b, n);
	return at(R_BYTES, off);
}

/* A real line table of the build's minor version (the location table of 3.11+). */
static const struct lt_vector *vector(int minor, int skip)
{
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "3.%d.", minor);
	for (size_t i = 0; i < ARRAY_SIZE(lt_vectors); i++)
		if (!strncmp(lt_vectors[i].name, prefix, strlen(prefix)) &&
		    lt_vectors[i].table_len < 0x200 - 64 && lt_vectors[i].n_units > 8 && skip-- == 0)
			return &lt_vectors[i];
	fail_msg("no line table for 3.%d", minor);
	return NULL;
}

struct code {
	uint64_t addr;
	const struct lt_vector *v;
	uint64_t copies[3];          /* entry i of co_tlbc (3.14t+), 0 the code's own */
};

static struct code make_code(struct image *im, int slot, const char *name, const char *file,
			     const struct lt_vector *v)
{
	const struct debug_block *db = im->db;
	size_t off = (size_t)slot * 0x400, adaptive = (size_t)need(db, "code_co_code_adaptive");
	struct code c = { at(R_CODE, off), v, { 0 } };

	put64(im, R_CODE, off + (size_t)need(db, "object_type"), CODE_TYPE);
	put64(im, R_CODE, off + (size_t)need(db, "st.varobject_size"), v->n_units);
	put64(im, R_CODE, off + (size_t)need(db, "code_filename"), make_str(im, 2 * slot + 1, file));
	put64(im, R_CODE, off + (size_t)need(db, "code_name"), make_str(im, 2 * slot, name));
	put64(im, R_CODE, off + (size_t)need(db, "code_qualname"), at(R_STR, (size_t)(2 * slot) * 0x100));
	put64(im, R_CODE, off + (size_t)need(db, "code_linetable"),
	      make_bytes(im, slot, v->table, v->table_len));
	put32(im, R_CODE, off + (size_t)need(db, "code_firstlineno"), (uint32_t)v->firstlineno);
	assert_true(adaptive + 2 * v->n_units < 0x400);
	c.copies[0] = c.addr + adaptive;
	/* free-threaded 3.14+: co_tlbc, a _PyCodeArray of three copies */
	if (blockval(db, "code_tlbc") > 0) {
		size_t arr = (size_t)slot * 0x1000, n = 3;

		put64(im, R_CODE, off + (size_t)need(db, "code_tlbc"), at(R_TLBC, arr));
		put64(im, R_TLBC, arr + (size_t)need(db, "st.codearray_size"), n);
		for (size_t i = 0; i < n; i++) {
			if (i)
				c.copies[i] = at(R_TLBC, arr + 0x400 * i);
			put64(im, R_TLBC, arr + (size_t)need(db, "st.codearray_entries") + 8 * i,
			      c.copies[i]);
		}
	}
	return c;
}

/* A frame at slot running unit of code c on its thread's copy tlbc; prev its caller. */
static uint64_t make_frame(struct image *im, int slot, const struct code *c, size_t unit,
			   int tlbc, uint64_t prev)
{
	const struct debug_block *db = im->db;
	size_t off = (size_t)slot * 0x100;
	int64_t tag = blockval(db, "val.stackref_tag_bits");

	put64(im, R_FRAME, off + (size_t)need(db, "frame_previous"), prev);
	if (!c) {
		/* the C-stack shim an eval call begins with */
		put(im, R_FRAME, off + (size_t)need(db, "frame_owner"),
		    &(uint8_t){ (uint8_t)need(db, "val.owner_shim") }, 1);
		return at(R_FRAME, off);
	}
	/* 3.14+: a _PyStackRef; a deferred reference has its low tag bit set */
	put64(im, R_FRAME, off + (size_t)need(db, "frame_executable"),
	      c->addr | (tag > 0 && slot % 2 ? 1 : 0));
	put64(im, R_FRAME, off + (size_t)need(db, "frame_instr_ptr"), c->copies[tlbc] + 2 * unit);
	if (blockval(db, "frame_tlbc_index") > 0)
		put32(im, R_FRAME, off + (size_t)need(db, "frame_tlbc_index"), (uint32_t)tlbc);
	return at(R_FRAME, off);
}

static void make_tstate(struct image *im, int slot, uint64_t frame, uint64_t next, int tid)
{
	const struct debug_block *db = im->db;
	size_t off = (size_t)slot * 0x1000;

	put64(im, R_TSTATE, off + (size_t)need(db, "tstate_next"), next);
	put64(im, R_TSTATE, off + (size_t)need(db, "tstate_interp"), at(R_INTERP, 0));
	put64(im, R_TSTATE, off + (size_t)need(db, "tstate_current_frame"), frame);
	put64(im, R_TSTATE, off + (size_t)need(db, "tstate_thread_id"), 0x7f0000001000ull + (uint64_t)slot);
	put64(im, R_TSTATE, off + (size_t)need(db, "tstate_native_thread_id"), (uint64_t)tid);
}

static void image_init(struct image *im, const struct debug_block *db)
{
	memset(im, 0, sizeof(*im));
	im->db = db;
	for (int i = 0; i < R_COUNT; i++) {
		im->data[i] = calloc(1, REGION_LEN);
		assert_non_null(im->data[i]);
		im->regions[i] = (struct mem_region){ REGION_ADDR(i), im->data[i], REGION_LEN };
	}
	/* _PyRuntime starts with the block: the cookie, then the values */
	memcpy(im->data[R_RUNTIME], "xdebugpy", 8);
	for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
		put64(im, R_RUNTIME, (size_t)v->pos, v->value);
	put64(im, R_RUNTIME, (size_t)need(db, "runtime_interpreters_head"), at(R_INTERP, 0));
}

static void image_free(struct image *im)
{
	for (int i = 0; i < R_COUNT; i++)
		free(im->data[i]);
}

/* The target as discovery makes it of the image's block. */
static int target_of(struct image *im, struct py_target *t)
{
	const struct py_debug_offsets_layout *l;

	memset(t, 0, sizeof(*t));
	t->pid = 1;
	t->major = 3;
	t->minor = im->db->minor;
	t->runtime_addr = REGION_ADDR(R_RUNTIME);
	t->code_type_addr = CODE_TYPE;
	l = py_debug_layout_of_block(t->minor, im->data[R_RUNTIME], REGION_LEN);
	if (!l)
		return -ENOTSUP;
	return py_offsets_from_debug(l, im->data[R_RUNTIME], (size_t)l->block_size, &t->offsets);
}

struct expect {
	const char *name, *file;
	int line;
};

static void assert_stack(struct py_reader *r, const struct py_thread_info *t, const char *what,
			 const struct expect *e, size_t n)
{
	struct py_frame_info frames[16];
	size_t depth = 0;
	int ret = py_reader_stack(r, t, frames, ARRAY_SIZE(frames), &depth);

	if (ret || depth != n)
		fail_msg("%s: ret %d, depth %zu (expected %zu)", what, ret, depth, n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(frames[i].code->name, e[i].name) || strcmp(frames[i].code->file, e[i].file) ||
		    frames[i].line != e[i].line)
			fail_msg("%s frame %zu: %s (%s:%d), expected %s (%s:%d)", what, i,
				 frames[i].code->name, frames[i].code->file, frames[i].line,
				 e[i].name, e[i].file, e[i].line);
	}
}

/*
 * Two threads: the first runs handle <- serve <- <module> on the code's own
 * bytecode; the second runs handle on its own copy (3.14t+: entry 2 of
 * co_tlbc) under serve on copy 1, a third thread is idle.
 */
static void walk_one(const struct debug_block *db)
{
	struct image im;
	struct py_target t;
	struct target_mem mem;
	struct py_reader r;
	struct py_thread_info threads[8];
	size_t nthreads = 0;
	const struct lt_vector *vh = vector(db->minor, 0), *vs = vector(db->minor, 1),
		*vm = vector(db->minor, 2);
	int tl = blockval(db, "code_tlbc") > 0;   /* threads' own bytecode copies */
	struct code handle, serve, mod;
	uint64_t shim1, shim2, f[5];
	size_t uh = vh->n_units / 2, us = vs->n_units - 1, um = 1, uh2 = vh->n_units - 2;
	int ret;

	image_init(&im, db);
	handle = make_code(&im, 0, "Handler.handle", "/srv/app/handler.py", vh);
	serve = make_code(&im, 1, "serve", "/srv/app/server.py", vs);
	mod = make_code(&im, 2, "<module>", "/srv/app/main.py", vm);
	shim1 = make_frame(&im, 9, NULL, 0, 0, 0);
	f[2] = make_frame(&im, 2, &mod, um, 0, shim1);
	f[1] = make_frame(&im, 1, &serve, us, 0, f[2]);
	f[0] = make_frame(&im, 0, &handle, uh, 0, f[1]);
	shim2 = make_frame(&im, 10, NULL, 0, 0, 0);
	f[4] = make_frame(&im, 4, &serve, us, tl ? 1 : 0, shim2);
	f[3] = make_frame(&im, 3, &handle, uh2, tl ? 2 : 0, f[4]);
	make_tstate(&im, 2, 0, 0, 103);
	make_tstate(&im, 1, f[3], at(R_TSTATE, 2 * 0x1000), 102);
	make_tstate(&im, 0, f[0], at(R_TSTATE, 0x1000), 101);
	put64(&im, R_INTERP, (size_t)need(db, "interp_threads_head"), at(R_TSTATE, 0));

	ret = target_of(&im, &t);
	if (ret)
		fail_msg("%s: block rejected: %d", db->source, ret);
	assert_int_equal(t.offsets.free_threaded, db->free_threaded);
	mem_init_image(&mem, im.regions, R_COUNT);
	py_reader_init(&r, &mem, &t);
	ret = py_reader_threads(&r, threads, ARRAY_SIZE(threads), &nthreads);
	if (ret || nthreads != 3)
		fail_msg("%s: threads: ret %d, %zu", db->source, ret, nthreads);
	assert_int_equal(threads[0].tid, 101);
	assert_int_equal(threads[1].tid, 102);
	assert_int_equal(threads[2].tid, 103);
	assert_int_equal(threads[2].frame, 0);
	/* more states than the caller takes: the newest read, the rest counted */
	ret = py_reader_threads(&r, threads, 2, &nthreads);
	if (ret || nthreads != 2)
		fail_msg("%s: capped threads: ret %d, %zu", db->source, ret, nthreads);
	assert_int_equal(threads[0].tid, 101);
	assert_int_equal(threads[1].tid, 102);
	assert_int_equal(r.threads_listed, 3);
	assert_int_equal(r.stats.threads_capped, 1);
	assert_int_equal(r.stats.threads_listed_most, 3);
	ret = py_reader_threads(&r, threads, ARRAY_SIZE(threads), &nthreads);
	assert_int_equal(ret, 0);
	assert_int_equal(nthreads, 3);
	assert_int_equal(r.threads_listed, 3);
	{
		const struct expect main_chain[] = {
			{ "Handler.handle", "/srv/app/handler.py", vh->lines[uh] },
			{ "serve", "/srv/app/server.py", vs->lines[us] },
			{ "<module>", "/srv/app/main.py", vm->lines[um] },
		};
		const struct expect worker[] = {
			{ "Handler.handle", "/srv/app/handler.py", vh->lines[uh2] },
			{ "serve", "/srv/app/server.py", vs->lines[us] },
		};

		assert_stack(&r, &threads[0], db->source, main_chain, 3);
		assert_stack(&r, &threads[1], db->source, worker, 2);
		/* again, from the cached code objects and copies */
		assert_stack(&r, &threads[1], db->source, worker, 2);
		if (tl)
			assert_true(r.stats.tlbc_read >= 2);
		/* a copy the code's array does not have: the frame stays, its line unknown */
		put32(&im, R_FRAME, 3 * 0x100 + (size_t)blockval(db, "frame_tlbc_index"), tl ? 7 : 0);
		if (tl) {
			const struct expect unknown[] = {
				{ "Handler.handle", "/srv/app/handler.py", 0 },
				{ "serve", "/srv/app/server.py", vs->lines[us] },
			};

			assert_stack(&r, &threads[1], db->source, unknown, 2);
		}
	}
	{
		/*
		 * handle freed and another code object made at its address
		 * (other strings, the same size): named from the new one at
		 * once, not a second later when the cache's recheck is due.
		 */
		const struct expect reused[] = {
			{ "reused", "/srv/app/reused.py", vh->lines[uh] },
			{ "serve", "/srv/app/server.py", vs->lines[us] },
			{ "<module>", "/srv/app/main.py", vm->lines[um] },
		};
		uint64_t name = make_str(&im, 20, "reused");

		put64(&im, R_CODE, (size_t)need(db, "code_name"), name);
		put64(&im, R_CODE, (size_t)need(db, "code_qualname"), name);
		put64(&im, R_CODE, (size_t)need(db, "code_filename"),
		      make_str(&im, 21, "/srv/app/reused.py"));
		put64(&im, R_FRAME, 3 * 0x100 + (size_t)blockval(db, "frame_tlbc_index"), 0);
		assert_stack(&r, &threads[0], db->source, reused, 3);
		assert_int_equal(r.stats.code_stale, 1);
	}
	py_reader_release(&r);
	{
		/*
		 * A subinterpreter (id 1, first in the runtime's list) with one
		 * thread running serve: every interpreter's threads are read,
		 * each with its interpreter's id, and labelled with it.
		 */
		uint64_t sub = at(R_INTERP, 0x1000);
		char label[32];

		put64(&im, R_INTERP, (size_t)need(db, "interp_id"), 0);
		put64(&im, R_INTERP, (size_t)need(db, "interp_next"), 0);
		put64(&im, R_INTERP, 0x1000 + (size_t)need(db, "interp_id"), 1);
		put64(&im, R_INTERP, 0x1000 + (size_t)need(db, "interp_next"), at(R_INTERP, 0));
		put64(&im, R_INTERP, 0x1000 + (size_t)need(db, "interp_threads_head"),
		      at(R_TSTATE, 3 * 0x1000));
		make_tstate(&im, 3, f[1], 0, 104);
		put64(&im, R_RUNTIME, (size_t)need(db, "runtime_interpreters_head"), sub);
		py_reader_init(&r, &mem, &t);
		ret = py_reader_threads(&r, threads, ARRAY_SIZE(threads), &nthreads);
		if (ret || nthreads != 4)
			fail_msg("%s: threads of two interpreters: ret %d, %zu", db->source, ret,
				 nthreads);
		assert_int_equal(threads[0].tid, 104);
		assert_int_equal(threads[0].interp_id, 1);
		assert_int_equal(threads[1].tid, 101);
		assert_int_equal(threads[1].interp_id, 0);
		py_reader_interp_label(&r, &threads[0], label, sizeof(label));
		assert_string_equal(label, " [interp 1]");
		py_reader_interp_label(&r, &threads[1], label, sizeof(label));
		assert_string_equal(label, " [interp main]");
		/* the main interpreter is the one with id 0, not the list's head */
		{
			uint64_t main_interp;

			assert_int_equal(py_reader_main_interp(&r, &main_interp), 0);
			assert_int_equal(main_interp, at(R_INTERP, 0));
		}
		py_reader_release(&r);
	}
	mem_release(&mem);
	image_free(&im);
}

static void test_every_build_walks(void **state)
{
	int ft = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		walk_one(&debug_blocks[i]);
		ft += debug_blocks[i].free_threaded;
	}
	assert_int_equal(ft, 3);   /* 3.13t, 3.14t, 3.15t */
}

/*
 * A code object freed since the sample, its header intact (the allocator
 * writes only its free-list link, over the count) and the str it named
 * freed too, then made again as another str at the same address: CI,
 * 2026-12-06, a 3.15 sample named "C\t1\t0\t1071\t<frozen os>\t_wrap_close\n",
 * a line the target was writing at its exit. The GIL builds' counts say
 * so (3.14+ keeps flags in the count word's top 16 bits): that sample is
 * dropped; a freed code whose str is freed too or immortal is still
 * named. A free-threaded object begins with its owner's thread id, not a
 * count: read as it is.
 */
static void freed_code_one(const struct debug_block *db)
{
	struct image im;
	struct py_target t;
	struct target_mem mem;
	struct py_reader r;
	struct py_thread_info threads[4];
	struct py_frame_info frames[8];
	const struct lt_vector *vh = vector(db->minor, 0), *vs = vector(db->minor, 1);
	struct code handle, serve;
	size_t nthreads, depth, uh = vh->n_units / 2, us = vs->n_units - 1;
	uint64_t shim, f0, f1, name;
	/* 3.14+: ob_flags in the top 16 bits (static, immortal), the count below */
	uint64_t flags = db->minor >= 14 ? 5ull << 48 : 0;
	uint64_t immortal = db->minor >= 14 ? flags | 3ull << 30 : UINT32_MAX;
	uint64_t link = 0x7f0012345670ull;
	const struct {
		const char *what;
		uint64_t code_count, name_count;
		const char *text;      /* what the name's address holds */
		int named;             /* 1: named "handle"; 0: dropped */
	} cases[] = {
		{ "live code, live name", flags | 3, 1, "handle", 1 },
		{ "freed code, its name freed too", link, link + 0x40, "handle", 1 },
		{ "freed code, immortal name", 0, immortal, "handle", 1 },
		{ "freed code, name reused", link, 1, "J0001x", 0 },
		{ "freed code (last in its list), name reused", 0, 2, "J0001x", 0 },
	};

	image_init(&im, db);
	handle = make_code(&im, 0, "handle", "/srv/app/handler.py", vh);
	serve = make_code(&im, 1, "serve", "/srv/app/server.py", vs);
	shim = make_frame(&im, 9, NULL, 0, 0, 0);
	f1 = make_frame(&im, 1, &serve, us, 0, shim);
	f0 = make_frame(&im, 0, &handle, uh, 0, f1);
	make_tstate(&im, 0, f0, 0, 101);
	put64(&im, R_INTERP, (size_t)need(db, "interp_threads_head"), at(R_TSTATE, 0));
	assert_int_equal(target_of(&im, &t), 0);
	mem_init_image(&mem, im.regions, R_COUNT);
	name = at(R_STR, 0);
	put64(&im, R_CODE, 0x400, 1);       /* serve and its strs live */
	put64(&im, R_STR, 2 * 0x100, 1);
	put64(&im, R_STR, 3 * 0x100, 1);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char what[128];
		int ret;

		if (db->free_threaded && i)
			break;
		snprintf(what, sizeof(what), "%s: %s", db->source, cases[i].what);
		/* free-threaded: the owner's thread id where a GIL build counts */
		put64(&im, R_CODE, 0, db->free_threaded ? 0x7f00aa001000ull : cases[i].code_count);
		put64(&im, R_STR, 0, db->free_threaded ? 0x7f00aa001000ull : cases[i].name_count);
		put(&im, R_STR, (size_t)need(db, "unicode_asciiobject_size"), cases[i].text,
		    strlen(cases[i].text) + 1);
		assert_int_equal(name, at(R_STR, 0));
		py_reader_init(&r, &mem, &t);
		ret = py_reader_threads(&r, threads, ARRAY_SIZE(threads), &nthreads);
		if (ret || nthreads != 1)
			fail_msg("%s: threads: ret %d, %zu", what, ret, nthreads);
		ret = py_reader_stack(&r, &threads[0], frames, ARRAY_SIZE(frames), &depth);
		if (cases[i].named) {
			if (ret || depth != 2 || strcmp(frames[0].code->name, "handle") ||
			    strcmp(frames[1].code->name, "serve"))
				fail_msg("%s: ret %d, depth %zu, innermost %s", what, ret, depth,
					 ret || !depth ? "-" : frames[0].code->name);
		} else if (!ret) {
			fail_msg("%s: read, depth %zu, innermost %s (expected the sample dropped)",
				 what, depth, depth ? frames[0].code->name : "-");
		}
		py_reader_release(&r);
	}
	mem_release(&mem);
	image_free(&im);
}

static void test_freed_code_with_its_name_reused(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++)
		freed_code_one(&debug_blocks[i]);
}

/*
 * The layout matters: a free-threaded block read with its GIL twin's plain
 * values (a code object's unit count 16 bytes before where it is) yields
 * no stack; the layout is chosen by the block's own byte.
 */
static void test_gil_layout_misreads_free_threaded(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		const struct debug_block *db = &debug_blocks[i];
		struct image im;
		struct py_target t;
		struct target_mem mem;
		struct py_reader r;
		struct py_thread_info th[2];
		struct py_frame_info frames[4];
		size_t n = 0, depth = 0;
		const struct py_debug_offsets_layout *gil = py_debug_layout(db->minor, 0);
		struct code c;
		uint64_t f0;

		if (!db->free_threaded)
			continue;
		assert_ptr_equal(py_debug_layout_of_block(db->minor, (const uint8_t *)"", 0), NULL);
		image_init(&im, db);
		assert_ptr_equal(py_debug_layout_of_block(db->minor, im.data[R_RUNTIME], REGION_LEN),
				 py_debug_layout(db->minor, 1));
		c = make_code(&im, 0, "f", "/f.py", vector(db->minor, 0));
		f0 = make_frame(&im, 0, &c, 1, 0, make_frame(&im, 9, NULL, 0, 0, 0));
		make_tstate(&im, 0, f0, 0, 101);
		put64(&im, R_INTERP, (size_t)need(db, "interp_threads_head"), at(R_TSTATE, 0));
		memset(&t, 0, sizeof(t));
		t.major = 3;
		t.minor = db->minor;
		t.runtime_addr = REGION_ADDR(R_RUNTIME);
		t.code_type_addr = CODE_TYPE;
		assert_int_equal(py_offsets_from_debug(gil, im.data[R_RUNTIME], (size_t)gil->block_size,
						       &t.offsets), 0);
		mem_init_image(&mem, im.regions, R_COUNT);
		py_reader_init(&r, &mem, &t);
		assert_int_equal(py_reader_threads(&r, th, 2, &n), 0);
		assert_int_equal(n, 1);
		assert_int_not_equal(py_reader_stack(&r, &th[0], frames, 4, &depth), 0);
		py_reader_release(&r);
		mem_release(&mem);
		image_free(&im);
	}
}

/* ---- objects: laid out in R_OBJ from the build's own struct facts ------------ */

#define TYPE_TYPE 0x7f0077770000ull

struct objs {
	struct image *im;
	size_t next;
	uint64_t str_type, int_type, dict_type, module_type;
};

static uint64_t obj_alloc(struct objs *o, size_t size, size_t below)
{
	size_t off = o->next + below;

	o->next += (below + size + 15) & ~(size_t)15;
	assert_true(o->next <= REGION_LEN);
	return at(R_OBJ, off);
}

static size_t obj_off(uint64_t addr)
{
	return (size_t)(addr - REGION_ADDR(R_OBJ));
}

static void obj_put64(struct objs *o, uint64_t obj, const char *field, uint64_t v)
{
	put64(o->im, R_OBJ, obj_off(obj) + (size_t)need(o->im->db, field), v);
}

static uint64_t make_type(struct objs *o, const char *name, uint64_t flags)
{
	uint64_t t = obj_alloc(o, 1024, 0), s = obj_alloc(o, strlen(name) + 1, 0);

	put(o->im, R_OBJ, obj_off(s), name, strlen(name) + 1);
	obj_put64(o, t, "object_type", TYPE_TYPE);
	obj_put64(o, t, "st.type_name", s);
	obj_put64(o, t, "st.type_basicsize", 64);
	obj_put64(o, t, "st.type_flags", flags);
	return t;
}

static uint64_t make_pystr(struct objs *o, const char *s)
{
	const struct debug_block *db = o->im->db;
	size_t n = strlen(s);
	uint64_t a = obj_alloc(o, (size_t)need(db, "unicode_asciiobject_size") + n + 1, 0);

	obj_put64(o, a, "object_type", o->str_type);
	obj_put64(o, a, "unicode_length", n);
	put32(o->im, R_OBJ, obj_off(a) + (size_t)need(db, "unicode_state"),
	      1 | 1u << 2 | 1u << 5 | 1u << 6);
	put(o->im, R_OBJ, obj_off(a) + (size_t)need(db, "unicode_asciiobject_size"), s, n + 1);
	return a;
}

/* A positive int of one 30-bit digit (3.12+: lv_tag = digits << 3). */
static uint64_t make_int(struct objs *o, uint32_t v)
{
	uint64_t a = obj_alloc(o, 64, 0);

	assert_true(v < (1u << 30));
	obj_put64(o, a, "object_type", o->int_type);
	obj_put64(o, a, "st.long_tag", 1u << 3);
	put32(o->im, R_OBJ, obj_off(a) + (size_t)need(o->im->db, "st.long_digits"), v);
	return a;
}

/* A combined dict of n (at most 5) entries, general keys: {hash, key, value}. */
static uint64_t make_dict(struct objs *o, size_t n, const uint64_t *keys, const uint64_t *vals)
{
	const struct debug_block *db = o->im->db;
	size_t indices = (size_t)need(db, "st.dk_indices"), esize = (size_t)need(db, "val.dk_entry_size");
	uint64_t d = obj_alloc(o, 128, 0), k = obj_alloc(o, indices + 8 + 8 * esize, 0);
	uint8_t log2 = 3, index_bytes[8];

	assert_true(n <= 5);
	obj_put64(o, d, "object_type", o->dict_type);
	obj_put64(o, d, "st.dict_used", n);
	obj_put64(o, d, "st.dict_keys", k);
	obj_put64(o, d, "st.dict_values", 0);
	put(o->im, R_OBJ, obj_off(k) + (size_t)need(db, "st.dk_log2_size"), &log2, 1);
	put(o->im, R_OBJ, obj_off(k) + (size_t)need(db, "st.dk_log2_index_bytes"), &log2, 1);
	put(o->im, R_OBJ, obj_off(k) + (size_t)need(db, "st.dk_kind"), &(uint8_t){ 0 }, 1);
	obj_put64(o, k, "st.dk_nentries", n);
	memset(index_bytes, 0xff, sizeof(index_bytes));
	for (size_t i = 0; i < n; i++) {
		size_t e = obj_off(k) + indices + 8 + i * esize;

		index_bytes[i] = (uint8_t)i;
		put64(o->im, R_OBJ, e, 0x5eed + i);
		put64(o->im, R_OBJ, e + 8, keys[i]);
		put64(o->im, R_OBJ, e + 16, vals[i]);
	}
	put(o->im, R_OBJ, obj_off(k) + indices, index_bytes, 8);
	return d;
}

/* A threading.Thread: its attributes in a dict the object manages (below it). */
static uint64_t make_thread(struct objs *o, uint64_t thread_type, const char *name, uint32_t tid)
{
	int64_t below = -blockval(o->im->db, "val.managed_dict_offset");
	uint64_t t, keys[2], vals[2];

	assert_true(below > 0 && below <= 64);
	t = obj_alloc(o, 64, (size_t)below);
	obj_put64(o, t, "object_type", thread_type);
	keys[0] = make_pystr(o, "_name");
	vals[0] = make_pystr(o, name);
	keys[1] = make_pystr(o, "_native_id");
	vals[1] = make_int(o, tid);
	put64(o->im, R_OBJ, obj_off(t) - (size_t)below, make_dict(o, 2, keys, vals));
	return t;
}

/*
 * threading's table read again a second after a read, then twice as long
 * after each read that found it unchanged, up to 8 s; a thread not in it
 * has it read again only while young.
 */
static void names_read_less_while_unchanged(struct py_objects *ob)
{
	static const struct { double at; int young; pid_t tid; uint64_t reads; } steps[] = {
		{ 0, 0, 101, 1 }, { 0.5, 0, 101, 1 }, { 1, 0, 101, 2 }, { 1.9, 0, 101, 2 },
		{ 2, 0, 101, 3 }, { 3.5, 0, 101, 3 }, { 4, 0, 101, 4 }, { 8, 0, 101, 5 },
		{ 16, 0, 101, 6 }, { 23, 0, 101, 6 }, { 24, 0, 101, 7 },
		{ 24.5, 0, 999, 7 }, { 24.6, 1, 999, 8 }, { 24.65, 1, 999, 8 },
	};
	/* ahead of the clock: a read is stamped when it ends, if that is later */
	uint64_t t0 = fw_now_ns() + 1000000000000ull;
	struct py_thread_names tn;

	py_thread_names_init(&tn, ob);
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		const char *name = py_thread_name(&tn, steps[i].tid, steps[i].young,
						  t0 + (uint64_t)(steps[i].at * 1e9));

		if (tn.reads != steps[i].reads || (steps[i].tid == 101) != (name != NULL))
			fail_msg("at %.2f s: %" PRIu64 " reads (want %" PRIu64 "), name %s", steps[i].at,
				 tn.reads, steps[i].reads, name ? name : "(none)");
	}
	py_thread_names_release(&tn);
}

/*
 * Python's names of the threads (threading._active through sys.modules, a
 * Thread's managed dict), and the exception a thread is handling.
 */
static void objects_one(const struct debug_block *db)
{
	struct image im;
	struct objs o = { &im, 0, 0, 0, 0, 0 };
	struct py_target t;
	struct target_mem mem;
	struct py_reader r;
	struct py_objects ob;
	struct py_thread_names tn;
	uint64_t threading, active, modules, thread_type, exc, item, k[3], v[3];
	const char *long_name = "reports-worker-with-a-long-name";
	int is_type = -1, ret;

	image_init(&im, db);
	o.str_type = make_type(&o, "str", (uint64_t)need(db, "val.tpflags_unicode_subclass"));
	o.int_type = make_type(&o, "int", (uint64_t)need(db, "val.tpflags_long_subclass"));
	o.dict_type = make_type(&o, "dict", (uint64_t)need(db, "val.tpflags_dict_subclass"));
	o.module_type = make_type(&o, "module", 0);
	thread_type = make_type(&o, "Thread", (uint64_t)need(db, "val.tpflags_managed_dict"));
	/* threading._active: {ident: Thread} */
	k[0] = make_int(&o, 0x1001);
	v[0] = make_thread(&o, thread_type, "MainThread", 101);
	k[1] = make_int(&o, 0x1002);
	v[1] = make_thread(&o, thread_type, long_name, 102);
	active = make_dict(&o, 2, k, v);
	k[0] = make_pystr(&o, "_active");
	threading = obj_alloc(&o, 64, 0);
	put64(&im, R_OBJ, obj_off(threading) + (size_t)need(db, "object_type"), o.module_type);
	put64(&im, R_OBJ, obj_off(threading) + (size_t)need(db, "st.module_dict"),
	      make_dict(&o, 1, k, &active));
	k[0] = make_pystr(&o, "sys");
	v[0] = obj_alloc(&o, 64, 0);
	k[1] = make_pystr(&o, "threading");
	v[1] = threading;
	modules = make_dict(&o, 2, k, v);
	put64(&im, R_INTERP, (size_t)need(db, "st.interp_modules"), modules);
	/* thread 101 handles a KeyError: exc_info -> an item whose value is it */
	exc = obj_alloc(&o, 64, 0);
	put64(&im, R_OBJ, obj_off(exc) + (size_t)need(db, "object_type"), make_type(&o, "KeyError", 0));
	item = obj_alloc(&o, 64, 0);
	put64(&im, R_OBJ, obj_off(item) + (size_t)need(db, "st.exc_item_value"), exc);
	put64(&im, R_OBJ, obj_off(item) + (size_t)need(db, "st.exc_item_previous"), 0);
	make_tstate(&im, 0, 0, 0, 101);
	put64(&im, R_TSTATE, (size_t)need(db, "st.tstate_exc_info"), item);
	put64(&im, R_TSTATE, (size_t)need(db, "st.tstate_curexc"), 0);
	put64(&im, R_INTERP, (size_t)need(db, "interp_threads_head"), at(R_TSTATE, 0));

	ret = target_of(&im, &t);
	if (ret)
		fail_msg("%s: block rejected: %d", db->source, ret);
	mem_init_image(&mem, im.regions, R_COUNT);
	py_reader_init(&r, &mem, &t);
	ret = py_objects_init(&ob, &r);
	if (ret)
		fail_msg("%s: objects not readable: %d", db->source, ret);
	py_thread_names_init(&tn, &ob);
	ret = py_thread_names_read(&tn, 1);
	if (ret)
		fail_msg("%s: thread names: %d", db->source, ret);
	assert_int_equal(tn.n, 2);
	assert_string_equal(py_thread_name(&tn, 101, 1, 1), "MainThread");
	assert_string_equal(py_thread_name(&tn, 102, 1, 1), long_name);
	names_read_less_while_unchanged(&ob);
	ret = py_exc_current(&ob, at(R_TSTATE, 0), &exc, &is_type);
	if (ret || !exc)
		fail_msg("%s: exception state: %d", db->source, ret);
	assert_int_equal(is_type, 0);
	assert_string_equal(py_exc_type_name(&ob, exc, is_type), "KeyError");
	py_thread_names_release(&tn);
	py_objects_release(&ob);
	py_reader_release(&r);
	mem_release(&mem);
	image_free(&im);
}

static void test_every_build_reads_objects(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++)
		objects_one(&debug_blocks[i]);
}

/* What record and top say of a view a build cannot give: exit code, and the message on stderr. */
static int check_views(const struct py_target *t, int mode, int async, char *err, size_t size)
{
	struct sampler_opts so;
	FILE *f = tmpfile();
	int saved = dup(2), code;
	size_t n;

	assert_non_null(f);
	memset(&so, 0, sizeof(so));
	so.mode = mode;
	so.async_tasks = async;
	fflush(stderr);
	dup2(fileno(f), 2);
	code = cmd_check_views("record", t, &so);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(err, 1, size - 1, f);
	err[n] = '\0';
	fclose(f);
	return code;
}

/* On a free-threaded 3.14t: gil mode and --async refused with one message and a hint; the others allowed. */
static void test_free_threaded_refusals(void **state)
{
	struct image im;
	struct py_target t;
	char err[1024];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		if (debug_blocks[i].minor != 14 || !debug_blocks[i].free_threaded)
			continue;
		image_init(&im, &debug_blocks[i]);
		assert_int_equal(target_of(&im, &t), 0);
		t.pid = 4242;
		snprintf(t.version, sizeof(t.version), "3.14.2t");
		assert_int_equal(check_views(&t, MODE_GIL, 0, err, sizeof(err)), FW_EXIT_UNSUPPORTED);
		assert_non_null(strstr(err, "process 4242: Python 3.14.2t is free-threaded: it has no GIL"));
		assert_non_null(strstr(err, "record it with --mode cpu or wall"));
		assert_int_equal(check_views(&t, MODE_CPU, 1, err, sizeof(err)), FW_EXIT_UNSUPPORTED);
		assert_non_null(strstr(err, "--async is not supported on free-threaded builds"));
		assert_int_equal(check_views(&t, MODE_EXCEPTION, 0, err, sizeof(err)), FW_EXIT_OK);
		assert_int_equal(check_views(&t, MODE_WALL, 0, err, sizeof(err)), FW_EXIT_OK);
		assert_string_equal(err, "");
		image_free(&im);
		return;
	}
	fail_msg("no 3.14t block");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_build_walks),
		cmocka_unit_test(test_freed_code_with_its_name_reused),
		cmocka_unit_test(test_every_build_reads_objects),
		cmocka_unit_test(test_free_threaded_refusals),
		cmocka_unit_test(test_gil_layout_misreads_free_threaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
