/*
 * Implementation of sink.h: the sinks, their queues behind one lock, and
 * the sender thread. The capture thread only encodes and queues
 * (sinks_submit); everything that can block (HTTP, writing files) happens
 * on the sender thread, outside the lock, one request at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/encode.h"
#include "agent/http.h"
#include "agent/sink.h"
#include "agent/spool.h"
#include "util/outfile.h"
#include "util/utf8.h"
#include "util/util.h"

#define BACKOFF_FIRST_NS 1000000000ull
#define BACKOFF_MAX_NS (30ull * 1000000000ull)
#define FLUSH_RETRY_NS 250000000ull
#define ROTATE_EVERY_NS 1000000000ull
/* how often the directory sink lists its directory again (see dir_rotate) */
#define DIR_RELIST_NS (60ull * 1000000000ull)
/*
 * A temporary of ours this recent may be another writer's (an agent on the
 * same directory) between its creation and its lock: left alone.
 */
#define DIR_STALE_MIN_AGE_S 60
#define NS 1000000000ull
/* after the flush deadline, how long the sender gets to give up its request */
#define STOP_GRACE_NS 1000000000ull

/* One of the directory sink's files, as its ledger knows it. */
struct dir_file {
	char *name;
	uint64_t size;
	time_t mtime;
};

/* The directory sink's files, oldest (smallest name) first. */
struct dir_ledger {
	struct dir_file *f;
	size_t n, alloc;
	uint64_t total;              /* their sizes' sum */
	uint64_t listed_ns;          /* the directory last listed; 0: never */
};

static void ledger_clear(struct dir_ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].name);
	l->n = 0;
	l->total = 0;
}

struct sink {
	enum sink_kind kind;
	char name[32];
	char *url;                   /* endpoint, or the directory */
	char *user, *password, *bearer;
	char **headers;              /* NULL-terminated: the configured ones and the kind's own */
	size_t nheaders;
	char *user_agent;
	long timeout_ms;
	uint64_t dir_max_bytes;
	double dir_max_age_s;
	uint64_t rotated_ns;
	struct dir_ledger files;     /* the sender thread's only */
	struct spool q;
	struct http_client *http;
	struct sink_stats st;
	uint64_t retry_at, backoff;
};

struct sinks {
	struct sink *k;
	size_t n;
	int quiet;
	pthread_mutex_t lock;
	pthread_cond_t cond;         /* the sender: work arrived, or stop */
	pthread_cond_t done;         /* sinks_stop: the sender finished */
	pthread_t thread;
	int started, finished, quit;
	int abandoned;               /* the sender did not stop in time: never freed */
	uint64_t flush_deadline;     /* flushing until then; 0: not flushing */
	volatile sig_atomic_t abort; /* give up the request in flight */
};

void agent_vline(const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT, sb = STRBUF_INIT;

	/* one write per line (threads share stderr), made safe for a terminal */
	strbuf_vaddf(&msg, fmt, ap);
	strbuf_addstr(&sb, "framewalk agent: ");
	escape_append(&sb, strbuf_str(&msg), ESCAPE_TERMINAL);
	strbuf_addstr(&sb, "\n");
	fputs(strbuf_str(&sb), stderr);
	strbuf_release(&msg);
	strbuf_release(&sb);
}

static void PRINTF_LIKE(1, 2) agent_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	agent_vline(fmt, ap);
	va_end(ap);
}

const char *sink_kind_name(enum sink_kind kind)
{
	switch (kind) {
	case SINK_DIR:
		return "dir";
	case SINK_PYROSCOPE_INGEST:
		return "pyroscope";
	case SINK_PYROSCOPE_PUSH:
		return "pyroscope-push";
	case SINK_OTLP:
	default:
		return "otlp";
	}
}

int sink_kind_sends_pprof(enum sink_kind kind)
{
	return kind != SINK_OTLP;
}

