/*
 * Implementation of profile.h. Every table is an array plus an
 * open-addressing index of ids into it; the index is rebuilt on growth.
 */
#include "profile/profile.h"
#include "util/util.h"

typedef uint64_t (*hash_fn)(const struct profile *p, uint32_t id);

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return mix(h);
}

static uint64_t string_hash(const struct profile *p, uint32_t id)
{
	return hash_bytes(p->strings[id], p->string_len[id]);
}

static uint64_t frame_hash_of(const struct pf_frame *f)
{
	return mix(((uint64_t)f->name << 32 | f->file) ^
		   mix((uint64_t)(uint32_t)f->line << 8 | f->kind) ^ mix((uint64_t)f->module << 32 | f->build_id));
}

static uint64_t frame_hash(const struct profile *p, uint32_t id)
{
	return frame_hash_of(&p->frames[id]);
}

static uint64_t node_hash_of(uint32_t parent, uint32_t frame)
{
	return mix((uint64_t)parent << 32 | frame);
}

static uint64_t node_hash(const struct profile *p, uint32_t id)
{
	return node_hash_of(p->nodes[id].parent, p->nodes[id].frame);
}

static uint64_t count_hash_of(uint32_t thread, uint32_t node)
{
	return mix((uint64_t)thread << 32 | node);
}

static uint64_t count_hash(const struct profile *p, uint32_t id)
{
	return count_hash_of(p->counts[id].thread, p->counts[id].node);
}

/* Slots hold id + 1; 0 is empty. */
static void table_rebuild(struct profile *p, struct pf_table *t, size_t n, hash_fn hash,
			  uint32_t first)
{
	free(t->slots);
	t->cap = 64;
	while (t->cap < n * 2 + 2)
		t->cap *= 2;
	t->slots = xcalloc(t->cap, sizeof(*t->slots));
	t->n = 0;
	for (uint32_t id = first; id < n; id++) {
		size_t i = (size_t)hash(p, id) & (t->cap - 1);
		while (t->slots[i])
			i = (i + 1) & (t->cap - 1);
		t->slots[i] = id + 1;
		t->n++;
	}
}

static void table_insert(struct profile *p, struct pf_table *t, uint32_t id, uint64_t h,
			 size_t n, hash_fn hash, uint32_t first)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		table_rebuild(p, t, n, hash, first);
		return;   /* rebuild indexed every id below n, including id */
	}
	i = (size_t)h & (t->cap - 1);
	while (t->slots[i])
		i = (i + 1) & (t->cap - 1);
	t->slots[i] = id + 1;
	t->n++;
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
	free(p->string_index.slots);
	free(p->frames);
	free(p->frame_index.slots);
	free(p->nodes);
	free(p->node_index.slots);
	free(p->threads);
	free(p->counts);
	free(p->count_index.slots);
	free(p->meta.target);
	free(p->meta.python_version);
	free(p->meta.backend);
	free(p->meta.mode);
	free(p->meta.unwind_breaks);
	free(p->meta.modules_unreadable);
	memset(p, 0, sizeof(*p));
}

uint32_t profile_string(struct profile *p, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s ? s : "", len);
	struct pf_table *t = &p->string_index;
	uint32_t id;

	if (t->cap) {
		for (size_t i = (size_t)h & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1)) {
			id = t->slots[i] - 1;
			if (p->string_len[id] == len && !memcmp(p->strings[id], s, len))
				return id;
		}
	}
	id = (uint32_t)p->nstrings;
	p->strings = xgrow(p->strings, sizeof(*p->strings), p->nstrings + 1, &p->strings_alloc);
	p->string_len = xrealloc(p->string_len, p->strings_alloc * sizeof(*p->string_len));
	p->strings[id] = xstrndup(s ? s : "", len);
	p->string_len[id] = (uint32_t)len;
	p->nstrings++;
	table_insert(p, t, id, h, p->nstrings, string_hash, 0);
	return id;
}

