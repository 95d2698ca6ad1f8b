/*
 * Unit tests of the interned profile (src/profile/) and the hash index under
 * it (src/util/hashidx.h): each string, frame, stack and (thread, stack)
 * count stored once, ids stable across the index's growth, stacks as a
 * prefix tree read back outermost first, and the rate check the time-based
 * writers share.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "util/hashidx.h"
#include "util/utf8.h"

static void test_strings(void **state)
{
	struct profile p;
	uint32_t a, b, c;

	(void)state;
	profile_init(&p);
	assert_int_equal(profile_cstring(&p, ""), 0);           /* id 0 is "" */
	a = profile_cstring(&p, "alpha");
	b = profile_cstring(&p, "beta");
	assert_int_not_equal(a, b);
	assert_int_equal(profile_cstring(&p, "alpha"), a);
	/* by bytes, not C strings: an embedded NUL makes another string */
	c = profile_string(&p, "alpha\0x", 7);
	assert_int_not_equal(c, a);
	assert_int_equal(profile_string(&p, "alpha\0x", 7), c);
	assert_int_equal(profile_string(&p, "alphabet", 5), a);
	assert_string_equal(profile_str(&p, b), "beta");
	assert_string_equal(profile_str(&p, 999999), "");        /* out of range: "" */
	profile_release(&p);
}

/* Far past the index's first size: every id stays what it was. */
static void test_growth_keeps_ids(void **state)
{
	enum { N = 20000 };
	static uint32_t ids[N];
	struct profile p;
	char name[32];

	(void)state;
	profile_init(&p);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		ids[i] = profile_cstring(&p, name);
		assert_int_equal(ids[i], (uint32_t)i + 1);       /* in order after "" */
	}
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		assert_int_equal(profile_cstring(&p, name), ids[i]);
	}
	assert_int_equal(p.nstrings, N + 1);
	assert_true(p.string_index.n == p.nstrings);
	assert_true(p.string_index.cap >= 2 * p.string_index.n);  /* at most half full */
	profile_release(&p);
}

static void test_frames(void **state)
{
	struct profile p;
	uint32_t name, file, mod, bid, f1, f2, f3, f4, f5;

	(void)state;
	profile_init(&p);
	name = profile_cstring(&p, "run");
	file = profile_cstring(&p, "app.py");
	mod = profile_cstring(&p, "/usr/lib/libz.so.1");
	bid = profile_cstring(&p, "abcd");
	f1 = profile_frame(&p, FRAME_PYTHON, name, file, 10);
	assert_int_not_equal(f1, 0);                             /* frame 0 is unused */
	assert_int_equal(profile_frame(&p, FRAME_PYTHON, name, file, 10), f1);
	f2 = profile_frame(&p, FRAME_PYTHON, name, file, 11);    /* another line */
	f3 = profile_frame(&p, FRAME_NATIVE, name, file, 10);    /* another kind */
	f4 = profile_frame_module(&p, FRAME_NATIVE, name, 0, 0, mod, 0);
	f5 = profile_frame_module(&p, FRAME_NATIVE, name, 0, 0, mod, bid);
	assert_int_not_equal(f2, f1);
	assert_int_not_equal(f3, f1);
	assert_int_not_equal(f4, f3);
	assert_int_not_equal(f5, f4);                            /* the build id counts */
	assert_int_equal(profile_frame_module(&p, FRAME_NATIVE, name, 0, 0, mod, bid), f5);
	assert_int_equal(p.frames[f1].line, 10);
	assert_int_equal(p.frames[f5].build_id, bid);
	assert_int_equal(p.nframes, 6);
	profile_release(&p);
}

static void test_stacks_share_prefixes(void **state)
{
	struct profile p;
	uint32_t fr[4], out[8], n1, n2, n3;
	size_t depth;

	(void)state;
	profile_init(&p);
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		fr[i] = profile_frame(&p, FRAME_PYTHON, profile_cstring(&p, name), 0, i);
	}
	n1 = profile_stack(&p, (uint32_t[]){ fr[0], fr[1], fr[2] }, 3);
	n2 = profile_stack(&p, (uint32_t[]){ fr[0], fr[1], fr[3] }, 3);
	n3 = profile_stack(&p, (uint32_t[]){ fr[0], fr[1], fr[2] }, 3);
	assert_int_equal(n3, n1);
	assert_int_not_equal(n2, n1);
	/* root, f0, f1 shared; f2 and f3 one node each */
	assert_int_equal(p.nnodes, 5);
	assert_int_equal(p.nodes[n1].parent, p.nodes[n2].parent);
	assert_int_equal(p.nodes[n1].depth, 3);
	depth = profile_node_frames(&p, n2, out, 8);
	assert_int_equal(depth, 3);
	assert_int_equal(out[0], fr[0]);                         /* outermost first */
	assert_int_equal(out[2], fr[3]);
	/* a short buffer keeps the innermost frames, still outermost first */
	depth = profile_node_frames(&p, n2, out, 2);
	assert_int_equal(depth, 2);
	assert_int_equal(out[0], fr[1]);
	assert_int_equal(out[1], fr[3]);
	assert_int_equal(profile_stack(&p, NULL, 0), 0);         /* the empty stack is the root */
	profile_release(&p);
}

