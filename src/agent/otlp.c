/*
 * OTLP profiles (encode.h): a period as one ExportProfilesServiceRequest
 * of opentelemetry/proto/collector/profiles/v1development. Every process
 * is one ResourceProfiles (resource attributes after the semantic
 * conventions: service.name, host.name, process.pid, container.id,
 * process.runtime.*, process.executable.*) holding one Profile; the
 * strings, mappings, locations, functions, stacks and attributes of all of
 * them are one dictionary, each entry stored once, index 0 the zero value.
 * With --count-calls a process has a second Profile, its exact calls.
 *
 * Interning reuses the profile tables: a scratch profile's strings are the
 * string table, its frames the locations and its prefix tree the stacks; a
 * second one's frames, keyed (kind, name, file), the functions. Every
 * message is allocated in one arena and freed with it after packing.
 */
#include <errno.h>
#include <sys/random.h>

#include "agent/encode.h"
#include "output/pprof.h"
#include "profile/profile.h"
#include "profiles_service.pb-c.h"
#include "util/hashidx.h"
#include "util/util.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest OtlpRequest;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary OtlpDict;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles OtlpResourceProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles OtlpScopeProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile OtlpProfile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample OtlpSample;
typedef Opentelemetry__Proto__Profiles__V1development__Stack OtlpStack;
typedef Opentelemetry__Proto__Profiles__V1development__Location OtlpLocation;
typedef Opentelemetry__Proto__Profiles__V1development__Line OtlpLine;
typedef Opentelemetry__Proto__Profiles__V1development__Function OtlpFunction;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping OtlpMapping;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit OtlpAttr;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType OtlpValueType;
typedef Opentelemetry__Proto__Profiles__V1development__Link OtlpLink;
typedef Opentelemetry__Proto__Common__V1__KeyValue OtlpKeyValue;
typedef Opentelemetry__Proto__Common__V1__AnyValue OtlpAnyValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope OtlpScope;
typedef Opentelemetry__Proto__Resource__V1__Resource OtlpResource;

#define ANY_STRING OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define ANY_INT OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE

/* Everything allocated for one request, freed together. */
struct arena {
	void **p;
	size_t n, alloc;
};

static void *arena_new(struct arena *a, size_t size)
{
	void *x = xcalloc(1, size);

	a->p = xgrow(a->p, sizeof(*a->p), a->n + 1, &a->alloc);
	a->p[a->n++] = x;
	return x;
}

static char *arena_strdup(struct arena *a, const char *s)
{
	size_t len = strlen(s);
	char *d = arena_new(a, len + 1);

	memcpy(d, s, len);
	return d;
}

static void arena_release(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
	memset(a, 0, sizeof(*a));
}

/* A growing array of message pointers (a dictionary table, a repeated field). */
struct ptrs {
	void **v;
	size_t n, alloc;
};

static void ptrs_add(struct ptrs *t, void *x)
{
	t->v = xgrow(t->v, sizeof(*t->v), t->n + 1, &t->alloc);
	t->v[t->n++] = x;
}

/* One attribute of the table, for interning. */
struct attr_key {
	uint32_t key;                /* string index */
	int is_int;
	int64_t num;
	uint32_t str;                /* string index of a string value */
};

struct enc {
	struct arena a;
	struct profile st;           /* strings; frames = locations; nodes = stacks */
	struct profile fn;           /* frames = functions (names and files: st's ids) */
	struct profile vals;         /* string values of attributes, to intern them */
	struct ptrs maps, locs, funcs, attrs, stacks;
	uint32_t *map_file, *map_bid;    /* mapping i's filename and build-id string ids */
	size_t map_alloc, map_alloc2;
	struct attr_key *attr_keys;
	size_t attr_keys_alloc;
	struct hidx attr_index;      /* attr_keys by their hash (labels make thousands) */
	uint32_t *node_stack;        /* st node -> stack index, 0: none yet */
	size_t node_stack_alloc;
	int32_t attr_frame_type[4];  /* by frame kind: the profile.frame.type attribute, 0: none */
};

