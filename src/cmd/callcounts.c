/*
 * --count-calls for the commands that capture (record, top): the refusals,
 * before anything is asked of a target, and the counting wrapped around
 * the capture (python/callcount.h), its counts merged into the profile.
 * A refusal (the version, the build, remote debugging disabled) of a
 * process given with -p ends the command with its reason; a counting that
 * cannot be had once asked (every tool id taken, a target that never
 * reaches a safe point), or a process found later that cannot count, is
 * said and the capture goes on without its counts.
 *
 * record counts in every process it samples: each is asked once its
 * interpreter runs (a launched command's as it starts, a --subprocesses
 * child's when it appears), from the capture loop's hook (cmd_calls_pass);
 * the counts of all are summed per function; a process that exits while
 * counted leaves its counts at its exit, read at the end.
 */
#include <errno.h>
#include <string.h>

#include "cmd/cmd.h"
#include "python/callcount.h"
#include "util/util.h"

/* how long the counting outlives the capture if framewalk cannot stop it */
#define DEADLINE_MARGIN_S 10.0
#define DEADLINE_UNTIMED_S 600.0
/* how often the counted processes are looked at for an exit */
#define ENDED_NS 200000000ull
#define NEVER_NS (3600ull * 1000000000ull)

/* One process counted over the whole capture: how, in the header's words. */
static void one_counting_note(struct strbuf *note, int tool, size_t fns, uint64_t start_us,
			      uint64_t stop_us)
{
	strbuf_addf(note, "exact, sys.monitoring tool %d over the capture; %zu functions; the "
		    "target's thread held %.1f ms to start, %.1f ms to stop", tool, fns,
		    start_us / 1e3, stop_us / 1e3);
}

/* Can t count? 0, -EAGAIN (not yet known: it is starting), else the refusal in why. */
static int can_count(const struct py_target *t, struct strbuf *why)
{
	struct target_mem mem;
	int ret;

	mem_init_pid(&mem, t->pid);
	ret = callcount_check(&mem, t, why);
	mem_release(&mem);
	return ret;
}

int cmd_calls_check(const char *verb, size_t ntargets, const struct py_target *t)
{
	for (size_t i = 0; i < ntargets; i++) {
		struct strbuf why = STRBUF_INIT;
		int ret = can_count(&t[i], &why);

		if (!ret || ret == -EAGAIN) {
			strbuf_release(&why);
			continue;
		}
		fw_error("process %d: --count-calls is not possible: %s", (int)t[i].pid,
			 strbuf_str(&why));
		if (ret == -ENOTSUP)
			fw_hint("exact counts need CPython 3.14 or later (remote execution, PEP "
				"768); on older versions %s without --count-calls for sampled "
				"time, or run the program under a tracer (python -m cProfile) for "
				"exact counts", verb);
		else if (ret == -EPERM)
			fw_hint("start the target without PYTHON_DISABLE_REMOTE_DEBUG and -X "
				"disable-remote-debug, or %s without --count-calls", verb);
		else
			fw_hint("%s it without --count-calls", verb);
		strbuf_release(&why);
		return ret == -EPERM ? FW_EXIT_PERMISSION : FW_EXIT_UNSUPPORTED;
	}
	return FW_EXIT_OK;
}

static double deadline_of(const struct sampler_opts *so)
{
	return so->duration_s > 0 ? so->duration_s + DEADLINE_MARGIN_S : DEADLINE_UNTIMED_S;
}

/* Start counting in t: 0, or -errno with its reason in why. */
static int start_one(struct callcount *cc, const struct py_target *t,
		     const struct sampler_opts *so, double deadline, struct strbuf *why)
{
	callcount_init(cc, t->pid);
	cc->stop = so->stop;
	cc->announce = callcount_log_request;
	return callcount_start(cc, t, deadline, why);
}

int cmd_calls_begin(struct callcount *cc, const struct py_target *t,
		    const struct sampler_opts *so, struct profile *prof)
{
	struct strbuf why = STRBUF_INIT;
	int ret = start_one(cc, t, so, deadline_of(so), &why);

	if (ret) {
		fw_warning("process %d: counting calls failed: %s; going on without counts",
			   (int)t->pid, strbuf_str(&why));
		prof->meta.calls_note = xstrdup(strbuf_str(&why));
	}
	strbuf_release(&why);
	return ret;
}

/* Stop counting in t and add its counts to prof: 0, or -errno said (why too). */
static int end_one(struct callcount *cc, const struct py_target *t, struct profile *prof,
		   struct strbuf *why)
{
	int ret = callcount_stop(cc, t, why);

	if (ret) {
		fw_warning("process %d: reading the call counts failed: %s", (int)t->pid,
			   strbuf_str(why));
		return ret;
	}
	callcount_add_counts(cc, prof);
	return 0;
}

