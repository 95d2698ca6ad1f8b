/*
 * Native addresses to names: function (from .symtab/.dynsym, or separate
 * debug info found by build-id or .gnu_debuglink), source file:line where
 * debug info has it, and module+offset otherwise, never a bare "unknown".
 * What a file says of its addresses is worked out once for every process
 * that maps it (elf/addrinfo.h: a sorted symbol index and a bounded cache
 * by file address); each symbolizer keeps the frames of its own process in
 * a cache by address too, bounded by SYMBOLIZER_CACHE_MAX entries (emptied
 * when full, before a stack is named, the entries counted as evicted).
 * /tmp/perf-PID.map (CPython -X perf, JITs) names addresses that belong to
 * no file (read in the target's root, under the pid the target has in its
 * own PID namespace: the one it writes).
 */
#ifndef FRAMEWALK_SYMBOLS_SYMBOLIZE_H
#define FRAMEWALK_SYMBOLS_SYMBOLIZE_H

#include <stdint.h>

#include "elf/modules.h"
#include "util/hashidx.h"

/*
 * A function the compiler inlined at a frame's address (from debug info):
 * its name and the source line running in it.
 */
struct native_inline {
	const char *name;           /* demangled where it was mangled, then INLINED_MARK */
	const char *linkage;        /* the name in the file when demangled, else NULL */
	const char *source;
	int line;
};

struct native_symbol {
	const char *name;           /* function (demangled), or "module+0xoff" */
	const char *linkage;        /* the name in the file when name is demangled, else NULL */
	const char *source;         /* source file, NULL when unknown */
	int line;                   /* 0 when unknown */
	const struct fw_module *module;
	int is_eval;                /* the interpreter's frame evaluator */
	int is_internal;            /* interpreter call machinery, folded by default */
	int is_thread_entry;        /* _start, __libc_start_main, start_thread, clone */
	int is_anon;                /* in an anonymous executable mapping that no
	                             * perf map names (JIT code) */
	int is_unnamed;             /* no symbol: name is "module+0xoff" or "[anon]+0x.." */
	const struct native_inline *inl;  /* inlined at the address, innermost first */
	size_t ninl;
};

#define SYMBOLIZER_CACHE_MAX 2048

struct sym_entry {
	uint64_t pc;                /* the lookup address */
	struct native_symbol sym;
	char *owned;                /* a made-up name ("module+0x..") the entry holds */
	struct native_inline *inl;  /* the entry's inline frames (their names held too) */
};

/* Debug counters (cumulative): what naming frames cost. */
struct symbolizer_stats {
	uint64_t lookups;           /* frames named */
	uint64_t resolved;          /* ... that no cache had: libdw was asked */
	uint64_t evicted;           /* cache entries dropped for room (this process's and,
	                             * for its lookups, the files') */
};

/*
 * The perf map (/tmp/perf-PID.map, written by JITs) is read once per process
 * within these bounds, whatever the file holds.
 */
#define PERF_MAP_MAX_BYTES (64u << 20)
#define PERF_MAP_MAX_ENTRIES 1000000
#define PERF_MAP_BUDGET_NS 1000000000ull

struct perf_map_entry {
	uint64_t start, end;
	char *name;
};

/*
 * One perf map line, "START SIZE name" (hex, as strtoull reads them; a
 * "name@VERSION" loses its version), into *e with end = START + SIZE and
 * the name allocated (the caller frees it). 0, or -EINVAL when the line is
 * not one. The lines come from safe_lines (target/safe_open.h): one line,
 * NUL-terminated, no newline.
 */
int perf_map_parse_line(const char *line, struct perf_map_entry *e);

struct symbolizer {
	struct module_map *mm;
	struct sym_entry *entries;  /* one per lookup pc seen, SYMBOLIZER_CACHE_MAX at most
	                             * (+ one stack's frames) */
	size_t n, alloc;
	struct hidx index;          /* lookup pc -> entry */
	struct perf_map_entry *perf_map;
	size_t nperf;
	int perf_map_loaded;
	int no_inline;              /* leave out inline frames (--no-inline) */
	struct symbolizer_stats stats;
};

void symbolizer_init(struct symbolizer *s, struct module_map *mm);
void symbolizer_release(struct symbolizer *s);
/* Forget cached names (after the module map was reloaded). */
void symbolizer_reset(struct symbolizer *s);

/*
 * Name the n frames of one stack at pcs into out. exact[i]: pcs[i] is where
 * the thread was interrupted (not a return address, which is looked up at
 * pc - 1). out's strings live until the next symbolize_stack,
 * symbolizer_reset or symbolizer_release: the cache may be emptied before
 * a stack, never while one is named.
 */
void symbolize_stack(struct symbolizer *s, const uint64_t *pcs, const uint8_t *exact, size_t n,
		     struct native_symbol *out);

/*
 * Is name one symbolize_pc made up for want of a symbol ("module+0xSTART",
 * "[anon]+0x7f..", "[vdso]+0x..")? Saved profiles keep only the name, so
 * the report asks this of the name itself.
 */
int symbolize_name_is_address(const char *name);

#endif
