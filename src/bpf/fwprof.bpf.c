// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * framewalk's BPF program: runs on every cpu-clock perf event, keeps only
 * threads of the target processes, and writes one variable-sized record per
 * sample into the ring buffer (fwprof.h): what the interpreter's GIL and
 * collector are doing at that instant, a copy of each Python frame of the
 * thread (found through a tid -> thread state map that user space keeps
 * current) and, for whole stacks, the kernel stack, the user registers and
 * either the kernel's frame-pointer walk of the user stack or (when a module
 * lacks frame pointers) a copy of the top of the user stack for user space's
 * DWARF unwinder. Names and lines are resolved in user space.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/*
 * The architecture's facts (fw_uregs_t, struct thread_struct, FW_COPY_REGS,
 * FW_UREGS_SP, FW_CTX_USER_MODE, FW_UREGS_SYSCALL_*, FW_TASK_THREAD_POINTER) come
 * from arch_x86.h or arch_arm64.h, which meson.build includes first.
 */
#ifndef FRAMEWALK_BPF_ARCH_H
#error "build with -include src/bpf/arch_<target>.h (meson.build)"
#endif

#include "fwprof.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

_Static_assert(sizeof(fw_uregs_t) <= FW_UREGS_WORDS * 8, "fw_sample_buf.uregs is too small");   /* the kernel takes it as GPL-compatible */

/*
 * The few kernel types used, relocated by libbpf against the running
 * kernel's BTF (CO-RE), so no vmlinux.h is needed to build.
 */
struct task_struct {
	unsigned int __state;
	int on_cpu;
	int pid;
	int tgid;
	unsigned long nvcsw, nivcsw;
	struct thread_struct thread;
} __attribute__((preserve_access_index));

/*
 * Is the task on a CPU? task_struct.on_cpu is an int on the x86-64 kernels
 * tried and of another size on Debian's arm64 7.2 (a plain load's CO-RE
 * relocation refused it there: the iterator did not load, 2026-12-04): read
 * with the size the running kernel's BTF gives.
 */
static __always_inline int task_on_cpu(struct task_struct *task)
{
	__u32 size = bpf_core_field_size(task->on_cpu);
	__u64 v = 0;

	if (size > sizeof(v))
		size = sizeof(v);
	bpf_core_read(&v, size, &task->on_cpu);
	return v != 0;
}

struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/*
 * Read the target's memory: the interrupted thread's own (task NULL, in
 * the perf_event program), or another thread's (the sleepable iterator).
 * Inlined with a constant task, so each program calls only its own helper.
 */
static __always_inline long read_user(void *dst, __u32 size, const void *src, struct task_struct *task)
{
	if (task)
		return bpf_copy_from_user_task(dst, size, src, task, 0);
	return bpf_probe_read_user(dst, size, src);
}


/* Set by user space before loading. */
const volatile __u64 wake_bytes = 1 << 20;   /* wake the reader past this much waiting */
/*
 * Were labels asked for (--label)? Known at load, so without them the
 * verifier leaves the label walk out: 5 thousand instructions to check
 * instead of 27 (a capture's start-up, paid twice: the backend's probe and
 * its load).
 */
const volatile __u32 read_labels = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct fw_target_cfg);
} targets SEC(".maps");

/* Sized by user space from the targets' thread counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} tstates SEC(".maps");

/* tid -> end of the stack the last complete unwind needed (user space's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} stack_ends SEC(".maps");

/* Sized by user space from the rate and the number of CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} samples SEC(".maps");

/*
 * One record being built per CPU, keyed by CPU (perf_event programs do not
 * migrate or nest; a per-CPU map's values cannot be this large). User space
 * sizes it to the number of CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fw_sample_buf);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");      /* 0: ring buffer full, 1: samples written,
			       * 2: life records the full ring had no room for */

/*
 * Set on a CPU where the per-CPU clock sampled a target, cleared by user
 * space when it restarts that CPU's clock (sampler/pacing.h): a CPU where
 * no target ran keeps its clock, restarted only once one does (the .bss
 * map, which libbpf maps into user space: no system call to read it).
 */
__u8 cpu_seen[FW_SEEN_CPUS];

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void copy_regs(struct fw_sample_hdr *h, const fw_uregs_t *r)
{
	FW_COPY_REGS(h, r);
}

/*
 * A word of size (4 or 8) at addr of the interpreter's state: from the span
 * read at once when it lies there (span 1), else read alone.
 */
