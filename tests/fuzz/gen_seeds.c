/*
 * Writes the structured seeds of fuzz_reader, fuzz_linetable, fuzz_bpfrec
 * and fuzz_pystate: for every version 3.8-3.15 a coherent memory image
 * (runtime -> interpreter -> thread states -> frames -> code objects ->
 * strings and real line tables) laid out with that version's offsets, in
 * the input format of reader_image.h (fuzz_bpfrec: after a ring-buffer
 * record of its first thread; fuzz_pystate: with exceptions raised and
 * handled). The fuzzer starts from these and mutates its way into every
 * corner the reader must survive. What a seed must agree with the code on
 * (the code object words a bpf record carries) comes from the core
 * library's own functions. Run by hand when the format changes:
 *   tests/fuzz/build.sh && build-fuzz/tests-fuzz/gen_seeds tests/fuzz/corpus
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpf/fwprof.h"
#include "python/discover.h"
#include "python/offsets.h"
#include "python/reader.h"

#include "../unit/debug_blocks.h"
#include "../unit/linetable_vectors.h"
#include "reader_image.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define REGION_MAX 0x4000
#define CODE_STRIDE 0x400
#define FRAME_STRIDE 0x100
#define TSTATE_STRIDE 0x400
#define STR_STRIDE 0x100
#define BYTES_STRIDE 0x200

enum { R_RUNTIME, R_INTERP, R_TSTATE, R_FRAME, R_CODE, R_STR, R_BYTES, R_PTHREAD };

struct image {
	uint8_t data[READER_NREGIONS][REGION_MAX];
	size_t len[READER_NREGIONS];
};

static void put(struct image *im, int reg, size_t off, const void *v, size_t n)
{
	if (off + n > REGION_MAX) {
		fprintf(stderr, "gen_seeds: region %d overflows at %zu\n", reg, off + n);
		exit(1);
	}
	memcpy(im->data[reg] + off, v, n);
	if (off + n > im->len[reg])
		im->len[reg] = off + n;
}

/* Make region reg at least end bytes long (a read of a whole struct must succeed). */
static void reserve(struct image *im, int reg, size_t end)
{
	uint8_t zero = 0;

	if (end > im->len[reg])
		put(im, reg, end - 1, &zero, 1);
}

static void put64(struct image *im, int reg, size_t off, int32_t field, uint64_t v)
{
	if (field == PYOFF_NONE)
		return;
	put(im, reg, off + (size_t)field, &v, 8);
}

static void put32(struct image *im, int reg, size_t off, int32_t field, uint32_t v)
{
	if (field == PYOFF_NONE)
		return;
	put(im, reg, off + (size_t)field, &v, 4);
}

static void put8(struct image *im, int reg, size_t off, int32_t field, uint8_t v)
{
	if (field == PYOFF_NONE)
		return;
	put(im, reg, off + (size_t)field, &v, 1);
}

static uint64_t addr(int reg, size_t off)
{
	return READER_REGION(reg) + off;
}

/* ---- 3.13+: a _Py_DebugOffsets block with plausible values ---------------- */

static void block_put(uint8_t *b, int32_t pos, uint64_t v)
{
	if (pos != PYOFF_NONE)
		memcpy(b + pos, &v, 8);
}

