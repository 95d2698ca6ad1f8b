/*
 * HTTP POST for the agent's destinations, behind one header with two
 * implementations: http_socket.c (a small HTTP/1.1 client over a socket,
 * http:// only; the ordinary build) and http_none.c (the static build,
 * whose glibc resolver would need the NSS modules at run time: there the
 * agent writes directories only). Every transfer is bounded in time
 * (connect and total), in what it keeps of the answer, and can be aborted
 * from another thread; a client is used by one thread at a time.
 */
#ifndef FRAMEWALK_AGENT_HTTP_H
#define FRAMEWALK_AGENT_HTTP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define HTTP_ANSWER_MAX (64u << 10)   /* bytes of an answer kept */

struct http_request {
	const char *url;
	const char *user_agent;         /* or NULL */
	const char *content_type;       /* of the body; ignored with form_field */
	const char *const *headers;     /* "Name: value" lines, NULL-terminated; or NULL */
	const char *user, *password;    /* basic authentication, or NULL */
	const char *bearer;             /* "Authorization: Bearer" token, or NULL */
	const void *body;
	size_t len;
	/*
	 * Non-NULL: send the body as the file part of that name of a
	 * multipart/form-data request (application/octet-stream).
	 */
	const char *form_field;
	long timeout_ms;                /* the whole transfer; connecting gets at most 5 s of it */
	volatile sig_atomic_t *abort;   /* set from another thread: give up at once */
};

struct http_answer {
	long status;                    /* the HTTP status code */
	struct strbuf body;             /* the first HTTP_ANSWER_MAX bytes of the answer */
};

struct http_client;

/* Can this build send over HTTP at all? 1, or 0 (static build). */
int http_available(void);
/* What this build's HTTP is, for messages, or why there is none. */
const char *http_description(void);
/*
 * Can url be posted to? 0, or -ENOTSUP (https, or no HTTP in this build)
 * / -EINVAL (not http://HOST[:PORT][/PATH]) with the reason and its fix in why.
 */
int http_url_check(const char *url, struct strbuf *why);
/*
 * Does url (http_url_check'd) name this host's loopback: "localhost",
 * 127.0.0.0/8 or ::1? 1 or 0; no lookup is made (a name other than
 * localhost is taken as remote). The host's name into host (size bytes).
 */
int http_url_loopback(const char *url, char *host, size_t size);
/* Once, before any other thread runs. 0 or -errno. */
int http_global_init(void);
void http_global_cleanup(void);

/* A client keeps its connections open between requests. NULL + errno. */
struct http_client *http_client_new(void);
void http_client_free(struct http_client *c);

/*
 * POST req. 0 when an answer arrived (whatever its status, in *ans, which
 * the caller releases with http_answer_release); otherwise -ETIMEDOUT,
 * -ECONNREFUSED, -ECANCELED (aborted), -ENOTSUP (no HTTP in this build)
 * or -EIO, with the reason in why.
 */
int http_post(struct http_client *c, const struct http_request *req, struct http_answer *ans,
	      struct strbuf *why);
void http_answer_release(struct http_answer *ans);

/*
 * http_post's reading of the answer (-ENOTSUP without HTTP): one HTTP/1.x
 * answer from fd, a connected stream socket the request went out on, until
 * deadline (fw_now_ns) or req->abort. The status line and headers are
 * bounded (16 KiB), the body is read by Content-Length, chunks or until the
 * close, its first HTTP_ANSWER_MAX bytes kept in ans->body. 0 with *ans
 * filled; else -EPROTO (not HTTP/1.x), -ETIMEDOUT, -ECANCELED or -errno,
 * with *ans empty.
 */
int http_read_answer(int fd, uint64_t deadline, const struct http_request *req,
		     struct http_answer *ans);

#endif
