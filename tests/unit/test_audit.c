/*
 * Unit tests for the pure parts of `framewalk check`: the _sysconfigdata
 * tokenizer (pprint's layout, escapes, malformed input), the CFLAGS rule,
 * the prologue matcher, the module verdict thresholds, and path resolution
 * inside a sysroot (symlinks that must not escape it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <fcntl.h>
#include <libelf.h>

#include "arch/arch.h"
#include "elf/fpaudit.h"
#include "audit/install.h"
#include "audit/sysconfig.h"
#include "util/strbuf.h"

struct seen {
	char cflags[256], config_args[256], abiflags[16], odd[64];
	long shared, gil;
	int keys;
};

static void collect(const char *key, const char *str, long num, void *arg)
{
	struct seen *s = arg;

	s->keys++;
	if (!strcmp(key, "CFLAGS") && str)
		snprintf(s->cflags, sizeof(s->cflags), "%s", str);
	else if (!strcmp(key, "CONFIG_ARGS") && str)
		snprintf(s->config_args, sizeof(s->config_args), "%s", str);
	else if (!strcmp(key, "ABIFLAGS") && str)
		snprintf(s->abiflags, sizeof(s->abiflags), "%s", str);
	else if (!strcmp(key, "ODD") && str)
		snprintf(s->odd, sizeof(s->odd), "%s", str);
	else if (!strcmp(key, "Py_ENABLE_SHARED") && !str)
		s->shared = num;
	else if (!strcmp(key, "Py_GIL_DISABLED") && !str)
		s->gil = num;
}

static void test_sysconfig_pprint(void **state)
{
	/* The layout pprint writes: first key on the brace line, long strings split. */
	static const char text[] =
		"# system configuration generated and used by the sysconfig module\n"
		"build_time_vars = {'ABIFLAGS': 't',\n"
		" 'CFLAGS': '-fno-omit-frame-pointer -O2 -Wall',\n"
		" 'CONFIG_ARGS': \"'--prefix=/opt/py' '--enable-shared' \"\n"
		"                \"'LDFLAGS=-Wl,-rpath,/opt/py/lib'\",\n"
		" 'TUPLE': ('a', 'b'),\n"
		" 'ODD': 'it\\'s \\\\ \\x41\\n',\n"
		" 'Py_ENABLE_SHARED': 1,\n"
		" 'Py_GIL_DISABLED': 0,\n"
		" 'LIST': [1, 2, {'x': 'y'}],\n"
		" 'NEG': -5}\n";
	struct seen s = { 0 };
	int n;

	(void)state;
	s.shared = s.gil = -1;
	n = sysconfig_parse(text, sizeof(text) - 1, collect, &s);
	assert_int_equal(n, 7);      /* the tuple and the list are skipped */
	assert_string_equal(s.abiflags, "t");
	assert_string_equal(s.cflags, "-fno-omit-frame-pointer -O2 -Wall");
	assert_string_equal(s.config_args,
			    "'--prefix=/opt/py' '--enable-shared' 'LDFLAGS=-Wl,-rpath,/opt/py/lib'");
	assert_string_equal(s.odd, "it's \\ A\n");
	assert_int_equal(s.shared, 1);
	assert_int_equal(s.gil, 0);
}

static void test_sysconfig_parenthesised(void **state)
{
	/* Older pprint: adjacent literals inside parentheses. */
	static const char text[] =
		"build_time_vars = {\n"
		"    'CFLAGS': ('-O3 '\n"
		"               '-fno-omit-frame-pointer'),\n"
		"}\n";
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(sysconfig_parse(text, sizeof(text) - 1, collect, &s), 1);
	assert_string_equal(s.cflags, "-O3 -fno-omit-frame-pointer");
}

static void test_sysconfig_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"x = 1\n",
		"build_time_vars = {'CFLAGS': '-O2",         /* unterminated string */
		"build_time_vars = {'CFLAGS': '-O2',",       /* no closing brace */
		"build_time_vars = {'CFLAGS' '-O2'}",        /* no colon */
		"build_time_vars = {'A': 'x\ny'}",           /* newline inside a literal */
		"build_time_vars = {'A': [1, 2",             /* unterminated list */
	};
	struct seen s = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sysconfig_parse(bad[i], strlen(bad[i]), collect, &s), -EINVAL);
}

/* Every call the parser makes, in order, as text: two parses agree iff equal. */
static void trace(const char *key, const char *str, long num, void *arg)
{
	struct strbuf *sb = arg;

	if (str)
		strbuf_addf(sb, "%s='%s';", key, str);
	else
		strbuf_addf(sb, "%s=%ld;", key, num);
}

