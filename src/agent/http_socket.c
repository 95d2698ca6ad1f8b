/*
 * http.h over a plain socket: a small HTTP/1.1 client for the agent's
 * POSTs (libcurl is not a dependency of framewalk, and one request per
 * destination and period needs little of it). One connection per request
 * ("Connection: close": no state kept between periods), the name resolved
 * with getaddrinfo on a helper thread (the lookup has no timeout of its
 * own: a resolver that never answers would hold the sender, and the
 * SIGTERM flush, for minutes), every step under one deadline (resolving
 * and connecting get at most 5 s of it) and checked against the abort flag
 * at least every 100 ms; the status line and headers are bounded (16 KiB), the body
 * is read by Content-Length, chunks or until the close, and only its first
 * HTTP_ANSWER_MAX bytes are kept. http:// only: https is refused when the
 * options are read (http_url_check), with the fix (a local TLS proxy).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/encode.h"
#include "agent/http.h"
#include "util/util.h"

#define CONNECT_TIMEOUT_NS 5000000000ull
#define SLICE_MS 100
#define HEAD_MAX (16u << 10)
#define NS 1000000000ull
/* lookups given up on and still running: past this, no new one starts */
#define RESOLVE_PENDING_MAX 4

struct http_client {
	unsigned serial;     /* multipart boundaries differ between requests */
};

int http_available(void)
{
	return 1;
}

const char *http_description(void)
{
	return "framewalk's HTTP/1.1 client (http:// only)";
}

int http_global_init(void)
{
	return 0;
}

void http_global_cleanup(void)
{
}

struct http_client *http_client_new(void)
{
	return xcalloc(1, sizeof(struct http_client));
}

void http_client_free(struct http_client *c)
{
	free(c);
}

/* The parts of http://host[:port][/path]; [v6] hosts too. 0 or -EINVAL. */
struct url_parts {
	char host[256];
	char port[8];
	const char *path;        /* "/..." or "" (then "/" is sent) */
};

static int url_split(const char *url, struct url_parts *u, struct strbuf *why)
{
	const char *h, *end, *colon = NULL;
	size_t hlen;

	if (strncasecmp(url, "http://", 7)) {
		strbuf_addf(why, "%s: only http:// URLs are supported", url);
		return -EINVAL;
	}
	h = url + 7;
	end = h + strcspn(h, "/?#");
	u->path = end;
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(end - h));

		if (!close)
			goto bad;
		hlen = (size_t)(close - h - 1);
		if (hlen >= sizeof(u->host))
			goto bad;
		memcpy(u->host, h + 1, hlen);
		u->host[hlen] = '\0';
		if (close + 1 < end) {
			if (close[1] != ':')
				goto bad;
			colon = close + 1;
		}
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hlen = (size_t)((colon ? colon : end) - h);
		if (!hlen || hlen >= sizeof(u->host) || memchr(h, '@', (size_t)(end - h)))
			goto bad;
		memcpy(u->host, h, hlen);
		u->host[hlen] = '\0';
	}
	if (colon) {
		size_t plen = (size_t)(end - colon - 1);
		long port;
		char buf[8];

		if (!plen || plen >= sizeof(buf))
			goto bad;
		memcpy(buf, colon + 1, plen);
		buf[plen] = '\0';
		if (parse_long(buf, &port) || port < 1 || port > 65535)
			goto bad;
		xsnprintf(u->port, sizeof(u->port), "%ld", port);
	} else {
		xsnprintf(u->port, sizeof(u->port), "80");
	}
	if (!*u->host)
		goto bad;
	return 0;
bad:
	strbuf_addf(why, "%s: not a URL of the form http://HOST[:PORT][/PATH] (credentials go in "
		    "the options, not the URL)", url);
	return -EINVAL;
}

int http_url_check(const char *url, struct strbuf *why)
{
	struct url_parts u;

	if (!strncasecmp(url, "https://", 8)) {
		strbuf_addf(why, "%s: https is not supported by framewalk's HTTP client; send to a "
			    "local TLS proxy over http:// (e.g. an OpenTelemetry collector or stunnel "
			    "on 127.0.0.1, docs/AGENT.md)", url);
		return -ENOTSUP;
	}
	return url_split(url, &u, why);
}