static uint32_t str_id(struct enc *e, const char *s)
{
	return profile_cstring(&e->st, s);
}

static uint64_t attr_key_hash(const struct attr_key *k)
{
	uint64_t parts[3] = { (uint64_t)k->key << 1 | (uint64_t)k->is_int, (uint64_t)k->num,
			      k->str };

	return hash_bytes(parts, sizeof(parts));
}

static uint64_t attr_hash_of(const void *owner, uint32_t id)
{
	return attr_key_hash(&((const struct enc *)owner)->attr_keys[id]);
}

/* The attribute (key, value) in the table, added when new; its index. */
static int32_t attr_get(struct enc *e, const char *key, const char *sval, int64_t num, int is_int)
{
	struct attr_key k = { str_id(e, key), is_int, is_int ? num : 0,
			      is_int ? 0 : profile_cstring(&e->vals, sval) };
	uint64_t h = attr_key_hash(&k);
	size_t pos = hidx_start(&e->attr_index, h);
	OtlpAttr *a;
	OtlpAnyValue *v;

	for (uint32_t i; (i = hidx_next(&e->attr_index, &pos)) != HIDX_NONE;) {
		const struct attr_key *o = &e->attr_keys[i];

		if (o->key == k.key && o->is_int == k.is_int && o->num == k.num && o->str == k.str)
			return (int32_t)i;
	}
	a = arena_new(&e->a, sizeof(*a));
	opentelemetry__proto__profiles__v1development__key_value_and_unit__init(a);
	a->key_strindex = (int32_t)k.key;
	v = arena_new(&e->a, sizeof(*v));
	opentelemetry__proto__common__v1__any_value__init(v);
	if (is_int) {
		v->value_case = ANY_INT;
		v->int_value = num;
	} else {
		v->value_case = ANY_STRING;
		v->string_value = arena_strdup(&e->a, sval);
	}
	a->value = v;
	e->attr_keys = xgrow(e->attr_keys, sizeof(*e->attr_keys), e->attrs.n + 1, &e->attr_keys_alloc);
	e->attr_keys[e->attrs.n] = k;
	ptrs_add(&e->attrs, a);
	hidx_insert(&e->attr_index, h, (uint32_t)(e->attrs.n - 1), attr_hash_of, e);
	return (int32_t)(e->attrs.n - 1);
}

static int32_t mapping_get(struct enc *e, const char *file, const char *build_id)
{
	uint32_t f = str_id(e, file), b = build_id ? str_id(e, build_id) : 0;
	OtlpMapping *m;

	for (size_t i = 1; i < e->maps.n; i++)
		if (e->map_file[i] == f && e->map_bid[i] == b)
			return (int32_t)i;
	m = arena_new(&e->a, sizeof(*m));
	opentelemetry__proto__profiles__v1development__mapping__init(m);
	m->filename_strindex = (int32_t)f;
	if (b) {
		m->attribute_indices = arena_new(&e->a, sizeof(int32_t));
		m->attribute_indices[0] = attr_get(e, "process.executable.build_id.gnu", build_id, 0, 0);
		m->n_attribute_indices = 1;
	}
	e->map_file = xgrow(e->map_file, sizeof(*e->map_file), e->maps.n + 1, &e->map_alloc);
	e->map_bid = xgrow(e->map_bid, sizeof(*e->map_bid), e->maps.n + 1, &e->map_alloc2);
	e->map_file[e->maps.n] = f;
	e->map_bid[e->maps.n] = b;
	ptrs_add(&e->maps, m);
	return (int32_t)(e->maps.n - 1);
}

