/*
 * Unit tests for the line-table decoders: every code unit of real tables
 * from each CPython (linetable_vectors.h, generated), hand-made tables for
 * each entry form, malformed input, and random garbage under a fixed seed.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "python/linetable.h"
#include "linetable_vectors.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The decoder for a kind, called with the offset unit i stands for. */
static int decode(enum lt_kind kind, const uint8_t *table, size_t len,
		  int firstlineno, int unit)
{
	long long off = (long long)unit * 2;

	if (off > INT_MAX)
		off = INT_MAX;
	if (off < INT_MIN)
		off = INT_MIN;
	switch (kind) {
	case LT_LNOTAB:
		return linetable_lnotab_line(table, len, firstlineno, (int)off);
	case LT_310:
		return linetable_310_line(table, len, firstlineno, (int)off);
	case LT_LOCATIONS:
	default:
		return linetable_locations_line(table, len, firstlineno, unit);
	}
}

static int count_kind(enum lt_kind kind)
{
	size_t i;
	int n = 0;

	for (i = 0; i < N_ELEMS(lt_vectors); i++)
		n += lt_vectors[i].kind == kind;
	return n;
}

/* Every code unit of every real table decodes to what CPython says. */
static void check_vectors(enum lt_kind kind)
{
	size_t i, u, checked = 0;

	assert_true(count_kind(kind) > 0);
	for (i = 0; i < N_ELEMS(lt_vectors); i++) {
		const struct lt_vector *v = &lt_vectors[i];

		if (v->kind != kind)
			continue;
		for (u = 0; u < v->n_units; u++) {
			int got = decode(kind, v->table, v->table_len,
					 v->firstlineno, (int)u);

			if (got != v->lines[u]) {
				print_error("%s (line %d) unit %zu: got %d, want %d\n",
					    v->name, v->firstlineno, u, got,
					    v->lines[u]);
				fail();
			}
			checked++;
		}
	}
	assert_true(checked > 0);
}

static void test_vectors_lnotab(void **state)
{
	(void)state;
	check_vectors(LT_LNOTAB);
}

static void test_vectors_310(void **state)
{
	(void)state;
	check_vectors(LT_310);
}

static void test_vectors_locations(void **state)
{
	(void)state;
	check_vectors(LT_LOCATIONS);
}

/*
 * Past the last code unit: 3.10+ tables cover exactly the code, so -1;
 * co_lnotab does not know the code size and keeps the last line. A
 * negative offset (frame not started) gives co_firstlineno, as CPython.
 */
static void test_vectors_edges(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(lt_vectors); i++) {
		const struct lt_vector *v = &lt_vectors[i];
		int n = (int)v->n_units;
		int last = v->lines[n - 1];

		assert_int_equal(decode(v->kind, v->table, v->table_len,
					v->firstlineno, -1), v->firstlineno);
		assert_int_equal(decode(v->kind, v->table, v->table_len,
					v->firstlineno, INT_MIN), v->firstlineno);
		if (v->kind == LT_LNOTAB) {
			assert_int_equal(decode(v->kind, v->table, v->table_len,
						v->firstlineno, n), last);
			assert_int_equal(decode(v->kind, v->table, v->table_len,
						v->firstlineno, INT_MAX), last);
		} else {
			assert_int_equal(decode(v->kind, v->table, v->table_len,
						v->firstlineno, n), -1);
			assert_int_equal(decode(v->kind, v->table, v->table_len,
						v->firstlineno, INT_MAX), -1);
		}
	}
}

/* A table cut anywhere never reads past the cut (checked by ASan). */
static void test_vectors_truncated(void **state)
{
	size_t i, cut;
	int u;

	(void)state;
	for (i = 0; i < N_ELEMS(lt_vectors); i++) {
		const struct lt_vector *v = &lt_vectors[i];

		for (cut = 0; cut < v->table_len; cut++) {
			uint8_t *copy = malloc(cut ? cut : 1);

			assert_non_null(copy);
			memcpy(copy, v->table, cut);
			for (u = 0; u < 4; u++) {
				int unit = (int)v->n_units * u / 3;
				int r = decode(v->kind, copy, cut,
					       v->firstlineno, unit);

				assert_true(r >= -1);
			}
			free(copy);
		}
	}
}