static __always_inline void interp_word(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					void *out, __u32 size, __u64 addr, int span, struct task_struct *task)
{
	__u64 at = addr - cfg->interp_span_addr;

	if (!addr)
		return;
	if (!span || addr < cfg->interp_span_addr || at + size > cfg->interp_span_len || (at & (size - 1))) {
		read_user(out, size, (void *)addr, task);
		return;
	}
	barrier_var(at);
	if (size == 8)
		*(__u64 *)out = *(__u64 *)(buf->interp_span + (at & (FW_INTERP_SPAN - 8)));
	else
		*(__u32 *)out = *(__u32 *)(buf->interp_span + (at & (FW_INTERP_SPAN - 4)));
}

/* The GIL holder and the collector's flag, read at the sample's instant. */
static __always_inline void copy_interp_state(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					      struct task_struct *task)
{
	struct fw_sample_hdr *h = &buf->h;
	__u64 len = cfg->interp_span_len;      /* 64-bit: the verifier keeps its bound */
	int span = 0;

	h->gil_holder = 0;
	h->gil_locked = 0;
	h->gc_collecting = 0;
	/* two checks the compiler may not fold into one (submit) */
	if (len) {
		barrier_var(len);
		if (len <= FW_INTERP_SPAN)
			span = !read_user(buf->interp_span, len, (void *)cfg->interp_span_addr, task);
	}
	interp_word(buf, cfg, &h->gil_holder, 8, cfg->gil_holder_addr, span, task);
	interp_word(buf, cfg, &h->gil_locked, 4, cfg->gil_locked_addr, span, task);
	interp_word(buf, cfg, &h->gc_collecting, 4, cfg->gc_collecting_addr, span, task);
}

struct py_walk {
	struct fw_sample_buf *buf;
	struct task_struct *task;
	__u64 frame;
	__u32 size;
	__s32 prev_off;
	__s32 code_off, id_start;
	__u32 id_len;
	__u64 code_mask;
	__u32 stride, data_len;      /* a frame's bytes in the record (struct fw_py_frame) */
	__u64 win_base, win_len;     /* buf->py_window holds win_len bytes from win_base */
};

/*
 * Did this sample copy code's words already (a recursion, a function on the
 * stack twice)? At one instant an address holds one object, so the frame's
 * identity is the copy already in the record (user space's overlay serves
 * every frame at that address from it).
 */
static __always_inline int code_seen(const struct fw_sample_buf *buf, __u64 code)
{
	for (int k = 0; k < FW_SEEN_CODES; k++)
		if (buf->seen_codes[k] == code)
			return 1;
	return 0;
}

/*
 * A frame lying within the window read: its data_len bytes from the copy
 * (loads, no helper call). 0 when it does not lie there.
 */
static __always_inline int frame_from_window(struct py_walk *w, __u64 *dst)
{
	__u64 off = w->frame - w->win_base, *src;

	if (w->frame < w->win_base || off + w->size > w->win_len || (off & 7))
		return 0;
	/* bounded where it is used, past the compiler (copy_frame_at's id_len) */
	barrier_var(off);
	off &= FW_PY_WINDOW - 1;
	src = (__u64 *)(w->buf->py_window + off);
	/* whole: the record's next bytes are written after (slack past the last: FW_BODY_MAX) */
	for (int k = 0; k < FW_FRAME_COPY / 8; k++)
		dst[k] = src[k];
	return 1;
}

/*
 * One frame of the walk, read from the thread's memory (task) or the
 * current one's, into the record's frame i (struct fw_py_frame).
 */
static __always_inline long copy_frame_at(__u64 i, struct py_walk *w, struct task_struct *task)
{
	struct fw_py_frame *f;
	__u32 size = w->size, id_len = w->id_len;
	__u64 stride = w->stride, data_len = w->data_len;
	__u8 *data;

	if (!w->frame || i >= FW_MAX_PY_FRAMES || size > FW_FRAME_COPY || !size)
		return 1;
	/* masks the verifier can see (copy_python keeps them at most FW_PY_SLOT_MAX, FW_FRAME_COPY) */
	barrier_var(stride);
	barrier_var(data_len);
	stride &= 511;
	data_len &= 2 * FW_FRAME_COPY - 1;
	f = (struct fw_py_frame *)(w->buf->body + (i & (FW_MAX_PY_FRAMES - 1)) * stride);
	data = (__u8 *)(f + 1);
	f->addr = w->frame;
	if (!frame_from_window(w, (__u64 *)data) && read_user(data, size, (void *)w->frame, task))
		return 1;
	/* Counted in the map value, not on the stack: the verifier then need not
	 * follow every count as its own path. */
	w->buf->h.npy++;
	w->frame = *(__u64 *)(data + (w->prev_off & (FW_FRAME_COPY - 8)));
	/* The words saying which code the frame runs, at the same instant. */
	f->code_id_addr = 0;
	if (id_len && id_len < FW_CODE_ID_COPY) {
		__u64 code = *(__u64 *)(data + (w->code_off & (FW_FRAME_COPY - 8))) & w->code_mask;
		__u64 at = code + (__u64)(__s64)w->id_start;

		/* bounded where it is used (a spilled bound is lost), past the
		 * compiler, which would drop a mask it knows to be idle */
		barrier_var(id_len);
		id_len &= FW_CODE_ID_COPY - 1;
		if (code && !code_seen(w->buf, code) &&
		    !read_user(data + data_len, id_len, (void *)at, task)) {
			f->code_id_addr = at;
			/* in the map value, not on the stack: the verifier need not
			 * follow the count (as h.npy) */
			w->buf->seen_codes[w->buf->nseen++ & (FW_SEEN_CODES - 1)] = code;
		}
	}
	return 0;
}

