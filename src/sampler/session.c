/*
 * The capture loop over one or more targets: paces ticks by absolute
 * deadlines (no drift at high rates; when behind, missed ticks are skipped,
 * not bunched up), ticks every live target, draws the status line, and ends
 * on the duration, a stop request or when every target has exited. The bpf
 * backend has its own loop (events come from the kernel) in bpf.c.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#include "sampler/bpf.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define STATUS_EVERY_NS 250000000ull
#define CHILD_SCAN_NS 100000000ull
#define CHILD_DEPTH 6

void session_init(struct session *sess, struct profile *prof, const struct sampler_opts *opts)
{
	memset(sess, 0, sizeof(*sess));
	sess->prof = prof;
	sess->opts = *opts;
}

struct sampler *session_add(struct session *sess, const struct py_target *t)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	struct sampler_opts o = sess->opts;

	if (o.child != t->pid)
		o.child = 0;
	if (!sess->files)
		sess->files = elf_cache_new();
	sampler_init_files(s, t, sess->prof, &o, sess->files);
	sess->targets = xgrow(sess->targets, sizeof(*sess->targets), sess->n + 1, &sess->alloc);
	sess->exited = xrealloc(sess->exited, sess->alloc * sizeof(*sess->exited));
	sess->targets[sess->n] = s;
	sess->exited[sess->n] = 0;
	sess->n++;
	return s;
}

struct sampler *session_find(struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (sess->targets[i]->target.pid == pid)
			return sess->targets[i];
	return NULL;
}

/* Look at pid: a Python process not yet sampled becomes a target. */
static size_t consider_pid(struct session *sess, pid_t pid)
{
	struct known_pid *k = NULL;
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	struct py_target t;
	char exe[256];
	size_t added = 0;

	if (session_find(sess, pid) || proc_exe(pid, exe, sizeof(exe)))
		return 0;
	for (size_t i = 0; i < sess->nknown; i++)
		if (sess->known[i].pid == pid)
			k = &sess->known[i];
	if (k && !strcmp(k->exe, exe))
		return 0;       /* looked at already, and it did not exec since */
	if (!k) {
		sess->known = xgrow(sess->known, sizeof(*sess->known), sess->nknown + 1,
				    &sess->known_alloc);
		k = &sess->known[sess->nknown++];
		k->pid = pid;
	}
	xsnprintf(k->exe, sizeof(k->exe), "%s", exe);
	mem_init_pid(&mem, pid);
	if (!py_discover(pid, &mem, &t, &why)) {
		/* The runtime may not be initialized yet: sampling copes (-EAGAIN). */
		session_add(sess, &t);
		added = 1;
	} else {
		k->exe[0] = '\0';   /* not Python (yet): look again next scan */
	}
	mem_release(&mem);
	strbuf_release(&why);
	return added;
}

static size_t follow_from(struct session *sess, pid_t pid, int depth)
{
	pid_t *kids;
	size_t n, added = 0;

	if (depth > CHILD_DEPTH || proc_children(pid, &kids, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		added += consider_pid(sess, kids[i]);
		added += follow_from(sess, kids[i], depth + 1);
	}
	free(kids);
	return added;
}

size_t session_follow_children(struct session *sess, uint64_t now)
{
	size_t added = 0, roots = sess->n;

	if (!sess->opts.subprocesses || now - sess->scanned_ns < CHILD_SCAN_NS)
		return 0;
	sess->scanned_ns = now;
	for (size_t i = 0; i < roots; i++)
		if (!sess->exited[i])
			added += follow_from(sess, sess->targets[i]->target.pid, 0);
	return added;
}

void session_release(struct session *sess)
{
	free(sess->known);
	for (size_t i = 0; i < sess->n; i++) {
		sampler_release(sess->targets[i]);
		free(sess->targets[i]);
	}
	free(sess->targets);
	free(sess->exited);
	elf_cache_free(sess->files);
	memset(sess, 0, sizeof(*sess));
}

static void draw_status(struct session *sess, uint64_t elapsed_ns, int final)
{
	const struct profile_meta *m = &sess->prof->meta;
	double secs = (double)elapsed_ns / 1e9;
	double achieved = secs > 0 ? (double)m->ticks_taken / secs : 0;

	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	fprintf(stderr, "\r\033[Kframewalk: %.1fs  %llu samples  %.0f/%.0f Hz  %llu errors  %zu threads",
		secs, (unsigned long long)m->samples, achieved, sess->opts.rate_hz,
		(unsigned long long)m->errors, sess->prof->nthreads);
	fflush(stderr);
}

static void sleep_until(uint64_t deadline)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(deadline / 1000000000ull);
	ts.tv_nsec = (long)(deadline % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
	       !sampler_stop_requested)
		;
}