static int parse_traced(const char *text, size_t len, struct strbuf *sb)
{
	strbuf_reset(sb);
	return sysconfig_parse(text, len, trace, sb);
}

/*
 * Random dict-ish text: whatever it is, the parser's result and the calls it
 * makes depend only on the first n bytes. The same n bytes are parsed followed
 * by bytes that would change a parse that looked past n (a closing brace,
 * digits that extend a number, a quote), and alone at the end of a heap block
 * of exactly n bytes (an over-read there stops a sanitizer build). A success
 * reports as many keys as it made calls.
 */
static void test_sysconfig_garbage(void **state)
{
	static const char *const tails[] = { "}", "99}", "'}", "\n" };
	static const char head[] = "build_time_vars = {";
	const size_t hlen = sizeof(head) - 1;
	char buf[512 + 8];
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	unsigned seed = 12345;
	int ok = 0;

	(void)state;
	memcpy(buf, head, hlen);
	for (int round = 0; round < 2000; round++) {
		size_t n = hlen + (size_t)(seed % (512 - hlen));
		char *exact;
		int ret, calls = 0;

		for (size_t i = hlen; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = "'\"(),:{}[]\\ \nab01-#"[(seed >> 16) % 19];
		}
		exact = malloc(n);
		assert_non_null(exact);
		memcpy(exact, buf, n);
		ret = parse_traced(exact, n, &want);
		free(exact);
		assert_true(ret == -EINVAL || ret >= 0);
		for (const char *p = strbuf_str(&want); *p; p++)
			calls += *p == ';';
		if (ret >= 0) {
			assert_int_equal(ret, calls);
			ok++;
		}
		for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
			memcpy(buf + n, tails[t], strlen(tails[t]));
			assert_int_equal(parse_traced(buf, n, &got), ret);
			assert_string_equal(strbuf_str(&got), strbuf_str(&want));
		}
	}
	/* The generator reaches complete dicts, so the success path is exercised. */
	assert_true(ok > 0);
	strbuf_release(&want);
	strbuf_release(&got);
}

static enum sysconfig_fp fp_of(const char *cflags, const char *want_why)
{
	struct strbuf why = STRBUF_INIT;
	enum sysconfig_fp v = sysconfig_frame_pointers(cflags, &why);

	if (want_why)
		assert_string_equal(strbuf_str(&why), want_why);
	strbuf_release(&why);
	return v;
}

static void test_cflags_rule(void **state)
{
	(void)state;
	assert_int_equal(fp_of("-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -O2",
			       "-fno-omit-frame-pointer"), SYSCONFIG_FP_WITH);
	assert_int_equal(fp_of("-fno-strict-overflow -DNDEBUG -g -O3 -Wall",
			       "-O3, no -fno-omit-frame-pointer"), SYSCONFIG_FP_WITHOUT);
	assert_int_equal(fp_of("-O2 -fno-omit-frame-pointer -fomit-frame-pointer", NULL),
			 SYSCONFIG_FP_WITHOUT);       /* the last one wins */
	assert_int_equal(fp_of("-g -O0", NULL), SYSCONFIG_FP_WITH);
	assert_int_equal(fp_of("-g", NULL), SYSCONFIG_FP_WITH);
	assert_int_equal(fp_of("-Os", NULL), SYSCONFIG_FP_WITHOUT);
	assert_int_equal(fp_of("-fno-omit-frame-pointerx -O2", NULL), SYSCONFIG_FP_WITHOUT);
	assert_int_equal(fp_of(NULL, NULL), SYSCONFIG_FP_UNKNOWN);
}

