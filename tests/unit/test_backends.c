/*
 * Unit tests of the backends' table (src/sampler/choose.c) and what reads
 * it: every row complete and consistent with its ops, names that parse back,
 * the report's Backend line and the announcements in the words they had
 * before the table, the whole-stacks default and auto's order, the refusals
 * that need no probe, and the descriptor needs (src/cmd/limits.c) and the
 * name lists of help and errors (src/cmd/sampling.c), and check's verdict
 * on each backend, its access mechanism's (src/audit/env.c).
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

#include "audit/env.h"
#include "cmd/cmd.h"
#include "sampler/backend.h"
#include "sampler/sampler.h"
#include "target/privilege.h"

static void test_rows(void **state)
{
	enum backend parsed;

	(void)state;
	assert_null(backend_info(BACKEND_AUTO));
	assert_null(backend_info(BACKEND_COUNT));
	assert_int_equal(backend_parse("auto", &parsed), 0);
	assert_int_equal(parsed, BACKEND_AUTO);
	assert_string_equal(backend_name(BACKEND_AUTO), "auto");
	assert_int_equal(backend_parse("nope", &parsed), -EINVAL);
	for (int b = BACKEND_VM; b < BACKEND_COUNT; b++) {
		const struct backend_info *bi = backend_info((enum backend)b);

		assert_non_null(bi);
		assert_int_equal(bi->id, b);
		assert_non_null(bi->name);
		assert_true(bi->name[0]);
		assert_string_equal(backend_name((enum backend)b), bi->name);
		assert_int_equal(backend_parse(bi->name, &parsed), 0);
		assert_int_equal(parsed, b);
		assert_non_null(bi->ops);
		assert_non_null(bi->reads);
		assert_non_null(bi->header[0]);
		assert_non_null(bi->by_default);
		/* the header names the backend first, as the report shows it */
		assert_int_equal(strncmp(bi->header[0], bi->name, strlen(bi->name)), 0);
		/* whole stacks by default only where native frames can be read */
		if (!bi->native)
			assert_int_equal(bi->whole_stacks, 0);
	}
}