static void make_debug_block(const struct py_debug_offsets_layout *l, uint8_t *b)
{
	memset(b, 0, (size_t)l->block_size);
	memcpy(b, "xdebugpy", 8);
	block_put(b, l->version, 0x03000000ull | (uint64_t)l->minor << 16 | 0x01f0);
	block_put(b, l->runtime_interpreters_head, ((size_t)l->block_size + 15) & ~7ull);
	block_put(b, l->interp_next, 0);
	block_put(b, l->interp_threads_head, 16);
	block_put(b, l->interp_id, 8);
	block_put(b, l->interp_gil_runtime_state, 96);
	block_put(b, l->interp_gil_runtime_state_locked, 104);
	block_put(b, l->interp_gil_runtime_state_holder, 112);
	block_put(b, l->interp_ceval_gil, 120);
	block_put(b, l->interp_code_object_generation, 128);
	block_put(b, l->tstate_size, 320);
	block_put(b, l->tstate_next, 8);
	block_put(b, l->tstate_interp, 16);
	block_put(b, l->tstate_current_frame, 56);
	block_put(b, l->tstate_thread_id, 152);
	block_put(b, l->tstate_native_thread_id, 160);
	block_put(b, l->tstate_datastack_chunk, 168);
	block_put(b, l->tstate_holds_gil, 176);
	block_put(b, l->frame_size, 80);
	block_put(b, l->frame_previous, 8);
	block_put(b, l->frame_executable, 0);
	block_put(b, l->frame_instr_ptr, 56);
	block_put(b, l->frame_owner, 70);
	block_put(b, l->code_size, 208);
	block_put(b, l->code_filename, 112);
	block_put(b, l->code_name, 120);
	block_put(b, l->code_qualname, 128);
	block_put(b, l->code_linetable, 136);
	block_put(b, l->code_firstlineno, 68);
	block_put(b, l->code_co_code_adaptive, 208);
	block_put(b, l->object_type, 8);
	block_put(b, l->bytes_size, 16);
	block_put(b, l->bytes_data, 32);
	block_put(b, l->unicode_size, 64);
	block_put(b, l->unicode_state, 32);
	block_put(b, l->unicode_length, 16);
	block_put(b, l->unicode_asciiobject_size, 40);
	block_put(b, l->unicode_compactunicodeobject_size, 56);
}

/* ---- the image ------------------------------------------------------------ */

/* A str object at slot, as UTF-32 code points; ASCII when all are < 0x80. */
static uint64_t make_str(struct image *im, const struct py_offsets *o, int slot,
			 const uint32_t *cp, size_t n)
{
	size_t off = (size_t)slot * STR_STRIDE;
	uint32_t maxc = 0, kind, ascii, state;
	size_t data;

	for (size_t i = 0; i < n; i++)
		if (cp[i] > maxc)
			maxc = cp[i];
	kind = maxc < 0x100 ? 1 : maxc < 0x10000 ? 2 : 4;
	ascii = maxc < 0x80;
	state = 1 /* interned */ | kind << 2 | 1u << 5 /* compact */ | ascii << 6;
	reserve(im, R_STR, off + (size_t)o->unicode_compact_data);
	put64(im, R_STR, off, o->object_type, 0x7f00577200ull);       /* &PyUnicode_Type */
	put64(im, R_STR, off, o->unicode_length, n);
	put32(im, R_STR, off, o->unicode_state, state);
	data = off + (size_t)(ascii ? o->unicode_ascii_data : o->unicode_compact_data);
	for (size_t i = 0; i < n; i++) {
		uint8_t b1 = (uint8_t)cp[i];
		uint16_t b2 = (uint16_t)cp[i];

		if (kind == 1)
			put(im, R_STR, data + i, &b1, 1);
		else if (kind == 2)
			put(im, R_STR, data + 2 * i, &b2, 2);
		else
			put(im, R_STR, data + 4 * i, &cp[i], 4);
	}
	return addr(R_STR, off);
}

static uint64_t make_ascii(struct image *im, const struct py_offsets *o, int slot, const char *s)
{
	uint32_t cp[STR_STRIDE];
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		cp[i] = (unsigned char)s[i];
	return make_str(im, o, slot, cp, n);
}

static uint64_t make_bytes(struct image *im, const struct py_offsets *o, int slot,
			   const uint8_t *b, size_t n)
{
	size_t off = (size_t)slot * BYTES_STRIDE;

	put64(im, R_BYTES, off, o->bytes_size, n);
	put(im, R_BYTES, off + (size_t)o->bytes_data, b, n);
	return addr(R_BYTES, off);
}

/* A real line table of this minor version, the first after skip matches. */
static const struct lt_vector *vector_for(int minor, int skip)
{
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "3.%d.", minor);
	for (size_t i = 0; i < ARRAY_SIZE(lt_vectors); i++) {
		const struct lt_vector *v = &lt_vectors[i];

		if (!strncmp(v->name, prefix, strlen(prefix)) && v->table_len < BYTES_STRIDE - 64 &&
		    v->n_units > 4 && skip-- == 0)
			return v;
	}
	fprintf(stderr, "gen_seeds: no line table for 3.%d\n", minor);
	exit(1);
}

struct code_spec {
	uint64_t addr;
	const struct lt_vector *v;
	uint64_t copy;              /* free-threaded 3.14+: a thread's own copy of its bytecode */
};

