/*
 * Implementation of reader.h: thread list, frame chain and code objects of a
 * CPython 3.8-3.15 interpreter, read from outside. The per-version
 * differences are all in struct py_offsets; the only branches here are on
 * its frame, instruction and line models.
 */
#include <errno.h>
#include <inttypes.h>

#include "python/linetable.h"
#include "python/reader.h"
#include "target/proc.h"
#include "util/strbuf.h"
#include "util/util.h"

#define PTHREAD_SCAN 2048
#define GLIBC_PTHREAD_TID_OFF 0x2d0
#define TABLE_MAX (1u << 20)
#define CODE_RECHECK_NS 1000000000ull
/* C stack copied below a cframe or entry frame, where nested calls put theirs. */
#define C_STACK_WINDOW 4096
/* Free-threaded 3.14+: the most thread-local bytecode copies a code object may have. */
#define TLBC_MAX (1 << 16)

void py_reader_init(struct py_reader *r, struct target_mem *mem, const struct py_target *t)
{
	memset(r, 0, sizeof(*r));
	r->mem = mem;
	r->target = t;
	r->off = &t->offsets;
	r->pthread_tid_off = -1;
	pidns_tids_init(&r->tids, t->pid);
}

static void code_free(struct py_code *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->file);
	free(c->table);
	free(c);
}

void py_reader_release(struct py_reader *r)
{
	for (size_t i = 0; i < r->codes_cap; i++)
		code_free(r->codes[i]);
	free(r->codes);
	pidns_tids_release(&r->tids);
	hidx_release(&r->states_by_tid);
	memset(r, 0, sizeof(*r));
}

/* ---- strings ---------------------------------------------------------- */

static void put_utf8(struct strbuf *sb, uint32_t c)
{
	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = 0xfffd;
	if (c < 0x80) {
		strbuf_addch(sb, (char)c);
	} else if (c < 0x800) {
		strbuf_addch(sb, (char)(0xc0 | (c >> 6)));
		strbuf_addch(sb, (char)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		strbuf_addch(sb, (char)(0xe0 | (c >> 12)));
		strbuf_addch(sb, (char)(0x80 | ((c >> 6) & 0x3f)));
		strbuf_addch(sb, (char)(0x80 | (c & 0x3f)));
	} else {
		strbuf_addch(sb, (char)(0xf0 | (c >> 18)));
		strbuf_addch(sb, (char)(0x80 | ((c >> 12) & 0x3f)));
		strbuf_addch(sb, (char)(0x80 | ((c >> 6) & 0x3f)));
		strbuf_addch(sb, (char)(0x80 | (c & 0x3f)));
	}
}

/*
 * Read a str object as UTF-8, at most cap code points. Compact strings only
 * (every code-object name is one); anything else is rejected.
 */
static int read_unicode(struct py_reader *r, uint64_t addr, size_t cap, char **out)
{
	const struct py_offsets *o = r->off;
	uint8_t head[128];
	struct strbuf sb = STRBUF_INIT;
	uint32_t state;
	uint64_t len;
	unsigned kind, compact, ascii;
	size_t hdr, nbytes;
	uint8_t *data;
	int ret;

	hdr = (size_t)o->unicode_compact_data;
	if (hdr > sizeof(head) || o->unicode_length < 0 || o->unicode_state < 0 ||
	    (size_t)o->unicode_length + 8 > hdr || (size_t)o->unicode_state + 4 > hdr)
		return -EFAULT;
	ret = mem_read(r->mem, addr, head, hdr);
	if (ret)
		return ret;
	len = load_u64(head, o->unicode_length);
	memcpy(&state, head + o->unicode_state, sizeof(state));
	kind = (state >> 2) & 7;
	compact = (state >> 5) & 1;
	ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) ||
	    len > (1u << 20))
		return -EFAULT;
	if (len > cap)
		len = cap;
	nbytes = (size_t)len * kind;
	data = xmalloc(nbytes + 1);
	ret = mem_read(r->mem, addr + (uint64_t)(ascii ? o->unicode_ascii_data : o->unicode_compact_data),
		       data, nbytes);
	if (ret) {
		free(data);
		return ret;
	}
	for (size_t i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1) {
			c = data[i];
		} else if (kind == 2) {
			uint16_t v;
			memcpy(&v, data + 2 * i, 2);
			c = v;
		} else {
			memcpy(&c, data + 4 * i, 4);
		}
		if (ascii && c >= 0x80) {
			free(data);
			strbuf_release(&sb);
			return -EFAULT;
		}
		put_utf8(&sb, c);
	}
	free(data);
	*out = strbuf_detach(&sb);
	return 0;
}

static int read_bytes(struct py_reader *r, uint64_t addr, uint8_t **out, uint32_t *len_out)
{
	const struct py_offsets *o = r->off;
	uint64_t len;
	uint8_t *buf;
	int ret;

	ret = mem_read_u64(r->mem, addr + (uint64_t)o->bytes_size, &len);
	if (ret)
		return ret;
	if (len > TABLE_MAX)
		return -EFAULT;
	buf = xmalloc((size_t)len + 1);
	ret = mem_read(r->mem, addr + (uint64_t)o->bytes_data, buf, (size_t)len);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	*len_out = (uint32_t)len;
	return 0;
}

/* ---- code objects ----------------------------------------------------- */

static size_t code_slot(const struct py_reader *r, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (r->codes_cap - 1);

	while (r->codes[i] && r->codes[i]->addr != addr)
		i = (i + 1) & (r->codes_cap - 1);
	return i;
}

static void code_cache_grow(struct py_reader *r)
{
	struct py_code **old = r->codes;
	size_t oldcap = r->codes_cap;

	r->codes_cap = oldcap ? oldcap * 2 : 256;
	r->codes = xcalloc(r->codes_cap, sizeof(*r->codes));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			r->codes[code_slot(r, old[i]->addr)] = old[i];
	free(old);
}

/*
 * What an object's reference count says of it. Freed, an object's memory
 * keeps its old contents until reused, but the allocator (pymalloc) writes
 * its free-list link over the count: a pointer or 0, never a count. 3.12's
 * interned strings are immortal (UINT_MAX). Versions whose table has no
 * count offset (3.13+, read through their debug offsets) say OBJ_LIVE:
 * there each frame's copied identity words decide.
 */
