/*
 * A bounded first-in first-out queue of encoded requests waiting for their
 * destination: in memory, or on disk (one file per request in its own
 * directory, so what was queued survives a restart of the agent and is
 * sent first when it starts again). Past either bound (requests, bytes)
 * the oldest requests are dropped first and counted: the queue never grows
 * without limit, whatever the destination does. The request being sent
 * (spool_peek) is never the one dropped; spool_pop removes it once sent.
 *
 * Not thread-safe: the caller holds one lock over the queue (sink.c).
 */
#ifndef FRAMEWALK_AGENT_SPOOL_H
#define FRAMEWALK_AGENT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define SPOOL_ITEM_MAX (256u << 20)   /* bytes of one request, read back at most */

struct spool_entry {
	uint64_t seq;
	uint64_t size;               /* meta + body bytes */
	char *meta;                  /* in memory only: the request's parameters */
	struct strbuf body;          /* in memory only */
};

struct spool {
	char *dir;                   /* NULL: in memory */
	int dir_fd;                  /* the directory, flock'd; -1 in memory */
	size_t max_items;
	uint64_t max_bytes;
	struct spool_entry *e;       /* oldest first */
	size_t n, alloc;
	uint64_t bytes;
	uint64_t next_seq;
	uint64_t inflight;           /* seq being sent (spool_peek), 0: none */
	uint64_t dropped;            /* requests dropped past a bound */
	uint64_t corrupt;            /* files of a disk spool found unreadable */
};

/* One request: its parameters (a line of text) and its body. */
struct spool_item {
	uint64_t seq;
	char *meta;
	struct strbuf body;
};

/*
 * Open a queue: dir NULL keeps it in memory; else the directory is created
 * (mode 0700) if needed, locked (flock, until spool_close) and the
 * requests already in it are queued, oldest first (dropping the oldest
 * past the bounds). 0, or -errno with the reason in err: -EBUSY another
 * agent holds it, -ELOOP a symlink, -EPERM owned by another user or
 * writable by group or others. spool_close is safe after a failure.
 */
int spool_open(struct spool *q, const char *dir, size_t max_items, uint64_t max_bytes,
	       struct strbuf *err);
/*
 * Queue a request last. Returns how many requests were dropped to make
 * room (the new one itself when it alone is larger than the bound), or
 * -errno when it could not be written (disk full): counted as dropped too.
 */
int spool_push(struct spool *q, const char *meta, const void *body, size_t len);
/*
 * A copy of the oldest request into *it (release with spool_item_release),
 * which becomes the one in flight. 0; -ENOENT when empty. A file that
 * cannot be read back is dropped, counted as corrupt, and the next tried;
 * an error that says nothing about the file (-EMFILE, -ENFILE, -ENOMEM,
 * -EINTR, -EAGAIN) is returned and the request stays first in line.
 */
int spool_peek(struct spool *q, struct spool_item *it);
/* The request seq was sent (or refused for good): remove it. Nothing in flight after. */
void spool_pop(struct spool *q, uint64_t seq);
/* Sending seq failed; it stays first in line. */
void spool_unpeek(struct spool *q);
void spool_item_release(struct spool_item *it);
/* Close the queue; on disk, the requests stay for the next start. */
void spool_close(struct spool *q);

#endif