static void test_lnotab_crafted(void **state)
{
	/* 3.8 splitting of a +300 line jump 6 bytes on, then 260 bytes */
	static const uint8_t jump[] = { 6, 127, 0, 127, 0, 46, 255, 0, 5, 1 };
	static const uint8_t back[] = { 4, 0x80, 0, 0x80, 2, 0xfe };
	static const uint8_t odd[] = { 2, 1, 2 };

	(void)state;
	assert_int_equal(linetable_lnotab_line(NULL, 0, 7, 0), 7);
	assert_int_equal(linetable_lnotab_line(NULL, 0, 7, 100), 7);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, 4), 10);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, 6), 310);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, 265), 310);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, 266), 311);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, INT_MAX), 311);
	/* -128 twice then -2: 300 -> 44 */
	assert_int_equal(linetable_lnotab_line(back, sizeof(back), 300, 2), 300);
	assert_int_equal(linetable_lnotab_line(back, sizeof(back), 300, 4), 44);
	assert_int_equal(linetable_lnotab_line(back, sizeof(back), 300, 6), 42);
	/* going below line 0 is garbage */
	assert_int_equal(linetable_lnotab_line(back, sizeof(back), 3, 6), -1);
	/* odd length: not a table of pairs */
	assert_int_equal(linetable_lnotab_line(odd, sizeof(odd), 1, 0), -1);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), 10, -1), 10);
	assert_int_equal(linetable_lnotab_line(jump, sizeof(jump), -5, -1), -1);
}

static void test_310_crafted(void **state)
{
	/* +300 split into 0-length pairs, 260 bytes split at 254, no line */
	static const uint8_t t[] = { 0, 127, 0, 127, 6, 46, 254, 1, 6, 0,
				     4, 0x80, 2, 0xff };
	static const uint8_t odd[] = { 2, 0, 2 };

	(void)state;
	assert_int_equal(linetable_310_line(NULL, 0, 5, 0), -1);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 0), 310);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 5), 310);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 6), 311);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 265), 311);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 266), 0);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 269), 0);
	/* the no-line pair did not move the running line */
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 270), 310);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, 272), -1);
	assert_int_equal(linetable_310_line(t, sizeof(t), 10, -2), 10);
	assert_int_equal(linetable_310_line(odd, sizeof(odd), 1, 1), 1);
	assert_int_equal(linetable_310_line(odd, sizeof(odd), 1, 2), -1);
	assert_int_equal(linetable_310_line(t, sizeof(t), 1, 0), 301);
	assert_int_equal(linetable_310_line(t, 4, -400, 0), -1);
}

/* One entry byte: 1 | code | length - 1. */
#define E(code, units) (0x80 | (code) << 3 | ((units) - 1))

static void test_locations_forms(void **state)
{
	static const uint8_t t[] = {
		E(0, 1), 0x12,			/* short: line 20, 1 unit */
		E(9, 8), 0x7f,			/* short, group 9, 8 units */
		E(10, 2), 5, 9,			/* one line, +0 */
		E(11, 1), 0, 127,		/* one line, +1 -> 21 */
		E(12, 3), 1, 2,			/* one line, +2 -> 23 */
		E(13, 1), 0x0b,			/* no column, -5 -> 18 */
		E(14, 2), 0x40 | 0x08, 0x20, 0, 0x41, 0x02, 0x7f, 0x3f,
						/* long: +(0x808>>1) = +1028 */
		E(15, 4),			/* none */
		E(13, 1), 0x43, 0x40 | 0x3f, 0x01,
						/* no column: -(0x1fc3 >> 1) */
	};
	static const struct { int unit, line; } want[] = {
		{ 0, 20 }, { 1, 20 }, { 8, 20 }, { 9, 20 }, { 10, 20 },
		{ 11, 21 }, { 12, 23 }, { 14, 23 }, { 15, 18 },
		{ 16, 1046 }, { 17, 1046 }, { 18, 0 }, { 21, 0 },
		{ 23, -1 }, { 1000, -1 }, { INT_MAX, -1 }, { -1, 20 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(want); i++)
		assert_int_equal(linetable_locations_line(t, sizeof(t), 20,
							  want[i].unit),
				 want[i].line);
	/* the last entry jumps back 4065 lines: below 0 from line 1046 */
	assert_int_equal(linetable_locations_line(t, sizeof(t), 20, 22), -1);
	assert_int_equal(linetable_locations_line(t, sizeof(t), 4020, 22),
			 4020 + 1026 - 4065);
}

static void test_locations_malformed(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[8];
		size_t len;
		int unit;
	} bad[] = {
		{ "empty", { 0 }, 0, 0 },
		{ "no top bit", { 0x08, 0x00 }, 2, 0 },
		{ "no top bit later", { E(0, 1), 0x00, 0x05 }, 3, 1 },
		{ "short form cut", { E(3, 1) }, 1, 0 },
		{ "short column byte with top bit", { E(3, 1), 0x80 }, 2, 0 },
		{ "one line cut", { E(11, 1), 4 }, 2, 0 },
		{ "no column varint cut", { E(13, 1), 0x41 }, 2, 0 },
		{ "no column varint missing", { E(13, 1) }, 1, 0 },
		{ "long cut after line", { E(14, 1), 0x02 }, 2, 0 },
		{ "long end col missing", { E(14, 1), 2, 0, 1 }, 4, 0 },
		{ "long varint cut", { E(14, 1), 2, 0, 1, 0x41 }, 5, 0 },
		{ "varint too long",
		  { E(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x01 }, 8, 0 },
		{ "past the end", { E(0, 2), 0x00 }, 2, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(bad); i++) {
		/* exact-size copy so ASan sees any overread */
		uint8_t *copy = malloc(bad[i].len ? bad[i].len : 1);
		int r;

		assert_non_null(copy);
		memcpy(copy, bad[i].bytes, bad[i].len);
		r = linetable_locations_line(copy, bad[i].len, 10, bad[i].unit);
		if (r != -1) {
			print_error("%s: got %d, want -1\n", bad[i].what, r);
			fail();
		}
		free(copy);
	}
	assert_int_equal(linetable_locations_line(NULL, 0, 10, -1), 10);
	assert_int_equal(linetable_locations_line(NULL, 0, -1, -1), -1);
	/* a 6-chunk varint is still accepted */
	{
		static const uint8_t ok[] = { E(13, 1), 0x40, 0x40, 0x40,
					      0x40, 0x40, 0x00, E(0, 1), 0 };

		assert_int_equal(linetable_locations_line(ok, sizeof(ok), 10, 1), 10);
	}
}

/* xorshift64*: the same stream on every libc. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static int random_offset(void)
{
	switch (rng() % 4) {
	case 0:
		return (int)(rng() % 64);
	case 1:
		return (int)(rng() % 4096);
	case 2:
		return (int)(uint32_t)rng();	/* any int, negative too */
	default:
		return rng() % 2 ? INT_MAX : INT_MIN;
	}
}

