/*
 * The one capture loop (sampler.h) over every backend: ticks paced by
 * absolute deadlines (no drift at high rates; when behind, missed ticks are
 * skipped, not bunched up) for the backends that take samples from user
 * space, the backend's own events drained on every pass (with batch_s, a pass
 * comes at least that often, or when the backend says it is filling up; the
 * kernel clocks' restarts wait for a pass too), housekeeping every
 * HOUSEKEEP_NS or the caller's refresh_s (targets that exited or exec'd,
 * children that appeared, the backend's refresh of threads and mappings),
 * the status line, and the caller's hook. It ends on the duration,
 * a stop request, every target's exit or the hook.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "sampler/backend.h"
#include "sampler/labels.h"
#include "sampler/pacing.h"
#include "sampler/pyview.h"
#include "target/mapguard.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define STATUS_EVERY_NS 250000000ull
#define HOUSEKEEP_NS 100000000ull
/* After an exec, how long the new program has to show an interpreter. */
#define EXEC_GRACE_NS 1000000000ull

/* Backend b's row (choose.c); vm's when none was chosen. */
static const struct backend_info *info_of(enum backend b)
{
	const struct backend_info *bi = backend_info(b);

	return bi ? bi : backend_info(BACKEND_VM);
}

static const struct backend_ops *ops_of(enum backend b)
{
	return info_of(b)->ops;
}

void session_init_ops(struct session *sess, struct profile *prof, const struct sampler_opts *opts,
		      const struct backend_ops *ops)
{
	memset(sess, 0, sizeof(*sess));
	sess->prof = prof;
	sess->opts = *opts;
	sess->ops = ops;
}

void session_init(struct session *sess, struct profile *prof, const struct sampler_opts *opts)
{
	session_init_ops(sess, prof, opts, ops_of(opts->backend));
}

/*
 * sampler_init for one of the session's targets: its files and its clock
 * are the session's; what it is sampled without is said (tell: not when
 * the same target is made again for a fallback backend, already told).
 */
static int session_sampler_init(struct session *sess, struct sampler *s, const struct py_target *t,
				const struct sampler_opts *o, const struct backend_ops *ops, int tell)
{
	struct strbuf without = STRBUF_INIT;
	int ret = sampler_init(s, t, sess->prof, o, ops, sess->files, &without);

	s->clock = &sess->clock;
	if (!ret && without.len && tell)
		session_fallback_note(sess, "process %d: sampled without %s", (int)t->pid,
				      strbuf_str(&without));
	strbuf_release(&without);
	return ret;
}

int session_add(struct session *sess, const struct py_target *t)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	struct sampler_opts o = sess->opts;
	int ret;

	if (o.child != t->pid)
		o.child = 0;
	if (!sess->files) {
		sess->files = elf_cache_new();
		elf_cache_set_env(sess->files, sess->opts.env);
	}
	ret = session_sampler_init(sess, s, t, &o, sess->ops, 1);
	if (ret) {
		sampler_release(s, sess->ops);
		free(s);
		return ret;
	}
	sess->targets = xgrow(sess->targets, sizeof(*sess->targets), sess->n + 1, &sess->alloc);
	sess->exited = xrealloc(sess->exited, sess->alloc * sizeof(*sess->exited));
	sess->targets[sess->n] = s;
	sess->exited[sess->n] = 0;
	sess->n++;
	return 0;
}

int session_has(const struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (sess->targets[i]->target.pid == pid)
			return 1;
	return 0;
}

int session_label_counts(const struct session *sess, pid_t pid, struct label_counts *out)
{
	for (size_t i = 0; i < sess->n; i++)
		if (sess->targets[i]->target.pid == pid)
			return labels_counts(sess->targets[i], out);
	return -ESRCH;
}

const struct py_target *session_target(const struct session *sess, size_t i)
{
	return i < sess->n ? &sess->targets[i]->target : NULL;
}

const char *session_backend_name(const struct session *sess)
{
	return info_of(sess->opts.backend)->name;
}

int session_child_reaped(const struct session *sess)
{
	for (size_t i = 0; i < sess->n; i++)
		if (sess->targets[i]->opts.child > 0)
			return sess->targets[i]->life.child_reaped;
	return 0;
}

