/*
 * aarch64 implementation of arch.h. DWARF numbers (AArch64 DWARF ABI):
 * x0-x30 0-30 (x29 the frame pointer, x30 the link register and the CFI's
 * return address column), sp 31, pc 32. The frame record: x29 points at
 * {caller's x29, x30}, and a call leaves the return address in x30, not on
 * the stack, so a function's entry CFA is sp itself. Code built with
 * -mbranch-protection=standard (Debian, Ubuntu) signs the return address
 * (paciasp) before saving it: arch_strip_ra takes the pointer authentication
 * code off again.
 *
 * The kernel's register layouts are written out here (they are the uapi's,
 * stable) rather than taken from <asm/ptrace.h>, so that this file also
 * compiles on another host, for the unit tests that run the unwinder with
 * these facts (tests/unit/test_arch_aarch64.c).
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch/arch.h"

#define AARCH64_NREGS 33
_Static_assert(AARCH64_NREGS <= ARCH_NREGS, "struct arch_regs too small for aarch64");

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef NT_PRSTATUS
#define NT_PRSTATUS 1
#endif
/* <linux/elf.h> regset numbers (not in every libc's <elf.h>) */
#define FW_NT_ARM_SYSTEM_CALL 0x404
#define FW_NT_ARM_PAC_MASK 0x406

/* struct user_pt_regs and struct user_pac_mask of arm64's <asm/ptrace.h> */
struct aarch64_user_regs {
	uint64_t regs[31];
	uint64_t sp;
	uint64_t pc;
	uint64_t pstate;
};
struct aarch64_pac_mask {
	uint64_t data_mask;
	uint64_t insn_mask;
};

const int arch_nregs = AARCH64_NREGS;
const int arch_reg_ip = 32;
const int arch_reg_sp = 31;
const int arch_reg_fp = 29;
const char *const arch_name = "aarch64";
const unsigned arch_elf_machine = EM_AARCH64;
const char *const arch_multiarch = "aarch64-linux-gnu";
/* bl leaves the return address in x30: the CFA at entry is sp + 0 */
const int64_t arch_entry_cfa_offset = 0;
const int arch_reg_ra = 30;
const uint64_t arch_plt_header_size = 32;
/* TLS variant 1: struct pthread right below TPIDR_EL0 (glibc's THREAD_SELF) */
const int arch_pthread_below_tp = 1;

/*
 * [x29] = caller's x29, [x29+8] = x30 (the return address). The caller's sp
 * is not in the record: clang puts the record at the top of the frame
 * (caller's sp = x29 + 16), gcc at the bottom, below the locals (x29 + the
 * frame size); x29 + 16 is the lowest it can be, and the caller's own record
 * lies at or above it, which is what the walk's checks need. Not exact: the
 * unwinder prefers the CFI step where there is CFI (caller_sp_exact 0).
 */
const struct arch_fp_layout arch_fp = { 0, 8, 16, 0 };
const size_t arch_prologue_window = 64;

/*
 * Without a known mask: every bit from the 48-bit virtual address size up
 * (Linux maps user code below 2^48 unless a process asks for more with a
 * hint address), which covers the PAC field of 39- to 48-bit configurations
 * and the top byte.
 */
#define AARCH64_DEFAULT_PAC_MASK 0xffff000000000000ull
/* The top byte is never part of a user code address (bit 55 selects the kernel half). */
#define AARCH64_TOP_BITS 0xff80000000000000ull

uint64_t arch_strip_ra(uint64_t ra, uint64_t pac_mask)
{
	uint64_t mask = pac_mask ? pac_mask | AARCH64_TOP_BITS : AARCH64_DEFAULT_PAC_MASK;

	return ra & ~mask;
}

/* ---- prologues --------------------------------------------------------- */

