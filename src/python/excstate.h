/*
 * Is a thread raising or handling an exception? Read out of process from
 * its thread state, the way sys.exc_info() and the interpreter see it, for
 * --mode exception (sampler/pyview.h) and its <exception TYPE> leaf.
 *
 * A thread counts when the exception being raised is set (curexc_type
 * <= 3.11, current_exception 3.12+), or when an exception is being handled:
 * tstate->exc_info, the stack of exception states (the thread's own, and
 * one per running generator or coroutine), has an item whose value is set
 * and not None, searched from the innermost the way sys.exc_info() does, at
 * most PY_EXC_STACK_MAX items deep. Offsets are the version's objects
 * layout (generated from its headers; 3.13+ from the target's
 * _Py_DebugOffsets where the block has them).
 */
#ifndef FRAMEWALK_PYTHON_EXCSTATE_H
#define FRAMEWALK_PYTHON_EXCSTATE_H

#include <stdint.h>

#include "python/objects.h"
#include "python/offsets.h"
#include "util/strbuf.h"

#define PY_EXC_STACK_MAX 64

/* Can a target of this layout be read? 0, or -ENOTSUP with the reason in why. */
int py_exc_supported(const struct py_offsets *off, const char *version, struct strbuf *why);

/*
 * The exception thread state tstate is raising or handling into *exc (0:
 * none): an exception object, or its type while one is raised on <= 3.11
 * (*is_type set). 0, -EFAULT on garbage, -ENOTSUP, or the reader's -errno.
 */
int py_exc_current(struct py_objects *ob, uint64_t tstate, uint64_t *exc, int *is_type);

/* The name of the exception's type ("?" when unreadable), for the leaf marker. */
const char *py_exc_type_name(struct py_objects *ob, uint64_t exc, int is_type);

#endif
