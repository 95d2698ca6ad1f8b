/*
 * Implementation of thread_names.h: threading._active read through objects.h.
 */
#include <errno.h>

#include "python/thread_names.h"
#include "util/util.h"

void py_thread_names_init(struct py_thread_names *tn, struct py_objects *ob)
{
	memset(tn, 0, sizeof(*tn));
	tn->ob = ob;
}

static void names_clear(struct py_thread_names *tn)
{
	for (size_t i = 0; i < tn->n; i++)
		free(tn->names[i].name);
	tn->n = 0;
	hidx_clear(&tn->index);
}

static uint64_t tid_hash(pid_t tid)
{
	return hash_mix64((uint64_t)(uint32_t)tid);
}

static uint64_t name_hash(const void *owner, uint32_t id)
{
	return tid_hash(((const struct py_thread_names *)owner)->names[id].tid);
}

void py_thread_names_release(struct py_thread_names *tn)
{
	names_clear(tn);
	hidx_release(&tn->index);
	free(tn->names);
	free(tn->items);
	memset(tn, 0, sizeof(*tn));
}

/* One Thread object: its kernel thread id and name. 0 or -errno. */
static int read_thread(struct py_objects *ob, uint64_t thread, pid_t *tid, char **name)
{
	uint64_t name_obj, native;
	int64_t id;
	int ret;

	ret = py_obj_attr(ob, thread, "_native_id", &native);
	if (!ret)
		ret = py_obj_long(ob, native, &id);
	if (ret)
		return ret;      /* not started yet (None), or unreadable */
	if (id <= 0 || id > INT32_MAX)
		return -EFAULT;
	ret = py_obj_attr(ob, thread, "_name", &name_obj);
	if (!ret)
		ret = py_obj_str(ob, name_obj, PY_THREAD_NAME_MAX, name);
	if (ret)
		return ret;
	*tid = (pid_t)id;
	return 0;
}

/*
 * threading._active's entries into tn->items, grown (and read again) while
 * they fill it, up to PY_THREAD_NAMES_MAX. Kept between reads: a table's
 * worth of PY_THREAD_NAMES_MAX (256 KiB) allocated at each read was a
 * mapping made and unmapped each time, its pages faulted in anew (an
 * agent's fixed cost, issue 25).
 */
static int read_items(struct py_thread_names *tn, uint64_t active, size_t *n)
{
	size_t cap = tn->items_alloc ? tn->items_alloc : 64;
	int ret;

	for (;;) {
		if (cap > tn->items_alloc) {
			tn->items = xrealloc(tn->items, cap * sizeof(*tn->items));
			tn->items_alloc = cap;
		}
		ret = py_dict_items(tn->ob, active, tn->items, cap, n);
		if (ret || *n < cap || cap >= PY_THREAD_NAMES_MAX)
			return ret;
		cap = cap * 4 < PY_THREAD_NAMES_MAX ? cap * 4 : PY_THREAD_NAMES_MAX;
	}
}

int py_thread_names_read(struct py_thread_names *tn, uint64_t now)
{
	struct py_kv *items;
	uint64_t active;
	uint64_t digest;
	size_t n = 0;
	int ret;

	tn->read_ns = now;
	tn->reads++;
	ret = py_module_attr(tn->ob, "threading", "_active", &active);
	if (!ret)
		ret = read_items(tn, active, &n);
	items = tn->items;
	if (!ret) {
		names_clear(tn);
		for (size_t i = 0; i < n; i++) {
			struct py_thread_name *t;
			char *name;
			pid_t tid;

			if (read_thread(tn->ob, items[i].value, &tid, &name))
				continue;    /* one unreadable thread does not hide the others */
			tn->names = xgrow(tn->names, sizeof(*tn->names), tn->n + 1, &tn->alloc);
			t = &tn->names[tn->n++];
			t->tid = tid;
			t->name = name;
			hidx_insert(&tn->index, tid_hash(tid), (uint32_t)(tn->n - 1), name_hash, tn);
		}
	}
	/* the same table as the last read (or the same failure): wait longer */
	digest = hash_mix64((uint64_t)(int64_t)ret);
	for (size_t i = 0; i < tn->n && !ret; i++)
		digest = hash_mix64(digest ^ hash_mix64((uint64_t)(uint32_t)tn->names[i].tid) ^
				    hash_bytes(tn->names[i].name, strlen(tn->names[i].name)));
	tn->every = look_again_after(tn->every, tn->reads > 1 && digest == tn->digest,
				     PY_THREAD_NAMES_REFRESH_NS, PY_THREAD_NAMES_STABLE_NS);
	tn->digest = digest;
	/*
	 * Stamped when it ended: a read of thousands of threads can take longer
	 * than PY_THREAD_NAMES_MISS_NS, and stamped at its start every lookup
	 * of a thread it did not name would read the whole table again.
	 */
	if (fw_now_ns() > tn->read_ns)
		tn->read_ns = fw_now_ns();
	tn->last_error = ret;
	if (ret)
		tn->failures++;
	return ret;
}

static const char *lookup(const struct py_thread_names *tn, pid_t tid)
{
	size_t pos = hidx_start(&tn->index, tid_hash(tid));

	/* the first entry of a tid listed twice, as a scan in order found */
	const char *found = NULL;
	uint32_t first = HIDX_NONE;

	for (uint32_t id; (id = hidx_next(&tn->index, &pos)) != HIDX_NONE;)
		if (tn->names[id].tid == tid && id < first) {
			first = id;
			found = tn->names[id].name;
		}
	return found;
}

const char *py_thread_name(struct py_thread_names *tn, pid_t tid, int young, uint64_t now)
{
	const char *name;

	if (!tn->ob)
		return NULL;
	if (!tn->read_ns || (now > tn->read_ns &&
			     now - tn->read_ns >= (tn->every ? tn->every : PY_THREAD_NAMES_REFRESH_NS)))
		py_thread_names_read(tn, now);
	name = lookup(tn, tid);
	/* A thread started since the last read: once more, not more than every 100 ms. */
	if (!name && young && now > tn->read_ns && now - tn->read_ns >= PY_THREAD_NAMES_MISS_NS) {
		py_thread_names_read(tn, now);
		name = lookup(tn, tid);
	}
	return name;
}
