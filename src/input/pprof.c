/*
 * Reader of pprof profiles (a serialized perftools.profiles.Profile, which
 * load.c has already un-gzipped):
 * framewalk's own, with the conventions of output/pprof.h, and other tools'
 * (Go, pprof-format, py-spy...), read as well as their content allows.
 *
 * Decoding is protobuf-c's, which checks every length against the buffer;
 * inflating stops at LOAD_MAX_INFLATED. Every index and id the message holds
 * is checked here before use, so a hostile file yields an error, not a read
 * out of bounds.
 */
#include <errno.h>
#include <math.h>
#include <zlib.h>

#include "input/load.h"
#include "input/readers.h"
#include "output/pprof.h"
#include "profile.pb-c.h"
#include "util/util.h"

typedef Perftools__Profiles__Profile PbProfile;

/* Budget of frames over all samples, so inlined lines cannot multiply work. */
#define MAX_TOTAL_FRAMES (1u << 27)

int inflate_gzip(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
		 struct strbuf *err)
{
	z_stream z;
	unsigned char *buf = NULL;
	size_t alloc = 0;
	int zr = Z_OK;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		strbuf_addstr(err, "cannot initialise zlib");
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	for (;;) {
		if (z.total_out == alloc) {
			if (alloc >= LOAD_MAX_INFLATED) {
				inflateEnd(&z);
				free(buf);
				strbuf_addf(err, "gzip data expands past the %u MiB limit",
					    LOAD_MAX_INFLATED >> 20);
				return -EFBIG;
			}
			alloc = alloc ? alloc * 2 : (len < 16384 ? 65536 : len * 4);
			if (alloc > LOAD_MAX_INFLATED)
				alloc = LOAD_MAX_INFLATED;
			buf = xrealloc(buf, alloc);
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(alloc - z.total_out);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_BUF_ERROR && z.avail_in == 0) {
			zr = Z_DATA_ERROR;
			break;   /* input ended inside the stream */
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			break;
	}
	if (zr != Z_STREAM_END) {
		int truncated = z.avail_in == 0;

		inflateEnd(&z);
		free(buf);
		strbuf_addstr(err, truncated ? "truncated gzip data" : "corrupt gzip data");
		return -EINVAL;
	}
	*outlen = z.total_out;
	*out = buf;
	inflateEnd(&z);
	return 0;
}

struct id_index {
	uint64_t id;
	size_t index;
};

static int cmp_id(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorted (id, index) pairs; -EINVAL on a zero or duplicate id. */
static int build_index(struct id_index **out, size_t n, uint64_t (*id_of)(const PbProfile *, size_t),
		       const PbProfile *pb)
{
	struct id_index *ix = xcalloc(n ? n : 1, sizeof(*ix));

	for (size_t i = 0; i < n; i++) {
		ix[i].id = id_of(pb, i);
		ix[i].index = i;
	}
	sort_array(ix, n, sizeof(*ix), cmp_id);
	for (size_t i = 0; i < n; i++) {
		if (ix[i].id == 0 || (i && ix[i].id == ix[i - 1].id)) {
			free(ix);
			return -EINVAL;
		}
	}
	*out = ix;
	return 0;
}

static long find_id(const struct id_index *ix, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix[mid].id == id)
			return (long)ix[mid].index;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static uint64_t function_id(const PbProfile *pb, size_t i) { return pb->function[i]->id; }
static uint64_t location_id(const PbProfile *pb, size_t i) { return pb->location[i]->id; }
static uint64_t mapping_id(const PbProfile *pb, size_t i) { return pb->mapping[i]->id; }

struct reader {
	const PbProfile *pb;
	struct profile *p;
	struct strbuf *err;
	struct id_index *fn_ix, *loc_ix, *map_ix;
	/* per location: its frames, outermost first, in frames[loc_first[i]..] */
	size_t *loc_first, *loc_n;
	uint32_t *frames;
	size_t nframes;
};

static int bad(struct reader *r, const char *what, size_t i)
{
	strbuf_addf(r->err, "corrupt pprof profile: %s (entry %zu)", what, i);
	return -EINVAL;
}

/* String i of the table, or NULL when out of range. */
static const char *str_at(const PbProfile *pb, int64_t i)
{
	if (i < 0 || (uint64_t)i >= pb->n_string_table || !pb->string_table[i])
		return NULL;
	return pb->string_table[i];
}

static enum frame_kind kind_of(const char *mapping_file, const char *func_file)
{
	if (mapping_file && *mapping_file) {
		if (!strcmp(mapping_file, PPROF_MAPPING_PYTHON))
			return FRAME_PYTHON;
		if (!strncmp(mapping_file, "[kernel", 7))
			return FRAME_KERNEL;
		if (!strcmp(mapping_file, PPROF_MAPPING_OTHER))
			return FRAME_OTHER;
		return FRAME_NATIVE;
	}
	if (func_file && (str_ends_with(func_file, ".py") || func_file[0] == '<'))
		return FRAME_PYTHON;
	return FRAME_NATIVE;
}

static int build_locations(struct reader *r)
{
	const PbProfile *pb = r->pb;
	size_t cap = 0;

	r->loc_first = xcalloc(pb->n_location + 1, sizeof(*r->loc_first));
	r->loc_n = xcalloc(pb->n_location + 1, sizeof(*r->loc_n));
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		const char *mfile = NULL, *bid = NULL;
		uint32_t module = 0, build_id = 0;
		enum frame_kind kind;

		if (l->mapping_id) {
			long mi = find_id(r->map_ix, pb->n_mapping, l->mapping_id);
			if (mi < 0)
				return bad(r, "location refers to a missing mapping", i);
			mfile = str_at(pb, pb->mapping[mi]->filename);
			bid = str_at(pb, pb->mapping[mi]->build_id);
			if (!mfile || !bid)
				return bad(r, "mapping string out of range", (size_t)mi);
			/* a real module, not one of the synthetic per-kind mappings */
			if (*mfile && kind_of(mfile, NULL) == FRAME_NATIVE &&
			    strcmp(mfile, PPROF_MAPPING_NATIVE)) {
				module = profile_cstring(r->p, mfile);
				build_id = *bid ? profile_cstring(r->p, bid) : 0;
			}
		}
		r->loc_first[i] = r->nframes;
		if (l->n_line == 0) {
			/* unsymbolized: its address stands for the name */
			char name[32];

			xsnprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->address);
			r->frames = xgrow(r->frames, sizeof(*r->frames), r->nframes + 1, &cap);
			r->frames[r->nframes++] = profile_frame_module(
				r->p, FRAME_NATIVE, profile_cstring(r->p, name), 0, 0, module, build_id);
			r->loc_n[i] = 1;
			continue;
		}
		if (l->n_line > LOAD_MAX_DEPTH)
			return bad(r, "location with too many inlined lines", i);
		/* line[0] is the innermost (inlined) function, the last the caller */
		for (size_t k = l->n_line; k-- > 0;) {
			const Perftools__Profiles__Line *ln = l->line[k];
			const Perftools__Profiles__Function *fn;
			const char *name, *file;
			long fi = find_id(r->fn_ix, pb->n_function, ln->function_id);

			if (fi < 0)
				return bad(r, "line refers to a missing function", i);
			fn = pb->function[fi];
			name = str_at(pb, fn->name);
			file = str_at(pb, fn->filename);
			if (!name || !file || !str_at(pb, fn->system_name))
				return bad(r, "function string out of range", (size_t)fi);
			if (!*name)
				name = str_at(pb, fn->system_name);
			kind = kind_of(mfile, file);
			r->frames = xgrow(r->frames, sizeof(*r->frames), r->nframes + 1, &cap);
			r->frames[r->nframes++] = profile_frame_module(
				r->p, kind, profile_cstring(r->p, name),
				*file ? profile_cstring(r->p, file) : 0,
				ln->line > 0 && ln->line <= INT32_MAX ? (int32_t)ln->line : 0,
				kind == FRAME_NATIVE ? module : 0, kind == FRAME_NATIVE ? build_id : 0);
			/* a demangled name keeps the name in the file beside it */
			if (kind == FRAME_NATIVE && *str_at(pb, fn->system_name))
				profile_frame_set_system_name(r->p, r->frames[r->nframes - 1],
					profile_cstring(r->p, str_at(pb, fn->system_name)));
		}
		r->loc_n[i] = l->n_line;
	}
	return 0;
}

