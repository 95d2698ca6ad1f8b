/*
 * The saved format: pprof, a gzip'd perftools.profiles.Profile (the
 * profile.proto of google/pprof, compiled by protoc-c), read by `go tool
 * pprof`, Pyroscope, Grafana and by `framewalk report`. The conventions
 * (labels, frame kind by mapping, metadata comments) are in output/pprof.h.
 *
 * Every distinct frame becomes one Location (id = the frame id), every
 * distinct (kind, name, file) one Function, every (thread, stack, labels)
 * count one Sample whose location ids run leaf first, the order of the
 * prefix tree's parent chain, with its thread's labels and its own (--label);
 * each thread also gets a weightless thread record.
 */
#include <errno.h>
#include <inttypes.h>
#include <zlib.h>

#include "output/format.h"
#include "output/output.h"
#include "output/pprof.h"
#include "profile.pb-c.h"
#include "util/strbuf.h"
#include "util/util.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__ValueType PbValueType;

#define NLABELS 5           /* on a sample: thread id, process id, thread name, kernel name, exec */
#define NRECORD_LABELS 11   /* on a thread record: those, the accounting, drops */

/*
 * One profile being written. Interning reuses the profile tables: strings
 * are the string table, frames keyed (kind, name, file, line 0) are the
 * functions. Every array below belongs to the message and is freed with it.
 */
struct pp_writer {
	const struct profile *p;
	const struct output_opts *o;
	struct profile st;
	PbProfile msg;
	PbValueType types[3], *type_ptrs[3], period_type;
	int64_t period;             /* ns per sample; 0: rate unknown */
	size_t nvalues;             /* values per sample: count, time with a period, calls */
	size_t calls_index;         /* the calls value (0: no calls type) */
	PbMapping *mappings, **mapping_ptrs;
	size_t nmappings, mappings_alloc;
	PbLocation *locs, **loc_ptrs;
	PbLine *lines, **line_ptrs;
	size_t nlocs;
	PbFunction *funcs, **func_ptrs;
	PbSample *samples, **sample_ptrs;
	size_t nsamples;
	PbLabel *labels, **label_ptrs;
	size_t nlabels;
	int64_t *values;
	uint64_t *loc_ids;
	size_t nids;
	int64_t *comments;
	size_t ncomments, comments_alloc;
};

static int64_t str_id(struct pp_writer *w, const char *s)
{
	return (int64_t)profile_cstring(&w->st, s);
}

/*
 * The mapping for (filename, build_id), created on first use. Python, kernel
 * and marker frames each share one synthetic mapping; native frames get their
 * module's (path and GNU build id), so pprof tools can tell libraries apart.
 */
static uint64_t mapping_get(struct pp_writer *w, const char *filename, const char *build_id,
			    int symbolized)
{
	int64_t file = str_id(w, filename), bid = str_id(w, build_id ? build_id : "");
	PbMapping *m;

	for (size_t i = 0; i < w->nmappings; i++)
		if (w->mappings[i].filename == file && w->mappings[i].build_id == bid)
			return w->mappings[i].id;
	w->mappings = xgrow(w->mappings, sizeof(*w->mappings), w->nmappings + 1,
			    &w->mappings_alloc);
	m = &w->mappings[w->nmappings];
	perftools__profiles__mapping__init(m);
	m->id = w->nmappings + 1;
	m->filename = file;
	m->build_id = bid;
	m->has_functions = symbolized;
	m->has_filenames = symbolized;
	m->has_line_numbers = symbolized;
	w->nmappings++;
	return m->id;
}

static uint64_t frame_mapping(struct pp_writer *w, const struct pf_frame *f)
{
	switch ((enum frame_kind)f->kind) {
	case FRAME_PYTHON:
		return mapping_get(w, PPROF_MAPPING_PYTHON, NULL, 1);
	case FRAME_KERNEL:
		return mapping_get(w, PPROF_MAPPING_KERNEL, NULL, 1);
	case FRAME_NATIVE:
		if (f->module)
			return mapping_get(w, profile_str(w->p, f->module),
					   f->build_id ? profile_str(w->p, f->build_id) : NULL, 1);
		return mapping_get(w, PPROF_MAPPING_NATIVE, NULL, 1);
	case FRAME_OTHER:
	default:
		return mapping_get(w, PPROF_MAPPING_OTHER, NULL, 1);
	}
}