enum obj_state { OBJ_FREED, OBJ_LIVE, OBJ_IMMORTAL };

static enum obj_state obj_state(const struct py_offsets *o, const uint8_t *buf)
{
	uint64_t refcnt;

	if (o->object_refcnt == PYOFF_NONE)
		return OBJ_LIVE;
	refcnt = load_u64(buf, o->object_refcnt);
	if (refcnt == UINT32_MAX)
		return OBJ_IMMORTAL;
	return refcnt >= 1 && refcnt < UINT32_MAX ? OBJ_LIVE : OBJ_FREED;
}

/*
 * A code freed since the sample (bpf reads its records a few ms late;
 * short-lived code, as exec'd or compiled per request, is gone by then):
 * are the objects it names still the ones it held? Each must be freed as
 * well (its contents intact but for the count: read just before) or
 * immortal; a live mortal one may be another object at the same address
 * by now (py3.9: gen_19's name at the address of freed gen_0's, 3-6% of
 * code_churn's samples named wrongly before this check).
 */
static int freed_code_objects_intact(struct py_reader *r, const uint64_t *addrs, size_t n)
{
	const struct py_offsets *o = r->off;
	uint8_t head[16];

	if (o->object_refcnt == PYOFF_NONE || o->object_refcnt + 8 > (int32_t)sizeof(head))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (mem_read(r->mem, addrs[i], head, sizeof(head)) ||
		    obj_state(o, head) == OBJ_LIVE)
			return 0;
	return 1;
}

/* The code object's header: what read_code and the freshness check need. */
static int read_code_header(struct py_reader *r, uint64_t addr, uint8_t *buf, size_t *len)
{
	const struct py_offsets *o = r->off;
	size_t n = (size_t)o->code_size;

	if ((size_t)o->varobject_size + 8 > n)
		n = (size_t)o->varobject_size + 8;
	if (n > 512)
		return -EFAULT;
	*len = n;
	return mem_read(r->mem, addr, buf, n);
}

static uint64_t code_name_ptr(const struct py_offsets *o, const uint8_t *buf)
{
	return load_u64(buf, o->code_qualname != PYOFF_NONE ? o->code_qualname : o->code_name);
}

/*
 * Do the header words that say which code an object is (its name, file,
 * line table and first line) still hold what entry c was read from? buf
 * holds the target's bytes from the object's offset base on.
 */
static int code_id_matches(const struct py_offsets *o, const struct py_code *c,
			   const uint8_t *buf, int32_t base)
{
	int32_t name = o->code_qualname != PYOFF_NONE ? o->code_qualname : o->code_name;

	return load_u64(buf, name - base) == c->name_ptr &&
	       load_u64(buf, o->code_filename - base) == c->file_ptr &&
	       load_u64(buf, o->code_linetable - base) == c->table_ptr &&
	       load_i32(buf, o->code_firstlineno - base) == c->firstlineno;
}

static int read_code(struct py_reader *r, uint64_t addr, struct py_code **out)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[512];
	struct py_code *c;
	uint64_t type;
	size_t len;
	int ret, freed;

	ret = read_code_header(r, addr, buf, &len);
	if (ret)
		return ret;
	type = load_u64(buf, o->object_type);
	if (r->target->code_type_addr && type != r->target->code_type_addr)
		return -EFAULT;
	freed = obj_state(o, buf) == OBJ_FREED;
	c = xcalloc(1, sizeof(*c));
	c->addr = addr;
	c->firstlineno = load_i32(buf, o->code_firstlineno);
	c->name_ptr = code_name_ptr(o, buf);
	c->file_ptr = load_u64(buf, o->code_filename);
	c->table_ptr = load_u64(buf, o->code_linetable);
	c->code_units = o->instr_model == PY_INSTR_POINTER ?
		(int64_t)load_u64(buf, o->varobject_size) : -1;
	if (c->code_units > (1 << 24))
		c->code_units = -1;
	c->checked_ns = fw_now_ns();
	ret = read_unicode(r, c->name_ptr, PY_NAME_MAX, &c->name);
	if (!ret)
		ret = read_unicode(r, c->file_ptr, PY_FILE_MAX, &c->file);
	if (!ret)
		ret = read_bytes(r, c->table_ptr, &c->table, &c->table_len);
	if (ret || c->firstlineno < 0) {
		code_free(c);
		return ret ? ret : -EFAULT;
	}
	/*
	 * The strings were read after the header: a live code holds them
	 * alive, so if its words are unchanged (and it still lives) they are
	 * its own; a code freed before the first read keeps the objects it
	 * named only while they are freed too.
	 */
	ret = read_code_header(r, addr, buf, &len);
	if (!ret && (load_u64(buf, o->object_type) != type || !code_id_matches(o, c, buf, 0) ||
		     (obj_state(o, buf) == OBJ_FREED) != freed))
		ret = -EAGAIN;
	if (!ret && freed) {
		uint64_t named[] = { c->name_ptr, c->file_ptr, c->table_ptr };

		if (!freed_code_objects_intact(r, named, ARRAY_SIZE(named)))
			ret = -EAGAIN;
	}
	if (ret) {
		code_free(c);
		return ret;
	}
	for (int i = 0; i < 4; i++)
		c->line_cache_key[i] = -1;
	/*
	 * The interpreter's own shim code (3.13+ runs a class's __init__
	 * through _Py_InitCleanup, named and filed "__init__", line 0): not a
	 * user's frame. Compiled code starts at line 1.
	 */
	c->internal = c->firstlineno == 0 && !strcmp(c->name, c->file);
	*out = c;
	return 0;
}

void py_code_id_span(const struct py_offsets *o, int32_t *start, size_t *len)
{
	int32_t name = o->code_qualname != PYOFF_NONE ? o->code_qualname : o->code_name;
	int32_t words[] = { name, o->code_filename, o->code_linetable };
	int32_t lo = o->code_firstlineno, hi = o->code_firstlineno + 4;

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (words[i] < lo)
			lo = words[i];
		if (words[i] + 8 > hi)
			hi = words[i] + 8;
	}
	*start = lo;
	*len = (size_t)(hi - lo);
}