static uint32_t insn_at(const uint8_t *code)
{
	/* A64 instructions are little-endian whatever the data endianness. */
	return (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 |
	       (uint32_t)code[3] << 24;
}

/* paciasp, pacibsp, bti c, bti j, bti jc: hints that may open a function */
static int is_entry_hint(uint32_t i)
{
	return i == 0xd503233f || i == 0xd503237f || i == 0xd503245f || i == 0xd503249f ||
	       i == 0xd50324df;
}

/* stp x29, x30, [sp, #imm]! (pre-index, writes sp back): imm in bytes, or 1 if not that */
static int64_t stp_fp_lr_pre(uint32_t i)
{
	if ((i & 0xffc07fff) != 0xa9807bfd)
		return 1;
	return (int64_t)((int32_t)(i << 10) >> 25) * 8;      /* imm7, signed, scaled by 8 */
}

/* stp x29, x30, [sp, #imm] (signed offset, no write-back): imm, or -1 if not that */
static int64_t stp_fp_lr_off(uint32_t i)
{
	int64_t imm;

	if ((i & 0xffc07fff) != 0xa9007bfd)
		return -1;
	imm = (int64_t)((int32_t)(i << 10) >> 25) * 8;
	return imm >= 0 ? imm : -1;
}

/* add x29, sp, #imm (mov x29, sp when imm is 0) */
static int is_set_fp(uint32_t i, int64_t imm)
{
	return imm >= 0 && imm < 4096 && i == (0x910003fdu | (uint32_t)imm << 10);
}

/* sub sp, sp, #imm{, lsl 12} or sub sp, sp, xN (a frame too large for an immediate) */
static int lowers_sp(uint32_t i)
{
	return (i & 0xff8003ff) == 0xd10003ff || (i & 0xffe003ff) == 0xcb2003ff;
}

/* Moves sp: sub/add sp, sp, #imm or xN, or a pre/post-indexed store or load with sp write-back. */
static int moves_sp(uint32_t i)
{
	return lowers_sp(i) ||
	       (i & 0xff8003ff) == 0x910003ff ||   /* add sp, sp, #imm{, lsl 12} */
	       (i & 0xffe003ff) == 0x8b2003ff ||   /* add sp, sp, xN */
	       (i & 0xfec003e0) == 0xa88003e0 ||   /* stp/ldp xN, xM, [sp], #imm / [sp, #imm]! */
	       (i & 0xffe00fe0) == 0xf8000fe0 ||   /* str xN, [sp, #imm]! */
	       (i & 0xffe00fe0) == 0xf80007e0;     /* str xN, [sp], #imm */
}

/*
 * [paciasp | bti c], then the frame record stored and x29 pointed at it:
 * stp x29, x30, [sp, #-N]! ... mov x29, sp (gcc, clang), or, in a frame
 * too large for that, sub sp, sp, #N (or xN) ... stp x29, x30, [sp, #off]
 * ... add x29, sp, #off (mov x29, sp when off is 0). The compiler schedules
 * other instructions in between (the frame size into x12, arguments moved);
 * nothing between the record's store and the x29 set may move sp, or x29
 * would not point at the record.
 */
int arch_prologue_sets_fp(const uint8_t *code, size_t len, size_t window)
{
	size_t at = 0;
	int64_t off = -1;
	int lowered = 0;

	if (len > window)
		len = window;
	while (at + 4 <= len && is_entry_hint(insn_at(code + at)))
		at += 4;
	/* the record's store */
	for (; at + 4 <= len && off < 0; at += 4) {
		uint32_t i = insn_at(code + at);

		if (stp_fp_lr_pre(i) < 0 && !lowered)
			off = 0;
		else if (lowered && stp_fp_lr_off(i) >= 0)
			off = stp_fp_lr_off(i);
		else if (lowers_sp(i))
			lowered = 1;
		else if (moves_sp(i))
			return 0;
	}
	if (off < 0)
		return 0;
	/* x29 set to it */
	for (; at + 4 <= len; at += 4) {
		uint32_t i = insn_at(code + at);

		if (is_set_fp(i, off))
			return 1;
		if (moves_sp(i))
			return 0;
	}
	return 0;
}

int arch_reg_callee_saved(int n)
{
	/* x19-x28, x29 (fp), sp (AAPCS64); x30 is the return address, not preserved */
	return (n >= 19 && n <= 29) || n == 31;
}

/* ---- ptrace ------------------------------------------------------------- */

int arch_ptrace_pac_mask(pid_t tid, uint64_t *mask)
{
	struct aarch64_pac_mask m;
	struct iovec iov = { &m, sizeof(m) };

	*mask = 0;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)FW_NT_ARM_PAC_MASK, &iov) < 0)
		return -errno;   /* EINVAL: no pointer authentication on this CPU or kernel */
	if (iov.iov_len < sizeof(m))
		return -EIO;
	*mask = m.insn_mask;
	return 0;
}