/* One metadata comment, "key: value" (pprof_meta_write's callback). */
static void comment_add(void *ctx, const char *key, const char *value)
{
	struct pp_writer *w = ctx;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s: %s", key, value);
	w->comments = xgrow(w->comments, sizeof(*w->comments), w->ncomments + 1,
			    &w->comments_alloc);
	w->comments[w->ncomments++] = str_id(w, strbuf_str(&sb));
	strbuf_release(&sb);
}

static PbLabel *label_add(PbLabel *labels, size_t *n, int64_t key)
{
	PbLabel *l = &labels[(*n)++];

	perftools__profiles__label__init(l);
	l->key = key;
	return l;
}

static void label_num(struct pp_writer *w, PbLabel *labels, size_t *n, const char *key,
		      uint64_t v, const char *unit)
{
	PbLabel *l = label_add(labels, n, str_id(w, key));

	l->num = v > INT64_MAX ? INT64_MAX : (int64_t)v;
	l->num_unit = str_id(w, unit);
}

/* The labels every sample of thread t carries. */
static void thread_labels(struct pp_writer *w, PbLabel *labels, size_t *n,
			  const struct pf_thread *t)
{
	label_add(labels, n, str_id(w, PPROF_LABEL_THREAD_ID))->num = t->tid;
	label_add(labels, n, str_id(w, PPROF_LABEL_PROCESS_ID))->num = t->pid;
	if (*profile_str(w->p, t->name))
		label_add(labels, n, str_id(w, PPROF_LABEL_THREAD_NAME))->str =
			str_id(w, profile_str(w->p, t->name));
	if (t->comm)
		label_add(labels, n, str_id(w, PPROF_LABEL_THREAD_COMM))->str =
			str_id(w, profile_str(w->p, t->comm));
	if (t->generation)
		label_add(labels, n, str_id(w, PPROF_LABEL_EXEC))->num = t->generation;
}

/* The labels the sample itself carries (--label): string labels, as pprof's tag filters take them. */
static void sample_labels(struct pp_writer *w, uint32_t set)
{
	const struct pf_label *l;
	size_t n = profile_labelset(w->p, set, &l);

	for (size_t i = 0; i < n; i++)
		label_add(w->labels, &w->nlabels, str_id(w, profile_str(w->p, l[i].key)))->str =
			str_id(w, profile_str(w->p, l[i].value));
}

/* gzip data and write it to f; 0 or -errno. */
static int write_gzip(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z;
	uint8_t *out;
	size_t bound;
	int ret = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)len) + 64;
	out = xmalloc(bound);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)bound;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		ret = -EIO;
	else if (fwrite(out, 1, z.total_out, f) != z.total_out)
		ret = -EIO;
	deflateEnd(&z);
	free(out);
	return ret;
}

static int wanted(const struct pp_writer *w, uint32_t thread)
{
	return !w->o || thread_matches(w->p, thread, w->o->thread);
}

