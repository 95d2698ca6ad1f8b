/*
 * Implementation of period.h: splitting the period's profile by process
 * (frames re-interned into each process's own tables, so its pprof holds
 * only what it uses) and writing each one's pprof into memory.
 */
#include <errno.h>
#include <stdio.h>

#include "agent/period.h"
#include "output/output.h"
#include "sampler/sampler.h"
#include "util/util.h"

size_t period_labels(const struct period_batch *b, const struct period_proc *p,
		     struct period_label *out, size_t max)
{
	size_t n = 0;

#define LABEL(k, v) do { if (n < max) { out[n].key = (k); out[n].value = (v); \
	out[n].key_len = strlen(k); n++; } } while (0)
	LABEL("service_name", p->info.service);
	LABEL("host", b->host);
	LABEL("pid", p->pid_text);
	if (p->info.container[0])
		LABEL("container_id", p->info.container);
	LABEL("python_version", p->version);
	if (p->info.build_id[0])
		LABEL("build_id", p->info.build_id);
	LABEL("mode", b->mode);
	LABEL("rate", b->rate_text);
#undef LABEL
	for (size_t i = 0; i < b->nextra && n < max; i++) {
		const char *eq = strchr(b->extra[i], '=');

		if (!eq)
			continue;
		out[n].key = b->extra[i];
		out[n].key_len = (size_t)(eq - b->extra[i]);
		out[n].value = eq + 1;
		n++;
	}
	return n;
}

void period_batch_init(struct period_batch *b, uint64_t seq, uint64_t from_ns, uint64_t until_ns,
		       const char *host, const char *mode, double rate_hz, const char *backend,
		       char *const *extra, size_t nextra)
{
	memset(b, 0, sizeof(*b));
	b->seq = seq;
	b->from_ns = from_ns;
	b->until_ns = until_ns;
	b->host = host;
	b->mode = mode;
	b->rate_hz = rate_hz;
	xsnprintf(b->rate_text, sizeof(b->rate_text), "%g", rate_hz);
	b->backend = backend;
	b->extra = extra;
	b->nextra = nextra;
}

int period_cut_now(uint64_t period_ns, uint64_t from_unix, uint64_t now_unix,
		   uint64_t *end_unix)
{
	if (!period_ns || now_unix <= *end_unix + period_ns / 2 ||
	    *end_unix - from_unix >= 2 * period_ns)
		return 1;
	*end_unix = (now_unix / period_ns + 1) * period_ns;
	return 0;
}

/* Label set `set` of src (--context-label values) as a set of dst. */
static uint32_t copy_labels(const struct profile *src, uint32_t set, struct profile *dst)
{
	const struct pf_label *l;
	struct pf_label out[PROFILE_LABELS_MAX];
	size_t n = profile_labelset(src, set, &l);

	if (n > PROFILE_LABELS_MAX)
		n = PROFILE_LABELS_MAX;
	for (size_t i = 0; i < n; i++) {
		out[i].key = profile_cstring(dst, profile_str(src, l[i].key));
		out[i].value = profile_cstring(dst, profile_str(src, l[i].value));
	}
	return profile_labels(dst, out, n);
}

void period_extract(const struct profile *src, pid_t pid, struct profile *dst)
{
	uint32_t *frame_map = xcalloc(src->nframes ? src->nframes : 1, sizeof(*frame_map));
	uint32_t *thread_map = xcalloc(src->nthreads ? src->nthreads : 1, sizeof(*thread_map));
	uint32_t *frames = NULL;
	size_t frames_cap = 0;

	profile_init(dst);
	for (size_t i = 0; i < src->nthreads; i++) {
		const struct pf_thread *t = &src->threads[i];
		struct pf_thread *d;
		uint32_t id;

		if (t->pid != pid)
			continue;
		id = profile_thread(dst, t->pid, t->tid, profile_str(src, t->name));
		d = &dst->threads[id];
		d->cpu_ns = t->cpu_ns;
		d->wall_ns = t->wall_ns;
		d->gil_held = t->gil_held;
		d->gil_waiting = t->gil_waiting;
		d->gil_ticks = t->gil_ticks;
		d->dropped = t->dropped;
		dst->meta.errors += t->dropped;
		thread_map[i] = id + 1;
	}
	for (size_t i = 0; i < src->ncounts; i++) {
		const struct pf_count *c = &src->counts[i];
		size_t depth;

		if (!thread_map[c->thread])
			continue;
		depth = c->node < src->nnodes ? src->nodes[c->node].depth : 0;
		frames = xgrow(frames, sizeof(*frames), depth + 1, &frames_cap);
		depth = profile_node_frames(src, c->node, frames, depth);
		for (size_t k = 0; k < depth; k++) {
			uint32_t f = frames[k];

			if (!frame_map[f]) {
				const struct pf_frame *fr = &src->frames[f];

				frame_map[f] = profile_frame_module(dst, (enum frame_kind)fr->kind,
					profile_cstring(dst, profile_str(src, fr->name)),
					fr->file ? profile_cstring(dst, profile_str(src, fr->file)) : 0,
					fr->line,
					fr->module ? profile_cstring(dst, profile_str(src, fr->module)) : 0,
					fr->build_id ? profile_cstring(dst, profile_str(src, fr->build_id)) : 0);
				if (fr->system_name)
					profile_frame_set_system_name(dst, frame_map[f],
						profile_cstring(dst, profile_str(src, fr->system_name)));
			}
			frames[k] = frame_map[f];
		}
		profile_add_labeled(dst, thread_map[c->thread] - 1, profile_stack(dst, frames, depth),
				    copy_labels(src, c->labels, dst), c->count);
		dst->meta.samples += c->count;
	}
	free(frames);
	free(thread_map);
	free(frame_map);
}