int http_url_loopback(const char *url, char *host, size_t size)
{
	struct strbuf why = STRBUF_INIT;
	struct url_parts u;
	struct in6_addr a6;
	struct in_addr a4;
	int ret = url_split(url, &u, &why);

	strbuf_release(&why);
	if (ret)
		return 0;
	xsnprintf(host, size, "%s", u.host);
	if (!strcasecmp(u.host, "localhost"))
		return 1;
	if (inet_pton(AF_INET, u.host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, u.host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static int aborted(const struct http_request *req)
{
	return req->abort && *req->abort;
}

/*
 * Wait for events on fd until the deadline, in slices so an abort is seen.
 * 0 ready, -ETIMEDOUT, -ECANCELED, -errno.
 */
static int wait_fd(int fd, short events, uint64_t deadline, const struct http_request *req)
{
	for (;;) {
		struct pollfd p = { fd, events, 0 };
		uint64_t now = fw_now_ns();
		int ms, r;

		if (aborted(req))
			return -ECANCELED;
		if (now >= deadline)
			return -ETIMEDOUT;
		ms = (int)((deadline - now + 999999) / 1000000);
		r = poll(&p, 1, ms < SLICE_MS ? ms : SLICE_MS);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * One lookup on its own thread, shared by the thread and the caller
 * (refs); whichever lets go last frees it, so a caller that gives up
 * returns at once and the lookup ends on its own (glibc's resolver does
 * time out, after resolv.conf's timeout x attempts).
 */
struct lookup {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs, done, rc;
	int abandoned;          /* the caller gave up: counted in lookups_pending */
	struct addrinfo *res;
	char host[256], port[8];
};

static atomic_int lookups_pending;

static void lookup_put(struct lookup *l)
{
	int last;

	pthread_mutex_lock(&l->lock);
	last = !--l->refs;
	pthread_mutex_unlock(&l->lock);
	if (!last)
		return;
	if (l->res)
		freeaddrinfo(l->res);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}

static void *lookup_main(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo hints, *res = NULL;
	int rc;

	pthread_setname_np(pthread_self(), "fw-resolver");
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(l->host, l->port, &hints, &res);
	pthread_mutex_lock(&l->lock);
	l->rc = rc;
	l->res = rc ? NULL : res;
	l->done = 1;
	if (l->abandoned)
		atomic_fetch_sub(&lookups_pending, 1);
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	lookup_put(l);
	return NULL;
}

/*
 * getaddrinfo(u) within deadline and the abort flag. 0 with *out (the
 * caller frees it), or -ETIMEDOUT / -ECANCELED / -EIO with the reason in why.
 */
static int resolve(const struct url_parts *u, uint64_t deadline, const struct http_request *req,
		   struct addrinfo **out, struct strbuf *why)
{
	struct lookup *l;
	pthread_attr_t attr;
	pthread_condattr_t ca;
	pthread_t t;
	sigset_t all, old;
	int ret;

	if (atomic_load(&lookups_pending) >= RESOLVE_PENDING_MAX) {
		strbuf_addf(why, "cannot resolve %s: %d earlier lookups still unanswered", u->host,
			    RESOLVE_PENDING_MAX);
		return -ETIMEDOUT;
	}
	l = xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	l->refs = 2;
	xsnprintf(l->host, sizeof(l->host), "%s", u->host);
	xsnprintf(l->port, sizeof(l->port), "%s", u->port);
	/* the helper takes no signal: they belong to the agent's own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&t, &attr, lookup_main, l);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		l->refs = 1;
		lookup_put(l);
		strbuf_addf(why, "cannot resolve %s: %s", u->host, strerror(-ret));
		return -EIO;
	}
	pthread_mutex_lock(&l->lock);
	ret = 0;
	while (!l->done) {
		uint64_t now = fw_now_ns(), step = SLICE_MS * 1000000ull;
		struct timespec ts;

		if (aborted(req)) {
			ret = -ECANCELED;
			break;
		}
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (deadline - now < step)
			step = deadline - now;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(step / NS);
		ts.tv_nsec += (long)(step % NS);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&l->cond, &l->lock, &ts);
	}
	if (ret) {
		l->abandoned = 1;
		atomic_fetch_add(&lookups_pending, 1);
	} else if (l->rc) {
		strbuf_addf(why, "cannot resolve %s: %s", u->host, gai_strerror(l->rc));
		ret = -EIO;
	} else {
		*out = l->res;
		l->res = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	lookup_put(l);
	if (ret == -ETIMEDOUT || ret == -ECANCELED)
		strbuf_addf(why, "cannot resolve %s: %s", u->host,
			    ret == -ETIMEDOUT ? "timed out" : "given up (stopping)");
	return ret;
}

static int connect_to(const struct url_parts *u, uint64_t deadline, const struct http_request *req,
		      int *out, struct strbuf *why)
{
	struct addrinfo *res = NULL, *ai;
	uint64_t cdeadline = fw_now_ns() + CONNECT_TIMEOUT_NS;
	int ret = -ECONNREFUSED;

	if (cdeadline > deadline)
		cdeadline = deadline;
	ret = resolve(u, cdeadline, req, &res, why);
	if (ret)
		return ret;
	ret = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				ai->ai_protocol);
		int err = 0;
		socklen_t elen = sizeof(err);

		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
			ret = -errno;
			close(fd);
			continue;
		}
		ret = wait_fd(fd, POLLOUT, cdeadline, req);
		if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = errno;
		if (!ret && err)
			ret = -err;
		if (!ret) {
			*out = fd;
			break;
		}
		close(fd);
		if (ret == -ECANCELED)
			break;
	}
	freeaddrinfo(res);
	if (ret)
		strbuf_addf(why, "cannot connect to %s port %s: %s", u->host, u->port,
			    ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
	return ret;
}

static int send_all(int fd, const void *data, size_t len, uint64_t deadline,
		    const struct http_request *req)
{
	const char *p = data;

	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			int ret = wait_fd(fd, POLLOUT, deadline, req);

			if (ret)
				return ret;
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Reading the answer: what arrived and is not consumed yet. */
struct reader {
	int fd;
	uint64_t deadline;
	const struct http_request *req;
	char buf[8192];
	size_t pos, len;
	int eof;
};

/* More bytes into the buffer. 0, or -errno; at the end of the stream eof is set. */
static int fill(struct reader *r)
{
	if (r->pos == r->len)
		r->pos = r->len = 0;
	for (;;) {
		ssize_t n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, 0);

		if (n > 0) {
			r->len += (size_t)n;
			return 0;
		}
		if (!n) {
			r->eof = 1;
			return 0;
		}
		if (errno == EAGAIN || errno == EINTR) {
			int ret = wait_fd(r->fd, POLLIN, r->deadline, r->req);

			if (ret)
				return ret;
			continue;
		}
		return -errno;
	}
}

/* One line (CRLF or LF, without it) into line, at most max bytes. 0, -EPROTO, -errno. */
static int read_line(struct reader *r, struct strbuf *line, size_t max)
{
	strbuf_reset(line);
	for (;;) {
		char *nl = r->len > r->pos ? memchr(r->buf + r->pos, '\n', r->len - r->pos) : NULL;
		size_t take = nl ? (size_t)(nl - (r->buf + r->pos)) : r->len - r->pos;
		int ret;

		if (line->len + take > max)
			return -EPROTO;
		strbuf_add(line, r->buf + r->pos, take);
		r->pos += take;
		if (nl) {
			r->pos++;
			if (line->len && line->buf[line->len - 1] == '\r')
				line->buf[--line->len] = '\0';
			return 0;
		}
		if (r->eof)
			return -EPROTO;
		ret = fill(r);
		if (ret)
			return ret;
		if (r->eof && r->pos == r->len)
			return -EPROTO;
	}
}

/* n body bytes (all when n is UINT64_MAX: until the close), the first kept. */
static int read_body(struct reader *r, uint64_t n, struct strbuf *keep)
{
	while (n) {
		size_t avail, take;
		int ret;

		if (r->pos == r->len) {
			if (r->eof)
				return n == UINT64_MAX ? 0 : -EPROTO;
			ret = fill(r);
			if (ret)
				return ret;
			continue;
		}
		avail = r->len - r->pos;
		take = n < avail ? (size_t)n : avail;
		if (keep->len < HTTP_ANSWER_MAX)
			strbuf_add(keep, r->buf + r->pos,
				   keep->len + take > HTTP_ANSWER_MAX ? HTTP_ANSWER_MAX - keep->len : take);
		r->pos += take;
		if (n != UINT64_MAX)
			n -= take;
	}
	return 0;
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!((*s >= '0' && *s <= '9') || (base == 16 && strchr("abcdefABCDEF", *s) && *s)))
		return -EPROTO;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno)
		return -EPROTO;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end && !(base == 16 && *end == ';'))
		return -EPROTO;
	*out = v;
	return 0;
}

static int read_answer(struct reader *r, struct http_answer *ans)
{
	struct strbuf line = STRBUF_INIT;
	uint64_t length = UINT64_MAX, total = 0;
	int chunked = 0, ret;
	long status;
	char *end;

	ret = read_line(r, &line, HEAD_MAX);
	if (!ret && (strncmp(strbuf_str(&line), "HTTP/1.", 7) || line.len < 12 || line.buf[8] != ' '))
		ret = -EPROTO;
	if (ret)
		goto out;
	status = strtol(line.buf + 9, &end, 10);
	if (status < 100 || status > 999 || (*end && *end != ' ')) {
		ret = -EPROTO;
		goto out;
	}
	ans->status = status;
	for (;;) {
		const char *v;

		ret = read_line(r, &line, HEAD_MAX);
		if (ret)
			goto out;
		total += line.len;
		if (total > HEAD_MAX) {
			ret = -EPROTO;
			goto out;
		}
		if (!line.len)
			break;
		v = strchr(line.buf, ':');
		if (!v)
			continue;
		v++;
		if (!strncasecmp(line.buf, "content-length:", 15) && parse_u64(v, 10, &length)) {
			ret = -EPROTO;
			goto out;
		}
		if (!strncasecmp(line.buf, "transfer-encoding:", 18) && strcasestr(v, "chunked"))
			chunked = 1;
	}
	if (status < 200 || status == 204 || status == 304)
		goto out;       /* no body */
	if (!chunked) {
		ret = read_body(r, length, &ans->body);
		goto out;
	}
	for (;;) {
		uint64_t size;

		ret = read_line(r, &line, 256);
		if (!ret && parse_u64(line.buf, 16, &size))
			ret = -EPROTO;
		if (ret)
			goto out;
		if (!size)
			break;
		ret = read_body(r, size, &ans->body);
		if (!ret)
			ret = read_line(r, &line, 2);
		if (ret)
			goto out;
	}
out:
	strbuf_release(&line);
	return ret;
}

int http_read_answer(int fd, uint64_t deadline, const struct http_request *req,
		     struct http_answer *ans)
{
	struct reader *r = xcalloc(1, sizeof(*r));
	int ret;

	memset(ans, 0, sizeof(*ans));
	r->fd = fd;
	r->deadline = deadline;
	r->req = req;
	ret = read_answer(r, ans);
	if (ret) {
		strbuf_release(&ans->body);
		ans->status = 0;
	}
	free(r);
	return ret;
}

static void base64(struct strbuf *out, const char *s, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		if (i + 1 < len)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < len)
			v |= (unsigned char)s[i + 2];
		strbuf_addch(out, tab[v >> 18 & 63]);
		strbuf_addch(out, tab[v >> 12 & 63]);
		strbuf_addch(out, i + 1 < len ? tab[v >> 6 & 63] : '=');
		strbuf_addch(out, i + 2 < len ? tab[v & 63] : '=');
	}
}

/* The request's head; the multipart envelope, when there is one, in pre and post. */
static void build_head(struct http_client *c, const struct http_request *req,
		       const struct url_parts *u, struct strbuf *head, struct strbuf *pre,
		       struct strbuf *post)
{
	int v6 = strchr(u->host, ':') != NULL;
	size_t len = req->len;

	strbuf_addf(head, "POST %s%s HTTP/1.1\r\nHost: %s%s%s", *u->path == '/' ? "" : "/", u->path,
		    v6 ? "[" : "", u->host, v6 ? "]" : "");
	if (strcmp(u->port, "80"))
		strbuf_addf(head, ":%s", u->port);
	strbuf_addstr(head, "\r\nConnection: close\r\nAccept: */*\r\n");
	if (req->user_agent)
		strbuf_addf(head, "User-Agent: %s\r\n", req->user_agent);
	if (req->user) {
		struct strbuf cred = STRBUF_INIT;

		strbuf_addf(&cred, "%s:%s", req->user, req->password ? req->password : "");
		strbuf_addstr(head, "Authorization: Basic ");
		base64(head, cred.buf, cred.len);
		strbuf_addstr(head, "\r\n");
		strbuf_release(&cred);
	}
	if (req->bearer)
		strbuf_addf(head, "Authorization: Bearer %s\r\n", req->bearer);
	for (const char *const *h = req->headers; h && *h; h++)
		strbuf_addf(head, "%s\r\n", *h);
	if (req->form_field) {
		char boundary[64];
		uint8_t rnd[16];

		/* random, so a body cannot contain it by chance */
		encode_random_id(rnd);
		xsnprintf(boundary, sizeof(boundary), "framewalk-%u-", ++c->serial);
		strbuf_addf(head, "Content-Type: multipart/form-data; boundary=%s", boundary);
		strbuf_addf(pre, "--%s", boundary);
		for (size_t i = 0; i < sizeof(rnd); i++) {
			strbuf_addf(head, "%02x", rnd[i]);
			strbuf_addf(pre, "%02x", rnd[i]);
		}
		strbuf_addf(pre, "\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
			    "Content-Type: application/octet-stream\r\n\r\n", req->form_field,
			    req->form_field);
		/* the closing delimiter: the same boundary */
		strbuf_addstr(post, "\r\n");
		strbuf_add(post, pre->buf, strcspn(pre->buf, "\r"));
		strbuf_addstr(post, "--\r\n");
		strbuf_addstr(head, "\r\n");
		len += pre->len + post->len;
	} else if (req->content_type) {
		strbuf_addf(head, "Content-Type: %s\r\n", req->content_type);
	}
	strbuf_addf(head, "Content-Length: %zu\r\n\r\n", len);
}

int http_post(struct http_client *c, const struct http_request *req, struct http_answer *ans,
	      struct strbuf *why)
{
	struct strbuf head = STRBUF_INIT, pre = STRBUF_INIT, post = STRBUF_INIT;
	uint64_t deadline = fw_now_ns() + (uint64_t)req->timeout_ms * 1000000ull;
	struct url_parts u;
	int fd = -1, ret;

	memset(ans, 0, sizeof(*ans));
	ret = url_split(req->url, &u, why);
	if (ret)
		return -EIO;
	ret = connect_to(&u, deadline, req, &fd, why);
	if (ret)
		goto out;
	build_head(c, req, &u, &head, &pre, &post);
	ret = send_all(fd, head.buf, head.len, deadline, req);
	if (!ret && pre.len)
		ret = send_all(fd, pre.buf, pre.len, deadline, req);
	if (!ret)
		ret = send_all(fd, req->body, req->len, deadline, req);
	if (!ret && post.len)
		ret = send_all(fd, post.buf, post.len, deadline, req);
	if (ret) {
		/* the server may have answered early (e.g. 413) and closed: read that */
		if (ret != -EPIPE && ret != -ECONNRESET) {
			strbuf_addf(why, "sending to %s: %s", u.host,
				    ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
			goto out;
		}
	}
	ret = http_read_answer(fd, deadline, req, ans);
	if (ret)
		strbuf_addf(why, "reading the answer of %s: %s", u.host,
			    ret == -ETIMEDOUT ? "timed out" : ret == -EPROTO ? "not HTTP/1.x" :
			    strerror(-ret));
out:
	if (fd >= 0)
		close(fd);
	strbuf_release(&head);
	strbuf_release(&pre);
	strbuf_release(&post);
	if (!ret)
		return 0;
	switch (ret) {
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -ECANCELED:
		return ret;
	default:
		return -EIO;
	}
}

void http_answer_release(struct http_answer *ans)
{
	strbuf_release(&ans->body);
	memset(ans, 0, sizeof(*ans));
}