/* Sample types: the count, then time (cpu or wall) when the rate gives a period. */
static void write_sample_types(struct pp_writer *w)
{
	const struct profile_meta *m = &w->p->meta;

	if (profile_rate_known(m))
		w->period = (int64_t)(1e9 / m->rate_hz + 0.5);
	for (int i = 0; i < 3; i++) {
		perftools__profiles__value_type__init(&w->types[i]);
		w->type_ptrs[i] = &w->types[i];
	}
	w->types[0].type = str_id(w, PPROF_TYPE_SAMPLES);
	w->types[0].unit = str_id(w, "count");
	w->types[1].type = str_id(w, profile_mode_type(m->mode));
	w->types[1].unit = str_id(w, PROFILE_TIME_UNIT);
	w->nvalues = w->period ? 2 : 1;
	if (w->p->ncalls) {
		/* calls last, the default staying what it was (the last type before) */
		w->msg.default_sample_type = w->types[w->nvalues - 1].type;
		w->calls_index = w->nvalues++;
		w->types[w->calls_index].type = str_id(w, PPROF_TYPE_CALLS);
		w->types[w->calls_index].unit = str_id(w, "count");
	}
	w->msg.n_sample_type = w->nvalues;
	w->msg.sample_type = w->type_ptrs;
	if (w->period) {
		perftools__profiles__value_type__init(&w->period_type);
		w->period_type.type = w->types[1].type;
		w->period_type.unit = w->types[1].unit;
		w->msg.period_type = &w->period_type;
		w->msg.period = w->period;
	}
}

/*
 * One Location per frame the written samples use (id = the frame id), each
 * with one Line of the frame's Function; then the Functions.
 */
static void write_locations(struct pp_writer *w, const uint8_t *used)
{
	const struct profile *p = w->p;
	size_t n = p->nframes ? p->nframes : 1;

	w->locs = xcalloc(n, sizeof(*w->locs));
	w->loc_ptrs = xcalloc(n, sizeof(*w->loc_ptrs));
	w->lines = xcalloc(n, sizeof(*w->lines));
	w->line_ptrs = xcalloc(n, sizeof(*w->line_ptrs));
	for (size_t fi = 1; fi < p->nframes; fi++) {
		const struct pf_frame *fr = &p->frames[fi];
		PbLocation *l = &w->locs[w->nlocs];
		PbLine *ln = &w->lines[w->nlocs];
		uint32_t name, file;

		if (!used[fi])
			continue;
		name = profile_cstring(&w->st, profile_str(p, fr->name));
		file = fr->file ? profile_cstring(&w->st, profile_str(p, fr->file)) : 0;
		perftools__profiles__location__init(l);
		perftools__profiles__line__init(ln);
		l->id = fi;
		l->mapping_id = frame_mapping(w, fr);
		ln->function_id = profile_frame(&w->st, (enum frame_kind)fr->kind, name, file, 0);
		if (fr->system_name)
			profile_frame_set_system_name(&w->st, (uint32_t)ln->function_id,
				profile_cstring(&w->st, profile_str(p, fr->system_name)));
		ln->line = fr->line > 0 ? fr->line : 0;
		w->line_ptrs[w->nlocs] = ln;
		l->n_line = 1;
		l->line = &w->line_ptrs[w->nlocs];
		w->loc_ptrs[w->nlocs] = l;
		w->nlocs++;
	}
	w->msg.n_location = w->nlocs;
	w->msg.location = w->loc_ptrs;
}

static void write_functions(struct pp_writer *w)
{
	const struct profile *st = &w->st;

	if (st->nframes > 1) {
		w->funcs = xcalloc(st->nframes - 1, sizeof(*w->funcs));
		w->func_ptrs = xcalloc(st->nframes - 1, sizeof(*w->func_ptrs));
	}
	for (size_t fi = 1; fi < st->nframes; fi++) {
		PbFunction *fn = &w->funcs[fi - 1];

		perftools__profiles__function__init(fn);
		fn->id = fi;
		fn->name = st->frames[fi].name;
		/* pprof "demangles" a name whose system_name equals it, and takes
		 * <module> or <genexpr> for C++ template arguments to strip; only
		 * native names are symbols: the name in the file where framewalk
		 * demangled it (elf/demangle.h), else the name. */
		if (st->frames[fi].kind == FRAME_NATIVE)
			fn->system_name = st->frames[fi].system_name ? st->frames[fi].system_name :
					  st->frames[fi].name;
		fn->filename = st->frames[fi].file;
		w->func_ptrs[fi - 1] = fn;
	}
	w->msg.n_function = st->nframes - 1;
	w->msg.function = w->func_ptrs;
}