static struct code_spec make_code(struct image *im, const struct py_offsets *o, int slot,
				  uint64_t name, uint64_t file, const struct lt_vector *v)
{
	size_t off = (size_t)slot * CODE_STRIDE;
	struct code_spec c = { addr(R_CODE, off), v, 0 };

	reserve(im, R_CODE, off + (size_t)o->code_size + 16);
	put64(im, R_CODE, off, 0, 1);                                 /* ob_refcnt */
	put64(im, R_CODE, off, o->object_type, READER_CODE_TYPE);
	put64(im, R_CODE, off, o->object_type + 8, v->n_units);      /* ob_size */
	put64(im, R_CODE, off, o->code_filename, file);
	put64(im, R_CODE, off, o->code_name, name);
	put64(im, R_CODE, off, o->code_qualname, name);
	put64(im, R_CODE, off, o->code_linetable, make_bytes(im, o, slot, v->table, v->table_len));
	put32(im, R_CODE, off, o->code_firstlineno, (uint32_t)v->firstlineno);
	/* the instructions (3.11+), so the code object covers them */
	if (o->code_code_adaptive != PYOFF_NONE)
		put8(im, R_CODE, off + (size_t)o->code_code_adaptive, (int32_t)(2 * v->n_units), 0);
	/* free-threaded 3.14+: co_tlbc, entry 0 the code's own bytecode, 1 a thread's copy */
	if (o->code_tlbc != PYOFF_NONE) {
		size_t arr = 0x800 + (size_t)slot * 0x20, copy = 0x1000 + (size_t)slot * 0x100;

		c.copy = addr(R_PTHREAD, copy);
		put64(im, R_CODE, off, o->code_tlbc, addr(R_PTHREAD, arr));
		put64(im, R_PTHREAD, arr, o->codearray_size, 2);
		put64(im, R_PTHREAD, arr, o->codearray_entries, c.addr + (uint64_t)o->code_code_adaptive);
		put64(im, R_PTHREAD, arr, o->codearray_entries + 8, c.copy);
		put8(im, R_PTHREAD, copy, (int32_t)(2 * v->n_units), 0);
	}
	return c;
}

/* A frame at slot running code at code unit unit; prev is its caller. */
static uint64_t make_frame(struct image *im, const struct py_offsets *o, int slot,
			   const struct code_spec *c, size_t unit, uint64_t prev, int entry)
{
	size_t off = (size_t)slot * FRAME_STRIDE;
	uint64_t code = c ? c->addr : 0;

	reserve(im, R_FRAME, off + (size_t)o->frame_size);
	if (c && o->frame_code_tagged != PYOFF_NONE && o->frame_code_tagged > 0)
		code |= 1;                                     /* a tagged _PyStackRef */
	put64(im, R_FRAME, off, o->frame_code, code);
	put64(im, R_FRAME, off, o->frame_previous, prev);
	switch (o->instr_model) {
	case PY_INSTR_LASTI_BYTES:
		put32(im, R_FRAME, off, o->frame_instr, (uint32_t)(2 * unit));
		break;
	case PY_INSTR_LASTI_UNITS:
		put32(im, R_FRAME, off, o->frame_instr, (uint32_t)unit);
		break;
	default:
		/* free-threaded 3.14+: every other frame runs its thread's copy */
		if (c && c->copy && slot % 2) {
			put32(im, R_FRAME, off, o->frame_tlbc_index, 1);
			put64(im, R_FRAME, off, o->frame_instr, c->copy + 2 * unit);
			break;
		}
		put64(im, R_FRAME, off, o->frame_instr,
		      code ? c->addr + (uint64_t)o->code_code_adaptive + 2 * unit : 0);
		break;
	}
	put8(im, R_FRAME, off, o->frame_owner, c ? 0 : (uint8_t)o->frame_owner_shim);
	put8(im, R_FRAME, off, o->frame_is_entry, (uint8_t)entry);
	if (o->frame_model == PY_FRAMES_OBJECTS) {
		put64(im, R_FRAME, off, o->object_type, 0x7f00f4a3e000ull);
		put64(im, R_FRAME, off, o->object_refcnt, 1);    /* alive: referenced */
	}
	return addr(R_FRAME, off);
}