void cmd_calls_end(struct callcount *cc, const struct py_target *t, struct profile *prof,
		   uint64_t window_ns)
{
	struct strbuf why = STRBUF_INIT;

	if (cc->tool_id < 0) {
		callcount_release(cc);
		return;
	}
	if (end_one(cc, t, prof, &why)) {
		prof->meta.calls_note = strbuf_detach(&why);
	} else {
		struct strbuf note = STRBUF_INIT;

		one_counting_note(&note, cc->tool_id, cc->n, cc->start_us, cc->stop_us);
		prof->meta.calls_note = strbuf_detach(&note);
		prof->meta.calls_window_ns = window_ns;
	}
	strbuf_release(&why);
	callcount_release(cc);
}

/* record's counting over every process of its capture */
struct calls_target {
	struct py_target t;
	struct callcount cc;
	enum callcount_state state;
};

struct cmd_calls {
	struct sampler_opts so;
	struct profile *prof;
	struct calls_target *v;     /* the processes not ended yet */
	size_t n, alloc;
	size_t seen;                /* processes ever looked at */
	uint64_t first_ns;          /* when the first counting began (0: none yet) */
	uint64_t tried_ns;          /* the last look at the waiting ones */
	uint64_t ended_ns;          /* ... and at the counting ones' exits */
	size_t refused;             /* processes that could not count */
	pid_t refused_pid;          /* the first one, and its reason */
	struct strbuf refusal;
	/* the counted ones, summed as each ends */
	size_t counted, failed, at_exit, fns;
	pid_t lost_pid;             /* the first whose counts were lost, and why */
	struct strbuf lost;
	uint64_t start_us, stop_us;
	int tool;                   /* the tool id all used; 6: several */
};

struct cmd_calls *cmd_calls_new(const struct sampler_opts *so, struct profile *prof)
{
	struct cmd_calls *c = xcalloc(1, sizeof(*c));

	c->so = *so;
	c->prof = prof;
	c->tool = -1;
	return c;
}

static struct calls_target *find(struct cmd_calls *c, pid_t pid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].t.pid == pid)
			return &c->v[i];
	return NULL;
}

/* Forget c->v[i] (its files removed): a later process of the same pid is new. */
static void drop(struct cmd_calls *c, size_t i)
{
	callcount_release(&c->v[i].cc);
	c->v[i] = c->v[--c->n];
}

static void refused(struct cmd_calls *c, struct calls_target *ct, const char *what,
		    const struct strbuf *why)
{
	fw_warning("process %d: %s: %s; going on without counts", (int)ct->t.pid, what,
		   strbuf_str(why));
	if (!c->refused++) {
		c->refused_pid = ct->t.pid;
		strbuf_addstr(&c->refusal, strbuf_str(why));
	}
	ct->state = CALLCOUNT_OFF;
}

/* The session's copy of pid's target: it exec'd if its runtime moved (NULL: not there). */
static const struct py_target *session_copy(const struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (session_target(sess, i)->pid == pid)
			return session_target(sess, i);
	return NULL;
}

/* Is pid a target of sess that has not exited? */
static int session_has_live(const struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (session_target(sess, i)->pid == pid && !sess->exited[i])
			return 1;
	return 0;
}

/* Stop counting in c->v[i] (or read what it wrote at its exit), add its counts, drop it. */
static void end_target(struct cmd_calls *c, size_t i, const struct session *sess)
{
	struct calls_target *ct = &c->v[i];
	const struct py_target *now_t = session_copy(sess, ct->t.pid);
	struct strbuf why = STRBUF_INIT;
	int ret;

	if (now_t && !py_target_same_program(now_t, &ct->t)) {
		/* an exec ended the counting with the program: nothing to ask */
		strbuf_addf(&why, "it exec'd another program, which ended the counting; its "
			    "counts were lost");
		fw_warning("process %d: %s", (int)ct->t.pid, strbuf_str(&why));
		ret = -ENOENT;
	} else {
		ret = end_one(&ct->cc, &ct->t, c->prof, &why);
	}
	if (ret) {
		if (!c->failed++) {
			c->lost_pid = ct->t.pid;
			strbuf_addstr(&c->lost, strbuf_str(&why));
		}
	} else {
		c->counted++;
		c->at_exit += ct->cc.at_exit;
		c->fns += ct->cc.n;
		c->tool = c->tool < 0 || c->tool == ct->cc.tool_id ? ct->cc.tool_id : 6;
		c->start_us = ct->cc.start_us > c->start_us ? ct->cc.start_us : c->start_us;
		c->stop_us = ct->cc.stop_us > c->stop_us ? ct->cc.stop_us : c->stop_us;
	}
	strbuf_release(&why);
	drop(c, i);
}

