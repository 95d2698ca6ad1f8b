/*
 * Unit tests of the agent's pieces that read untrusted input or keep
 * promises the functional tests only see from outside: the /proc parsers
 * (a stat line whose command holds ") ", target/proc.h; agent/procinfo.c: an environment
 * block, cgroup paths of each container runtime, command lines), label
 * cleaning, a period's pprof made only for a destination that sends it,
 * the bounded spool (agent/spool.c: oldest dropped first, the
 * request in flight never, order kept across a reopen, a corrupt file
 * dropped and counted), the endpoints (agent/sink.c), and the HTTP/1.1
 * client (agent/http_socket.c) against a canned server on 127.0.0.1:
 * what it sends, chunked and oversized answers, garbage, a server that
 * never answers.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/http.h"
#include "agent/period.h"
#include "agent/procinfo.h"
#include "agent/sink.h"
#include "agent/spool.h"
#include "target/proc.h"
#include "util/strbuf.h"

/* ---- a period's batch ------------------------------------------------------ */

/*
 * Each process's pprof is made only when a destination sends it (OTLP
 * encodes its own): with it, a gzip'd profile of that process's samples.
 */
static void test_period_pprof_only_when_wanted(void **state)
{
	static struct procinfo info;
	struct period_batch b;
	struct profile src;
	uint32_t f, node, th;

	(void)state;
	profile_init(&src);
	f = profile_frame(&src, FRAME_PYTHON, profile_cstring(&src, "work"),
			  profile_cstring(&src, "app.py"), 3);
	node = profile_stack(&src, &f, 1);
	th = profile_thread(&src, 4242, 4242, "main");
	profile_add(&src, th, node, 5);
	info.pid = 4242;
	for (int want = 0; want < 2; want++) {
		period_batch_init(&b, 1, 1000, 2000, "host", "cpu", 49, "bpf", NULL, 0);
		b.want_pprof = want;
		assert_int_equal(period_batch_add(&b, &src, &info, "3.12.1", NULL, NULL), 0);
		assert_int_equal(b.n, 1);
		assert_int_equal(period_samples(&b.procs[0].prof), 5);
		if (want) {
			assert_true(b.procs[0].pprof.len > 2);
			assert_int_equal((uint8_t)b.procs[0].pprof.buf[0], 0x1f);   /* gzip */
			assert_int_equal((uint8_t)b.procs[0].pprof.buf[1], 0x8b);
		} else {
			assert_int_equal(b.procs[0].pprof.len, 0);
		}
		period_batch_release(&b);
	}
	profile_release(&src);
	assert_true(sink_kind_sends_pprof(SINK_DIR));
	assert_true(sink_kind_sends_pprof(SINK_PYROSCOPE_INGEST));
	assert_true(sink_kind_sends_pprof(SINK_PYROSCOPE_PUSH));
	assert_false(sink_kind_sends_pprof(SINK_OTLP));
}

/* ---- procinfo ------------------------------------------------------------- */

static void test_start_time(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t t = 0;

	(void)state;
	/* a command name may hold ") " itself: the last ')' ends it */
	strbuf_addstr(&sb, "42 (evil) 1 2) S");
	for (int i = 4; i <= 22; i++)
		strbuf_addf(&sb, " %d", i * 1000);
	strbuf_addstr(&sb, " 23 24\n");
	assert_int_equal(proc_stat_parse_field(sb.buf, sb.len, 22, &t), 0);
	assert_int_equal(t, 22000);
	/* cut before field 22 */
	assert_int_equal(proc_stat_parse_field(sb.buf, 40, 22, &t), -EINVAL);
	assert_int_equal(proc_stat_parse_field("42 (x", 5, 22, &t), -EINVAL);
	assert_int_equal(proc_stat_parse_field("", 0, 22, &t), -EINVAL);
	/* a live process: this one, started before now */
	assert_int_equal(proc_start_time(getpid(), &t), 0);
	assert_true(t > 0);
	assert_int_equal(proc_start_time(0x3fffffff, &t), -ESRCH);
	strbuf_release(&sb);
}