/* Is the cached entry still the code object at its address? */
static int code_still_valid(struct py_reader *r, struct py_code *c, uint64_t now)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[512];
	size_t len;

	if (now - c->checked_ns < CODE_RECHECK_NS)
		return 1;
	if (read_code_header(r, c->addr, buf, &len))
		return 0;
	if ((r->target->code_type_addr && load_u64(buf, o->object_type) != r->target->code_type_addr) ||
	    !code_id_matches(o, c, buf, 0))
		return 0;
	c->checked_ns = now;
	return 1;
}

static void code_cache_remove(struct py_reader *r, size_t slot)
{
	size_t i = slot, j = slot;

	code_free(r->codes[slot]);
	r->codes[slot] = NULL;
	r->codes_n--;
	/* Backward-shift deletion keeps linear probing intact. */
	for (;;) {
		size_t home;

		j = (j + 1) & (r->codes_cap - 1);
		if (!r->codes[j])
			break;
		home = (size_t)((r->codes[j]->addr * 0x9e3779b97f4a7c15ull) >> 20) & (r->codes_cap - 1);
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			r->codes[i] = r->codes[j];
			r->codes[j] = NULL;
			i = j;
		}
	}
}

/*
 * Look up a code object; entries are re-checked against the target at most
 * once a second (cheap), and dropped when the address now holds another one.
 */
static int reader_code(struct py_reader *r, uint64_t addr, struct py_code **out, uint64_t now)
{
	struct py_code *c;
	size_t slot;
	int ret;

	if (!addr || (addr & 7))
		return -EFAULT;
	if (r->codes_cap) {
		slot = code_slot(r, addr);
		if (r->codes[slot]) {
			mem_uncached_begin(r->mem);
			ret = code_still_valid(r, r->codes[slot], now);
			mem_uncached_end(r->mem);
			if (ret) {
				*out = r->codes[slot];
				return 0;
			}
			r->stats.code_stale++;
			code_cache_remove(r, slot);
		}
	}
	/*
	 * Read whole from the target as it is now: a copy (a tick's, or bpf's
	 * words of the sample's instant) may hold the header of a code freed
	 * since, whose strings' addresses hold other strings by now (py3.9
	 * under bpf, code_churn: gen_19's name on gen_0's header, 3-6% of
	 * samples). confirm_codes then holds the entry against the copy.
	 */
	mem_uncached_begin(r->mem);
	mem_live_begin(r->mem);
	ret = read_code(r, addr, &c);
	mem_live_end(r->mem);
	mem_uncached_end(r->mem);
	r->stats.code_misses++;
	if (ret) {
		r->stats.code_errors++;
		return ret;
	}
	if ((r->codes_n + 1) * 2 > r->codes_cap)
		code_cache_grow(r);
	r->codes[code_slot(r, addr)] = c;
	r->codes_n++;
	*out = c;
	return 0;
}

int py_reader_code(struct py_reader *r, uint64_t addr, struct py_code **out)
{
	return reader_code(r, addr, out, fw_now_ns());
}

/* Force the next lookup of this entry to re-check it against the target. */
static void code_mark_suspect(struct py_code *c)
{
	c->checked_ns = 0;
}

int py_code_line(struct py_code *c, const struct py_offsets *off, int64_t instr)
{
	int line;

	if (instr == PY_INSTR_UNKNOWN)
		return 0;
	if (instr < 0 || instr > INT32_MAX / 2)
		return c->firstlineno;
	for (int i = 0; i < 4; i++)
		if (c->line_cache_key[i] == (int32_t)instr)
			return c->line_cache_val[i];
	switch (off->line_model) {
	case PY_LINES_LNOTAB:
		line = linetable_lnotab_line(c->table, c->table_len, c->firstlineno, (int)instr);
		break;
	case PY_LINES_310:
		line = linetable_310_line(c->table, c->table_len, c->firstlineno, (int)instr * 2);
		break;
	default:
		line = linetable_locations_line(c->table, c->table_len, c->firstlineno, (int)instr);
		break;
	}
	if (line < 0)
		line = 0;
	c->line_cache_key[c->line_cache_next & 3] = (int32_t)instr;
	c->line_cache_val[c->line_cache_next & 3] = line;
	c->line_cache_next++;
	return line;
}

/* ---- threads ---------------------------------------------------------- */

/*
 * The interpreters, newest first (runtime->interpreters.head, then each
 * one's next): their ids and thread list heads into r->interps.
 */
static int read_interps(struct py_reader *r)
{
	const struct py_offsets *o = r->off;
	uint64_t interp;
	size_t n = 0;
	int ret;

	r->ninterps = 0;
	r->threads_head_ns = 0;
	ret = mem_read_u64(r->mem, r->target->runtime_addr + (uint64_t)o->runtime_interpreters_head,
			   &interp);
	if (ret)
		return ret;
	while (interp) {
		struct py_interp_seen *i = &r->interps[n];

		if (n == PY_MAX_INTERPS)
			return -EFAULT;
		for (size_t k = 0; k < n; k++)
			if (r->interps[k].addr == interp)
				return -EFAULT;
		i->addr = interp;
		ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_threads_head, &i->threads_head);
		if (!ret)
			ret = mem_read(r->mem, interp + (uint64_t)o->interp_id, &i->id, sizeof(i->id));
		if (!ret)
			ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_next, &interp);
		if (ret)
			return ret;
		n++;
	}
	if (!n)
		return -EAGAIN;
	r->ninterps = n;
	if (n > r->most_interps)
		r->most_interps = n;
	r->threads_head_ns = fw_now_ns();
	return 0;
}

/*
 * The main interpreter: the one with id 0 (the oldest, last in the list);
 * the GIL, the collector and sys.modules are read from it.
 */
static int read_interp(struct py_reader *r, uint64_t *interp)
{
	int ret;

	if (r->interp) {
		*interp = r->interp;
		return 0;
	}
	ret = read_interps(r);
	if (ret)
		return ret;
	r->interp = r->interps[r->ninterps - 1].addr;
	for (size_t k = 0; k < r->ninterps; k++)
		if (r->interps[k].id == 0)
			r->interp = r->interps[k].addr;
	*interp = r->interp;
	return 0;
}

/*
 * <= 3.10 thread states carry only the pthread_t. glibc keeps the kernel tid
 * inside struct pthread; find where once, from a thread whose tid is known
 * to be one of the process's tasks.
 */
