/*
 * Unit tests for merge_stack's folding rule (src/sampler/merge.c): native
 * frames fold by position and module, so a stripped interpreter (names
 * like "python3.15+0x77644b") folds exactly as a named one; frames of other
 * modules stay; JIT code folds into its Python frame, or shows as
 * "[jit] NAME" with native_all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sampler/merge.h"
#include "util/strbuf.h"

#define MAXF 64

static struct fw_module interp = { .path = "/usr/bin/python3.15", .name = "python3.15" };
static struct fw_module libc = { .path = "/usr/lib/x86_64-linux-gnu/libc.so.6", .name = "libc.so.6" };
static struct fw_module libz = { .path = "/usr/lib/libz.so.1", .name = "libz.so.1" };
static struct fw_module app = { .path = "/usr/bin/embedder", .name = "embedder" };
static struct fw_module ext = { .path = "/app/fwext.so", .name = "fwext.so" };

/* A stack under construction: native frames and Python frames innermost first. */
struct stack {
	struct unwind_result uw;
	struct native_symbol syms[MAXF];
	struct py_code codes[MAXF];
	struct py_frame_info py[MAXF];
	size_t npy;
};

static void native(struct stack *s, const char *name, struct fw_module *m)
{
	size_t i = s->uw.n++;

	memset(&s->syms[i], 0, sizeof(s->syms[i]));
	s->syms[i].name = name;
	s->syms[i].module = m;
	s->syms[i].is_anon = m == NULL;
	s->syms[i].is_unnamed = strstr(name, "+0x") != NULL;
	s->uw.pcs[i] = 0x1000 + i;
	s->uw.sps[i] = 0x7000 + 16 * i;
}

/* The evaluator: by name (no shim address), as before 3.12. */
static void eval(struct stack *s, const char *name)
{
	native(s, name, &interp);
	s->syms[s->uw.n - 1].is_eval = 1;
}

static void python(struct stack *s, const char *name, int entry)
{
	size_t i = s->npy++;

	memset(&s->codes[i], 0, sizeof(s->codes[i]));
	s->codes[i].name = (char *)name;
	s->codes[i].file = (char *)"/app/x.py";
	memset(&s->py[i], 0, sizeof(s->py[i]));
	s->py[i].code = &s->codes[i];
	s->py[i].line = 1;
	s->py[i].entry = entry;
}

/* Merge and compare the names, outermost first, with want (NULL-terminated). */
static void check(struct stack *s, int native_all, const char *const *want)
{
	struct profile p;
	struct merge_input in;
	uint32_t out[MAXF * 2];
	size_t n, leftover;
	struct strbuf got = STRBUF_INIT, exp = STRBUF_INIT;

	profile_init(&p);
	memset(&in, 0, sizeof(in));
	in.native = &s->uw;
	in.syms = s->syms;
	in.py = s->py;
	in.npy = s->npy;
	in.native_all = native_all;
	n = merge_stack(&p, &in, out, MAXF * 2, &leftover);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&got, "%s | ", profile_str(&p, p.frames[out[i]].name));
	for (size_t k = 0; want[k]; k++)
		strbuf_addf(&exp, "%s | ", want[k]);
	if (strcmp(strbuf_str(&got), strbuf_str(&exp)))
		fail_msg("got:  %s\nwant: %s", strbuf_str(&got), strbuf_str(&exp));
	strbuf_release(&got);
	strbuf_release(&exp);
	assert_int_equal(leftover, 0);
	profile_release(&p);
	/* Python frames keep their interned ids: reset for the next merge. */
	for (size_t i = 0; i < s->npy; i++)
		s->codes[i].user_name = s->codes[i].user_file = 0;
}