/* bpf_loop's callbacks: verified once, not once per frame. */
static long copy_frame_self(__u64 i, void *ctx)
{
	return copy_frame_at(i, ctx, NULL);
}

static long copy_frame_task(__u64 i, void *ctx)
{
	struct py_walk *w = ctx;

	return copy_frame_at(i, w, w->task);
}

struct thread_walk {
	struct task_struct *task;
	__u64 ts;                   /* the state being looked at */
	__u64 want;                 /* the thread's pthread_t */
	__u64 found;
	__s32 next_off, id_off;
};

static __always_inline long thread_at(struct thread_walk *w, struct task_struct *task)
{
	__u64 id = 0, next = 0;
	__s32 id_off = w->id_off, next_off = w->next_off;

	if (!w->ts || id_off < 0 || next_off < 0 || id_off > 4096 || next_off > 4096)
		return 1;
	if (read_user(&id, sizeof(id), (void *)(w->ts + id_off), task))
		return 1;
	if (id == w->want) {
		w->found = w->ts;
		return 1;
	}
	if (read_user(&next, sizeof(next), (void *)(w->ts + next_off), task) || next == w->ts)
		return 1;
	w->ts = next;
	return 0;
}

static long thread_at_self(__u64 i, void *ctx)
{
	return thread_at(ctx, NULL);
}

static long thread_at_task(__u64 i, void *ctx)
{
	struct thread_walk *w = ctx;

	return thread_at(w, w->task);
}

/*
 * A word of thread state ts at offset off: from the span of it read at
 * once (cfg->tstate_span_*; read on the first word asked of ts), else read
 * alone. 0, or the read's error.
 */
static __always_inline long read_tstate_word(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					     __u64 ts, __s32 off, __u64 *out, struct task_struct *task)
{
	__u32 len = cfg->tstate_span_len;
	__s64 at = (__s64)off - cfg->tstate_span_start;
	long err;

	if (!len || len > FW_TSTATE_SPAN || at < 0 || at + 8 > len)
		return read_user(out, sizeof(*out), (void *)(ts + off), task);
	if (buf->tstate_span_at != ts) {
		barrier_var(len);
		if (len > FW_TSTATE_SPAN)
			return -1;
		err = read_user(buf->tstate_span, len, (void *)(ts + cfg->tstate_span_start), task);
		if (err)
			return err;
		buf->tstate_span_at = ts;
	}
	barrier_var(at);
	*out = *(__u64 *)(buf->tstate_span + (at & (FW_TSTATE_SPAN - 8)));
	return 0;
}

/*
 * The thread's state: user space's map entry when it still belongs to this
 * thread (a tid can be reused), else found in the interpreter's list, and
 * remembered. 0: not a Python thread (or the list is not known yet).
 */
static __always_inline __u64 find_tstate(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					 __u32 tid, struct task_struct *task)
{
	struct task_struct *self = task ? task : bpf_get_current_task_btf();
	struct thread_walk w = { .task = task, .next_off = cfg->tstate_next,
				 .id_off = cfg->tstate_thread_id };
	__u64 *ts = bpf_map_lookup_elem(&tstates, &tid), id = 0, now = bpf_ktime_get_ns();

	w.want = FW_TASK_THREAD_POINTER(self) - cfg->pthread_below_tp;
	if (ts && (*ts & FW_NOT_PYTHON) && now - (*ts & ~FW_NOT_PYTHON) < FW_NOT_PYTHON_RECHECK_NS)
		return 0;
	if (ts && *ts && !(*ts & FW_NOT_PYTHON) &&
	    !read_tstate_word(buf, cfg, *ts, cfg->tstate_thread_id, &id, task) && id == w.want)
		return *ts;
	buf->tstate_span_at = 0;
	if (!cfg->threads_head_addr ||
	    read_user(&w.ts, sizeof(w.ts), (void *)cfg->threads_head_addr, task))
		return 0;
	if (task)
		bpf_loop(FW_MAX_THREAD_WALK, thread_at_task, &w, 0);
	else
		bpf_loop(FW_MAX_THREAD_WALK, thread_at_self, &w, 0);
	/* Not found: a native thread, until user space says otherwise or a second passed. */
	id = w.found ? w.found : now | FW_NOT_PYTHON;
	bpf_map_update_elem(&tstates, &tid, &id, BPF_ANY);
	return w.found;
}