static int32_t tid_from_pthread(struct py_reader *r, uint64_t pthread_id)
{
	uint8_t buf[PTHREAD_SCAN];
	pid_t *tids;
	size_t ntids;
	int32_t found = 0;

	if (!pthread_id)
		return 0;
	if (r->pthread_tid_off >= 0) {
		int32_t tid;
		if (mem_read(r->mem, pthread_id + (uint64_t)r->pthread_tid_off, &tid, sizeof(tid)))
			return 0;
		return tid > 0 ? tid : 0;
	}
	if (r->pthread_tid_off == -2 || mem_read(r->mem, pthread_id, buf, sizeof(buf)))
		return 0;
	/* The target's own numbers: in a container they are not ours. */
	if (pidns_target_tids(&r->tids, &tids, &ntids))
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (int off = pass ? 0 : GLIBC_PTHREAD_TID_OFF; off + 4 <= PTHREAD_SCAN; off += 4) {
			int32_t v = load_i32(buf, off);

			for (size_t i = 0; v > 0 && i < ntids; i++) {
				if (tids[i] == v) {
					r->pthread_tid_off = off;
					found = v;
					break;
				}
			}
			if (found || !pass)
				break;
		}
	}
	free(tids);
	return found;
}

static int read_threads(struct py_reader *r, const struct py_offsets *o, uint8_t *buf,
			struct py_thread_info *out, size_t max, size_t *n);

int py_reader_threads(struct py_reader *r, struct py_thread_info *out, size_t max, size_t *n)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[1024];
	size_t count = 0;
	int ret;

	*n = 0;
	if ((size_t)o->tstate_size > sizeof(buf))
		return -EFAULT;
	/* The thread states name each thread's current frame: the copy's anchor. */
	mem_set_order(r->mem, MEM_ORDER_ANCHOR);
	ret = read_threads(r, o, buf, out, max, &count);
	mem_set_order(r->mem, MEM_ORDER_LATE);
	if (!ret)
		*n = count;
	return ret;
}

/*
 * A thread inside Interpreter.exec has a state in its own interpreter
 * (waiting in the exec call) and one in the subinterpreter (running):
 * keep the first with a frame (states are listed newest interpreter
 * first), else the first. Returns the states kept, in order. A state
 * without a tid is kept as it is. Threads are found by tid through a hash
 * index, so thousands of threads cost a pass, not its square.
 */
static uint64_t state_tid_hash(const void *owner, uint32_t id)
{
	return hash_mix64((uint32_t)((const struct py_thread_info *)owner)[id].tid);
}

static size_t one_state_per_thread(struct hidx *by_tid, struct py_thread_info *t, size_t n)
{
	size_t kept = 0;

	hidx_clear(by_tid);
	for (size_t i = 0; i < n; i++) {
		uint64_t h = hash_mix64((uint32_t)t[i].tid);
		uint32_t k = HIDX_NONE;

		if (t[i].tid) {
			size_t pos = hidx_start(by_tid, h);

			for (uint32_t id; (id = hidx_next(by_tid, &pos)) != HIDX_NONE;)
				if (t[id].tid == t[i].tid) {
					k = id;
					break;
				}
		}
		if (k == HIDX_NONE) {
			t[kept] = t[i];
			if (t[kept].tid)
				hidx_insert(by_tid, h, (uint32_t)kept, state_tid_hash, t);
			kept++;
		} else if (!t[k].frame && t[i].frame) {
			t[k] = t[i];
		}
	}
	return kept;
}

void py_reader_interp_label(const struct py_reader *r, const struct py_thread_info *t,
			    char *buf, size_t size)
{
	if (r->most_interps < 2 || !t)
		xsnprintf(buf, size, "%s", "");
	else if (!t->interp_id)
		xsnprintf(buf, size, " [interp main]");
	else
		xsnprintf(buf, size, " [interp %lld]", (long long)t->interp_id);
}

/*
 * How many thread states the lists hold from ts (in interpreter k's list)
 * to the end of the last list: only each state's link is read. A link that
 * cannot be read ends the count (a thread ending as it is walked); a list
 * longer than PY_COUNT_THREADS_MAX (a cycle read while it changed) is
 * counted that far.
 */
static size_t count_states(struct py_reader *r, const struct py_offsets *o, uint64_t ts,
			   size_t k)
{
	size_t n = 0;

	for (size_t j = k; j < r->ninterps; j++) {
		if (j > k)
			ts = r->interps[j].threads_head;
		for (uint64_t next; ts && n < PY_COUNT_THREADS_MAX; ts = next, n++) {
			if (mem_read_u64(r->mem, ts + (uint64_t)o->tstate_next, &next))
				return n + 1;
			if (next == ts)
				return n + 1;
		}
	}
	return n;
}

static int read_threads(struct py_reader *r, const struct py_offsets *o, uint8_t *buf,
			struct py_thread_info *out, size_t max, size_t *n)
{
	uint64_t interp, ts, now;
	size_t count = 0, listed = 0, cap = max < PY_MAX_THREADS ? max : PY_MAX_THREADS;
	int ret;