/* The location of frame f of profile p; its index (= its id in e->st). */
static uint32_t location_get(struct enc *e, const struct profile *p, uint32_t f)
{
	const struct pf_frame *fr = &p->frames[f];
	uint32_t name = str_id(e, profile_str(p, fr->name));
	uint32_t file = fr->file ? str_id(e, profile_str(p, fr->file)) : 0;
	uint32_t mod = fr->module ? str_id(e, profile_str(p, fr->module)) : 0;
	uint32_t bid = fr->build_id ? str_id(e, profile_str(p, fr->build_id)) : 0;
	uint32_t id = profile_frame_module(&e->st, (enum frame_kind)fr->kind, name, file, fr->line, mod, bid);
	uint32_t fid;
	OtlpLocation *l;
	OtlpLine *ln;
	OtlpFunction *fn;
	int32_t ft;

	if (id < e->locs.n)
		return id;
	l = arena_new(&e->a, sizeof(*l));
	opentelemetry__proto__profiles__v1development__location__init(l);
	if (fr->kind == FRAME_NATIVE && fr->module)
		l->mapping_index = mapping_get(e, profile_str(p, fr->module),
					       fr->build_id ? profile_str(p, fr->build_id) : NULL);
	else if (fr->kind == FRAME_KERNEL)
		l->mapping_index = mapping_get(e, PPROF_MAPPING_KERNEL, NULL);
	fid = profile_frame(&e->fn, (enum frame_kind)fr->kind, name, file, 0);
	if (fid >= e->funcs.n) {
		fn = arena_new(&e->a, sizeof(*fn));
		opentelemetry__proto__profiles__v1development__function__init(fn);
		fn->name_strindex = (int32_t)name;
		/* the name in the file where it was demangled (elf/demangle.h) */
		if (fr->kind == FRAME_NATIVE)
			fn->system_name_strindex = fr->system_name ?
				(int32_t)str_id(e, profile_str(p, fr->system_name)) : (int32_t)name;
		fn->filename_strindex = (int32_t)file;
		ptrs_add(&e->funcs, fn);
	}
	ln = arena_new(&e->a, sizeof(*ln));
	opentelemetry__proto__profiles__v1development__line__init(ln);
	ln->function_index = (int32_t)fid;
	ln->line = fr->line > 0 ? fr->line : 0;
	l->lines = arena_new(&e->a, sizeof(*l->lines));
	l->lines[0] = ln;
	l->n_lines = 1;
	ft = fr->kind < ARRAY_SIZE(e->attr_frame_type) ? e->attr_frame_type[fr->kind] : 0;
	if (ft) {
		l->attribute_indices = arena_new(&e->a, sizeof(int32_t));
		l->attribute_indices[0] = ft;
		l->n_attribute_indices = 1;
	}
	ptrs_add(&e->locs, l);
	return id;
}

/* The stack of st node `node` (its frames are locations); its index. */
static int32_t stack_get(struct enc *e, uint32_t node)
{
	OtlpStack *s;
	size_t depth;

	if (!node)
		return 0;          /* no frames: the zero stack */
	if (node >= e->node_stack_alloc) {
		size_t old = e->node_stack_alloc;

		e->node_stack = xgrow(e->node_stack, sizeof(*e->node_stack), node + 1,
				      &e->node_stack_alloc);
		memset(e->node_stack + old, 0, (e->node_stack_alloc - old) * sizeof(*e->node_stack));
	}
	if (e->node_stack[node])
		return (int32_t)e->node_stack[node];
	s = arena_new(&e->a, sizeof(*s));
	opentelemetry__proto__profiles__v1development__stack__init(s);
	depth = e->st.nodes[node].depth;
	s->location_indices = arena_new(&e->a, (depth ? depth : 1) * sizeof(int32_t));
	/* leaf first: the parent chain's order */
	for (uint32_t n = node; n && s->n_location_indices < depth; n = e->st.nodes[n].parent)
		s->location_indices[s->n_location_indices++] = (int32_t)e->st.nodes[n].frame;
	e->node_stack[node] = (uint32_t)e->stacks.n;
	ptrs_add(&e->stacks, s);
	return (int32_t)(e->stacks.n - 1);
}