static void make_tstate(struct image *im, const struct py_offsets *o, int slot,
			uint64_t frame, uint64_t next, int32_t tid)
{
	size_t off = (size_t)slot * TSTATE_STRIDE;
	uint64_t pthread = addr(R_PTHREAD, 0);

	reserve(im, R_TSTATE, off + (size_t)o->tstate_size);
	put64(im, R_TSTATE, off, o->tstate_next, next);
	put64(im, R_TSTATE, off, o->tstate_interp, addr(R_INTERP, 0));
	put64(im, R_TSTATE, off, o->tstate_thread_id, pthread);
	put64(im, R_TSTATE, off, o->tstate_native_thread_id, (uint64_t)tid);
	if (o->cframe_current_frame != PYOFF_NONE) {
		/* 3.11/3.12: tstate->cframe -> _PyCFrame.current_frame */
		size_t cf = 3 * TSTATE_STRIDE + (size_t)slot * 64;

		put64(im, R_TSTATE, off, o->tstate_frame, addr(R_TSTATE, cf));
		put64(im, R_TSTATE, cf, o->cframe_current_frame, frame);
	} else {
		put64(im, R_TSTATE, off, o->tstate_frame, frame);
	}
	/* struct pthread: the kernel tid where glibc keeps it */
	put32(im, R_PTHREAD, 0, 0x2d0, (uint32_t)tid);
	put8(im, R_PTHREAD, 0, 2047, 0);
}

enum variant { V_BASIC, V_CHANGED, V_DEEP, V_PATCHED, V_COUNT };

/* Build the image of one version and variant; second is the changed target. */
static void build(struct image *im, const struct py_offsets *o, const uint8_t *block,
		  size_t block_len, enum variant var, int second)
{
	static const uint32_t ucs2[] = { 'c', 'a', 'l', 'c', 'u', 'l', '_', 0xe9, 'n', 0x3b1 };
	static const uint32_t ucs4[] = { 0x8a08, 0x7b97, '.', 0x1f525, '<', '>' };
	int minor = (int)((o->version_hex >> 16) & 0xff);
	struct code_spec c[4];
	uint64_t f[12], interp = addr(R_INTERP, 0), name0;
	int entry_at_top = o->frame_model == PY_FRAMES_INTERP_311;

	memset(im, 0, sizeof(*im));
	if (block)
		put(im, R_RUNTIME, 0, block, block_len);
	put64(im, R_RUNTIME, 0, o->runtime_interpreters_head, interp);
	put64(im, R_INTERP, 0, o->interp_next, 0);
	put64(im, R_INTERP, 0, o->interp_id, 0);

	name0 = make_ascii(im, o, 0, "Worker.spin");
	make_ascii(im, o, 6, "Worker.spin_replaced");
	c[0] = make_code(im, o, 0, second ? addr(R_STR, 6 * STR_STRIDE) : name0,
			 make_ascii(im, o, 1, "/srv/app/worker.py"), vector_for(minor, 0));
	c[1] = make_code(im, o, 1, make_str(im, o, 2, ucs2, ARRAY_SIZE(ucs2)),
			 make_ascii(im, o, 3, "/srv/app/<stdin>"), vector_for(minor, 1));
	c[2] = make_code(im, o, 2, make_str(im, o, 4, ucs4, ARRAY_SIZE(ucs4)),
			 make_ascii(im, o, 5, "/usr/lib/python3/threading.py"), vector_for(minor, 2));

	if (var == V_DEEP) {
		/* a chain deeper than SMALL_MAX's 5 frames, then a cycle */
		for (int i = 0; i < 10; i++)
			f[i] = addr(R_FRAME, (size_t)i * FRAME_STRIDE);
		for (int i = 0; i < 10; i++)
			make_frame(im, o, i, &c[i % 3], (size_t)i % c[i % 3].v->n_units,
				   i < 9 ? f[i + 1] : (second ? f[2] : 0), 0);
		make_tstate(im, o, 0, f[0], 0, 4242);
	} else {
		/* main: f2 <- f1 <- f0 (innermost), 3.12+ a C-stack shim below f2 */
		uint64_t shim = o->frame_owner != PYOFF_NONE && !entry_at_top ?
			make_frame(im, o, 3, NULL, 0, 0, 0) : 0;
		size_t unit0 = second ? c[0].v->n_units + 5 : c[0].v->n_units / 2;

		f[2] = make_frame(im, o, 2, &c[2], 1, shim, entry_at_top);
		f[1] = make_frame(im, o, 1, &c[1], c[1].v->n_units - 1, f[2], 0);
		f[0] = make_frame(im, o, 0, &c[0], unit0, f[1], 0);
		/* a second thread running f1 directly, a third idle */
		make_tstate(im, o, 2, 0, 0, 4244);
		make_tstate(im, o, 1, f[1], addr(R_TSTATE, 2 * TSTATE_STRIDE), 4243);
		make_tstate(im, o, 0, f[0], addr(R_TSTATE, TSTATE_STRIDE), 4242);
	}
	put64(im, R_INTERP, 0, o->interp_threads_head, addr(R_TSTATE, 0));
}

