// SPDX-License-Identifier: GPL-2.0
/*
 * framewalk's BPF program: runs on every cpu-clock perf event, keeps only
 * threads of the target processes, and writes one record per sample into the
 * ring buffer: the kernel stack, the kernel's frame-pointer walk of the user
 * stack, the user registers and (when a module lacks frame pointers) the top
 * of the user stack for user space's DWARF unwinder, and a copy of each
 * Python frame of the thread, found through a tid -> thread state map that
 * user space keeps current. Names and lines are resolved in user space.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "fwprof.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct fw_target_cfg);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} tstates SEC(".maps");

/* tid -> end of the stack the last complete unwind needed (user space's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} stack_ends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");      /* 0: ring buffer full, 1: samples written */

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void copy_regs(struct fw_sample_hdr *h, const struct pt_regs *r)
{
	h->regs[0] = r->rax;
	h->regs[1] = r->rdx;
	h->regs[2] = r->rcx;
	h->regs[3] = r->rbx;
	h->regs[4] = r->rsi;
	h->regs[5] = r->rdi;
	h->regs[6] = r->rbp;
	h->regs[7] = r->rsp;
	h->regs[8] = r->r8;
	h->regs[9] = r->r9;
	h->regs[10] = r->r10;
	h->regs[11] = r->r11;
	h->regs[12] = r->r12;
	h->regs[13] = r->r13;
	h->regs[14] = r->r14;
	h->regs[15] = r->r15;
	h->regs[16] = r->rip;
}

static __always_inline void copy_python(struct fw_sample_hdr *h, const struct fw_target_cfg *cfg)
{
	__u64 *ts = bpf_map_lookup_elem(&tstates, &h->tid);
	__u64 frame = 0;
	__u32 size = cfg->frame_size, n = 0;
	__s32 prev_off = cfg->frame_previous;

	if (!ts)
		return;
	h->tstate = *ts;
	if (bpf_probe_read_user(&frame, sizeof(frame), (void *)(*ts + cfg->tstate_frame)))
		return;
	if (cfg->frame_model == FW_FRAMES_311 && frame &&
	    bpf_probe_read_user(&frame, sizeof(frame), (void *)(frame + cfg->cframe_current_frame)))
		return;
	if (size > FW_FRAME_COPY)
		size = FW_FRAME_COPY;
	if (size < 8 || prev_off < 0 || prev_off > FW_FRAME_COPY - 8)
		return;
	for (int i = 0; i < FW_MAX_PY_FRAMES; i++) {
		struct fw_py_frame *f = &h->py[i];

		if (!frame)
			break;
		f->addr = frame;
		if (bpf_probe_read_user(f->data, size, (void *)frame))
			break;
		n++;
		frame = *(__u64 *)(f->data + (prev_off & (FW_FRAME_COPY - 8)));
	}
	h->npy = n;
	h->py_truncated = frame != 0 && n == FW_MAX_PY_FRAMES;
}

static __always_inline void fill_common(struct fw_sample_hdr *h, struct bpf_perf_event_data *ctx,
					const struct fw_target_cfg *cfg, __u64 pid_tgid,
					const struct pt_regs *uregs)
{
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->cpu = bpf_get_smp_processor_id();
	h->time_ns = bpf_ktime_get_ns();
	h->npy = 0;
	h->tstate = 0;
	h->py_truncated = 0;
	h->user_mode = (ctx->regs.cs & 3) == 3;
	copy_regs(h, uregs);
	h->kstack_bytes = h->user_mode ? 0 :
		bpf_get_stack(ctx, h->kstack, sizeof(h->kstack), 0);
	/*
	 * The kernel's frame-pointer walk is only used when no stack is copied;
	 * through code without frame pointers it follows garbage for up to
	 * FW_USTACK_MAX steps, the costliest part of a sample.
	 */
	h->ustack_bytes = cfg->copy_stack ? 0 :
		bpf_get_stack(ctx, h->ustack, sizeof(h->ustack), BPF_F_USER_STACK);
	copy_python(h, cfg);
}

/*
 * Copy only [sp - FW_BELOW_SP, end) when user space has learnt where this
 * thread's stack ends (the outermost frame of a complete unwind): a few KiB
 * instead of FW_STACK_COPY, which keeps the copy out of the target's caches.
 * Below sp: the red zone, where CFI of an epilogue can still place saved
 * registers (FW_BELOW_SP, fwprof.h).
 */
static __always_inline int copy_known_stack(struct fw_sample_full *rec, __u64 sp, __u32 tid)
{
	__u64 *end = bpf_map_lookup_elem(&stack_ends, &tid);
	__u64 base = sp - FW_BELOW_SP, len;

	if (!end || *end <= sp)
		return 0;
	len = *end - base;
	if (len > FW_STACK_COPY || len == 0)
		return 0;
	if (bpf_probe_read_user(rec->stack, len, (void *)base))
		return 0;
	rec->h.stack_base = base;
	rec->h.stack_bytes = (__u32)len;
	return 1;
}

/*
 * Waking the reader costs the sampled CPU an interrupt and a wake-up per
 * sample; user space polls at least every POLL_MS anyway, so it is woken
 * only when the ring buffer is filling up.
 */
#define FW_RB_WAKE_BYTES (8 << 20)

static __always_inline __u64 submit_flags(void)
{
	return bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > FW_RB_WAKE_BYTES ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

SEC("perf_event")
int fwprof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct fw_target_cfg *cfg = bpf_map_lookup_elem(&targets, &tgid);
	struct pt_regs uregs;
	struct task_struct *task;
	void *up;

	if (!cfg)
		return 0;
	task = bpf_get_current_task_btf();
	up = (void *)bpf_task_pt_regs(task);
	if (!up || bpf_probe_read_kernel(&uregs, sizeof(uregs), up))
		return 0;
	if (cfg->copy_stack) {
		struct fw_sample_full *rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);
		__u64 base = uregs.rsp & ~4095ULL;
		__u32 got = 0;

		if (!rec) {
			count(0);
			return 0;
		}
		rec->h.kind = FW_REC_FULL;
		fill_common(&rec->h, ctx, cfg, pid_tgid, &uregs);
		if (copy_known_stack(rec, uregs.rsp, (__u32)pid_tgid))
			goto submit;
		/* Whole pages from the one holding sp upward, until a read fails. */
#pragma unroll
		for (int i = 0; i < FW_STACK_PAGES; i++) {
			if (bpf_probe_read_user(rec->stack + i * 4096, 4096, (void *)(base + i * 4096)))
				break;
			got += 4096;
		}
		rec->h.stack_base = base;
		rec->h.stack_bytes = got;
submit:
		bpf_ringbuf_submit(rec, submit_flags());
	} else {
		struct fw_sample_hdr *rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);

		if (!rec) {
			count(0);
			return 0;
		}
		rec->kind = FW_REC_SMALL;
		fill_common(rec, ctx, cfg, pid_tgid, &uregs);
		rec->stack_bytes = 0;
		bpf_ringbuf_submit(rec, submit_flags());
	}
	count(1);
	return 0;
}
