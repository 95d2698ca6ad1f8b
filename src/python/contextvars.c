/*
 * Implementation of contextvars.h: a HAMT lookup over another process's
 * memory, following Python/hamt.c's hamt_node_find (bitmap nodes index
 * their key/value pairs by the popcount of the bits below the hash's 5 bits
 * at that level; array nodes hold 32 sub-nodes; collision nodes a list of
 * pairs of one hash), with the offsets of struct py_objects_layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>

#include "python/contextvars.h"
#include "util/util.h"

#define VAR_RETRY_NS 1000000000ull       /* a variable not found: look again after */
#define VAR_RECHECK_NS 10000000000ull    /* a variable found: look its name up again after */
#define WORDS_SPAN_MAX 128
#define VALUE_READ PY_CTXVALUE_READ      /* an object's head and a short str's text, one read */

static const char *const type_names[PY_CTX_TYPE_COUNT][2] = {
	[PY_CTX_TYPE_CONTEXT] = { "_contextvars.Context", "Context" },      /* 3.10+, 3.8/3.9 */
	[PY_CTX_TYPE_VAR] = { "_contextvars.ContextVar", "ContextVar" },
	[PY_CTX_TYPE_HAMT] = { "hamt", NULL },
	[PY_CTX_TYPE_BITMAP] = { "hamt_bitmap_node", NULL },
	[PY_CTX_TYPE_ARRAY] = { "hamt_array_node", NULL },
	[PY_CTX_TYPE_COLLISION] = { "hamt_collision_node", NULL },
};

int py_contextvars_supported(const struct py_offsets *o, const char *version, struct strbuf *why)
{
	if (o->free_threaded) {
		strbuf_addf(why, "Python %s is a free-threaded build: its context variables cannot "
			    "be read yet", version);
		return -ENOTSUP;
	}
	if (!o->objects.known || o->objects.tstate_context < 0 || o->objects.hamt_root < 0) {
		strbuf_addf(why, "Python %s: no layout of its context variables", version);
		return -ENOTSUP;
	}
	return 0;
}

int py_contextvars_init(struct py_contextvars *cv, struct py_objects *ob)
{
	const struct py_objects_layout *lo = ob->lo;
	const int32_t need[] = {
		lo->tstate_context, lo->context_vars, lo->contextvar_default, lo->contextvar_hash,
		lo->hamt_root, lo->hamt_count, lo->hamt_bitmap_size, lo->hamt_bitmap_bitmap,
		lo->hamt_bitmap_array, lo->hamt_array_array, lo->hamt_collision_size,
		lo->hamt_collision_array, lo->type_name, lo->type_flags,
	};

	memset(cv, 0, sizeof(*cv));
	cv->ob = ob;
	cv->lo = lo;
	if (!lo->known || lo->hamt_array_node_size != 32)
		return -ENOTSUP;
	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		if (need[i] < 0)
			return -ENOTSUP;
	return 0;
}

void py_contextvars_release(struct py_contextvars *cv)
{
	memset(cv, 0, sizeof(*cv));
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= PY_CTXVAR_NAME_MAX)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int py_contextvars_add(struct py_contextvars *cv, const char *module, const char *variable,
		       const char *attr)
{
	struct py_ctxvar *v;

	if (!name_ok(module) || !name_ok(variable) || (attr && !name_ok(attr)))
		return -EINVAL;
	if (cv->nvars == PY_CTXVARS_MAX)
		return -E2BIG;
	v = &cv->vars[cv->nvars];
	memset(v, 0, sizeof(*v));
	memcpy(v->module, module, strlen(module) + 1);
	memcpy(v->variable, variable, strlen(variable) + 1);
	if (attr)
		memcpy(v->attr, attr, strlen(attr) + 1);
	return (int)cv->nvars++;
}

/*
 * The words at offs[i] of the object at addr (8 bytes each), in one read of
 * their span where it is short. 0 or -errno (-ENOTSUP: an offset is absent).
 */
