/*
 * Implementation of agent/calls.h: the per-process counting's states
 * (waiting for the interpreter, counting, off) and the period's take.
 */
#include <errno.h>
#include <string.h>

#include "agent/calls.h"
#include "util/util.h"

void agent_calls_init(struct agent_calls *c, pid_t pid)
{
	memset(c, 0, sizeof(*c));
	callcount_init(&c->cc, pid);
	c->cc.announce = callcount_log_request;
	profile_init(&c->taken);
	c->state = CALLCOUNT_WAITING;
}

void agent_calls_try_start(struct agent_calls *c, const struct py_target *t, double deadline_s,
			   volatile sig_atomic_t *stop, uint64_t now)
{
	struct strbuf why = STRBUF_INIT;
	int ret;

	if (c->state != CALLCOUNT_WAITING ||
	    (c->tried_ns && now - c->tried_ns < CALLCOUNT_RETRY_NS))
		return;
	c->tried_ns = now;
	c->cc.stop = stop;
	ret = callcount_check(&c->cc.mem, t, &why);
	if (ret == -EAGAIN) {
		strbuf_release(&why);
		return;                    /* its interpreter is starting: later */
	}
	if (!ret) {
		strbuf_reset(&why);
		ret = callcount_start(&c->cc, t, deadline_s, &why);
	}
	if (ret) {
		fw_warning("process %d: counting calls failed: %s; profiling it without counts",
			   (int)t->pid, strbuf_str(&why));
		c->state = CALLCOUNT_OFF;
		free(c->taken.meta.calls_note);
		c->taken.meta.calls_note = strbuf_detach(&why);
	} else {
		c->state = CALLCOUNT_COUNTING;
		c->since_ns = fw_now_ns();
		c->program = *t;
	}
	strbuf_release(&why);
}

void agent_calls_take(struct agent_calls *c, const struct py_target *t, int final)
{
	struct strbuf why = STRBUF_INIT;
	uint64_t now;
	int ret;

	if (c->state != CALLCOUNT_COUNTING) {
		/* no counts this period: a refusal's reason stays, said with each period */
		char *note = c->taken.meta.calls_note;

		c->taken.meta.calls_note = NULL;
		profile_release(&c->taken);
		profile_init(&c->taken);
		c->taken.meta.calls_note = note;
		return;
	}
	profile_release(&c->taken);
	profile_init(&c->taken);
	if (!py_target_same_program(t, &c->program)) {
		/* it exec'd: the counting ended with the old program; the new one is asked anew */
		c->taken.meta.calls_note = xstrdup("not counted: the process exec'd another "
						   "program, which ended the counting (its calls since "
						   "the last period were lost); it is asked again");
		callcount_reset(&c->cc);
		c->state = final ? CALLCOUNT_OFF : CALLCOUNT_WAITING;
		c->tried_ns = 0;
		return;
	}
	ret = final ? callcount_stop(&c->cc, t, &why) : callcount_take(&c->cc, t, &why);
	now = fw_now_ns();
	if (ret == -ETIMEDOUT && !final) {
		/* its thread did not reach a safe point (blocked in C): the counts stay, read next */
		c->taken.meta.calls_note = xstrdup("not read this period: its thread did not reach a "
						   "safe point within 5 s (blocked in C code); the "
						   "calls are read with the next period's");
		strbuf_release(&why);
		return;
	}
	if (ret) {
		fw_warning("process %d: reading the call counts failed: %s%s", (int)t->pid,
			   strbuf_str(&why), final ? "" : "; profiling it without counts");
		c->taken.meta.calls_note = strbuf_detach(&why);
		c->state = CALLCOUNT_OFF;
	} else {
		struct strbuf note = STRBUF_INIT;

		callcount_add_counts(&c->cc, &c->taken);
		strbuf_addf(&note, "exact, sys.monitoring tool %d over the period%s; %zu functions; "
			    "the target's thread held %.1f ms for this read", c->cc.tool_id,
			    c->cc.at_exit ? " until the process exited" : "", c->cc.n,
			    (final ? c->cc.stop_us : c->cc.peek_us) / 1e3);
		c->taken.meta.calls_note = strbuf_detach(&note);
		c->taken.meta.calls_window_ns = now - c->since_ns;
		c->since_ns = now;
		if (final || c->cc.at_exit)
			c->state = CALLCOUNT_OFF;   /* stopped, or exited: its last counts */
	}
	strbuf_release(&why);
	if (c->state == CALLCOUNT_OFF)
		callcount_reset(&c->cc);
}

void agent_calls_abandon(struct agent_calls *c, pid_t pid)
{
	if (c->state != CALLCOUNT_COUNTING)
		return;
	callcount_warn_unread(pid);
	callcount_reset(&c->cc);
	profile_release(&c->taken);
	profile_init(&c->taken);
	c->taken.meta.calls_note = xstrdup("not read: interrupted (the counting removes itself "
					   "at its deadline)");
	c->state = CALLCOUNT_OFF;
}

void agent_calls_release(struct agent_calls *c, const struct py_target *t)
{
	struct strbuf why = STRBUF_INIT;

	if (c->state == CALLCOUNT_COUNTING && callcount_stop(&c->cc, t, &why))
		fw_warning("process %d: stopping the call counting failed: %s (it removes itself at "
			   "its deadline)", (int)t->pid, strbuf_str(&why));
	strbuf_release(&why);
	callcount_release(&c->cc);
	profile_release(&c->taken);
}