static void test_prologue(void **state)
{
	static const uint8_t plain[] = { 0x55, 0x48, 0x89, 0xe5, 0x53 };
	static const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t other_opcode[] = { 0x55, 0x48, 0x8b, 0xec };
	/* gcc -O2: instructions scheduled between push and mov */
	static const uint8_t scheduled[] = { 0x55, 0x48, 0x8d, 0x04, 0xbf, 0x48, 0x89, 0xf9,
					     0x48, 0x89, 0xe5, 0x41, 0x54 };
	/* rbp as a scratch register after the frame is allocated: no frame pointer */
	static const uint8_t after_sub[] = { 0x55, 0x53, 0x48, 0x83, 0xec, 0x28, 0x48, 0x89, 0xe5 };
	static const uint8_t after_push[] = { 0x55, 0x41, 0x54, 0x48, 0x89, 0xe5 };
	static const uint8_t no_push[] = { 0x48, 0x89, 0xe5, 0x55 };
	static const uint8_t only_endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	(void)state;
	/* x86-64 code; the aarch64 prologues are test_arch_aarch64's */
	if (strcmp(arch_name, "x86-64"))
		skip();
	assert_true(fpa_prologue_match(plain, sizeof(plain)));
	assert_true(fpa_prologue_match(cet, sizeof(cet)));
	assert_true(fpa_prologue_match(other_opcode, sizeof(other_opcode)));
	assert_true(fpa_prologue_match(scheduled, sizeof(scheduled)));
	assert_false(fpa_prologue_match(after_sub, sizeof(after_sub)));
	assert_false(fpa_prologue_match(after_push, sizeof(after_push)));
	assert_false(fpa_prologue_match(no_push, sizeof(no_push)));
	assert_false(fpa_prologue_match(only_endbr, sizeof(only_endbr)));
	assert_false(fpa_prologue_match(plain, 3));
	assert_false(fpa_prologue_match(plain, 0));
}

static void test_verdicts(void **state)
{
	(void)state;
	assert_int_equal(fpa_verdict_of(0, 0), FPA_NA);
	assert_int_equal(fpa_verdict_of(90, 10), FPA_YES);
	assert_int_equal(fpa_verdict_of(89, 11), FPA_PARTLY);
	assert_int_equal(fpa_verdict_of(10, 90), FPA_PARTLY);
	assert_int_equal(fpa_verdict_of(9, 91), FPA_NO);
	assert_int_equal(fpa_verdict_of(0, 5), FPA_NO);
	assert_int_equal(fpa_verdict_of(5, 0), FPA_YES);
	assert_string_equal(fpa_verdict_name(FPA_PARTLY), "partly");
}

#ifdef CET_LIB
/* The audit of the library at path (fpa_audit_elf over libelf). */
static void audit_file(const char *path, struct fpa_result *r)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(fpa_audit_elf(elf, path, "", NULL, r), 0);
	elf_end(elf);
	close(fd);
}

/* CET's features from the property note (-fcf-protection=full), none without it. */
static void test_branch_protection_x86(void **state)
{
	struct fpa_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	audit_file(CET_LIB, r);
	assert_int_equal(r->branch_protection, FPA_BP_IBT | FPA_BP_SHSTK);
	audit_file(NOCET_LIB, r);
	assert_int_equal(r->branch_protection, 0);
	assert_string_equal(fpa_branch_protection_name(FPA_BP_SHSTK), "SHSTK");
	assert_null(fpa_branch_protection_name(3));
	free(r);
}
#endif

static void test_resolve_in_root(void **state)
{
	char root[] = "/tmp/fw-audit-root-XXXXXX", path[4096], out[4096];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/usr", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/usr/lib", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/usr/lib/libz.so.1.3", root);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/lib", root);
	assert_int_equal(symlink("usr/lib", path), 0);                  /* relative */
	snprintf(path, sizeof(path), "%s/usr/lib/libz.so.1", root);
	assert_int_equal(symlink("/lib/libz.so.1.3", path), 0);        /* absolute */
	snprintf(path, sizeof(path), "%s/usr/lib/up", root);
	assert_int_equal(symlink("../../../../../..", path), 0);       /* tries to escape */

	assert_int_equal(install_resolve(root, "/lib/libz.so.1", out, sizeof(out)), 0);
	snprintf(path, sizeof(path), "%s/usr/lib/libz.so.1.3", root);
	assert_string_equal(out, path);
	assert_int_equal(install_resolve(root, "/usr/lib/up/usr/lib/./libz.so.1.3", out,
					 sizeof(out)), 0);
	assert_string_equal(out, path);      /* ".." stops at the root */
	assert_int_equal(install_resolve(root, "/usr/lib/missing.so", out, sizeof(out)), -ENOENT);
	assert_int_equal(install_resolve(root, "relative", out, sizeof(out)), -EINVAL);

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysconfig_pprint),
		cmocka_unit_test(test_sysconfig_parenthesised),
		cmocka_unit_test(test_sysconfig_malformed),
		cmocka_unit_test(test_sysconfig_garbage),
		cmocka_unit_test(test_cflags_rule),
		cmocka_unit_test(test_prologue),
		cmocka_unit_test(test_verdicts),
#ifdef CET_LIB
		cmocka_unit_test(test_branch_protection_x86),
#endif
		cmocka_unit_test(test_resolve_in_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
