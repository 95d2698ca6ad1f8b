/*
 * What framewalk knows about one ELF file, worked out once per file and
 * shared by every process that maps it (the per-file half of the module
 * layer; elf/modules.h is the per-process half): its symbols and line tables
 * (a libdwfl module of its own, in the file's own address space), its unwind
 * tables with a cache of CFI rows, the frame-pointer verdict and the rest of
 * the audit (elf/fpaudit.h), and where its separate debug info is (found by
 * target/debuginfo.h: build-id and debuglink in the target's root, then the
 * host's, then debuginfod, asked only while the file is loaded).
 *
 * Files live in an elf_cache and are found again by the identity of the
 * mapping that brought them (device + inode, as /proc/PID/maps shows them)
 * or by build-id, never by path: a path may now name another file (an
 * upgrade replaced it), while the mapping and the build-id say what was
 * really loaded. Holding a file keeps its inode alive, so an identity cannot
 * be reused by another file while it is cached.
 *
 * A file's bytes are mapped into memory and its descriptor closed at once:
 * cached files do not count against the open-file limit (a separate debug
 * file that libdwfl opens keeps one descriptor until the file is released,
 * and a copy for the lookups' session below).
 * Files are reference-counted; the last elf_cache_put releases everything.
 *
 * The debug info's lookups (lines, inline frames) go through a libdwfl
 * session of their own, which elf_cache_trim ends once the file's lookups
 * stop (nothing new asked for ELF_LOOKUP_IDLE_NS, twice as long after each
 * time it had to be opened again, up to ELF_LOOKUP_IDLE_MAX_NS), the pages
 * of the file it read given back: opening DWARF keeps what libdw parsed.
 * A separate debug file with compressed sections (Debian's libc6-dbg) is
 * handed to libdwfl as a decompressed copy (elf/debugcopy.h): libdw would
 * decompress them all into the heap (libc's: 13.5 MB) at each opening and
 * keep them while the session lasts. The answers already given stay in the
 * file's cache; only an address never asked before opens the session
 * again. A file whose own
 * sections are compressed keeps its debug info in the main session (its
 * Elf would be changed in place under the other).
 *
 * A file is prepared for the unwinder when it is loaded (unwind tables,
 * verdict) and, with ELF_LOAD_SYMBOLS, for the symbolizer too (symbols and
 * the debug info's address index): the first lookup in a large debug file
 * takes a second, which mid-capture costs ticks.
 */
#ifndef FRAMEWALK_ELF_ELFFILE_H
#define FRAMEWALK_ELF_ELFFILE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/cfiguard.h"
#include "elf/elfread.h"
#include "elf/fpaudit.h"
#include "target/debuginfo.h"


/* A CFI row found for one lookup address (frame NULL: no CFI there). */
#define CFI_CACHE_SLOTS 512
struct cfi_cache_slot {
	uint64_t vaddr;             /* 0: empty */
	Dwarf_Frame *frame;
};

struct elf_id {
	uint64_t dev, ino;
};

/* A file's PLT sections: .plt, .plt.sec, .plt.got, .iplt */
#define ELF_PLT_RANGES 4
struct elf_range {
	uint64_t start, end;        /* file vaddrs, end exclusive */
};

struct elf_info {
	/* read-only for users */
	char build_id[41];          /* lower-case hex (first 20 bytes), "" when none */
	char *path;                 /* as the first target to map it names it */
	const char *name;           /* basename of path */
	int e_type;                 /* ET_EXEC, ET_DYN */
	uint64_t load_delta;        /* elf_file_load_delta's */
	struct elf_loads loads;     /* its PT_LOAD segments (elf_file_loads; n 0: none read) */
	Dwfl_Module *mod;           /* symbols, lines; addresses are file vaddrs */
	Dwarf_CFI *eh_cfi, *dbg_cfi;/* after elf_info_load_cfi; either may be NULL */
	Dwarf_Addr eh_bias, dbg_bias;
	struct fpa_result audit;    /* frame pointers, unwind tables, symbols, debug file */
	int audit_err;              /* 0, or -errno when the audit could not run */
	int debug_err;              /* -errno: its separate debug file exists but did not open */
	enum fpa_verdict fp;        /* the unwinder's per-module choice (FPA_UNKNOWN: none) */
	int fp_percent;
	struct elf_range plt[ELF_PLT_RANGES];   /* after elf_info_load_cfi */
	int nplt;

