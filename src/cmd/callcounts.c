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
/* how often a starting process is looked at again (its interpreter made?) */
#define RETRY_NS 10000000ull
#define NEVER_NS (3600ull * 1000000000ull)

/* Every script a target is asked to run, logged with its path. */
static void announce(pid_t pid, const char *path, const char *mode)
{
	fw_note("count-calls: asking process %d to run %s (%s)", (int)pid, path, mode);
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
	int ret;

	callcount_init(cc, t->pid);
	cc->stop = so->stop;
	cc->announce = announce;
	ret = callcount_start(cc, t, deadline, why);
	if (ret) {
		callcount_release(cc);
		callcount_init(cc, t->pid);
	}
	return ret;
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
	for (size_t i = 0; i < cc->n; i++)
		profile_add_calls(prof, cc->fns[i].name, cc->fns[i].file, cc->fns[i].firstline,
				  cc->fns[i].starts, cc->fns[i].resumes);
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

		strbuf_addf(&note, "exact, sys.monitoring tool %d over the capture; %zu functions; "
			    "the target's thread held %.1f ms to start, %.1f ms to stop",
			    cc->tool_id, cc->n, cc->start_us / 1e3, cc->stop_us / 1e3);
		prof->meta.calls_note = strbuf_detach(&note);
		prof->meta.calls_window_ns = window_ns;
	}
	strbuf_release(&why);
	callcount_release(cc);
}

/* record's counting over every process of its capture */
enum calls_state { CALLS_WAITING, CALLS_COUNTING, CALLS_NOT };

struct calls_target {
	struct py_target t;
	struct callcount cc;
	enum calls_state state;
};

struct cmd_calls {
	struct sampler_opts so;
	struct profile *prof;
	struct calls_target *v;
	size_t n, alloc;
	uint64_t first_ns;          /* when the first counting began (0: none yet) */
	uint64_t tried_ns;          /* the last look at the waiting ones */
	size_t refused;             /* processes that could not count */
	pid_t refused_pid;          /* the first one, and its reason */
	struct strbuf refusal;
};

struct cmd_calls *cmd_calls_new(const struct sampler_opts *so, struct profile *prof)
{
	struct cmd_calls *c = xcalloc(1, sizeof(*c));

	c->so = *so;
	c->prof = prof;
	return c;
}

static struct calls_target *find(struct cmd_calls *c, pid_t pid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].t.pid == pid)
			return &c->v[i];
	return NULL;
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
	ct->state = CALLS_NOT;
}

void cmd_calls_pass(struct cmd_calls *c, const struct session *sess, uint64_t now,
		    uint64_t *next)
{
	int waiting = 0;

	for (size_t i = 0; i < sess->n; i++) {
		const struct py_target *t = session_target(sess, i);

		struct calls_target *ct = find(c, t->pid);

		if (ct && ct->state == CALLS_WAITING && sess->exited[i])
			ct->state = CALLS_NOT;     /* exited before its interpreter ran: nothing to say */
		if (!sess->exited[i] && !ct) {
			c->v = xgrow(c->v, sizeof(*c->v), c->n + 1, &c->alloc);
			memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
			c->v[c->n].t = *t;
			callcount_init(&c->v[c->n].cc, t->pid);
			c->v[c->n].state = CALLS_WAITING;
			c->n++;
		}
	}
	if (c->tried_ns && now - c->tried_ns < RETRY_NS) {
		*next = c->tried_ns + RETRY_NS;
		return;
	}
	c->tried_ns = now;
	for (size_t i = 0; i < c->n; i++) {
		struct calls_target *ct = &c->v[i];
		struct strbuf why = STRBUF_INIT;
		double deadline = deadline_of(&c->so);
		int ret;

		if (ct->state != CALLS_WAITING)
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
				ct->state = CALLS_COUNTING;
				if (!c->first_ns)
					c->first_ns = fw_now_ns();
			}
		}
		strbuf_release(&why);
	}
	*next = waiting ? now + RETRY_NS : now + NEVER_NS;
}

