/*
 * Implementation of labels.h: the per-target reader of the --label context
 * variables (its own python/objects.h view: type and module caches), the
 * values turned into profile label sets, and the cap on distinct values.
 */
#include <errno.h>

#include "python/contextvars.h"
#include "python/objects.h"
#include "python/otel.h"
#include "sampler/backend.h"
#include "sampler/labels.h"
#include "util/util.h"

_Static_assert(LABEL_VAR_MAX == PY_CTXVAR_NAME_MAX, "label_spec names and contextvars.h differ");
/* each --label reads one variable; --label trace gives PY_OTEL_FIELDS labels */
#define LABEL_OUTS_MAX (LABELS_MAX + PY_OTEL_FIELDS - 1)
_Static_assert(LABELS_MAX <= PY_CTXVARS_MAX && LABEL_OUTS_MAX <= PROFILE_LABELS_MAX,
	       "more labels than the reader or the profile keep");

#define SEEN_SLOTS 2048           /* > 2 * LABEL_VALUES_MAX: the value sets stay half empty */

/*
 * Labels every pprof sample already carries (output/pprof.h), --label
 * trace's, the attributes every OTLP sample carries (agent/otlp.c), and
 * Pyroscope's own series labels (a sample label of that name could move a
 * sample to another series); names starting "framewalk." or "__" too.
 */
static const char *const reserved[] = {
	"thread_id", "thread_name", "thread_comm", "process_id", "exec_generation",
	"trace_id", "span_id", "span_name", "thread.id", "thread.name", "service_name",
};

/* Does framewalk, or a consumer of its labels, give NAME a meaning (reserved, framewalk.*, __*)? */
static int reserved_name(const char *name)
{
	if (!strncmp(name, "framewalk.", 10) || !strncmp(name, "__", 2))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		if (!strcmp(name, reserved[i]))
			return 1;
	return 0;
}

struct label_state {
	uint32_t name;                /* profile string id of NAME (0: not interned yet) */
	uint32_t seen[SEEN_SLOTS];    /* value string ids + 1 kept so far (open addressing) */
	size_t nseen;
	uint32_t other;               /* string id of LABEL_OTHER (0: not interned yet) */
};

/* One label each sample carries: a variable's value, or a field of the span it holds. */
struct label_out {
	const char *name;
	size_t var;                   /* the variable (index of py_contextvars_add) */
	int field;                    /* -1: its value; else enum py_otel_field of its span */
};

struct labels {
	struct py_contextvars cv;
	struct py_otel otel;
	size_t nvars;                 /* variables read: one per --label */
	size_t n;                     /* labels each sample carries */
	struct label_out out[LABEL_OUTS_MAX];
	struct label_state st[LABEL_OUTS_MAX];
	pid_t tid;                    /* the thread the set below was read for (0: none) */
	uint32_t set;
	struct py_ctxvalue v[LABEL_OUTS_MAX];   /* labels_read_first: the values read */
	struct py_ctxvars_stats before;     /* ... the read's counts before it */
	uint64_t read_ns;                   /* ... and its time */
	struct label_counts counts;         /* this target's, as the profile's header counts */
};

static int name_char(char c, int dotted)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (dotted && c == '.');
}

/* A dotted (MODULE) or plain (VARIABLE) Python name: no empty parts, no leading digit. */
static int python_name(const char *s, size_t n, int dotted)
{
	int start = 1;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.' && dotted) {
			if (start)
				return 0;
			start = 1;
			continue;
		}
		if (!name_char(s[i], 0) || (start && s[i] >= '0' && s[i] <= '9'))
			return 0;
		start = 0;
	}
	return !start;
}

