/*
 * libFuzzer harness for what `check` reads as text from an installation,
 * maybe a container's (src/audit/sysconfig.h, install.h): the input is read
 * as a _sysconfigdata file (exactly its bytes, an unreadable page after
 * them), as compiler flags (up to its first NUL), and as the installation's
 * /etc/ld.so.conf inside a root made once (with Debian's ld.so.conf.d
 * files, which it may include). Checked:
 *   - sysconfig_parse counts the keys it reports, and the dict written
 *     back as Python (every byte escaped where it must be) parses to the
 *     same keys and values in the same order;
 *   - sysconfig_frame_pointers: the last -f[no-]omit-frame-pointer decides,
 *     else the last -O (none or -O0: with), and why names the deciding flag;
 *     so for the input and for every string value;
 *   - ld.so.conf: at most INSTALL_MAX_DIRS directories, each absolute,
 *     once, without a comment, a newline or blanks at its end, and written
 *     in the input or in a file it can include.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/install.h"
#include "audit/sysconfig.h"
#include "util/strbuf.h"

#include "scratch.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_sysconfig: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#include "oracle.h"

#define TEXT_MAX (256u << 10)
#define KEYS_MAX 4096

/* The files of the root an ld.so.conf may include (Debian's). */
static const char *const conf_d[][2] = {
	{ "libc.conf", "# libc default configuration\n/usr/local/lib\n" },
	{ "x86_64-linux-gnu.conf", "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n"
				   "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n" },
	{ "zz_i386-biarch-compat.conf", "# Legacy biarch compatibility support\n/lib32\n"
					"/usr/lib32\n" },
};

static char root[64], conf[128];

struct kv {
	char *key, *str;
	long num;
};

struct kvs {
	struct kv v[KEYS_MAX];
	size_t n, calls;
};

static struct kvs first, second;

static void collect(const char *key, const char *str, long num, void *arg)
{
	struct kvs *k = arg;

	k->calls++;
	if (k->n == KEYS_MAX)
		return;
	k->v[k->n].key = strdup(key);
	k->v[k->n].str = str ? strdup(str) : NULL;
	k->v[k->n].num = num;
	CHECK(k->v[k->n].key && (!str || k->v[k->n].str));
	k->n++;
}

static void kvs_release(struct kvs *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].key);
		free(k->v[i].str);
	}
	k->n = k->calls = 0;
}

/* A Python string literal of s, read back as s. */
static void literal(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\'' || *p == '\\' || *p < 0x20 || *p >= 0x7f)
			strbuf_addf(sb, "\\x%02x", *p);
		else
			strbuf_addch(sb, (char)*p);
	}
	strbuf_addch(sb, '\'');
}

static void check_round_trip(const struct kvs *k)
{
	struct strbuf sb = STRBUF_INIT;
	int n;

	strbuf_addstr(&sb, "# written back\nbuild_time_vars = {");
	for (size_t i = 0; i < k->n; i++) {
		strbuf_addstr(&sb, "\n ");
		literal(&sb, k->v[i].key);
		strbuf_addstr(&sb, ": ");
		if (k->v[i].str)
			literal(&sb, k->v[i].str);
		else
			strbuf_addf(&sb, "%ld", k->v[i].num);
		strbuf_addch(&sb, ',');
	}
	strbuf_addstr(&sb, "}\n");
	n = sysconfig_parse(sb.buf, sb.len, collect, &second);
	CHECK(n >= 0 && (size_t)n == k->n && second.n == k->n);
	for (size_t i = 0; i < k->n; i++) {
		const struct kv *a = &k->v[i], *b = &second.v[i];

		CHECK(!strcmp(a->key, b->key) && !a->str == !b->str);
		CHECK(a->str ? !strcmp(a->str, b->str) : a->num == b->num);
	}
	kvs_release(&second);
	strbuf_release(&sb);
}

