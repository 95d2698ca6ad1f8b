/*
 * The saved format: pprof, a gzip'd perftools.profiles.Profile (the
 * profile.proto of google/pprof, compiled by protoc-c), read by `go tool
 * pprof`, Pyroscope, Grafana and by `framewalk report`. The conventions
 * (labels, frame kind by mapping, metadata comments) are in output/pprof.h.
 *
 * Every distinct frame becomes one Location (id = the frame id), every
 * distinct (kind, name, file) one Function, every (thread, stack) count one
 * Sample whose location ids run leaf first, the order of the prefix tree's
 * parent chain; each thread also gets a weightless thread record.
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

#define NLABELS 3           /* on a sample: thread id, process id, thread name */
#define NRECORD_LABELS 9    /* on a thread record: those, the accounting, drops */

struct pp_writer {
	const struct profile *p;
	/* Interning reuses the profile tables: strings are the string table,
	 * frames keyed (kind, name, file, line 0) are the functions. */
	struct profile st;
	PbMapping *mappings;
	size_t nmappings, mappings_alloc;
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

static void comment_add(struct pp_writer *w, int64_t **ids, size_t *n, size_t *alloc,
			const char *key, const char *value)
{
	struct strbuf sb = STRBUF_INIT;

	if (!value)
		return;
	strbuf_addf(&sb, "%s: %s", key, value);
	*ids = xgrow(*ids, sizeof(**ids), *n + 1, alloc);
	(*ids)[(*n)++] = str_id(w, strbuf_str(&sb));
	strbuf_release(&sb);
}

static void comment_u64(struct pp_writer *w, int64_t **ids, size_t *n, size_t *alloc,
			const char *key, uint64_t v)
{
	char b[32];

	xsnprintf(b, sizeof(b), "%" PRIu64, v);
	comment_add(w, ids, n, alloc, key, b);
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

int output_pprof(const struct profile *p, FILE *f, const struct output_opts *o)
{
	const struct profile_meta *m = &p->meta;
	struct pp_writer w;
	PbProfile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType types[2], *type_ptrs[2], period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PbSample *samples, **sample_ptrs;
	PbLabel *labels, **label_ptrs;
	PbLocation *locs, **loc_ptrs;
	PbLine *lines, **line_ptrs;
	PbFunction *funcs = NULL, **func_ptrs = NULL;
	PbMapping **mapping_ptrs;
	uint64_t *loc_ids, *loc_of_frame;
	int64_t *values, *comments = NULL;
	size_t ncomments = 0, comments_alloc = 0, nsamples = 0, nlocs = 0, total_depth = 0;
	size_t nlabels = 0, nids = 0;
	int64_t period = 0;
	size_t nvalues;
	uint8_t *packed;
	size_t packed_len;
	char b[64];
	int ret;

	memset(&w, 0, sizeof(w));
	w.p = p;
	profile_init(&w.st);
	/* a rate from a file can be anything: only a sane one gives a period */
	if (m->rate_hz >= 0.001 && m->rate_hz <= 1e9)
		period = (int64_t)(1e9 / m->rate_hz + 0.5);

	/* sample types */
	for (int i = 0; i < 2; i++)
		perftools__profiles__value_type__init(&types[i]);
	types[0].type = str_id(&w, PPROF_TYPE_SAMPLES);
	types[0].unit = str_id(&w, "count");
	types[1].type = str_id(&w, m->mode && !strcmp(m->mode, "cpu") ? PPROF_TYPE_CPU
								       : PPROF_TYPE_WALL);
	types[1].unit = str_id(&w, "nanoseconds");
	type_ptrs[0] = &types[0];
	type_ptrs[1] = &types[1];
	nvalues = period ? 2 : 1;
	msg.n_sample_type = nvalues;
	msg.sample_type = type_ptrs;
	if (period) {
		period_type.type = types[1].type;
		period_type.unit = types[1].unit;
		msg.period_type = &period_type;
		msg.period = period;
	}

	/* which frames are used, and how many location ids the samples need */
	loc_of_frame = xcalloc(p->nframes ? p->nframes : 1, sizeof(*loc_of_frame));
	for (size_t i = 0; i < p->nthreads; i++)
		if (!o || thread_matches(p, (uint32_t)i, o->thread))
			nsamples++;   /* its thread record */
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];

		if (o && !thread_matches(p, c->thread, o->thread))
			continue;
		nsamples++;
		for (uint32_t n = c->node; n && n < p->nnodes; n = p->nodes[n].parent) {
			loc_of_frame[p->nodes[n].frame] = 1;
			total_depth++;
		}
	}