void session_release(struct session *sess)
{
	free(sess->known);
	for (size_t i = 0; i < sess->n; i++) {
		sampler_release(sess->targets[i], sess->ops);
		free(sess->targets[i]);
	}
	free(sess->targets);
	free(sess->exited);
	elf_cache_free(sess->files);
	memset(sess, 0, sizeof(*sess));
}

/* ---- --subprocesses ------------------------------------------------------ */

/* Look at pid: a Python process not yet sampled becomes a target. */
static size_t consider_pid(struct session *sess, pid_t pid)
{
	struct known_pid *k = NULL;
	struct py_target t;
	char exe[256];
	size_t added = 0;

	if (session_has(sess, pid) || proc_exe(pid, exe, sizeof(exe)))
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
	/* The runtime may not be initialized yet: sampling copes (-EAGAIN). */
	if (!py_discover_quiet(pid, &t))
		added = session_add(sess, &t) == 0;
	else
		k->exe[0] = '\0';   /* not Python (yet): look again next scan */
	return added;
}

static size_t follow_from(struct session *sess, pid_t pid)
{
	pid_t *kids;
	size_t n, added = 0;

	if (proc_descendants(pid, SESSION_CHILD_DEPTH, &kids, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		added += consider_pid(sess, kids[i]);
	free(kids);
	return added;
}

/* Is the root still running? (A child of ours is not reaped here.) */
static int root_alive(const struct session *sess)
{
	siginfo_t si;
	char state;

	if (sess->root <= 0)
		return 0;
	memset(&si, 0, sizeof(si));
	if (!waitid(P_PID, (id_t)sess->root, &si, WEXITED | WNOHANG | WNOWAIT))
		return si.si_pid == 0;
	/* not our child: alive while /proc shows it, and not a zombie */
	return !proc_task_state(sess->root, sess->root, &state) && state != 'Z' && state != 'X';
}

/*
 * Add every Python descendant of the targets (and of the root) not seen
 * before, and re-look at a child whose executable changed (exec).
 * Non-Python children are skipped.
 */
static size_t follow_children(struct session *sess)
{
	size_t added = 0, roots = sess->n;

	for (size_t i = 0; i < roots; i++)
		if (!sess->exited[i])
			added += follow_from(sess, sess->targets[i]->target.pid);
	/* the root itself may exec Python (a shell runs its last command so) */
	if (root_alive(sess))
		added += consider_pid(sess, sess->root) + follow_from(sess, sess->root);
	return added;
}

void session_follow_root(struct session *sess, pid_t root)
{
	sess->root = root;
}

/* ---- the loop ------------------------------------------------------------- */

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

static int stop_requested(const struct session *sess)
{
	return sess->opts.stop && *sess->opts.stop;
}

/*
 * A wait shorter than this, with no descriptor to watch, is spun, not
 * slept: a sleep arms a timer and switches twice, which on this 2-vCPU VM
 * took ~15 us of CPU per tick (70% of the loop's CPU at the highest rates,
 * perf, 2026-12-05), longer than the wait itself. Only the highest rates wait this little between
 * ticks (at 10 kHz a gap is 50-150 us).
 */
#define SPIN_BELOW_NS 20000ull

/*
 * Sleep until deadline, or until one of the descriptors is readable (the
 * backend's asks for its events to be taken: the pass that follows does).
 */
static void wait_until(struct session *sess, uint64_t deadline)
{
	struct pollfd fds[2];
	nfds_t nfds = 0;
	uint64_t now = fw_now_ns();
	int bfd = sess->ops->wait_fd ? sess->ops->wait_fd(sess) : -1;

	if (deadline <= now)
		return;
	if (bfd >= 0)
		fds[nfds++] = (struct pollfd){ bfd, POLLIN, 0 };
	if (sess->hook && sess->hook->fd >= 0)
		fds[nfds++] = (struct pollfd){ sess->hook->fd, POLLIN, 0 };
	if (!nfds && deadline - now < SPIN_BELOW_NS) {
		while (fw_now_ns() < deadline && !stop_requested(sess))
			;
	} else if (nfds) {
		struct timespec ts = { (time_t)((deadline - now) / 1000000000ull),
				       (long)((deadline - now) % 1000000000ull) };
		ppoll(fds, nfds, &ts, NULL);
	} else {
		struct timespec ts = { (time_t)(deadline / 1000000000ull),
				       (long)(deadline % 1000000000ull) };
		/* A stop signal ends the sleep (the handlers have no SA_RESTART). */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* Handle what the backend's events hold now (counted: the profile's drains). */
static void drain_backend(struct session *sess, uint64_t now)
{
	sess->ops->drain(sess, now);
	sess->prof->meta.drains++;
}

/* Mark target i exited, with why. */
static void target_ended(struct session *sess, size_t i, enum sampler_stop why)
{
	sess->exited[i] = 1;
	sess->targets[i]->stop_reason = why;
}

/* Tick every live target. */
static void tick_targets(struct session *sess, uint64_t now)
{
	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];
		int ret;

		if (sess->exited[i])
			continue;
		ret = sampler_tick(s, sess->ops, now);
		pyview_tick(s, now);
		if (ret == -EPERM && !sampler_target_exited(s))
			target_ended(sess, i, SAMPLER_STOP_ERROR);
		else if (ret && sampler_target_exited(s))
			target_ended(sess, i, SAMPLER_STOP_TARGET_EXIT);
	}
}

/* One line of the profile's events (exec, fallback), "; " between them. */
static void add_event(struct session *sess, const char *fmt, ...)
{
	struct profile_meta *m = &sess->prof->meta;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (m->events)
		strbuf_addf(&sb, "%s; ", m->events);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(m->events);
	m->events = strbuf_detach(&sb);
}

void session_fallback_note(struct session *sess, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	fw_warning("%s", strbuf_str(&sb));
	add_event(sess, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

/*
 * Target i exec'd: the memory, modules and interpreter it was sampled with
 * are gone. Find the interpreter of the new program and go on sampling it,
 * its threads labelled as after the exec (sampler_thread); a program that is
 * not Python (once it had a moment to map one) ends this target, with one
 * line saying so. Either way the report says when, and how long no samples
 * were taken.
 */
static void handle_exec(struct session *sess, size_t i, uint64_t now)
{
	struct sampler *s = sess->targets[i];
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	struct py_target t;
	char exe[256] = "?";
	double at = (double)(now - sess->start_ns) / 1e9;
	double gap_ms = s->last_sample_ns ? (double)(now - s->last_sample_ns) / 1e6 : 0;
	unsigned generation = s->life.generation + 1;
	pid_t pid = s->target.pid;
	int ret;

	if (!s->life.exec_seen_ns)
		s->life.exec_seen_ns = now;
	proc_exe(pid, exe, sizeof(exe));
	mem_init_pid(&mem, pid);
	ret = py_discover(pid, &mem, &t, &why);
	mem_release(&mem);
	/* Right after the exec the loader may not have mapped libpython, or the runtime started. */
	if (ret && now - s->life.exec_seen_ns < EXEC_GRACE_NS) {
		strbuf_release(&why);
		return;
	}
	if (ret) {
		add_event(sess, "process %d exec'd %s at %.1f s, not a Python program (%s): "
			  "its sampling stopped", (int)pid, exe, at, strbuf_str(&why));
		if (sess->opts.announce)
			fw_note("process %d exec'd %s, which is not Python: its sampling stopped",
				(int)pid, exe);
		target_ended(sess, i, SAMPLER_STOP_EXEC);
		strbuf_release(&why);
		return;
	}
	strbuf_release(&why);
	{
		struct sampler_opts o = s->opts;
		uint64_t last = s->last_sample_ns;

		sampler_finish_threads(s);
		sampler_finish_meta(s);
		sampler_release(s, sess->ops);
		if (session_sampler_init(sess, s, &t, &o, sess->ops, 1)) {
			target_ended(sess, i, SAMPLER_STOP_ERROR);
			return;
		}
		s->life.generation = generation;
		s->last_sample_ns = last;
	}
	add_event(sess, "process %d exec'd %s (Python %s) at %.1f s: sampled on as \"(exec %u)\" "
		  "threads, %.0f ms without samples", (int)pid, exe, t.version, at, generation, gap_ms);
	if (sess->opts.announce)
		fw_note("process %d exec'd %s (Python %s): sampling it on", (int)pid, exe, t.version);
}

static uint64_t housekeep_ns(const struct session *sess)
{
	return sess->opts.refresh_s > 0 ? (uint64_t)(sess->opts.refresh_s * 1e9) : HOUSEKEEP_NS;
}

/*
 * A file a target maps cut short on disk while framewalk read it
 * (target/mapguard.h: the pages past its new end read as zeros): a warning
 * on stderr the first time in the process (the agent's journal too), and
 * the count again at a capture's end if more came (a target cutting files
 * again and again adds nothing per cut); in the profile's events each time
 * it is said. at_end: a capture's end.
 */
static void say_cut_files(struct session *sess, int at_end)
{
	static unsigned long said;
	unsigned long now = map_guard_cut_pages();

	if (now == said || (said && !at_end))
		return;
	add_event(sess, "a file a target maps was cut short on disk while framewalk read it: "
		  "%lu pages past its new end read as zeros (names from it may be missing)", now);
	fw_warning("a file a target maps was cut short on disk (or could not be read) while "
		   "framewalk read it: %lu pages past its end read as zeros; names from it may be "
		   "missing", now);
	said = now;
}

/* Targets that exited, children that appeared, the backend's refresh. Live targets. */
static size_t housekeep(struct session *sess, uint64_t now)
{
	size_t alive = 0;

	say_cut_files(sess, 0);
	if (sess->opts.subprocesses && now - sess->scanned_ns >= housekeep_ns(sess)) {
		sess->scanned_ns = now;
		follow_children(sess);
	}
	/* reports of execs and exits stand for the checks, unless some were lost */
	int reported = sess->ops->life_missed && !sess->ops->life_missed(sess);

	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];

		if (!sess->exited[i] && sampler_life_due(s, reported, now)) {
			if (sampler_target_exited(s))
				target_ended(sess, i, SAMPLER_STOP_TARGET_EXIT);
			else if (sampler_exec_changed(s))
				handle_exec(sess, i, now);
		}
		alive += !sess->exited[i];
	}
	if (sess->ops->refresh)
		sess->ops->refresh(sess, now);
	/* debug info no lookup has needed for a while is let go (elf/elffile.h) */
	if (sess->files)
		elf_cache_trim(sess->files, now);
	/* a root that runs on may start the next Python process */
	return alive + (size_t)root_alive(sess);
}

static enum sampler_stop all_exited_reason(const struct session *sess)
{
	enum sampler_stop why = SAMPLER_STOP_TARGET_EXIT;

	for (size_t i = 0; i < sess->n; i++) {
		if (sess->targets[i]->stop_reason == SAMPLER_STOP_ERROR)
			return SAMPLER_STOP_ERROR;
		if (sess->targets[i]->stop_reason == SAMPLER_STOP_EXEC)
			why = SAMPLER_STOP_EXEC;
	}
	return why;
}

static void run_loop(struct session *sess)
{
	struct profile_meta *m = &sess->prof->meta;
	int ticking = (sess->ops->tick_modes & (1u << sess->opts.mode)) != 0;
	uint64_t interval = (uint64_t)(1e9 / sess->opts.rate_hz);
	uint64_t house = housekeep_ns(sess), start = fw_now_ns(), next_house = start + house;

	sess->start_ns = start;
	sess->end_ns = 0;
	uint64_t end = sess->opts.duration_s > 0 ? start + (uint64_t)(sess->opts.duration_s * 1e9) : 0;
	uint64_t last_status = 0, hook_next = 0;
	/*
	 * The backend's events are taken at every pass. With batch_s
	 * (start_backend) the loop makes no pass of its own for them sooner
	 * than that, nor for its clocks' restarts (a wake-up costs more than
	 * what it does: 80-170 us of CPU each on this project's VM, the agent's
	 * largest cost): both come at the passes it makes anyway, at least
	 * every batch_s, and so does housekeeping due within half a batch or
	 * half its own period, the shorter (the program's wake-up when its
	 * ring fills would otherwise be followed by a pass for it a moment
	 * later).
	 */
	uint64_t batch = (uint64_t)(sess->opts.batch_s * 1e9), next_drain = start;
	uint64_t house_slack = (batch < house ? batch : house) / 2;
	struct tick_clock *clock = &sess->clock;
	/* samples paced by the kernel's clock (also beside the ticks): restarted at
	 * spread moments (pacing.h) */
	int rephasing = sess->ops->rephase != NULL;
	uint64_t rephase_mean, next_rephase;

	if (!interval)
		interval = 1;
	tick_clock_init(clock, start, interval);
	rephase_mean = pacing_rephase_mean(interval, batch);
	next_rephase = start;     /* the first phase drawn too */
	for (;;) {
		uint64_t now = fw_now_ns(), deadline;

		if (stop_requested(sess)) {
			sess->stop_reason = SAMPLER_STOP_SIGNAL;
			break;
		}
		if (end && now >= end) {
			sess->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		if (ticking && tick_clock_due(clock, now)) {
			uint64_t t1;

			sess->tick_seq++;
			tick_clock_begin(clock, now);
			tick_targets(sess, now);
			t1 = fw_now_ns();
			m->ticks_taken++;
			m->sample_ns_total += t1 - now;
			if (t1 - now > m->sample_ns_max)
				m->sample_ns_max = t1 - now;
			/*
			 * A tick lasts longer when the target holds what it reads
			 * (tick_clock): the moments that passed during it were stood
			 * for by its reads (sampler_weigh_read), or are skipped, not
			 * taken late; in gil mode, a thread that stayed off a CPU
			 * since this tick was the same at each (clock->tick_moments,
			 * bpf; wall mode's records count the moments since a
			 * thread's last: sampler_ticks_counted).
			 */
			tick_clock_pass(clock, t1);
			now = t1;
		}
		if (rephasing && now >= next_rephase) {
			int ret = sess->ops->rephase(sess, pacing_rephase_period(&clock->pace, interval,
										 rephase_mean, batch), 0);

			if (ret >= 0) {
				m->rephases++;
				m->clock_restarts += (uint64_t)ret;
			} else {
				rephasing = 0;
				/* failed part way: the rate as asked, once (-ENOTSUP changed nothing) */
				if (ret != -ENOTSUP)
					sess->ops->rephase(sess, interval, 1);
			}
			next_rephase = now + pacing_gap(&clock->pace, rephase_mean);
		}
		if (sess->ops->drain) {
			drain_backend(sess, now);
			next_drain = now + batch;
		}
		if (now + house_slack >= next_house) {
			next_house = now + house;
			if (!housekeep(sess, now)) {
				sess->stop_reason = all_exited_reason(sess);
				break;
			}
		}
		if (sess->opts.status_line && now - last_status >= STATUS_EVERY_NS) {
			draw_status(sess, now - start, 0);
			last_status = now;
		}
		if (sess->hook && sess->hook->pass(sess->hook->ctx, now, &hook_next)) {
			sess->stop_reason = SAMPLER_STOP_HOOK;
			break;
		}
		deadline = next_house;
		if (ticking && clock->next < deadline)
			deadline = clock->next;
		if (rephasing && !batch && next_rephase < deadline)
			deadline = next_rephase;
		if (sess->hook && hook_next < deadline)
			deadline = hook_next;
		if (end && end < deadline)
			deadline = end;
		if (batch && sess->ops->drain && next_drain < deadline)
			deadline = next_drain;
		wait_until(sess, deadline);
	}
	sess->end_ns = fw_now_ns();
	m->duration_ns = sess->end_ns - start;
	if (ticking) {
		m->ticks_requested = (uint64_t)((double)m->duration_ns / 1e9 * sess->opts.rate_hz + 0.5);
		if (m->ticks_requested < m->ticks_taken)
			m->ticks_requested = m->ticks_taken;
	}
	if (sess->opts.status_line)
		draw_status(sess, m->duration_ns, 1);
}

/*
 * Records wait for a batch only where the backend writes them and the loop
 * does not tick: a tick's records are weighed by that tick (bpf's waiting
 * threads), so they are taken at its pass; a backend without records has
 * nothing to batch (the loop's passes would batch for nothing). The backend
 * sizes its buffer by what is left. Again for each backend fallen back to.
 */
static void batch_only_where_records_wait(struct session *sess)
{
	if ((sess->ops->tick_modes & (1u << sess->opts.mode)) || !sess->ops->drain)
		sess->opts.batch_s = 0;
}

/*
 * Start the backend; when it cannot start, the one fallback policy
 * (backend_fall_back): every target moves to the next backend, said once
 * on stderr and in the profile's events. 0, or -errno with why.
 */
static int start_backend(struct session *sess, struct strbuf *why)
{
	int ret;

	batch_only_where_records_wait(sess);
	while (sess->ops->start && (ret = sess->ops->start(sess, why))) {
		struct strbuf note = STRBUF_INIT;
		struct sampler_opts o = sess->opts;
		pid_t probe = sess->n ? sess->targets[0]->target.pid : 0;

		if (backend_fall_back(&o, o.child == probe ? 0 : probe, strbuf_str(why), &note)) {
			strbuf_release(&note);
			return ret;
		}
		if (o.announce)
			fw_note("%s", strbuf_str(&note));
		add_event(sess, "%s", strbuf_str(&note));
		strbuf_release(&note);
		strbuf_reset(why);
		/* each target re-made with the new backend (released once, made once) */
		ret = 0;
		for (size_t i = 0; i < sess->n; i++) {
			struct sampler *s = sess->targets[i];
			struct py_target t = s->target;
			struct sampler_opts so = o;
			int err;

			if (so.child != t.pid)
				so.child = 0;
			sampler_release(s, sess->ops);
			err = session_sampler_init(sess, s, &t, &so, ops_of(o.backend), 0);
			if (err && !ret) {
				strbuf_addf(why, "process %d cannot be sampled with %s: %s", (int)t.pid,
					    backend_name(o.backend), strerror(-err));
				ret = err;
			}
		}
		sess->opts = o;
		sess->ops = ops_of(o.backend);
		batch_only_where_records_wait(sess);
		if (ret)
			return ret;
	}
	return 0;
}

int session_run(struct session *sess, const struct capture_hook *hook, struct strbuf *why)
{
	struct profile_meta *m = &sess->prof->meta;
	uint64_t cpu0 = fw_cpu_ns();
	struct timespec wall;
	int ret = 0;

	sess->hook = hook;
	/* Default timer slack (50 us) would make every short sleep late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_REALTIME, &wall);
	m->start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	m->rate_hz = sess->opts.rate_hz;
	ret = start_backend(sess, why);
	if (ret) {
		sess->stop_reason = SAMPLER_STOP_ERROR;
	} else {
		run_loop(sess);
		if (sess->ops->stop)
			sess->ops->stop(sess);
		say_cut_files(sess, 1);
	}
	m->profiler_cpu_ns = fw_cpu_ns() - cpu0;
	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];

		if (!s->stop_reason)
			s->stop_reason = sess->stop_reason;
		sampler_finish_meta(s);
		sampler_finish_threads(s);
	}
	sess->hook = NULL;
	return ret;
}

int session_sample_once(struct session *sess)
{
	int ret = 0;

	for (size_t i = 0; i < sess->n && !ret; i++)
		ret = sampler_tick(sess->targets[i], sess->ops, fw_now_ns());
	for (size_t i = 0; i < sess->n; i++)
		sampler_finish_meta(sess->targets[i]);
	return ret;
}

/* ---- periods (the agent) --------------------------------------------------- */

void session_drain(struct session *sess)
{
	if (sess->ops && sess->ops->drain && sess->backend)
		drain_backend(sess, fw_now_ns());
}

int session_remove(struct session *sess, pid_t pid)
{
	struct sampler *s;
	size_t i;

	for (i = 0; i < sess->n && sess->targets[i]->target.pid != pid; i++)
		;
	if (i == sess->n)
		return -ESRCH;
	/* its records still in the backend (batch_s: up to a second's) are its */
	session_drain(sess);
	s = sess->targets[i];
	sampler_finish_meta(s);
	sampler_finish_threads(s);
	if (!sess->exited[i])
		target_ended(sess, i, SAMPLER_STOP_HOOK);
	/* A running backend forgets it now (bpf: its entries in the maps). */
	if (sess->backend && sess->ops->refresh)
		sess->ops->refresh(sess, fw_now_ns());
	sampler_release(s, sess->ops);
	free(s);
	memmove(&sess->targets[i], &sess->targets[i + 1], (sess->n - i - 1) * sizeof(*sess->targets));
	memmove(&sess->exited[i], &sess->exited[i + 1], (sess->n - i - 1) * sizeof(*sess->exited));
	sess->n--;
	return 0;
}

void session_take_profile(struct session *sess, struct profile *out)
{
	struct timespec wall;

	/* what a running backend holds of the time until now goes with this profile */
	session_drain(sess);
	for (size_t i = 0; i < sess->n; i++) {
		sampler_finish_meta(sess->targets[i]);
		sampler_finish_threads(sess->targets[i]);
	}
	*out = *sess->prof;
	profile_init(sess->prof);
	sess->prof->meta.rate_hz = out->meta.rate_hz;
	sess->prof->meta.cpu_weighted = out->meta.cpu_weighted;
	clock_gettime(CLOCK_REALTIME, &wall);
	sess->prof->meta.start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	for (size_t i = 0; i < sess->n; i++)
		sampler_profile_reset(sess->targets[i]);
}
