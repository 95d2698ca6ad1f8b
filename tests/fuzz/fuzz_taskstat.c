/*
 * libFuzzer harness for the per-thread /proc parsers the sampler runs every
 * tick (src/target/taskstat.h): the input is read as each of a thread's
 * files in turn, /proc/PID/task/TID/stat (exactly its bytes, not
 * terminated, as read with pread), syscall and schedstat (NUL-terminated,
 * cut to the buffers taskstat reads them into), and the system call found
 * (or the input's first words) is named as a [wait] label. Checked:
 *   - stat: the state is the letter after the last ')'; the CPU is field 39;
 *   - syscall: a number only when it is one (>= 0), and "NR ARG0" written
 *     back parses to the same pair;
 *   - schedstat: runtime and switches round-trip the same way; switches
 *     fail exactly when the text has fewer than three fields;
 *   - the wait label: NUL-terminated inside any buffer size, printable
 *     ASCII, "NAME", "NAME fd=N (KIND)" or "syscall N", and a smaller
 *     buffer holds a prefix of it; none outside a system call.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "target/proc.h"
#include "target/taskstat.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_taskstat: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define LABEL_MAX 160           /* bpf.c's and sampler's label buffers */

/* The input as taskstat reads a file into a buffer of size bytes: cut, NUL-terminated. */
static char *as_read(const uint8_t *data, size_t size, size_t bufsize)
{
	size_t n = size < bufsize - 1 ? size : bufsize - 1;
	char *text = malloc(n + 1);

	CHECK(text);
	memcpy(text, data, n);
	text[n] = '\0';
	return text;
}

static void check_stat(const uint8_t *data, size_t size)
{
	const char *paren = NULL;
	char *text = malloc(size ? size : 1), state = 0;
	uint64_t field;
	int cpu = -1;

	CHECK(text);
	memcpy(text, data, size);
	for (size_t i = size; i > 0 && !paren; i--)
		if (text[i - 1] == ')')
			paren = text + i - 1;
	if (!proc_stat_parse_state(text, size, &state)) {
		CHECK(paren && (size_t)(paren - text) + 3 <= size);
		CHECK(paren[1] == ' ' && paren[2] == state && isalpha((unsigned char)state));
	}
	if (!proc_stat_parse_cpu(text, size, &cpu)) {
		CHECK(paren);
		CHECK(!proc_stat_parse_field(text, size, 39, &field) && cpu == (int)field);
	}
	free(text);
}

static void check_syscall(const char *text, long *nr, uint64_t *arg0)
{
	char again[64];
	long nr2;
	uint64_t arg2;

	if (taskstat_parse_syscall(text, nr, arg0)) {
		*nr = -1;
		return;
	}
	CHECK(*nr >= 0);
	snprintf(again, sizeof(again), "%ld 0x%" PRIx64 " 0x0 0x0\n", *nr, *arg0);
	CHECK(taskstat_parse_syscall(again, &nr2, &arg2) == 0 && nr2 == *nr && arg2 == *arg0);
}

static void check_schedstat(const char *text)
{
	uint64_t run = taskstat_parse_runtime(text), sw, sw2;
	char again[96];
	size_t spaces = 0;

	snprintf(again, sizeof(again), "%" PRIu64 " 0 0\n", run);
	CHECK(taskstat_parse_runtime(again) == run);
	for (const char *p = text; *p; p++)
		spaces += *p == ' ';
	CHECK(!taskstat_parse_switches(text, &sw) == (spaces >= 2));
	if (spaces >= 2) {
		snprintf(again, sizeof(again), "%" PRIu64 " 7 %" PRIu64 "\n", run, sw);
		CHECK(!taskstat_parse_switches(again, &sw2) && sw2 == sw);
	}
}

/* The label has one of its three forms. */
static void check_label_form(const char *label, long nr)
{
	const char *name = arch_syscall_name(nr);
	char want[64];

	for (const char *p = label; *p; p++)
		CHECK(*p >= 0x20 && *p < 0x7f);
	if (!name) {
		snprintf(want, sizeof(want), "syscall %ld", nr);
		CHECK(!strcmp(label, want));
		return;
	}
	if (!strcmp(label, name))
		return;
	/* "NAME fd=N (KIND)", of a syscall whose first argument is a descriptor */
	CHECK(arch_syscall_fd_arg(nr));
	CHECK(!strncmp(label, name, strlen(name)) && !strncmp(label + strlen(name), " fd=", 4));
	CHECK(label[strlen(label) - 1] == ')');
}

static void check_wait(const struct taskstat *ts, long nr, uint64_t arg0, size_t small)
{
	char full[LABEL_MAX], part[LABEL_MAX];
	int ret;

	memset(full, 'x', sizeof(full));
	ret = taskstat_wait_label(ts, nr, arg0, full, sizeof(full));
	CHECK(nr < 0 ? ret == -ENOENT : ret == 0);
	if (ret)
		return;
	CHECK(memchr(full, '\0', sizeof(full)));
	check_label_form(full, nr);
	/* a smaller buffer: the same label, cut */
	memset(part, 'x', sizeof(part));
	CHECK(taskstat_wait_label(ts, nr, arg0, part, small) == 0);
	CHECK(memchr(part, '\0', small) && !strncmp(part, full, small - 1));
	CHECK(small == sizeof(part) || part[small] == 'x');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct taskstat ts;
	uint64_t arg0 = 0, words[2] = { 0, 0 };
	char *text;
	long nr;

	check_stat(data, size);
	text = as_read(data, size, 256);                /* taskstat_syscall's buffer */
	check_syscall(text, &nr, &arg0);
	free(text);
	text = as_read(data, size, 128);                /* taskstat_cpu_ns's */
	check_schedstat(text);
	free(text);

	/* descriptors are looked up in our own /proc/PID/fd */
	memset(&ts, 0, sizeof(ts));
	ts.pid = getpid();
	memcpy(words, data, size < sizeof(words) ? size : sizeof(words));
	check_wait(&ts, nr, arg0, 1 + (size ? data[size - 1] : 0) % LABEL_MAX);
	/* the BPF iterator's pair, from the registers: any number, any argument */
	check_wait(&ts, (long)words[0], words[1], 1 + (size > 2 ? data[2] : 0) % LABEL_MAX);
	return 0;
}
