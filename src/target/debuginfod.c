/*
 * Implementation of debuginfod.h over elfutils' libdebuginfod, loaded with
 * dlopen when the first client is made (as libdw itself does): the library
 * brings libcurl and is only a recommendation of the package, so framewalk
 * runs without it and then asks no server (dbgd_begin says why).
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdlib.h>

#include "target/debuginfod.h"
#include "util/util.h"

struct dbgd_lib {
	void *handle;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_get_user_data) *get_user_data;
};

struct dbgd {
	struct dbgd_lib lib;
	debuginfod_client *client;
	dbgd_progress_fn fn;
	void *arg;
	int cancelled;
};

static int lib_open(struct dbgd_lib *l)
{
	l->handle = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle)
		return -ENOENT;
	l->begin = (__typeof__(l->begin))dlsym(l->handle, "debuginfod_begin");
	l->end = (__typeof__(l->end))dlsym(l->handle, "debuginfod_end");
	l->find_debuginfo = (__typeof__(l->find_debuginfo))dlsym(l->handle,
								 "debuginfod_find_debuginfo");
	l->set_progressfn = (__typeof__(l->set_progressfn))dlsym(l->handle,
								 "debuginfod_set_progressfn");
	l->set_user_data = (__typeof__(l->set_user_data))dlsym(l->handle,
							       "debuginfod_set_user_data");
	l->get_user_data = (__typeof__(l->get_user_data))dlsym(l->handle,
							       "debuginfod_get_user_data");
	if (!l->begin || !l->end || !l->find_debuginfo || !l->set_progressfn ||
	    !l->set_user_data || !l->get_user_data) {
		dlclose(l->handle);
		l->handle = NULL;
		return -ENOSYS;
	}
	return 0;
}

const char *dbgd_missing(void)
{
	return DEBUGINFOD_SONAME " cannot be loaded (install libdebuginfod1)";
}

struct dbgd *dbgd_begin(void)
{
	struct dbgd *c;
	int ret;

	c = xcalloc(1, sizeof(*c));
	ret = lib_open(&c->lib);
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	c->client = c->lib.begin();
	if (!c->client) {
		dlclose(c->lib.handle);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->lib.set_user_data(c->client, c);
	return c;
}

void dbgd_end(struct dbgd *c)
{
	if (!c)
		return;
	c->lib.end(c->client);
	/*
	 * The library stays loaded (as libdw keeps its own dlopen of it): its
	 * destructor and libcurl's global state are not torn down mid-process,
	 * and what they hold at exit stays attributable to them.
	 */
	free(c);
}

/*
 * libdebuginfod calls back with its client only; the client's user data
 * leads back to c, through the library already loaded (RTLD_NOLOAD: no
 * second copy, and no pointer kept outside c).
 */
static int on_progress(debuginfod_client *client, long done, long total)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_NOLOAD);
	__typeof__(debuginfod_get_user_data) *get = NULL;
	struct dbgd *c = NULL;

	if (h)
		get = (__typeof__(get))dlsym(h, "debuginfod_get_user_data");
	if (get)
		c = get(client);
	if (h)
		dlclose(h);
	if (c && c->fn && c->fn(c->arg, done, total)) {
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
	c->lib.set_progressfn(c->client, on_progress);
	fd = c->lib.find_debuginfo(c->client, bid, (int)len, path);
	c->lib.set_progressfn(c->client, NULL);
	c->fn = NULL;
	if (fd >= 0)
		return fd;
	free(*path);
	*path = NULL;
	return c->cancelled ? -ECANCELED : fd;
}
