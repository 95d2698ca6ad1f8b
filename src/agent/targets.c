/*
 * Implementation of targets.h. Processes are looked at through /proc
 * (agent/procinfo.h for their labels and the selectors' inputs) and
 * python/discover.h; the session does the sampling.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/calls.h"
#include "agent/sink.h"
#include "agent/targets.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define NS 1000000000ull
/* A process this young that is not Python yet may be starting it: look again. */
#define YOUNG_NS (10ull * NS)
/* How often an older process that was not Python is looked at again (an exec). */
#define RECHECK_NS (60ull * NS)

/* A process looked at and not profiled (not Python, not chosen, or unreadable). */
struct agent_examined {
	pid_t pid;
	uint64_t ino;            /* its /proc directory's inode number (0: not known) */
	uint64_t start;
	char exe[256];
	uint64_t checked_ns;
	uint64_t young_until;    /* until then its executable is compared at every scan (an exec) */
	uint64_t retry_until;    /* until then it is looked at again at every scan (Python starting) */
};

static void PRINTF_LIKE(2, 3) say(const struct agent_targets *tg, const char *fmt, ...)
{
	va_list ap;

	if (tg->quiet)
		return;
	va_start(ap, fmt);
	agent_vline(fmt, ap);
	va_end(ap);
}

static struct agent_target *target_of(struct agent_targets *tg, pid_t pid)
{
	for (size_t i = 0; i < tg->n; i++)
		if (tg->t[i].info.pid == pid && !tg->t[i].gone)
			return &tg->t[i];
	return NULL;
}

/*
 * The examined processes are kept sorted by pid: a scan looks each of the
 * host's processes up (thousands on a busy host; a linear search made a
 * scan quadratic in them).
 */
static size_t examined_pos(const struct agent_targets *tg, pid_t pid)
{
	size_t lo = 0, hi = tg->nx;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tg->x[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct agent_examined *examined_of(struct agent_targets *tg, pid_t pid)
{
	size_t at = examined_pos(tg, pid);

	return at < tg->nx && tg->x[at].pid == pid ? &tg->x[at] : NULL;
}

static void examined_set(struct agent_targets *tg, pid_t pid, uint64_t ino, uint64_t start,
			 const char *exe, uint64_t young_until, uint64_t retry_until)
{
	struct agent_examined *x = examined_of(tg, pid);

	if (!x) {
		size_t at = examined_pos(tg, pid);

		tg->x = xgrow(tg->x, sizeof(*tg->x), tg->nx + 1, &tg->x_alloc);
		memmove(&tg->x[at + 1], &tg->x[at], (tg->nx - at) * sizeof(*tg->x));
		tg->nx++;
		x = &tg->x[at];
	}
	x->pid = pid;
	x->ino = ino;
	x->start = start;
	xsnprintf(x->exe, sizeof(x->exe), "%s", exe);
	x->checked_ns = fw_now_ns();
	x->young_until = young_until;
	x->retry_until = retry_until;
}

/* How long pid has run (0 when unknown). */
static uint64_t age_ns(uint64_t start_ticks)
{
	struct timespec up;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t start;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &up))
		return 0;
	start = start_ticks * (NS / (uint64_t)hz);
	return (uint64_t)up.tv_sec * NS + (uint64_t)up.tv_nsec > start ?
	       (uint64_t)up.tv_sec * NS + (uint64_t)up.tv_nsec - start : 0;
}

/* Start profiling a discovered process. 0 or -errno. */
static int start_profiling(struct agent_targets *tg, struct session *sess,
			   const struct py_target *t, uint64_t ino)
{
	struct agent_target *tr;
	struct procinfo info;
	int ret = procinfo_read(t->pid, &info);

	if (ret)
		return ret;
	ret = session_add(sess, t);
	if (ret)
		return ret;
	tg->t = xgrow(tg->t, sizeof(*tg->t), tg->n + 1, &tg->alloc);
	tr = &tg->t[tg->n++];
	memset(tr, 0, sizeof(*tr));
	tr->info = info;
	tr->ino = ino;
	tr->target = *t;
	tr->in_session = 1;
	say(tg, "profiling process %d (%s, Python %s)", (int)t->pid, info.service, t->version);
	return 0;
}

void agent_target_bank_labels(struct agent_target *tr, const struct session *sess)
{
	struct label_counts now, *s = &tr->labels_sent;

	if (!tr->in_session || session_label_counts(sess, tr->info.pid, &now))
		return;
	if (now.reads < s->reads)
		memset(s, 0, sizeof(*s));       /* not the sampler counted from: all of it is new */
	label_counts_add_since(&tr->labels_pending, &now, s);
	memset(s, 0, sizeof(*s));
}

