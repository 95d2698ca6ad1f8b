/*
 * Implementation of profile.h. Every table is an array plus a hash index
 * of ids into it (util/hashidx.h).
 */
#include "profile/profile.h"
#include "util/util.h"

static uint64_t string_hash(const void *owner, uint32_t id)
{
	const struct profile *p = owner;

	return hash_bytes(p->strings[id], p->string_len[id]);
}

static uint64_t frame_hash_of(const struct pf_frame *f)
{
	return hash_mix64(((uint64_t)f->name << 32 | f->file) ^
			  hash_mix64((uint64_t)(uint32_t)f->line << 8 | f->kind) ^
			  hash_mix64((uint64_t)f->module << 32 | f->build_id));
}

static uint64_t frame_hash(const void *owner, uint32_t id)
{
	return frame_hash_of(&((const struct profile *)owner)->frames[id]);
}

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
	return hash_mix64((uint64_t)a << 32 | b);
}

static uint64_t node_hash(const void *owner, uint32_t id)
{
	const struct pf_node *n = &((const struct profile *)owner)->nodes[id];

	return pair_hash(n->parent, n->frame);
}

/* Unlabelled counts hash as they did before labels: the common case costs nothing more. */
static uint64_t count_key_hash(uint32_t thread, uint32_t node, uint32_t labels)
{
	uint64_t h = pair_hash(thread, node);

	return labels ? h ^ hash_mix64((uint64_t)labels * 0x9e3779b97f4a7c15ull) : h;
}

static uint64_t count_hash(const void *owner, uint32_t id)
{
	const struct pf_count *c = &((const struct profile *)owner)->counts[id];

	return count_key_hash(c->thread, c->node, c->labels);
}

static uint64_t labelset_hash_of(const struct pf_label *l, size_t n)
{
	uint64_t h = n;

	for (size_t i = 0; i < n; i++)
		h = hash_mix64(h ^ ((uint64_t)l[i].key << 32 | l[i].value));
	return h;
}

static uint64_t labelset_hash(const void *owner, uint32_t id)
{
	const struct profile *p = owner;
	const struct pf_labelset *s = &p->labelsets[id];

	return labelset_hash_of(p->label_items + s->first, s->n);
}

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	profile_string(p, "", 0);                 /* string 0 */
	p->frames = xgrow(p->frames, sizeof(*p->frames), 1, &p->frames_alloc);
	memset(&p->frames[0], 0, sizeof(p->frames[0]));
	p->nframes = 1;                           /* frame 0 unused */
	p->nodes = xgrow(p->nodes, sizeof(*p->nodes), 1, &p->nodes_alloc);
	memset(&p->nodes[0], 0, sizeof(p->nodes[0]));
	p->nnodes = 1;                            /* node 0: root */
}

void profile_release(struct profile *p)
{
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->string_len);
	hidx_release(&p->string_index);
	free(p->frames);
	hidx_release(&p->frame_index);
	free(p->nodes);
	hidx_release(&p->node_index);
	free(p->label_items);
	free(p->labelsets);
	hidx_release(&p->labelset_index);
	free(p->threads);
	free(p->counts);
	hidx_release(&p->count_index);
	free(p->meta.target);
	free(p->meta.python_version);
	free(p->meta.backend);
	free(p->meta.mode);
	free(p->meta.labels);
	free(p->meta.unwind_breaks);
	free(p->meta.modules_unreadable);
	free(p->meta.events);
	free(p->meta.label_specs);
	free(p->meta.calls_note);
	free(p->calls);
	memset(p, 0, sizeof(*p));
}

uint32_t profile_string_find(const struct profile *p, const char *s, size_t len)
{
	size_t pos = hidx_start(&p->string_index, hash_bytes(s ? s : "", len));
	uint32_t id;

	while ((id = hidx_next(&p->string_index, &pos)) != HIDX_NONE)
		if (p->string_len[id] == len && !memcmp(p->strings[id], s, len))
			return id;
	return UINT32_MAX;
}

uint32_t profile_string(struct profile *p, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s ? s : "", len);
	size_t pos = hidx_start(&p->string_index, h);
	uint32_t id;

	while ((id = hidx_next(&p->string_index, &pos)) != HIDX_NONE)
		if (p->string_len[id] == len && !memcmp(p->strings[id], s, len))
			return id;
	id = (uint32_t)p->nstrings;
	p->strings = xgrow(p->strings, sizeof(*p->strings), p->nstrings + 1, &p->strings_alloc);
	p->string_len = xrealloc(p->string_len, p->strings_alloc * sizeof(*p->string_len));
	p->strings[id] = xstrndup(s ? s : "", len);
	p->string_len[id] = (uint32_t)len;
	p->nstrings++;
	hidx_insert(&p->string_index, h, id, string_hash, p);
	return id;
}