	/* locations and functions */
	locs = xcalloc(p->nframes ? p->nframes : 1, sizeof(*locs));
	loc_ptrs = xcalloc(p->nframes ? p->nframes : 1, sizeof(*loc_ptrs));
	lines = xcalloc(p->nframes ? p->nframes : 1, sizeof(*lines));
	line_ptrs = xcalloc(p->nframes ? p->nframes : 1, sizeof(*line_ptrs));
	for (size_t fi = 1; fi < p->nframes; fi++) {
		const struct pf_frame *fr = &p->frames[fi];
		PbLocation *l = &locs[nlocs];
		PbLine *ln = &lines[nlocs];
		uint32_t name, file;

		if (!loc_of_frame[fi])
			continue;
		name = profile_cstring(&w.st, profile_str(p, fr->name));
		file = fr->file ? profile_cstring(&w.st, profile_str(p, fr->file)) : 0;
		perftools__profiles__location__init(l);
		perftools__profiles__line__init(ln);
		l->id = fi;
		l->mapping_id = frame_mapping(&w, fr);
		ln->function_id = profile_frame(&w.st, (enum frame_kind)fr->kind, name, file, 0);
		ln->line = fr->line > 0 ? fr->line : 0;
		line_ptrs[nlocs] = ln;
		l->n_line = 1;
		l->line = &line_ptrs[nlocs];
		loc_ptrs[nlocs] = l;
		nlocs++;
	}
	if (w.st.nframes > 1) {
		funcs = xcalloc(w.st.nframes - 1, sizeof(*funcs));
		func_ptrs = xcalloc(w.st.nframes - 1, sizeof(*func_ptrs));
	}
	for (size_t fi = 1; fi < w.st.nframes; fi++) {
		PbFunction *fn = &funcs[fi - 1];

		perftools__profiles__function__init(fn);
		fn->id = fi;
		fn->name = w.st.frames[fi].name;
		/* pprof "demangles" a name whose system_name equals it, and takes
		 * <module> or <genexpr> for C++ template arguments to strip; only
		 * native names are symbols. */
		if (w.st.frames[fi].kind == FRAME_NATIVE)
			fn->system_name = w.st.frames[fi].name;
		fn->filename = w.st.frames[fi].file;
		func_ptrs[fi - 1] = fn;
	}

	/* samples */
	samples = xcalloc(nsamples ? nsamples : 1, sizeof(*samples));
	sample_ptrs = xcalloc(nsamples ? nsamples : 1, sizeof(*sample_ptrs));
	labels = xcalloc(nsamples * NRECORD_LABELS + 1, sizeof(*labels));
	label_ptrs = xcalloc(nsamples * NRECORD_LABELS + 1, sizeof(*label_ptrs));
	values = xcalloc(nsamples * 2 + 1, sizeof(*values));
	loc_ids = xcalloc(total_depth + 1, sizeof(*loc_ids));
	nsamples = 0;
	/* thread records: every thread, in order, with its accounting */
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct pf_thread *t = &p->threads[i];
		PbSample *s = &samples[nsamples];
		size_t first_label = nlabels;

