/*
 * x86-64 implementation of arch.h. DWARF numbers (System V psABI): rax 0,
 * rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, rip 16.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "arch/arch.h"

#define X86_64_NREGS 17
_Static_assert(X86_64_NREGS <= ARCH_NREGS, "struct arch_regs too small for x86-64");

const int arch_nregs = X86_64_NREGS;
const int arch_reg_ip = 16;
const int arch_reg_sp = 7;
const int arch_reg_fp = 6;
const char *const arch_name = "x86-64";
const unsigned arch_elf_machine = EM_X86_64;
const char *const arch_multiarch = "x86_64-linux-gnu";
/* call pushed the return address: CFA = rsp + 8 */
const int64_t arch_entry_cfa_offset = 8;
const int arch_reg_ra = -1;
const uint64_t arch_plt_header_size = 16;
/* TLS variant 2: the fs base is struct pthread itself (pthread_self()) */
const int arch_pthread_below_tp = 0;

/* [rbp] = caller's rbp, [rbp+8] = return address, caller's rsp = rbp+16 */
const struct arch_fp_layout arch_fp = { 0, 8, 16, 1 };
const size_t arch_prologue_window = 32;

static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const uint8_t push_rbp = 0x55;
static const uint8_t mov_rsp_rbp[][3] = {
	{ 0x48, 0x89, 0xe5 },          /* mov %rsp,%rbp (gcc, clang) */
	{ 0x48, 0x8b, 0xec },          /* the same with the other opcode */
};
static const uint8_t push_rbx = 0x53;          /* r12-r15: 41 54..57 */
static const uint8_t moves_rsp[][3] = {
	{ 0x48, 0x83, 0xec },          /* sub $imm8,%rsp */
	{ 0x48, 0x81, 0xec },          /* sub $imm32,%rsp */
};

/* [endbr64] push %rbp; ... mov %rsp,%rbp, with nothing between that moves rsp. */
int arch_prologue_sets_fp(const uint8_t *code, size_t len, size_t window)
{
	if (len >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64))) {
		code += sizeof(endbr64);
		len -= sizeof(endbr64);
	}
	if (len < 4 || code[0] != push_rbp)
		return 0;
	if (len > window)
		len = window;
	/*
	 * The scheduler may put a few instructions between the two, but none
	 * that moves rsp: after a sub or another push, "mov %rsp,%rbp" only
	 * borrows rbp as a scratch register. Scanning bytes, not instructions,
	 * such a stop can misfire inside an operand: that only loses a match.
	 */
	for (size_t at = 1; at + 3 <= len; at++) {
		for (size_t i = 0; i < sizeof(mov_rsp_rbp) / sizeof(mov_rsp_rbp[0]); i++)
			if (!memcmp(code + at, mov_rsp_rbp[i], 3))
				return 1;
		for (size_t i = 0; i < sizeof(moves_rsp) / sizeof(moves_rsp[0]); i++)
			if (!memcmp(code + at, moves_rsp[i], 3))
				return 0;
		if (code[at] == push_rbx || (code[at] == 0x41 && code[at + 1] >= 0x54 &&
					     code[at + 1] <= 0x57))
			return 0;
	}
	return 0;
}

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
	regs->syscall_nr = regs->in_syscall ? (long)u.orig_rax : -1;
	regs->syscall_arg0 = u.rdi;
	regs->pac_mask = 0;
	return 0;
}

/* No pointer authentication: return addresses are plain addresses. */
int arch_ptrace_pac_mask(pid_t tid, uint64_t *mask)
{
	(void)tid;
	*mask = 0;
	return 0;
}

uint64_t arch_strip_ra(uint64_t ra, uint64_t pac_mask)
{
	(void)pac_mask;
	return ra;
}

/* The system calls a thread is commonly found waiting in. */
const struct arch_syscall arch_syscalls[] = {
	{ 0, "read", 1 }, { 1, "write", 1 }, { 7, "poll", 0 }, { 17, "pread64", 1 },
	{ 18, "pwrite64", 1 }, { 19, "readv", 1 }, { 20, "writev", 1 }, { 23, "select", 0 },
	{ 34, "pause", 0 }, { 35, "nanosleep", 0 }, { 42, "connect", 1 }, { 43, "accept", 1 },
	{ 44, "sendto", 1 }, { 45, "recvfrom", 1 }, { 46, "sendmsg", 1 }, { 47, "recvmsg", 1 },
	{ 61, "wait4", 0 }, { 72, "fcntl", 1 }, { 74, "fsync", 1 }, { 75, "fdatasync", 1 },
	{ 128, "rt_sigtimedwait", 0 }, { 130, "rt_sigsuspend", 0 }, { 202, "futex", 0 },
	{ 219, "restart_syscall", 0 },
	{ 230, "clock_nanosleep", 0 }, { 232, "epoll_wait", 1 }, { 247, "waitid", 0 },
	{ 257, "openat", 0 }, { 270, "pselect6", 0 }, { 271, "ppoll", 0 },
	{ 281, "epoll_pwait", 1 }, { 288, "accept4", 1 }, { 295, "preadv", 1 },
	{ 299, "recvmmsg", 1 }, { 307, "sendmmsg", 1 }, { 426, "io_uring_enter", 1 },
	{ 441, "epoll_pwait2", 1 }, { 449, "futex_waitv", 0 },
};

const size_t arch_syscall_count = sizeof(arch_syscalls) / sizeof(arch_syscalls[0]);

int arch_syscall_is_restart(long nr)
{
	return nr == 219;
}