void sink_endpoint(enum sink_kind kind, const char *url, struct strbuf *out)
{
	size_t len = strlen(url);
	const char *path = strstr(url, "://");

	while (len && url[len - 1] == '/')
		len--;
	strbuf_add(out, url, len);
	switch (kind) {
	case SINK_PYROSCOPE_INGEST:
		strbuf_addstr(out, PYROSCOPE_INGEST_PATH);
		break;
	case SINK_PYROSCOPE_PUSH:
		strbuf_addstr(out, PYROSCOPE_PUSH_PATH);
		break;
	case SINK_OTLP:
		path = path ? strchr(path + 3, '/') : NULL;
		if (!(path && (size_t)(path - url) < len && len >= 9 &&
		      !strncmp(url + len - 9, "/profiles", 9)))
			strbuf_addstr(out, OTLP_PROFILES_PATH);
		break;
	case SINK_DIR:
		break;
	}
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void add_header(struct sink *k, const char *fmt, const char *v)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, fmt, v);
	k->headers = xrealloc(k->headers, (k->nheaders + 2) * sizeof(*k->headers));
	k->headers[k->nheaders++] = strbuf_detach(&sb);
	k->headers[k->nheaders] = NULL;
}

static int sink_init(struct sink *k, const struct sink_config *c, struct strbuf *err)
{
	struct strbuf url = STRBUF_INIT;
	int ret;

	memset(k, 0, sizeof(*k));
	k->kind = c->kind;
	xsnprintf(k->name, sizeof(k->name), "%s", sink_kind_name(c->kind));
	sink_endpoint(c->kind, c->url, &url);
	k->url = strbuf_detach(&url);
	k->user = dup_or_null(c->user);
	k->password = dup_or_null(c->password);
	k->bearer = dup_or_null(c->bearer);
	k->user_agent = dup_or_null(c->user_agent);
	k->timeout_ms = c->timeout_ms;
	k->dir_max_bytes = c->dir_max_bytes;
	k->dir_max_age_s = c->dir_max_age_s;
	k->headers = xcalloc(1, sizeof(*k->headers));
	for (size_t i = 0; i < c->nheaders; i++)
		add_header(k, "%s", c->headers[i]);
	if (c->tenant)
		add_header(k, "X-Scope-OrgID: %s", c->tenant);
	if (c->kind == SINK_PYROSCOPE_PUSH)
		add_header(k, "%s", "Connect-Protocol-Version: 1");
	if (c->kind == SINK_DIR) {
		ret = outfile_mkdirs(c->url, 0750);
		if (ret) {
			strbuf_addf(err, "cannot create the directory %s: %s", c->url, strerror(-ret));
			return ret;
		}
	}
	ret = spool_open(&k->q, c->spool_dir, c->spool_max_items, c->spool_max_bytes, err);
	if (ret)
		return ret;
	if (c->kind != SINK_DIR) {
		k->http = http_client_new();
		if (!k->http) {
			strbuf_addf(err, "%s: %s", k->name, http_description());
			return -ENOTSUP;
		}
	}
	return 0;
}

static void sink_release(struct sink *k)
{
	ledger_clear(&k->files);
	free(k->files.f);
	spool_close(&k->q);
	http_client_free(k->http);
	for (size_t i = 0; i < k->nheaders; i++)
		free(k->headers[i]);
	free(k->headers);
	free(k->url);
	free(k->user);
	free(k->password);
	free(k->bearer);
	free(k->user_agent);
}

/* ---- the directory sink ------------------------------------------------------ */

/* Is name one of the files this sink writes ("20260102T030405.123Z-...pb.gz")? */
static int ours(const char *name)
{
	return strlen(name) > 28 && name[8] == 'T' && name[19] == 'Z' && name[20] == '-' &&
	       str_ends_with(name, ".pb.gz") && name[0] >= '0' && name[0] <= '9';
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct dir_file *)a)->name, ((const struct dir_file *)b)->name);
}

static void ledger_add(struct dir_ledger *l, const char *name, uint64_t size, time_t mtime)
{
	l->f = xgrow(l->f, sizeof(*l->f), l->n + 1, &l->alloc);
	l->f[l->n].name = xstrdup(name);
	l->f[l->n].size = size;
	l->f[l->n].mtime = mtime;
	l->total += size;
	l->n++;
}

/* Is name the temporary of one of our files (util/outfile.h)? */
static int our_temporary(const char *name)
{
	char base[NAME_MAX + 1];

	return outfile_temporary_base(name, base, sizeof(base)) && ours(base);
}

/*
 * The ledger made again from the directory: every file of ours in it. The
 * temporaries of an earlier run killed mid-write go (outfile_open_new does
 * not look for them).
 */