static int read_words(struct py_contextvars *cv, uint64_t addr, const int32_t *offs, size_t n,
		      uint64_t *out)
{
	struct target_mem *mem = cv->ob->r->mem;
	uint8_t buf[WORDS_SPAN_MAX];
	int32_t lo = INT32_MAX, hi = 0;
	int ret;

	if (!addr || (addr & 7))
		return -EFAULT;
	for (size_t i = 0; i < n; i++) {
		if (offs[i] < 0)
			return -ENOTSUP;
		if (offs[i] < lo)
			lo = offs[i];
		if (offs[i] + 8 > hi)
			hi = offs[i] + 8;
	}
	if (hi - lo <= WORDS_SPAN_MAX) {
		ret = mem_read_uncached(mem, addr + (uint64_t)lo, buf, (size_t)(hi - lo));
		for (size_t i = 0; !ret && i < n; i++)
			out[i] = load_u64(buf, (size_t)(offs[i] - lo));
		return ret;
	}
	for (size_t i = 0; i < n; i++)
		if ((ret = mem_read_uncached(mem, addr + (uint64_t)offs[i], &out[i], 8)))
			return ret;
	return 0;
}

/*
 * Is type (an object's ob_type) the static type of kind want? Learnt once
 * by name (never from a heap type: a class may take any name), then by
 * address. 1, 0, or -errno.
 */
static int type_is(struct py_contextvars *cv, uint64_t type, enum py_ctx_type want)
{
	const struct py_type_info *t;
	int ret;

	if (cv->types[want])
		return type == cv->types[want];
	ret = py_type_at(cv->ob, type, &t);
	if (ret)
		return ret;
	if (t->flags & cv->lo->tpflags_heaptype)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (type_names[want][i] && !strcmp(t->name, type_names[want][i])) {
			cv->types[want] = type;
			return 1;
		}
	}
	return 0;
}

/* The object's type is of kind want: 0, or -EFAULT (another type, unreadable). */
static int check_type(struct py_contextvars *cv, uint64_t type, enum py_ctx_type want)
{
	return type_is(cv, type, want) == 1 ? 0 : -EFAULT;
}

/* Which node type: PY_CTX_TYPE_BITMAP, _ARRAY or _COLLISION, or -EFAULT. */
static int node_kind(struct py_contextvars *cv, uint64_t type)
{
	for (int k = PY_CTX_TYPE_BITMAP; k <= PY_CTX_TYPE_COLLISION; k++)
		if (type_is(cv, type, (enum py_ctx_type)k) == 1)
			return k;
	return -EFAULT;
}

/*
 * Nodes read during one sample's lookups: the labels of a sample walk one
 * HAMT, so its root (and any node they share) is read once. Each node is
 * read whole in one go where it can be (NODE_READ bytes: a head and every
 * slot of the largest bitmap or array node), else its head, then slot by slot.
 */
#define NODE_READ 560
#define WALK_NODES 4

struct node_copy {
	uint64_t addr;
	size_t len;                   /* bytes of data read from addr */
	uint8_t data[NODE_READ];
};

struct walk {
	struct node_copy nodes[WALK_NODES];
	size_t n, next;
};

static int node_get(struct py_contextvars *cv, struct walk *w, uint64_t addr,
		    const struct node_copy **out)
{
	const struct py_objects_layout *lo = cv->lo;
	const struct py_offsets *o = cv->ob->r->off;
	const int32_t head[] = { o->object_type, lo->hamt_bitmap_size, lo->hamt_bitmap_bitmap,
				 lo->hamt_collision_size, lo->hamt_collision_hash };
	struct node_copy *nc;
	int32_t need = 0;
	int ret;

	for (size_t i = 0; i < w->n; i++) {
		if (w->nodes[i].addr == addr) {
			*out = &w->nodes[i];
			return 0;
		}
	}
	if (!addr || (addr & 7))
		return -EFAULT;
	for (size_t i = 0; i < ARRAY_SIZE(head); i++) {
		if (head[i] < 0 || head[i] + 8 > NODE_READ)
			return -ENOTSUP;
		if (head[i] + 8 > need)
			need = head[i] + 8;
	}
	nc = &w->nodes[w->n < WALK_NODES ? w->n++ : w->next++ % WALK_NODES];
	nc->addr = 0;
	if (!mem_read_uncached(cv->ob->r->mem, addr, nc->data, NODE_READ)) {
		nc->len = NODE_READ;
	} else {
		/* near the end of a mapping: the head only, the slots when needed */
		if ((ret = mem_read_uncached(cv->ob->r->mem, addr, nc->data, (size_t)need)))
			return ret;
		nc->len = (size_t)need;
	}
	nc->addr = addr;
	*out = nc;
	return 0;
}

