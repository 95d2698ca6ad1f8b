/*
 * http.h for the static build: no HTTP. glibc's getaddrinfo in a static
 * binary needs the shared NSS modules of the glibc it was linked with at
 * run time (the link warns, and the static build treats warnings as
 * errors); so the static agent writes directories (--dir) only, and the
 * destinations that need HTTP are refused when the options are read.
 */
#include <errno.h>

#include "agent/http.h"
#include "util/util.h"

int http_available(void)
{
	return 0;
}

const char *http_description(void)
{
	return "no HTTP in the static build (it writes --dir only; use the ordinary build or "
	       "the .deb to send to Pyroscope or OTLP)";
}

int http_url_check(const char *url, struct strbuf *why)
{
	strbuf_addf(why, "cannot send to %s: %s", url, http_description());
	return -ENOTSUP;
}

int http_url_loopback(const char *url, char *host, size_t size)
{
	/* nothing is sent over HTTP by this build */
	(void)url;
	if (size)
		*host = '\0';
	return 1;
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
	errno = ENOTSUP;
	return NULL;
}

void http_client_free(struct http_client *c)
{
	(void)c;
}

int http_post(struct http_client *c, const struct http_request *req, struct http_answer *ans,
	      struct strbuf *why)
{
	(void)c;
	(void)req;
	memset(ans, 0, sizeof(*ans));
	strbuf_addstr(why, http_description());
	return -ENOTSUP;
}

void http_answer_release(struct http_answer *ans)
{
	strbuf_release(&ans->body);
}

int http_read_answer(int fd, uint64_t deadline, const struct http_request *req,
		     struct http_answer *ans)
{
	(void)fd;
	(void)deadline;
	(void)req;
	memset(ans, 0, sizeof(*ans));
	return -ENOTSUP;
}