/* Which value is the sample count, and the divisor that turns it into one. */
static void count_value(const PbProfile *pb, size_t *index, int64_t *divisor)
{
	const char *period_unit = pb->period_type ? str_at(pb, pb->period_type->unit) : NULL;
	long fallback = -1;

	*divisor = 1;
	for (size_t i = 0; i < pb->n_sample_type; i++) {
		const char *type = str_at(pb, pb->sample_type[i]->type);
		const char *unit = str_at(pb, pb->sample_type[i]->unit);

		if (unit && !strcmp(unit, "count")) {
			if (type && (!strcmp(type, PPROF_TYPE_SAMPLES) || !strcmp(type, "sample"))) {
				*index = i;
				return;
			}
			if (fallback < 0)
				fallback = (long)i;
		}
	}
	if (fallback >= 0) {
		*index = (size_t)fallback;
		return;
	}
	/* no count: the default (else the last) type, divided by the period
	 * when that is in the same unit */
	*index = pb->n_sample_type - 1;
	for (size_t i = 0; i < pb->n_sample_type; i++)
		if (pb->default_sample_type && pb->sample_type[i]->type == pb->default_sample_type)
			*index = i;
	{
		const char *unit = str_at(pb, pb->sample_type[*index]->unit);
		if (pb->period > 0 && unit && period_unit && !strcmp(unit, period_unit))
			*divisor = pb->period;
	}
}