/* Patches that set a few block fields to the values they already have. */
static void write_patches(FILE *f, const struct py_debug_offsets_layout *l, const uint8_t *block)
{
	static const size_t fields[] = {
		READER_POS(unicode_length), READER_POS(unicode_state), READER_POS(frame_owner),
		READER_POS(code_firstlineno), READER_POS(object_type), READER_POS(bytes_data),
		READER_POS(tstate_current_frame),
	};
	uint8_t n = (uint8_t)ARRAY_SIZE(fields);

	fwrite(&n, 1, 1, f);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		int32_t at = *(const int32_t *)((const char *)l + fields[i]);
		uint64_t v = 0;
		uint8_t p[3];

		if (at != PYOFF_NONE)
			memcpy(&v, block + at, 8);
		p[0] = (uint8_t)reader_patch_index(fields[i]);
		p[1] = (uint8_t)v;
		p[2] = (uint8_t)(v >> 8);
		fwrite(p, 1, 3, f);
	}
}

static void emit_image(FILE *out, const struct image *im)
{
	for (int r = 0; r < READER_NREGIONS; r++) {
		uint8_t len[2] = { (uint8_t)im->len[r], (uint8_t)(im->len[r] >> 8) };

		fwrite(len, 1, 2, out);
		fwrite(im->data[r], 1, im->len[r], out);
	}
}