/* Stop profiling tr (it exited, or is no longer chosen); its last period still goes out. */
static void stop_profiling(struct agent_targets *tg, struct session *sess, struct agent_target *tr,
			   const char *why)
{
	/* its records still waiting for a batch are counted in its labels */
	if (tr->in_session)
		session_drain(sess);
	agent_target_bank_labels(tr, sess);
	if (tr->in_session)
		session_remove(sess, tr->info.pid);
	tr->in_session = 0;
	tr->gone = 1;
	say(tg, "stopped profiling process %d (%s): %s", (int)tr->info.pid, tr->info.service, why);
}

/* x looked at before, and nothing due now: not young, its exec check not yet. */
static int nothing_due(const struct agent_examined *x, uint64_t now)
{
	return now >= x->young_until && now - x->checked_ns < RECHECK_NS;
}

/*
 * Look at pid: start profiling it when it is chosen and runs Python. ino is
 * its /proc directory's inode number as the scan listed it (0: not known).
 */
static void consider(struct agent_targets *tg, struct session *sess,
		     const struct select_set *sel, pid_t pid, uint64_t ino, int listed)
{
	char exe[4096], cmdline[1024], cgroup[512], container[PROCINFO_CONTAINER_LEN + 1];
	struct strbuf why = STRBUF_INIT;
	struct agent_examined *x = examined_of(tg, pid);
	struct target_mem mem;
	struct py_target t;
	uint64_t start, now = fw_now_ns(), age, young_until;
	int ret, kernel_thread;

	/*
	 * Passed over at the last look, nothing due since (not young, not
	 * starting Python, no exec check), and the same process: its /proc
	 * directory has the inode number it had then. A process's directory
	 * keeps its inode while it lives and one started with a reused pid
	 * gets a new one (the kernel drops the old directory at the exit:
	 * proc_flush_pid); one whose number changed anyway (its entry
	 * reclaimed under memory pressure) is only read again below. No read
	 * of the host's thousands of unchosen processes at each scan (issue 25:
	 * 2,000 idle processes cost an agent choosing none 0.63% of a core).
	 */
	if (x && ino && x->ino == ino && now >= x->retry_until && nothing_due(x, now))
		return;
	/* a kernel thread has no executable to read, at any scan: passed over as such */
	if (proc_start_identity(pid, &start, &kernel_thread))
		return;
	if (kernel_thread) {
		examined_set(tg, pid, ino, start, "", 0, 0);
		return;
	}
	if (x && x->start == start && now >= x->retry_until) {
		/* looked at before: again only when it exec'd something else since */
		if (nothing_due(x, now))
			return;
		x->checked_ns = now;
		if (proc_exe(pid, exe, sizeof(exe)) || !strncmp(exe, x->exe, sizeof(x->exe) - 1))
			return;
	}
	age = age_ns(start);
	young_until = age < YOUNG_NS ? now + (YOUNG_NS - age) : 0;
	if (procinfo_read_match(pid, exe, sizeof(exe), cmdline, sizeof(cmdline), cgroup,
				sizeof(cgroup), container, sizeof(container)))
		return;
	if (!listed && !select_match(sel, pid, exe, cmdline, container, cgroup)) {
		examined_set(tg, pid, ino, start, exe, young_until, 0);
		return;
	}
	mem_init_pid(&mem, pid);
	ret = py_discover(pid, &mem, &t, &why);
	mem_release(&mem);
	if (!ret)
		ret = start_profiling(tg, sess, &t, ino);
	if (ret) {
		/* a young process may not have loaded its interpreter yet */
		int starting = (ret == -ENOEXEC || ret == -ENOTSUP || ret == -EAGAIN) && young_until;

		if (!starting && ret != -ENOEXEC && ret != -ESRCH)
			fw_warning("cannot profile process %d (%s): %s", (int)pid, exe,
				   why.len ? strbuf_str(&why) : strerror(-ret));
		else if (!starting && listed && ret == -ENOEXEC)
			fw_warning("process %d (%s) is not a Python process", (int)pid, exe);
		examined_set(tg, pid, ino, start, exe, young_until, starting ? young_until : 0);
	}
	strbuf_release(&why);
}

/* A process as /proc lists it: its id and its directory's inode number. */
struct proc_entry {
	pid_t pid;
	uint64_t ino;
};

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = ((const struct proc_entry *)x)->pid, b = ((const struct proc_entry *)y)->pid;

	return a < b ? -1 : a > b;
}

/* Every process in /proc, sorted by id. */
static struct proc_entry *all_pids(size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct proc_entry *pids = NULL;
	size_t alloc = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		long v;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || parse_long(de->d_name, &v) || v <= 0)
			continue;
		pids = xgrow(pids, sizeof(*pids), *n + 1, &alloc);
		pids[*n].pid = (pid_t)v;
		pids[(*n)++].ino = (uint64_t)de->d_ino;
	}
	closedir(d);
	sort_array(pids, *n, sizeof(*pids), cmp_pid);
	return pids;
}

/* pid's entry in a listing of all_pids, or NULL. */
static const struct proc_entry *listed_entry(const struct proc_entry *pids, size_t n, pid_t pid)
{
	struct proc_entry key = { pid, 0 };

	return n ? bsearch(&key, pids, n, sizeof(*pids), cmp_pid) : NULL;
}

