/*
 * libFuzzer harness for the perf map reader (src/symbols/symbolize.h,
 * /tmp/perf-PID.map, written by whoever can write the target's /tmp): the
 * input is the file, read from a memfd line by line with the line reader the
 * symbolizer uses (target/safe_open.h), each line parsed as a map entry.
 * Checked:
 *   - the line reader gives exactly the file's lines (split on '\n', the
 *     last one without it), NUL-terminated, leaving out whole those longer
 *     than its buffer, never more bytes than the file has;
 *   - a parsed entry has end = START + SIZE, a name that is the line's text
 *     after the second number up to a version '@', and round-trips: written
 *     back as "START SIZE NAME" it parses to the same entry.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "target/safe_open.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_perfmap: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

/* The next line of data[*pos..size) the reader must return, or NULL at the end. */
static const uint8_t *expected_line(const uint8_t *data, size_t size, size_t *pos, size_t *len)
{
	while (*pos < size) {
		const uint8_t *l = data + *pos, *nl = memchr(l, '\n', size - *pos);

		*len = nl ? (size_t)(nl - l) : size - *pos;
		*pos += *len + 1;
		/* the buffer holds SAFE_LINE_MAX bytes: a longer line (with its newline) is skipped */
		if (*len < SAFE_LINE_MAX)
			return l;
	}
	return NULL;
}

static void check_entry(const char *line, const struct perf_map_entry *e)
{
	struct perf_map_entry again;
	char *end, *text;
	const char *name;
	size_t n, cut;
	int len;

	/* the name is the text after "START SIZE " (strtoull's numbers), cut at a version's '@' */
	strtoull(line, &end, 16);
	CHECK(*end == ' ');
	strtoull(end + 1, &end, 16);
	CHECK(*end == ' ');
	name = end + 1;
	cut = strcspn(name, "@");
	CHECK(e->name);
	n = strlen(e->name);
	CHECK(n == (cut ? cut : strlen(name)) && !memcmp(e->name, name, n));

	len = snprintf(NULL, 0, "%" PRIx64 " %" PRIx64 " %s", e->start, e->end - e->start, e->name);
	CHECK(len > 0);
	text = malloc((size_t)len + 1);
	CHECK(text);
	snprintf(text, (size_t)len + 1, "%" PRIx64 " %" PRIx64 " %s", e->start, e->end - e->start,
		 e->name);
	CHECK(perf_map_parse_line(text, &again) == 0);
	CHECK(again.start == e->start && again.end == e->end && !strcmp(again.name, e->name));
	free(again.name);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct safe_lines lines;
	size_t pos = 0, elen = 0, total = 0;
	char *line;
	int fd;

	fd = memfd_create("fuzz-perfmap", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(!size || write(fd, data, size) == (ssize_t)size);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	safe_lines_init(&lines, fd, PERF_MAP_MAX_BYTES);
	while ((line = safe_lines_next(&lines))) {
		const uint8_t *want = expected_line(data, size, &pos, &elen);
		struct perf_map_entry e;

		CHECK(want);
		CHECK(line[elen] == '\0' && !memcmp(line, want, elen));
		total += elen + 1;
		CHECK(total <= size + 1);
		if (perf_map_parse_line(line, &e) == 0) {
			check_entry(line, &e);
			free(e.name);
		}
	}
	/* every line was returned */
	CHECK(!expected_line(data, size, &pos, &elen));
	close(fd);
	return 0;
}