	ret = read_interp(r, &interp);
	if (ret)
		return ret;
	/*
	 * The heads change only when a thread or an interpreter starts or
	 * ends; at high rates they are re-read every PY_THREADS_HEAD_NS (and
	 * after any failure), which saves a page of target memory per tick.
	 */
	now = fw_now_ns();
	if (!r->threads_head_ns || now - r->threads_head_ns >= PY_THREADS_HEAD_NS) {
		ret = read_interps(r);
		if (ret) {
			r->interp = 0;
			return ret;
		}
	}
	for (size_t k = 0; k < r->ninterps; k++) {
		for (ts = r->interps[k].threads_head; ts;) {
			struct py_thread_info *t;
			uint64_t frame;

			if (count >= cap) {
				/* beyond the cap: counted, not read (reader.h) */
				listed = count + count_states(r, o, ts, k);
				goto capped;
			}
			ret = mem_read(r->mem, ts, buf, (size_t)o->tstate_size);
			if (ret) {
				r->threads_head_ns = 0;
				return ret;
			}
			t = &out[count++];
			t->tstate = ts;
			t->interp_id = r->interps[k].id;
			t->pthread_id = load_u64(buf, o->tstate_thread_id);
			frame = load_u64(buf, o->tstate_frame);
			t->frame_slot = ts + (uint64_t)o->tstate_frame;
			if (o->cframe_current_frame != PYOFF_NONE && frame) {
				/*
				 * 3.11/3.12: the cframe lives on the C stack: copied
				 * before the anchor, with the C stack below it, where
				 * the cframes of nested evaluations will be.
				 */
				t->frame_slot = frame + (uint64_t)o->cframe_current_frame;
				mem_remember(r->mem, t->frame_slot - C_STACK_WINDOW, C_STACK_WINDOW,
					     MEM_ORDER_EARLY);
				mem_set_order(r->mem, MEM_ORDER_EARLY);
				ret = mem_read_u64(r->mem, t->frame_slot, &frame);
				mem_set_order(r->mem, MEM_ORDER_ANCHOR);
				if (ret)
					return ret;
			}
			t->frame = frame;
			if (o->tstate_native_thread_id != PYOFF_NONE)
				t->tid = (int32_t)load_u64(buf, o->tstate_native_thread_id);
			else
				t->tid = tid_from_pthread(r, t->pthread_id);
			t->tid = pidns_host_tid(&r->tids, t->tid);
			ts = load_u64(buf, o->tstate_next);
			if (ts == t->tstate)
				return -EFAULT;
		}
	}
capped:
	if (!count)
		return -EAGAIN;
	r->threads_listed = listed > count ? listed : count;
	if (listed > count) {
		r->stats.threads_capped++;
		if (listed > r->stats.threads_listed_most)
			r->stats.threads_listed_most = listed;
	}
	if (r->ninterps > 1)
		count = one_state_per_thread(&r->states_by_tid, out, count);
	*n = count;
	return 0;
}

/* ---- frames ----------------------------------------------------------- */

/* Who owns a frame, from its owner field (3.11+) or f_gen (<= 3.10). */
enum frame_owner {
	OWNER_THREAD,             /* a Python frame of the thread's own chain */
	OWNER_GENERATOR,          /* a generator's or coroutine's frame */
	OWNER_SHIM,               /* 3.12+: the entry frame of a C-level eval call */
	OWNER_TORN,               /* no owner the version has: read while it changed */
};

static enum frame_owner owner_of(const struct py_offsets *o, const uint8_t *buf)
{
	int owner;

	if (o->frame_owner == PYOFF_NONE)
		return o->frame_gen != PYOFF_NONE && load_u64(buf, o->frame_gen) ? OWNER_GENERATOR :
			OWNER_THREAD;
	owner = buf[o->frame_owner];
	if (owner > o->frame_owner_last)
		return OWNER_TORN;
	if (o->frame_owner_shim != PYOFF_NONE && owner >= o->frame_owner_shim)
		return OWNER_SHIM;
	return owner == o->frame_owner_generator ? OWNER_GENERATOR : OWNER_THREAD;
}

/* The cached code object whose instructions hold ip (3.11+), or NULL. */
static uint64_t code_start(const struct py_offsets *o, uint64_t code)
{
	return code + (uint64_t)o->code_code_adaptive;
}

static int in_code(const struct py_code *c, uint64_t start, uint64_t ip)
{
	return ip >= start && (c->code_units < 0 || ip < start + 2 * (uint64_t)c->code_units);
}

/*
 * Where the bytecode a frame runs starts. Free-threaded 3.14+: a thread
 * runs its own copy, entry tlbc_index of the code's co_tlbc array (0 is
 * the code's own); the copies a code object has are remembered and read
 * again when ip is outside the one remembered (a copy freed and made
 * again). 0, or -EFAULT: no copy of that index holds ip.
 */
static int bytecode_start(struct py_reader *r, const uint8_t *buf, uint64_t code_addr,
			  struct py_code *c, uint64_t ip, uint64_t *start)
{
	const struct py_offsets *o = r->off;
	uint64_t arr, n, base;
	int32_t idx;
	int slot;

	*start = code_start(o, code_addr);
	if (o->frame_tlbc_index == PYOFF_NONE || o->code_tlbc == PYOFF_NONE)
		return 0;
	idx = load_i32(buf, o->frame_tlbc_index);
	if (!idx)
		return 0;
	if (idx < 0 || idx >= TLBC_MAX)
		return -EFAULT;
	slot = idx & 3;
	if (c->tlbc_index[slot] == idx && in_code(c, c->tlbc_start[slot], ip)) {
		*start = c->tlbc_start[slot];
		return 0;
	}
	if (mem_read_u64(r->mem, code_addr + (uint64_t)o->code_tlbc, &arr) || !arr ||
	    mem_read_u64(r->mem, arr + (uint64_t)o->codearray_size, &n) || (uint64_t)idx >= n ||
	    mem_read_u64(r->mem, arr + (uint64_t)o->codearray_entries + 8 * (uint64_t)idx, &base) ||
	    !base)
		return -EFAULT;
	if (!in_code(c, base, ip))
		return -EFAULT;
	c->tlbc_index[slot] = idx;
	c->tlbc_start[slot] = base;
	*start = base;
	r->stats.tlbc_read++;
	return 0;
}

/* A frame's instruction, in the version's units (-1: before its code; PY_INSTR_UNKNOWN). */
static int64_t frame_instr(struct py_reader *r, const uint8_t *buf, uint64_t code_addr,
			   struct py_code *c)
{
	const struct py_offsets *o = r->off;
	uint64_t ip, start;

	if (o->instr_model != PY_INSTR_POINTER)
		return load_i32(buf, o->frame_instr);
	ip = load_u64(buf, o->frame_instr);
	if (bytecode_start(r, buf, code_addr, c, ip, &start))
		return PY_INSTR_UNKNOWN;
	return ip >= start ? (int64_t)((ip - start) / 2) : -1;
}

/* The cached code object whose instructions (or a thread's copy of them seen) hold ip, or NULL. */
static struct py_code *code_by_instr(struct py_reader *r, uint64_t ip)
{
	for (size_t i = 0; ip && i < r->codes_cap; i++) {
		struct py_code *c = r->codes[i];

		if (!c || c->code_units < 0)
			continue;
		if (in_code(c, code_start(r->off, c->addr), ip))
			return c;
		for (int k = 0; k < 4; k++)
			if (c->tlbc_index[k] > 0 && in_code(c, c->tlbc_start[k], ip))
				return c;
	}
	return NULL;
}

