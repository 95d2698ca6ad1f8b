/*
 * Where the agent's profiles go: a set of destinations ("sinks") and the
 * one thread that delivers to them, so the capture never waits on a
 * network or a disk. Each period is encoded for every sink (encode.h) and
 * queued on that sink's bounded queue (spool.h); the sender thread takes
 * the oldest request of each sink in turn, and on a failure that may pass
 * (no connection, a timeout, HTTP 408, 429 or 5xx) leaves it first in line
 * and tries again later (1 s, doubling to 30 s, and at once when a new
 * period arrives), so requests arrive in order and none is lost while the
 * queue has room. A request the destination refuses for good (another
 * 4xx) is dropped and counted as rejected.
 *
 *   dir              one <time>-<service>-<pid>.pb.gz per process and
 *                    period, written whole (util/outfile.h); the oldest
 *                    files removed past a total size or an age
 *   pyroscope        /ingest, one request per process (multipart form,
 *                    the pprof as its "profile" file)
 *   pyroscope push   /push.v1.PusherService/Push, one request per period
 *   otlp             /v1development/profiles, one request per period
 */
#ifndef FRAMEWALK_AGENT_SINK_H
#define FRAMEWALK_AGENT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "agent/period.h"
#include "util/strbuf.h"

enum sink_kind {
	SINK_DIR,
	SINK_PYROSCOPE_INGEST,
	SINK_PYROSCOPE_PUSH,
	SINK_OTLP,
};

struct sink_config {
	enum sink_kind kind;
	const char *url;                /* the base URL; for dir, the directory */
	const char *user, *password;    /* basic authentication, or NULL */
	const char *bearer;             /* a bearer token, or NULL */
	const char *tenant;             /* X-Scope-OrgID, or NULL */
	char *const *headers;           /* more "Name: value" headers */
	size_t nheaders;
	const char *user_agent;
	long timeout_ms;                /* of one request */
	uint64_t dir_max_bytes;         /* dir: 0 = no limit */
	double dir_max_age_s;           /* dir: 0 = no limit */
	const char *spool_dir;          /* this sink's queue on disk, or NULL: in memory */
	size_t spool_max_items;
	uint64_t spool_max_bytes;
};

struct sink_stats {
	uint64_t sent;                  /* requests delivered (dir: files written) */
	uint64_t failures;              /* attempts that failed and will be retried */
	uint64_t dropped;               /* requests dropped from a full queue */
	uint64_t rejected;              /* requests the destination refused for good */
	uint64_t corrupt;               /* spooled requests that could not be read back */
	size_t queued;
	uint64_t queued_bytes;
	int failing;                    /* the last attempt failed */
	char last_error[256];
};

struct sinks;

/*
 * The endpoint a sink of this kind posts to, from the base URL the user
 * gave: the API's path appended (to an OTLP URL only when its path does
 * not already end in "/profiles"). Into out.
 */
void sink_endpoint(enum sink_kind kind, const char *url, struct strbuf *out);
/* "dir", "pyroscope", "pyroscope-push", "otlp". */
const char *sink_kind_name(enum sink_kind kind);
/* Does a sink of this kind send each process's pprof (period.h)? OTLP encodes its own. */
int sink_kind_sends_pprof(enum sink_kind kind);
/* One "framewalk agent: ..." line on stderr, written with a single call (the
 * sender threads and the main loop both write). */
void agent_vline(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);

/*
 * Set up the sinks (their queues opened: what a disk queue holds from
 * before is sent first) and start the sender thread. quiet: no lines on
 * stderr for recoveries, only for failures. 0, or -errno with the reason
 * in err.
 */
int sinks_start(struct sinks **out, const struct sink_config *cfg, size_t n, int quiet,
		struct strbuf *err);
/* Encode the period for every sink and queue it; never waits on delivery. */
void sinks_submit(struct sinks *s, const struct period_batch *b);
size_t sinks_count(const struct sinks *s);
/* Does one of s's sinks send pprof (a batch for s wants it: period.h)? */
int sinks_send_pprof(const struct sinks *s);
const char *sinks_name(const struct sinks *s, size_t i);
void sinks_stats(struct sinks *s, size_t i, struct sink_stats *out);
/*
 * Deliver what is queued until every queue is empty or deadline
 * (fw_now_ns time) passes (a request in flight then is aborted), and stop
 * the sender thread. Returns by deadline + 1 s whatever the sender does:
 * a sender that has not stopped by then (a call without a bound) is left
 * running and the sinks are never freed (sinks_free does nothing). Returns
 * how many requests are left queued (on disk they are sent at the next
 * start).
 */
size_t sinks_stop(struct sinks *s, uint64_t deadline_ns);
void sinks_free(struct sinks *s);

#endif
