/*
 * --count-calls for the commands that capture (record): the refusals,
 * before anything is asked of the target, and the counting wrapped around
 * the capture (python/callcount.h), its counts merged into the profile.
 * A refusal (the version, the build, remote debugging disabled) ends the
 * command with its reason; a counting that cannot be had once asked (every
 * tool id taken, a target that never reaches a safe point) is said and the
 * capture goes on without counts.
 */
#include <errno.h>

#include "cmd/cmd.h"
#include "python/callcount.h"
#include "util/util.h"

/* how long the counting outlives the capture if framewalk cannot stop it */
#define DEADLINE_MARGIN_S 10.0
#define DEADLINE_UNTIMED_S 600.0

/* Every script a target is asked to run, logged with its path. */
static void announce(pid_t pid, const char *path, const char *mode)
{
	fw_note("count-calls: asking process %d to run %s (%s)", (int)pid, path, mode);
}

int cmd_calls_check(const char *verb, size_t ntargets, int command, int subprocesses,
		    const struct py_target *t)
{
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	int ret;

	if (ntargets != 1 || command || subprocesses) {
		fw_error("--count-calls counts in one running process: give one -p PID");
		fw_hint("%s -p PID --count-calls (no command, --all-python or --subprocesses)",
			verb);
		return FW_EXIT_USAGE;
	}
	mem_init_pid(&mem, t->pid);
	ret = py_rexec_check(&mem, t, &why);
	mem_release(&mem);
	if (!ret) {
		strbuf_release(&why);
		return FW_EXIT_OK;
	}
	fw_error("process %d: --count-calls is not possible: %s", (int)t->pid, strbuf_str(&why));
	if (ret == -ENOTSUP)
		fw_hint("exact counts need CPython 3.14 or later (remote execution, PEP 768); "
			"on older versions %s without --count-calls for sampled time, or run the "
			"program under a tracer (python -m cProfile) for exact counts", verb);
	else if (ret == -EPERM)
		fw_hint("start the target without PYTHON_DISABLE_REMOTE_DEBUG and -X "
			"disable-remote-debug, or %s without --count-calls", verb);
	else
		fw_hint("%s it without --count-calls", verb);
	strbuf_release(&why);
	return ret == -EPERM ? FW_EXIT_PERMISSION : FW_EXIT_UNSUPPORTED;
}

int cmd_calls_begin(struct callcount *cc, const struct py_target *t,
		    const struct sampler_opts *so, struct profile *prof)
{
	struct strbuf why = STRBUF_INIT;
	double deadline = so->duration_s > 0 ? so->duration_s + DEADLINE_MARGIN_S :
			  DEADLINE_UNTIMED_S;
	int ret;

	callcount_init(cc, t->pid);
	cc->stop = so->stop;
	cc->announce = announce;
	ret = callcount_start(cc, t, deadline, &why);
	if (ret) {
		fw_warning("process %d: counting calls failed: %s; going on without counts",
			   (int)t->pid, strbuf_str(&why));
		prof->meta.calls_note = xstrdup(strbuf_str(&why));
		callcount_release(cc);
		callcount_init(cc, t->pid);
	}
	strbuf_release(&why);
	return ret;
}

void cmd_calls_end(struct callcount *cc, const struct py_target *t, struct profile *prof,
		   uint64_t window_ns)
{
	struct strbuf why = STRBUF_INIT;
	int ret;

	if (cc->tool_id < 0) {
		callcount_release(cc);
		return;
	}
	ret = callcount_stop(cc, t, &why);
	if (ret) {
		fw_warning("process %d: reading the call counts failed: %s", (int)t->pid,
			   strbuf_str(&why));
		prof->meta.calls_note = xstrdup(strbuf_str(&why));
	} else {
		struct strbuf note = STRBUF_INIT;

		for (size_t i = 0; i < cc->n; i++)
			profile_add_calls(prof, cc->fns[i].name, cc->fns[i].file,
					  cc->fns[i].firstline, cc->fns[i].starts,
					  cc->fns[i].resumes);
		strbuf_addf(&note, "exact, sys.monitoring tool %d over the capture; %zu functions; "
			    "the target's thread held %.1f ms to start, %.1f ms to stop",
			    cc->tool_id, cc->n, cc->start_us / 1e3, cc->stop_us / 1e3);
		prof->meta.calls_note = strbuf_detach(&note);
		prof->meta.calls_window_ns = window_ns;
	}
	strbuf_release(&why);
	callcount_release(cc);
}
