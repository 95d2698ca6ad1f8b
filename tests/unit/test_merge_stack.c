/*
 * Unit tests of the stack merge (src/sampler/merge.c) over crafted native
 * unwinds, symbols and Python frames: each evaluator frame takes the Python
 * frames it ran up to its entry frame, 3.12+'s shim address wins over the
 * evaluator's name, interpreter call machinery is folded unless asked for,
 * kernel frames and the wait leaf go innermost, Python frames no evaluator
 * claimed stay outermost and are counted, frames are interned once and the
 * capacity keeps the innermost ones. The native frames here belong to no
 * module; the folding rule by position and module is test_merge.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "sampler/merge.h"

#define MAXF 32

struct scene {
	struct profile p;
	struct unwind_result uw;
	struct native_symbol syms[8];
	struct py_code codes[8];
	struct py_frame_info py[8];
	size_t npy;
};

/* A native frame, innermost first; its stack frame spans [sp, next frame's sp). */
static void native(struct scene *s, const char *name, uint64_t sp, int is_eval, int internal)
{
	size_t i = s->uw.n++;

	s->uw.pcs[i] = 0x1000 + i;
	s->uw.sps[i] = sp;
	memset(&s->syms[i], 0, sizeof(s->syms[i]));
	s->syms[i].name = name;
	s->syms[i].is_eval = is_eval;
	s->syms[i].is_internal = internal;
}

/* A Python frame, innermost first. */
static void python(struct scene *s, const char *name, int line, int entry, uint64_t shim)
{
	size_t i = s->npy++;

	memset(&s->codes[i], 0, sizeof(s->codes[i]));
	s->codes[i].name = (char *)name;
	s->codes[i].file = (char *)"app.py";
	s->py[i].code = &s->codes[i];
	s->py[i].line = line;
	s->py[i].entry = entry;
	s->py[i].shim = shim;
}

static void scene_init(struct scene *s)
{
	memset(s, 0, sizeof(*s));
	profile_init(&s->p);
}

/* The merged stack as "outer;...;inner" names, and the leftover count. */
static void merged(struct scene *s, int with_native, int native_all, char **kernel,
		   size_t nkernel, const char *wait, char *out, size_t size, size_t *leftover)
{
	struct merge_input in = { 0 };
	uint32_t frames[MAXF];
	size_t n, len = 0;

	in.native = with_native ? &s->uw : NULL;
	in.syms = s->syms;
	in.py = s->py;
	in.npy = s->npy;
	in.kernel = kernel;
	in.nkernel = nkernel;
	in.native_all = native_all;
	in.wait = wait;
	n = merge_stack(&s->p, &in, frames, MAXF, leftover);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ";" : "",
					profile_str(&s->p, s->p.frames[frames[i]].name));
}

/* main -> eval(c) -> PyObject_Call -> eval(b, a) -> memcpy */
static void two_eval_calls(struct scene *s, int named_eval)
{
	scene_init(s);
	native(s, "memcpy", 0x100, 0, 0);
	native(s, "_PyEval_EvalFrameDefault", 0x200, named_eval, 0);
	native(s, "PyObject_Call", 0x300, 0, 1);
	native(s, "_PyEval_EvalFrameDefault", 0x400, named_eval, 0);
	native(s, "main", 0x500, 0, 0);
	python(s, "a", 3, 0, 0);
	python(s, "b", 2, 1, 0);
	python(s, "c", 1, 1, 0);
}

static void test_python_only(void **state)
{
	struct scene s;
	char out[256];
	size_t left = 99;

	(void)state;
	scene_init(&s);
	python(&s, "inner", 3, 0, 0);
	python(&s, "outer", 1, 1, 0);
	merged(&s, 0, 0, NULL, 0, "[wait] futex", out, sizeof(out), &left);
	assert_string_equal(out, "outer;inner;[wait] futex");
	assert_int_equal(left, 0);          /* nothing to claim them: not a mismatch */
	profile_release(&s.p);
}