/*
 * cfg->py_window: the bytes from the current frame's end down to
 * FW_PY_WINDOW below it, or to the data stack chunk holding it (chunk,
 * mapped whole), where its callers lie. Nothing read (win_len 0): each
 * frame is then read alone.
 */
static __always_inline void read_window(struct py_walk *w, __u64 chunk, struct task_struct *task)
{
	__u64 end = (w->frame + w->size + 7) & ~7ULL, len;

	w->win_base = end > chunk + FW_PY_WINDOW ? end - FW_PY_WINDOW : chunk;
	len = end - w->win_base;
	barrier_var(len);
	if (len == 0 || len > FW_PY_WINDOW)
		return;
	if (!read_user(w->buf->py_window, len, (void *)w->win_base, task))
		w->win_len = len;
}

/* Copy the thread's Python frames into buf->py; returns how many. */
static __always_inline __u32 copy_python(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					 struct task_struct *task)
{
	struct fw_sample_hdr *h = &buf->h;
	struct py_walk w = { .buf = buf, .task = task };
	__u64 ts, chunk = 0, top = 0;

	h->tstate = 0;
	h->cframe = 0;
	h->py_truncated = 0;
	h->npy = 0;
	h->py_stride = 0;
	h->py_data_len = 0;
	buf->tstate_span_at = 0;
	for (int k = 0; k < FW_SEEN_CODES; k++)
		buf->seen_codes[k] = 0;
	buf->nseen = 0;
	ts = find_tstate(buf, cfg, h->tid, task);
	if (!ts)
		return 0;
	h->tstate = ts;
	if (read_tstate_word(buf, cfg, ts, cfg->tstate_frame, &w.frame, task))
		return 0;
	if (cfg->frame_model == FW_FRAMES_311 && w.frame) {
		h->cframe = w.frame;
		if (read_user(&w.frame, sizeof(w.frame), (void *)(w.frame + cfg->cframe_current_frame),
			      task))
			return 0;
	}
	w.size = cfg->frame_size;
	w.prev_off = cfg->frame_previous;
	w.code_off = cfg->frame_code;
	w.id_start = cfg->code_id_start;
	w.id_len = cfg->code_id_len;
	w.code_mask = cfg->frame_code_mask;
	if (w.code_off < 0 || w.code_off > FW_FRAME_COPY - 8)
		w.id_len = 0;
	if (w.size > FW_FRAME_COPY)
		w.size = FW_FRAME_COPY;
	if (w.size < 8 || w.prev_off < 0 || w.prev_off > FW_FRAME_COPY - 8)
		return 0;
	w.data_len = (w.size + 7) & ~7U;
	w.stride = sizeof(struct fw_py_frame) + w.data_len + ((w.id_len + 7) & ~7U);
	h->py_data_len = w.data_len;
	h->py_stride = w.stride;
	w.win_len = 0;
	if (cfg->py_window && w.frame && cfg->tstate_datastack >= 0 &&
	    !read_tstate_word(buf, cfg, ts, cfg->tstate_datastack, &chunk, task) &&
	    !read_tstate_word(buf, cfg, ts, cfg->tstate_datastack + 8, &top, task) &&
	    chunk && chunk <= w.frame && w.frame < top)
		read_window(&w, chunk, task);
	if (task)
		bpf_loop(FW_MAX_PY_FRAMES, copy_frame_task, &w, 0);
	else
		bpf_loop(FW_MAX_PY_FRAMES, copy_frame_self, &w, 0);
	h->py_truncated = w.frame != 0 && h->npy == FW_MAX_PY_FRAMES;
	return h->npy;
}

/*
 * Labels (fwprof.h, struct fw_label_cfg): each variable's value as the
 * thread sees it at the sample's instant.
 */
struct label_walk {
	struct fw_label_rec *rec;
	__u64 *words;                /* buf->lab_words */
	const struct fw_label_cfg *lc;
	struct task_struct *task;
	__u64 tstate, root;
	__u64 ver, id;               /* the thread state's context version and id */
	int have_ctx, have_root, have_ver;
	int ctx_fault;               /* the thread state's context could not be read */
};

static __always_inline __u32 popcount32(__u32 x)
{
	x = x - ((x >> 1) & 0x55555555);
	x = (x & 0x33333333) + ((x >> 2) & 0x33333333);
	x = (x + (x >> 4)) & 0x0f0f0f0f;
	return (x * 0x01010101) >> 24;
}

