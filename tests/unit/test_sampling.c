/*
 * Unit tests of the sampling options defined once (src/cmd/sampling.c):
 * each command gets the options its use names and no others, the values
 * land in struct sampler_opts with the command's defaults, the limits a
 * command sets on purpose hold (the agent's rate bound and modes), the
 * messages of bad values list what is accepted, and the help's defaults come
 * from the backends' table; and the environment the command layer reads for
 * the library below it (src/cmd/environ.c), handed down with the options.
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

#include "cmd/cmd.h"
#include "elf/elffile.h"

/* Parse a NULL-terminated argument list for use into so (defaults first). */
static int parse(const struct cmd_sampling_use *use, struct sampler_opts *so, ...)
{
	struct cmd_sampling_opts t;
	char *argv[16] = { "test" };
	int argc = 1, nargs, ret;
	va_list ap;

	va_start(ap, so);
	for (char *a; (a = va_arg(ap, char *)) && argc < 15;)
		argv[argc++] = a;
	va_end(ap);
	memset(so, 0, sizeof(*so));
	cmd_sampling_defaults(use, so);
	cmd_sampling_opts_init(&t, use, so);
	{
		const struct opt opts[] = { OPT_INCLUDE(t.table), OPT_TERMINATOR };
		const struct opt_command cmd = { "test", "usage: test\n", NULL, NULL, opts, 0 };

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	cmd_sampling_opts_release(&t);
	return ret;
}

/* Does the table made for use hold --name? */
static int takes(const struct cmd_sampling_use *use, const char *name)
{
	struct cmd_sampling_opts t;
	struct sampler_opts so;
	int found = 0;

	memset(&so, 0, sizeof(so));
	cmd_sampling_opts_init(&t, use, &so);
	for (size_t i = 0; i < t.n; i++)
		found |= !strcmp(t.table[i].long_name, name);
	assert_int_equal(t.table[t.n].type, OPT_END);
	cmd_sampling_opts_release(&t);
	return found;
}

static const char *help_of(struct cmd_sampling_opts *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->table[i].long_name, name))
			return t->table[i].help;
	return NULL;
}

static void test_values(void **state)
{
	struct sampler_opts so;

	(void)state;
	assert_int_equal(parse(&cmd_sampling_record, &so, NULL), 0);
	assert_true(so.rate_hz == 100);
	assert_int_equal(so.mode, MODE_CPU);
	assert_int_equal(so.backend, BACKEND_AUTO);
	assert_int_equal(parse(&cmd_sampling_record, &so, "-r", "1k", "-d", "2.5", "--mode", "wall",
			       "--backend", "ptrace", "--async", "--subprocesses", "--no-inline",
			       "--no-debuginfod", NULL), 0);
	assert_true(so.rate_hz == 1000);
	assert_true(so.duration_s == 2.5);
	assert_int_equal(so.mode, MODE_WALL);
	assert_int_equal(so.backend, BACKEND_PTRACE);
	assert_true(so.async_tasks && so.subprocesses && so.no_inline && so.no_debuginfod);
	assert_false(so.native);
	/* --kernel and --native-all ask for native frames too; --nonblocking is vm */
	assert_int_equal(parse(&cmd_sampling_record, &so, "--kernel", "--nonblocking", NULL), 0);
	assert_true(so.kernel && so.native);
	assert_int_equal(so.backend, BACKEND_VM);
	assert_int_equal(parse(&cmd_sampling_dump, &so, "--native-all", NULL), 0);
	assert_true(so.native_all && so.native);
	assert_int_equal(parse(&cmd_sampling_agent, &so, "--python-only", NULL), 0);
	assert_true(so.rate_hz == 19);
	assert_true(so.python_only);
}

/* What each command takes, and the limits it sets on purpose. */
static void test_uses(void **state)
{
	static const char *const all[] = { "subprocesses", "duration", "rate", "mode", "async",
					   "python-only", "native", "kernel", "native-all",
					   "no-inline", "no-debuginfod", "backend", "nonblocking" };
	struct sampler_opts so;

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_true(takes(&cmd_sampling_record, all[i]));
	assert_false(takes(&cmd_sampling_top, "kernel"));
	assert_false(takes(&cmd_sampling_top, "subprocesses"));
	assert_true(takes(&cmd_sampling_top, "nonblocking"));
	assert_false(takes(&cmd_sampling_dump, "rate"));
	assert_false(takes(&cmd_sampling_dump, "backend"));
	assert_false(takes(&cmd_sampling_dump, "nonblocking"));   /* dump has its own */
	assert_false(takes(&cmd_sampling_agent, "duration"));
	assert_false(takes(&cmd_sampling_agent, "async"));
	assert_false(takes(&cmd_sampling_agent, "nonblocking"));
	assert_int_equal(parse(&cmd_sampling_top, &so, "--kernel", NULL), FW_EXIT_USAGE);
	/* the agent: at most 10 kHz, and no gil mode */
	assert_int_equal(parse(&cmd_sampling_agent, &so, "-r", "10k", NULL), 0);
	assert_int_equal(parse(&cmd_sampling_agent, &so, "-r", "11k", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&cmd_sampling_agent, &so, "--mode", "exception", NULL), 0);
	assert_int_equal(so.mode, MODE_EXCEPTION);
	assert_int_equal(parse(&cmd_sampling_agent, &so, "--mode", "gil", NULL), FW_EXIT_USAGE);
	assert_int_equal(parse(&cmd_sampling_record, &so, "--mode", "gil", NULL), 0);
	assert_int_equal(parse(&cmd_sampling_record, &so, "-r", "1M", NULL), 0);
}