/* The next sample, its values and labels pointing into the writer's arrays. */
static PbSample *sample_begin(struct pp_writer *w, size_t *first_label)
{
	PbSample *s = &w->samples[w->nsamples];

	perftools__profiles__sample__init(s);
	s->value = &w->values[w->nsamples * 3];
	s->n_value = w->nvalues;
	*first_label = w->nlabels;
	return s;
}

static void sample_end(struct pp_writer *w, PbSample *s, size_t first_label)
{
	for (size_t k = first_label; k < w->nlabels; k++)
		w->label_ptrs[k] = &w->labels[k];
	s->n_label = w->nlabels - first_label;
	s->label = &w->label_ptrs[first_label];
	w->sample_ptrs[w->nsamples++] = s;
}

/* Thread records (output/pprof.h): every thread, in order, with its accounting. */
static void write_thread_records(struct pp_writer *w)
{
	for (size_t i = 0; i < w->p->nthreads; i++) {
		const struct pf_thread *t = &w->p->threads[i];
		size_t first;
		PbSample *s;

		if (!wanted(w, (uint32_t)i))
			continue;
		s = sample_begin(w, &first);
		thread_labels(w, w->labels, &w->nlabels, t);
		label_num(w, w->labels, &w->nlabels, PPROF_LABEL_THREAD_CPU_NS, t->cpu_ns,
			  PROFILE_TIME_UNIT);
		label_num(w, w->labels, &w->nlabels, PPROF_LABEL_THREAD_WALL_NS, t->wall_ns,
			  PROFILE_TIME_UNIT);
		if (t->dropped)
			label_num(w, w->labels, &w->nlabels, PPROF_LABEL_DROPPED, t->dropped, "count");
		if (t->gil_ticks) {
			label_num(w, w->labels, &w->nlabels, PPROF_LABEL_GIL_HELD, t->gil_held, "ticks");
			label_num(w, w->labels, &w->nlabels, PPROF_LABEL_GIL_WAITING, t->gil_waiting,
				  "ticks");
			label_num(w, w->labels, &w->nlabels, PPROF_LABEL_GIL_TICKS, t->gil_ticks,
				  "ticks");
		}
		sample_end(w, s, first);
	}
}

/* One Sample per (thread, stack) count; location ids run leaf first. */
static void write_counts(struct pp_writer *w)
{
	const struct profile *p = w->p;

	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		size_t first;
		PbSample *s;

		if (!wanted(w, c->thread))
			continue;
		s = sample_begin(w, &first);
		s->location_id = &w->loc_ids[w->nids];
		for (uint32_t n = c->node; n && n < p->nnodes; n = p->nodes[n].parent)
			w->loc_ids[w->nids + s->n_location_id++] = p->nodes[n].frame;
		w->nids += s->n_location_id;
		s->value[0] = c->count > INT64_MAX ? INT64_MAX : (int64_t)c->count;
		s->value[1] = w->period && c->count > (uint64_t)(INT64_MAX / w->period) ?
			      INT64_MAX : (int64_t)c->count * w->period;
		thread_labels(w, w->labels, &w->nlabels, &p->threads[c->thread]);
		sample_labels(w, c->labels);
		sample_end(w, s, first);
	}
}

/* The exact call counts, one sample per code object (output/pprof.h). */
static void write_calls(struct pp_writer *w)
{
	const struct profile *p = w->p;

	if (!w->calls_index)
		return;
	for (size_t i = 0; i < p->ncalls; i++) {
		const struct pf_calls *c = &p->calls[i];
		size_t first;
		PbSample *s = sample_begin(w, &first);

		s->location_id = &w->loc_ids[w->nids];
		w->loc_ids[w->nids] = c->frame;
		s->n_location_id = 1;
		w->nids++;
		s->value[w->calls_index] = c->starts > INT64_MAX ? INT64_MAX : (int64_t)c->starts;
		if (c->resumes)
			label_num(w, w->labels, &w->nlabels, PPROF_LABEL_RESUMES, c->resumes,
				  "count");
		sample_end(w, s, first);
	}
}

/*
 * Which frames the written samples use (used[frame] = 1), and how many
 * samples and location ids there will be; then the samples' arrays.
 */