const char *profile_str(const struct profile *p, uint32_t id)
{
	return id < p->nstrings ? p->strings[id] : "";
}

uint32_t profile_frame_module(struct profile *p, enum frame_kind kind, uint32_t name,
			      uint32_t file, int32_t line, uint32_t module, uint32_t build_id)
{
	struct pf_frame f = { name, file, line, (uint8_t)kind, module, build_id, 0 };
	uint64_t h = frame_hash_of(&f);
	size_t pos = hidx_start(&p->frame_index, h);
	uint32_t id;

	while ((id = hidx_next(&p->frame_index, &pos)) != HIDX_NONE) {
		const struct pf_frame *g = &p->frames[id];

		if (g->name == name && g->file == file && g->line == line && g->kind == kind &&
		    g->module == module && g->build_id == build_id)
			return id;
	}
	id = (uint32_t)p->nframes;
	p->frames = xgrow(p->frames, sizeof(*p->frames), p->nframes + 1, &p->frames_alloc);
	p->frames[id] = f;
	p->nframes++;
	hidx_insert(&p->frame_index, h, id, frame_hash, p);
	return id;
}

void profile_frame_set_system_name(struct profile *p, uint32_t frame, uint32_t system_name)
{
	if (frame && frame < p->nframes && !p->frames[frame].system_name &&
	    system_name != p->frames[frame].name)
		p->frames[frame].system_name = system_name;
}

uint32_t profile_frame(struct profile *p, enum frame_kind kind, uint32_t name,
		       uint32_t file, int32_t line)
{
	return profile_frame_module(p, kind, name, file, line, 0, 0);
}

static uint32_t node_child(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint64_t h = pair_hash(parent, frame);
	size_t pos = hidx_start(&p->node_index, h);
	uint32_t id;

	while ((id = hidx_next(&p->node_index, &pos)) != HIDX_NONE)
		if (p->nodes[id].parent == parent && p->nodes[id].frame == frame)
			return id;
	id = (uint32_t)p->nnodes;
	p->nodes = xgrow(p->nodes, sizeof(*p->nodes), p->nnodes + 1, &p->nodes_alloc);
	p->nodes[id].parent = parent;
	p->nodes[id].frame = frame;
	p->nodes[id].depth = p->nodes[parent].depth + 1;
	p->nnodes++;
	hidx_insert(&p->node_index, h, id, node_hash, p);
	return id;
}

uint32_t profile_stack(struct profile *p, const uint32_t *frames, size_t n)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++)
		node = node_child(p, node, frames[i]);
	return node;
}

uint32_t profile_thread(struct profile *p, pid_t pid, pid_t tid, const char *name)
{
	return profile_thread_gen(p, pid, tid, 0, name);
}

uint32_t profile_thread_gen(struct profile *p, pid_t pid, pid_t tid, unsigned generation,
			    const char *name)
{
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].pid == pid && p->threads[i].tid == tid &&
		    p->threads[i].generation == generation) {
			if (name)
				p->threads[i].name = profile_cstring(p, name);
			return (uint32_t)i;
		}
	}
	p->threads = xgrow(p->threads, sizeof(*p->threads), p->nthreads + 1, &p->threads_alloc);
	memset(&p->threads[p->nthreads], 0, sizeof(p->threads[p->nthreads]));
	p->threads[p->nthreads].pid = pid;
	p->threads[p->nthreads].tid = tid;
	p->threads[p->nthreads].generation = generation;
	p->threads[p->nthreads].name = profile_cstring(p, name ? name : "");
	return (uint32_t)p->nthreads++;
}

void profile_thread_comm(struct profile *p, uint32_t thread, const char *comm)
{
	if (thread < p->nthreads)
		p->threads[thread].comm = comm && *comm ? profile_cstring(p, comm) : 0;
}

void profile_add_labeled(struct profile *p, uint32_t thread, uint32_t node, uint32_t labels,
			 uint64_t count)
{
	uint64_t h = count_key_hash(thread, node, labels);
	size_t pos = hidx_start(&p->count_index, h);
	uint32_t id;

	while ((id = hidx_next(&p->count_index, &pos)) != HIDX_NONE) {
		struct pf_count *c = &p->counts[id];

		if (c->thread == thread && c->node == node && c->labels == labels) {
			c->count += count;
			return;
		}
	}
	id = (uint32_t)p->ncounts;
	p->counts = xgrow(p->counts, sizeof(*p->counts), p->ncounts + 1, &p->counts_alloc);
	p->counts[id].thread = thread;
	p->counts[id].node = node;
	p->counts[id].labels = labels;
	p->counts[id].count = count;
	p->ncounts++;
	hidx_insert(&p->count_index, h, id, count_hash, p);
}

void profile_add(struct profile *p, uint32_t thread, uint32_t node, uint64_t count)
{
	profile_add_labeled(p, thread, node, 0, count);
}

