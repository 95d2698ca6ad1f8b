/*
 * libFuzzer harness for the agent's HTTP answer reader (src/agent/http.h,
 * http_socket.c): the input is what the destination sends back, written
 * into a connected stream socket that is then closed for writing, and read
 * as http_post reads it (status line, headers, a body by Content-Length,
 * chunks or until the close). Checked:
 *   - an error leaves the answer empty;
 *   - an answer starts "HTTP/1.x NNN" with that status (100-999); it has no
 *     body for 1xx, 204 and 304, and keeps at most HTTP_ANSWER_MAX bytes,
 *     NUL-terminated;
 *   - without chunks, the body is the bytes after the first empty line;
 *   - round trip: the status and body written back as an answer with a
 *     Content-Length, and with the body in chunks, read back the same.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/http.h"
#include "util/strbuf.h"
#include "util/util.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_http: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

/* What a socket buffer surely holds without a reader (a longer input is skipped). */
#define INPUT_MAX (96u << 10)

/* Read data as the answer of a request; SKIPPED when it does not fit the socket. */
#define SKIPPED 1

static int answer_of(const void *data, size_t size, struct http_answer *ans)
{
	struct http_request req;
	int sv[2], ret;

	memset(&req, 0, sizeof(req));
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
	if (size && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return SKIPPED;
	}
	close(sv[1]);           /* the server closed: every read ends */
	ret = http_read_answer(sv[0], fw_now_ns() + 10 * 1000000000ull, &req, ans);
	close(sv[0]);
	return ret;
}

/* Where the first empty line ends (CRLF or LF), or size when there is none. */
static size_t head_end(const uint8_t *data, size_t size)
{
	size_t start = 0;

	while (start < size) {
		const uint8_t *nl = memchr(data + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - data) : size;

		if (start > 0 && (end == start || (end == start + 1 && data[start] == '\r')))
			return nl ? end + 1 : size;
		start = end + 1;
	}
	return size;
}

/* The status and body written back, by length or in chunks of chunk bytes, read again. */
static void round_trip(const struct http_answer *ans, size_t chunk)
{
	struct strbuf out = STRBUF_INIT;
	struct http_answer again;
	size_t len = ans->body.len;
	int ret;

	strbuf_addf(&out, "HTTP/1.1 %03ld Fuzz\r\nServer: fuzz\r\n", ans->status);
	if (chunk) {
		strbuf_addstr(&out, "Transfer-Encoding: chunked\r\n\r\n");
		for (size_t at = 0; at < len; at += chunk) {
			size_t n = len - at < chunk ? len - at : chunk;

			strbuf_addf(&out, "%zx;ext=1\r\n", n);
			strbuf_add(&out, ans->body.buf + at, n);
			strbuf_addstr(&out, "\r\n");
		}
		strbuf_addstr(&out, "0\r\n\r\n");
	} else {
		strbuf_addf(&out, "Content-Length: %zu\r\n\r\n", len);
		strbuf_add(&out, len ? ans->body.buf : "", len);
	}
	ret = answer_of(out.buf, out.len, &again);
	strbuf_release(&out);
	if (ret == SKIPPED)
		return;
	CHECK(ret == 0);
	CHECK(again.status == ans->status && again.body.len == len);
	CHECK(!len || !memcmp(again.body.buf, ans->body.buf, len));
	http_answer_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_answer ans;
	char *head;
	size_t hlen;
	long status;
	int ret;

	if (size > INPUT_MAX)
		return 0;
	memset(&ans, 0xa5, sizeof(ans));
	ret = answer_of(data, size, &ans);
	if (ret == SKIPPED)
		return 0;
	if (ret) {
		CHECK(ret < 0 && ans.status == 0 && ans.body.len == 0 && !ans.body.buf);
		return 0;
	}

	/* "HTTP/1.x NNN" */
	CHECK(size >= 12 && !memcmp(data, "HTTP/1.", 7) && data[8] == ' ');
	status = strtol((const char *)(data + 9), NULL, 10);
	CHECK(ans.status == status && status >= 100 && status <= 999);
	CHECK(ans.body.len <= HTTP_ANSWER_MAX);
	CHECK(!ans.body.len || ans.body.buf[ans.body.len] == '\0');
	if (status < 200 || status == 204 || status == 304)
		CHECK(ans.body.len == 0);

	/* no chunks: the body is what follows the head */
	hlen = head_end(data, size);
	head = malloc(hlen + 1);
	CHECK(head);
	memcpy(head, data, hlen);
	head[hlen] = '\0';
	if (!strcasestr(head, "chunked") && !memchr(head, '\0', hlen))
		CHECK(ans.body.len <= size - hlen &&
		      (!ans.body.len || !memcmp(ans.body.buf, data + hlen, ans.body.len)));
	free(head);

	if (ans.body.len < HTTP_ANSWER_MAX) {
		round_trip(&ans, 0);
		round_trip(&ans, ans.body.len <= 4096 ? 1 + data[size - 1] % 64 : 4096);
	}
	http_answer_release(&ans);
	return 0;
}
