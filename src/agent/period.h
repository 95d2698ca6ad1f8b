/*
 * One period of the agent: what every process profiled recorded between
 * two instants, each as a profile of its own with its labels and, when a
 * destination sends it, its gzip'd pprof (the one writer, output/pprof.c;
 * encoded once for all of them), gathered in a batch that
 * every destination encodes in its own way (sink.h). The labels are one
 * list, in one order, for all of them (period_labels); the OTLP encoder
 * maps them to the semantic conventions' names.
 */
#ifndef FRAMEWALK_AGENT_PERIOD_H
#define FRAMEWALK_AGENT_PERIOD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/procinfo.h"
#include "profile/profile.h"
#include "util/strbuf.h"

struct label_counts;             /* profile/profile.h */

/* One process's profile of the period. */
struct period_proc {
	struct procinfo info;
	char version[32];           /* "3.12.1" */
	char pid_text[16];
	struct profile prof;        /* its threads and samples only */
	struct strbuf pprof;        /* prof as gzip'd pprof, with the labels as metadata
				     * (when the batch's want_pprof) */
};

struct period_batch {
	uint64_t seq;               /* periods since the agent started, from 1 */
	uint64_t from_ns, until_ns; /* unix time */
	const char *host;
	const char *mode;           /* the sampling mode's name (profile_mode_is_cpu) */
	double rate_hz;
	char rate_text[32];
	const char *backend;
	const char *agent_version;  /* framewalk's, for the OTLP scope; or NULL */
	int redact_cmdline;         /* name a target by its executable's base name only */
	const char *label_specs;    /* --context-label, described ("route=app:route"), or NULL */
	char *const *extra;         /* --label "key=value" */
	size_t nextra;
	int want_pprof;             /* a destination sends each process's pprof (sink.h) */
	struct period_proc *procs;
	size_t n, alloc;
};

struct period_label {
	const char *key;
	const char *value;
	size_t key_len;             /* a --label key is the part before '=' */
};

#define PERIOD_MAX_LABELS 24

/*
 * The labels of proc p: service_name, host, pid, container_id (when in
 * one), python_version, build_id (when known), mode, rate, then each
 * --label (its key up to '='). Returns how many (at most max).
 */
size_t period_labels(const struct period_batch *b, const struct period_proc *p,
		     struct period_label *out, size_t max);

/*
 * Start a batch (no processes yet); the strings given must outlive it.
 * rate_hz and mode describe the sampling.
 */
void period_batch_init(struct period_batch *b, uint64_t seq, uint64_t from_ns, uint64_t until_ns,
		       const char *host, const char *mode, double rate_hz, const char *backend,
		       char *const *extra, size_t nextra);
/*
 * Add process info (Python version): its samples out of src, the whole
 * period's profile of every process, its exact call counts (agent
 * --count-calls: calls' calls, note and window; NULL: none), its labels
 * read in the period (--context-label: the header's label_* counts; NULL:
 * none), and its pprof when b wants one. 0 or -errno (the pprof could not
 * be written).
 */
int period_batch_add(struct period_batch *b, const struct profile *src, const struct procinfo *info,
		     const char *version, const struct profile *calls,
		     const struct label_counts *labels);
void period_batch_release(struct period_batch *b);

/*
 * The loop reached the end of the period [from_unix, *end_unix) at
 * now_unix (its deadline is kept by the monotonic clock): cut it now (1);
 * or, when that is more than half a period late (the loop was held up,
 * or the wall clock stepped forward) and the period was not extended
 * before, extend it to the next end after now (0, *end_unix moved), so
 * the next period is not left too short to hold a sample.
 */
int period_cut_now(uint64_t period_ns, uint64_t from_unix, uint64_t now_unix,
		   uint64_t *end_unix);

/* The samples of process pid in src as a profile of its own (dst is initialised here). */
void period_extract(const struct profile *src, pid_t pid, struct profile *dst);

/* p as gzip'd pprof into out (appended). 0 or -errno. */
int period_pprof(const struct profile *p, struct strbuf *out);

/* Total samples of a profile (what its counts add up to). */
uint64_t period_samples(const struct profile *p);

#endif