	/* private */
	int refs;
	struct elf_id *ids;         /* mapping identities that led here */
	size_t nids, aids;
	struct elf_file file;       /* its bytes and Elf (elf/elfread.h: its own facts) */
	int elf_given;              /* file.elf is libdwfl's (it asked for it) */
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *host_path;            /* a path at which the file was reached */
	char *root;                 /* the root its debug files are looked up in */
	const struct elf_env *env;  /* its cache's, when it was loaded (may be NULL) */
	struct debuginfo *debug;    /* while loading: the lookup libdwfl's callback uses */
	int cfi_loaded;
	struct elf_span cfi_span; /* the tables cfiguard.h checked (kept when dropping the image) */
	int symbols_loaded;
	struct cfi_cache_slot *cfi_cache;
	struct elf_symidx *symidx;  /* code symbols by address (elf/addrinfo.h) */
	uint64_t symbols_capped;    /* code symbols left out of it (ELF_SYMIDX_MAX) */
	struct elf_addr_cache *addrs;/* answers by address, bounded (elf/addrinfo.h) */
	struct eh_table *eh_table;  /* .eh_frame_hdr's search table (elf/funcbounds.h) */
	struct cython_sources *cython; /* generated C files read (elf/cython.h) */
	/* the lookups' session (elf_info_lookup_module, elf_cache_trim) */
	/*
	 * the debug files libdwfl was handed (its own, a dwz alternate one), each
	 * with the request it answered, so the lookups' session gets the same
	 * files again: fd -1 for none
	 */
	struct elf_kept_debug {
		int fd;
		char *link;                 /* the request's debuglink_file, or NULL */
		GElf_Word crc;
		char *name;                 /* the path libdwfl was told */
	} kept_debug[2];
	uint64_t debug_copy_bytes;  /* the decompressed copies made for it (elf/debugcopy.h),
	                             * released with it */
	int image_fixed;            /* nothing changes file.image in place (image_stays_as_read):
	                             * lookups use look_dwfl (else mod: never ended) */
	int look_failed;            /* look_dwfl could not be opened: mod serves */
	int look_none;              /* look_dwfl found no debug info: nothing to look up */
	Dwfl *look_dwfl;
	Dwfl_Module *look_mod;
	Dwfl_Callbacks look_callbacks;
	uint64_t span_low, span_high; /* the module's span, as both sessions report it */
	/* the separate debug file each session mapped, guarded (target/mapguard.h): [0] mod's, [1] look_mod's */
	const void *debug_guarded[2];
	unsigned char debug_looked[2];  /* its debug info was seen loaded (guarded or none to guard) */
	uint64_t look_uses;         /* lookups since the last trim */
	uint64_t look_quiet_ns;     /* how long no lookup came, at the last trim */
	int look_pages_back;        /* pages given back since the last lookup (session kept) */
	uint64_t look_idle_ns;      /* quiet this long ends the session */
	uint32_t look_opens;        /* times the session was opened */
};

struct elf_cache;

/*
 * What the environment tells this layer, read by the command layer
 * (cmd/environ.c), never here: where debug files come from, and whether to
 * say each file's frame-pointer share on stderr (FRAMEWALK_DEBUG_FP).
 */
struct elf_env {
	struct debuginfo_env debug;
	int trace_fp;
	int debug_bpf;           /* FRAMEWALK_DEBUG_BPF: libbpf's warnings on stderr */
	int bpf_no_iterator;     /* FRAMEWALK_BPF_NO_ITERATOR: bpf loads without its task
	                          * iterator, as on a kernel that refuses it */
	int bpf_no_life;         /* FRAMEWALK_BPF_NO_LIFE: bpf attaches no exec and exit
	                          * reports, as on a kernel without those tracepoints */
	uint64_t lookup_idle_ns; /* FRAMEWALK_LOOKUP_IDLE_S: the lookups' first idle time
	                          * (0: ELF_LOOKUP_IDLE_NS) */
};

struct elf_cache *elf_cache_new(void);
/*
 * The environment of the files loaded from now on (kept, not copied; NULL,
 * as a new cache has: no debuginfod cache, no trace).
 */
void elf_cache_set_env(struct elf_cache *c, const struct elf_env *env);
/* The cache's environment, or NULL. */
const struct elf_env *elf_cache_env(const struct elf_cache *c);
/* Free the cache; every file taken from it must have been put back. */
void elf_cache_free(struct elf_cache *c);
/* Files held now. */
size_t elf_cache_files(const struct elf_cache *c);

