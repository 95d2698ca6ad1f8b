/*
 * Frame-pointer and unwind-table audit of one ELF module: does its machine
 * code keep the frame-pointer chain, can DWARF CFI take over where it does
 * not, and which symbols and debug info it carries. The unwinder takes its
 * per-module choice from the verdict, `framewalk check` prints the whole
 * result; elf/elffile.h runs it once per file and keeps it. The work per
 * module is capped (FPA_MAX_SAMPLED).
 *
 * The rule per function (x86-64), decided from the CFI rows and the bytes:
 *   with frame pointer   some CFI row defines the CFA on rbp; or, for a
 *                        function without CFI, the code starts with
 *                        [endbr64] push %rbp; ... mov %rsp,%rbp
 *   neutral              shorter than FPA_SMALL bytes, or a CFA that stays
 *                        rsp+8 over the whole function (no frame at all, so
 *                        no call: a leaf or a tail call). Neutral functions
 *                        are left out of the percentage, because a leaf may
 *                        legitimately omit the frame (-momit-leaf-frame-pointer)
 *   without              anything else (CFA on rsp after a push or sub)
 * On aarch64 the same, with x29 for rbp, sp+0 for rsp+8, and a row that
 * saves a frame record (x29 and x30 in adjacent slots) counting as a frame
 * pointer: gcc keeps the CFA on sp there even with frame pointers, and
 * saves x30 alone without them.
 * Module verdict over the non-neutral functions: yes >= 90 %, partly 10-90 %,
 * no < 10 %; n/a when every function is neutral.
 */
#ifndef FRAMEWALK_ELF_FPAUDIT_H
#define FRAMEWALK_ELF_FPAUDIT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct Elf;

#define FPA_MAX_SAMPLED 2000    /* functions examined per module, spread evenly */
#define FPA_SMALL 16            /* bytes: a function this short is neutral */
#define FPA_YES_PERCENT 90.0
#define FPA_NO_PERCENT 10.0
#define FPA_MAX_EXAMPLES 5

enum fpa_verdict {
	FPA_UNKNOWN,    /* not analysed (not x86-64, unreadable) */
	FPA_NA,         /* no function needs a frame */
	FPA_NO,
	FPA_PARTLY,
	FPA_YES,
};

enum fpa_symbols {
	FPA_SYMS_NONE,
	FPA_SYMS_DYNSYM,        /* stripped to the dynamic symbols */
	FPA_SYMS_SYMTAB,
};

/* How a native stack walk gets through this module. */
enum fpa_unwind {
	FPA_UNWIND_FP,          /* frame pointers */
	FPA_UNWIND_DWARF,       /* unwind tables where frame pointers are missing */
	FPA_UNWIND_NONE,        /* neither: the chain is cut here */
};

struct fpa_result {
	int analysed;                   /* 0: another architecture than arch/ describes */
	char build_id[128];             /* lower-case hex, "" when absent */

	size_t functions;               /* functions found (FDEs, then symbols) */
	size_t sampled;                 /* of which examined */
	size_t with_fp, without_fp, neutral;
	size_t no_cfi;                  /* examined functions that have no FDE */
	double fp_percent;              /* with_fp / (with_fp + without_fp) * 100 */
	enum fpa_verdict verdict;
	char examples[FPA_MAX_EXAMPLES][96]; /* functions without a frame pointer */
	size_t nexamples;

	const char *cfi_section;        /* ".eh_frame", ".debug_frame" or NULL */
	size_t fdes;                    /* FDEs in it */
	int cfi_refused;                /* it failed cfiguard.h's check: not read */

	enum fpa_symbols symbols;
	int debug_embedded;             /* .debug_info in the file itself */
	int minidebuginfo;              /* .gnu_debugdata */
	char debuglink[256];            /* .gnu_debuglink name, "" when absent */
	uint32_t debuglink_crc;
	const char *debug_via;          /* "embedded", "build-id", "debuglink",
					   "debuginfod cache" or NULL */
	char debug_path[PATH_MAX];      /* the separate debug file found */
	/*
	 * Branch protection (.note.gnu.property: what every object of the file
	 * was built with), FPA_BP_*. PAC: return addresses saved on the stack
	 * are signed, and the unwinder strips the code (arch_strip_ra); IBT,
	 * SHSTK: x86-64's CET (SHSTK: a shadow stack may be kept).
	 */
	unsigned branch_protection;
};

#define FPA_BP_PAC 1u               /* aarch64 pointer authentication of return addresses */
#define FPA_BP_BTI 2u               /* aarch64 branch target identification */
#define FPA_BP_IBT 4u               /* x86-64 indirect branch tracking */
#define FPA_BP_SHSTK 8u             /* x86-64 shadow stack */
/* "PAC", "BTI", "IBT", "SHSTK" for one FPA_BP_ bit; NULL for another value. */
const char *fpa_branch_protection_name(unsigned bit);

/*
 * Audit an ELF file opened for reading (libelf) on writable memory of this
 * process (elf_file_map's image: its unwind tables are checked in place,
 * elf/cfiguard.h). target_path is the name
 * the process or installation uses for it (the file itself may be deleted)
 * and root the directory that name is relative to ("" for the host,
 * "/proc/PID/root", a sysroot): both only steer the search for separate
 * debug info (target/debuginfo.h, local files only, env says where
 * libdebuginfod's cache is; may be NULL). 0, or -ENOEXEC when it is not a
 * 64-bit ELF.
 */
struct debuginfo_env;
int fpa_audit_elf(struct Elf *elf, const char *target_path, const char *root,
		  const struct debuginfo_env *env, struct fpa_result *out);

/*
 * Does code (len bytes at a function's start) set up a frame pointer, within
 * the architecture's window (arch_prologue_window: the compiler may schedule
 * other instructions in the prologue at -O2)? The pattern is the
 * architecture's (arch_prologue_sets_fp; x86-64: an optional endbr64, push
 * %rbp, then mov %rsp,%rbp with no other push or sub from rsp before it;
 * aarch64: the frame record's stp of x29, x30, then x29 set to it). Used
 * where a function has no CFI.
 */
int fpa_prologue_match(const uint8_t *code, size_t len);

/* The module verdict for these counts (see the rule above). */
enum fpa_verdict fpa_verdict_of(size_t with_fp, size_t without_fp);

const char *fpa_verdict_name(enum fpa_verdict v);
enum fpa_unwind fpa_unwind_of(const struct fpa_result *r);
const char *fpa_unwind_name(enum fpa_unwind u);
const char *fpa_symbols_name(enum fpa_symbols s);

#endif
