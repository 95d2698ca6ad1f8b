/*
 * asyncio's view of a thread that runs an event loop: which task is
 * running, the chain of tasks awaiting it, and what every other task of the
 * loop is parked on. Read out of process, beside the sampled frames.
 *
 * The running task. Its coroutine's frame is among the thread's sampled
 * frames (3.11+ the frame inside the coroutine object, gi_iframe; <= 3.10
 * the coroutine's gi_frame); the task is found by that address among the
 * candidates: 3.14+ the thread state's asyncio_running_task (offsets from
 * the interpreter's .AsyncioDebug section), older versions the values of
 * asyncio.tasks._current_tasks (loop -> task), and tasks seen before. The
 * frames between the task's coroutine and the loop's _run_once
 * (Handle._run, Task.__step, ...: frames of the asyncio package) fold
 * away; in their place come the task as a frame ("[task] NAME") and the
 * tasks awaiting it, outermost first, each with its own await chain.
 *
 * Who awaits a task. 3.14+: the task's awaited_by (one task or a set),
 * which the interpreter keeps for out-of-process tools, TaskGroup and
 * gather included. <= 3.13: the task's done-callbacks name their waiter: a
 * task's wakeup method (its __self__, or 3.8/3.9 TaskWakeupMethWrapper's
 * task), TaskGroup._on_task_done (its _parent_task), gather's
 * _done_callback (the _GatheringFuture in its closure, then whoever awaits
 * that).
 *
 * A suspended task's await chain: from the task's coroutine, each
 * coroutine's frame and the object it awaits (on its value stack, a
 * measured number of slots below the top), down to a future; the chain ends
 * in a leaf "[await] WHAT": a sleep, a socket read or write through the
 * selector, a stream, a Lock, Event, Condition, Semaphore, a Queue's get or
 * put, a TaskGroup, gather, another task, to_thread, or the future's type.
 *
 * The tasks of a loop: 3.14+ the per-thread (and per-interpreter) lists of
 * tasks; older versions asyncio.tasks._scheduled_tasks / _eager_tasks
 * (3.12+) or _all_tasks (<= 3.11), of that loop (the _run_once frame's self).
 *
 * Tasks are C tasks (_asyncio.Task and subclasses, layout from
 * python/offsets.h) or pure-Python ones (asyncio.tasks._PyTask, read by
 * their attributes). Every read is bounded (chains PY_ASYNC_CHAIN_MAX deep,
 * PY_ASYNC_PARENTS_MAX awaiting tasks, PY_ASYNC_TASKS_MAX tasks a loop),
 * types are checked before a field is used, and task names are cut at
 * PY_ASYNC_NAME_MAX bytes. Not supported: free-threaded builds, loops
 * other than asyncio's own (uvloop: no _run_once frame).
 */
#ifndef FRAMEWALK_PYTHON_ASYNCIO_H
#define FRAMEWALK_PYTHON_ASYNCIO_H

#include <stddef.h>
#include <stdint.h>

#include "python/objects.h"
#include "python/reader.h"
#include "util/strbuf.h"

#define PY_ASYNC_CHAIN_MAX 64        /* coroutines in one await chain */
#define PY_ASYNC_PARENTS_MAX 16      /* tasks awaiting one another */
#define PY_ASYNC_TASKS_MAX 65536     /* tasks of one loop */
#define PY_ASYNC_NAME_MAX 200        /* bytes of a task name kept */
#define PY_ASYNC_LABELS_MAX 65536    /* distinct task and leaf labels kept */

/* 3.14+: the interpreter's _Py_AsyncioModuleDebugOffsets (.AsyncioDebug). */
struct py_asyncio_debug {
	uint64_t task_size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set;
	uint64_t task_coro, task_node;
	uint64_t interp_size, interp_tasks_head;
	uint64_t tstate_size, tstate_running_loop, tstate_running_task, tstate_tasks_head;
};

struct py_async_stats {
	uint64_t running;            /* samples whose running task was found */
	uint64_t no_task;            /* loop-thread samples running no task */
	uint64_t unmatched;          /* a task's frames but no task matched them */
	uint64_t waiting;            /* suspended tasks read */
	uint64_t bad_tasks;          /* tasks that could not be read */
	uint64_t rescans;            /* full task scans to find a running task */
};

struct py_async_label;

