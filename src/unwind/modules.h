/*
 * The executable modules mapped into a target (from /proc/PID/maps), each
 * opened through the target's root and reported to elfutils' libdwfl, which
 * then serves both unwinding (CFI from .eh_frame / .debug_frame) and
 * symbolization (symbols; separate debug info found by target/debuginfo.h:
 * build-id, debuglink, debuginfod).
 * Each module also gets a frame-pointer verdict, decided once from its CFI,
 * so the unwinder can take the cheap frame-pointer step where it is safe.
 */
#ifndef FRAMEWALK_UNWIND_MODULES_H
#define FRAMEWALK_UNWIND_MODULES_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/debuginfo.h"

enum fp_verdict {
	FP_UNKNOWN = 0,
	FP_YES,            /* >= 90% of sampled functions keep rbp as frame base */
	FP_PARTLY,
	FP_NO,             /* < 10% */
};

struct fw_module {
	uint64_t start, end;        /* lowest and highest mapped address of the file */
	uint64_t bias;              /* load bias */
	char *path;                 /* as the target names it */
	char *host_path;            /* where framewalk opens it */
	const char *name;           /* basename of path */
	char build_id[41];
	Dwfl_Module *dwfl_mod;
	Dwarf_CFI *eh_cfi, *dbg_cfi;
	Dwarf_Addr eh_bias, dbg_bias;
	int cfi_loaded;
	enum fp_verdict fp;
	int fp_checked;
	int fp_percent;
	struct cfi_cache_slot *cfi_cache;   /* lookup pc -> CFI row, see unwind.c */
};

/*
 * A CFI row found for one lookup pc (frame NULL: no CFI there). Finding a
 * row means searching the FDEs and running the CIE's and FDE's programs up
 * to pc; the pcs of a profile repeat, so rows are kept per module.
 */
#define CFI_CACHE_SLOTS 512
struct cfi_cache_slot {
	uint64_t pc;                /* 0: empty */
	Dwarf_Frame *frame;
};

struct exec_range {
	uint64_t start, end;
	char *name;                 /* "[vdso]", "" for anonymous (JIT), or a path */
};

struct module_map {
	pid_t pid;
	struct exec_range *ranges;  /* every executable mapping, file-backed or not */
	size_t nranges, ranges_alloc;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	unsigned flags;             /* MODULES_* given to modules_load */
	struct debuginfo *debug;    /* separate debug files; kept across modules_refresh */
	struct fw_module *mods;     /* sorted by start */
	size_t n, alloc;
	uint64_t loaded_ns;
};

/* modules_load flags */
#define MODULES_NO_DEBUGINFOD 1u    /* ask no debuginfod server (--no-debuginfod) */

/*
 * Read the target's executable mappings and report them; debug files a
 * module lacks are asked of debuginfod servers here, before sampling (see
 * debuginfo_prefetch). 0 or -errno.
 */
int modules_load(struct module_map *mm, pid_t pid, unsigned flags);
void modules_release(struct module_map *mm);

/* Do the target's executable mappings differ from the loaded ones? */
int modules_changed(const struct module_map *mm);
/* Reload when the mappings may have changed (a new library was loaded). */
int modules_refresh(struct module_map *mm);

/* The executable mapping holding pc (module or not), or NULL. */
const struct exec_range *modules_find_range(const struct module_map *mm, uint64_t pc);

/* The module holding pc, or NULL. */
struct fw_module *modules_find(struct module_map *mm, uint64_t pc);

/* CFI for the module (eh_frame preferred, debug_frame as fallback). */
void module_load_cfi(struct fw_module *m);

/* Frame-pointer verdict of a module (computed on first use). */
enum fp_verdict module_fp_verdict(struct fw_module *m);

#endif
