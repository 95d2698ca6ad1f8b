/*
 * A thin client of debuginfod servers (elfutils' libdebuginfod): one debug
 * file by build-id, given up at a deadline, with a progress callback. The
 * servers are DEBUGINFOD_URLS and the downloads are kept in libdebuginfod's
 * cache (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client or
 * ~/.cache/debuginfod_client): libdebuginfod reads those from the
 * environment itself; framewalk's own code reads them in the command layer
 * (struct debuginfo_env) and asks for a client only when a server is
 * configured. Built without the library (debuginfod_none.c), there is no
 * server to ask.
 */
#ifndef FRAMEWALK_TARGET_DEBUGINFOD_H
#define FRAMEWALK_TARGET_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

struct dbgd;

/*
 * Called while a server is being asked: done and total bytes (total <= 0
 * when not known yet). Return nonzero to give up on this lookup.
 */
typedef int (*dbgd_progress_fn)(void *arg, long done, long total);

/*
 * A client, made when a server is configured. NULL + errno: ENOSYS built
 * without the library, ENOENT libdebuginfod.so.1 cannot be loaded. Touches
 * no network.
 */
struct dbgd *dbgd_begin(void);
/* Why dbgd_begin failed with ENOENT, and the fix (for a warning). */
const char *dbgd_missing(void);
void dbgd_end(struct dbgd *c);

/*
 * The debug file for build-id bid (len bytes): a file descriptor, with its
 * path in the cache in *path (malloc'd), or -errno: -ENOENT not on any
 * server, -ECANCELED when fn gave up, -ECONNREFUSED / -EHOSTUNREACH /
 * -ETIMEDOUT and others when no server could answer.
 */
int dbgd_find_debuginfo(struct dbgd *c, const unsigned char *bid, size_t len,
			dbgd_progress_fn fn, void *arg, char **path);

#endif