/* A period's end reached late: cut, or extended once to the next end after now. */
static void test_period_cut_now(void **state)
{
	const uint64_t s = 1000000000ull, p = 10 * s;
	uint64_t end;

	(void)state;
	/* on time, or late by up to half a period: cut now, the end kept */
	end = 100 * s;
	assert_int_equal(period_cut_now(p, 90 * s, 100 * s, &end), 1);
	assert_int_equal(end, 100 * s);
	assert_int_equal(period_cut_now(p, 90 * s, 105 * s, &end), 1);
	assert_int_equal(end, 100 * s);
	/* later: the next end after now, so the next period is whole */
	assert_int_equal(period_cut_now(p, 90 * s, 109 * s, &end), 0);
	assert_int_equal(end, 110 * s);
	end = 100 * s;
	assert_int_equal(period_cut_now(p, 90 * s, 135 * s, &end), 0);   /* 3.5 periods late */
	assert_int_equal(end, 140 * s);
	/* extended already (two periods or more long): cut however late */
	end = 110 * s;
	assert_int_equal(period_cut_now(p, 90 * s, 118 * s, &end), 1);
	assert_int_equal(end, 110 * s);
	/* a first period aligned to the clock, shorter than one: still extended once */
	end = 100 * s;
	assert_int_equal(period_cut_now(p, 97 * s, 108 * s, &end), 0);
	assert_int_equal(end, 110 * s);
}