/* Debian's stripped python3.15 in zlib: _start -> Py_BytesMain -> <module>. */
static void main_thread_stripped(void **state)
{
	static struct stack s;
	static const char *const folded[] = {
		"_start", "Py_BytesMain", "<module>", "generate_report", "compress_report",
		"_Py_BuiltinCallFastWithKeywords_StackRef", "python3.15+0x5009aa", "deflate",
		"libz.so.1+0x4a92", NULL,
	};
	static const char *const all[] = {
		"_start", "__libc_start_main", "libc.so.6+0x29f49", "Py_BytesMain", "Py_RunMain",
		"python3.15+0x7957dc", "python3.15+0x77644b", "PyEval_EvalCode",
		"python3.15+0x2a1b30", "<module>", "generate_report", "compress_report",
		"_Py_BuiltinCallFastWithKeywords_StackRef", "python3.15+0x5009aa", "deflate",
		"libz.so.1+0x4a92", NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "libz.so.1+0x4a92", &libz);
	native(&s, "deflate", &libz);
	native(&s, "python3.15+0x5009aa", &interp);
	native(&s, "_Py_BuiltinCallFastWithKeywords_StackRef", &interp);
	eval(&s, "python3.15+0x2a1b30");
	native(&s, "PyEval_EvalCode", &interp);
	native(&s, "python3.15+0x77644b", &interp);
	native(&s, "python3.15+0x7957dc", &interp);
	native(&s, "Py_RunMain", &interp);
	native(&s, "Py_BytesMain", &interp);
	native(&s, "libc.so.6+0x29f49", &libc);
	native(&s, "__libc_start_main", &libc);
	native(&s, "_start", &interp);
	python(&s, "compress_report", 0);
	python(&s, "generate_report", 0);
	python(&s, "<module>", 1);
	check(&s, 0, folded);
	check(&s, 1, all);
}

/* A threading thread: clone3 -> the interpreter's start routine -> Python. */
static void thread_entry(void **state)
{
	static struct stack s;
	/*
	 * The entry stays (the proof the stack is whole) and the interpreter's
	 * start routine would, by position; unnamed, it says no more than the
	 * Python frame after it, so it folds: the same shape as the main
	 * thread's `_start -> Py_BytesMain -> <module>` less the name.
	 */
	static const char *const folded[] = {
		"libc.so.6+0x112f91", "Thread._bootstrap", "run", "futex_wait", NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "futex_wait", &libc);
	eval(&s, "python3.15+0x2a1b30");
	native(&s, "python3.15+0x44c307", &interp);
	native(&s, "python3.15+0x73b8f0", &interp);
	native(&s, "python3.15+0x73b90b", &interp);
	native(&s, "start_thread", &libc);
	native(&s, "libc.so.6+0x112f91", &libc);
	python(&s, "run", 0);
	python(&s, "Thread._bootstrap", 1);
	check(&s, 0, folded);
}

/* The same thread where the files have names: the start routine stays. */
static void thread_entry_named(void **state)
{
	static struct stack s;
	static const char *const folded[] = {
		"clone3", "pythread_wrapper", "Thread._bootstrap", "run", "futex_wait", NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "futex_wait", &libc);
	eval(&s, "_PyEval_EvalFrameDefault");
	native(&s, "PyObject_Call", &interp);
	native(&s, "thread_run", &interp);
	native(&s, "pythread_wrapper", &interp);
	native(&s, "start_thread", &libc);
	native(&s, "clone3", &libc);
	python(&s, "run", 0);
	python(&s, "Thread._bootstrap", 1);
	check(&s, 0, folded);
}

/*
 * An embedding program and an extension calling back into Python: other
 * modules' frames stay, the interpreter's between Python frames fold, the
 * first interpreter frame after the embedder's stays.
 */