static void ledger_list(struct dir_ledger *l, const char *dir, uint64_t now)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	ledger_clear(l);
	while ((de = readdir(d))) {
		struct stat st;

		if (our_temporary(de->d_name)) {
			outfile_remove_stale(dirfd(d), de->d_name, DIR_STALE_MIN_AGE_S);
			continue;
		}
		if (ours(de->d_name) && !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			ledger_add(l, de->d_name, (uint64_t)st.st_size, st.st_mtime);
	}
	closedir(d);
	sort_array(l->f, l->n, sizeof(*l->f), cmp_file);
	l->listed_ns = now;
}

/* A file this sink just wrote, in its place (names begin with the time). */
static void ledger_wrote(struct dir_ledger *l, const char *name, uint64_t size)
{
	ledger_add(l, name, size, time(NULL));
	if (l->n > 1 && cmp_file(&l->f[l->n - 2], &l->f[l->n - 1]) > 0)
		sort_array(l->f, l->n, sizeof(*l->f), cmp_file);
}

/* Does the sink remove files (a size or an age bound)? */
static int dir_bounded(const struct sink *k)
{
	return k->dir_max_bytes || k->dir_max_age_s > 0;
}

/*
 * Remove the oldest of our files past the total size or the age. The sink
 * knows what it wrote: the directory is listed when the sink starts (a
 * previous run's files count) and again every DIR_RELIST_NS, for what
 * others did meanwhile (a file removed, another agent's files), instead of
 * listing and stat'ing ~1000 files after every write. A file found gone
 * when its turn comes (ENOENT) leaves the ledger and has the directory
 * listed again at the next rotation: someone else removes files. Without a
 * bound nothing is kept: one listing, for a killed run's temporaries.
 */
static void dir_rotate(struct sink *k)
{
	struct dir_ledger *l = &k->files;
	time_t now = time(NULL);
	uint64_t now_ns = fw_now_ns();
	struct strbuf path = STRBUF_INIT;
	size_t kept = 0;

	if (!dir_bounded(k)) {
		if (!l->listed_ns) {
			ledger_list(l, k->url, now_ns);
			ledger_clear(l);
		}
		return;
	}
	if (!l->listed_ns || now_ns - l->listed_ns >= DIR_RELIST_NS)
		ledger_list(l, k->url, now_ns);
	for (size_t i = 0; i < l->n; i++) {
		int old = k->dir_max_age_s > 0 && difftime(now, l->f[i].mtime) > k->dir_max_age_s;

		if ((k->dir_max_bytes && l->total > k->dir_max_bytes) || old) {
			int ret;

			strbuf_reset(&path);
			strbuf_addf(&path, "%s/%s", k->url, l->f[i].name);
			ret = unlink(strbuf_str(&path)) ? -errno : 0;
			if (!ret || ret == -ENOENT) {
				if (ret)
					l->listed_ns = 0;
				l->total -= l->f[i].size;
				free(l->f[i].name);
				continue;
			}
		}
		l->f[kept++] = l->f[i];
	}
	l->n = kept;
	strbuf_release(&path);
}

static int dir_deliver(struct sink *k, const struct spool_item *it, struct strbuf *why)
{
	struct strbuf path = STRBUF_INIT;
	struct outfile of;
	int ret;

	strbuf_addf(&path, "%s/%s", k->url, it->meta);
	ret = outfile_open_new(&of, strbuf_str(&path));
	if (!ret) {
		if (fwrite(it->body.buf, 1, it->body.len, of.f) != it->body.len) {
			outfile_abort(&of);
			ret = -EIO;
		} else {
			ret = outfile_commit(&of);
		}
	}
	if (!ret && dir_bounded(k))
		ledger_wrote(&k->files, it->meta, it->body.len);
	if (ret)
		strbuf_addf(why, "cannot write %s: %s", strbuf_str(&path), strerror(-ret));
	strbuf_release(&path);
	return ret ? -EAGAIN : 0;
}

/* ---- the HTTP sinks ------------------------------------------------------------ */

/* 0 delivered, -EAGAIN try again later, -EINVAL refused for good. */
static int http_deliver(struct sinks *s, struct sink *k, const struct spool_item *it,
			struct strbuf *why)
{
	struct http_request req;
	struct http_answer ans;
	struct strbuf url = STRBUF_INIT;
	int ret;