/* len bytes at offset off of a node: from its copy, or read. */
static int node_bytes(struct py_contextvars *cv, const struct node_copy *nc, size_t off, void *buf,
		      size_t len)
{
	if (off + len <= nc->len) {
		memcpy(buf, nc->data + off, len);
		return 0;
	}
	return mem_read_uncached(cv->ob->r->mem, nc->addr + off, buf, len);
}

/* A collision node of size slots: the value of key among its pairs. */
static int collision_find(struct py_contextvars *cv, const struct node_copy *nc, int64_t size,
			  uint64_t key, uint64_t *value)
{
	uint64_t slots[2 * PY_HAMT_COLLISION_MAX];
	int ret;

	if (size < 2 || (size & 1) || size > 2 * PY_HAMT_COLLISION_MAX)
		return -EFAULT;
	ret = node_bytes(cv, nc, (size_t)cv->lo->hamt_collision_array, slots, (size_t)size * 8);
	if (ret)
		return ret;
	for (int64_t i = 0; i < size; i += 2) {
		if (slots[i] == key) {
			*value = slots[i + 1];
			return *value && !(*value & 7) ? 0 : -EFAULT;
		}
	}
	return -ENOENT;
}

/* The walk from node, the HAMT's root (hamt_node_find). */
static int node_find(struct py_contextvars *cv, struct walk *w, uint64_t node, int32_t hash,
		     uint64_t key, uint64_t *value)
{
	const struct py_objects_layout *lo = cv->lo;
	const struct py_offsets *o = cv->ob->r->off;
	uint64_t path[PY_HAMT_DEPTH_MAX];
	uint32_t shift = 0;

	for (int depth = 0; depth < PY_HAMT_DEPTH_MAX; depth++, shift += 5) {
		const struct node_copy *nc;
		uint64_t pair[2], v;
		int kind, ret;

		for (int i = 0; i < depth; i++)
			if (path[i] == node)
				return -ELOOP;      /* a cycle: no HAMT has one */
		path[depth] = node;
		if ((ret = node_get(cv, w, node, &nc)))
			return ret;
		kind = node_kind(cv, load_u64(nc->data, (size_t)o->object_type));
		if (kind < 0)
			return kind;
		if (kind == PY_CTX_TYPE_COLLISION)
			return collision_find(cv, nc, (int64_t)load_u64(nc->data,
							(size_t)lo->hamt_collision_size), key, value);
		if (shift > 30)
			return -EFAULT;     /* 7 levels use all 32 bits: only collisions below */
		if (kind == PY_CTX_TYPE_ARRAY) {
			uint32_t idx = ((uint32_t)hash >> shift) & 0x1f;

			if ((ret = node_bytes(cv, nc, (size_t)lo->hamt_array_array + 8 * idx, &v, 8)))
				return ret;
			if (!v)
				return -ENOENT;
			if (v & 7)
				return -EFAULT;
			node = v;
			continue;
		}
		/* A bitmap node: size slots, two per bit set. */
		{
			int64_t size = (int64_t)load_u64(nc->data, (size_t)lo->hamt_bitmap_size);
			uint32_t bitmap = (uint32_t)load_u64(nc->data, (size_t)lo->hamt_bitmap_bitmap);
			uint32_t bit = 1u << (((uint32_t)hash >> shift) & 0x1f);
			uint32_t idx;

			if (size < 0 || size > 64 || size != 2 * __builtin_popcount(bitmap))
				return -EFAULT;
			if (!(bitmap & bit))
				return -ENOENT;
			idx = (uint32_t)__builtin_popcount(bitmap & (bit - 1));
			if ((ret = node_bytes(cv, nc, (size_t)lo->hamt_bitmap_array + 16 * idx, pair,
					      sizeof(pair))))
				return ret;
			if ((pair[0] & 7) || (pair[1] & 7) || !pair[1])
				return -EFAULT;
			if (pair[0]) {
				if (pair[0] != key)
					return -ENOENT;
				*value = pair[1];
				return 0;
			}
			/* no key: the value is the sub-node of the keys sharing these bits */
			node = pair[1];
		}
	}
	return -ELOOP;
}

