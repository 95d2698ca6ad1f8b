/*
 * x86-64 implementation of arch.h. DWARF numbers (System V psABI): rax 0,
 * rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, rip 16.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "arch/arch.h"

const int arch_reg_ip = 16;
const int arch_reg_sp = 7;
const int arch_reg_fp = 6;
const char *const arch_name = "x86_64";

/* [rbp] = caller's rbp, [rbp+8] = return address, caller's rsp = rbp+16 */
const struct arch_fp_layout arch_fp = { 0, 8, 16 };

int arch_reg_callee_saved(int n)
{
	/* rbx, rbp, r12-r15 (System V AMD64 ABI) */
	return n == 3 || n == 6 || (n >= 12 && n <= 15);
}

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
	regs->in_syscall = (long)u.orig_rax >= 0;
	return 0;
}

/* The system calls a thread is commonly found waiting in. */
static const struct {
	long nr;
	const char *name;
	int fd_arg;
} syscalls[] = {
	{ 0, "read", 1 }, { 1, "write", 1 }, { 7, "poll", 0 }, { 17, "pread64", 1 },
	{ 18, "pwrite64", 1 }, { 19, "readv", 1 }, { 20, "writev", 1 }, { 23, "select", 0 },
	{ 34, "pause", 0 }, { 35, "nanosleep", 0 }, { 42, "connect", 1 }, { 43, "accept", 1 },
	{ 44, "sendto", 1 }, { 45, "recvfrom", 1 }, { 46, "sendmsg", 1 }, { 47, "recvmsg", 1 },
	{ 61, "wait4", 0 }, { 72, "fcntl", 1 }, { 74, "fsync", 1 }, { 75, "fdatasync", 1 },
	{ 128, "rt_sigtimedwait", 0 }, { 130, "rt_sigsuspend", 0 }, { 202, "futex", 0 },
	{ 230, "clock_nanosleep", 0 }, { 232, "epoll_wait", 1 }, { 247, "waitid", 0 },
	{ 257, "openat", 0 }, { 270, "pselect6", 0 }, { 271, "ppoll", 0 },
	{ 281, "epoll_pwait", 1 }, { 288, "accept4", 1 }, { 295, "preadv", 1 },
	{ 299, "recvmmsg", 1 }, { 307, "sendmmsg", 1 }, { 426, "io_uring_enter", 1 },
	{ 441, "epoll_pwait2", 1 }, { 449, "futex_waitv", 0 },
};

const char *arch_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

int arch_syscall_fd_arg(long nr)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].fd_arg;
	return 0;
}
