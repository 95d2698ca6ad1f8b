/* Implementation of debuginfod.h over elfutils' libdebuginfod. */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdlib.h>

#include "target/debuginfod.h"
#include "util/util.h"

struct dbgd {
	debuginfod_client *client;
	dbgd_progress_fn fn;
	void *arg;
	int cancelled;
};

int dbgd_configured(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls && urls[strspn(urls, " \t")];
}

const char *dbgd_urls(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls ? urls : "";
}

struct dbgd *dbgd_begin(void)
{
	struct dbgd *c;

	if (!dbgd_configured()) {
		errno = ENOSYS;
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->client = debuginfod_begin();
	if (!c->client) {
		free(c);
		errno = ENOSYS;
		return NULL;
	}
	debuginfod_set_user_data(c->client, c);
	return c;
}

void dbgd_end(struct dbgd *c)
{
	if (!c)
		return;
	debuginfod_end(c->client);
	free(c);
}

static int on_progress(debuginfod_client *client, long done, long total)
{
	struct dbgd *c = debuginfod_get_user_data(client);

	if (c->fn && c->fn(c->arg, done, total)) {
		c->cancelled = 1;
		return 1;
	}
	return 0;
}

int dbgd_find_debuginfo(struct dbgd *c, const unsigned char *bid, size_t len,
			dbgd_progress_fn fn, void *arg, char **path)
{
	int fd;

	*path = NULL;
	if (!len || len > 64)
		return -EINVAL;
	c->fn = fn;
	c->arg = arg;
	c->cancelled = 0;
	debuginfod_set_progressfn(c->client, on_progress);
	fd = debuginfod_find_debuginfo(c->client, bid, (int)len, path);
	debuginfod_set_progressfn(c->client, NULL);
	c->fn = NULL;
	if (fd >= 0)
		return fd;
	free(*path);
	*path = NULL;
	return c->cancelled ? -ECANCELED : fd;
}