/* The verdict as sysconfig.h states it, and the flag it names. */
static void check_frame_pointers(const char *cflags)
{
	struct strbuf why = STRBUF_INIT, want = STRBUF_INIT;
	const char *p = cflags, *fp = NULL, *opt = NULL;
	size_t fp_len = 0, opt_len = 0;
	enum sysconfig_fp v = sysconfig_frame_pointers(cflags, &why), expect;

	while (*p) {
		const char *s;

		while (*p && isspace((unsigned char)*p))
			p++;
		for (s = p; *p && !isspace((unsigned char)*p); p++)
			;
		if ((p - s == 20 && !memcmp(s, "-fomit-frame-pointer", 20)) ||
		    (p - s == 23 && !memcmp(s, "-fno-omit-frame-pointer", 23)))
			fp = s, fp_len = (size_t)(p - s);
		else if (p - s >= 2 && s[0] == '-' && s[1] == 'O')
			opt = s, opt_len = (size_t)(p - s);
	}
	if (fp) {
		expect = fp_len == 23 ? SYSCONFIG_FP_WITH : SYSCONFIG_FP_WITHOUT;
		strbuf_add(&want, fp, fp_len);
	} else {
		expect = !opt || (opt_len == 3 && opt[2] == '0') ? SYSCONFIG_FP_WITH :
			 SYSCONFIG_FP_WITHOUT;
		if (opt)
			strbuf_add(&want, opt, opt_len);
		else
			strbuf_addstr(&want, "-O0");
		strbuf_addstr(&want, ", no -fno-omit-frame-pointer");
	}
	CHECK(v == expect);
	CHECK(why.len == want.len && !memcmp(why.buf, want.buf, why.len));
	strbuf_release(&want);
	strbuf_release(&why);
}

static void make_root(void)
{
	char path[256];

	CHECK(fuzz_scratch_dir("fuzz-sysconfig", root, sizeof(root)) == 0);
	snprintf(path, sizeof(path), "%s/etc", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/etc/ld.so.conf.d", root);
	CHECK(mkdir(path, 0755) == 0);
	for (size_t i = 0; i < sizeof(conf_d) / sizeof(conf_d[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/etc/ld.so.conf.d/%s", root, conf_d[i][0]);
		f = fopen(path, "w");
		CHECK(f && fputs(conf_d[i][1], f) >= 0 && fclose(f) == 0);
	}
	snprintf(conf, sizeof(conf), "%s/etc/ld.so.conf", root);
}

/* Is dir a line (between its blanks, before a comment) of the text or of a conf.d file? */
static int written(const char *dir, const char *text, size_t len)
{
	size_t n = strlen(dir);

	if (memmem(text, len, dir, n))
		return 1;
	for (size_t i = 0; i < sizeof(conf_d) / sizeof(conf_d[0]); i++)
		if (strstr(conf_d[i][1], dir))
			return 1;
	return 0;
}

static void check_ld_conf(const uint8_t *data, size_t size)
{
	struct py_install *in = calloc(1, sizeof(*in));
	int fd = open(conf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(in && fd >= 0);
	CHECK(!size || write(fd, data, size) == (ssize_t)size);
	CHECK(close(fd) == 0);
	snprintf(in->root, sizeof(in->root), "%s", root);
	install_read_ld_conf(in, "/etc/ld.so.conf");
	CHECK(in->nlibdirs <= INSTALL_MAX_DIRS);
	for (size_t i = 0; i < in->nlibdirs; i++) {
		const char *d = in->libdirs[i];
		size_t n = strlen(d);

		CHECK(d[0] == '/' && !strpbrk(d, "#\n"));
		CHECK(d[n - 1] != ' ' && d[n - 1] != '\t');
		CHECK(written(d, (const char *)data, size));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(in->libdirs[j], d));
	}
	install_release(in);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *cflags;
	int n;

	if (size > TEXT_MAX)
		return 0;
	if (!root[0])
		make_root();
	text = text_at_guard(data, size, TEXT_MAX);
	n = sysconfig_parse(text, size, collect, &first);
	CHECK(n == -EINVAL || (n >= 0 && (size_t)n == first.calls));
	if (n >= 0 && first.calls == first.n)
		check_round_trip(&first);
	for (size_t i = 0; i < first.n; i++)
		if (first.v[i].str)
			check_frame_pointers(first.v[i].str);
	kvs_release(&first);

	cflags = strndup((const char *)data, size);
	CHECK(cflags);
	check_frame_pointers(cflags);
	free(cflags);

	check_ld_conf(data, size);
	return 0;
}