	memset(&req, 0, sizeof(req));
	strbuf_addstr(&url, k->url);
	if (k->kind == SINK_PYROSCOPE_INGEST)
		strbuf_addf(&url, "?%s", it->meta);
	req.url = strbuf_str(&url);
	req.user_agent = k->user_agent;
	req.headers = (const char *const *)k->headers;
	req.user = k->user;
	req.password = k->password;
	req.bearer = k->bearer;
	req.body = it->body.buf ? it->body.buf : "";
	req.len = it->body.len;
	req.timeout_ms = k->timeout_ms;
	req.abort = &s->abort;
	switch (k->kind) {
	case SINK_PYROSCOPE_INGEST:
		req.form_field = "profile";
		break;
	case SINK_PYROSCOPE_PUSH:
		req.content_type = "application/proto";
		break;
	default:
		req.content_type = "application/x-protobuf";
		break;
	}
	ret = http_post(k->http, &req, &ans, why);
	strbuf_release(&url);
	if (ret)
		return -EAGAIN;
	if (ans.status >= 200 && ans.status < 300) {
		ret = 0;
	} else {
		struct strbuf text = STRBUF_INIT;

		/* what the server said, as far as it is printable */
		for (size_t i = 0; i < ans.body.len && i < 160; i++)
			strbuf_addch(&text, ans.body.buf[i] >= 0x20 && ans.body.buf[i] < 0x7f ?
				     ans.body.buf[i] : ' ');
		strbuf_addf(why, "HTTP %ld%s%s", ans.status, text.len ? ": " : "", strbuf_str(&text));
		strbuf_release(&text);
		ret = ans.status == 408 || ans.status == 429 || ans.status >= 500 ||
		      ans.status < 200 ? -EAGAIN : -EINVAL;
	}
	http_answer_release(&ans);
	return ret;
}

/* ---- the sender thread ----------------------------------------------------------- */

static void note_result(struct sinks *s, struct sink *k, int ret, const char *why, uint64_t now)
{
	if (!ret) {
		k->st.sent++;
		if (k->st.failing && !s->quiet)
			agent_line("%s: delivering again (%zu queued)", k->name, k->q.n);
		k->st.failing = 0;
		k->backoff = 0;
		k->retry_at = 0;
		return;
	}
	xsnprintf(k->st.last_error, sizeof(k->st.last_error), "%s", why);
	if (ret == -EINVAL) {
		k->st.rejected++;
		agent_line("%s: a request was refused and dropped: %s (%" PRIu64 " refused so far)",
			   k->name, why, k->st.rejected);
		return;
	}
	k->st.failures++;
	if (!k->st.failing)
		agent_line("%s: delivery failed, queued for retry: %s", k->name, why);
	k->st.failing = 1;
	k->backoff = k->backoff ? k->backoff * 2 : BACKOFF_FIRST_NS;
	if (k->backoff > BACKOFF_MAX_NS)
		k->backoff = BACKOFF_MAX_NS;
	k->retry_at = now + (s->flush_deadline ? FLUSH_RETRY_NS : k->backoff);
}

static size_t queued_total(const struct sinks *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->k[i].q.n;
	return n;
}