const char *profile_str(const struct profile *p, uint32_t id)
{
	return id < p->nstrings ? p->strings[id] : "";
}

uint32_t profile_frame_module(struct profile *p, enum frame_kind kind, uint32_t name,
			      uint32_t file, int32_t line, uint32_t module, uint32_t build_id)
{
	struct pf_frame f = { name, file, line, (uint8_t)kind, module, build_id };
	struct pf_table *t = &p->frame_index;
	uint64_t h = frame_hash_of(&f);
	uint32_t id;

	if (t->cap) {
		for (size_t i = (size_t)h & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1)) {
			const struct pf_frame *g = &p->frames[t->slots[i] - 1];
			if (g->name == name && g->file == file && g->line == line && g->kind == kind &&
			    g->module == module && g->build_id == build_id)
				return t->slots[i] - 1;
		}
	}
	id = (uint32_t)p->nframes;
	p->frames = xgrow(p->frames, sizeof(*p->frames), p->nframes + 1, &p->frames_alloc);
	p->frames[id] = f;
	p->nframes++;
	table_insert(p, t, id, h, p->nframes, frame_hash, 1);
	return id;
}

uint32_t profile_frame(struct profile *p, enum frame_kind kind, uint32_t name,
		       uint32_t file, int32_t line)
{
	return profile_frame_module(p, kind, name, file, line, 0, 0);
}

static uint32_t node_child(struct profile *p, uint32_t parent, uint32_t frame)
{
	struct pf_table *t = &p->node_index;
	uint64_t h = node_hash_of(parent, frame);
	uint32_t id;

	if (t->cap) {
		for (size_t i = (size_t)h & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1)) {
			const struct pf_node *n = &p->nodes[t->slots[i] - 1];
			if (n->parent == parent && n->frame == frame)
				return t->slots[i] - 1;
		}
	}
	id = (uint32_t)p->nnodes;
	p->nodes = xgrow(p->nodes, sizeof(*p->nodes), p->nnodes + 1, &p->nodes_alloc);
	p->nodes[id].parent = parent;
	p->nodes[id].frame = frame;
	p->nodes[id].depth = p->nodes[parent].depth + 1;
	p->nnodes++;
	table_insert(p, t, id, h, p->nnodes, node_hash, 1);
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
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].pid == pid && p->threads[i].tid == tid) {
			if (name)
				p->threads[i].name = profile_cstring(p, name);
			return (uint32_t)i;
		}
	}
	p->threads = xgrow(p->threads, sizeof(*p->threads), p->nthreads + 1, &p->threads_alloc);
	p->threads[p->nthreads].pid = pid;
	p->threads[p->nthreads].tid = tid;
	memset(&p->threads[p->nthreads], 0, sizeof(p->threads[p->nthreads]));
	p->threads[p->nthreads].pid = pid;
	p->threads[p->nthreads].tid = tid;
	p->threads[p->nthreads].name = profile_cstring(p, name ? name : "");
	return (uint32_t)p->nthreads++;
}

void profile_add(struct profile *p, uint32_t thread, uint32_t node, uint64_t count)
{
	struct pf_table *t = &p->count_index;
	uint64_t h = count_hash_of(thread, node);
	uint32_t id;

	if (t->cap) {
		for (size_t i = (size_t)h & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1)) {
			struct pf_count *c = &p->counts[t->slots[i] - 1];
			if (c->thread == thread && c->node == node) {
				c->count += count;
				return;
			}
		}
	}
	id = (uint32_t)p->ncounts;
	p->counts = xgrow(p->counts, sizeof(*p->counts), p->ncounts + 1, &p->counts_alloc);
	p->counts[id].thread = thread;
	p->counts[id].node = node;
	p->counts[id].count = count;
	p->ncounts++;
	table_insert(p, t, id, h, p->ncounts, count_hash, 0);
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