static void test_counts_and_threads(void **state)
{
	struct profile p;
	uint32_t t1, t2, fr, node;

	(void)state;
	profile_init(&p);
	t1 = profile_thread(&p, 100, 101, "main");
	t2 = profile_thread(&p, 100, 102, "worker");
	assert_int_equal(profile_thread(&p, 100, 101, NULL), t1);   /* NULL keeps the name */
	assert_string_equal(profile_str(&p, p.threads[t1].name), "main");
	assert_int_equal(profile_thread(&p, 100, 101, "renamed"), t1);
	assert_string_equal(profile_str(&p, p.threads[t1].name), "renamed");
	assert_int_equal(profile_thread(&p, 200, 101, "other"), 2);  /* same tid, another pid */
	fr = profile_frame(&p, FRAME_PYTHON, profile_cstring(&p, "f"), 0, 1);
	node = profile_stack(&p, &fr, 1);
	profile_add(&p, t1, node, 3);
	profile_add(&p, t1, node, 4);
	profile_add(&p, t2, node, 5);
	assert_int_equal(p.ncounts, 2);                              /* per (thread, stack) */
	assert_int_equal(p.counts[0].count, 7);
	assert_int_equal(profile_total(&p), 12);
	profile_release(&p);
}

/*
 * Label sets interned once, in their order; counts kept per (thread, stack,
 * label set), so a stack under two routes is two counts and unlabelled
 * counts are what they were; --where keeps one value's counts.
 */
static void test_labels(void **state)
{
	struct profile p;
	struct pf_label a[2], b[2];
	const struct pf_label *got;
	uint32_t route, tenant, orders, users, acme, sa, sb, sab, t, node, frame, v;

	(void)state;
	profile_init(&p);
	route = profile_cstring(&p, "route");
	tenant = profile_cstring(&p, "tenant");
	orders = profile_cstring(&p, "/orders");
	users = profile_cstring(&p, "/users");
	acme = profile_cstring(&p, "acme");
	a[0] = (struct pf_label){ route, orders };
	a[1] = (struct pf_label){ tenant, acme };
	b[0] = (struct pf_label){ route, users };
	b[1] = (struct pf_label){ tenant, acme };
	assert_int_equal(profile_labels(&p, a, 0), 0);
	sa = profile_labels(&p, a, 1);
	sab = profile_labels(&p, a, 2);
	sb = profile_labels(&p, b, 2);
	assert_true(sa && sab && sb && sa != sab && sab != sb);
	assert_int_equal(profile_labels(&p, a, 2), sab);
	assert_int_equal(profile_labelset(&p, sab, &got), 2);
	assert_int_equal(got[0].value, orders);
	assert_int_equal(got[1].value, acme);
	assert_int_equal(profile_labelset(&p, 0, &got), 0);
	assert_int_equal(profile_labelset(&p, 12345, &got), 0);
	assert_int_equal(profile_label_get(&p, sb, route, &v), 1);
	assert_int_equal(v, users);
	assert_int_equal(profile_label_get(&p, sa, tenant, &v), 0);
	/* many distinct sets keep their ids across growth */
	for (uint32_t i = 0; i < 2000; i++) {
		struct pf_label l = { route, i + 100 };

		assert_int_equal(profile_labels(&p, &l, 1), profile_labels(&p, &l, 1));
	}
	assert_int_equal(profile_labels(&p, a, 2), sab);

	t = profile_thread(&p, 1, 1, "main");
	frame = profile_frame(&p, FRAME_PYTHON, profile_cstring(&p, "handle"), 0, 1);
	node = profile_stack(&p, &frame, 1);
	profile_add(&p, t, node, 1);
	profile_add_labeled(&p, t, node, sab, 2);
	profile_add_labeled(&p, t, node, sb, 3);
	profile_add_labeled(&p, t, node, sab, 4);
	profile_add(&p, t, node, 5);
	assert_int_equal(p.ncounts, 3);
	assert_int_equal(p.counts[0].labels, 0);
	assert_int_equal(p.counts[0].count, 6);
	assert_int_equal(p.counts[1].count, 6);
	assert_int_equal(p.counts[2].count, 3);
	assert_int_equal(profile_total(&p), 15);
	assert_true(profile_has_labels(&p));
	/* --where route=/orders: the one count, and adding goes on from there */
	assert_int_equal(profile_keep_label(&p, "route", "/orders"), 1);
	assert_int_equal(p.counts[0].labels, sab);
	assert_int_equal(profile_total(&p), 6);
	profile_add_labeled(&p, t, node, sab, 1);
	profile_add_labeled(&p, t, node, sb, 1);
	assert_int_equal(p.ncounts, 2);
	assert_int_equal(p.counts[0].count, 7);
	/* a key or value the profile never saw keeps nothing */
	assert_int_equal(profile_keep_label(&p, "route", "/nowhere"), 0);
	assert_int_equal(profile_keep_label(&p, "nokey", "/orders"), 0);
	assert_false(profile_has_labels(&p));
	profile_release(&p);
}

