/*
 * Definitions shared by the BPF program (fwprof.bpf.c) and its loader
 * (sampler/bpf.c): the per-target configuration user space writes into a map
 * and the sample records the program writes into the ring buffer. Plain
 * fixed-size types only, so both compilers agree on the layout.
 */
#ifndef FRAMEWALK_BPF_FWPROF_H
#define FRAMEWALK_BPF_FWPROF_H

#include <linux/types.h>

#define FW_MAX_PY_FRAMES 64      /* Python frames copied per sample */
#define FW_FRAME_COPY 128        /* bytes copied per frame (>= every frame_size) */
#define FW_STACK_PAGES 8
#define FW_STACK_COPY (FW_STACK_PAGES * 4096)  /* user stack copied from sp */
#define FW_BELOW_SP 256          /* a trimmed copy starts this far below sp */
#define FW_KSTACK_MAX 64
#define FW_USTACK_MAX 127
#define FW_NREGS 17              /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */

#define FW_FRAMES_OBJECTS 1      /* <= 3.10 */
#define FW_FRAMES_311 2          /* tstate -> cframe -> current_frame */
#define FW_FRAMES_312 3          /* tstate -> current_frame */

/* Per target process (key: tgid). */
struct fw_target_cfg {
	__u32 frame_model;
	__s32 tstate_frame;          /* offset in the thread state */
	__s32 cframe_current_frame;  /* 3.11/3.12 */
	__s32 frame_previous;
	__u32 frame_size;            /* bytes of a frame to copy (<= FW_FRAME_COPY) */
	__u32 copy_stack;            /* copy the user stack (a module lacks frame pointers) */
};

#define FW_REC_SMALL 1           /* no stack copy: user pcs from the kernel's fp walk */
#define FW_REC_FULL 2            /* registers + the top of the user stack */

struct fw_py_frame {
	__u64 addr;
	__u8 data[FW_FRAME_COPY];
};

struct fw_sample_hdr {
	__u32 kind;                  /* FW_REC_* */
	__u32 pid, tid, cpu;
	__u64 time_ns;
	__u64 tstate;                /* 0: no Python thread state known */
	__u32 npy;                   /* Python frames copied */
	__u32 py_truncated;          /* the chain went on past FW_MAX_PY_FRAMES */
	__s32 kstack_bytes;          /* bpf_get_stack results (bytes, or -errno) */
	__s32 ustack_bytes;
	__u32 stack_bytes;           /* user stack bytes copied (FULL), from stack_base */
	__u64 stack_base;            /* sp rounded down to its page */
	__u32 user_mode;             /* the sample interrupted user code */
	__u64 regs[FW_NREGS];
	__u64 kstack[FW_KSTACK_MAX];
	__u64 ustack[FW_USTACK_MAX];
	struct fw_py_frame py[FW_MAX_PY_FRAMES];
};

struct fw_sample_full {
	struct fw_sample_hdr h;
	__u8 stack[FW_STACK_COPY];
};

#endif
