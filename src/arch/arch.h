/*
 * The architecture-specific facts the unwinder needs, behind one interface:
 * the register set it tracks, DWARF register numbers, the frame-pointer
 * layout and how ptrace hands registers over. x86_64.c implements it today;
 * aarch64.c is an addition beside it, not a rewrite.
 */
#ifndef FRAMEWALK_ARCH_ARCH_H
#define FRAMEWALK_ARCH_ARCH_H

#include <stdint.h>
#include <sys/types.h>

/* Registers tracked while unwinding, indexed by DWARF number. */
#define ARCH_NREGS 17

struct arch_regs {
	uint64_t r[ARCH_NREGS];
	uint32_t valid;            /* bit n: r[n] is known */
	int in_syscall;            /* ptrace: stopped inside a system call */
};

extern const int arch_reg_ip;  /* DWARF number of the return address column */
extern const int arch_reg_sp;
extern const int arch_reg_fp;
extern const char *const arch_name;

/*
 * Frame-pointer step: from the frame pointer, where the caller's frame
 * pointer and the return address are saved, and the caller's stack pointer.
 */
struct arch_fp_layout {
	int64_t saved_fp_off;      /* caller fp at fp + this */
	int64_t ret_addr_off;      /* return address at fp + this */
	int64_t caller_sp_off;     /* caller sp = fp + this */
};
extern const struct arch_fp_layout arch_fp;

/* Is DWARF register n preserved across calls by the ABI? */
int arch_reg_callee_saved(int n);

/* Name of a system call number, or NULL. */
const char *arch_syscall_name(long nr);
/* Does the system call take a file descriptor as its first argument? */
int arch_syscall_fd_arg(long nr);

/* Read a stopped thread's registers with ptrace. 0 or -errno. */
int arch_ptrace_getregs(pid_t tid, struct arch_regs *regs);

static inline int arch_reg_valid(const struct arch_regs *r, int n)
{
	return n >= 0 && n < ARCH_NREGS && (r->valid >> n) & 1;
}

static inline void arch_reg_set(struct arch_regs *r, int n, uint64_t v)
{
	if (n >= 0 && n < ARCH_NREGS) {
		r->r[n] = v;
		r->valid |= 1u << n;
	}
}

#endif
