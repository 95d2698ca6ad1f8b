/*
 * Implementation of reader.h, its frame chains: walking a thread's frames
 * (each frame model: frame objects <= 3.10, interpreter frames 3.11+,
 * generators, entry and shim frames) into py_frame_info. The code objects
 * they run are reader_codes.c's, the thread list reader_threads.c's. The
 * per-version differences are all in struct py_offsets; the only branches
 * here are on its frame, instruction and line models.
 */
#include <errno.h>
#include <inttypes.h>

#include "python/reader.h"
#include "python/reader_impl.h"
#include "util/util.h"

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

void py_reader_release(struct py_reader *r)
{
	for (size_t i = 0; i < r->codes_cap; i++)
		code_cache_free(r->codes[i]);
	free(r->codes);
	pidns_tids_release(&r->tids);
	hidx_release(&r->states_by_tid);
	memset(r, 0, sizeof(*r));
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



/*
 * The instruction a frame shows against its code object from the cache: an
 * instruction past the code's end means the cache is stale (the address
 * reused by another code object): read again once. 0 (*code the one that
 * holds it), -ESRCH/-EPERM, or -EFAULT (torn).
 */
static int check_code_holds(struct py_reader *r, uint64_t code_addr, int64_t instr,
			    struct py_code **code, uint64_t now)
{
	const struct py_offsets *o = r->off;
	int ret;

	if (o->instr_model == PY_INSTR_LASTI_BYTES || o->instr_model == PY_INSTR_LASTI_UNITS)
		return 0;
	if ((*code)->code_units < 0 || instr <= (*code)->code_units)
		return 0;
	if ((*code)->checked_ns) {
		code_cache_mark_suspect(*code);
		ret = code_cache_get(r, code_addr, code, now);
		if (ret)
			return ret == -ESRCH || ret == -EPERM ? ret : -EFAULT;
	}
	if ((*code)->code_units >= 0 && instr > (*code)->code_units)
		return -EFAULT;
	return 0;
}

/*
 * The caller of a running generator waits on the instruction that resumed
 * it; a copy of the caller taken a moment after a yield shows the line
 * after. The instruction seen most often under this generator (a majority
 * vote; a cached walk does not vote) is the one, and is returned.
 */
static int64_t generator_caller_vote(struct py_gen_link *mine, int cached, uint64_t code_addr,
				     int64_t instr)
{
	if (mine->caller_code != code_addr) {
		mine->caller_code = code_addr;
		mine->caller_instr = instr;
		mine->votes = 0;
	}
	if (!cached) {
		if (mine->caller_instr == instr)
			mine->votes++;
		else if (mine->votes > 0)
			mine->votes--;
		else
			mine->caller_instr = instr;
	}
	return mine->votes >= 2 ? mine->caller_instr : instr;
}

/* One frame of the chain, read at addr (its copy in buf). */
static void frame_info_fill(struct py_frame_info *f, const struct py_offsets *o,
			    const uint8_t *buf, uint64_t addr, struct py_code *code, int64_t instr,
			    int generator)
{
	f->addr = addr;
	f->instr = instr;
	f->code = code;
	f->line = py_code_line(code, o, instr);
	f->shim = 0;
	f->generator = generator;
	if (o->frame_model == PY_FRAMES_OBJECTS)
		f->entry = 1;
	else if (o->frame_is_entry != PYOFF_NONE)
		f->entry = buf[o->frame_is_entry] != 0;
	else
		f->entry = 0;
}

/*
 * Where a whole chain of n frames must end, and the marks it gets there.
 * 0, or -EAGAIN: read while it changed.
 */
static int chain_end(const struct py_offsets *o, const struct py_thread_info *t,
		     struct py_frame_info *frames, size_t n)
{
	/*
	 * From 3.11 every thread's chain ends where a C-level eval call began
	 * (3.11: an is_entry frame; 3.12+: a C-stack shim). A chain that ends
	 * anywhere else was read while it changed (a generator suspended
	 * between two reads): reject it rather than report a stack that never was.
	 */
	if (n && o->frame_model == PY_FRAMES_INTERP_311 && !frames[n - 1].entry)
		return -EAGAIN;
	/*
	 * 3.11 has no entry frame on the C stack, but the thread's cframe is
	 * one: a local of the eval call that runs the innermost group. It
	 * tells that call's native frame from an outer one's (merge.c), where
	 * native code calls back into Python: while the callback's eval call
	 * sets up or returns, the chain is still (again) the caller's, and the
	 * callback's native frame must claim none of it.
	 */
	if (o->frame_model == PY_FRAMES_INTERP_311 && t->cframe) {
		for (size_t k = 0; k < n; k++) {
			if (frames[k].entry) {
				frames[k].shim = t->cframe;
				break;
			}
		}
	}
	if (n && o->frame_model == PY_FRAMES_INTERP_312 && !frames[n - 1].shim)
		return -EAGAIN;
	if (n)
		frames[n - 1].entry = 1;
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
		ret = code_cache_get(r, code_addr, &code, now);
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
			/*
			 * 3.13+ may hold a non-code executable (skipped); a code
			 * freed since, whose names are others' now (-EAGAIN),
			 * leaves the sample nothing true to say of this frame:
			 * dropped, not shown without it. Otherwise torn.
			 */
			if (o->frame_exec_any && ret != -EAGAIN)
				continue;
			return ret == -EAGAIN ? ret : -EFAULT;
		}
		instr = frame_instr(r, buf, code_addr, code);
		if ((ret = check_code_holds(r, code_addr, instr, &code, now)))
			return ret;
		if (code->internal && !r->keep_internal)
			continue;
		/* a running generator's caller: the instruction that resumed it */
		if (mine)
			instr = generator_caller_vote(mine, mine_cached, code_addr, instr);
		if (n >= max) {
			r->stats.depth_capped++;
			return -ELOOP;
		}
		frame_info_fill(&frames[n++], o, buf, prev_frame, code, instr,
				owner == OWNER_GENERATOR);
	}
	if ((ret = chain_end(o, t, frames, n)))
		return ret;
	ret = code_cache_confirm(r, frames, n, now);
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
	ret = code_cache_get(r, code_addr, &code, fw_now_ns());
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
	return py_read_unicode(r, addr, cap, out);
}

int py_reader_thread_frame(struct py_reader *r, struct py_thread_info *t)
{
	const struct py_offsets *o = r->off;
	uint64_t frame;
	int ret;

	ret = mem_read_u64(r->mem, t->tstate + (uint64_t)o->tstate_frame, &frame);
	if (ret)
		return ret;
	t->cframe = 0;
	if (o->cframe_current_frame != PYOFF_NONE && frame) {
		t->cframe = frame;
		ret = mem_read_u64(r->mem, frame + (uint64_t)o->cframe_current_frame, &frame);
		if (ret)
			return ret;
	}
	t->frame = frame;
	return 0;
}

