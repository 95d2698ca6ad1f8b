/*
 * Python's own view in the sampler: the hooks sampler.c and capture.c call
 * to tell a thread handling an exception (python/excstate.h), to turn a loop
 * thread's frames into its running task's chain and record the suspended
 * tasks of wall mode (--async, python/asyncio.h). The readers live in
 * python/; this file only feeds them the sampler's frames and turns what
 * they give into profile stacks.
 */
#ifndef FRAMEWALK_SAMPLER_PYVIEW_H
#define FRAMEWALK_SAMPLER_PYVIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/reader.h"

struct sampler;
struct pyview;

/*
 * The view of one target (never NULL; what cannot work there stays off):
 * with --async where task stacks cannot be read, why in no_tasks (the
 * session tells the user).
 */
struct strbuf;
struct pyview *pyview_new(struct sampler *s, struct strbuf *no_tasks);
void pyview_free(struct pyview *v);

/*
 * --mode exception: is the thread of tstate raising or handling an
 * exception? 1 with its leaf marker ("<exception TYPE>") in marker, 0 when
 * not, or -errno (-ENOTSUP: not readable in this target).
 */
int pyview_exception(struct sampler *s, uint64_t tstate, char *marker, size_t size);

/*
 * --async: the frames to record for thread tid (innermost first): the task
 * view of in when the thread runs a task, else in itself. *depth is updated.
 */
const struct py_frame_info *pyview_frames(struct sampler *s, pid_t tid,
					  const struct py_frame_info *in, size_t *depth);

/*
 * After a native merge of thread tid's frames (outermost first): learns the
 * loop's callers, and folds the native task machinery under each "[task]"
 * label (not with --native-all). Returns the stack's new depth.
 */
size_t pyview_merged(struct sampler *s, pid_t tid, uint32_t *ids, size_t n);

/*
 * The profile was emptied (session_take_profile: top, the agent): what the
 * view kept of it (the loops' callers, the suspended tasks' stacks and
 * labels) goes.
 */
void pyview_profile_reset(struct sampler *s);

/* After each tick (--async, wall mode): one sample per suspended task of each loop. */
void pyview_tick(struct sampler *s, uint64_t now);

#endif