/*
 * A generator frame's caller. A running generator's frame always has one
 * (its previous pointer is set when it is resumed and cleared when it
 * yields); a frame that has none was copied just after it yielded, while
 * the chain that led to it is from the moment it ran. It is placed at its
 * last seen caller (a generator is nearly always resumed from the same
 * place), not re-read at another moment; without one it cannot be placed
 * (-EAGAIN).
 */
static struct py_gen_link *gen_link(struct py_reader *r, uint64_t gen_frame)
{
	return &r->gen_links[(gen_frame * 0x9e3779b97f4a7c15ull) >> 56];
}

/* *link: the entry the caller's instruction is to be read into or from. */
static int generator_caller(struct py_reader *r, uint64_t gen_frame, uint64_t code,
			    uint64_t *previous, struct py_gen_link **link, int *placed)
{
	struct py_gen_link *l = gen_link(r, gen_frame);

	*link = l;
	*placed = 0;
	if (*previous) {
		if (l->frame != gen_frame || l->code != code || l->previous != *previous)
			l->caller_code = 0;
		l->frame = gen_frame;
		l->code = code;
		l->previous = *previous;
		return 0;
	}
	/* The same generator frame running the same code (frames of new generators reuse addresses). */
	if (l->frame != gen_frame || l->code != code || !l->previous)
		return -EAGAIN;
	*previous = l->previous;
	*placed = 1;
	r->stats.gen_placed++;
	return 0;
}

/*
 * Where a chain copied while it changed cannot go on (a generator copied
 * just after it yielded, with no known caller; <= 3.10 a callee released
 * with its link to the free list), the frames walked so far are the
 * thread's innermost at the copy's moment, and the frames that called them
 * are its callers now: the thread's current chain, read live, from its
 * first frame not already walked. Only the callers are read again; the
 * sample's innermost frames stay the copy's. current: the frame being
 * walked when the chain broke, 0 when it is not part of the stack. 0 with
 * *next, or -EAGAIN
 * (the reader does not place chains: r->place_live unset).
 */
static int place_live(struct py_reader *r, const struct py_thread_info *t,
		      const struct py_frame_info *frames, size_t n, uint64_t current, uint64_t *next)
{
	const struct py_offsets *o = r->off;
	struct py_thread_info now = *t;
	uint64_t frame = 0;
	int ret = -EAGAIN;

	if (!r->place_live)
		return -EAGAIN;
	mem_live_begin(r->mem);
	if (!py_reader_thread_frame(r, &now))
		frame = now.frame;
	for (size_t steps = 0; frame && steps <= n + 1; steps++) {
		size_t i;

		for (i = 0; i < n && frames[i].addr != frame; i++)
			;
		if (i == n && frame != current) {
			ret = 0;
			break;
		}
		if (mem_read_u64(r->mem, frame + (uint64_t)o->frame_previous, &frame))
			frame = 0;
	}
	mem_live_end(r->mem);
	if (ret || !frame)
		return -EAGAIN;
	*next = frame;
	r->stats.placed_live++;
	return 0;
}

/* ---- confirming a stack's code objects -------------------------------- */

#define CONFIRM_BATCH 64
#define CODE_ID_MAX 256

/* Entry old was found replaced: read its address anew (*out) and rename its frames. */
static int code_replace(struct py_reader *r, struct py_code *old, struct py_frame_info *frames,
			size_t n, uint64_t now, struct py_code **out)
{
	uintptr_t was = (uintptr_t)old;
	uint64_t addr = old->addr;
	struct py_code *c;
	int ret;

	r->stats.code_stale++;
	code_cache_remove(r, code_slot(r, addr));
	ret = reader_code(r, addr, &c, now);
	if (ret)
		return ret == -ESRCH || ret == -EPERM ? ret : -EFAULT;
	c->confirmed_walk = r->walks;
	*out = c;
	for (size_t k = 0; k < n; k++) {
		if ((uintptr_t)frames[k].code != was)
			continue;
		if (c->code_units >= 0 && frames[k].instr > c->code_units)
			return -EFAULT;
		frames[k].code = c;
		frames[k].line = py_code_line(c, r->off, frames[k].instr);
	}
	return 0;
}

/*
 * A code object is cached by its address, and the address of one freed is
 * soon another's (the allocator hands it to the next of the same size):
 * an entry cached a moment ago may name a code that no longer runs. So the
 * codes of each stack walked are confirmed: the header words saying which
 * code an object is are read again for all of them at once (one system
 * call per stack, none where the tick's copy holds them), and a code whose
 * words changed is read anew and its frames renamed. 0, -EFAULT (an
 * address that holds no code now: the sample is dropped), -EAGAIN (the
 * words read and the code read anew disagree: the sample's code is gone)
 * or -ESRCH/-EPERM.
 */
static int confirm_codes(struct py_reader *r, struct py_frame_info *frames, size_t n, uint64_t now)
{
	const struct py_offsets *o = r->off;
	uint8_t spans[CONFIRM_BATCH][CODE_ID_MAX];
	struct py_code *batch[CONFIRM_BATCH], *c;
	struct mem_iov iov[CONFIRM_BATCH];
	int32_t start;
	size_t len, i = 0;
	int ret;

	py_code_id_span(o, &start, &len);
	if (start < 0 || len > CODE_ID_MAX)
		return -EFAULT;
	r->walks++;
	while (i < n) {
		size_t nb = 0;

		for (; i < n && nb < CONFIRM_BATCH; i++) {
			struct py_code *code = (struct py_code *)frames[i].code;

			if (code->marker || code->confirmed_walk == r->walks)
				continue;
			code->confirmed_walk = r->walks;
			batch[nb] = code;
			iov[nb] = (struct mem_iov){ .addr = code->addr + (uint64_t)start,
						    .buf = spans[nb], .len = len };
			nb++;
		}
		if (!nb)
			break;
		ret = mem_read_pieces(r->mem, iov, nb);
		if (ret < 0)
			return ret;
		for (size_t k = 0; k < nb; k++) {
			if (!iov[k].ok)
				return -EFAULT;
			if (code_id_matches(o, batch[k], spans[k], start))
				continue;
			ret = code_replace(r, batch[k], frames, n, now, &c);
			if (ret)
				return ret;
			/*
			 * The words were copied with the frames (bpf: at the
			 * sample's instant) and the code read now is yet
			 * another: the sample's code is gone, drop it.
			 */
			if (!code_id_matches(o, c, spans[k], start))
				return -EAGAIN;
		}
	}
	return 0;
}