		if (o && !thread_matches(p, (uint32_t)i, o->thread))
			continue;
		perftools__profiles__sample__init(s);
		s->value = &values[nsamples * 2];
		s->n_value = nvalues;
		thread_labels(&w, labels, &nlabels, t);
		label_num(&w, labels, &nlabels, PPROF_LABEL_THREAD_CPU_NS, t->cpu_ns, "nanoseconds");
		label_num(&w, labels, &nlabels, PPROF_LABEL_THREAD_WALL_NS, t->wall_ns,
			  "nanoseconds");
		if (t->dropped)
			label_num(&w, labels, &nlabels, PPROF_LABEL_DROPPED, t->dropped, "count");
		if (t->gil_ticks) {
			label_num(&w, labels, &nlabels, PPROF_LABEL_GIL_HELD, t->gil_held, "ticks");
			label_num(&w, labels, &nlabels, PPROF_LABEL_GIL_WAITING, t->gil_waiting,
				  "ticks");
			label_num(&w, labels, &nlabels, PPROF_LABEL_GIL_TICKS, t->gil_ticks, "ticks");
		}
		for (size_t k = first_label; k < nlabels; k++)
			label_ptrs[k] = &labels[k];
		s->n_label = nlabels - first_label;
		s->label = &label_ptrs[first_label];
		sample_ptrs[nsamples++] = s;
	}
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];
		const struct pf_thread *t = &p->threads[c->thread];
		PbSample *s = &samples[nsamples];
		size_t first_label = nlabels;

		if (o && !thread_matches(p, c->thread, o->thread))
			continue;
		perftools__profiles__sample__init(s);
		s->location_id = &loc_ids[nids];
		for (uint32_t n = c->node; n && n < p->nnodes; n = p->nodes[n].parent)
			loc_ids[nids + s->n_location_id++] = p->nodes[n].frame;
		nids += s->n_location_id;
		s->value = &values[nsamples * 2];
		s->value[0] = c->count > INT64_MAX ? INT64_MAX : (int64_t)c->count;
		s->value[1] = period && c->count > (uint64_t)(INT64_MAX / period) ?
			      INT64_MAX : (int64_t)c->count * period;
		s->n_value = nvalues;
		thread_labels(&w, labels, &nlabels, t);
		for (size_t k = first_label; k < nlabels; k++)
			label_ptrs[k] = &labels[k];
		s->n_label = nlabels - first_label;
		s->label = &label_ptrs[first_label];
		sample_ptrs[nsamples++] = s;
	}

	/* metadata */
	comment_add(&w, &comments, &ncomments, &comments_alloc, "framewalk", "saved profile");
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_TARGET, m->target);
	xsnprintf(b, sizeof(b), "%d", (int)m->pid);
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_PID, b);
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_PYTHON,
		    m->python_version);
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_BACKEND, m->backend);
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_MODE, m->mode);
	xsnprintf(b, sizeof(b), "%.17g", m->rate_hz);
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_RATE, b);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_TICKS_REQUESTED,
		    m->ticks_requested);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_TICKS_TAKEN,
		    m->ticks_taken);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_SAMPLES, m->samples);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_ERRORS, m->errors);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_SAMPLE_NS_TOTAL,
		    m->sample_ns_total);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_SAMPLE_NS_MAX,
		    m->sample_ns_max);
	comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_PROFILER_CPU_NS,
		    m->profiler_cpu_ns);
	if (m->native_stacks) {
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_NATIVE_STACKS,
			    m->native_stacks);
		comment_u64(&w, &comments, &ncomments, &comments_alloc,
			    PPROF_COMMENT_NATIVE_COMPLETE, m->native_complete);
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_STOPPED_NS_TOTAL,
			    m->stopped_ns_total);
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_STOPPED_NS_MAX,
			    m->stopped_ns_max);
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_FP_STEPS,
			    m->fp_steps);
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_CFI_STEPS,
			    m->cfi_steps);
		comment_u64(&w, &comments, &ncomments, &comments_alloc,
			    PPROF_COMMENT_MERGE_MISMATCHES, m->merge_mismatches);
	}
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_UNWIND_BREAKS,
		    m->unwind_breaks);
	if (m->lost)
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_LOST, m->lost);
	if (m->modules_loaded || m->modules_reused) {
		comment_u64(&w, &comments, &ncomments, &comments_alloc,
			    PPROF_COMMENT_MODULES_LOADED, m->modules_loaded);
		comment_u64(&w, &comments, &ncomments, &comments_alloc,
			    PPROF_COMMENT_MODULES_REUSED, m->modules_reused);
		comment_u64(&w, &comments, &ncomments, &comments_alloc,
			    PPROF_COMMENT_MODULES_REFRESHES, m->modules_refreshes);
	}
	comment_add(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_MODULES_UNREADABLE,
		    m->modules_unreadable);
	if (m->bpf_run_cnt) {
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_BPF_RUN_NS,
			    m->bpf_run_ns);
		comment_u64(&w, &comments, &ncomments, &comments_alloc, PPROF_COMMENT_BPF_RUN_CNT,
			    m->bpf_run_cnt);
	}

	mapping_ptrs = xcalloc(w.nmappings + 1, sizeof(*mapping_ptrs));
	for (size_t i = 0; i < w.nmappings; i++)
		mapping_ptrs[i] = &w.mappings[i];
	msg.n_sample = nsamples;
	msg.sample = sample_ptrs;
	msg.n_mapping = w.nmappings;
	msg.mapping = mapping_ptrs;
	msg.n_location = nlocs;
	msg.location = loc_ptrs;
	msg.n_function = w.st.nframes - 1;
	msg.function = func_ptrs;
	msg.n_string_table = w.st.nstrings;   /* interned last: nothing added below */
	msg.string_table = w.st.strings;
	msg.time_nanos = (int64_t)m->start_unix_ns;
	msg.duration_nanos = (int64_t)m->duration_ns;
	msg.n_comment = ncomments;
	msg.comment = comments;

	packed_len = perftools__profiles__profile__get_packed_size(&msg);
	packed = xmalloc(packed_len ? packed_len : 1);
	perftools__profiles__profile__pack(&msg, packed);
	ret = write_gzip(f, packed, packed_len);
	if (!ret && fflush(f))
		ret = -EIO;

	free(packed);
	free(comments);
	free(loc_ids);
	free(values);
	free(label_ptrs);
	free(labels);
	free(sample_ptrs);
	free(samples);
	free(func_ptrs);
	free(funcs);
	free(line_ptrs);
	free(lines);
	free(loc_ptrs);
	free(locs);
	free(loc_of_frame);
	free(mapping_ptrs);
	free(w.mappings);
	profile_release(&w.st);
	return ret;
}