/* The value of variable var (hash) in the HAMT from w->root: FW_LAB_* (and *value). */
static __always_inline __u32 hamt_find(struct label_walk *w, __u64 var, __u32 hash, __u64 *value,
					__u64 *node_type, struct task_struct *task)
{
	const struct fw_label_cfg *lc = w->lc;
	__u64 node = w->root, type, *words = w->words;
	__u32 shift = 0;

	for (int depth = 0; depth < FW_HAMT_LEVELS; depth++, shift += 5) {
		if (!node || (node & 7))
			return FW_LAB_FAULT;
		if (read_user(&type, sizeof(type), (void *)(node + lc->object_type), task))
			return FW_LAB_FAULT;
		if (type && type == lc->type_collision) {
			__u64 size = 0;

			if (read_user(&size, sizeof(size), (void *)(node + lc->collision_size), task) ||
			    size < 2 || size > 2 * FW_COLLISION_PAIRS ||
			    read_user(words, 16 * FW_COLLISION_PAIRS, (void *)(node + lc->collision_array),
				      task))
				return FW_LAB_FAULT;
			for (int i = 0; i < FW_COLLISION_PAIRS; i++) {
				if (2 * i + 1 < size && words[2 * i] == var) {
					*value = words[2 * i + 1];
					return FW_LAB_VALUE;
				}
			}
			return FW_LAB_UNSET;
		}
		if (shift > 30)
			return FW_LAB_FAULT;   /* 7 levels use all 32 bits: only collisions below */
		if (type && type == lc->type_array) {
			__u64 idx = (hash >> shift) & 0x1f;

			if (read_user(&node, sizeof(node), (void *)(node + lc->array_array + 8 * idx), task))
				return FW_LAB_FAULT;
			if (!node)
				return FW_LAB_UNSET;
			continue;
		}
		/*
		 * Before user space has learnt the bitmap node's type: assume it
		 * is this one (a small context's every node is one), and say so
		 * (*node_type), for user space to check it after the sample.
		 */
		if (type && !lc->type_bitmap && (!*node_type || *node_type == type))
			*node_type = type;
		if (type && (type == lc->type_bitmap || type == *node_type)) {
			__u64 bitmap = 0;
			__u32 bit = 1u << ((hash >> shift) & 0x1f), idx;

			if (read_user(&bitmap, sizeof(bitmap), (void *)(node + lc->bitmap_bitmap), task))
				return FW_LAB_FAULT;
			if (!((__u32)bitmap & bit))
				return FW_LAB_UNSET;
			idx = popcount32((__u32)bitmap & (bit - 1)) & 0x1f;
			if (read_user(words, 16, (void *)(node + lc->bitmap_array + 16 * (__u64)idx), task))
				return FW_LAB_FAULT;
			if (words[0]) {
				if (words[0] != var)
					return FW_LAB_UNSET;
				*value = words[1];
				return FW_LAB_VALUE;
			}
			node = words[1];   /* no key: the sub-node of the keys sharing these bits */
			continue;
		}
		*node_type = type;
		return FW_LAB_TYPE;     /* with the bitmap node's known: an array or collision node's */
	}
	return FW_LAB_FAULT;
}

static __always_inline long label_at(__u64 i, struct label_walk *w, struct task_struct *task)
{
	const struct fw_label_cfg *lc = w->lc;
	struct fw_label_val *v;
	__u64 var, value = 0, node_type = 0;
	__u32 status;

	if (i >= FW_LABELS_MAX)
		return 1;
	v = &w->rec->v[i & (FW_LABELS_MAX - 1)];
	v->cached = 0;
	v->value = 0;
	v->node_type = 0;
	v->head_ok = 0;
	var = lc->var[i & (FW_LABELS_MAX - 1)];
	if (!var) {
		v->status = FW_LAB_NOVAR;
		return 0;
	}
	if (w->ctx_fault || !w->have_ctx) {
		v->status = w->ctx_fault ? FW_LAB_FAULT : FW_LAB_UNSET;
		return 0;
	}
	status = 0;
	if (w->have_ver) {
		/* what ContextVar.get() would answer from the variable's cache */
		__u64 *c = w->words;

		if (!read_user(c, 32, (void *)(var + lc->cache_start), task) &&
		    c[lc->cache_value & 3] && !(c[lc->cache_value & 3] & 7) &&
		    c[lc->cache_tsid & 3] == w->id && c[lc->cache_tsver & 3] == w->ver) {
			value = c[lc->cache_value & 3];
			v->cached = 1;
			status = FW_LAB_VALUE;
		}
	}
	if (!status)
		status = w->have_root ? hamt_find(w, var, lc->hash[i & (FW_LABELS_MAX - 1)], &value,
						  &node_type, task) : FW_LAB_FAULT;
	if (status == FW_LAB_VALUE && (!value || (value & 7)))
		status = FW_LAB_FAULT;
	v->status = status;
	v->node_type = node_type;
	if (status == FW_LAB_VALUE) {
		v->value = value;
		v->head_ok = !read_user(v->head, FW_LABEL_HEAD, (void *)value, task);
	}
	return 0;
}