static void test_eval_frames_by_name(void **state)
{
	struct scene s;
	char out[256];
	size_t left;

	(void)state;
	two_eval_calls(&s, 1);
	merged(&s, 1, 0, NULL, 0, NULL, out, sizeof(out), &left);
	/* the call machinery between the two Python groups is folded away */
	assert_string_equal(out, "main;c;b;a;memcpy");
	assert_int_equal(left, 0);
	merged(&s, 1, 1, NULL, 0, NULL, out, sizeof(out), &left);
	assert_string_equal(out, "main;_PyEval_EvalFrameDefault;c;PyObject_Call;"
			    "_PyEval_EvalFrameDefault;b;a;memcpy");
	profile_release(&s.p);
}

static void test_shim_decides(void **state)
{
	struct scene s;
	char out[256];
	size_t left;

	(void)state;
	/*
	 * 3.12+: the entry frames' shims lie inside the native frames that ran
	 * them, whatever those are called (a stripped interpreter has no name).
	 */
	two_eval_calls(&s, 0);
	s.py[1].shim = 0x250;   /* in [0x200, 0x300): the first evaluator's frame */
	s.py[2].shim = 0x480;   /* in [0x400, 0x500) */
	merged(&s, 1, 0, NULL, 0, NULL, out, sizeof(out), &left);
	assert_string_equal(out, "main;c;b;a;memcpy");
	assert_int_equal(left, 0);
	/*
	 * The shim outranks the name: an evaluator whose frame does not hold
	 * the group's shim stays a native frame, and the one that holds it
	 * takes the group; c, whose evaluator is gone, is left over.
	 */
	profile_release(&s.p);
	two_eval_calls(&s, 1);
	s.py[1].shim = 0x480;   /* in the second evaluator's frame */
	merged(&s, 1, 0, NULL, 0, NULL, out, sizeof(out), &left);
	assert_string_equal(out, "c;main;b;a;_PyEval_EvalFrameDefault;memcpy");
	assert_int_equal(left, 1);
	profile_release(&s.p);
}

static void test_leftover_python(void **state)
{
	struct scene s;
	char out[256];
	size_t left;

	(void)state;
	scene_init(&s);
	native(&s, "memcpy", 0x100, 0, 0);
	native(&s, "main", 0x200, 0, 0);
	python(&s, "f", 1, 0, 0);
	python(&s, "g", 2, 1, 0);
	merged(&s, 1, 0, NULL, 0, NULL, out, sizeof(out), &left);
	/* no evaluator claimed them: outermost, in order, and counted */
	assert_string_equal(out, "g;f;main;memcpy");
	assert_int_equal(left, 2);
	profile_release(&s.p);
}

static void test_kernel_innermost(void **state)
{
	struct scene s;
	char *kernel[] = { (char *)"schedule", (char *)"do_syscall_64" };
	char out[256];
	size_t left;
	uint32_t frames[MAXF];
	struct merge_input in = { 0 };
	size_t n;

	(void)state;
	two_eval_calls(&s, 1);
	merged(&s, 1, 0, kernel, 2, NULL, out, sizeof(out), &left);
	assert_string_equal(out, "main;c;b;a;memcpy;do_syscall_64;schedule");
	/* frames are interned once: the same merge twice gives the same ids */
	in.native = &s.uw;
	in.syms = s.syms;
	in.py = s.py;
	in.npy = s.npy;
	n = merge_stack(&s.p, &in, frames, MAXF, &left);
	assert_int_equal(n, 5);
	assert_int_equal(s.p.frames[frames[1]].kind, FRAME_PYTHON);
	assert_int_equal(s.p.frames[frames[1]].line, 1);
	assert_int_equal(s.p.frames[frames[0]].kind, FRAME_NATIVE);
	assert_int_equal(merge_stack(&s.p, &in, frames + n, MAXF - n, &left), n);
	assert_memory_equal(frames, frames + n, n * sizeof(*frames));
	/* the capacity caps the stack (its innermost frames are kept) */
	assert_int_equal(merge_stack(&s.p, &in, frames, 2, &left), 2);
	profile_release(&s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_only),
		cmocka_unit_test(test_eval_frames_by_name),
		cmocka_unit_test(test_shim_decides),
		cmocka_unit_test(test_leftover_python),
		cmocka_unit_test(test_kernel_innermost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
