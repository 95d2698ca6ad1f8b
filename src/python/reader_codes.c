/*
 * The reader's code objects (reader_impl.h): read from the target with
 * their names, file and line table, cached by address, and confirmed for
 * each stack walked (an address freed is soon another code's). Also the
 * str and bytes objects they name.
 */
#include <errno.h>
#include <inttypes.h>

#include "python/linetable.h"
#include "python/reader.h"
#include "python/reader_impl.h"
#include "util/strbuf.h"
#include "util/util.h"

#define TABLE_MAX (1u << 20)
#define CODE_RECHECK_NS 1000000000ull

void code_cache_free(struct py_code *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->file);
	free(c->table);
	free(c);
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
int py_read_unicode(struct py_reader *r, uint64_t addr, size_t cap, char **out)
{
	const struct py_offsets *o = r->off;
	uint8_t head[128];
	struct strbuf sb = STRBUF_INIT;
	struct py_str_head h;
	uint64_t len;
	unsigned kind, ascii;
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
	h = py_str_head(o, head);
	len = h.len;
	kind = h.kind;
	ascii = h.ascii;
	if (!h.compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) ||
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
 * keeps its old contents until reused, but the allocator writes its
 * free-list link over the count (pymalloc's next block, glibc's: a
 * pointer, or 0 at a list's end), never a count. The count word of a GIL
 * build: <= 3.13 the count itself, 3.12+ immortal with bit 31 set
 * (UINT32_MAX); 3.14+ the count in its low 32 bits and ob_flags in its top
 * 16 (immortal: bit 31 set too). A free-threaded object begins with its
 * owner's thread id: no count offset there (OBJ_LIVE), each frame's copied
 * identity words decide.
 */
enum obj_state { OBJ_FREED, OBJ_LIVE, OBJ_IMMORTAL };

static enum obj_state obj_state(const struct py_offsets *o, const uint8_t *buf)
{
	uint64_t word;

	if (o->object_refcnt == PYOFF_NONE)
		return OBJ_LIVE;
	word = load_u64(buf, o->object_refcnt);
	if (o->version_hex >= 0x030e0000)
		word &= (1ull << 48) - 1;
	if (word == 0 || word > UINT32_MAX)
		return OBJ_FREED;
	return word >= 1ull << 31 ? OBJ_IMMORTAL : OBJ_LIVE;
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
	ret = py_read_unicode(r, c->name_ptr, PY_NAME_MAX, &c->name);
	if (!ret)
		ret = py_read_unicode(r, c->file_ptr, PY_FILE_MAX, &c->file);
	if (!ret)
		ret = read_bytes(r, c->table_ptr, &c->table, &c->table_len);
	if (ret || c->firstlineno < 0) {
		code_cache_free(c);
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
		code_cache_free(c);
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

/*
 * Is the cached entry still the code object at its address? Asked of the
 * target at most once a second; but where the copy serving this walk (bpf:
 * the words copied at the sample's instant; a tick's snapshot) holds the
 * words saying which code the object is, they answer, without a read: they
 * are what code_cache_confirm holds the walk's codes against anyway (the
 * agent re-read each sampled code once a second: 40% of its reads).
 */
static int code_still_valid(struct py_reader *r, struct py_code *c, uint64_t now)
{
	const struct py_offsets *o = r->off;
	uint8_t buf[512];
	int32_t start;
	size_t len;

	if (now - c->checked_ns < CODE_RECHECK_NS)
		return 1;
	py_code_id_span(o, &start, &len);
	if (c->checked_ns && start >= 0 && len <= sizeof(buf) &&
	    !mem_read_copied(r->mem, c->addr + (uint64_t)start, buf, len))
		return code_id_matches(o, c, buf, start);
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

	code_cache_free(r->codes[slot]);
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
int code_cache_get(struct py_reader *r, uint64_t addr, struct py_code **out, uint64_t now)
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
	return code_cache_get(r, addr, out, fw_now_ns());
}

/* Force the next lookup of this entry to re-check it against the target. */
void code_cache_mark_suspect(struct py_code *c)
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
	ret = code_cache_get(r, addr, &c, now);
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
int code_cache_confirm(struct py_reader *r, struct py_frame_info *frames, size_t n, uint64_t now)
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