uint64_t period_samples(const struct profile *p)
{
	return profile_total(p);
}

int period_pprof(const struct profile *p, struct strbuf *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return -errno;
	ret = output_pprof(p, f, NULL);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret)
		strbuf_add(out, buf, len);
	free(buf);
	return ret;
}

/* "key=value key=value": the labels as one metadata comment of the pprof. */
static char *labels_text(const struct period_batch *b, const struct period_proc *p)
{
	struct period_label l[PERIOD_MAX_LABELS];
	size_t n = period_labels(b, p, l, ARRAY_SIZE(l));
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%.*s=%s", i ? " " : "", (int)l[i].key_len, l[i].key, l[i].value);
	return strbuf_detach(&sb);
}

int period_batch_add(struct period_batch *b, const struct profile *src, const struct procinfo *info,
		     const char *version, const struct profile *calls,
		     const struct label_counts *labels)
{
	struct period_proc *p;
	struct profile_meta *m;
	int ret;

	b->procs = xgrow(b->procs, sizeof(*b->procs), b->n + 1, &b->alloc);
	p = &b->procs[b->n++];
	memset(p, 0, sizeof(*p));
	p->info = *info;
	xsnprintf(p->version, sizeof(p->version), "%s", version);
	xsnprintf(p->pid_text, sizeof(p->pid_text), "%d", (int)info->pid);
	period_extract(src, info->pid, &p->prof);
	m = &p->prof.meta;
	m->pid = info->pid;
	if (b->redact_cmdline) {
		/* the command line may hold secrets; the executable's name says what runs */
		const char *slash = strrchr(info->exe, '/');

		m->target = xstrdup(slash ? slash + 1 : info->exe);
	} else {
		m->target = xstrdup(info->cmdline[0] ? info->cmdline : info->exe);
	}
	m->python_version = xstrdup(version);
	m->backend = xstrdup(b->backend ? b->backend : "");
	m->mode = xstrdup(b->mode);
	m->rate_hz = b->rate_hz;
	m->start_unix_ns = b->from_ns;
	m->duration_ns = b->until_ns > b->from_ns ? b->until_ns - b->from_ns : 0;
	m->labels = labels_text(b, p);
	/*
	 * How the whole capture sampled in this period, every process's
	 * profile alike: samples the ring buffer had no room for (this
	 * process's may be among them), the per-CPU clock's restarts, and how
	 * often the records were taken (drains).
	 */
	m->cpu_weighted = src->meta.cpu_weighted;
	m->events_per_thread = src->meta.events_per_thread;
	m->lost = src->meta.lost;
	m->rephases = src->meta.rephases;
	m->clock_restarts = src->meta.clock_restarts;
	m->drains = src->meta.drains;
	if (b->label_specs)
		m->label_specs = xstrdup(b->label_specs);
	/* this process's, not the capture's (every process's, in src); none counted yet in p */
	if (labels)
		label_counts_add(&m->label_counts, labels);
	if (calls) {
		/* --count-calls: the period's exact counts, their note and window */
		for (size_t i = 0; i < calls->ncalls; i++) {
			const struct pf_calls *c = &calls->calls[i];

			profile_add_calls(&p->prof, profile_str(calls, c->name),
					  profile_str(calls, c->file), c->firstline, c->starts,
					  c->resumes);
		}
		if (calls->meta.calls_note)
			m->calls_note = xstrdup(calls->meta.calls_note);
		m->calls_window_ns = calls->meta.calls_window_ns;
	}
	ret = b->want_pprof ? period_pprof(&p->prof, &p->pprof) : 0;
	if (ret) {
		profile_release(&p->prof);
		strbuf_release(&p->pprof);
		b->n--;
	}
	return ret;
}

void period_batch_release(struct period_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		profile_release(&b->procs[i].prof);
		strbuf_release(&b->procs[i].pprof);
	}
	free(b->procs);
	memset(b, 0, sizeof(*b));
}