static long label_self(__u64 i, void *ctx)
{
	return label_at(i, ctx, NULL);
}

static long label_task(__u64 i, void *ctx)
{
	struct label_walk *w = ctx;

	return label_at(i, w, w->task);
}

/*
 * Read the labels of the thread of h (its state found by copy_python) into
 * buf->lab, and send them: 0 sent (or no labels asked, or no Python
 * thread), -1 the ring buffer is full (the sample is not sent either: a
 * sample without its labels would read as unlabelled).
 */
static __always_inline int send_labels(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
				       struct task_struct *task)
{
	const struct fw_label_cfg *lc = &cfg->lab;
	struct fw_label_rec *rec = &buf->lab;
	struct label_walk w = { .rec = rec, .words = buf->lab_words, .lc = lc, .task = task,
				.tstate = buf->h.tstate };
	__u64 ctx = 0, hamt = 0, nkeys = 0;
	__u32 n = lc->nvars;

	if (!read_labels || !n || !w.tstate)
		return 0;
	if (n > FW_LABELS_MAX)
		n = FW_LABELS_MAX;
	rec->kind = FW_REC_LABELS;
	rec->pid = buf->h.pid;
	rec->tid = buf->h.tid;
	rec->time_ns = buf->h.time_ns;
	rec->nvals = n;
	rec->ctx_type = 0;
	rec->hamt_type = 0;
	if (read_user(&ctx, sizeof(ctx), (void *)(w.tstate + lc->tstate_context), task))
		w.ctx_fault = 1;
	else if (ctx) {
		w.have_ctx = 1;
		if (lc->cache)
			w.have_ver = !read_user(&w.ver, sizeof(w.ver),
						(void *)(w.tstate + lc->tstate_context_ver), task) &&
				     !read_user(&w.id, sizeof(w.id), (void *)(w.tstate + lc->tstate_id),
						task);
		if (!read_user(&rec->ctx_type, sizeof(__u64), (void *)(ctx + lc->object_type), task) &&
		    !read_user(&hamt, sizeof(hamt), (void *)(ctx + lc->context_vars), task) && hamt &&
		    !read_user(&rec->hamt_type, sizeof(__u64), (void *)(hamt + lc->object_type), task) &&
		    !read_user(&w.root, sizeof(w.root), (void *)(hamt + lc->hamt_root), task) &&
		    !read_user(&nkeys, sizeof(nkeys), (void *)(hamt + lc->hamt_count), task))
			w.have_root = 1;
		if (w.have_root && !nkeys)
			w.root = 0, w.have_root = 0, w.have_ctx = 0;   /* an empty context: nothing set */
	}
	if (task)
		bpf_loop(n, label_task, &w, 0);
	else
		bpf_loop(n, label_self, &w, 0);
	if (bpf_ringbuf_output(&samples, rec, sizeof(*rec), BPF_RB_NO_WAKEUP)) {
		count(0);
		return -1;
	}
	return 0;
}

/*
 * Copy the user stack to dst: only [sp - FW_BELOW_SP, end) when user space
 * has learnt where this thread's stack ends (the outermost frame of a
 * complete unwind) — a few KiB, which keeps the copy out of the target's
 * caches — else from the page holding sp up, as much of FW_STACK_COPY as is
 * mapped (halving until a read succeeds: one read fails whole when it
 * touches an unmapped page). Below sp: the red zone, where CFI of an
 * epilogue can still place saved registers. Returns the bytes copied.
 */
static __always_inline __u32 copy_user_stack(struct fw_sample_hdr *h, __u8 *dst, __u64 sp,
					     struct task_struct *task)
{
	__u64 *end = bpf_map_lookup_elem(&stack_ends, &h->tid);
	__u64 base = sp - FW_BELOW_SP, len;

	if (end && *end > sp) {
		len = *end - base;
		if (len > 0 && len <= FW_STACK_COPY && !read_user(dst, len, (void *)base, task)) {
			h->stack_base = base;
			return (__u32)len;
		}
	}
	base = sp & ~4095ULL;
	h->stack_base = base;
	for (__u32 size = FW_STACK_COPY; size >= 4096; size /= 2)
		if (!read_user(dst, size, (void *)base, task))
			return size;
	return 0;
}

/*
 * Waking the reader costs the sampled CPU an interrupt and a wake-up per
 * sample; user space drains the buffer at its own moments (every pass of
 * its loop, or once a second: batch_s), so it is woken only when the ring
 * buffer is filling up.
 */