static OtlpKeyValue *kv_str(struct enc *e, const char *key, const char *value)
{
	OtlpKeyValue *kv = arena_new(&e->a, sizeof(*kv));
	OtlpAnyValue *v = arena_new(&e->a, sizeof(*v));

	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = arena_strdup(&e->a, key);
	v->value_case = ANY_STRING;
	v->string_value = arena_strdup(&e->a, value);
	kv->value = v;
	return kv;
}

static OtlpKeyValue *kv_int(struct enc *e, const char *key, int64_t value)
{
	OtlpKeyValue *kv = arena_new(&e->a, sizeof(*kv));
	OtlpAnyValue *v = arena_new(&e->a, sizeof(*v));

	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = arena_strdup(&e->a, key);
	v->value_case = ANY_INT;
	v->int_value = value;
	kv->value = v;
	return kv;
}

/* The resource of process p: the semantic conventions' attributes, then --label ones. */
static OtlpResource *resource_of(struct enc *e, const struct period_batch *b,
				 const struct period_proc *p)
{
	OtlpResource *r = arena_new(&e->a, sizeof(*r));
	struct ptrs kvs = { NULL, 0, 0 };
	const char *base = path_base(p->info.exe);

	opentelemetry__proto__resource__v1__resource__init(r);
	ptrs_add(&kvs, kv_str(e, "service.name", p->info.service));
	ptrs_add(&kvs, kv_str(e, "host.name", b->host));
	ptrs_add(&kvs, kv_int(e, "process.pid", p->info.pid));
	if (p->info.container[0])
		ptrs_add(&kvs, kv_str(e, "container.id", p->info.container));
	ptrs_add(&kvs, kv_str(e, "process.runtime.name", "cpython"));
	ptrs_add(&kvs, kv_str(e, "process.runtime.version", p->version));
	ptrs_add(&kvs, kv_str(e, "process.runtime.description", "CPython"));
	if (p->info.exe[0]) {
		ptrs_add(&kvs, kv_str(e, "process.executable.path", p->info.exe));
		ptrs_add(&kvs, kv_str(e, "process.executable.name", base));
	}
	if (p->info.build_id[0])
		ptrs_add(&kvs, kv_str(e, "process.executable.build_id.gnu", p->info.build_id));
	for (size_t i = 0; i < b->nextra; i++) {
		const char *eq = strchr(b->extra[i], '=');
		char key[128];

		if (!eq || eq == b->extra[i])
			continue;
		xsnprintf(key, sizeof(key), "%.*s", (int)(eq - b->extra[i]), b->extra[i]);
		ptrs_add(&kvs, kv_str(e, key, eq + 1));
	}
	r->attributes = arena_new(&e->a, kvs.n * sizeof(*r->attributes));
	memcpy(r->attributes, kvs.v, kvs.n * sizeof(*r->attributes));
	r->n_attributes = kvs.n;
	free(kvs.v);
	return r;
}

static OtlpValueType *value_type(struct enc *e, const char *type, const char *unit)
{
	OtlpValueType *vt = arena_new(&e->a, sizeof(*vt));

	opentelemetry__proto__profiles__v1development__value_type__init(vt);
	vt->type_strindex = (int32_t)str_id(e, type);
	vt->unit_strindex = (int32_t)str_id(e, unit);
	return vt;
}

/*
 * A Profile of the period b of sample type (type, count): its time, a new
 * id and the attribute framewalk.mode, room for nattrs attributes in all.
 */