static void size_samples(struct pp_writer *w, uint8_t *used)
{
	const struct profile *p = w->p;
	size_t nsamples = 0, depth = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		nsamples += wanted(w, (uint32_t)i);   /* its thread record */
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];

		if (!wanted(w, c->thread))
			continue;
		nsamples++;
		for (uint32_t n = c->node; n && n < p->nnodes; n = p->nodes[n].parent) {
			used[p->nodes[n].frame] = 1;
			depth++;
		}
	}
	/* exact call counts: one sample each, on its function's frame */
	if (w->calls_index)
		for (size_t i = 0; i < p->ncalls; i++) {
			nsamples++;
			used[p->calls[i].frame] = 1;
			depth++;
		}
	w->samples = xcalloc(nsamples ? nsamples : 1, sizeof(*w->samples));
	w->sample_ptrs = xcalloc(nsamples ? nsamples : 1, sizeof(*w->sample_ptrs));
	w->labels = xcalloc(nsamples * (NRECORD_LABELS + PROFILE_LABELS_MAX) + 1, sizeof(*w->labels));
	w->label_ptrs = xcalloc(nsamples * (NRECORD_LABELS + PROFILE_LABELS_MAX) + 1,
				sizeof(*w->label_ptrs));
	w->values = xcalloc(nsamples * 3 + 1, sizeof(*w->values));
	w->loc_ids = xcalloc(depth + 1, sizeof(*w->loc_ids));
}

/* Pack the message (its string table last: nothing is interned after) and gzip it to f. */
static int pack(struct pp_writer *w, FILE *f)
{
	const struct profile_meta *m = &w->p->meta;
	uint8_t *packed;
	size_t len;
	int ret;

	w->mapping_ptrs = xcalloc(w->nmappings + 1, sizeof(*w->mapping_ptrs));
	for (size_t i = 0; i < w->nmappings; i++)
		w->mapping_ptrs[i] = &w->mappings[i];
	w->msg.n_sample = w->nsamples;
	w->msg.sample = w->sample_ptrs;
	w->msg.n_mapping = w->nmappings;
	w->msg.mapping = w->mapping_ptrs;
	w->msg.n_string_table = w->st.nstrings;
	w->msg.string_table = w->st.strings;
	w->msg.time_nanos = (int64_t)m->start_unix_ns;
	w->msg.duration_nanos = (int64_t)m->duration_ns;
	w->msg.n_comment = w->ncomments;
	w->msg.comment = w->comments;
	len = perftools__profiles__profile__get_packed_size(&w->msg);
	packed = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&w->msg, packed);
	ret = write_gzip(f, packed, len);
	if (!ret && fflush(f))
		ret = -EIO;
	free(packed);
	return ret;
}

static void writer_release(struct pp_writer *w)
{
	free(w->comments);
	free(w->loc_ids);
	free(w->values);
	free(w->label_ptrs);
	free(w->labels);
	free(w->sample_ptrs);
	free(w->samples);
	free(w->func_ptrs);
	free(w->funcs);
	free(w->line_ptrs);
	free(w->lines);
	free(w->loc_ptrs);
	free(w->locs);
	free(w->mapping_ptrs);
	free(w->mappings);
	profile_release(&w->st);
}

int output_pprof(const struct profile *p, FILE *f, const struct output_opts *o)
{
	struct pp_writer w;
	uint8_t *used = xcalloc(p->nframes ? p->nframes : 1, 1);
	int ret;

	memset(&w, 0, sizeof(w));
	perftools__profiles__profile__init(&w.msg);
	w.p = p;
	w.o = o;
	profile_init(&w.st);
	write_sample_types(&w);
	size_samples(&w, used);
	write_locations(&w, used);
	write_functions(&w);
	write_thread_records(&w);
	write_counts(&w);
	write_calls(&w);
	pprof_meta_write(&p->meta, comment_add, &w);
	ret = pack(&w, f);
	writer_release(&w);
	free(used);
	return ret;
}
