/*
 * Implementation of otel.h: the current span out of an OpenTelemetry
 * Context, by python/objects.h's readers (a dict's items, an instance's
 * attributes, a tuple's items, an int of 128 bits, a str).
 */
#include <errno.h>
#include <inttypes.h>

#include "python/otel.h"
#include "util/util.h"

#define KEY_RETRY_NS 1000000000ull      /* _SPAN_KEY not found: look again after */
#define KEY_RECHECK_NS 10000000000ull   /* found: look it up again after */
#define CONTEXT_ITEMS_MAX 64            /* entries of a Context looked at */

const char *const py_otel_field_names[PY_OTEL_FIELDS] = {
	[PY_OTEL_TRACE_ID] = "trace_id",
	[PY_OTEL_SPAN_ID] = "span_id",
	[PY_OTEL_SPAN_NAME] = "span_name",
};

void py_otel_init(struct py_otel *ot, struct py_objects *ob)
{
	memset(ot, 0, sizeof(*ot));
	ot->ob = ob;
}

static void all_set(struct py_ctxvalue out[PY_OTEL_FIELDS], enum py_ctxvalue_kind kind,
		    const char *text)
{
	for (int i = 0; i < PY_OTEL_FIELDS; i++)
		py_ctxvalue_set(&out[i], kind, text);
}

/* The _SPAN_KEY str, looked up again when due. 0 or -errno. */
static int span_key(struct py_otel *ot, uint64_t *key)
{
	uint64_t now = fw_now_ns();

	if (!ot->checked_ns || now - ot->checked_ns >= (ot->span_key ? KEY_RECHECK_NS : KEY_RETRY_NS)) {
		ot->checked_ns = now;
		if (py_module_attr(ot->ob, "opentelemetry.trace.propagation", "_SPAN_KEY",
				   &ot->span_key))
			ot->span_key = 0;
	}
	*key = ot->span_key;
	return ot->span_key ? 0 : -ENOENT;
}

/* An id of bits (64 or 128) as hex digits; -ERANGE when wider. */
static int id_hex(struct py_otel *ot, uint64_t obj, int bits, struct py_ctxvalue *out,
		  uint64_t *nonzero)
{
	uint64_t hi, lo;
	int ret = py_obj_uint128(ot->ob, obj, &hi, &lo);

	if (ret)
		return ret;
	if (bits == 64 && hi)
		return -ERANGE;
	out->kind = PY_CTXVALUE_STR;
	out->obj = obj;
	if (bits == 64)
		xsnprintf(out->text, sizeof(out->text), "%016" PRIx64, lo);
	else
		xsnprintf(out->text, sizeof(out->text), "%016" PRIx64 "%016" PRIx64, hi, lo);
	out->len = strlen(out->text);
	*nonzero = hi | lo;
	return 0;
}

void py_otel_span(struct py_otel *ot, const struct py_ctxvalue *ctx,
		  struct py_ctxvalue out[PY_OTEL_FIELDS])
{
	struct py_kv kv[CONTEXT_ITEMS_MAX];
	uint64_t key, span = 0, sc, ids[2], name, trace_nonzero, span_nonzero;
	size_t n;
	char *s = NULL;
	int ret;

	if (!ctx->obj) {
		/* the variable's own placeholder: not imported, unset, unreadable */
		all_set(out, ctx->kind, ctx->text);
		return;
	}
	if (span_key(ot, &key)) {
		all_set(out, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);   /* no span was ever made */
		return;
	}
	ret = py_dict_items(ot->ob, ctx->obj, kv, ARRAY_SIZE(kv), &n);
	if (ret) {
		all_set(out, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		return;
	}
	for (size_t i = 0; i < n && !span; i++)
		if (kv[i].key == key)
			span = kv[i].value;
	/* None there is no span either: get_current_span() gives INVALID_SPAN */
	if (!span || py_obj_is_none(ot->ob, span) == 1) {
		all_set(out, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
		return;
	}
	ret = py_obj_attr(ot->ob, span, "_context", &sc);
	if (!ret)
		ret = py_seq_items(ot->ob, sc, ids, 2, &n);
	if (!ret && n != 2)
		ret = -EFAULT;
	if (!ret)
		ret = id_hex(ot, ids[0], 128, &out[PY_OTEL_TRACE_ID], &trace_nonzero);
	if (!ret)
		ret = id_hex(ot, ids[1], 64, &out[PY_OTEL_SPAN_ID], &span_nonzero);
	if (ret) {
		all_set(out, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		return;
	}
	if (!trace_nonzero || !span_nonzero) {
		/* INVALID_SPAN: what get_current_span() gives where there is none */
		all_set(out, PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
		return;
	}
	ret = py_obj_attr(ot->ob, span, "_name", &name);
	if (ret == -ENOENT) {
		py_ctxvalue_set(&out[PY_OTEL_SPAN_NAME], PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
	} else if (ret || py_obj_str(ot->ob, name, PY_CTXVALUE_CHARS, &s)) {
		py_ctxvalue_set(&out[PY_OTEL_SPAN_NAME], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
	} else {
		py_ctxvalue_set(&out[PY_OTEL_SPAN_NAME], PY_CTXVALUE_STR, s);
		out[PY_OTEL_SPAN_NAME].obj = name;
	}
	free(s);
}