int label_spec_parse(const char *opt, const char *arg, struct label_spec *out, struct strbuf *err)
{
	const char *eq = strchr(arg, '='), *colon = eq ? strchr(eq + 1, ':') : NULL;
	size_t nname, nmod, nvar;

	memset(out, 0, sizeof(*out));
	if (!strcmp(arg, LABEL_TRACE_ARG)) {
		/* OpenTelemetry's current span: trace_id, span_id, span_name (python/otel.h) */
		out->kind = LABEL_TRACE;
		xsnprintf(out->name, sizeof(out->name), "%s", LABEL_TRACE_ARG);
		xsnprintf(out->module, sizeof(out->module), "%s", PY_OTEL_MODULE);
		xsnprintf(out->variable, sizeof(out->variable), "%s", PY_OTEL_VARIABLE);
		return 0;
	}
	if (!eq || !colon) {
		strbuf_addf(err, "bad --%s '%s': NAME=MODULE:VARIABLE (e.g. route=app.context:route), "
			    "or trace (OpenTelemetry's current span)", opt, arg);
		return -EINVAL;
	}
	nname = (size_t)(eq - arg);
	nmod = (size_t)(colon - eq - 1);
	nvar = strlen(colon + 1);
	for (size_t i = 0; i < nname; i++) {
		if (!name_char(arg[i], 1) && arg[i] != '-') {
			strbuf_addf(err, "bad --%s '%s': NAME takes letters, digits, '_', '-' and '.'",
				    opt, arg);
			return -EINVAL;
		}
	}
	if (!nname || nname >= sizeof(out->name)) {
		strbuf_addf(err, "bad --%s '%s': NAME must be 1 to %zu characters", opt, arg,
			    sizeof(out->name) - 1);
		return -EINVAL;
	}
	if (!python_name(eq + 1, nmod, 1) || nmod >= sizeof(out->module) ||
	    !python_name(colon + 1, nvar, 0) || nvar >= sizeof(out->variable)) {
		strbuf_addf(err, "bad --%s '%s': MODULE must be a module's name (as in sys.modules) "
			    "and VARIABLE a name in it, ASCII, at most %zu characters each", opt, arg,
			    sizeof(out->module) - 1);
		return -EINVAL;
	}
	memcpy(out->name, arg, nname);
	if (reserved_name(out->name)) {
		strbuf_addf(err, "bad --%s '%s': '%s' is a label framewalk gives samples itself",
			    opt, arg, out->name);
		return -EINVAL;
	}
	memcpy(out->module, eq + 1, nmod);
	memcpy(out->variable, colon + 1, nvar);
	return 0;
}

void label_specs_describe(const struct label_spec *l, size_t n, struct strbuf *sb)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].kind == LABEL_TRACE)
			strbuf_addf(sb, "%s%s", i ? " " : "", LABEL_TRACE_ARG);
		else
			strbuf_addf(sb, "%s%s=%s:%s", i ? " " : "", l[i].name, l[i].module,
				    l[i].variable);
	}
}

struct labels *labels_new(struct sampler *s, struct strbuf *why)
{
	struct labels *l;
	int ret;

	if (!s->opts.labels.n)
		return NULL;
	if (py_contextvars_supported(&s->target.offsets, s->target.version, why))
		return NULL;
	l = xcalloc(1, sizeof(*l));
	ret = s->have_objects ? py_contextvars_init(&l->cv, &s->objects) : -ENOTSUP;
	if (ret) {
		strbuf_addf(why, "Python %s: its context variables cannot be read", s->target.version);
		free(l);
		return NULL;
	}
	py_otel_init(&l->otel, &s->objects);
	for (size_t i = 0; i < s->opts.labels.n && i < LABELS_MAX; i++) {
		const struct label_spec *sp = &s->opts.labels.l[i];
		int trace = sp->kind == LABEL_TRACE;

		if (py_contextvars_add(&l->cv, sp->module, sp->variable,
				       trace ? PY_OTEL_ATTR : NULL) != (int)i) {
			strbuf_addf(why, "label %s: cannot be read", sp->name);
			py_contextvars_release(&l->cv);
			free(l);
			return NULL;
		}
		if (!trace && l->n < LABEL_OUTS_MAX)
			l->out[l->n++] = (struct label_out){ sp->name, i, -1 };
		for (int f = 0; trace && f < PY_OTEL_FIELDS && l->n < LABEL_OUTS_MAX; f++)
			l->out[l->n++] = (struct label_out){ py_otel_field_names[f], i, f };
		l->nvars++;
	}
	return l;
}

void labels_free(struct labels *l)
{
	if (!l)
		return;
	py_contextvars_release(&l->cv);
	free(l);
}

void labels_profile_reset(struct labels *l)
{
	if (!l)
		return;
	memset(l->st, 0, sizeof(l->st));
	l->tid = 0;
	l->set = 0;
}