struct py_async {
	struct py_reader *r;
	struct py_objects *ob;
	const struct py_asyncio_layout *al;   /* C Future/Task (measured) */
	int native_merge;                    /* the caller merges native frames with these
	                                      * (entry flags matter: see py_async_stack) */
	int debug_wanted;                    /* 3.14+: read tasks through the section */
	int debug_known;                     /* ... and it was found */
	uint64_t debug_looked_ns;
	struct py_asyncio_debug dbg;
	uint64_t task_type;                  /* _asyncio.Task, once seen */
	/* "[task] NAME" and "[await] WHAT" markers: open addressing by text */
	struct py_async_label **labels;
	size_t labels_cap, nlabels;
	/* coroutine -> task, for tasks found once (a running task found later by its frame) */
	struct { uint64_t coro, task; } *coros;
	size_t coros_cap, ncoros;
	uint64_t scanned_ns;                 /* last full scan for an unknown running task */
	struct py_async_stats stats;
};

/*
 * Can this target's tasks be read? 0, or -ENOTSUP with the reason in why
 * (a free-threaded build, no layout for the version).
 */
int py_async_init(struct py_async *a, struct py_reader *r, struct py_objects *ob,
		  struct strbuf *why);
void py_async_release(struct py_async *a);

/* Whether framewalk reads asyncio tasks of CPython 3.minor: 0 or -ENOTSUP with why. */
int py_async_supported(int minor, int free_threaded, struct strbuf *why);

/* What py_async_stack found out about the thread. */
struct py_async_thread {
	uint64_t loop;               /* the running loop (0: none found) */
	uint64_t task;               /* the running task (0: none) */
	size_t base;                 /* in the input: the first frame outer of the loop's
	                              * _run_once (frames [base, n) are the loop's callers) */
	int in_loop;                 /* the frames run an asyncio event loop */
};

/*
 * The task view of one thread's sampled frames (innermost first, as
 * py_reader_stack gives them) into out (innermost first, at most max):
 * the running task's frames, "[task] NAME", the awaiting tasks' chains and
 * names, then the loop's callers. Entry flags are kept so native merging
 * still pairs Python frames with their evaluator frames. tstate: the
 * thread's state (0: unknown). Returns 0 with *nout frames; -ENOENT when
 * the thread runs no task now (out unused: record the frames as they are;
 * th says whether it is in a loop); -errno when the frames cannot be read.
 */
int py_async_stack(struct py_async *a, uint64_t tstate, const struct py_frame_info *in,
		   size_t n, struct py_frame_info *out, size_t max, size_t *nout,
		   struct py_async_thread *th);

/* A suspended task, as py_async_waiting gives it. */
struct py_async_waiting_task {
	uint64_t task;
	/*
	 * Its own context (the C Task's task_context, a Python Task's
	 * _context: a PyContext *, 0 unread), the one asyncio enters to resume
	 * it: what its code sees, not its thread's, which runs another task.
	 * Its variables change only while the task runs, so read while it is
	 * suspended they are its own.
	 */
	uint64_t context;
	const struct py_frame_info *frames;  /* innermost first */
	size_t n;
	uint64_t coro;                       /* its coroutine, and what it awaited as read */
	uint64_t awaits;                     /* (0: a generator-based one that yielded bare) */
	const struct py_code *name;          /* its "[task] NAME" */
};

/*
 * Every suspended task of loop (run by the thread with state tstate, 0:
 * unknown): fn is called with each task, its frames innermost first:
 * "[await] WHAT", its await chain, "[task] NAME", the chains and names of
 * the tasks awaiting it. A task running as it is read (the loop moves on
 * meanwhile), or whose chain cannot be read whole, is given too, with no
 * frames (n 0; its task, context, coroutine and name): there is no wait
 * of it to read now. Each task once. Returns the number of suspended
 * tasks given to fn, or -errno.
 */
typedef void (*py_async_task_fn)(void *arg, const struct py_async_waiting_task *t);
int py_async_waiting(struct py_async *a, uint64_t loop, uint64_t tstate,
		     py_async_task_fn fn, void *arg);

/*
 * Is task t (as given to fn) still the same task (pending, its name,
 * coroutine and context the same), suspended where its chain was read, its
 * outermost coroutine awaiting the same object? For what fn reads of it
 * afterwards (its context): one that ran meanwhile, or finished and was
 * freed (its memory reused by the next task, alike), may have changed it.
 * 1, 0, or -errno.
 */
int py_async_still_waiting(struct py_async *a, const struct py_async_waiting_task *t);

#endif
