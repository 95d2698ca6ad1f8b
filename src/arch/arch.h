/*
 * The architecture-specific facts, behind one interface: the registers the
 * unwinder tracks and their DWARF numbers, the frame-pointer layout and the
 * prologue that sets it up, the CFA at a function's entry, how ptrace hands
 * registers over, system call numbers, the ELF machine and the multiarch
 * library directory. x86_64.c implements it; meson.build picks the file for
 * the host (host_machine.cpu_family()) together with its BPF target, so a
 * port (aarch64.c) is one new file and one row there, not a rewrite.
 */
#ifndef FRAMEWALK_ARCH_ARCH_H
#define FRAMEWALK_ARCH_ARCH_H

#include <stdint.h>
#include <sys/types.h>

#include <stddef.h>

/*
 * Room for the registers tracked while unwinding, indexed by DWARF number:
 * enough for any architecture (aarch64: x0-x30, sp, pc); each uses the
 * first arch_nregs.
 */
#define ARCH_NREGS 34

struct arch_regs {
	uint64_t r[ARCH_NREGS];
	uint64_t valid;            /* bit n: r[n] is known */
	int in_syscall;            /* ptrace: stopped inside a system call */
	long syscall_nr;           /* ptrace, in_syscall: that call and its first argument */
	uint64_t syscall_arg0;
};

extern const int arch_nregs;   /* registers this architecture tracks (<= ARCH_NREGS) */

extern const int arch_reg_ip;  /* DWARF number of the return address column */
extern const int arch_reg_sp;
extern const int arch_reg_fp;
extern const char *const arch_name;      /* "x86-64", for messages */
extern const unsigned arch_elf_machine;  /* e_machine of its ELF files (EM_X86_64) */
extern const char *const arch_multiarch; /* Debian's library directory name, "x86_64-linux-gnu" */
/* The CFA at a function's entry: the stack pointer plus this (x86-64: the return address). */
extern const int64_t arch_entry_cfa_offset;

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

/*
 * Do the first bytes of a function (len of them, looked at within window)
 * set up the frame pointer the usual way? Used where a function has no CFI
 * (elf/fpaudit.h). The bytes are untrusted; nothing past len is read.
 */
int arch_prologue_sets_fp(const uint8_t *code, size_t len, size_t window);

/* Is DWARF register n preserved across calls by the ABI? */
int arch_reg_callee_saved(int n);

/* Name of a system call number, or NULL. */
const char *arch_syscall_name(long nr);
/* Does the system call take a file descriptor as its first argument? */
int arch_syscall_fd_arg(long nr);
/* Is nr restart_syscall (a wait that a signal or ptrace stop interrupted, resumed)? */
int arch_syscall_is_restart(long nr);

/* Read a stopped thread's registers with ptrace. 0 or -errno. */
int arch_ptrace_getregs(pid_t tid, struct arch_regs *regs);

static inline int arch_reg_valid(const struct arch_regs *r, int n)
{
	return n >= 0 && n < arch_nregs && (r->valid >> n) & 1;
}

static inline void arch_reg_set(struct arch_regs *r, int n, uint64_t v)
{
	if (n >= 0 && n < arch_nregs) {
		r->r[n] = v;
		r->valid |= 1ull << n;
	}
}

#endif