/* "key: value" comments back into the metadata. */
static void read_comments(const PbProfile *pb, struct profile_meta *m)
{
	for (size_t i = 0; i < pb->n_comment; i++) {
		const char *c = str_at(pb, pb->comment[i]), *v;

		if (c && (v = strstr(c, ": ")))
			pprof_meta_read(m, c, (size_t)(v - c), v + 2);
	}
}

/* What a sample's labels say: its thread, and a thread record's accounting. */
struct sample_labels {
	const char *tname;
	const char *comm;
	int64_t tid, pid, generation;
	int have_tid;
	/* cpu, wall, gil held, waiting, ticks, dropped (output/pprof.h) */
	uint64_t acct[6];
	uint64_t resumes;           /* a calls sample's generator resumes */
	/* the sample's own string labels (--label, or another tool's tags): string ids */
	struct pf_label own[PROFILE_LABELS_MAX];
	size_t nown;
};

static int read_labels(struct reader *r, const Perftools__Profiles__Sample *s, size_t i,
		       struct sample_labels *lab)
{
	static const char *const acct_keys[] = {
		PPROF_LABEL_THREAD_CPU_NS, PPROF_LABEL_THREAD_WALL_NS, PPROF_LABEL_GIL_HELD,
		PPROF_LABEL_GIL_WAITING, PPROF_LABEL_GIL_TICKS, PPROF_LABEL_DROPPED,
	};
	const PbProfile *pb = r->pb;

	memset(lab, 0, sizeof(*lab));
	lab->pid = r->p->meta.pid;
	for (size_t k = 0; k < s->n_label; k++) {
		const Perftools__Profiles__Label *l = s->label[k];
		const char *key = str_at(pb, l->key);

		if (!key || !str_at(pb, l->str))
			return bad(r, "label string out of range", i);
		if (!strcmp(key, PPROF_LABEL_THREAD_ID) || !strcmp(key, "tid")) {
			lab->tid = l->num;
			lab->have_tid = 1;
		} else if (!strcmp(key, PPROF_LABEL_PROCESS_ID) || !strcmp(key, "pid")) {
			lab->pid = l->num;
		} else if (!strcmp(key, PPROF_LABEL_THREAD_NAME) || !strcmp(key, "thread")) {
			lab->tname = str_at(pb, l->str);
		} else if (!strcmp(key, PPROF_LABEL_THREAD_COMM)) {
			lab->comm = str_at(pb, l->str);
		} else if (!strcmp(key, PPROF_LABEL_EXEC)) {
			lab->generation = l->num > 0 && l->num < 1000000 ? l->num : 0;
		} else if (l->str && lab->nown < PROFILE_LABELS_MAX) {
			lab->own[lab->nown].key = profile_cstring(r->p, key);
			lab->own[lab->nown++].value = profile_cstring(r->p, str_at(pb, l->str));
		} else if (!strcmp(key, PPROF_LABEL_RESUMES)) {
			lab->resumes = l->num > 0 ? (uint64_t)l->num : 0;
		} else {
			for (size_t a = 0; a < ARRAY_SIZE(acct_keys); a++)
				if (!strcmp(key, acct_keys[a]) && l->num > 0)
					lab->acct[a] = (uint64_t)l->num;
		}
	}
	if (lab->tid < INT32_MIN || lab->tid > INT32_MAX || lab->pid < INT32_MIN ||
	    lab->pid > INT32_MAX)
		return bad(r, "thread or process id out of range", i);
	return 0;
}