static __always_inline __u64 submit_flags(void)
{
	return bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > wake_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * Build the record for one thread in buf (everything after the fields the
 * caller set). task: NULL for the interrupted thread (the perf_event
 * program), else a thread off a CPU (the iterator). Returns its size, 0 when
 * there is nothing to send.
 */
static __always_inline __u64 build_record(struct fw_sample_buf *buf, const struct fw_target_cfg *cfg,
					  const fw_uregs_t *uregs, struct task_struct *task,
					  void *perf_ctx)
{
	struct fw_sample_hdr *h = &buf->h;
	__u32 npy;
	__s64 got;
	__u64 off, stride;    /* 64-bit: the verifier keeps their bounds */

	h->kstack_bytes = 0;
	h->ustack_bytes = 0;
	h->stack_bytes = 0;
	h->stack_base = 0;
	h->kind = FW_REC_SMALL;
	copy_interp_state(buf, cfg, task);
	npy = copy_python(buf, cfg, task);
	if (npy > FW_MAX_PY_FRAMES)
		npy = FW_MAX_PY_FRAMES;
	h->npy = npy;
	stride = h->py_stride;
	if (stride > FW_PY_SLOT_MAX)
		return 0;
	/* the body's offsets, each checked against what the body holds */
	off = npy * stride;
	barrier_var(off);
	if (off > FW_MAX_PY_FRAMES * FW_PY_SLOT_MAX)
		return 0;
	if (cfg->native) {
		copy_regs(h, uregs);
		got = 0;
		if (cfg->kernel && task)
			got = bpf_get_task_stack(task, buf->body + off, 8 * FW_KSTACK_MAX, 0);
		else if (cfg->kernel && !h->user_mode)
			got = bpf_get_stack(perf_ctx, buf->body + off, 8 * FW_KSTACK_MAX, 0);
		h->kstack_bytes = (__s32)got;
		off += FW_PCS_ADVANCE(got);
		if (off > FW_MAX_PY_FRAMES * FW_PY_SLOT_MAX + 8 * FW_KSTACK_MAX)
			return 0;
		if (cfg->copy_stack || task) {
			h->kind = FW_REC_FULL;
			h->stack_bytes = copy_user_stack(h, buf->body + off, FW_UREGS_SP(uregs), task);
		} else {
			/*
			 * Every module keeps frame pointers: the kernel's walk is
			 * enough (through code without them it follows garbage for
			 * up to FW_USTACK_MAX steps, the costliest part of a sample).
			 */
			got = bpf_get_stack(perf_ctx, buf->body + off, 8 * FW_USTACK_MAX, BPF_F_USER_STACK);
			h->ustack_bytes = (__s32)got;
			off += FW_PCS_ADVANCE(got);
		}
	}
	return FW_PY_OFFSET + off + (__u64)h->stack_bytes;
}

static __always_inline void submit(struct fw_sample_buf *buf, __u64 size, __u64 flags)
{
	/*
	 * Two checks the compiler may not fold into one (size - 1 > max - 1:
	 * the verifier then lost the bound on arm64's build of the iterator).
	 */
	if (!size)
		return;
	barrier_var(size);
	if (size > sizeof(struct fw_sample_buf))
		return;
	if (bpf_ringbuf_output(&samples, buf, size, flags))
		count(0);
	else
		count(1);
}

SEC("perf_event")
int fwprof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, cpu = bpf_get_smp_processor_id();
	struct fw_target_cfg *cfg = bpf_map_lookup_elem(&targets, &tgid);
	struct fw_sample_buf *buf;
	struct fw_sample_hdr *h;
	fw_uregs_t *uregs;
	__u64 size;
	void *up;

	__u32 tid = (__u32)pid_tgid;

	if (!cfg)
		return 0;
	if (!cpu_seen[cpu & (FW_SEEN_CPUS - 1)])
		cpu_seen[cpu & (FW_SEEN_CPUS - 1)] = 1;
	buf = bpf_map_lookup_elem(&scratch, &cpu);
	if (!buf)
		return 0;
	uregs = (fw_uregs_t *)buf->uregs;
	h = &buf->h;
	h->pid = tgid;
	h->tid = tid;
	h->cpu = cpu;
	h->time_ns = bpf_ktime_get_ns();
	h->user_mode = FW_CTX_USER_MODE(ctx);
	h->off_cpu = 0;
	h->syscall_nr = -1;
	h->syscall_arg0 = 0;
	if (cfg->native) {
		up = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (!up || bpf_probe_read_kernel(uregs, sizeof(*uregs), up))
			return 0;
	}
	/* the size through the map value across the label walk (fwprof_waiting) */
	buf->rec_size = build_record(buf, cfg, uregs, NULL, ctx);
	if (buf->rec_size && send_labels(buf, cfg, NULL))
		return 0;
	size = buf->rec_size;
	submit(buf, size, submit_flags());
	return 0;
}