static OtlpProfile *profile_new(struct enc *e, const struct period_batch *b, const char *type,
				size_t nattrs)
{
	OtlpProfile *o = arena_new(&e->a, sizeof(*o));
	uint8_t *id = arena_new(&e->a, 16);

	opentelemetry__proto__profiles__v1development__profile__init(o);
	o->sample_type = value_type(e, type, "count");
	o->time_unix_nano = b->from_ns;
	o->duration_nano = b->until_ns > b->from_ns ? b->until_ns - b->from_ns : 0;
	encode_random_id(id);
	o->profile_id.data = id;
	o->profile_id.len = 16;
	o->attribute_indices = arena_new(&e->a, nattrs * sizeof(int32_t));
	o->attribute_indices[o->n_attribute_indices++] = attr_get(e, "framewalk.mode", b->mode, 0, 0);
	return o;
}

/* Process p's samples as one Profile. */
static OtlpProfile *profile_of(struct enc *e, const struct period_batch *b,
			       const struct period_proc *p)
{
	const struct profile *pr = &p->prof;
	OtlpProfile *o = profile_new(e, b, "samples", 1);
	uint32_t *loc_of = xcalloc(pr->nframes ? pr->nframes : 1, sizeof(*loc_of));
	int32_t (*thread_attrs)[2] = xcalloc(pr->nthreads ? pr->nthreads : 1, sizeof(*thread_attrs));
	uint32_t *frames = NULL;
	size_t frames_alloc = 0;

	o->period_type = value_type(e, profile_mode_type(b->mode), PROFILE_TIME_UNIT);
	o->period = b->rate_hz > 0 ? (int64_t)(1e9 / b->rate_hz + 0.5) : 0;
	o->samples = arena_new(&e->a, (pr->ncounts ? pr->ncounts : 1) * sizeof(*o->samples));
	for (size_t i = 0; i < pr->ncounts; i++) {
		const struct pf_count *c = &pr->counts[i];
		const struct pf_thread *t = &pr->threads[c->thread];
		size_t depth = c->node < pr->nnodes ? pr->nodes[c->node].depth : 0;
		OtlpSample *s = arena_new(&e->a, sizeof(*s));
		const struct pf_label *labels;
		size_t nl;

		frames = xgrow(frames, sizeof(*frames), depth + 1, &frames_alloc);
		depth = profile_node_frames(pr, c->node, frames, depth);
		for (size_t k = 0; k < depth; k++) {
			if (!loc_of[frames[k]])
				loc_of[frames[k]] = location_get(e, pr, frames[k]);
			frames[k] = loc_of[frames[k]];
		}
		if (!thread_attrs[c->thread][0]) {
			thread_attrs[c->thread][0] = attr_get(e, "thread.id", NULL, t->tid, 1);
			thread_attrs[c->thread][1] = attr_get(e, "thread.name",
							      profile_str(pr, t->name), 0, 0);
		}
		nl = profile_labelset(pr, c->labels, &labels);
		opentelemetry__proto__profiles__v1development__sample__init(s);
		s->stack_index = stack_get(e, profile_stack(&e->st, frames, depth));
		s->attribute_indices = arena_new(&e->a, (2 + nl) * sizeof(int32_t));
		s->attribute_indices[0] = thread_attrs[c->thread][0];
		s->attribute_indices[1] = thread_attrs[c->thread][1];
		s->n_attribute_indices = 2;
		/* --context-label values: one string attribute each, the label's name its key */
		for (size_t k = 0; k < nl; k++)
			s->attribute_indices[s->n_attribute_indices++] =
				attr_get(e, profile_str(pr, labels[k].key),
					 profile_str(pr, labels[k].value), 0, 0);
		s->values = arena_new(&e->a, sizeof(int64_t));
		s->values[0] = c->count > INT64_MAX ? INT64_MAX : (int64_t)c->count;
		s->n_values = 1;
		o->samples[o->n_samples++] = s;
	}
	free(frames);
	free(thread_attrs);
	free(loc_of);
	return o;
}

/*
 * Process p's exact call counts (--count-calls) as a second Profile of
 * sample type calls/count: one sample per counted code object, its stack
 * the one Python frame naming the function (its first line), its value the
 * entries, a generator's resumes the sample's int attribute
 * framewalk.resumes; the counting's note an attribute of the profile.
 * NULL when the period has no counts.
 */