#define SVC_0 0xd4000001u

/*
 * Is the stopped thread inside a system call, and which? A ptrace stop
 * taken in a blocking call (PTRACE_INTERRUPT, a signal) has already set the
 * call up to be restarted: the kernel forgot its number (NT_ARM_SYSTEM_CALL
 * reads -1), put x0 back to the first argument and the pc back on the svc;
 * x8 still holds the number. At a syscall-enter or -exit stop the regset
 * has the number.
 */
static void syscall_state(pid_t tid, const struct aarch64_user_regs *u, struct arch_regs *regs)
{
	int nr = -1;
	struct iovec iov = { &nr, sizeof(nr) };
	long word;

	regs->in_syscall = 0;
	regs->syscall_nr = -1;
	regs->syscall_arg0 = u->regs[0];
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)FW_NT_ARM_SYSTEM_CALL, &iov) == 0 &&
	    nr >= 0) {
		regs->in_syscall = 1;
		regs->syscall_nr = nr;
		return;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)u->pc, 0);
	if (errno || (uint32_t)word != SVC_0)   /* little-endian: the word's low half is at pc */
		return;
	regs->in_syscall = 1;
	regs->syscall_nr = (long)u->regs[8];
}

int arch_ptrace_getregs(pid_t tid, struct arch_regs *regs)
{
	struct aarch64_user_regs u;
	struct iovec iov = { &u, sizeof(u) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) < 0)
		return -errno;
	if (iov.iov_len < sizeof(u))
		return -EIO;
	regs->valid = 0;
	for (int n = 0; n < 31; n++)
		arch_reg_set(regs, n, u.regs[n]);
	arch_reg_set(regs, 31, u.sp);
	arch_reg_set(regs, 32, u.pc);
	syscall_state(tid, &u, regs);
	if (arch_ptrace_pac_mask(tid, &regs->pac_mask))
		regs->pac_mask = 0;
	return 0;
}

/* ---- system calls (the generic table, asm-generic/unistd.h) ------------- */

/* The system calls a thread is commonly found waiting in. */
const struct arch_syscall arch_syscalls[] = {
	{ 22, "epoll_pwait", 1 }, { 25, "fcntl", 1 }, { 56, "openat", 0 }, { 63, "read", 1 },
	{ 64, "write", 1 }, { 65, "readv", 1 }, { 66, "writev", 1 }, { 67, "pread64", 1 },
	{ 68, "pwrite64", 1 }, { 69, "preadv", 1 }, { 72, "pselect6", 0 }, { 73, "ppoll", 0 },
	{ 82, "fsync", 1 }, { 83, "fdatasync", 1 }, { 95, "waitid", 0 }, { 98, "futex", 0 },
	{ 101, "nanosleep", 0 }, { 115, "clock_nanosleep", 0 }, { 128, "restart_syscall", 0 },
	{ 133, "rt_sigsuspend", 0 }, { 137, "rt_sigtimedwait", 0 }, { 202, "accept", 1 },
	{ 203, "connect", 1 }, { 206, "sendto", 1 }, { 207, "recvfrom", 1 },
	{ 211, "sendmsg", 1 }, { 212, "recvmsg", 1 }, { 242, "accept4", 1 },
	{ 243, "recvmmsg", 1 }, { 260, "wait4", 0 }, { 269, "sendmmsg", 1 },
	{ 426, "io_uring_enter", 1 }, { 441, "epoll_pwait2", 1 }, { 449, "futex_waitv", 0 },
};

const size_t arch_syscall_count = sizeof(arch_syscalls) / sizeof(arch_syscalls[0]);

int arch_syscall_is_restart(long nr)
{
	return nr == 128;
}