void cmd_calls_pass(struct cmd_calls *c, const struct session *sess, uint64_t now,
		    uint64_t *next)
{
	int waiting = 0;

	for (size_t i = 0; i < sess->n; i++) {
		const struct py_target *t = session_target(sess, i);

		if (!sess->exited[i] && !find(c, t->pid)) {
			c->v = xgrow(c->v, sizeof(*c->v), c->n + 1, &c->alloc);
			memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
			c->v[c->n].t = *t;
			callcount_init(&c->v[c->n].cc, t->pid);
			c->v[c->n].state = CALLCOUNT_WAITING;
			c->n++;
			c->seen++;
		}
	}
	/*
	 * Those that ended (a --subprocesses child): their counts read now, from
	 * what their exit handler wrote, and their files and descriptors gone,
	 * not held until the capture ends.
	 */
	if (now - c->ended_ns >= ENDED_NS) {
		c->ended_ns = now;
		for (size_t i = c->n; i-- > 0;) {
			if (c->v[i].state == CALLCOUNT_COUNTING && callcount_ended(&c->v[i].cc))
				end_target(c, i, sess);
			else if (c->v[i].state != CALLCOUNT_COUNTING && !session_has_live(sess, c->v[i].t.pid))
				drop(c, i);
		}
	}
	if (c->tried_ns && now - c->tried_ns < CALLCOUNT_RETRY_NS) {
		*next = c->tried_ns + CALLCOUNT_RETRY_NS;
		return;
	}
	c->tried_ns = now;
	for (size_t i = 0; i < c->n; i++) {
		struct calls_target *ct = &c->v[i];
		struct strbuf why = STRBUF_INIT;
		double deadline = deadline_of(&c->so);
		int ret;

		if (ct->state != CALLCOUNT_WAITING)
			continue;
		if (c->so.stop && *c->so.stop)
			break;
		ret = can_count(&ct->t, &why);
		if (ret == -EAGAIN) {
			waiting = 1;           /* its interpreter is not made yet */
		} else if (ret) {
			refused(c, ct, "--count-calls is not possible", &why);
		} else {
			/* the rest of the capture, and the margin */
			if (c->so.duration_s > 0)
				deadline -= (double)(now - sess->start_ns) / 1e9;
			if (deadline < DEADLINE_MARGIN_S)
				deadline = DEADLINE_MARGIN_S;
			ret = start_one(&ct->cc, &ct->t, &c->so, deadline, &why);
			if (ret) {
				refused(c, ct, "counting calls failed", &why);
			} else {
				ct->state = CALLCOUNT_COUNTING;
				if (!c->first_ns)
					c->first_ns = fw_now_ns();
			}
		}
		strbuf_release(&why);
	}
	*next = waiting ? now + CALLCOUNT_RETRY_NS : now + NEVER_NS;
}

void cmd_calls_finish(struct cmd_calls *c, const struct session *sess)
{
	struct strbuf note = STRBUF_INIT;
	uint64_t end_ns = fw_now_ns();
	int stops = c->so.stop ? (int)*c->so.stop : 0;

	/*
	 * Each is asked to stop (5 s at most each); a stop signal that comes
	 * meanwhile leaves the rest to their deadline, unasked.
	 */
	for (size_t i = c->n; i-- > 0;) {
		c->v[i].cc.stop_base = stops;
		if (c->v[i].state == CALLCOUNT_COUNTING && c->so.stop && *c->so.stop > stops) {
			callcount_warn_unread(c->v[i].t.pid);
			if (!c->failed++) {
				c->lost_pid = c->v[i].t.pid;
				strbuf_addstr(&c->lost, "interrupted: not read");
			}
			drop(c, i);
		} else if (c->v[i].state == CALLCOUNT_COUNTING) {
			end_target(c, i, sess);
		} else {
			drop(c, i);
		}
	}
	if (c->counted == 1 && c->seen == 1 && !c->at_exit) {
		one_counting_note(&note, c->tool, c->fns, c->start_us, c->stop_us);
	} else if (c->counted) {
		strbuf_addf(&note, "exact, summed over %zu process%s", c->counted,
			    c->counted == 1 ? "" : "es");
		if (c->tool >= 0 && c->tool < 6)
			strbuf_addf(&note, ", sys.monitoring tool %d", c->tool);
		strbuf_addf(&note, "; %zu code objects; the target's thread held at most %.1f ms "
			    "to start, %.1f ms to stop", c->fns, c->start_us / 1e3,
			    c->stop_us / 1e3);
		if (c->at_exit)
			strbuf_addf(&note, "; %zu counted until %s exit", c->at_exit,
				    c->at_exit == 1 ? "its" : "their");
		if (c->failed)
			strbuf_addf(&note, "; %zu lost (process %d: %s)", c->failed, (int)c->lost_pid,
				    strbuf_str(&c->lost));
		if (c->refused)
			strbuf_addf(&note, "; %zu not counted (process %d: %s)", c->refused,
				    (int)c->refused_pid, strbuf_str(&c->refusal));
	} else if (c->failed || c->refused) {
		/* one process: its reason as it is; several: whose */
		if (c->seen > 1)
			strbuf_addf(&note, "process %d: ", (int)(c->failed ? c->lost_pid :
								 c->refused_pid));
		strbuf_addstr(&note, strbuf_str(c->failed ? &c->lost : &c->refusal));
	} else {
		strbuf_addstr(&note, "no process was counted: none had started its interpreter "
			      "when the capture ended");
	}
	free(c->prof->meta.calls_note);
	c->prof->meta.calls_note = strbuf_detach(&note);
	if (c->counted && c->first_ns)
		c->prof->meta.calls_window_ns = end_ns - c->first_ns;
	strbuf_release(&c->lost);
	strbuf_release(&c->refusal);
	free(c->v);
	free(c);
}