int py_reader_stack(struct py_reader *r, const struct py_thread_info *t,
		    struct py_frame_info *frames, size_t max, size_t *depth)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[256];
	uint64_t frame = t->frame, prev_frame = 0;
	size_t n = 0, steps = 0;
	uint64_t now = fw_now_ns();
	int ret, placed = 0, pending_cached = 0;
	struct py_gen_link *pending = NULL;   /* the generator just walked: its caller comes next */

	*depth = 0;
	if ((size_t)o->frame_size > sizeof(buf))
		return -EFAULT;
	mem_set_order(r->mem, MEM_ORDER_LATE);
	while (frame) {
		struct py_code *code;
		uint64_t code_addr;
		int64_t instr;
		enum frame_owner owner;

		if (++steps > PY_MAX_DEPTH * 2 || frame == prev_frame) {
			r->stats.depth_capped++;
			return -ELOOP;
		}
		/*
		 * <= 3.10: heap frames, innermost copied first (they change
		 * first). 3.11+: a generator's frame (on the heap) after the data
		 * stack holding its caller, whose instruction then still is the
		 * one that resumed it.
		 */
		if (o->frame_model == PY_FRAMES_OBJECTS)
			mem_set_order(r->mem, MEM_ORDER_LATE + (n < 7 ? (int)n : 7));
		else
			mem_set_order(r->mem, gen_link(r, frame)->frame == frame ? MEM_ORDER_LATE + 1 :
					      MEM_ORDER_LATE);
		ret = mem_read(r->mem, frame, buf, (size_t)o->frame_size);
		if (ret)
			return ret;
		prev_frame = frame;
		/*
		 * <= 3.10: a frame object with no reference was released while
		 * the chain was copied. As the innermost frame it is the callee
		 * that just returned, with its caller intact (placed there);
		 * anywhere else, or followed by another released frame, its link
		 * may be the free list's: the chain cannot be placed.
		 */
		if (o->frame_model == PY_FRAMES_OBJECTS && o->object_refcnt != PYOFF_NONE) {
			int dead = load_u64(buf, o->object_refcnt) == 0;

			if (dead && (n > 0 || steps > 1)) {
				if (placed++ || place_live(r, t, frames, n, 0, &frame))
					return -EAGAIN;
				continue;
			}
		}
		code_addr = load_u64(buf, o->frame_code);
		if (o->frame_code_tagged != PYOFF_NONE && o->frame_code_tagged)
			code_addr &= ~(uint64_t)o->frame_code_tagged;
		frame = load_u64(buf, o->frame_previous);
		/* This frame resumed the generator walked just before it? */
		struct py_gen_link *mine = pending && pending->previous == prev_frame ? pending : NULL;
		int mine_cached = pending_cached;

		pending = NULL;
		owner = owner_of(o, buf);
		if (owner == OWNER_GENERATOR) {
			struct py_gen_link *l;
			int cached;

			ret = generator_caller(r, prev_frame, code_addr, &frame, &l, &cached);
			if (ret && (placed++ || place_live(r, t, frames, n, prev_frame, &frame)))
				return -EAGAIN;
			if (!ret) {
				pending = l;
				pending_cached = cached;
			}
			mine = NULL;
		}
		if (owner == OWNER_TORN)
			return -EFAULT;
		if (owner == OWNER_SHIM) {
			/* On the C stack: the next copy takes it (and the C stack
			 * below, for nested calls) before the anchor. */
			mem_remember(r->mem, prev_frame - C_STACK_WINDOW,
				     C_STACK_WINDOW + (size_t)o->frame_size, MEM_ORDER_EARLY);
			/* C-stack shim: the frame before it began a C-level eval call. */
			if (n && !frames[n - 1].shim) {
				frames[n - 1].entry = 1;
				frames[n - 1].shim = prev_frame;
			}
			continue;
		}
		ret = reader_code(r, code_addr, &code, now);
		if (ret == -ESRCH || ret == -EPERM)
			return ret;
		/*
		 * No code object: a frame cleared while it was copied (3.15 clears
		 * a returning frame's executable) still points at the instruction
		 * it ran, inside its code's instructions.
		 */
		if (ret && o->instr_model == PY_INSTR_POINTER &&
		    (code = code_by_instr(r, load_u64(buf, o->frame_instr)))) {
			code_addr = code->addr;
			r->stats.code_by_instr++;
			ret = 0;
		}
		if (ret) {
			/* 3.13+ may hold a non-code executable; otherwise torn. */
			if (o->frame_exec_any)
				continue;
			return -EFAULT;
		}
		instr = frame_instr(r, buf, code_addr, code);
		switch (o->instr_model) {
		case PY_INSTR_LASTI_BYTES:
		case PY_INSTR_LASTI_UNITS:
			break;
		default: {
			/* An instruction outside the cached code: the cache is stale. */
			if (code->code_units >= 0 && instr > code->code_units) {
				if (code->checked_ns) {
					code_mark_suspect(code);
					ret = reader_code(r, code_addr, &code, now);
					if (ret)
						return ret == -ESRCH || ret == -EPERM ? ret : -EFAULT;
				}
				if (code->code_units >= 0 && instr > code->code_units)
					return -EFAULT;
			}
			break;
		}
		}
		if (code->internal && !r->keep_internal)
			continue;
		/*
		 * The caller of a running generator waits on the instruction that
		 * resumed it; a copy of the caller taken a moment after a yield
		 * shows the line after. The instruction seen most often under this
		 * generator (a majority vote) is the one, and is used.
		 */
		if (mine) {
			if (mine->caller_code != code_addr) {
				mine->caller_code = code_addr;
				mine->caller_instr = instr;
				mine->votes = 0;
			}
			if (!mine_cached) {
				if (mine->caller_instr == instr)
					mine->votes++;
				else if (mine->votes > 0)
					mine->votes--;
				else
					mine->caller_instr = instr;
			}
			if (mine->votes >= 2)
				instr = mine->caller_instr;
		}
		if (n >= max) {
			r->stats.depth_capped++;
			return -ELOOP;
		}
		frames[n].addr = prev_frame;
		frames[n].instr = instr;
		frames[n].code = code;
		frames[n].line = py_code_line(code, o, instr);
		frames[n].shim = 0;
		frames[n].generator = owner == OWNER_GENERATOR;
		if (o->frame_model == PY_FRAMES_OBJECTS)
			frames[n].entry = 1;
		else if (o->frame_is_entry != PYOFF_NONE)
			frames[n].entry = buf[o->frame_is_entry] != 0;
		else
			frames[n].entry = 0;
		n++;
	}
	/*
	 * From 3.11 every thread's chain ends where a C-level eval call began
	 * (3.11: an is_entry frame; 3.12+: a C-stack shim). A chain that ends
	 * anywhere else was read while it changed (a generator suspended
	 * between two reads): reject it rather than report a stack that never was.
	 */
	if (n && o->frame_model == PY_FRAMES_INTERP_311 && !frames[n - 1].entry)
		return -EAGAIN;
	if (n && o->frame_model == PY_FRAMES_INTERP_312 && !frames[n - 1].shim)
		return -EAGAIN;
	if (n)
		frames[n - 1].entry = 1;
	ret = confirm_codes(r, frames, n, now);
	if (ret)
		return ret;
	*depth = n;
	return 0;
}