static void test_rate_known(void **state)
{
	struct profile_meta m = { 0 };

	(void)state;
	m.rate_hz = 100;
	assert_true(profile_rate_known(&m));
	m.rate_hz = 0;
	assert_false(profile_rate_known(&m));
	m.rate_hz = -5;
	assert_false(profile_rate_known(&m));
	m.rate_hz = NAN;
	assert_false(profile_rate_known(&m));
	m.rate_hz = 1e300;
	assert_false(profile_rate_known(&m));
	m.rate_hz = 0.001;
	assert_true(profile_rate_known(&m));
}

/* The index alone: collisions probe on, growth rehashes through the owner. */
static uint64_t same_hash(const void *owner, uint32_t id)
{
	(void)owner;
	(void)id;
	return 42;
}

static void test_hash_index_collisions(void **state)
{
	struct hidx t = { 0 };
	size_t pos;
	uint32_t id, seen = 0;

	(void)state;
	pos = hidx_start(&t, 42);
	assert_int_equal(hidx_next(&t, &pos), HIDX_NONE);       /* empty */
	for (uint32_t i = 0; i < 100; i++)
		hidx_insert(&t, 42, i, same_hash, NULL);
	assert_int_equal(t.n, 100);
	pos = hidx_start(&t, 42);
	while ((id = hidx_next(&t, &pos)) != HIDX_NONE) {
		assert_true(id < 100);
		seen++;
	}
	assert_int_equal(seen, 100);                             /* every id on one chain */
	pos = hidx_start(&t, 7);
	assert_int_equal(hidx_next(&t, &pos), HIDX_NONE);
	/* cleared: empty, its slots kept for the next fill */
	{
		size_t cap = t.cap;

		hidx_clear(&t);
		assert_int_equal(t.n, 0);
		assert_int_equal(t.cap, cap);
		pos = hidx_start(&t, 42);
		assert_int_equal(hidx_next(&t, &pos), HIDX_NONE);
		hidx_insert(&t, 42, 5, same_hash, NULL);
		pos = hidx_start(&t, 42);
		assert_int_equal(hidx_next(&t, &pos), 5);
		assert_int_equal(hidx_next(&t, &pos), HIDX_NONE);
	}
	hidx_release(&t);
	assert_int_equal(t.cap, 0);
	assert_int_not_equal(hash_bytes("a", 1), hash_bytes("b", 1));
	assert_int_equal(hash_bytes("abc", 3), hash_bytes("abc", 3));
}

/* Hostile text for a terminal: controls and bidirectional formatting replaced, the rest kept. */
static void test_escape_terminal(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* ESC, C1 CSI, U+202E (right-to-left override), U+2066, U+061C; then é and a CJK char */
	escape_append(&sb, "a\x1b[2Jb\xc2\x9b" "c\xe2\x80\xae" "d\xe2\x81\xa6" "e\xd8\x9c" "f "
		      "\xc3\xa9\xe4\xb8\xad", ESCAPE_TERMINAL);
	assert_string_equal(strbuf_str(&sb), "a?[2Jb?c?d?e?f \xc3\xa9\xe4\xb8\xad");
	strbuf_reset(&sb);
	escape_append(&sb, "x;y\xe2\x80\x8f", ESCAPE_COLLAPSED);
	assert_string_equal(strbuf_str(&sb), "x:y?");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_growth_keeps_ids),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_stacks_share_prefixes),
		cmocka_unit_test(test_counts_and_threads),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_rate_known),
		cmocka_unit_test(test_hash_index_collisions),
		cmocka_unit_test(test_escape_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
