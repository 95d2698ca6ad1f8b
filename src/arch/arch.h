/*
 * The architecture-specific facts, behind one interface: the registers the
 * unwinder tracks and their DWARF numbers, the frame-pointer layout and the
 * prologue that sets it up, the CFA at a function's entry, how ptrace hands
 * registers over, system call numbers, the ELF machine and the multiarch
 * library directory, and what a saved return address carries besides the
 * address (aarch64: pointer authentication codes). x86_64.c and aarch64.c
 * implement it; meson.build picks the file for the host
 * (host_machine.cpu_family(), or the cross file's) together with its BPF
 * target. The facts are link-time constants and functions, not macros: the
 * arch-independent code is compiled once, and a unit test can link another
 * architecture's file to run the same code with its facts.
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
	/*
	 * The bits of a return address saved by this thread's code that are
	 * not address (aarch64: the pointer authentication code; NT_ARM_PAC_MASK),
	 * for arch_strip_ra. 0: unknown, the architecture's default.
	 */
	uint64_t pac_mask;
};

extern const int arch_nregs;   /* registers this architecture tracks (<= ARCH_NREGS) */

/*
 * Where the pc is kept in struct arch_regs. x86-64: rip, 16, which is also
 * the CFI's return address column. aarch64: 32 (PC in the AArch64 DWARF
 * numbering); its return address column is x30 (the link register), which
 * an unwinder reads from the CFI (dwarf_frame_info), not from here.
 */
extern const int arch_reg_ip;
extern const int arch_reg_sp;
extern const int arch_reg_fp;
extern const char *const arch_name;      /* "x86-64", for messages */
extern const unsigned arch_elf_machine;  /* e_machine of its ELF files (EM_X86_64) */
extern const char *const arch_multiarch; /* Debian's library directory name, "x86_64-linux-gnu" */
/* The CFA at a function's entry: the stack pointer plus this (x86-64: the return address). */
extern const int64_t arch_entry_cfa_offset;
/*
 * The register a call leaves the return address in (aarch64: x30, the link
 * register), or -1: on the stack at the CFA - 8 (x86-64). With the entry
 * CFA, the state a function has before it does anything: what a PLT stub,
 * which jumps and keeps no frame, has throughout.
 */
extern const int arch_reg_ra;
/*
 * The size of .plt's header (PLT0, the lazy binder's trampoline), which
 * pushes onto the stack, unlike the stubs after it: aarch64 32 bytes (stp
 * x16, x30, [sp, #-16]!), x86-64 16 (push).
 */
extern const uint64_t arch_plt_header_size;
/*
 * Where glibc's thread descriptor (struct pthread, what pthread_self() and a
 * Python thread state's thread_id hold) lies against the thread pointer
 * (x86-64's fs base, aarch64's TPIDR_EL0): 0 at it (TLS variant 2, x86-64);
 * 1 right below it (variant 1, aarch64): pthread_self() is the thread
 * pointer less sizeof(struct pthread), which glibc publishes for debuggers
 * as _thread_db_sizeof_pthread (ARCH_GLIBC_SIZEOF_PTHREAD).
 */
extern const int arch_pthread_below_tp;
#define ARCH_GLIBC_SIZEOF_PTHREAD "_thread_db_sizeof_pthread"

/*
 * Frame-pointer step: from the frame pointer, where the caller's frame
 * pointer and the return address are saved, and the caller's stack pointer.
 */
struct arch_fp_layout {
	int64_t saved_fp_off;      /* caller fp at fp + this */
	int64_t ret_addr_off;      /* return address at fp + this */
	int64_t caller_sp_off;     /* caller sp = fp + this (or at least this: see below) */
	/*
	 * Is fp + caller_sp_off the caller's sp exactly (x86-64: 1)? On
	 * aarch64 gcc puts the record at the bottom of the frame, below the
	 * locals, so it is only a lower bound there (0): a frame's extent,
	 * which the native/Python merge reads (sampler/merge.c), then needs
	 * the CFI step, and the frame-pointer step is only the fallback.
	 */
	int caller_sp_exact;
};
extern const struct arch_fp_layout arch_fp;

/*
 * Do the first bytes of a function (len of them, looked at within window)
 * set up the frame pointer the usual way? Used where a function has no CFI
 * (elf/fpaudit.h). The bytes are untrusted; nothing past len is read.
 */
int arch_prologue_sets_fp(const uint8_t *code, size_t len, size_t window);
/*
 * The window fpaudit looks in: how far into a function the compiler may
 * schedule its frame-pointer setup. x86-64: 32 bytes (its matcher scans
 * bytes, not instructions: a longer window misfires inside operands).
 * aarch64: 64, 16 instructions, each decoded: gcc allocates a large frame
 * before it stores the record and schedules work in between (the 9th
 * instruction in tests/unit/fixtures/a64_funcs.c's fw_outer).
 */
extern const size_t arch_prologue_window;

/* Is DWARF register n preserved across calls by the ABI? */
int arch_reg_callee_saved(int n);

/*
 * The system calls a thread is commonly found waiting in, by this
 * architecture's numbers (its file's table); the lookups below are
 * src/arch/syscalls.c's, one for every architecture.
 */
struct arch_syscall {
	long nr;
	const char *name;
	int fd_arg;                /* its first argument is a file descriptor */
};
extern const struct arch_syscall arch_syscalls[];
extern const size_t arch_syscall_count;

/* Name of a system call number, or NULL. */
const char *arch_syscall_name(long nr);
/* Does the system call take a file descriptor as its first argument? */
int arch_syscall_fd_arg(long nr);
/* Is nr restart_syscall (a wait that a signal or ptrace stop interrupted, resumed)? */
int arch_syscall_is_restart(long nr);

/*
 * Read a stopped thread's registers with ptrace, its pac_mask too
 * (arch_ptrace_pac_mask; 0 when unknown). 0 or -errno.
 */
int arch_ptrace_getregs(pid_t tid, struct arch_regs *regs);

/*
 * The pointer authentication mask of a stopped thread's code addresses
 * (aarch64: PTRACE_GETREGSET NT_ARM_PAC_MASK's insn_mask). 0 with *mask 0
 * where the architecture has none (x86-64); -errno where the kernel or CPU
 * gives none (then arch_strip_ra's default applies).
 */
int arch_ptrace_pac_mask(pid_t tid, uint64_t *mask);

/*
 * A return address read from a saved frame (a frame record, a CFI-saved
 * register, the link register), without what is not address: aarch64 code
 * built with -mbranch-protection signs it, and the pointer authentication
 * code sits in the bits above the virtual address size. pac_mask: the
 * thread's mask (struct arch_regs.pac_mask), 0 for the default (aarch64:
 * every bit from 48 up; user code lies below 2^48 unless it asked for
 * more). x86-64 returns ra unchanged.
 */
uint64_t arch_strip_ra(uint64_t ra, uint64_t pac_mask);

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