/* The root of the HAMT object hamt: 0, -ENOENT (empty), -errno. */
static int hamt_root(struct py_contextvars *cv, uint64_t hamt, uint64_t *root)
{
	const int32_t offs[] = { cv->ob->r->off->object_type, cv->lo->hamt_root, cv->lo->hamt_count };
	uint64_t w[3];
	int ret;

	if ((ret = read_words(cv, hamt, offs, ARRAY_SIZE(offs), w)))
		return ret;
	if ((ret = check_type(cv, w[0], PY_CTX_TYPE_HAMT)))
		return ret;
	if ((int64_t)w[2] < 0 || !w[1])
		return -EFAULT;
	*root = w[1];
	return w[2] ? 0 : -ENOENT;
}

int py_hamt_find(struct py_contextvars *cv, uint64_t hamt, int32_t hash, uint64_t key,
		 uint64_t *value)
{
	struct walk w = { .n = 0 };
	uint64_t root;
	int ret = hamt_root(cv, hamt, &root);

	return ret ? ret : node_find(cv, &w, root, hash, key, value);
}

/* The variable's object, default and hash, looked up again when due. 0 or -errno. */
static int var_resolve(struct py_contextvars *cv, struct py_ctxvar *v)
{
	const int32_t offs[] = { cv->ob->r->off->object_type, cv->lo->contextvar_default,
				 cv->lo->contextvar_hash };
	uint64_t now = fw_now_ns(), var, w[3];
	int ret;

	if (v->checked_ns && now - v->checked_ns < (v->var ? VAR_RECHECK_NS : VAR_RETRY_NS))
		return v->var ? 0 : -ENOENT;
	v->checked_ns = now;
	v->var = 0;
	ret = py_module_attr(cv->ob, v->module, v->variable, &var);
	if (!ret && v->attr[0])
		ret = py_obj_attr(cv->ob, var, v->attr, &var);
	if (!ret)
		ret = read_words(cv, var, offs, ARRAY_SIZE(offs), w);
	if (!ret && type_is(cv, w[0], PY_CTX_TYPE_VAR) != 1)
		ret = -ENOENT;              /* a global of that name, but no ContextVar */
	if (ret)
		return ret == -EAGAIN ? -ENOENT : ret;
	if (w[1] & 7)
		return -EFAULT;
	v->var = var;
	v->dflt = w[1];
	v->hash = py_hamt_hash((int64_t)w[2]);
	return 0;
}

void py_ctxvalue_set(struct py_ctxvalue *out, enum py_ctxvalue_kind kind, const char *text)
{
	size_t n = strnlen(text, sizeof(out->text) - 1);

	out->kind = kind;
	out->obj = 0;
	memcpy(out->text, text, n);
	out->text[n] = '\0';
	out->len = n;
}

/*
 * A compact ASCII str whose text lies within the VALUE_READ bytes read at
 * its address (buf): its text, in that one read. 1 done, 0 not such a str.
 */
static int short_ascii(struct py_contextvars *cv, const uint8_t *buf, struct py_ctxvalue *out)
{
	const struct py_offsets *o = cv->ob->r->off;
	struct py_str_head h;
	uint64_t len;

	if (o->unicode_state < 0 || o->unicode_length < 0 || o->unicode_ascii_data <= 0 ||
	    o->unicode_state + 4 > VALUE_READ || o->unicode_length + 8 > VALUE_READ)
		return 0;
	h = py_str_head(o, buf);
	len = h.len;
	/* compact ASCII: the text follows the PyASCIIObject head */
	if (!py_str_compact_ascii(&h) || len > PY_CTXVALUE_CHARS ||
	    (uint64_t)o->unicode_ascii_data + len > VALUE_READ)
		return 0;
	for (uint64_t i = 0; i < len; i++)
		if (buf[o->unicode_ascii_data + i] >= 0x80)
			return 0;
	out->kind = PY_CTXVALUE_STR;
	memcpy(out->text, buf + o->unicode_ascii_data, (size_t)len);
	out->text[len] = '\0';
	out->len = strnlen(out->text, (size_t)len);     /* a str cut at its first NUL */
	return 1;
}

