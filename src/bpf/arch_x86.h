/*
 * The BPF program's architecture facts for x86-64 (meson.build passes
 * -include of this file with -D__TARGET_ARCH_x86; arch_arm64.h is the other
 * one): the user registers a task's pt_regs holds and their DWARF order in
 * a record, the stack pointer, whether a perf sample interrupted user code,
 * the system call a waiting thread is in, and the thread pointer glibc's
 * pthread_t is derived from. Kept to these few definitions, so
 * fwprof.bpf.c has no architecture in its logic.
 */
#ifndef FRAMEWALK_BPF_ARCH_H
#define FRAMEWALK_BPF_ARCH_H

#include <linux/ptrace.h>

/* The kernel's pt_regs of a task: on x86-64 its uapi layout. */
typedef struct pt_regs fw_uregs_t;

/* x86-64 keeps the thread pointer (fs base) in the thread struct. */
struct thread_struct {
	unsigned long fsbase;
} __attribute__((preserve_access_index));

/* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip (FW_NREGS 17) */
#define FW_COPY_REGS(h, r) do {                                           \
	(h)->regs[0] = (r)->rax; (h)->regs[1] = (r)->rdx;                 \
	(h)->regs[2] = (r)->rcx; (h)->regs[3] = (r)->rbx;                 \
	(h)->regs[4] = (r)->rsi; (h)->regs[5] = (r)->rdi;                 \
	(h)->regs[6] = (r)->rbp; (h)->regs[7] = (r)->rsp;                 \
	(h)->regs[8] = (r)->r8; (h)->regs[9] = (r)->r9;                   \
	(h)->regs[10] = (r)->r10; (h)->regs[11] = (r)->r11;               \
	(h)->regs[12] = (r)->r12; (h)->regs[13] = (r)->r13;               \
	(h)->regs[14] = (r)->r14; (h)->regs[15] = (r)->r15;               \
	(h)->regs[16] = (r)->rip;                                         \
} while (0)
#define FW_UREGS_SP(r) ((r)->rsp)
/* the perf sample's registers (struct pt_regs here): CPL 3 */
#define FW_CTX_USER_MODE(ctx) (((ctx)->regs.cs & 3) == 3)
/* a thread off a CPU: the system call it entered the kernel for (-1: none) */
#define FW_UREGS_SYSCALL_NR(r) ((__s32)(r)->orig_rax)
#define FW_UREGS_SYSCALL_ARG0(r) ((r)->rdi)
/* the thread pointer (fs base): glibc's pthread_t on x86-64 (TLS variant 2) */
#define FW_TASK_THREAD_POINTER(task) ((task)->thread.fsbase)

#endif