static FILE *open_seed(const char *dir, const char *harness, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, harness);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, harness, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static void reader_seeds(const char *dir)
{
	static struct image im, im2;
	static const uint8_t flags[V_COUNT] = {
		READER_F_CODE_TYPE | READER_F_TWO_PASSES | READER_F_RECHECK,
		READER_F_CHANGE | READER_F_RECHECK,
		READER_F_CODE_TYPE | READER_F_SMALL_MAX | READER_F_CHANGE,
		READER_F_CODE_TYPE | READER_F_PATCH,
	};
	static const char *const vname[V_COUNT] = { "basic", "changed", "deep", "patched" };

	for (int minor = 8; minor <= 15; minor++) {
		struct py_offsets o;
		uint8_t block[4096];
		size_t block_len = 0;

		if (minor <= 12) {
			o = *py_offsets_builtin(minor);
		} else {
			const struct py_debug_offsets_layout *l = py_debug_layout(minor, 0);

			make_debug_block(l, block);
			block_len = (size_t)l->block_size;
			if (py_offsets_from_debug(l, block, block_len, &o)) {
				fprintf(stderr, "gen_seeds: 3.%d block rejected\n", minor);
				exit(1);
			}
		}
		for (int v = 0; v < V_COUNT; v++) {
			char name[64];
			uint8_t head[2] = { (uint8_t)(minor - 8), flags[v] };
			FILE *f;

			if (v == V_PATCHED && minor < 13)
				continue;
			snprintf(name, sizeof(name), "seed-3.%d-%s", minor, vname[v]);
			f = open_seed(dir, "fuzz_reader", name);
			build(&im, &o, block_len ? block : NULL, block_len,
			      v == V_PATCHED ? V_BASIC : (enum variant)v, 0);
			fwrite(head, 1, 2, f);
			if (v == V_PATCHED)
				write_patches(f, py_debug_layout(minor, 0), block);
			emit_image(f, &im);
			if (flags[v] & READER_F_CHANGE) {
				build(&im2, &o, block_len ? block : NULL, block_len, (enum variant)v, 1);
				emit_image(f, &im2);
			}
			fclose(f);
		}
	}
	/*
	 * Free-threaded 3.13t-3.15t: the block as that build fills it
	 * (debug_blocks.h), every object 16 bytes longer, 3.14+ frames on
	 * threads' own bytecode copies.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		const struct debug_block *db = &debug_blocks[i];
		const struct py_debug_offsets_layout *l;
		uint8_t block[4096];
		struct py_offsets o;
		char name[64];
		FILE *f;

		if (!db->free_threaded)
			continue;
		l = py_debug_layout(db->minor, 1);
		memset(block, 0, sizeof(block));
		memcpy(block, "xdebugpy", 8);
		for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
			block_put(block, v->pos, v->value);
		if (py_offsets_from_debug(l, block, (size_t)l->block_size, &o)) {
			fprintf(stderr, "gen_seeds: 3.%dt block rejected\n", db->minor);
			exit(1);
		}
		for (int v = V_BASIC; v <= V_DEEP; v++) {
			uint8_t head[2] = { (uint8_t)(db->minor - 8), flags[v] };

			snprintf(name, sizeof(name), "seed-3.%dt-%s", db->minor, vname[v]);
			f = open_seed(dir, "fuzz_reader", name);
			build(&im, &o, block, (size_t)l->block_size, (enum variant)v, 0);
			fwrite(head, 1, 2, f);
			emit_image(f, &im);
			if (flags[v] & READER_F_CHANGE) {
				build(&im2, &o, block, (size_t)l->block_size, (enum variant)v, 1);
				emit_image(f, &im2);
			}
			fclose(f);
		}
	}
}

/*
 * fuzz_bpfrec: the version, flags, no frame-size raise, a record as the BPF
 * program writes it for the image's first thread (its frames copied from
 * the image with the words of their code objects, user and kernel pcs, a
 * stack copy for FW_REC_FULL), then the image (fuzz_bpfrec.c).
 */
static uint64_t image_u64(const struct image *im, uint64_t a)
{
	uint64_t v = 0;

	for (int r = 0; r < READER_NREGIONS; r++)
		if (a >= READER_REGION(r) && a - READER_REGION(r) + 8 <= im->len[r])
			memcpy(&v, im->data[r] + (a - READER_REGION(r)), 8);
	return v;
}

static void image_copy(const struct image *im, uint64_t a, void *out, size_t n)
{
	memset(out, 0, n);
	for (int r = 0; r < READER_NREGIONS; r++)
		if (a >= READER_REGION(r) && a - READER_REGION(r) < im->len[r]) {
			size_t off = (size_t)(a - READER_REGION(r)), have = im->len[r] - off;

			memcpy(out, im->data[r] + off, n < have ? n : have);
		}
}

static void bpfrec_seed(const char *dir, const char *name, int minor, const struct image *im,
			const struct py_offsets *o, int full)
{
	static struct {
		struct fw_sample_hdr h;
		uint8_t body[8 * FW_PY_SLOT_MAX + 5 * 8 + 512];
	} rec;
	uint64_t frame = READER_REGION(R_FRAME), mask = ~0ull;
	uint64_t ustack[] = { 0x7f0012345678ull, 0x55d0c0a01234ull, 0x7f0012340000ull };
	uint64_t kstack[] = { 0xffffffff81000000ull, 0xffffffff81234567ull };
	uint8_t head[5] = { (uint8_t)(minor - 8), 0x01, 0, 0, 0 };
	size_t id_len, size, off = 0, data_len;
	int32_t id_start;
	FILE *f;

	memset(&rec, 0, sizeof(rec));
	/* the code object words the bpf backend asks the program to copy */
	py_code_id_span(o, &id_start, &id_len);
	if (!(id_start >= 0 && id_len < FW_CODE_ID_COPY && o->frame_code >= 0))
		id_len = 0;
	if (o->frame_code_tagged != PYOFF_NONE)
		mask = ~(uint64_t)o->frame_code_tagged;
	/* as the program lays a frame out (fwprof.h, struct fw_py_frame) */
	data_len = ((size_t)o->frame_size < FW_FRAME_COPY ? (size_t)o->frame_size : FW_FRAME_COPY);
	data_len = (data_len + 7) & ~(size_t)7;
	rec.h.py_data_len = (uint32_t)data_len;
	rec.h.py_stride = (uint32_t)(sizeof(struct fw_py_frame) + data_len + ((id_len + 7) & ~(size_t)7));
	rec.h.kind = full ? FW_REC_FULL : FW_REC_SMALL;
	rec.h.pid = 4242;
	rec.h.tid = 4242;
	rec.h.cpu = 1;
	rec.h.time_ns = 123456789000ull;
	rec.h.tstate = READER_REGION(R_TSTATE);
	rec.h.user_mode = 1;
	rec.h.syscall_nr = -1;
	while (frame && rec.h.npy < 8) {
		uint8_t *slot = rec.body + off;
		struct fw_py_frame p = { .addr = frame };
		uint64_t code;

		image_copy(im, frame, slot + sizeof(p), data_len);
		code = image_u64(im, frame + (uint64_t)o->frame_code) & mask;
		if (id_len && code) {
			p.code_id_addr = code + (uint64_t)(int64_t)id_start;
			image_copy(im, p.code_id_addr, slot + sizeof(p) + data_len, id_len);
		}
		memcpy(slot, &p, sizeof(p));
		frame = image_u64(im, frame + (uint64_t)o->frame_previous);
		rec.h.npy++;
		off += rec.h.py_stride;
	}
	rec.h.kstack_bytes = (int32_t)sizeof(kstack);
	memcpy(rec.body + off, kstack, sizeof(kstack));
	off += sizeof(kstack);
	if (!full) {
		rec.h.ustack_bytes = (int32_t)sizeof(ustack);
		memcpy(rec.body + off, ustack, sizeof(ustack));
		off += sizeof(ustack);
	}
	size = FW_PY_OFFSET + off;
	if (full) {
		uint8_t *stack = rec.body + off;
		uint64_t sp = 0x7ffd00001100ull, words[] = { 0x7ffd00001180ull, 0x7f0012345678ull };

		rec.h.stack_base = sp - FW_BELOW_SP;
		rec.h.stack_bytes = 512;
		rec.h.regs[6] = 0x7ffd00001180ull;       /* rbp */
		rec.h.regs[7] = sp;                      /* rsp */
		rec.h.regs[16] = 0x7f0012345000ull;      /* rip */
		memset(stack, 0, 512);
		memcpy(stack + FW_BELOW_SP + 0x80, words, sizeof(words));
		size += 512;
	}
	head[3] = (uint8_t)size;
	head[4] = (uint8_t)(size >> 8);
	f = open_seed(dir, "fuzz_bpfrec", name);
	fwrite(head, 1, sizeof(head), f);
	fwrite(&rec, 1, size, f);
	emit_image(f, im);
	fclose(f);
}

static void bpfrec_seeds(const char *dir)
{
	static struct image im;

	for (int minor = 8; minor <= 15; minor++) {
		struct py_offsets o;
		uint8_t block[4096];
		size_t block_len = 0;
		char name[64];

		if (minor <= 12) {
			o = *py_offsets_builtin(minor);
		} else {
			const struct py_debug_offsets_layout *l = py_debug_layout(minor, 0);

			make_debug_block(l, block);
			block_len = (size_t)l->block_size;
			if (py_offsets_from_debug(l, block, block_len, &o)) {
				fprintf(stderr, "gen_seeds: 3.%d block rejected\n", minor);
				exit(1);
			}
		}
		build(&im, &o, block_len ? block : NULL, block_len, V_BASIC, 0);
		snprintf(name, sizeof(name), "seed-3.%d-%s", minor, minor % 2 ? "full" : "small");
		bpfrec_seed(dir, name, minor, &im, &o, minor % 2);
	}
}

/*
 * fuzz_pystate: fuzz_reader's basic image of each version whose objects
 * layout is known, with the main thread raising an exception and the
 * second handling one (its exc_info item's value), both of a type named
 * "ValueError", in the spare room of the bytes region.
 */
static void pystate_seeds(const char *dir)
{
	static struct image im;

	for (int minor = 8; minor <= 15; minor++) {
		const struct py_objects_layout *lo;
		struct py_offsets o;
		uint8_t block[4096], head[2] = { (uint8_t)(minor - 8), READER_F_CODE_TYPE };
		size_t block_len = 0;
		uint64_t exc = addr(R_BYTES, 0x1800), type = addr(R_BYTES, 0x2000);
		uint64_t name = addr(R_BYTES, 0x2400), item = addr(R_TSTATE, 3 * TSTATE_STRIDE + 0x200);
		char seed[64];
		FILE *f;

		if (minor <= 12) {
			o = *py_offsets_builtin(minor);
		} else {
			/* the block as CPython fills it: its thread states are as the objects layout says */
			const struct py_debug_offsets_layout *l = py_debug_layout(minor, 0);
			const struct debug_block *db = NULL;

			for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++)
				if (debug_blocks[i].minor == minor && !debug_blocks[i].free_threaded)
					db = &debug_blocks[i];
			if (!db)
				continue;
			memset(block, 0, sizeof(block));
			memcpy(block, "xdebugpy", 8);
			for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
				block_put(block, v->pos, v->value);
			block_len = (size_t)l->block_size;
			if (py_offsets_from_debug(l, block, block_len, &o))
				continue;
		}
		lo = &o.objects;
		if (!lo->known || lo->tstate_exc_info < 0 || lo->tstate_curexc < 0 ||
		    lo->type_name < 0)
			continue;
		build(&im, &o, block_len ? block : NULL, block_len, V_BASIC, 0);
		/* the exception and its type */
		put64(&im, R_BYTES, 0x1800, 0, 1);
		put64(&im, R_BYTES, 0x1800, o.object_type, type);
		reserve(&im, R_BYTES, 0x2000 + 0x200);
		put64(&im, R_BYTES, 0x2000, 0, 1);
		put64(&im, R_BYTES, 0x2000, lo->type_name, name);
		put64(&im, R_BYTES, 0x2000, lo->type_basicsize, 80);
		put64(&im, R_BYTES, 0x2000, lo->type_flags, 1ull << 30);   /* a base-exception subclass */
		put(&im, R_BYTES, 0x2400, "ValueError", 11);
		/* main raises it (<= 3.11: the type is the first word), thread 2 handles it */
		put64(&im, R_TSTATE, 0, lo->tstate_curexc, minor <= 11 ? type : exc);
		put64(&im, R_TSTATE, TSTATE_STRIDE, lo->tstate_exc_info, item);
		put64(&im, R_TSTATE, 3 * TSTATE_STRIDE + 0x200, lo->exc_item_value, exc);
		put64(&im, R_TSTATE, 3 * TSTATE_STRIDE + 0x200, lo->exc_item_previous, 0);
		snprintf(seed, sizeof(seed), "seed-3.%d-exception", minor);
		f = open_seed(dir, "fuzz_pystate", seed);
		fwrite(head, 1, sizeof(head), f);
		emit_image(f, &im);
		fclose(f);
	}
}