void label_counts_add(struct label_counts *to, const struct label_counts *add)
{
	to->reads += add->reads;
	to->ns_total += add->ns_total;
	to->cached += add->cached;
	to->walked += add->walked;
	to->unreadable += add->unreadable;
	to->folded += add->folded;
	to->changed += add->changed;
}

void label_counts_add_since(struct label_counts *to, const struct label_counts *now,
			    const struct label_counts *then)
{
	struct label_counts d = {
		now->reads - then->reads, now->ns_total - then->ns_total,
		now->cached - then->cached, now->walked - then->walked,
		now->unreadable - then->unreadable, now->folded - then->folded,
		now->changed - then->changed,
	};

	label_counts_add(to, &d);
}

/*
 * Both ledgers of a target's label reads: the profile's header (the
 * capture's, every target's) and the target's own (labels_counts).
 */
static void count(struct sampler *s, const struct label_counts *c)
{
	label_counts_add(&s->prof->meta.label_counts, c);
	label_counts_add(&s->labels->counts, c);
}

/* The value's string id, or LABEL_OTHER's once the label has LABEL_VALUES_MAX values. */
static uint32_t capped_value(struct profile *p, struct label_state *st, uint32_t id,
			     uint64_t *folded)
{
	size_t i = (size_t)hash_mix64(id) & (SEEN_SLOTS - 1);

	while (st->seen[i]) {
		if (st->seen[i] == id + 1)
			return id;
		i = (i + 1) & (SEEN_SLOTS - 1);
	}
	if (st->nseen >= LABEL_VALUES_MAX) {
		(*folded)++;
		if (!st->other)
			st->other = profile_cstring(p, LABEL_OTHER);
		return st->other;
	}
	st->seen[i] = id + 1;
	st->nseen++;
	return id;
}

/*
 * The labels' values (out, l->n) from the variables' (v, l->nvars): a
 * variable's own, or each field of the span it holds (one read per
 * sample, however many of its fields are labels).
 */
static void expand(struct labels *l, const struct py_ctxvalue *v, struct py_ctxvalue *out)
{
	struct py_ctxvalue span[PY_OTEL_FIELDS];
	size_t span_of = SIZE_MAX;

	for (size_t i = 0; i < l->n; i++) {
		const struct label_out *o = &l->out[i];

		if (o->field < 0) {
			out[i] = v[o->var];
			continue;
		}
		if (span_of != o->var) {
			py_otel_span(&l->otel, &v[o->var], span);
			span_of = o->var;
			/* unreadable here and not before (the variable's own is counted) */
			for (int f = 0; f < PY_OTEL_FIELDS; f++) {
				if (v[o->var].kind != PY_CTXVALUE_UNREADABLE &&
				    span[f].kind == PY_CTXVALUE_UNREADABLE) {
					l->cv.stats.unreadable++;
					break;
				}
			}
		}
		out[i] = span[o->field];
	}
}

/* The labels' values (out) as the thread of thread state tstate sees them now. */
static void values_of_thread(struct labels *l, uint64_t tstate, struct py_ctxvalue *out)
{
	struct py_ctxvalue v[LABELS_MAX];

	py_context_values(&l->cv, tstate, v, l->nvars);
	expand(l, v, out);
}

/*
 * The one place a sample's label set is made: the values read (v), each
 * under its label's name, capped per label; the read's cost and what
 * answered it counted in the profile's header (since before, t0).
 */
static uint32_t label_set(struct sampler *s, const struct py_ctxvalue *v,
			  const struct py_ctxvars_stats *before, uint64_t t0)
{
	struct labels *l = s->labels;
	struct pf_label set[LABEL_OUTS_MAX];
	struct label_counts c = { .reads = 1 };
	uint32_t id;

	for (size_t i = 0; i < l->n; i++) {
		struct label_state *st = &l->st[i];
		uint32_t value;

		if (!st->name)
			st->name = profile_cstring(s->prof, l->out[i].name);
		value = profile_string(s->prof, v[i].text, v[i].len);
		set[i] = (struct pf_label){ st->name, capped_value(s->prof, st, value, &c.folded) };
	}
	id = profile_labels(s->prof, set, l->n);
	c.cached = l->cv.stats.cached - before->cached;
	c.walked = l->cv.stats.walked - before->walked;
	c.unreadable = l->cv.stats.unreadable - before->unreadable;
	c.ns_total = fw_now_ns() - t0;
	count(s, &c);
	return id;
}

