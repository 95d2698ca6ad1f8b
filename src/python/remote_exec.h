/*
 * Asking a 3.14+ interpreter to run a Python file at its next safe point:
 * PEP 768's remote execution, driven from outside through the target's own
 * _Py_DebugOffsets (its debugger_support section), as sys.remote_exec does.
 * framewalk writes the file's path into one thread state's request buffer,
 * sets the pending flag, then the eval-breaker bit that makes the thread
 * look at it; the thread runs the file the next time it checks its eval
 * breaker (between bytecodes: a thread blocked in C runs it only once it
 * returns to Python). No machine code is injected, nothing is stopped.
 *
 * Invariants: only the request fields are written, each bounded by the
 * size the target's block states (and by MEM_WRITE_MAX); every value read
 * from the target is range-checked; a request the thread has not taken
 * can be withdrawn (the pending flag cleared) so nothing runs late.
 */
#ifndef FRAMEWALK_PYTHON_REMOTE_EXEC_H
#define FRAMEWALK_PYTHON_REMOTE_EXEC_H

#include <stdint.h>

#include "python/discover.h"
#include "target/memory.h"
#include "util/strbuf.h"

/* What a request was written to (the thread state that will run it). */
struct py_rexec {
	uint64_t tstate;            /* the thread state written to */
	int32_t tid;                /* its native thread id (0: unknown) */
	uint64_t pending_addr;      /* its debugger_pending_call (int32) */
};

/*
 * Can t run a remote script? 0, or -ENOTSUP (before 3.14, or no
 * debugger_support in its block), -EPERM (remote debugging disabled in the
 * target: PYTHON_DISABLE_REMOTE_DEBUG, -X disable-remote-debug), -EOPNOTSUPP
 * (a free-threaded build), -errno of a read; why says which in one line.
 * Its answer on remote debugging holds once py_rexec_ready says so (the
 * setting is zero before the interpreter's configuration is copied in).
 */
int py_rexec_check(struct target_mem *m, const struct py_target *t, struct strbuf *why);

/*
 * Can t take a request now? -EAGAIN while its interpreter is starting (no
 * thread state yet, or no __main__ module yet: a request taken while the
 * import system is being installed fails inside the interpreter, which
 * clears it), else 0 (also when it cannot be told: a request's own wait is
 * then the bound).
 */
int py_rexec_ready(struct target_mem *m, const struct py_target *t);

/*
 * Ask t to run the file at path (as the target sees it) in its main thread
 * (native id t->pid), else the first thread state listed. -EBUSY: another
 * debugger's request is still pending; -ENAMETOOLONG: path does not fit the
 * target's buffer; else as py_rexec_check. On 0, rq says where it went.
 */
int py_rexec_send(struct target_mem *m, const struct py_target *t, const char *path,
		  struct py_rexec *rq, struct strbuf *why);

/* 1 while the request is still pending (not taken by the thread), 0, or -errno. */
int py_rexec_pending(struct target_mem *m, const struct py_rexec *rq);

/*
 * Withdraw a request the thread has not taken: clear its pending flag. 0
 * (withdrawn or already taken; the thread may take it between the read and
 * the write, as with any debugger) or -errno.
 */
int py_rexec_withdraw(struct target_mem *m, const struct py_rexec *rq);

#endif