/* The messages of bad values, through the callbacks of the made table. */
static void test_messages(void **state)
{
	static const struct {
		const struct cmd_sampling_use *use;
		const char *name, *arg, *want;
	} cases[] = {
		{ &cmd_sampling_record, "rate", "abc", "bad rate: 'abc' (e.g. 100, 1k, 10khz; "
						       "1 Hz to 1 MHz)" },
		{ &cmd_sampling_agent, "rate", "20k", "bad rate: '20k' (e.g. 100, 1k, 10khz; "
						      "1 Hz to 10 kHz)" },
		{ &cmd_sampling_record, "duration", "-1", "bad duration: '-1' (seconds, e.g. 10 "
							  "or 2.5)" },
		{ &cmd_sampling_record, "mode", "x", "unknown mode: 'x' (cpu, wall, gil or "
						     "exception)" },
		{ &cmd_sampling_agent, "mode", "gil", "unknown mode: 'gil' (cpu, wall or "
						      "exception)" },
		{ &cmd_sampling_top, "backend", "fast", "unknown backend: 'fast' (auto, vm, "
							"ptrace or bpf)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		struct cmd_sampling_opts t;
		struct sampler_opts so;
		const struct opt *o = NULL;

		memset(&so, 0, sizeof(so));
		cmd_sampling_opts_init(&t, cases[i].use, &so);
		for (size_t k = 0; k < t.n; k++)
			if (!strcmp(t.table[k].long_name, cases[i].name))
				o = &t.table[k];
		assert_non_null(o);
		assert_int_not_equal(o->cb(o, cases[i].arg, &err), 0);
		assert_string_equal(strbuf_str(&err), cases[i].want);
		strbuf_release(&err);
		cmd_sampling_opts_release(&t);
	}
}

/* The help says each command's defaults; the stacks' defaults from the backends' table. */
static void test_help(void **state)
{
	struct cmd_sampling_opts t;
	struct sampler_opts so;

	(void)state;
	memset(&so, 0, sizeof(so));
	cmd_sampling_opts_init(&t, &cmd_sampling_record, &so);
	assert_string_equal(help_of(&t, "native"), "whole stacks: Python, C extensions, native "
			    "libraries (the default with bpf, and with ptrace in cpu mode)");
	assert_string_equal(help_of(&t, "python-only"), "Python frames only (the default with "
			    "ptrace in wall, gil and exception modes, and with vm)");
	assert_string_equal(help_of(&t, "rate"), "samples per second: 100, 1k, 10khz (default 100)");
	assert_string_equal(help_of(&t, "duration"), "stop after SECS seconds (default: until "
			    "Ctrl-C or exit)");
	assert_non_null(strstr(help_of(&t, "mode"), "cpu (default: threads on a CPU), wall ("));
	assert_non_null(strstr(help_of(&t, "backend"), "CAP_BPF + CAP_PERFMON"));
	cmd_sampling_opts_release(&t);

	cmd_sampling_opts_init(&t, &cmd_sampling_agent, &so);
	assert_string_equal(help_of(&t, "rate"), "samples per second: 100, 1k, 10khz (default 19; "
			    "at most 10 kHz)");
	assert_string_equal(help_of(&t, "python-only"), "Python frames only (the default with "
			    "ptrace in wall and exception modes, and with vm)");
	assert_null(strstr(help_of(&t, "mode"), "gil"));
	cmd_sampling_opts_release(&t);

	/* dump chooses no backend: no default to state */
	cmd_sampling_opts_init(&t, &cmd_sampling_dump, &so);
	assert_string_equal(help_of(&t, "native"), "whole stacks: Python, C extensions, native "
			    "libraries");
	cmd_sampling_opts_release(&t);
}

static void test_same(void **state)
{
	struct sampler_opts a, b;

	(void)state;
	assert_int_equal(parse(&cmd_sampling_agent, &a, "-r", "49", "--mode", "wall", NULL), 0);
	assert_int_equal(parse(&cmd_sampling_agent, &b, "--mode", "wall", "-r", "49", NULL), 0);
	b.announce = 1;             /* not an option: not compared */
	assert_true(cmd_sampling_same(&a, &b));
	assert_int_equal(parse(&cmd_sampling_agent, &b, "-r", "49", "--mode", "wall", "--kernel",
			       NULL), 0);
	assert_false(cmd_sampling_same(&a, &b));
}

/* Read once, as main() set it before anything asked. */
static void test_environment(void **state)
{
	const struct elf_env *env = cmd_elf_env();
	struct sampler_opts so;

	(void)state;
	assert_string_equal(env->debug.urls, "http://127.0.0.1:1");
	assert_string_equal(env->debug.cache_dir, "/tmp/xdg/debuginfod_client");
	assert_true(env->debug.budget_s == 2.5);
	assert_true(env->trace_fp);
	assert_int_equal(parse(&cmd_sampling_dump, &so, NULL), 0);
	assert_ptr_equal(so.env, env);
	/* later changes are not seen: it is read once */
	setenv("FRAMEWALK_DEBUGINFOD_TIMEOUT", "9", 1);
	assert_true(cmd_elf_env()->debug.budget_s == 2.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_uses),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_same),
	};

	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
	setenv("FRAMEWALK_DEBUGINFOD_TIMEOUT", "2.5", 1);
	setenv("FRAMEWALK_DEBUG_FP", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