/*
 * The text of the object at obj: a str's, an int's, None, or "<TypeName>".
 * head: its first VALUE_READ bytes, read with the other values (NULL: that
 * read failed, an object near the end of a mapping: read it piecewise).
 */
static void render(struct py_contextvars *cv, uint64_t obj, const uint8_t *head,
		   struct py_ctxvalue *out)
{
	const struct py_objects_layout *lo = cv->lo;
	int32_t type_off = cv->ob->r->off->object_type;
	const struct py_type_info *t;
	char num[32], *s = NULL;
	int64_t n;
	int ret;

	if (head && type_off >= 0 && type_off + 8 <= VALUE_READ)
		ret = py_type_at(cv->ob, load_u64(head, (size_t)type_off), &t);
	else
		ret = py_obj_type(cv->ob, obj, &t);
	if (ret) {
		py_ctxvalue_set(out, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		return;
	}
	if ((t->flags & lo->tpflags_unicode) && head && short_ascii(cv, head, out))
		return;
	if (t->flags & lo->tpflags_unicode) {
		if (py_obj_str(cv->ob, obj, PY_CTXVALUE_CHARS, &s))
			py_ctxvalue_set(out, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		else
			py_ctxvalue_set(out, PY_CTXVALUE_STR, s);
		free(s);
		return;
	}
	if (t->flags & lo->tpflags_long) {
		ret = py_obj_long(cv->ob, obj, &n);
		if (ret == -ERANGE) {
			py_ctxvalue_set(out, PY_CTXVALUE_OTHER, "<int>");
		} else if (ret) {
			py_ctxvalue_set(out, PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		} else if (!strcmp(t->name, "bool") && !(t->flags & lo->tpflags_heaptype)) {
			py_ctxvalue_set(out, PY_CTXVALUE_INT, n ? "True" : "False");
		} else {
			xsnprintf(num, sizeof(num), "%" PRId64, n);
			py_ctxvalue_set(out, PY_CTXVALUE_INT, num);
		}
		return;
	}
	if (py_obj_is_none(cv->ob, obj) == 1) {
		py_ctxvalue_set(out, PY_CTXVALUE_NONE, "None");
		return;
	}
	/* tp_name was checked free of control characters; outputs escape the rest */
	out->kind = PY_CTXVALUE_OTHER;
	xsnprintf(out->text, sizeof(out->text), "<%s>", t->name);
	out->len = strlen(out->text);
}

/* [*lo, *hi): the bytes covering the words at offs. 0, or -ENOTSUP (absent, or too wide). */
static int span_of(const int32_t *offs, size_t n, int32_t *lo, int32_t *hi)
{
	*lo = INT32_MAX;
	*hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (offs[i] < 0)
			return -ENOTSUP;
		if (offs[i] < *lo)
			*lo = offs[i];
		if (offs[i] + 8 > *hi)
			*hi = offs[i] + 8;
	}
	return n && *hi - *lo <= WORDS_SPAN_MAX ? 0 : -ENOTSUP;
}

/*
 * Read pieces in one system call; where the memory reader copies what each
 * tick read at the next tick's start (the vm backend), these are copied
 * too, so the thread state's context is of the stack's own instant: order
 * is where they go in that copy (the thread state's words with it, the
 * variables' caches and values after).
 */
static int read_pieces(struct py_contextvars *cv, struct mem_iov *iov, size_t n,
		       enum mem_order order)
{
	struct target_mem *mem = cv->ob->r->mem;
	enum mem_order saved = mem->order;
	int ret;

	mem_set_order(mem, order);
	ret = mem_read_pieces(mem, iov, n);
	mem_set_order(mem, saved);
	return ret;
}

/*
 * The values of the variables i with status[i] == 1 in context ctx (a
 * PyContext *), by a walk of its HAMT: value[i] and status[i] 0, or why
 * not (-ENOENT: not set there, -errno). The context, its HAMT object and
 * the nodes on the way are read once for all of them. The context's words
 * through the reader's pieces: a thread's context stays at one address
 * while its variables change (set() swaps ctx_vars), so where ticks are
 * copied the next copy has them of the stack's own instant.
 */
static void walk_context(struct py_contextvars *cv, uint64_t ctx, size_t n, int *status,
			 uint64_t *value)
{
	const int32_t offs[] = { cv->ob->r->off->object_type, cv->lo->context_vars };
	uint8_t cbytes[WORDS_SPAN_MAX];
	uint64_t root = 0, w[2];
	struct mem_iov ciov;
	struct walk walk = { .n = 0 };
	int32_t xlo, xhi;
	int ret = 1;

	for (size_t i = 0; i < n; i++) {
		if (status[i] != 1)
			continue;
		if (ret == 1) {
			ret = span_of(offs, ARRAY_SIZE(offs), &xlo, &xhi);
			if (!ret && (!ctx || (ctx & 7)))
				ret = -EFAULT;
			if (!ret) {
				ciov = (struct mem_iov){ ctx + (uint64_t)xlo, cbytes, (size_t)(xhi - xlo), 0 };
				ret = read_pieces(cv, &ciov, 1, MEM_ORDER_LATE);
				ret = ret < 0 ? ret : ciov.ok ? 0 : -EFAULT;
			}
			if (!ret) {
				w[0] = load_u64(cbytes, (size_t)(offs[0] - xlo));
				w[1] = load_u64(cbytes, (size_t)(offs[1] - xlo));
				ret = check_type(cv, w[0], PY_CTX_TYPE_CONTEXT);
			}
			if (!ret)
				ret = hamt_root(cv, w[1], &root);
		}
		status[i] = ret;
		if (!ret) {
			cv->stats.walked++;
			status[i] = node_find(cv, &walk, root, cv->vars[i].hash, cv->vars[i].var,
					      &value[i]);
		}
	}
}

/*
 * Where each value is (value[i]; status[i] 0), or why not (-ENOENT: not
 * set in the thread's context, -errno): the thread state and every
 * variable's own cache in one system call; the context's HAMT walked only
 * for variables whose cache is not the thread's.
 */
static void locate(struct py_contextvars *cv, uint64_t tstate, size_t n, const int *resolved,
		   int *status, uint64_t *value)
{
	const struct py_objects_layout *lo = cv->lo;
	const int32_t toffs[] = { lo->tstate_context, lo->tstate_context_ver, lo->tstate_id };
	const int32_t coffs[] = { lo->contextvar_cached, lo->contextvar_cached_tsid,
				  lo->contextvar_cached_tsver };
	struct mem_iov iov[1 + PY_CTXVARS_MAX];
	uint8_t tbuf[WORDS_SPAN_MAX], cbuf[PY_CTXVARS_MAX][WORDS_SPAN_MAX];
	int32_t tlo, thi, clo = 0, chi = 0;
	int have_ver = lo->tstate_context_ver >= 0 && lo->tstate_id >= 0, use_cache, slot[PY_CTXVARS_MAX];
	uint64_t ctx, ver = 0, id = 0;
	size_t nio = 0;
	int ret;

	if (span_of(toffs, have_ver ? 3 : 1, &tlo, &thi)) {
		for (size_t i = 0; i < n; i++)
			status[i] = -ENOTSUP;
		return;
	}
	use_cache = have_ver && !span_of(coffs, 3, &clo, &chi);
	iov[nio++] = (struct mem_iov){ tstate + (uint64_t)tlo, tbuf, (size_t)(thi - tlo), 0 };
	for (size_t i = 0; i < n; i++) {
		slot[i] = -1;
		if (resolved[i] || !use_cache)
			continue;
		slot[i] = (int)nio;
		iov[nio++] = (struct mem_iov){ cv->vars[i].var + (uint64_t)clo, cbuf[i],
					       (size_t)(chi - clo), 0 };
	}
	ret = tstate && !(tstate & 7) ? read_pieces(cv, iov, nio, MEM_ORDER_ANCHOR) : -EFAULT;
	if (ret < 0 || !iov[0].ok) {
		for (size_t i = 0; i < n; i++)
			status[i] = ret < 0 ? ret : -EFAULT;
		return;
	}
	ctx = load_u64(tbuf, (size_t)(lo->tstate_context - tlo));
	if (have_ver) {
		ver = load_u64(tbuf, (size_t)(lo->tstate_context_ver - tlo));
		id = load_u64(tbuf, (size_t)(lo->tstate_id - tlo));
	}
	for (size_t i = 0; i < n; i++) {
		status[i] = resolved[i];
		if (status[i])
			continue;
		if (!ctx) {
			status[i] = -ENOENT;     /* the thread never entered a context: nothing set */
			continue;
		}
		/* What ContextVar.get() would answer from the variable's cache. */
		if (slot[i] >= 0 && iov[slot[i]].ok) {
			uint64_t cached = load_u64(cbuf[i], (size_t)(coffs[0] - clo));

			if (cached && !(cached & 7) &&
			    load_u64(cbuf[i], (size_t)(coffs[1] - clo)) == id &&
			    load_u64(cbuf[i], (size_t)(coffs[2] - clo)) == ver) {
				cv->stats.cached++;
				value[i] = cached;
				continue;
			}
		}
		status[i] = 1;               /* else the context's HAMT */
	}
	walk_context(cv, ctx, n, status, value);
}

/*
 * Each variable's text (out) from where locate found its value, or from
 * why not: its default where it is not set, a placeholder. The values'
 * heads (and a short str's text) in one system call, or, where a reader
 * elsewhere found the value (found: NULL none), as it read them then.
 */
static void values_render_from(struct py_contextvars *cv, size_t nvars, const int *resolved,
			       int *status, uint64_t *value, const struct py_ctx_found *found,
			       struct py_ctxvalue *out)
{
	struct mem_iov iov[PY_CTXVARS_MAX];
	uint8_t vbuf[PY_CTXVARS_MAX][VALUE_READ];
	const uint8_t *head[PY_CTXVARS_MAX];
	int slot[PY_CTXVARS_MAX];
	size_t nio = 0;
	int ret;

	for (size_t i = 0; i < nvars; i++) {
		slot[i] = -1;
		head[i] = NULL;
		if (resolved[i] == -ENOENT || status[i] == -EAGAIN) {
			py_ctxvalue_set(&out[i], PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
			continue;
		}
		if (status[i] == -ENOENT && cv->vars[i].dflt) {
			value[i] = cv->vars[i].dflt;   /* not set: what get() gives, its default */
			status[i] = 1;
		}
		if (status[i] == -ENOENT) {
			py_ctxvalue_set(&out[i], PY_CTXVALUE_UNSET, PY_CTXVALUE_TEXT_UNSET);
		} else if (status[i] < 0) {
			cv->stats.unreadable++;
			py_ctxvalue_set(&out[i], PY_CTXVALUE_UNREADABLE, PY_CTXVALUE_TEXT_UNREADABLE);
		} else if (!status[i] && found && found[i].head) {
			head[i] = found[i].head;     /* read with the sample */
			slot[i] = INT_MAX;
		} else {
			status[i] = 0;
			slot[i] = (int)nio;
			iov[nio++] = (struct mem_iov){ value[i], vbuf[i], VALUE_READ, 0 };
		}
	}
	ret = nio ? read_pieces(cv, iov, nio, MEM_ORDER_LATE) : 0;
	for (size_t i = 0; i < nvars; i++) {
		struct target_mem *mem = cv->ob->r->mem;

		if (slot[i] < 0)
			continue;
		if (slot[i] != INT_MAX) {
			head[i] = ret >= 0 && iov[slot[i]].ok ? vbuf[i] : NULL;
			render(cv, value[i], head[i], &out[i]);
		} else {
			/*
			 * Read then: every read of the value within its copy is
			 * served from it (an int's digits, a short str's text of
			 * any kind); only a str longer than that is read now.
			 */
			mem_overlay_begin(mem);
			mem_overlay_add(mem, value[i], head[i], VALUE_READ);
			mem_overlay_activate(mem);
			render(cv, value[i], head[i], &out[i]);
			mem_overlay_end(mem);
		}
		if (out[i].kind == PY_CTXVALUE_UNREADABLE)
			cv->stats.unreadable++;
		else
			out[i].obj = value[i];
	}
}

static void values_render(struct py_contextvars *cv, size_t nvars, const int *resolved,
			  int *status, uint64_t *value, struct py_ctxvalue *out)
{
	values_render_from(cv, nvars, resolved, status, value, NULL, out);
}

/* Variables 0 .. n-1 resolved (resolved[i]: 0, or why not); those past nvars have none. */
static size_t vars_resolve(struct py_contextvars *cv, size_t n, int *resolved,
			   struct py_ctxvalue *out)
{
	size_t nvars = n < cv->nvars ? n : cv->nvars;

	for (size_t i = nvars; i < n; i++)
		py_ctxvalue_set(&out[i], PY_CTXVALUE_NO_VARIABLE, PY_CTXVALUE_TEXT_NO_VARIABLE);
	for (size_t i = 0; i < nvars; i++) {
		cv->stats.lookups++;
		resolved[i] = var_resolve(cv, &cv->vars[i]);
	}
	return nvars;
}

void py_context_values(struct py_contextvars *cv, uint64_t tstate, struct py_ctxvalue *out,
		       size_t n)
{
	uint64_t value[PY_CTXVARS_MAX];
	int resolved[PY_CTXVARS_MAX], status[PY_CTXVARS_MAX];
	size_t nvars = vars_resolve(cv, n, resolved, out);

	locate(cv, tstate, nvars, resolved, status, value);
	values_render(cv, nvars, resolved, status, value, out);
}

void py_context_values_in(struct py_contextvars *cv, uint64_t ctx, struct py_ctxvalue *out,
			  size_t n)
{
	struct target_mem *mem = cv->ob->r->mem;
	uint64_t value[PY_CTXVARS_MAX];
	int resolved[PY_CTXVARS_MAX], status[PY_CTXVARS_MAX];
	size_t nvars = vars_resolve(cv, n, resolved, out);

	/*
	 * Read now, from the target: no copy of a tick's serves these, and
	 * none is planned for the next (they are no thread's stack instant).
	 */
	mem_live_begin(mem);
	mem_uncached_begin(mem);
	for (size_t i = 0; i < nvars; i++)
		status[i] = resolved[i] ? resolved[i] : ctx ? 1 : -ENOENT;
	walk_context(cv, ctx, nvars, status, value);
	values_render(cv, nvars, resolved, status, value, out);
	mem_uncached_end(mem);
	mem_live_end(mem);
}

void py_context_values_found(struct py_contextvars *cv, uint64_t ctx_type, uint64_t hamt_type,
			     const struct py_ctx_found *found, struct py_ctxvalue *out, size_t n)
{
	uint64_t value[PY_CTXVARS_MAX];
	int resolved[PY_CTXVARS_MAX], status[PY_CTXVARS_MAX];
	size_t nvars = vars_resolve(cv, n, resolved, out);
	int walk_ok = -1;

	for (size_t i = 0; i < nvars; i++) {
		const struct py_ctx_found *f = &found[i];

		value[i] = f->value;
		if (resolved[i]) {
			status[i] = resolved[i];
			continue;
		}
		/* found now, not known to the reader then: not read */
		status[i] = f->status == -ESRCH ? -EAGAIN : f->status;
		if (status[i] == 0 && f->cached) {
			cv->stats.cached++;
			continue;
		}
		/*
		 * A value, or none, found in the context: right only if the
		 * context and its HAMT were theirs (no context at all: ctx_type 0,
		 * nothing set). As locate() checks them before it walks.
		 */
		if (status[i] == 0 || (status[i] == -ENOENT && ctx_type)) {
			if (walk_ok < 0)
				walk_ok = !check_type(cv, ctx_type, PY_CTX_TYPE_CONTEXT) &&
					  !check_type(cv, hamt_type, PY_CTX_TYPE_HAMT);
			if (status[i] == 0)
				cv->stats.walked++;
			if (!walk_ok)
				status[i] = -EFAULT;
		}
	}
	values_render_from(cv, nvars, resolved, status, value, found, out);
}

void py_contextvars_var(struct py_contextvars *cv, size_t i, uint64_t *var, int32_t *hash)
{
	*var = 0;
	*hash = 0;
	if (i >= cv->nvars || var_resolve(cv, &cv->vars[i]))
		return;
	*var = cv->vars[i].var;
	*hash = cv->vars[i].hash;
}

void py_contextvars_node_types(const struct py_contextvars *cv, uint64_t out[3])
{
	out[0] = cv->types[PY_CTX_TYPE_BITMAP];
	out[1] = cv->types[PY_CTX_TYPE_ARRAY];
	out[2] = cv->types[PY_CTX_TYPE_COLLISION];
}

int py_contextvars_node_kind(struct py_contextvars *cv, uint64_t type)
{
	return node_kind(cv, type);
}