static OtlpProfile *calls_profile_of(struct enc *e, const struct period_batch *b,
				     const struct period_proc *p)
{
	const struct profile *pr = &p->prof;
	OtlpProfile *o;

	if (!pr->ncalls)
		return NULL;
	o = profile_new(e, b, "calls", 2);
	if (pr->meta.calls_note)
		o->attribute_indices[o->n_attribute_indices++] =
			attr_get(e, "framewalk.calls_note", pr->meta.calls_note, 0, 0);
	o->samples = arena_new(&e->a, pr->ncalls * sizeof(*o->samples));
	for (size_t i = 0; i < pr->ncalls; i++) {
		const struct pf_calls *c = &pr->calls[i];
		OtlpSample *s = arena_new(&e->a, sizeof(*s));
		uint32_t loc = location_get(e, pr, c->frame);

		opentelemetry__proto__profiles__v1development__sample__init(s);
		s->stack_index = stack_get(e, profile_stack(&e->st, &loc, 1));
		if (c->resumes) {
			s->attribute_indices = arena_new(&e->a, sizeof(int32_t));
			s->attribute_indices[0] = attr_get(e, "framewalk.resumes", NULL,
							   c->resumes > INT64_MAX ? INT64_MAX :
							   (int64_t)c->resumes, 1);
			s->n_attribute_indices = 1;
		}
		s->values = arena_new(&e->a, sizeof(int64_t));
		s->values[0] = c->starts > INT64_MAX ? INT64_MAX : (int64_t)c->starts;
		s->n_values = 1;
		o->samples[o->n_samples++] = s;
	}
	return o;
}

/* Index 0 of every table: the zero value. */
static void add_zero_entries(struct enc *e)
{
	OtlpMapping *m = arena_new(&e->a, sizeof(*m));
	OtlpLocation *l = arena_new(&e->a, sizeof(*l));
	OtlpFunction *f = arena_new(&e->a, sizeof(*f));
	OtlpAttr *a = arena_new(&e->a, sizeof(*a));
	OtlpStack *s = arena_new(&e->a, sizeof(*s));

	opentelemetry__proto__profiles__v1development__mapping__init(m);
	opentelemetry__proto__profiles__v1development__location__init(l);
	opentelemetry__proto__profiles__v1development__function__init(f);
	opentelemetry__proto__profiles__v1development__key_value_and_unit__init(a);
	opentelemetry__proto__profiles__v1development__stack__init(s);
	ptrs_add(&e->maps, m);
	e->map_file = xgrow(e->map_file, sizeof(*e->map_file), 1, &e->map_alloc);
	e->map_bid = xgrow(e->map_bid, sizeof(*e->map_bid), 1, &e->map_alloc2);
	e->map_file[0] = e->map_bid[0] = UINT32_MAX;
	ptrs_add(&e->locs, l);
	ptrs_add(&e->funcs, f);
	e->attr_keys = xgrow(e->attr_keys, sizeof(*e->attr_keys), 1, &e->attr_keys_alloc);
	memset(&e->attr_keys[0], 0xff, sizeof(e->attr_keys[0]));
	ptrs_add(&e->attrs, a);
	ptrs_add(&e->stacks, s);
}

static void enc_release(struct enc *e)
{
	arena_release(&e->a);
	profile_release(&e->st);
	profile_release(&e->fn);
	profile_release(&e->vals);
	free(e->maps.v);
	free(e->locs.v);
	free(e->funcs.v);
	free(e->attrs.v);
	free(e->stacks.v);
	free(e->map_file);
	free(e->map_bid);
	free(e->attr_keys);
	hidx_release(&e->attr_index);
	free(e->node_stack);
}