/* when: a monotonic moment, or UINT64_MAX to wait until told (a broadcast) */
static void wait_until(struct sinks *s, uint64_t when)
{
	struct timespec ts;
	uint64_t now = fw_now_ns(), d = when > now ? when - now : 0;

	if (when == UINT64_MAX) {
		pthread_cond_wait(&s->cond, &s->lock);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(d / NS);
	ts.tv_nsec += (long)(d % NS);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

static void *sender_main(void *arg)
{
	struct sinks *s = arg;
	sigset_t job;

	/*
	 * job-control stops go to the sampling thread, which takes them between
	 * stops (ptrace.h); so does SIGCHLD, which tells it a thread stopped
	 */
	sigemptyset(&job);
	sigaddset(&job, SIGTSTP);
	sigaddset(&job, SIGTTIN);
	sigaddset(&job, SIGTTOU);
	sigaddset(&job, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &job, NULL);
	/* its name in top -H and /proc/PID/task/TID/comm */
	pthread_setname_np(pthread_self(), "fw-sender");
	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		/*
		 * Idle, the thread sleeps until a period is queued or the agent
		 * stops (both broadcast): it wakes on its own only for what is
		 * due — a retry, a directory's rotation, a spool read that failed
		 * for a moment (again a second later).
		 */
		uint64_t now = fw_now_ns(), wake = UINT64_MAX;
		int worked = 0;

		for (size_t i = 0; i < s->n && !s->quit; i++) {
			struct sink *k = &s->k[i];
			struct strbuf why = STRBUF_INIT;
			struct spool_item it;
			int ret;

			if (!k->q.n) {
				if (k->kind == SINK_DIR && k->rotated_ns) {
					if (now - k->rotated_ns >= ROTATE_EVERY_NS) {
						pthread_mutex_unlock(&s->lock);
						dir_rotate(k);
						pthread_mutex_lock(&s->lock);
						k->rotated_ns = 0;
						/*
						 * a period queued while the lock was let go
						 * broadcast to no one: look again before waiting
						 */
						worked = 1;
					} else if (k->rotated_ns + ROTATE_EVERY_NS < wake) {
						wake = k->rotated_ns + ROTATE_EVERY_NS;
					}
				}
				continue;
			}
			if (now < k->retry_at) {
				if (k->retry_at < wake)
					wake = k->retry_at;
				continue;
			}
			if (spool_peek(&k->q, &it)) {
				if (now + NS < wake)
					wake = now + NS;
				continue;
			}
			pthread_mutex_unlock(&s->lock);
			if (k->kind == SINK_DIR)
				ret = dir_deliver(k, &it, &why);
			else
				ret = http_deliver(s, k, &it, &why);
			pthread_mutex_lock(&s->lock);
			now = fw_now_ns();
			if (ret == -EAGAIN)
				spool_unpeek(&k->q);
			else
				spool_pop(&k->q, it.seq);
			if (k->kind == SINK_DIR && !ret && !k->rotated_ns)
				k->rotated_ns = now;
			note_result(s, k, ret, strbuf_str(&why), now);
			spool_item_release(&it);
			strbuf_release(&why);
			worked = 1;
		}
		if (s->flush_deadline && (!queued_total(s) || fw_now_ns() >= s->flush_deadline))
			break;
		if (!worked && !s->quit)
			wait_until(s, s->flush_deadline && s->flush_deadline < wake ? s->flush_deadline : wake);
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->k[i].kind == SINK_DIR && s->k[i].rotated_ns)
			dir_rotate(&s->k[i]);
	s->finished = 1;
	pthread_cond_broadcast(&s->done);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int sinks_start(struct sinks **out, const struct sink_config *cfg, size_t n, int quiet,
		struct strbuf *err)
{
	struct sinks *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int ret = 0;

	s->quiet = quiet;
	s->k = xcalloc(n ? n : 1, sizeof(*s->k));
	for (size_t i = 0; i < n && !ret; i++) {
		ret = sink_init(&s->k[i], &cfg[i], err);
		s->n = i + 1;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_cond_init(&s->done, &ca);
	pthread_condattr_destroy(&ca);
	if (!ret) {
		ret = -pthread_create(&s->thread, NULL, sender_main, s);
		if (ret)
			strbuf_addf(err, "cannot start the sender thread: %s", strerror(-ret));
		s->started = !ret;
	}
	if (ret) {
		sinks_free(s);
		return ret;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->k[i].q.n && !quiet)
			agent_line("%s: %zu requests spooled before, sent first", s->k[i].name, s->k[i].q.n);
	*out = s;
	return 0;
}

/* "20260102T030405.123Z-service-1234.pb.gz": sorts by time; service cut and made safe. */
static void dir_file_name(const struct period_batch *b, const struct period_proc *p,
			  struct strbuf *out)
{
	time_t secs = (time_t)(b->from_ns / NS);
	struct tm tm;
	char when[32];
	size_t n = 0;

	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	strbuf_addf(out, "%s.%03uZ-", when, (unsigned)(b->from_ns % NS / 1000000));
	for (const char *c = p->info.service; *c && n < 64; c++, n++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			 (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-';

		strbuf_addch(out, ok ? *c : '_');
	}
	strbuf_addf(out, "-%d.pb.gz", (int)p->info.pid);
}

static void push_logged(struct sinks *s, struct sink *k, const char *meta, const void *body,
			size_t len)
{
	int ret = spool_push(&k->q, meta, body, len);

	if (ret < 0)
		agent_line("%s: cannot queue a request: %s (%" PRIu64 " dropped so far)", k->name,
			   strerror(-ret), k->q.dropped);
	else if (ret > 0)
		agent_line("%s: queue full (%zu requests, %" PRIu64 " bytes): dropped the %d oldest "
			   "(%" PRIu64 " dropped so far)", k->name, k->q.n, k->q.bytes, ret,
			   k->q.dropped);
	(void)s;
}

void sinks_submit(struct sinks *s, const struct period_batch *b)
{
	for (size_t i = 0; i < s->n; i++) {
		struct sink *k = &s->k[i];
		struct strbuf body = STRBUF_INIT, meta = STRBUF_INIT;

		switch (k->kind) {
		case SINK_DIR:
		case SINK_PYROSCOPE_INGEST:
			for (size_t j = 0; j < b->n; j++) {
				strbuf_reset(&meta);
				if (k->kind == SINK_DIR)
					dir_file_name(b, &b->procs[j], &meta);
				else
					pyroscope_ingest_query(b, &b->procs[j], &meta);
				pthread_mutex_lock(&s->lock);
				push_logged(s, k, strbuf_str(&meta), b->procs[j].pprof.buf,
					    b->procs[j].pprof.len);
				pthread_mutex_unlock(&s->lock);
			}
			break;
		case SINK_PYROSCOPE_PUSH:
		case SINK_OTLP:
			if (!b->n)
				break;
			if (k->kind == SINK_OTLP)
				otlp_encode(b, &body);
			else
				pyroscope_push_encode(b, &body);
			pthread_mutex_lock(&s->lock);
			push_logged(s, k, "", body.buf ? body.buf : "", body.len);
			pthread_mutex_unlock(&s->lock);
			break;
		}
		strbuf_release(&body);
		strbuf_release(&meta);
	}
	pthread_mutex_lock(&s->lock);
	/* a new period: try every destination at once, whatever its backoff */
	for (size_t i = 0; i < s->n; i++)
		s->k[i].retry_at = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

size_t sinks_count(const struct sinks *s)
{
	return s->n;
}

int sinks_send_pprof(const struct sinks *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (sink_kind_sends_pprof(s->k[i].kind))
			return 1;
	return 0;
}

const char *sinks_name(const struct sinks *s, size_t i)
{
	return i < s->n ? s->k[i].name : "";
}

void sinks_stats(struct sinks *s, size_t i, struct sink_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->k[i].st;
	out->dropped = s->k[i].q.dropped;
	out->corrupt = s->k[i].q.corrupt;
	out->queued = s->k[i].q.n;
	out->queued_bytes = s->k[i].q.bytes;
	pthread_mutex_unlock(&s->lock);
}

size_t sinks_stop(struct sinks *s, uint64_t deadline_ns)
{
	size_t left;

	if (!s->started)
		return queued_total(s);
	pthread_mutex_lock(&s->lock);
	s->flush_deadline = deadline_ns ? deadline_ns : 1;
	for (size_t i = 0; i < s->n; i++)
		s->k[i].retry_at = 0;
	pthread_cond_broadcast(&s->cond);
	while (!s->finished) {
		struct timespec ts;
		uint64_t now = fw_now_ns(), until = deadline_ns;

		if (now >= deadline_ns) {
			/* the request in flight gives up; nothing new starts */
			s->abort = 1;
			s->quit = 1;
			pthread_cond_broadcast(&s->cond);
			until = deadline_ns + STOP_GRACE_NS;
			if (now >= until) {
				/* stuck (a disk, a call without a bound): leave it to the exit */
				s->abandoned = 1;
				break;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)((until - now) / NS);
		ts.tv_nsec += (long)((until - now) % NS);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->done, &s->lock, &ts);
	}
	left = queued_total(s);
	pthread_mutex_unlock(&s->lock);
	if (s->abandoned)
		return left;
	pthread_join(s->thread, NULL);
	s->started = 0;
	return left;
}

void sinks_free(struct sinks *s)
{
	if (!s)
		return;
	if (s->started && !s->abandoned)
		sinks_stop(s, fw_now_ns());
	if (s->abandoned)
		return;         /* its thread may still use it; the process is ending */
	for (size_t i = 0; i < s->n; i++)
		sink_release(&s->k[i]);
	free(s->k);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	pthread_cond_destroy(&s->done);
	free(s);
}