/* The cached file a mapping with this identity brought, with a reference, or NULL. */
struct elf_info *elf_cache_find(struct elf_cache *c, uint64_t dev, uint64_t ino);

/* elf_cache_add_fd flags */
#define ELF_LOAD_SYMBOLS 1u         /* symbols and the debug info's address index now */

/*
 * The file open on fd (always consumed), brought by a mapping with identity
 * (dev, ino) and named path by its target. host_path is a path at which the
 * file was reached, root the target's root ("" for the host,
 * "/proc/PID/root") in which its separate debug info is looked up, through
 * debug (its servers are asked here, within its budget; NULL: local files
 * only). Returns the file with a reference taken: the cached one with the
 * same build-id when there is one (*loaded = 0), else the newly loaded and
 * audited file (*loaded = 1). NULL + errno: ENOEXEC not a 64-bit ELF, EFBIG
 * too large, ENOMEM.
 */
struct elf_info *elf_cache_add_fd(struct elf_cache *c, int fd, uint64_t dev, uint64_t ino,
				  const char *path, const char *host_path, const char *root,
				  struct debuginfo *debug, unsigned flags, int *loaded);

/* The same for a file given by a host path (check FILE, check --python): no servers, no symbols. */
struct elf_info *elf_cache_open_path(struct elf_cache *c, const char *host_path,
				     const char *name, const char *root, int *loaded);

/* Drop a reference; the last one releases the file. */
void elf_cache_put(struct elf_cache *c, struct elf_info *f);

/* Lookups' quiet time after which their session ends; doubled after each re-open, up to the max. */
#define ELF_LOOKUP_IDLE_NS (30ull * 1000000000ull)
#define ELF_LOOKUP_IDLE_MAX_NS (1800ull * 1000000000ull)

/*
 * End the lookups' sessions of files with no lookup for their idle time,
 * now being the caller's monotonic clock (called every second or so, from
 * the capture loop's housekeeping). Returns how many were ended.
 */
size_t elf_cache_trim(struct elf_cache *c, uint64_t now);

/* Lookups' sessions ended by elf_cache_trim so far, and opened again after that. */
void elf_cache_lookup_counts(const struct elf_cache *c, uint64_t *ended, uint64_t *reopened);

/*
 * The libdwfl module the debug info's lookups use (lines, the units for
 * inline frames), at the file's own addresses, opened again if it was
 * ended; counts a lookup. NULL when there is none. Strings and entries read
 * through it last until the next elf_cache_trim.
 */
Dwfl_Module *elf_info_lookup_module(struct elf_info *f);
/*
 * The separate debug file libdwfl mapped for mod (f's mod or look_mod),
 * guarded against being cut short (target/mapguard.h) until its session
 * ends, once libdwfl has loaded it (nothing is loaded here); again: nothing.
 */
void elf_info_guard_debug(struct elf_info *f, Dwfl_Module *mod);

/*
 * Give the pages of the file (and of the debug file the lookups' session
 * mapped) that were read back to the kernel: they are the file's and fault
 * in again when a lookup needs them. An image nothing wrote to
 * (image_fixed) is dropped from framewalk's memory (MADV_DONTNEED), else
 * only paged out (MADV_PAGEOUT, which leaves pages another process maps).
 * The pinned pages (private copies: headers, checked unwind tables, which
 * the unwinder reads at every sample) are paged out too only with
 * pinned_too: after loading and when a session ends, not while it lasts.
 */
void elf_info_give_back(struct elf_info *f, int pinned_too);

/*
 * Load the unwind tables (.eh_frame, else .debug_frame) and find the PLT
 * sections; idempotent.
 */
void elf_info_load_cfi(struct elf_info *f);
/*
 * Is a file address in its PLT? A stub there jumps on to its function and
 * keeps no frame: where no CFI covers it (aarch64's linkers write none for
 * it), the state at a function's entry holds (arch.h: arch_reg_ra).
 */
int elf_info_in_plt(struct elf_info *f, uint64_t vaddr);

/*
 * The CFI row for a file address (.eh_frame first, then .debug_frame), or
 * NULL. Rows are cached per file; the frame belongs to the cache and stays
 * valid until the next lookup in this file.
 */
Dwarf_Frame *elf_info_cfi_frame(struct elf_info *f, uint64_t vaddr);

#endif