static void fill_random(uint8_t *buf, size_t len)
{
	size_t i;
	/* half of the buffers keep the top bit on entry-like bytes */
	int loc_like = rng() % 2;

	for (i = 0; i < len; i++) {
		buf[i] = (uint8_t)rng();
		if (loc_like && rng() % 3 == 0)
			buf[i] |= 0x80;
	}
}

/* 10k random buffers of exact size, every decoder: no crash, sane answer. */
static void test_random(void **state)
{
	int n, k;

	(void)state;
	for (n = 0; n < 10000; n++) {
		size_t len = rng() % 300;
		uint8_t *buf = malloc(len ? len : 1);
		int first = rng() % 8 ? (int)(rng() % 100000) : (int)(uint32_t)rng();

		assert_non_null(buf);
		fill_random(buf, len);
		for (k = 0; k < 8; k++) {
			int off = random_offset();

			assert_true(linetable_lnotab_line(buf, len, first, off) >= -1);
			assert_true(linetable_310_line(buf, len, first, off) >= -1);
			assert_true(linetable_locations_line(buf, len, first, off) >= -1);
		}
		free(buf);
	}
}

/* One 4 MiB garbage table, offsets at its far end: bounded and finishes. */
static void test_random_huge(void **state)
{
	size_t len = 4u << 20;
	uint8_t *buf = malloc(len);
	int k;

	(void)state;
	assert_non_null(buf);
	for (k = 0; k < 3; k++) {
		size_t i;

		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)rng() | (k == 2 ? 0x80 : 0);
		assert_true(linetable_lnotab_line(buf, len, 1, INT_MAX) >= -1);
		assert_true(linetable_310_line(buf, len, 1, INT_MAX) >= -1);
		assert_true(linetable_locations_line(buf, len, 1, INT_MAX) >= -1);
		assert_true(linetable_locations_line(buf, len, 1 << 30,
						     INT_MAX) >= -1);
	}
	/* all short-form entries: the whole table is walked, then -1 */
	for (size_t i = 0; i < len; i += 2) {
		buf[i] = E(0, 8);
		buf[i + 1] = 0;
	}
	assert_int_equal(linetable_locations_line(buf, len, 1, INT_MAX), -1);
	assert_int_equal(linetable_locations_line(buf, len, 1,
						  (int)(len / 2 * 8 - 1)), 1);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_lnotab),
		cmocka_unit_test(test_vectors_310),
		cmocka_unit_test(test_vectors_locations),
		cmocka_unit_test(test_vectors_edges),
		cmocka_unit_test(test_vectors_truncated),
		cmocka_unit_test(test_lnotab_crafted),
		cmocka_unit_test(test_310_crafted),
		cmocka_unit_test(test_locations_forms),
		cmocka_unit_test(test_locations_malformed),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_huge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
