/*
 * libFuzzer harness for the agent's /proc parsers (src/agent/procinfo.h):
 * the text after the first byte is read as each file the agent reads of a
 * process it profiles, exactly its bytes (not terminated: an unreadable
 * page follows them): a stat file (start time), an environ block (the
 * service variables), a cgroup file (container id, cgroup path), a command
 * line (the service it implies), and a label value to clean; the first
 * byte sets the output sizes.
 * Checked:
 *   - start time (target/proc.h's field 22, as the agent reads it):
 *     round-trips as field 22 of a stat text written back;
 *   - environ: the value found is that of the first "NAME=" entry, inside
 *     the block, up to its NUL;
 *   - container id: the last run of exactly 64 hex digits, or "" when none;
 *   - cgroup path: the "0::" line's path, else the first line's, cut;
 *   - service: a part of the command line ("python-c" for -c), the
 *     executable's name when that is not python;
 *   - clean: valid UTF-8 without control characters, at most max bytes,
 *     no space at either end, appended after what the buffer held, a
 *     subsequence of the input, and cleaning it again changes nothing;
 *   - every output NUL-terminated inside its buffer.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/procinfo.h"
#include "target/proc.h"
#include "util/strbuf.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_procinfo: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#include "oracle.h"

#define OUT_MAX 256
#define TEXT_MAX (64u << 10)

/* A buffer of size bytes, past its NUL filled so a write past it shows. */
static void check_terminated(const char *out, size_t size)
{
	CHECK(memchr(out, '\0', size));
	for (size_t i = size; i < OUT_MAX; i++)
		CHECK(out[i] == 'z');
}

static void check_start_time(const char *text, size_t len)
{
	char again[160];
	uint64_t t, t2;

	if (proc_stat_parse_field(text, len, 22, &t))
		return;
	snprintf(again, sizeof(again), "1 (a) b) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %" PRIu64
		 " 0 0", t);
	CHECK(!proc_stat_parse_field(again, strlen(again), 22, &t2) && t2 == t);
}

static void check_env(const char *env, size_t len, const char *name)
{
	size_t nlen = strlen(name), vlen = 0, i = 0;
	const char *v = procinfo_env_lookup(env, len, name, &vlen), *want = NULL;

	/* the first entry "NAME=..." */
	while (i < len && !want) {
		const char *e = env + i, *nul = memchr(e, '\0', len - i);
		size_t elen = nul ? (size_t)(nul - e) : len - i;

		if (elen > nlen && !memcmp(e, name, nlen) && e[nlen] == '=')
			want = e + nlen + 1;
		i += elen + 1;
	}
	CHECK(v == want);
	if (v) {
		CHECK(v + vlen <= env + len);
		CHECK(!memchr(v, '\0', vlen) && (v + vlen == env + len || v[vlen] == '\0'));
	}
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static void check_container(const char *text, size_t len, size_t size)
{
	char out[OUT_MAX];
	const char *last = NULL;
	size_t run = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && is_hex(text[i])) {
			run++;
			continue;
		}
		if (run == PROCINFO_CONTAINER_LEN)
			last = text + i - run;
		run = 0;
	}
	memset(out, 'z', sizeof(out));
	procinfo_container_id(text, len, out, size);
	if (!size)
		return;
	check_terminated(out, size);
	if (last && size > PROCINFO_CONTAINER_LEN)
		CHECK(strlen(out) == PROCINFO_CONTAINER_LEN &&
		      !memcmp(out, last, PROCINFO_CONTAINER_LEN));
	else
		CHECK(out[0] == '\0');
}