int otlp_encode(const struct period_batch *b, struct strbuf *out)
{
	OtlpRequest req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	OtlpDict dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	OtlpLink zero_link = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;
	OtlpLink *links[1] = { &zero_link };
	uint8_t zero_trace[16] = { 0 }, zero_span[8] = { 0 };
	OtlpScope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	struct enc e;
	size_t len;
	uint8_t *packed;

	memset(&e, 0, sizeof(e));
	profile_init(&e.st);
	profile_init(&e.fn);
	profile_init(&e.vals);
	add_zero_entries(&e);
	e.attr_frame_type[FRAME_PYTHON] = attr_get(&e, "profile.frame.type", "cpython", 0, 0);
	e.attr_frame_type[FRAME_NATIVE] = attr_get(&e, "profile.frame.type", "native", 0, 0);
	e.attr_frame_type[FRAME_KERNEL] = attr_get(&e, "profile.frame.type", "kernel", 0, 0);
	scope.name = (char *)"framewalk";
	scope.version = (char *)(b->agent_version ? b->agent_version : "");
	req.resource_profiles = arena_new(&e.a, (b->n ? b->n : 1) * sizeof(*req.resource_profiles));
	for (size_t i = 0; i < b->n; i++) {
		OtlpResourceProfiles *rp = arena_new(&e.a, sizeof(*rp));
		OtlpScopeProfiles *sp = arena_new(&e.a, sizeof(*sp));
		OtlpProfile *calls;

		opentelemetry__proto__profiles__v1development__resource_profiles__init(rp);
		opentelemetry__proto__profiles__v1development__scope_profiles__init(sp);
		rp->resource = resource_of(&e, b, &b->procs[i]);
		sp->scope = &scope;
		sp->profiles = arena_new(&e.a, 2 * sizeof(*sp->profiles));
		sp->profiles[sp->n_profiles++] = profile_of(&e, b, &b->procs[i]);
		calls = calls_profile_of(&e, b, &b->procs[i]);
		if (calls)
			sp->profiles[sp->n_profiles++] = calls;
		rp->scope_profiles = arena_new(&e.a, sizeof(*rp->scope_profiles));
		rp->scope_profiles[0] = sp;
		rp->n_scope_profiles = 1;
		req.resource_profiles[req.n_resource_profiles++] = rp;
	}
	zero_link.trace_id.data = zero_trace;
	zero_link.trace_id.len = sizeof(zero_trace);
	zero_link.span_id.data = zero_span;
	zero_link.span_id.len = sizeof(zero_span);
	dict.n_mapping_table = e.maps.n;
	dict.mapping_table = (OtlpMapping **)e.maps.v;
	dict.n_location_table = e.locs.n;
	dict.location_table = (OtlpLocation **)e.locs.v;
	dict.n_function_table = e.funcs.n;
	dict.function_table = (OtlpFunction **)e.funcs.v;
	dict.n_link_table = 1;
	dict.link_table = links;
	dict.n_attribute_table = e.attrs.n;
	dict.attribute_table = (OtlpAttr **)e.attrs.v;
	dict.n_stack_table = e.stacks.n;
	dict.stack_table = (OtlpStack **)e.stacks.v;
	/* last: nothing is interned after this */
	dict.n_string_table = e.st.nstrings;
	dict.string_table = e.st.strings;
	req.dictionary = &dict;
	len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(&req);
	packed = xmalloc(len ? len : 1);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&req, packed);
	strbuf_add(out, packed, len);
	free(packed);
	enc_release(&e);
	return 0;
}

void encode_random_id(uint8_t out[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(out + got, 16 - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < 16) {
		/* no getrandom (an old kernel): time and address bits, unique enough for an id */
		uint64_t t = fw_now_ns() ^ (uint64_t)(uintptr_t)out;

		for (size_t i = got; i < 16; i++) {
			t = t * 6364136223846793005ull + 1442695040888963407ull;
			out[i] = (uint8_t)(t >> 56);
		}
	}
}