/* The session's copy of pid's target: it exec'd if its runtime moved (NULL: not there). */
static const struct py_target *session_copy(const struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (session_target(sess, i)->pid == pid)
			return session_target(sess, i);
	return NULL;
}

void cmd_calls_finish(struct cmd_calls *c, const struct session *sess)
{
	struct strbuf note = STRBUF_INIT, lost = STRBUF_INIT;
	size_t counted = 0, failed = 0, at_exit = 0, fns = 0;
	pid_t lost_pid = 0;
	uint64_t start_us = 0, stop_us = 0, end_ns = fw_now_ns();
	int tool = -1;

	for (size_t i = 0; i < c->n; i++) {
		struct calls_target *ct = &c->v[i];
		const struct py_target *now_t = session_copy(sess, ct->t.pid);
		struct strbuf why = STRBUF_INIT;
		int ret;

		if (ct->state != CALLS_COUNTING) {
			callcount_release(&ct->cc);
			continue;
		}
		if (now_t && (now_t->runtime_addr != ct->t.runtime_addr ||
			      now_t->module_ino != ct->t.module_ino)) {
			/* an exec ended the counting with the program: nothing to ask */
			strbuf_addf(&why, "it exec'd another program, which ended the counting; its "
				    "counts were lost");
			fw_warning("process %d: %s", (int)ct->t.pid, strbuf_str(&why));
			ret = -ENOENT;
		} else {
			ret = end_one(&ct->cc, &ct->t, c->prof, &why);
		}
		if (ret) {
			if (!failed++) {
				lost_pid = ct->t.pid;
				strbuf_addstr(&lost, strbuf_str(&why));
			}
		} else {
			counted++;
			at_exit += ct->cc.at_exit;
			fns += ct->cc.n;
			tool = tool < 0 || tool == ct->cc.tool_id ? ct->cc.tool_id : 6;
			start_us = ct->cc.start_us > start_us ? ct->cc.start_us : start_us;
			stop_us = ct->cc.stop_us > stop_us ? ct->cc.stop_us : stop_us;
		}
		strbuf_release(&why);
		callcount_release(&ct->cc);
	}
	if (counted == 1 && c->n == 1 && !at_exit) {
		strbuf_addf(&note, "exact, sys.monitoring tool %d over the capture; %zu functions; "
			    "the target's thread held %.1f ms to start, %.1f ms to stop", tool, fns,
			    start_us / 1e3, stop_us / 1e3);
	} else if (counted) {
		strbuf_addf(&note, "exact, summed over %zu process%s", counted,
			    counted == 1 ? "" : "es");
		if (tool >= 0 && tool < 6)
			strbuf_addf(&note, ", sys.monitoring tool %d", tool);
		strbuf_addf(&note, "; %zu code objects; the target's thread held at most %.1f ms "
			    "to start, %.1f ms to stop", fns, start_us / 1e3, stop_us / 1e3);
		if (at_exit)
			strbuf_addf(&note, "; %zu counted until %s exit", at_exit,
				    at_exit == 1 ? "its" : "their");
		if (failed)
			strbuf_addf(&note, "; %zu lost (process %d: %s)", failed, (int)lost_pid,
				    strbuf_str(&lost));
		if (c->refused)
			strbuf_addf(&note, "; %zu not counted (process %d: %s)", c->refused,
				    (int)c->refused_pid, strbuf_str(&c->refusal));
	} else if (failed || c->refused) {
		/* one process: its reason as it is; several: whose */
		if (c->n > 1)
			strbuf_addf(&note, "process %d: ", (int)(failed ? lost_pid : c->refused_pid));
		strbuf_addstr(&note, strbuf_str(failed ? &lost : &c->refusal));
	} else {
		strbuf_addstr(&note, "no process was counted: none had started its interpreter "
			      "when the capture ended");
	}
	free(c->prof->meta.calls_note);
	c->prof->meta.calls_note = strbuf_detach(&note);
	if (counted && c->first_ns)
		c->prof->meta.calls_window_ns = end_ns - c->first_ns;
	strbuf_release(&lost);
	strbuf_release(&c->refusal);
	free(c->v);
	free(c);
}
