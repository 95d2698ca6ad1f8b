/*
 * The executable modules mapped into one target (from /proc/PID/maps): the
 * per-process half of the module layer, below unwinding, symbolization and
 * `check`. A module is a mapped file at an address; what is known about the
 * file itself (symbols, CFI, frame-pointer verdict, debug info) is an
 * elf/elffile.h entry shared through an elf_cache with every other module
 * of any target that maps the same file.
 *
 * Files are opened through the mapping (/proc/PID/map_files, /proc/PID/exe,
 * then the path in the target's root if it still names the same inode), so
 * a file deleted or replaced on disk since the target started is still the
 * one read. When the mappings change (dlopen, dlclose), modules_refresh
 * keeps every module whose mapping is unchanged, takes the files of new ones
 * from the cache when known, and releases the files no module holds any
 * more. Separate debug files are found by target/debuginfo.h (build-id,
 * debuglink, debuginfod); servers are asked only while a file is loaded,
 * within one budget per target kept across refreshes.
 */
#ifndef FRAMEWALK_ELF_MODULES_H
#define FRAMEWALK_ELF_MODULES_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/elffile.h"
#include "target/debuginfo.h"

struct fw_module {
	uint64_t start, end;        /* its code: the image's executable mappings (elf/image.h) */
	uint64_t bias;              /* target address - file address */
	uint64_t dev, ino;          /* the mapping's file */
	char *path;                 /* as the target names it (no " (deleted)") */
	char *host_path;            /* where its path is reached from here (it may be gone) */
	const char *name;           /* basename of path */
	char build_id[41];          /* "" when none or unknown */
	struct elf_info *file;      /* NULL when the file could not be opened */
	int err;                    /* why not: -errno (see proc_map_open) */
	int deleted;                /* deleted or replaced on disk since mapped */
	int replaced;               /* ... and its path names another file now */
};

struct exec_range {
	uint64_t start, end;
	uint64_t dev, ino;          /* the file mapped there, 0 when none */
	char *name;                 /* "[vdso]", "" for anonymous (JIT), or a path */
};

/* What loading the modules cost, for the report's debug counters. */
struct modules_stats {
	uint64_t loaded;            /* files opened and parsed */
	uint64_t reused;            /* modules whose file was already known */
	uint64_t kept;              /* modules kept over a refresh, mapping unchanged */
	uint64_t unreadable;        /* modules whose file could not be opened */
	uint64_t refreshes;         /* times the mappings changed and were re-read */
	uint64_t capped;            /* files beyond MODULES_MAX at the last read, without a module */
};

/*
 * Modules (mapped files) per process, at most: the mappings' files beyond
 * it (in address order) stay executable ranges without a module, their pcs
 * unnamed, counted in stats.capped.
 */
#define MODULES_MAX 2048

struct module_map {
	pid_t pid;
	char root[48];              /* "/proc/PID/root" */
	struct exec_range *ranges;  /* every executable mapping, file-backed or not */
	size_t nranges, ranges_alloc;
	struct fw_module *mods;     /* sorted by start */
	size_t n, alloc;
	struct elf_cache *cache;
	int own_cache;              /* made by modules_load, freed with the map */
	unsigned flags;             /* MODULES_* given to modules_load */
	struct debuginfo *debug;    /* separate debug files; kept across modules_refresh */
	struct modules_stats stats;
	/* set (by a signal handler): no more files are loaded, the read ends */
	const volatile sig_atomic_t *stop;
	int incomplete;             /* the last read stopped early: modules_changed says so */
};

/* modules_load flags */
#define MODULES_NO_DEBUGINFOD 1u    /* ask no debuginfod server (--no-debuginfod) */
#define MODULES_NO_SYMBOLS 2u       /* no symbols loaded ahead (check: the audit is all it reads) */

/*
 * Read the target's executable mappings and load their modules, sharing
 * file data through cache (NULL: a cache of the map's own). Each new file's
 * debug file, when it lacks one, is asked of debuginfod servers here,
 * before sampling (see debuginfo_prefetch), and its symbols and the debug
 * info's address index are loaded (unless MODULES_NO_SYMBOLS). 0 or -errno
 * (-ESRCH: the process is gone; -EINTR: *stop was set, and the files not
 * loaded yet have no module, and modules_changed says 1 until a refresh
 * loads them). A module whose file cannot be opened is kept
 * with file NULL and err set. stop (NULL: none) is checked before each file
 * and by a debuginfod lookup in progress, here and in modules_refresh: one
 * file's load is the longest a stop request waits (0.24 s for
 * libtorch_cpu, the largest measured).
 */
int modules_load(struct module_map *mm, pid_t pid, struct elf_cache *cache, unsigned flags,
		 const volatile sig_atomic_t *stop);
void modules_release(struct module_map *mm);

/* Do the target's executable mappings (place or file) differ from the loaded ones? */
int modules_changed(const struct module_map *mm);
/*
 * Re-read the mappings: unchanged modules are kept, new ones loaded, gone
 * ones released. Pointers to modules (not to files) are invalid afterwards.
 * 0 or -errno.
 */
int modules_refresh(struct module_map *mm);

/* The executable mapping holding pc (module or not), or NULL. */
const struct exec_range *modules_find_range(const struct module_map *mm, uint64_t pc);

/* The module holding pc, or NULL. */
struct fw_module *modules_find(struct module_map *mm, uint64_t pc);

/* Frame-pointer verdict of a module's file (FPA_UNKNOWN without one). */
enum fpa_verdict module_fp_verdict(const struct fw_module *m);

/* The CFI row at pc (a target address) in m's file, or NULL (see elf_info_cfi_frame). */
Dwarf_Frame *module_cfi_frame(struct fw_module *m, uint64_t pc);
/* Is pc (a target address) in a PLT stub of m's file? (elf_info_in_plt) */
int module_in_plt(struct fw_module *m, uint64_t pc);

/*
 * What framewalk could not read of a module: its file, or its separate debug
 * file, could not be opened. 1 with one line on why (and the fix) in buf,
 * 0 when nothing is missing.
 */
int module_problem(const struct fw_module *m, pid_t pid, char *buf, size_t size);

#endif