void labels_read(struct sampler *s, pid_t tid, uint64_t tstate)
{
	struct labels *l = s->labels;
	struct py_ctxvars_stats before;
	struct py_ctxvalue v[LABEL_OUTS_MAX];
	uint64_t t0;

	if (!l)
		return;
	t0 = fw_now_ns();
	before = l->cv.stats;
	values_of_thread(l, tstate, v);
	l->tid = tid;
	l->set = label_set(s, v, &before, t0);
}

void labels_read_first(struct sampler *s, pid_t tid, uint64_t tstate)
{
	struct labels *l = s->labels;
	uint64_t t0;

	if (!l)
		return;
	t0 = fw_now_ns();
	l->before = l->cv.stats;
	values_of_thread(l, tstate, l->v);
	l->tid = tid;
	l->set = 0;
	l->read_ns = fw_now_ns() - t0;
}

static int same_value(const struct py_ctxvalue *a, const struct py_ctxvalue *b)
{
	return a->kind == b->kind && a->len == b->len && !memcmp(a->text, b->text, a->len);
}

int labels_confirm(struct sampler *s, pid_t tid, uint64_t tstate)
{
	struct labels *l = s->labels;
	struct py_ctxvalue v[LABEL_OUTS_MAX];
	struct py_ctxvars_stats counted;
	uint64_t t0;
	int changed = 0;

	if (!l || l->tid != tid)
		return 0;
	/* the set's time: both reads, not the stack's between them */
	t0 = fw_now_ns() - l->read_ns;
	/* from the target now, the thread state's words too: not the tick's copy */
	counted = l->cv.stats;      /* the set counts what the first read found */
	mem_live_begin(&s->mem);
	mem_uncached_begin(&s->mem);
	values_of_thread(l, tstate, v);
	mem_uncached_end(&s->mem);
	mem_live_end(&s->mem);
	l->cv.stats = counted;
	for (size_t i = 0; i < l->n && !changed; i++)
		changed = !same_value(&v[i], &l->v[i]);
	if (!changed) {
		/* the set made once, for a sample that is kept */
		l->set = label_set(s, l->v, &l->before, t0);
		return 0;
	}
	l->tid = 0;
	count(s, &(struct label_counts){ .changed = 1 });
	return -EAGAIN;
}

uint32_t labels_of_context(struct sampler *s, uint64_t context)
{
	struct labels *l = s->labels;
	struct py_ctxvars_stats before;
	struct py_ctxvalue v[LABELS_MAX], out[LABEL_OUTS_MAX];
	uint64_t t0;

	if (!l)
		return 0;
	t0 = fw_now_ns();
	before = l->cv.stats;
	py_context_values_in(&l->cv, context, v, l->nvars);
	mem_live_begin(&s->mem);
	mem_uncached_begin(&s->mem);
	expand(l, v, out);
	mem_uncached_end(&s->mem);
	mem_live_end(&s->mem);
	return label_set(s, out, &before, t0);
}

int labels_counts(const struct sampler *s, struct label_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!s->labels)
		return -ESRCH;
	*out = s->labels->counts;
	return 0;
}

struct py_contextvars *labels_vars(struct sampler *s)
{
	return s->labels ? &s->labels->cv : NULL;
}

void labels_found(struct sampler *s, pid_t tid, uint64_t ctx_type, uint64_t hamt_type,
		  const struct py_ctx_found *found)
{
	struct labels *l = s->labels;
	struct py_ctxvars_stats before;
	struct py_ctxvalue v[LABELS_MAX], out[LABEL_OUTS_MAX];
	uint64_t t0;

	if (!l)
		return;
	t0 = fw_now_ns();
	before = l->cv.stats;
	py_context_values_found(&l->cv, ctx_type, hamt_type, found, v, l->nvars);
	expand(l, v, out);
	l->tid = tid;
	l->set = label_set(s, out, &before, t0);
}

uint32_t labels_take(struct sampler *s, pid_t tid)
{
	struct labels *l = s->labels;
	uint32_t set;

	if (!l || !l->tid || l->tid != tid)
		return 0;
	set = l->set;
	l->tid = 0;
	l->set = 0;
	return set;
}