static void embedder_and_callback(void **state)
{
	static struct stack s;
	static const char *const folded[] = {
		"_start", "main", "run_script", "PyObject_Call", "outer", "mid", "ext_callback",
		"leaf", "memcpy", NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "memcpy", &libc);
	eval(&s, "_PyEval_EvalFrameDefault");
	native(&s, "python3.15+0x1234", &interp);       /* vectorcall, stripped */
	native(&s, "ext_callback", &ext);
	native(&s, "PyObject_CallOneArg", &interp);
	eval(&s, "_PyEval_EvalFrameDefault");
	native(&s, "_PyEval_Vector", &interp);
	native(&s, "PyObject_Call", &interp);
	native(&s, "run_script", &app);
	native(&s, "main", &app);
	native(&s, "__libc_start_call_main", &libc);
	native(&s, "_start", &app);
	python(&s, "leaf", 1);
	python(&s, "mid", 0);
	python(&s, "outer", 1);
	check(&s, 0, folded);
}

/* JIT code (anonymous, called from the evaluator) folds into its Python frame. */
static void jit_frames(void **state)
{
	static struct stack s;
	static const char *const folded[] = {
		"_start", "Py_BytesMain", "<module>", "stage_two", "hot_leaf", "_Py_HandlePending",
		NULL,
	};
	static const char *const all[] = {
		"_start", "__libc_start_main", "Py_BytesMain", "python3.15+0x2a1b30", "<module>",
		"stage_two", "hot_leaf",
		"[jit] hot_leaf", "[jit] hot_leaf", "_Py_HandlePending", NULL,
	};
	static const char *const leaf[] = { "_start", "Py_BytesMain", "<module>", "hot_leaf", NULL };

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "_Py_HandlePending", &interp);
	native(&s, "[anon]+0x7f635ca8aecf", NULL);
	native(&s, "[anon]+0x7f635ca8a000", NULL);
	eval(&s, "python3.15+0x2a1b30");
	native(&s, "Py_BytesMain", &interp);
	native(&s, "__libc_start_main", &libc);
	native(&s, "_start", &interp);
	python(&s, "hot_leaf", 0);
	python(&s, "stage_two", 0);
	python(&s, "<module>", 1);
	check(&s, 0, folded);
	check(&s, 1, all);

	/* The sample's pc in JIT code itself. */
	memset(&s, 0, sizeof(s));
	native(&s, "[anon]+0x7f635ca8aecf", NULL);
	eval(&s, "python3.15+0x2a1b30");
	native(&s, "Py_BytesMain", &interp);
	native(&s, "__libc_start_main", &libc);
	native(&s, "_start", &interp);
	python(&s, "hot_leaf", 0);
	python(&s, "<module>", 1);
	check(&s, 0, leaf);
}

/* Anonymous code not called by the interpreter (a libffi closure) stays. */
static void anon_not_jit(void **state)
{
	static struct stack s;
	static const char *const folded[] = {
		"_start", "Py_BytesMain", "<module>", "ext_sort", "qsort", "[anon]+0x7f0000001000",
		NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "[anon]+0x7f0000001000", NULL);
	native(&s, "qsort", &libc);
	native(&s, "ext_sort", &ext);
	eval(&s, "python3.15+0x2a1b30");
	native(&s, "Py_BytesMain", &interp);
	native(&s, "__libc_start_main", &libc);
	native(&s, "_start", &interp);
	python(&s, "<module>", 1);
	check(&s, 0, folded);
}

/* Without Python frames nothing folds. */
static void native_only(void **state)
{
	static struct stack s;
	static const char *const all[] = {
		"clone3", "start_thread", "python3.15+0x1", "python3.15+0x2", "nanosleep", NULL,
	};

	(void)state;
	memset(&s, 0, sizeof(s));
	native(&s, "nanosleep", &libc);
	native(&s, "python3.15+0x2", &interp);
	native(&s, "python3.15+0x1", &interp);
	native(&s, "start_thread", &libc);
	native(&s, "clone3", &libc);
	check(&s, 0, all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(main_thread_stripped),
		cmocka_unit_test(thread_entry),
		cmocka_unit_test(thread_entry_named),
		cmocka_unit_test(embedder_and_callback),
		cmocka_unit_test(jit_frames),
		cmocka_unit_test(anon_not_jit),
		cmocka_unit_test(native_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
