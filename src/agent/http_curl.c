/*
 * http.h with libcurl's easy interface: one easy handle per client, reused
 * so its connections stay open; no signals (CURLOPT_NOSIGNAL: the agent
 * has threads), a connect and a total timeout, the answer kept up to
 * HTTP_ANSWER_MAX, and a progress callback that ends the transfer when
 * the abort flag is set.
 */
#include <curl/curl.h>
#include <errno.h>

#include "agent/http.h"
#include "util/util.h"

#define CONNECT_TIMEOUT_MS 5000L

struct http_client {
	CURL *curl;
	char error[CURL_ERROR_SIZE];
};

int http_available(void)
{
	return 1;
}

const char *http_description(void)
{
	return curl_version();
}

int http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void http_global_cleanup(void)
{
	curl_global_cleanup();
}

struct http_client *http_client_new(void)
{
	struct http_client *c = xcalloc(1, sizeof(*c));

	c->curl = curl_easy_init();
	if (!c->curl) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	free(c);
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct strbuf *sb = ctx;
	size_t n = size * nmemb;

	if (sb->len < HTTP_ANSWER_MAX)
		strbuf_add(sb, data, sb->len + n > HTTP_ANSWER_MAX ? HTTP_ANSWER_MAX - sb->len : n);
	return n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	volatile sig_atomic_t *abort_flag = ctx;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return abort_flag && *abort_flag;
}

static int errno_of(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int http_post(struct http_client *c, const struct http_request *req, struct http_answer *ans,
	      struct strbuf *why)
{
	CURL *h = c->curl;
	struct curl_slist *headers = NULL;
	curl_mime *mime = NULL;
	struct strbuf line = STRBUF_INIT;
	CURLcode rc;
	int ret = 0;

	memset(ans, 0, sizeof(*ans));
	curl_easy_reset(h);
	c->error[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->error);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 req->timeout_ms < CONNECT_TIMEOUT_MS ? req->timeout_ms : CONNECT_TIMEOUT_MS);
	if (req->user_agent)
		curl_easy_setopt(h, CURLOPT_USERAGENT, req->user_agent);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &ans->body);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)req->abort);
	/* only http and https, also across redirects (which are not followed) */
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (req->user) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, req->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, req->password ? req->password : "");
	}
	if (req->bearer) {
		strbuf_addf(&line, "Authorization: Bearer %s", req->bearer);
		headers = curl_slist_append(headers, strbuf_str(&line));
		strbuf_reset(&line);
	}
	for (const char *const *hd = req->headers; hd && *hd; hd++)
		headers = curl_slist_append(headers, *hd);
	/* no "Expect: 100-continue" round trip before a large body */
	headers = curl_slist_append(headers, "Expect:");
	if (req->form_field) {
		curl_mimepart *part;

		mime = curl_mime_init(h);
		part = curl_mime_addpart(mime);
		curl_mime_name(part, req->form_field);
		curl_mime_filename(part, req->form_field);
		curl_mime_type(part, "application/octet-stream");
		curl_mime_data(part, req->body, req->len);
		curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	} else {
		if (req->content_type) {
			strbuf_addf(&line, "Content-Type: %s", req->content_type);
			headers = curl_slist_append(headers, strbuf_str(&line));
		}
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ans->status);
	} else {
		ret = errno_of(rc);
		strbuf_addstr(why, c->error[0] ? c->error : curl_easy_strerror(rc));
		strbuf_release(&ans->body);
	}
	/* the handle must not keep pointers to what is freed here */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_MIMEPOST, NULL);
	curl_slist_free_all(headers);
	curl_mime_free(mime);
	strbuf_release(&line);
	return ret;
}

void http_answer_release(struct http_answer *ans)
{
	strbuf_release(&ans->body);
	memset(ans, 0, sizeof(*ans));
}
