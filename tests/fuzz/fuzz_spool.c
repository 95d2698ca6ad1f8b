/*
 * libFuzzer harness for the agent's disk spool read back after a restart
 * (src/agent/spool.h): the input is one request file of a spool directory
 * (tests/fuzz/scratch.h), which spool_open queues and spool_peek reads
 * back. Checked:
 *   - the file is queued whatever it holds, and either read back or
 *     dropped as corrupt (counted, its file removed), never half;
 *   - what is read back is exactly what spool_push writes: the file is
 *     "framewalk-spool 1 META_LEN BODY_LEN\n", the meta (one line of text,
 *     NUL-terminated) and the body, byte for byte;
 *   - spool_pop removes it, file included;
 *   - round trip: the input cut into a meta line and a body, pushed into
 *     the spool, reads back the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/spool.h"
#include "util/strbuf.h"

#include "scratch.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_spool: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define SEQ 7

static char dir[64], path[128];

static void make_dir(void)
{
	CHECK(fuzz_scratch_dir("fuzz-spool", dir, sizeof(dir)) == 0);
	snprintf(path, sizeof(path), "%s/%020d.req", dir, SEQ);
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	CHECK(!size || write(fd, data, size) == (ssize_t)size);
	CHECK(close(fd) == 0);
}

/* The file as spool_push writes it. */
static void check_canonical(const struct spool_item *it, const uint8_t *data, size_t size)
{
	struct strbuf want = STRBUF_INIT;
	size_t mlen = strlen(it->meta);

	CHECK(!memchr(it->meta, '\n', mlen));
	strbuf_addf(&want, "framewalk-spool 1 %zu %zu\n", mlen, it->body.len);
	strbuf_addstr(&want, it->meta);
	strbuf_add(&want, it->body.buf ? it->body.buf : "", it->body.len);
	CHECK(!it->body.len || it->body.buf[it->body.len] == '\0');
	CHECK(want.len == size && !memcmp(want.buf, data, size));
	strbuf_release(&want);
}

/* Read back what is in the directory: 1 when a request was, 0 when dropped as corrupt. */
static int read_back(const uint8_t *data, size_t size, int check)
{
	struct strbuf err = STRBUF_INIT;
	struct spool_item it;
	struct spool q;
	int ret;

	/* the reason too: seen failing once (2026-12-03, a clean-clone CI rehearsal), not since */
	if (spool_open(&q, dir, 16, 1ull << 30, &err)) {
		fprintf(stderr, "fuzz_spool: spool_open of %s: %s\n", dir, err.buf);
		abort();
	}
	CHECK(q.n == 1 && q.e[0].seq == SEQ && q.next_seq == SEQ + 1);
	ret = spool_peek(&q, &it);
	if (ret) {
		CHECK(ret == -ENOENT && q.corrupt == 1 && q.n == 0);
		CHECK(access(path, F_OK) && errno == ENOENT);
	} else {
		CHECK(it.seq == SEQ && q.inflight == SEQ && it.meta);
		if (check)
			check_canonical(&it, data, size);
		spool_pop(&q, it.seq);
		CHECK(q.n == 0 && q.bytes == 0 && !q.inflight);
		CHECK(access(path, F_OK) && errno == ENOENT);
		spool_item_release(&it);
	}
	spool_close(&q);
	strbuf_release(&err);
	return !ret;
}

/* The input as a request: meta up to the first newline (or NUL), the rest the body. */
static void round_trip(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t mlen = nl ? (size_t)(nl - data) : 0;
	const uint8_t *body = nl ? nl + 1 : data;
	size_t blen = size - (size_t)(body - data);
	struct strbuf err = STRBUF_INIT;
	struct spool_item it;
	struct spool q;
	char *meta = strndup((const char *)data, mlen);

	CHECK(meta);
	if (spool_open(&q, dir, 16, 1ull << 30, &err)) {
		fprintf(stderr, "fuzz_spool: spool_open of %s: %s\n", dir, err.buf);
		abort();
	}
	CHECK(q.n == 0);
	q.next_seq = SEQ;
	CHECK(spool_push(&q, meta, body, blen) == 0);
	CHECK(spool_peek(&q, &it) == 0);
	CHECK(it.seq == SEQ && !strcmp(it.meta, meta) && it.body.len == blen);
	CHECK(!blen || !memcmp(it.body.buf, body, blen));
	spool_item_release(&it);
	spool_close(&q);
	/* and again after a restart */
	CHECK(read_back(NULL, 0, 0) == 1);
	strbuf_release(&err);
	free(meta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		make_dir();
	write_file(data, size);
	read_back(data, size, 1);
	round_trip(data, size);
	return 0;
}