static void check_cgroup(const char *text, size_t len, size_t size)
{
	const char *line = text, *end = text + len, *first = NULL, *pick = NULL;
	size_t first_len = 0, pick_len = 0, want;
	char out[OUT_MAX];

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *lend = nl ? nl : end;
		const char *c1 = memchr(line, ':', (size_t)(lend - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(lend - c1 - 1)) : NULL;

		if (c2 && !first) {
			first = c2 + 1;
			first_len = (size_t)(lend - first);
		}
		if (c2 && c1 == line + 1 && line[0] == '0' && c2 == c1 + 1) {
			pick = c2 + 1;
			pick_len = (size_t)(lend - pick);
		}
		line = lend + 1;
	}
	if (!pick) {
		pick = first;
		pick_len = first_len;
	}
	memset(out, 'z', sizeof(out));
	procinfo_cgroup_path(text, len, out, size);
	if (!size)
		return;
	check_terminated(out, size);
	if (!pick) {
		CHECK(out[0] == '\0');
		return;
	}
	/* cut to the buffer, and at a NUL in the path */
	want = pick_len < size - 1 ? pick_len : size - 1;
	want = strnlen(pick, want);
	CHECK(strlen(out) == want && !memcmp(out, pick, want));
}

static void check_service(const char *argv, size_t len, size_t size)
{
	const char *nul = memchr(argv, '\0', len), *base;
	size_t elen = nul ? (size_t)(nul - argv) : len, n;
	char out[OUT_MAX];

	memset(out, 'z', sizeof(out));
	procinfo_service_from_argv(argv, len, out, size);
	if (!size)
		return;
	check_terminated(out, size);
	n = strlen(out);
	if (!len) {
		CHECK(n == 0);
		return;
	}
	CHECK(!strcmp(out, "python-c") || !strncmp(out, "python-c", n) ||
	      memmem(argv, len, out, n));
	/* an executable not named python* names the service itself */
	base = argv + elen;
	while (base > argv && base[-1] != '/')
		base--;
	if (argv + elen - base < 6 || memcmp(base, "python", 6))
		CHECK(n == strnlen(base, (size_t)(argv + elen - base) < size - 1 ?
				   (size_t)(argv + elen - base) : size - 1) &&
		      !memcmp(out, base, n));
}

static void check_clean(const char *s, size_t len, size_t max)
{
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT;
	const unsigned char *u;
	size_t n, j = 0;

	strbuf_addstr(&out, "key=");
	procinfo_clean(&out, s, len, max);
	CHECK(out.len >= 4 && !memcmp(out.buf, "key=", 4) && out.buf[out.len] == '\0');
	u = (const unsigned char *)out.buf + 4;
	n = out.len - 4;
	CHECK(n <= max);
	CHECK(!n || (u[0] != ' ' && u[n - 1] != ' '));
	for (size_t i = 0; i < n;) {
		size_t l = oracle_utf8_seq(u + i, n - i);

		CHECK(l);
		CHECK(l > 1 || (u[i] >= 0x20 && u[i] != 0x7f));
		CHECK(l != 2 || !(u[i] == 0xc2 && u[i + 1] < 0xa0));
		i += l;
	}
	/* a subsequence of the input */
	for (size_t i = 0; i < n; i++) {
		while (j < len && (unsigned char)s[j] != u[i])
			j++;
		CHECK(j < len);
		j++;
	}
	procinfo_clean(&again, (const char *)u, n, max);
	CHECK(again.len == n && (!n || !memcmp(again.buf, u, n)));
	strbuf_release(&again);
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"OTEL_SERVICE_NAME", "PYROSCOPE_APPLICATION_NAME", "PATH", "A", "",
	};
	size_t len, out_size, max;
	char *text;

	if (!size || size - 1 > TEXT_MAX)
		return 0;
	/* the sizes: 0 (no room) up to past a container id, and a label cap */
	out_size = data[0] % (PROCINFO_CONTAINER_LEN + 8);
	max = data[0] % 160;
	len = size - 1;
	/* exactly len bytes, not terminated: the parsers must use the length */
	text = text_at_guard(data + 1, len, TEXT_MAX);

	check_start_time(text, len);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_env(text, len, names[i]);
	check_container(text, len, out_size);
	check_container(text, len, PROCINFO_CONTAINER_LEN + 1);
	check_cgroup(text, len, out_size);
	check_cgroup(text, len, OUT_MAX / 2);
	check_service(text, len, out_size);
	check_service(text, len, PROCINFO_SERVICE_MAX + 1);
	check_clean(text, len, max);
	check_clean(text, len, PROCINFO_SERVICE_MAX);
	return 0;
}