/* Which scratch record the iterator uses: the one past the CPUs' (set by user space). */
const volatile __u32 iter_slot = 0;

/*
 * One tick of wall and gil modes over a target's threads, run by user
 * space's read() of this iterator (one target per link). A thread on a CPU
 * is the cpu-clock's: its samples count its time on a CPU, in every mode,
 * at moments the target cannot move. A thread that is not on a CPU is not
 * changing its stack, so it is read here, whole, registers from where it
 * entered the kernel, and kept as stable only if it did not run meanwhile
 * (its context switches and on_cpu unchanged; the count goes with it, for
 * user space to see that it stayed off a CPU since the tick before).
 *
 * (Until 2026-12: the tick marked a thread on a CPU for the next cpu-clock
 * sample to read. A tick waits on the target: user space's reads and this
 * iterator's copies take its memory map's lock, which brk and mmap hold.
 * The marks then came after such calls, and the moments passed meanwhile
 * were lost: callshapes.py's sorted and fib, just after zlib's brk, read
 * at half their share in wall and gil modes.)
 */
SEC("iter.s/task")
int fwprof_waiting(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct fw_target_cfg *cfg;
	struct fw_sample_buf *buf;
	struct fw_sample_hdr *h;
	fw_uregs_t *uregs;
	__u32 tgid, slot = iter_slot;
	unsigned long switches;
	__u64 size;
	void *up;

	__u32 tid;

	if (!task)
		return 0;
	tgid = task->tgid;
	tid = task->pid;
	cfg = bpf_map_lookup_elem(&targets, &tgid);
	if (!cfg)
		return 0;
	if (task_on_cpu(task))
		return 0;
	buf = bpf_map_lookup_elem(&scratch, &slot);
	if (!buf)
		return 0;
	uregs = (fw_uregs_t *)buf->uregs;
	up = (void *)bpf_task_pt_regs(task);
	if (!up || bpf_probe_read_kernel(uregs, sizeof(*uregs), up))
		return 0;
	switches = task->nvcsw + task->nivcsw;
	h = &buf->h;
	h->pid = tgid;
	h->tid = tid;
	h->cpu = (__u32)-1;
	h->time_ns = bpf_ktime_get_ns();
	h->user_mode = 0;
	h->syscall_nr = FW_UREGS_SYSCALL_NR(uregs);
	h->syscall_arg0 = FW_UREGS_SYSCALL_ARG0(uregs);
	/*
	 * The size goes through the map value across the label walk: the
	 * verifier checks the walk once for every state that reaches it, and
	 * a size it knows (a constant per way the stack copy ended) made each
	 * way a state of its own (0.54 s to load the iterator, 0.05 s so).
	 */
	buf->rec_size = build_record(buf, cfg, uregs, task, NULL);
	if (buf->rec_size && send_labels(buf, cfg, task))
		return 0;
	size = buf->rec_size;
	h->off_cpu = !task_on_cpu(task) && task->nvcsw + task->nivcsw == switches ?
		     FW_OFFCPU_STABLE : FW_OFFCPU_MOVED;
	h->switches = switches;
	/* User space reads the ring buffer after the iteration: no wake-up. */
	submit(buf, size, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * A target's exec, or its main thread's exit, as a record in the ring
 * (struct fw_life_rec): user space then looks at that process (its
 * /proc/PID/stat and exe) at once, and at every target only now and then
 * otherwise. A record the full ring cannot take is counted (counters[2]):
 * user space then looks at every target.
 */
static __always_inline int send_life(__u32 what)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct fw_life_rec rec = {};

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	if (what == FW_LIFE_EXIT && tid != tgid)
		return 0;       /* another thread: the thread list's refresh sees it */
	rec.kind = FW_REC_LIFE;
	rec.pid = tgid;
	rec.tid = tid;
	rec.what = what;
	rec.time_ns = bpf_ktime_get_ns();
	/* rare, and acted on at once: the reader is woken (its records may wait a second) */
	if (bpf_ringbuf_output(&samples, &rec, sizeof(rec), BPF_RB_FORCE_WAKEUP))
		count(2);
	return 0;
}

/* After the new program is loaded: the exec'ing thread is the leader (tgid) now. */
SEC("raw_tp/sched_process_exec")
int fwprof_exec(void *ctx)
{
	(void)ctx;
	return send_life(FW_LIFE_EXEC);
}

/* In do_exit, for every thread (current is the one exiting). */
SEC("raw_tp/sched_process_exit")
int fwprof_exit(void *ctx)
{
	(void)ctx;
	return send_life(FW_LIFE_EXIT);
}