/* A sample with no stack and no weight: a thread record (output/pprof.h). */
static void add_thread_record(struct profile *p, const struct sample_labels *lab)
{
	struct pf_thread *t;
	uint32_t ti;

	if (!lab->have_tid)
		return;
	/* (profile_thread may move the array: index it afterwards) */
	ti = profile_thread_gen(p, (pid_t)lab->pid, (pid_t)lab->tid, (unsigned)lab->generation,
				lab->tname ? lab->tname : "");
	if (lab->comm)
		profile_thread_comm(p, ti, lab->comm);
	t = &p->threads[ti];
	t->cpu_ns = lab->acct[0];
	t->wall_ns = lab->acct[1];
	t->gil_held = lab->acct[2];
	t->gil_waiting = lab->acct[3];
	t->gil_ticks = lab->acct[4];
	t->dropped = lab->acct[5];
}

/*
 * Sample i's frames into stack, outermost first (location ids run leaf
 * first), within LOAD_MAX_DEPTH and what is left of *budget.
 */
static int sample_stack(struct reader *r, const Perftools__Profiles__Sample *s, size_t i,
			uint32_t *stack, size_t *depth, uint64_t *budget)
{
	*depth = 0;
	for (size_t k = s->n_location_id; k-- > 0;) {
		long li = find_id(r->loc_ix, r->pb->n_location, s->location_id[k]);

		if (li < 0)
			return bad(r, "sample refers to a missing location", i);
		if (*depth + r->loc_n[li] > LOAD_MAX_DEPTH || r->loc_n[li] > *budget) {
			strbuf_addf(r->err, "sample %zu: stack deeper than %d frames", i,
				    LOAD_MAX_DEPTH);
			return -EFBIG;
		}
		*budget -= r->loc_n[li];
		memcpy(stack + *depth, r->frames + r->loc_first[li], r->loc_n[li] * sizeof(*stack));
		*depth += r->loc_n[li];
	}
	return 0;
}