uint32_t profile_labels(struct profile *p, const struct pf_label *labels, size_t n)
{
	uint64_t h;
	size_t pos;
	uint32_t id;

	if (!n)
		return 0;
	if (n > PROFILE_LABELS_MAX)
		n = PROFILE_LABELS_MAX;
	h = labelset_hash_of(labels, n);
	pos = hidx_start(&p->labelset_index, h);
	while ((id = hidx_next(&p->labelset_index, &pos)) != HIDX_NONE) {
		const struct pf_labelset *s = &p->labelsets[id];

		if (s->n == n && !memcmp(p->label_items + s->first, labels, n * sizeof(*labels)))
			return id;
	}
	if (!p->nlabelsets) {
		/* set 0, the empty one, first */
		p->labelsets = xgrow(p->labelsets, sizeof(*p->labelsets), 1, &p->labelsets_alloc);
		p->labelsets[0].first = 0;
		p->labelsets[0].n = 0;
		p->nlabelsets = 1;
	}
	p->label_items = xgrow(p->label_items, sizeof(*p->label_items), p->nlabel_items + n,
			       &p->label_items_alloc);
	memcpy(p->label_items + p->nlabel_items, labels, n * sizeof(*labels));
	id = (uint32_t)p->nlabelsets;
	p->labelsets = xgrow(p->labelsets, sizeof(*p->labelsets), p->nlabelsets + 1,
			     &p->labelsets_alloc);
	p->labelsets[id].first = (uint32_t)p->nlabel_items;
	p->labelsets[id].n = (uint32_t)n;
	p->nlabel_items += n;
	p->nlabelsets++;
	hidx_insert(&p->labelset_index, h, id, labelset_hash, p);
	return id;
}

size_t profile_labelset(const struct profile *p, uint32_t set, const struct pf_label **out)
{
	if (!set || set >= p->nlabelsets) {
		*out = NULL;
		return 0;
	}
	*out = p->label_items + p->labelsets[set].first;
	return p->labelsets[set].n;
}

int profile_label_get(const struct profile *p, uint32_t set, uint32_t key, uint32_t *value)
{
	const struct pf_label *l;
	size_t n = profile_labelset(p, set, &l);

	for (size_t i = 0; i < n; i++) {
		if (l[i].key == key) {
			*value = l[i].value;
			return 1;
		}
	}
	return 0;
}

size_t profile_keep_label(struct profile *p, const char *key, const char *value)
{
	uint32_t k = profile_string_find(p, key, strlen(key));
	uint32_t v = profile_string_find(p, value, strlen(value)), got;
	size_t kept = 0;

	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];

		if (k != UINT32_MAX && v != UINT32_MAX && profile_label_get(p, c->labels, k, &got) &&
		    got == v)
			p->counts[kept++] = *c;
	}
	p->ncounts = kept;
	hidx_clear(&p->count_index);
	for (size_t i = 0; i < kept; i++)
		hidx_insert(&p->count_index, count_hash(p, (uint32_t)i), (uint32_t)i, count_hash, p);
	return kept;
}

int profile_has_labels(const struct profile *p)
{
	for (size_t i = 0; i < p->ncounts; i++)
		if (p->counts[i].labels)
			return 1;
	return 0;
}

size_t profile_node_frames(const struct profile *p, uint32_t node, uint32_t *out, size_t max)
{
	size_t depth = node < p->nnodes ? p->nodes[node].depth : 0;
	size_t i;

	if (depth > max)
		depth = max;
	/* Walk leaf to root, filling from the end. */
	i = depth;
	while (node && i > 0) {
		out[--i] = p->nodes[node].frame;
		node = p->nodes[node].parent;
	}
	return depth;
}

uint64_t profile_total(const struct profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->ncounts; i++)
		t += p->counts[i].count;
	return t;
}

int profile_rate_known(const struct profile_meta *m)
{
	return m->rate_hz >= 0.001 && m->rate_hz <= 1e9;
}

int profile_mode_is_cpu(const char *mode)
{
	return mode && !strcmp(mode, "cpu");
}

void profile_add_calls(struct profile *p, const char *name, const char *file, int firstline,
		       uint64_t starts, uint64_t resumes)
{
	struct pf_calls *c;

	if (p->ncalls == p->calls_alloc) {
		p->calls_alloc = p->calls_alloc ? 2 * p->calls_alloc : 64;
		p->calls = xrealloc(p->calls, p->calls_alloc * sizeof(*p->calls));
	}
	c = &p->calls[p->ncalls++];
	c->name = profile_cstring(p, name);
	c->file = profile_cstring(p, file);
	c->firstline = firstline;
	c->frame = profile_frame(p, FRAME_PYTHON, c->name, c->file, firstline);
	c->starts = starts;
	c->resumes = resumes;
}