/*
 * The session's targets that ended (exited, or refused) or are no longer
 * chosen. pids (n of them, NULL: no listing) is this scan's listing: a
 * target whose directory has the inode number it had is the same process,
 * alive, and its start time is not read again.
 */
static void drop_targets(struct agent_targets *tg, struct session *sess,
			 const struct select_set *sel, const struct proc_entry *pids, size_t n)
{
	for (size_t i = 0; i < tg->n; i++) {
		struct agent_target *tr = &tg->t[i];
		const struct procinfo *in = &tr->info;
		uint64_t start;
		int ended = 0;

		const struct py_target *now_t = NULL;

		if (tr->gone)
			continue;
		for (size_t k = 0; k < sess->n; k++) {
			if (session_target(sess, k)->pid != in->pid)
				continue;
			now_t = session_target(sess, k);
			ended = sess->exited[k];
		}
		/*
		 * It exec'd another Python program, which the capture follows (a
		 * new runtime, even from the same executable): the labels are
		 * read again (service, build-id, version) and this period goes
		 * out under the new ones.
		 */
		if (now_t && !ended && !py_target_same_program(now_t, &tr->target)) {
			struct procinfo fresh;

			if (!procinfo_read(in->pid, &fresh) && fresh.start_time == in->start_time) {
				say(tg, "process %d exec'd %s (Python %s): its labels are read again",
				    (int)in->pid, fresh.exe, now_t->version);
				tr->info = fresh;
				tr->target = *now_t;
			}
		}
		const struct proc_entry *e = listed_entry(pids, n, in->pid);
		int same = e && tr->ino && e->ino == tr->ino;

		if (!same && (proc_start_time(in->pid, &start) || start != in->start_time))
			stop_profiling(tg, sess, tr, "it exited");
		else if (ended)
			stop_profiling(tg, sess, tr, "it can no longer be read");
		else if (!select_match(sel, in->pid, in->exe, in->cmdline, in->container, in->cgroup))
			stop_profiling(tg, sess, tr, "no longer chosen by the selectors");
	}
}

void agent_targets_scan(struct agent_targets *tg, struct session *sess,
			const struct select_set *sel)
{
	size_t n = 0, kept = 0;
	struct proc_entry *pids;
	pid_t self = getpid();

	pids = select_scans(sel) ? all_pids(&n) : NULL;
	drop_targets(tg, sess, sel, pids, n);
	for (size_t i = 0; i < sel->npids; i++) {
		pid_t pid = sel->pids[i];
		const struct proc_entry *e = listed_entry(pids, n, pid);

		if (!target_of(tg, pid))
			consider(tg, sess, sel, pid, e ? e->ino : 0, 1);
	}
	for (size_t i = 0; i < n; i++)
		if (pids[i].pid != self && !target_of(tg, pids[i].pid) &&
		    !select_listed(sel, pids[i].pid))
			consider(tg, sess, sel, pids[i].pid, pids[i].ino, 0);
	/* forget the examined processes that are gone */
	for (size_t i = 0; i < tg->nx; i++) {
		int alive = pids ? listed_entry(pids, n, tg->x[i].pid) != NULL :
			    proc_exists(tg->x[i].pid) != -ESRCH;

		if (alive)
			tg->x[kept++] = tg->x[i];
	}
	tg->nx = kept;
	free(pids);
}

size_t agent_targets_profiled(const struct agent_targets *tg)
{
	size_t n = 0;

	for (size_t i = 0; i < tg->n; i++)
		n += !tg->t[i].gone;
	return n;
}

void agent_targets_forget_examined(struct agent_targets *tg)
{
	tg->nx = 0;
}

/* Its counting stopped (if still on) and freed. */
static void free_calls(struct agent_target *tr)
{
	if (!tr->calls)
		return;
	agent_calls_release(tr->calls, &tr->target);
	free(tr->calls);
	tr->calls = NULL;
}

void agent_targets_forget_gone(struct agent_targets *tg)
{
	size_t kept = 0;

	for (size_t i = 0; i < tg->n; i++) {
		if (!tg->t[i].gone)
			tg->t[kept++] = tg->t[i];
		else
			free_calls(&tg->t[i]);
	}
	tg->n = kept;
}

void agent_targets_resume(struct agent_targets *tg, struct session *sess)
{
	for (size_t i = 0; i < tg->n; i++) {
		struct agent_target *tr = &tg->t[i];

		tr->in_session = 0;
		if (tr->gone)
			continue;
		if (session_add(sess, &tr->target))
			stop_profiling(tg, sess, tr, "it cannot be sampled again");
		else
			tr->in_session = 1;
	}
}

void agent_targets_release(struct agent_targets *tg)
{
	for (size_t i = 0; i < tg->n; i++)
		free_calls(&tg->t[i]);
	free(tg->t);
	free(tg->x);
	memset(tg, 0, sizeof(*tg));
}