/* Tick every live target; returns how many are still alive. */
static size_t tick_targets(struct session *sess, uint64_t tick)
{
	size_t alive = 0;

	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];
		int ret;

		if (sess->exited[i])
			continue;
		ret = sampler_tick(s);
		if (ret == -EPERM) {
			sess->exited[i] = 1;
			s->stop_reason = SAMPLER_STOP_ERROR;
			continue;
		}
		if ((ret || (tick % 64 == 0 && s->opts.child > 0)) && sampler_target_exited(s)) {
			sess->exited[i] = 1;
			s->stop_reason = SAMPLER_STOP_TARGET_EXIT;
			continue;
		}
		alive++;
	}
	return alive;
}

static int run_ticks(struct session *sess)
{
	struct profile_meta *m = &sess->prof->meta;
	uint64_t interval = (uint64_t)(1e9 / sess->opts.rate_hz);
	uint64_t start = fw_now_ns(), next = start, last_status = 0;
	uint64_t end = sess->opts.duration_s > 0 ? start + (uint64_t)(sess->opts.duration_s * 1e9) : 0;
	uint64_t cpu0 = fw_cpu_ns(), tick = 0;
	struct timespec wall;

	if (!interval)
		interval = 1;
	/* Default timer slack (50 us) would make every short sleep late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_REALTIME, &wall);
	m->start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	m->rate_hz = sess->opts.rate_hz;
	for (;;) {
		uint64_t t0, t1;
		size_t alive;

		if (sampler_stop_requested) {
			sess->stop_reason = SAMPLER_STOP_SIGNAL;
			break;
		}
		t0 = fw_now_ns();
		if (end && t0 >= end) {
			sess->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		alive = tick_targets(sess, ++tick);
		if (sess->opts.subprocesses)
			alive += session_follow_children(sess, t0);
		t1 = fw_now_ns();
		m->ticks_taken++;
		m->sample_ns_total += t1 - t0;
		if (t1 - t0 > m->sample_ns_max)
			m->sample_ns_max = t1 - t0;
		if (!alive) {
			sess->stop_reason = SAMPLER_STOP_TARGET_EXIT;
			for (size_t i = 0; i < sess->n; i++)
				if (sess->targets[i]->stop_reason == SAMPLER_STOP_ERROR)
					sess->stop_reason = SAMPLER_STOP_ERROR;
			break;
		}
		if (sess->opts.status_line && t1 - last_status >= STATUS_EVERY_NS) {
			draw_status(sess, t1 - start, 0);
			last_status = t1;
		}
		next += interval;
		if (next <= t1) {
			/* Behind: skip the missed ticks and start the next one now. */
			next = t1 + interval - (t1 - next) % interval;
			continue;
		}
		if (end && next > end)
			next = end;
		sleep_until(next);
	}
	m->duration_ns = fw_now_ns() - start;
	m->ticks_requested = (uint64_t)((double)m->duration_ns / 1e9 * sess->opts.rate_hz + 0.5);
	if (m->ticks_requested < m->ticks_taken)
		m->ticks_requested = m->ticks_taken;
	m->profiler_cpu_ns = fw_cpu_ns() - cpu0;
	if (sess->opts.status_line)
		draw_status(sess, m->duration_ns, 1);
	return 0;
}

int session_run(struct session *sess)
{
	int ret;

	if (sess->opts.backend == BACKEND_BPF) {
		struct strbuf why = STRBUF_INIT;

		ret = bpf_backend_run(sess, &why);
		if (ret) {
			fw_error("the bpf backend failed: %s", strbuf_str(&why));
			sess->stop_reason = SAMPLER_STOP_ERROR;
		}
		strbuf_release(&why);
	} else {
		ret = run_ticks(sess);
	}
	for (size_t i = 0; i < sess->n; i++) {
		if (sess->targets[i]->stop_reason != SAMPLER_STOP_TARGET_EXIT &&
		    sess->targets[i]->stop_reason != SAMPLER_STOP_ERROR)
			sess->targets[i]->stop_reason = sess->stop_reason;
		sampler_finish_meta(sess->targets[i]);
		sampler_finish_threads(sess->targets[i]);
	}
	return ret;
}

int sampler_run(struct sampler *s)
{
	struct session sess;
	int ret;

	/* A one-target session around an existing sampler. */
	session_init(&sess, s->prof, &s->opts);
	sess.targets = &s;
	sess.exited = &(int){ 0 };
	sess.n = sess.alloc = 1;
	ret = session_run(&sess);
	return ret;
}
