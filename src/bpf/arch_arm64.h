/*
 * The BPF program's architecture facts for aarch64 (meson.build passes
 * -include of this file with -D__TARGET_ARCH_arm64; see arch_x86.h for
 * what each definition is). The perf sample's registers are struct
 * user_pt_regs (bpf_user_pt_regs_t on arm64); a task's kernel pt_regs
 * begins with the same registers, then orig_x0 and syscallno, a layout the
 * kernel has kept since arm64 began (written out here: uapi has no pt_regs
 * for arm64).
 */
#ifndef FRAMEWALK_BPF_ARCH_H
#define FRAMEWALK_BPF_ARCH_H

#include <linux/ptrace.h>

struct fw_arm64_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
	__u64 orig_x0;
	__s32 syscallno;
	__u32 unused2;
};
typedef struct fw_arm64_pt_regs fw_uregs_t;

/* The thread pointer (TPIDR_EL0) as the kernel saves it. */
struct thread_struct {
	struct {
		unsigned long tp_value;
	} __attribute__((preserve_access_index)) uw;
} __attribute__((preserve_access_index));

/* DWARF order: x0-x30, sp, pc (FW_NREGS 33) */
#define FW_COPY_REGS(h, r) do {                                           \
	for (int fw_i_ = 0; fw_i_ < 31; fw_i_++)                          \
		(h)->regs[fw_i_] = (r)->regs[fw_i_];                      \
	(h)->regs[31] = (r)->sp;                                          \
	(h)->regs[32] = (r)->pc;                                          \
} while (0)
#define FW_UREGS_SP(r) ((r)->sp)
/* EL0t: PSTATE.M (bits 0-3) 0 */
#define FW_CTX_USER_MODE(ctx) (((ctx)->regs.pstate & 0xf) == 0)
#define FW_UREGS_SYSCALL_NR(r) ((r)->syscallno)
#define FW_UREGS_SYSCALL_ARG0(r) ((r)->orig_x0)
/*
 * The thread pointer (TPIDR_EL0). glibc's pthread_t on aarch64 (TLS variant
 * 1) lies sizeof(struct pthread) below it, a size that differs between glibc
 * releases: user space reads it from the target's glibc
 * (_thread_db_sizeof_pthread) into the target's pthread_below_tp.
 */
#define FW_TASK_THREAD_POINTER(task) ((task)->thread.uw.tp_value)

#endif
