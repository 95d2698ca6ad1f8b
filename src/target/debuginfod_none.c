/* debuginfod.h when framewalk is built without libdebuginfod: no server. */
#include <errno.h>
#include <stdlib.h>

#include "target/debuginfod.h"

const char *dbgd_missing(void)
{
	return "this framewalk was built without debuginfod support";
}

struct dbgd *dbgd_begin(void)
{
	errno = ENOSYS;
	return NULL;
}

void dbgd_end(struct dbgd *c)
{
	(void)c;
}

int dbgd_find_debuginfo(struct dbgd *c, const unsigned char *bid, size_t len,
			dbgd_progress_fn fn, void *arg, char **path)
{
	(void)c, (void)bid, (void)len, (void)fn, (void)arg;
	*path = NULL;
	return -ENOSYS;
}
