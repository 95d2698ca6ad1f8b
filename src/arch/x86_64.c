/*
 * x86-64 implementation of arch.h. DWARF numbers (System V psABI): rax 0,
 * rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, rip 16.
 */
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "arch/arch.h"

const int arch_reg_ip = 16;
const int arch_reg_sp = 7;
const int arch_reg_fp = 6;
const char *const arch_name = "x86_64";

/* [rbp] = caller's rbp, [rbp+8] = return address, caller's rsp = rbp+16 */
const struct arch_fp_layout arch_fp = { 0, 8, 16 };

int arch_ptrace_getregs(pid_t tid, struct arch_regs *regs)
{
	struct user_regs_struct u;

	if (ptrace(PTRACE_GETREGS, tid, 0, &u) < 0)
		return -errno;
	regs->valid = 0;
	arch_reg_set(regs, 0, u.rax);
	arch_reg_set(regs, 1, u.rdx);
	arch_reg_set(regs, 2, u.rcx);
	arch_reg_set(regs, 3, u.rbx);
	arch_reg_set(regs, 4, u.rsi);
	arch_reg_set(regs, 5, u.rdi);
	arch_reg_set(regs, 6, u.rbp);
	arch_reg_set(regs, 7, u.rsp);
	arch_reg_set(regs, 8, u.r8);
	arch_reg_set(regs, 9, u.r9);
	arch_reg_set(regs, 10, u.r10);
	arch_reg_set(regs, 11, u.r11);
	arch_reg_set(regs, 12, u.r12);
	arch_reg_set(regs, 13, u.r13);
	arch_reg_set(regs, 14, u.r14);
	arch_reg_set(regs, 15, u.r15);
	arch_reg_set(regs, 16, u.rip);
	return 0;
}