static int read_samples(struct reader *r)
{
	const PbProfile *pb = r->pb;
	struct profile *p = r->p;
	uint32_t *stack = xmalloc(sizeof(*stack) * LOAD_MAX_DEPTH);
	uint64_t budget = MAX_TOTAL_FRAMES, total = 0;
	size_t vi = 0, ci = SIZE_MAX;
	int64_t divisor = 1;
	int ret = 0;

	if (pb->n_sample && !pb->n_sample_type) {
		free(stack);
		return bad(r, "samples without a sample type", 0);
	}
	if (pb->n_sample_type)
		count_value(pb, &vi, &divisor);
	/* framewalk's exact call counts (output/pprof.h): a calls type beside the count */
	for (size_t i = 0; i < pb->n_sample_type; i++) {
		const char *type = str_at(pb, pb->sample_type[i]->type);

		if (i != vi && type && !strcmp(type, PPROF_TYPE_CALLS))
			ci = i;
	}
	for (size_t i = 0; i < pb->n_sample && !ret; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		struct sample_labels lab;
		int record = s->n_location_id == 0;
		size_t depth;
		uint64_t count;
		int64_t v;

		if (s->n_value != pb->n_sample_type) {
			ret = bad(r, "sample with the wrong number of values", i);
			break;
		}
		ret = read_labels(r, s, i, &lab);
		if (ret)
			break;
		for (size_t k = 0; k < s->n_value; k++)
			record &= s->value[k] == 0;
		if (record) {
			add_thread_record(p, &lab);
			continue;
		}
		ret = sample_stack(r, s, i, stack, &depth, &budget);
		if (ret)
			break;
		v = s->value[vi];
		if (v <= 0 && ci != SIZE_MAX && depth == 1 && (s->value[ci] > 0 || lab.resumes)) {
			const struct pf_frame *fr = &p->frames[stack[0]];

			profile_add_calls(p, profile_str(p, fr->name), profile_str(p, fr->file),
					  fr->line, s->value[ci] > 0 ? (uint64_t)s->value[ci] : 0,
					  lab.resumes);
			continue;
		}
		if (v <= 0)
			continue;
		count = (uint64_t)(v / divisor + (v % divisor ? 1 : 0));
		if (!lab.have_tid && !lab.tname)
			lab.tname = "all";
		/* counts are written back as int64 (pprof values) */
		if (count > (uint64_t)INT64_MAX - total) {
			strbuf_addstr(r->err, "sample counts add up past 2^63");
			ret = -EINVAL;
			break;
		}
		total += count;
		profile_add_labeled(p, profile_thread_gen(p, (pid_t)lab.pid, (pid_t)lab.tid,
							  (unsigned)lab.generation,
							  lab.tname ? lab.tname : ""),
				    profile_stack(p, stack, depth), profile_labels(p, lab.own, lab.nown),
				    count);
	}
	if (!ret && !p->meta.samples)
		p->meta.samples = total;
	free(stack);
	return ret;
}

static int convert(const PbProfile *pb, struct profile *p, struct strbuf *err)
{
	struct reader r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.pb = pb;
	r.p = p;
	r.err = err;
	if (!pb->n_string_table || !pb->string_table[0] || pb->string_table[0][0]) {
		strbuf_addstr(err, "corrupt pprof profile: string table must start with \"\"");
		return -EINVAL;
	}
	for (size_t i = 0; i < pb->n_sample_type; i++)
		if (!str_at(pb, pb->sample_type[i]->type) || !str_at(pb, pb->sample_type[i]->unit))
			return bad(&r, "sample type string out of range", i);
	if (pb->period_type && (!str_at(pb, pb->period_type->type) ||
				!str_at(pb, pb->period_type->unit)))
		return bad(&r, "period type string out of range", 0);
	if (build_index(&r.fn_ix, pb->n_function, function_id, pb))
		return bad(&r, "zero or duplicate function id", 0);
	ret = build_index(&r.loc_ix, pb->n_location, location_id, pb);
	if (!ret)
		ret = build_index(&r.map_ix, pb->n_mapping, mapping_id, pb);
	if (ret) {
		ret = bad(&r, "zero or duplicate location or mapping id", 0);
		goto out;
	}

	read_comments(pb, &p->meta);
	if (pb->time_nanos > 0)
		p->meta.start_unix_ns = (uint64_t)pb->time_nanos;
	if (pb->duration_nanos > 0)
		p->meta.duration_ns = (uint64_t)pb->duration_nanos;
	if (!p->meta.rate_hz && pb->period > 0 && pb->period_type) {
		const char *unit = str_at(pb, pb->period_type->unit);
		if (unit && !strcmp(unit, PROFILE_TIME_UNIT))
			p->meta.rate_hz = 1e9 / (double)pb->period;
	}
	ret = build_locations(&r);
	if (!ret)
		ret = read_samples(&r);
out:
	free(r.fn_ix);
	free(r.loc_ix);
	free(r.map_ix);
	free(r.loc_first);
	free(r.loc_n);
	free(r.frames);
	return ret;
}

int read_pprof(const unsigned char *data, size_t len, int compressed, struct profile *p,
	       struct strbuf *err)
{
	PbProfile *pb;
	int ret;

	pb = perftools__profiles__profile__unpack(NULL, len, data);
	if (!pb) {
		strbuf_addstr(err, compressed ? "corrupt pprof profile: not a valid profile.proto message"
				: "not a recognised profile (neither pprof nor collapsed stacks)");
		return -EINVAL;
	}
	ret = convert(pb, p, err);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	return ret;
}