static void test_env_lookup(void **state)
{
	static const char env[] = "A=1\0OTEL_SERVICE=no\0OTEL_SERVICE_NAME=svc\0B=x";
	size_t len = 0;
	const char *v;

	(void)state;
	v = procinfo_env_lookup(env, sizeof(env) - 1, "OTEL_SERVICE_NAME", &len);
	assert_non_null(v);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "svc", 3);
	/* the last entry has no NUL after it */
	v = procinfo_env_lookup(env, sizeof(env) - 1, "B", &len);
	assert_non_null(v);
	assert_int_equal(len, 1);
	assert_null(procinfo_env_lookup(env, sizeof(env) - 1, "OTEL", &len));
	assert_null(procinfo_env_lookup(env, sizeof(env) - 1, "PYROSCOPE_APPLICATION_NAME", &len));
	assert_null(procinfo_env_lookup("", 0, "A", &len));
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void check_container(const char *cgroup, const char *want)
{
	char out[PROCINFO_CONTAINER_LEN + 1];

	procinfo_container_id(cgroup, strlen(cgroup), out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_container_id(void **state)
{
	(void)state;
	check_container("0::/system.slice/docker-" ID64 ".scope\n", ID64);
	check_container("12:pids:/docker/" ID64 "\n0::/\n", ID64);
	check_container("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
			"cri-containerd-" ID64 ".scope\n", ID64);
	check_container("0::/machine.slice/libpod-" ID64 ".scope/container\n", ID64);
	check_container("0::/user.slice/user-0.slice/session-3.scope\n", "");
	/* 65 hex digits are not an id */
	check_container("0::/docker/" ID64 "0\n", "");
	check_container("", "");
}

static void check_service(const char *argv, size_t len, const char *want)
{
	char out[PROCINFO_SERVICE_MAX + 1];

	procinfo_service_from_argv(argv, len, out, sizeof(out));
	assert_string_equal(out, want);
}

#define ARGV(s) s, sizeof(s) - 1

static void test_service_from_argv(void **state)
{
	(void)state;
	check_service(ARGV("/usr/bin/python3\0-m\0celery\0worker\0"), "celery");
	check_service(ARGV("python3.12\0-u\0/srv/app/server.py\0--port\0"), "server");
	check_service(ARGV("python\0/srv/shop/__main__.py\0"), "shop");
	check_service(ARGV("python\0-c\0print(1)\0"), "python-c");
	/* an entry point's shebang: the interpreter runs the script */
	check_service(ARGV("/usr/bin/python3\0/usr/bin/gunicorn\0app:wsgi\0"), "gunicorn");
	check_service(ARGV("/usr/sbin/uwsgi\0--ini\0/etc/app.ini\0"), "uwsgi");
	check_service(ARGV("/usr/bin/python3\0"), "python3");
}

static void test_clean(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char in[] = "  a\x01" "b\x1b[31m\xc2\x85" "c\xff\xfe" "d\xc3\xa9  ";

	(void)state;
	procinfo_clean(&sb, in, sizeof(in) - 1, 64);
	assert_string_equal(strbuf_str(&sb), "ab[31mcd\xc3\xa9");
	/* the bidirectional formatting controls (U+202E, U+2066, U+061C) too:
	 * the one rule of util/utf8.h, as the terminal's escaping has it */
	strbuf_reset(&sb);
	procinfo_clean(&sb, "svc\xe2\x80\xae" "cba\xe2\x81\xa6x\xd8\x9cy", 16, 64);
	assert_string_equal(strbuf_str(&sb), "svccbaxy");
	/* cut on a character boundary: the two-byte é does not fit in 5 */
	strbuf_reset(&sb);
	procinfo_clean(&sb, "abcd\xc3\xa9", 6, 5);
	assert_string_equal(strbuf_str(&sb), "abcd");
	strbuf_release(&sb);
}

/* ---- spool ---------------------------------------------------------------- */

static void push_n(struct spool *q, int from, int to)
{
	for (int i = from; i <= to; i++) {
		char body[16];

		snprintf(body, sizeof(body), "body-%d", i);
		spool_push(q, "m", body, strlen(body));
	}
}

static uint64_t peek_seq(struct spool *q)
{
	struct spool_item it;
	uint64_t seq;

	assert_int_equal(spool_peek(q, &it), 0);
	seq = it.seq;
	spool_item_release(&it);
	return seq;
}

static void test_spool_memory_bound(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct spool q;
	struct spool_item it;

	(void)state;
	assert_int_equal(spool_open(&q, NULL, 3, 1 << 20, &err), 0);
	push_n(&q, 1, 5);
	assert_int_equal(q.n, 3);
	assert_int_equal(q.dropped, 2);
	/* the oldest went: 3 is first */
	assert_int_equal(spool_peek(&q, &it), 0);
	assert_int_equal(it.seq, 3);
	assert_string_equal(strbuf_str(&it.body), "body-3");
	/* 3 is in flight: a push past the bound drops 4, not 3 */
	push_n(&q, 6, 6);
	assert_int_equal(q.n, 3);
	assert_int_equal(q.e[0].seq, 3);
	assert_int_equal(q.e[1].seq, 5);
	spool_pop(&q, it.seq);
	spool_item_release(&it);
	assert_int_equal(peek_seq(&q), 5);
	spool_unpeek(&q);
	/* a request larger than the byte bound is dropped itself */
	spool_close(&q);
	assert_int_equal(spool_open(&q, NULL, 10, 8, &err), 0);
	assert_int_equal(spool_push(&q, "m", "0123456789", 10), 1);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.dropped, 1);
	spool_close(&q);
	strbuf_release(&err);
}

static void test_spool_disk_reopen(void **state)
{
	char dir[] = "/tmp/fw-spool-XXXXXX", path[4096];
	struct strbuf err = STRBUF_INIT;
	struct spool q;
	struct spool_item it;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(spool_open(&q, dir, 100, 1 << 20, &err), 0);
	push_n(&q, 1, 4);
	spool_close(&q);
	/* a crash's temporary file, and the first request damaged */
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000009", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%020d.req", dir, 1);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("framewalk-spool 1 1 999\nm", f);
	fclose(f);
	assert_int_equal(spool_open(&q, dir, 100, 1 << 20, &err), 0);
	assert_int_equal(q.n, 4);
	assert_int_equal(access(path, F_OK), 0);
	/* the damaged one is dropped and counted, the others come in order */
	assert_int_equal(spool_peek(&q, &it), 0);
	assert_int_equal(q.corrupt, 1);
	assert_int_equal(it.seq, 2);
	assert_string_equal(it.meta, "m");
	assert_string_equal(strbuf_str(&it.body), "body-2");
	spool_pop(&q, it.seq);
	spool_item_release(&it);
	assert_int_equal(peek_seq(&q), 3);
	spool_unpeek(&q);
	/* new requests number after the old ones */
	push_n(&q, 5, 5);
	assert_int_equal(q.e[q.n - 1].seq, 5);
	while (!spool_peek(&q, &it)) {
		spool_pop(&q, it.seq);
		spool_item_release(&it);
	}
	spool_close(&q);
	snprintf(path, sizeof(path), "%s/.tmp-00000000000000000009", dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(rmdir(dir), 0);   /* every file removed once sent */
	strbuf_release(&err);
}

/* Two agents on one spool: the second is refused while the first holds it. */
static void test_spool_exclusive(void **state)
{
	char dir[] = "/tmp/fw-spool-XXXXXX";
	struct strbuf err = STRBUF_INIT;
	struct spool a, b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(spool_open(&a, dir, 10, 1 << 20, &err), 0);
	assert_int_equal(spool_open(&b, dir, 10, 1 << 20, &err), -EBUSY);
	assert_non_null(strstr(strbuf_str(&err), "in use by another"));
	spool_close(&b);
	spool_close(&a);
	strbuf_reset(&err);
	assert_int_equal(spool_open(&b, dir, 10, 1 << 20, &err), 0);
	spool_close(&b);
	assert_int_equal(rmdir(dir), 0);
	strbuf_release(&err);
}

/* A spool others could write into, or a symlink, is refused with the reason. */
static void test_spool_refuses_unsafe_dirs(void **state)
{
	char dir[] = "/tmp/fw-spool-XXXXXX", path[4096];
	struct strbuf err = STRBUF_INIT;
	struct spool q;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ww", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(spool_open(&q, path, 10, 1 << 20, &err), -EPERM);
	assert_non_null(strstr(strbuf_str(&err), "writable by others"));
	spool_close(&q);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink(dir, path), 0);
	strbuf_reset(&err);
	assert_int_equal(spool_open(&q, path, 10, 1 << 20, &err), -ELOOP);
	assert_non_null(strstr(strbuf_str(&err), "symbolic link"));
	spool_close(&q);
	assert_int_equal(unlink(path), 0);
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/other", dir);
		assert_int_equal(mkdir(path, 0700), 0);
		assert_int_equal(chown(path, 65534, 65534), 0);
		strbuf_reset(&err);
		assert_int_equal(spool_open(&q, path, 10, 1 << 20, &err), -EPERM);
		assert_non_null(strstr(strbuf_str(&err), "owned by"));
		spool_close(&q);
		assert_int_equal(rmdir(path), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	strbuf_release(&err);
}

/* Out of descriptors when reading a request back: it stays, first in line. */
static void test_spool_peek_transient_error(void **state)
{
	char dir[] = "/tmp/fw-spool-XXXXXX";
	struct strbuf err = STRBUF_INIT;
	struct spool q;
	struct spool_item it;
	struct rlimit saved, low;
	int fd, ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(spool_open(&q, dir, 10, 1 << 20, &err), 0);
	push_n(&q, 1, 2);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	fd = dup(0);                    /* the lowest free descriptor: none left past it */
	assert_true(fd >= 0);
	close(fd);
	low = saved;
	low.rlim_cur = (rlim_t)fd;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	ret = spool_peek(&q, &it);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(ret, -EMFILE);
	assert_int_equal(q.n, 2);
	assert_int_equal(q.corrupt, 0);
	assert_int_equal(peek_seq(&q), 1);
	while (!spool_peek(&q, &it)) {
		spool_pop(&q, it.seq);
		spool_item_release(&it);
	}
	spool_close(&q);
	assert_int_equal(rmdir(dir), 0);
	strbuf_release(&err);
}

/* ---- endpoints ------------------------------------------------------------ */

static void check_endpoint(enum sink_kind k, const char *url, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	sink_endpoint(k, url, &sb);
	assert_string_equal(strbuf_str(&sb), want);
	strbuf_release(&sb);
}

static void test_endpoints(void **state)
{
	(void)state;
	check_endpoint(SINK_OTLP, "http://c:4318", "http://c:4318/v1development/profiles");
	check_endpoint(SINK_OTLP, "http://c:4318/", "http://c:4318/v1development/profiles");
	check_endpoint(SINK_OTLP, "http://c/otlp/v1development/profiles",
		       "http://c/otlp/v1development/profiles");
	check_endpoint(SINK_PYROSCOPE_INGEST, "http://p:4040/", "http://p:4040/ingest");
	check_endpoint(SINK_PYROSCOPE_PUSH, "http://p:4040",
		       "http://p:4040/push.v1.PusherService/Push");
}

/* ---- the HTTP client -------------------------------------------------------- */

struct canned {
	int listen_fd;
	const char *answer;      /* sent after the request is read; NULL: never answer */
	size_t answer_len;
	size_t repeat;           /* the answer's last byte sent this many more times */
	char request[8192];
	size_t request_len;
};

static void *serve_one(void *arg)
{
	struct canned *c = arg;
	int fd = accept(c->listen_fd, NULL, NULL);
	char *end;

	if (fd < 0)
		return NULL;
	/* read the head and the body (Content-Length) */
	for (;;) {
		ssize_t n = recv(fd, c->request + c->request_len,
				 sizeof(c->request) - 1 - c->request_len, 0);
		const char *cl;

		if (n <= 0)
			break;
		c->request_len += (size_t)n;
		c->request[c->request_len] = '\0';
		end = strstr(c->request, "\r\n\r\n");
		cl = strstr(c->request, "Content-Length: ");
		if (end && cl && c->request_len >= (size_t)(end + 4 - c->request) +
						  strtoul(cl + 16, NULL, 10))
			break;
	}
	if (c->answer) {
		send(fd, c->answer, c->answer_len, MSG_NOSIGNAL);
		for (size_t i = 0; i < c->repeat; i++)
			send(fd, c->answer + c->answer_len - 1, 1, MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR);
	} else {
		char b[64];

		while (recv(fd, b, sizeof(b), 0) > 0)
			;
	}
	close(fd);
	return NULL;
}

/* POST body to a canned server answering answer; the status, and what it received. */
static int post_canned(struct canned *c, const char *answer, size_t len, size_t repeat,
		       const struct http_request *tmpl, struct http_answer *ans, struct strbuf *why)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t slen = sizeof(sa);
	struct http_request req = *tmpl;
	struct http_client *cl = http_client_new();
	char url[64];
	pthread_t t;
	int ret;

	memset(c, 0, sizeof(*c));
	c->answer = answer;
	c->answer_len = len;
	c->repeat = repeat;
	c->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c->listen_fd >= 0);
	assert_int_equal(bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(c->listen_fd, 1), 0);
	assert_int_equal(getsockname(c->listen_fd, (struct sockaddr *)&sa, &slen), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/x?a=b", ntohs(sa.sin_port));
	req.url = url;
	assert_int_equal(pthread_create(&t, NULL, serve_one, c), 0);
	ret = http_post(cl, &req, ans, why);
	if (!c->answer)
		shutdown(c->listen_fd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(c->listen_fd);
	http_client_free(cl);
	return ret;
}

#define S(x) x, sizeof(x) - 1

static void test_http_request_and_answers(void **state)
{
	struct http_request req = { 0 };
	struct http_answer ans;
	struct strbuf why = STRBUF_INIT;
	struct canned *c = calloc(1, sizeof(*c));
	const char *const headers[] = { "X-Scope-OrgID: t1", NULL };

	(void)state;
	req.body = "PROFILE";
	req.len = 7;
	req.content_type = "application/x-protobuf";
	req.user = "alice";
	req.password = "s3cret";
	req.headers = headers;
	req.timeout_ms = 5000;
	/* Content-Length */
	assert_int_equal(post_canned(c, S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), 0,
				     &req, &ans, &why), 0);
	assert_int_equal(ans.status, 200);
	assert_string_equal(strbuf_str(&ans.body), "hello");
	http_answer_release(&ans);
	assert_non_null(strstr(c->request, "POST /v1/x?a=b HTTP/1.1\r\n"));
	assert_non_null(strstr(c->request, "\r\nAuthorization: Basic YWxpY2U6czNjcmV0\r\n"));
	assert_non_null(strstr(c->request, "\r\nX-Scope-OrgID: t1\r\n"));
	assert_non_null(strstr(c->request, "\r\nContent-Type: application/x-protobuf\r\n"));
	assert_non_null(strstr(c->request, "\r\nContent-Length: 7\r\n\r\nPROFILE"));
	/* chunked, with an extension */
	assert_int_equal(post_canned(c, S("HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n"
					  "3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), 0, &req, &ans,
				     &why), 0);
	assert_int_equal(ans.status, 503);
	assert_string_equal(strbuf_str(&ans.body), "abcde");
	http_answer_release(&ans);
	/* a body to the close, longer than what is kept */
	assert_int_equal(post_canned(c, S("HTTP/1.0 400 Bad\r\n\r\nx"), HTTP_ANSWER_MAX + 1000,
				     &req, &ans, &why), 0);
	assert_int_equal(ans.status, 400);
	assert_int_equal(ans.body.len, HTTP_ANSWER_MAX);
	http_answer_release(&ans);
	/* garbage, a truncated body, a header line without end */
	assert_int_equal(post_canned(c, S("SSH-2.0-OpenSSH\r\n"), 0, &req, &ans, &why), -EIO);
	assert_int_equal(post_canned(c, S("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), 0,
				     &req, &ans, &why), -EIO);
	assert_int_equal(post_canned(c, S("HTTP/1.1 200 OK\r\nX: y"), 20000, &req, &ans, &why),
			 -EIO);
	/* the multipart form */
	req.form_field = "profile";
	req.content_type = NULL;
	assert_int_equal(post_canned(c, S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), 0, &req,
				     &ans, &why), 0);
	http_answer_release(&ans);
	{
		const char *b = strstr(c->request, "boundary=");
		char boundary[80], *body = strstr(c->request, "\r\n\r\n") + 4;
		size_t blen;

		assert_non_null(b);
		blen = strcspn(b + 9, "\r");
		assert_true(blen < sizeof(boundary));
		memcpy(boundary, b + 9, blen);
		boundary[blen] = '\0';
		assert_memory_equal(body, "--", 2);
		assert_memory_equal(body + 2, boundary, blen);
		assert_non_null(strstr(body, "Content-Disposition: form-data; name=\"profile\"; "
					     "filename=\"profile\"\r\n"));
		assert_non_null(strstr(body, "\r\n\r\nPROFILE\r\n--"));
		assert_non_null(strstr(body + 2 + blen, boundary));
		assert_memory_equal(c->request + c->request_len - blen - 4, boundary, blen);
		assert_string_equal(c->request + c->request_len - 4, "--\r\n");
	}
	/* a server that reads and never answers: the deadline */
	req.timeout_ms = 300;
	strbuf_reset(&why);
	assert_int_equal(post_canned(c, NULL, 0, 0, &req, &ans, &why), -ETIMEDOUT);
	assert_non_null(strstr(strbuf_str(&why), "timed out"));
	free(c);
	strbuf_release(&why);
}

static void test_http_urls(void **state)
{
	struct strbuf why = STRBUF_INIT;

	(void)state;
	assert_int_equal(http_url_check("http://pyroscope:4040", &why), 0);
	assert_int_equal(http_url_check("http://[::1]:4318/x", &why), 0);
	assert_int_equal(http_url_check("https://profiles.example", &why), -ENOTSUP);
	assert_non_null(strstr(strbuf_str(&why), "TLS proxy"));
	assert_int_equal(http_url_check("http://user:pw@host/", &why), -EINVAL);
	assert_int_equal(http_url_check("http://host:99999/", &why), -EINVAL);
	assert_int_equal(http_url_check("http://:80/", &why), -EINVAL);
	assert_int_equal(http_url_check("ftp://host/", &why), -EINVAL);
	strbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_time),
		cmocka_unit_test(test_period_cut_now),
		cmocka_unit_test(test_period_pprof_only_when_wanted),
		cmocka_unit_test(test_env_lookup),
		cmocka_unit_test(test_container_id),
		cmocka_unit_test(test_service_from_argv),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_spool_memory_bound),
		cmocka_unit_test(test_spool_disk_reopen),
		cmocka_unit_test(test_spool_exclusive),
		cmocka_unit_test(test_spool_refuses_unsafe_dirs),
		cmocka_unit_test(test_spool_peek_transient_error),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_http_request_and_answers),
		cmocka_unit_test(test_http_urls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
