/*
 * OpenTelemetry Python's current span (--label trace), read out of a live
 * interpreter with no Python code run: the API keeps the current context
 * in one contextvars.ContextVar, opentelemetry.context's
 * _RUNTIME_CONTEXT._current_context (read as any --label variable is:
 * python/contextvars.h). Its value is an opentelemetry.context.Context, a
 * dict subclass never changed once made (set_value copies it). The span is
 * its value under opentelemetry.trace.propagation._SPAN_KEY (a str
 * "current-span-<uuid4>" made once at import; matched by identity), the
 * span's _context a SpanContext (a tuple: trace_id, span_id as ints), its
 * _name the SDK span's name (a span propagated from a caller, a
 * NonRecordingSpan, has none).
 *
 * Every read is bounded and checked as python/objects.h's are; each field
 * is always given: its text, or a contextvars.h placeholder.
 */
#ifndef FRAMEWALK_PYTHON_OTEL_H
#define FRAMEWALK_PYTHON_OTEL_H

#include <stdint.h>

#include "python/contextvars.h"
#include "python/objects.h"

#define PY_OTEL_MODULE "opentelemetry.context"
#define PY_OTEL_VARIABLE "_RUNTIME_CONTEXT"
#define PY_OTEL_ATTR "_current_context"

/* The fields of a span, in the order of their labels' names. */
enum py_otel_field { PY_OTEL_TRACE_ID, PY_OTEL_SPAN_ID, PY_OTEL_SPAN_NAME, PY_OTEL_FIELDS };

extern const char *const py_otel_field_names[PY_OTEL_FIELDS];   /* "trace_id", ... */

struct py_otel {
	struct py_objects *ob;
	uint64_t span_key;            /* the _SPAN_KEY str object (0: not found) */
	uint64_t checked_ns;          /* when it was last looked up (0: never) */
};

void py_otel_init(struct py_otel *ot, struct py_objects *ob);

/*
 * The current span's fields (out) from ctx, the context variable's value
 * as read: trace_id as 32 lowercase hex digits and span_id as 16 (W3C's
 * form, Pyroscope's and OpenTelemetry's), span_name the span's name. ctx a
 * placeholder (the API not imported: <no variable>; <unreadable>) gives it
 * to each field; no span in the context, or the invalid span (trace id 0),
 * gives <unset> to each; a span with no name (propagated) <unset> as its
 * name.
 */
void py_otel_span(struct py_otel *ot, const struct py_ctxvalue *ctx,
		  struct py_ctxvalue out[PY_OTEL_FIELDS]);

#endif