int py_reader_frame(struct py_reader *r, uint64_t addr, struct py_frame_info *out)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[256];
	struct py_code *code;
	uint64_t code_addr;
	int ret;

	if (!addr || (size_t)o->frame_size > sizeof(buf))
		return -EFAULT;
	ret = mem_read(r->mem, addr, buf, (size_t)o->frame_size);
	if (ret)
		return ret;
	if (owner_of(o, buf) >= OWNER_SHIM)
		return -EFAULT;
	code_addr = load_u64(buf, o->frame_code);
	if (o->frame_code_tagged != PYOFF_NONE && o->frame_code_tagged)
		code_addr &= ~(uint64_t)o->frame_code_tagged;
	ret = reader_code(r, code_addr, &code, fw_now_ns());
	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->code = code;
	out->instr = frame_instr(r, buf, code_addr, code);
	out->generator = owner_of(o, buf) == OWNER_GENERATOR;
	if (code->code_units >= 0 && out->instr > code->code_units)
		return -EFAULT;
	out->line = py_code_line(code, o, out->instr);
	return 0;
}

int py_reader_str(struct py_reader *r, uint64_t addr, size_t cap, char **out)
{
	return read_unicode(r, addr, cap, out);
}

int py_reader_thread_frame(struct py_reader *r, struct py_thread_info *t)
{
	const struct py_offsets *o = r->off;
	uint64_t frame;
	int ret;

	ret = mem_read_u64(r->mem, t->tstate + (uint64_t)o->tstate_frame, &frame);
	if (ret)
		return ret;
	if (o->cframe_current_frame != PYOFF_NONE && frame) {
		ret = mem_read_u64(r->mem, frame + (uint64_t)o->cframe_current_frame, &frame);
		if (ret)
			return ret;
	}
	t->frame = frame;
	return 0;
}

/* Where the GIL's holder and locked flag live: 0 or -errno (-ENOTSUP: no offsets). */
static int gil_addrs(struct py_reader *r, uint64_t *holder, uint64_t *locked)
{
	const struct py_offsets *o = r->off;
	uint64_t base, interp;
	int ret;

	if (o->gil_holder == PYOFF_NONE || o->gil_locked == PYOFF_NONE)
		return -ENOTSUP;
	if (!o->gil_in_interp) {
		base = r->target->runtime_addr;
	} else {
		ret = read_interp(r, &interp);
		if (ret)
			return ret;
		base = interp;
		if (o->interp_gil_ptr != PYOFF_NONE) {
			/* 3.12: interp->ceval.gil points at the GIL */
			ret = mem_read_u64(r->mem, interp + (uint64_t)o->interp_gil_ptr, &base);
			if (ret)
				return ret;
			if (!base)
				return -EAGAIN;
		}
	}
	*holder = base + (uint64_t)o->gil_holder;
	*locked = base + (uint64_t)o->gil_locked;
	return 0;
}

static int gc_addr(struct py_reader *r, uint64_t *addr)
{
	const struct py_offsets *o = r->off;
	uint64_t base;
	int ret;

	if (o->gc_collecting == PYOFF_NONE)
		return -ENOTSUP;
	if (o->gc_in_interp) {
		ret = read_interp(r, &base);
		if (ret)
			return ret;
	} else {
		base = r->target->runtime_addr;
	}
	*addr = base + (uint64_t)o->gc_collecting;
	return 0;
}

int py_reader_state_addrs(struct py_reader *r, uint64_t *gil_holder, uint64_t *gil_locked,
			  uint64_t *gc_collecting, uint64_t *threads_head)
{
	uint64_t interp;
	int ret;

	*gil_holder = *gil_locked = *gc_collecting = *threads_head = 0;
	ret = read_interp(r, &interp);
	if (ret)
		return ret;
	*threads_head = interp + (uint64_t)r->off->interp_threads_head;
	ret = gil_addrs(r, gil_holder, gil_locked);
	if (ret && ret != -ENOTSUP)
		return ret;
	ret = gc_addr(r, gc_collecting);
	return ret == -ENOTSUP ? 0 : ret;
}

int py_reader_main_interp(struct py_reader *r, uint64_t *interp)
{
	return read_interp(r, interp);
}

int py_reader_gil(struct py_reader *r, uint64_t *holder, int *locked)
{
	uint64_t holder_addr, locked_addr;
	int32_t lk = 0;
	int ret;

	*holder = 0;
	*locked = 0;
	ret = gil_addrs(r, &holder_addr, &locked_addr);
	if (!ret)
		ret = mem_read_u64(r->mem, holder_addr, holder);
	if (!ret)
		ret = mem_read(r->mem, locked_addr, &lk, sizeof(lk));
	if (ret)
		return ret;
	*locked = lk != 0;
	return 0;
}

int py_reader_gc(struct py_reader *r, int *collecting)
{
	uint64_t addr;
	int32_t v;
	int ret;

	*collecting = 0;
	ret = gc_addr(r, &addr);
	if (!ret)
		ret = mem_read(r->mem, addr, &v, sizeof(v));
	if (ret)
		return ret;
	*collecting = v != 0;
	return 0;
}