/* fuzz_linetable: kind byte, firstlineno and offset (i32 LE), the table. */
static void linetable_seeds(const char *dir)
{
	static const char *const want[] = {
		"3.8.18 loops", "3.9.18 far_lines", "3.10.13 loops", "3.10.13 far_lines",
		"3.11.7 loops", "3.11.7 far_lines", "3.12.1 multiline_call", "3.13.0 loops",
		"3.14.10 far_lines", "3.15.2 comprehension",
	};

	for (size_t w = 0; w < ARRAY_SIZE(want); w++) {
		const struct lt_vector *v = NULL;
		char name[64];
		FILE *f;
		uint8_t head[9];
		int32_t off;

		for (size_t i = 0; i < ARRAY_SIZE(lt_vectors); i++)
			if (!strcmp(lt_vectors[i].name, want[w]))
				v = &lt_vectors[i];
		if (!v) {
			fprintf(stderr, "gen_seeds: no vector %s\n", want[w]);
			exit(1);
		}
		off = (int32_t)(v->kind == LT_LOCATIONS ? v->n_units - 1 : 2 * (v->n_units - 1));
		head[0] = (uint8_t)v->kind;
		memcpy(head + 1, &v->firstlineno, 4);
		memcpy(head + 5, &off, 4);
		snprintf(name, sizeof(name), "seed-%zu", w);
		f = open_seed(dir, "fuzz_linetable", name);
		fwrite(head, 1, sizeof(head), f);
		fwrite(v->table, 1, v->table_len, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds CORPUS_DIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	reader_seeds(argv[1]);
	linetable_seeds(argv[1]);
	bpfrec_seeds(argv[1]);
	pystate_seeds(argv[1]);
	return 0;
}