/* The report's Backend line, as before the table (saved profiles carry it). */
static void test_descriptions(void **state)
{
	static const struct {
		enum backend b;
		int native, kernel;
		const char *want;
	} cases[] = {
		{ BACKEND_BPF, 0, 0, "bpf (perf_event + BPF: Python frames at each sample's instant; "
				     "never stops the target)" },
		{ BACKEND_BPF, 1, 0, "bpf (perf_event + BPF: Python + native; never stops the target)" },
		{ BACKEND_BPF, 1, 1, "bpf (perf_event + BPF: Python + native + kernel; never stops "
				     "the target)" },
		{ BACKEND_PTRACE, 0, 0, "ptrace (Python frames; stops a running thread while "
					"reading it)" },
		{ BACKEND_PTRACE, 1, 0, "ptrace (Python + native; stops a running thread while "
					"reading it)" },
		{ BACKEND_PTRACE, 1, 1, "ptrace (Python + native + kernel; stops a running thread "
					"while reading it)" },
		{ BACKEND_VM, 0, 0, "vm (process_vm_readv; Python frames; never stops the target)" },
		{ BACKEND_VM, 1, 1, "vm (process_vm_readv; Python frames; never stops the target)" },
		{ BACKEND_AUTO, 0, 0, "vm (process_vm_readv; Python frames; never stops the target)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sampler_opts so;

		memset(&so, 0, sizeof(so));
		so.backend = cases[i].b;
		so.native = cases[i].native;
		so.kernel = cases[i].kernel;
		assert_string_equal(backend_description(&so), cases[i].want);
		/* a saved profile's Backend line finds its row again (the report's hints) */
		if (cases[i].b != BACKEND_AUTO)
			assert_ptr_equal(backend_info_described(cases[i].want),
					 backend_info(cases[i].b));
	}
	assert_null(backend_info_described("vmx (something else)"));
	assert_null(backend_info_described(""));
	/* only the reader that does not stop drops stacks for changing while read */
	assert_non_null(backend_info(BACKEND_VM)->changing_hint);
	assert_null(backend_info(BACKEND_PTRACE)->changing_hint);
	assert_null(backend_info(BACKEND_BPF)->changing_hint);
}

static void test_whole_stacks_and_order(void **state)
{
	(void)state;
	for (int m = MODE_CPU; m <= MODE_EXCEPTION; m++) {
		assert_true(backend_whole_stacks_default(BACKEND_BPF, (enum sample_mode)m));
		assert_int_equal(backend_whole_stacks_default(BACKEND_PTRACE, (enum sample_mode)m),
				 m == MODE_CPU);
		assert_false(backend_whole_stacks_default(BACKEND_VM, (enum sample_mode)m));
		assert_false(backend_whole_stacks_default(BACKEND_AUTO, (enum sample_mode)m));
	}
	assert_int_equal(backend_auto_pick(BACKEND_USABLE(BPF, 1) | BACKEND_USABLE(PTRACE, 1) |
					   BACKEND_USABLE(VM, 1)), BACKEND_BPF);
	assert_int_equal(backend_auto_pick(BACKEND_USABLE(BPF, 1) | BACKEND_USABLE(VM, 1)),
			 BACKEND_BPF);
	assert_int_equal(backend_auto_pick(BACKEND_USABLE(PTRACE, 1) | BACKEND_USABLE(VM, 1)),
			 BACKEND_PTRACE);
	assert_int_equal(backend_auto_pick(BACKEND_USABLE(VM, 1)), BACKEND_VM);
	assert_int_equal(backend_auto_pick(0), BACKEND_VM);     /* the last resort */
	/* the order lists show is the order auto picks in */
	assert_int_equal(backend_preferred(0), BACKEND_BPF);
	assert_int_equal(backend_preferred(1), BACKEND_PTRACE);
	assert_int_equal(backend_preferred(2), BACKEND_VM);
	assert_int_equal(backend_preferred(3), BACKEND_AUTO);
}

/* Choices that need no probe: a backend given, and the combinations refused. */
static void test_choose_without_probe(void **state)
{
	struct strbuf why = STRBUF_INIT, announce = STRBUF_INIT;
	struct sampler_opts so;

	(void)state;
	memset(&so, 0, sizeof(so));
	so.backend = BACKEND_VM;
	so.native = 1;
	assert_int_equal(backend_choose(&so, 0, &why, &announce), -EINVAL);
	assert_string_equal(strbuf_str(&why), "--native and --kernel need a backend that sees "
			    "native stacks: --backend ptrace or bpf (or leave --backend out)");
	strbuf_reset(&why);

	memset(&so, 0, sizeof(so));
	so.backend = BACKEND_PTRACE;
	so.python_only = 1;
	so.kernel = 1;
	assert_int_equal(backend_choose(&so, 0, &why, &announce), -EINVAL);
	assert_non_null(strstr(strbuf_str(&why), "--python-only cannot be given"));
	strbuf_reset(&why);

	/* ptrace asked for: whole stacks in cpu mode only, nothing announced */
	memset(&so, 0, sizeof(so));
	so.backend = BACKEND_PTRACE;
	assert_int_equal(backend_choose(&so, 0, &why, &announce), 0);
	assert_true(so.native);
	assert_false(so.stacks_asked);
	assert_false(so.backend_auto);
	memset(&so, 0, sizeof(so));
	so.backend = BACKEND_PTRACE;
	so.mode = MODE_WALL;
	assert_int_equal(backend_choose(&so, 0, &why, &announce), 0);
	assert_false(so.native);
	assert_int_equal(announce.len, 0);
	assert_int_equal(why.len, 0);
	strbuf_release(&why);
	strbuf_release(&announce);
}

/* The one fallback: bpf picked by auto could not start; pid 0 is our child. */
static void test_fall_back(void **state)
{
	struct strbuf announce = STRBUF_INIT;
	struct sampler_opts so;

	(void)state;
	memset(&so, 0, sizeof(so));
	so.backend = BACKEND_BPF;
	assert_int_equal(backend_fall_back(&so, 0, "x", &announce), -ENOENT);  /* the user's */
	so.backend_auto = 1;
	so.native = 1;
	assert_int_equal(backend_fall_back(&so, 0, "no BTF", &announce), 0);
	assert_int_equal(so.backend, BACKEND_PTRACE);
	assert_true(so.native);          /* cpu mode: ptrace's default too */
	assert_string_equal(strbuf_str(&announce), "the bpf backend could not start (no BTF): "
			    "going on with ptrace, a running thread is stopped while it is read");
	/* from ptrace there is nothing to fall back to */
	assert_int_equal(backend_fall_back(&so, 0, "x", &announce), -ENOENT);
	strbuf_release(&announce);
}

static void test_fd_need(void **state)
{
	struct sampler_opts so;

	(void)state;
	memset(&so, 0, sizeof(so));
	assert_int_equal(cmd_fd_need(&so, 10, 8), 14);       /* not chosen yet: the least */
	so.backend = BACKEND_VM;
	assert_int_equal(cmd_fd_need(&so, 10, 8), 14);
	so.backend = BACKEND_PTRACE;
	assert_int_equal(cmd_fd_need(&so, 10, 8), 18);       /* debug files of native frames */
	so.backend = BACKEND_BPF;
	assert_int_equal(cmd_fd_need(&so, 10, 8), 18 + 12 + 2 * 8);
	assert_int_equal(cmd_fd_need(&so, 10, 0), 18 + 12 + 2);
}

static void test_name_lists(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	cmd_backend_names(&sb, 0);
	assert_string_equal(strbuf_str(&sb), "vm, ptrace or bpf");
	strbuf_reset(&sb);
	cmd_backend_names(&sb, 1);
	assert_string_equal(strbuf_str(&sb), "auto, vm, ptrace or bpf");
	strbuf_reset(&sb);
	cmd_backend_help(&sb);
	assert_string_equal(strbuf_str(&sb), "auto (default: bpf where its program loads, else "
			    "ptrace, else vm for Python frames), bpf (each running thread read at "
			    "the sample's instant, nothing stopped; CAP_BPF + CAP_PERFMON), ptrace (a "
			    "running thread is stopped while it is read) or vm (never stops the "
			    "target; Python frames only; under-counts short calls on call-heavy "
			    "code)");
	strbuf_release(&sb);
}

/*
 * check judges a backend by how it reaches a target (its row's access):
 * a machine whose memory reads are refused, whose tracing works for
 * framewalk's own children only, and without the BPF backend built.
 */
static void test_verdict_by_access(void **state)
{
	struct audit_backend out[BACKEND_COUNT];
	struct audit_env e;
	int seen[3] = { 0 };

	(void)state;
	memset(&e, 0, sizeof(e));
	e.vm_err = -EPERM;
	e.ptrace_scope = 1;
	e.cap_last = 40;
	xsnprintf(e.user, sizeof(e.user), "someone");
	audit_backends(&e, NULL, out);
	for (int b = BACKEND_VM; b < BACKEND_COUNT; b++) {
		const struct audit_backend *r = &out[b];

		switch (backend_info((enum backend)b)->access) {
		case ACCESS_READ_MEMORY:
			assert_int_equal(r->status, AUDIT_UNUSABLE);
			assert_non_null(strstr(strbuf_str(&r->reason), "process_vm_readv"));
			seen[0] = 1;
			break;
		case ACCESS_TRACE:
			assert_int_equal(r->status, AUDIT_LIMITED);
			assert_non_null(strstr(strbuf_str(&r->reason), "that framewalk starts itself"));
			seen[1] = 1;
			break;
		case ACCESS_BPF:
			assert_int_equal(r->status, AUDIT_UNUSABLE);
			assert_int_equal(r->failure, AUDIT_NO_FEATURE);
			seen[2] = 1;
			break;
		}
	}
	/* each mechanism is some backend's: a judged one no row uses is dead */
	assert_true(seen[0] && seen[1] && seen[2]);
	audit_backends_release(out);
}

/* Whether any of r's fixes holds text. */
static int has_fix(const struct audit_backend *r, const char *text)
{
	for (size_t i = 0; i < r->nfixes; i++)
		if (strstr(r->fixes[i], text))
			return 1;
	return 0;
}

/*
 * The container advice names the capabilities from privilege.c's table:
 * a seccomp filter refusing the reads, and one refusing bpf() where
 * framewalk has every capability it asks for.
 */
static void test_container_fixes(void **state)
{
	struct audit_backend out[BACKEND_COUNT];
	struct audit_env e;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.vm_err = e.ptrace_err = -EPERM;
	e.seccomp = 2;
	e.in_container = 1;
	e.cap_last = 40;
	e.cap_bnd = ~0ull;
	e.bpf_built = 1;
	e.btf = e.sysfs = 1;
	e.bpf_load_err = -EPERM;
	e.cap_eff = FW_CAP_BIT(FW_CAP_BPF) | FW_CAP_BIT(FW_CAP_PERFMON);
	audit_backends(&e, NULL, out);
	for (int b = BACKEND_VM; b < BACKEND_COUNT; b++) {
		switch (backend_info((enum backend)b)->access) {
		case ACCESS_READ_MEMORY:
		case ACCESS_TRACE:
			assert_true(has_fix(&out[b], "docker run --cap-add SYS_PTRACE ... (Docker's "
					    "default seccomp profile"));
			break;
		case ACCESS_BPF:
			assert_true(has_fix(&out[b], "docker run --cap-add BPF --cap-add PERFMON ... "
					    "(Docker 20.10+"));
			break;
		}
	}
	audit_backends_release(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_descriptions),
		cmocka_unit_test(test_whole_stacks_and_order),
		cmocka_unit_test(test_choose_without_probe),
		cmocka_unit_test(test_fall_back),
		cmocka_unit_test(test_fd_need),
		cmocka_unit_test(test_name_lists),
		cmocka_unit_test(test_verdict_by_access),
		cmocka_unit_test(test_container_fixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
