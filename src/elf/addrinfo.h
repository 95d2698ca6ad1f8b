/*
 * What one ELF file says of an address in it, for the symbolizer: the
 * function symbol holding it, where that function starts, and its source
 * file and line. This is per-file knowledge (elf/elffile.h), worked out
 * once and shared by every process that maps the file, at file addresses:
 *
 * - the file's code symbols are sorted once into an index searched by
 *   halving (libdwfl's dwfl_module_addrinfo scans every symbol of the file
 *   for each address: a large libpython made that most of an agent's time);
 * - answers are kept in a cache by file address, bounded by
 *   ELF_ADDR_CACHE_MAX entries per file (when full it is emptied and starts
 *   again, the entries counted as evicted), so N processes of one
 *   interpreter look each hot address up in libdw once; the functions
 *   inlined at an address (elf_info_inlines) are kept in its entry;
 * - what the debug info says (source line, inline frames) is worked out
 *   for a whole function at its first lookup: its addresses cut into spans
 *   at every line-table row and every end of a range of an entry below it,
 *   the answer the same across each span. Later addresses in the function
 *   are answered from the spans without the debug info, which can then be
 *   let go (elf_cache_trim) and is opened again only for a function never
 *   asked before (a sampled service reaches new addresses in known
 *   functions for a long time; new functions stop soon). A function of
 *   more than ELF_FN_SPANS_ONE spans, or overlapped by another, is looked up
 *   address by address; a file keeps at most ELF_FN_SPANS_MAX spans (when
 *   full they start again).
 *
 * The strings handed out (symbol, source, inline frames) live as long as
 * the file: they point into its symbol table or the file's own copies
 * (names without @VERSION, demangled names, every string read from the
 * debug info, whose session may end: elf_cache_trim), never into the
 * cache, so emptying the cache invalidates nothing.
 */
#ifndef FRAMEWALK_ELF_ADDRINFO_H
#define FRAMEWALK_ELF_ADDRINFO_H

#include <stdint.h>

#include "elf/elffile.h"

#define ELF_ADDR_CACHE_MAX 8192
/*
 * Code symbols indexed per file, at most (a large libxul has a few hundred
 * thousand): those after it in the symbol table are left out, counted in
 * the file's symbols_capped, and their addresses take the name of the
 * nearest indexed symbol below, or none.
 */
#define ELF_SYMIDX_MAX (1u << 21)

struct elf_addr_info {
	const char *symbol;         /* the function's name (no @VERSION), demangled (elf/
	                             * demangle.h), NULL when none */
	const char *linkage;        /* the name in the file when symbol is demangled, else NULL */
	int lang;                   /* enum symbol_lang of the name */
	uint64_t start;             /* its first address: its symbol's, else its unwind entry's,
	                             * else the address itself */
	const char *source;         /* basename of the source file, NULL when unknown */
	int line;                   /* 0 when unknown */
};

/* What a lookup cost (elf_info_addr). */
struct elf_addr_cost {
	uint64_t resolved;          /* lookups libdw answered (not cached) */
	uint64_t evicted;           /* cache entries dropped to make room */
};

/*
 * Describe file address vaddr of f (whose symbols are loaded or are loaded
 * now, local debug files only), adding what it cost to *cost.
 */
void elf_info_addr(struct elf_info *f, uint64_t vaddr, struct elf_addr_info *out,
		   struct elf_addr_cost *cost);

/*
 * A function inlined at an address, from the debug info's scopes (DWARF
 * DW_TAG_inlined_subroutine). Strings live as long as the file.
 */
struct elf_inline {
	const char *name;           /* DW_AT_name, NULL when none */
	const char *linkage;        /* DW_AT_linkage_name (mangled), NULL when none */
	const char *call_file;      /* basename of the file where it was inlined, or NULL */
	int call_line;              /* the line there; 0 when unknown */
};

/* Inline frames per address, at most. */
#define ELF_INLINE_MAX 16
/* Debug-info entries from a unit's top-level function down to an address, at most. */
#define ELF_INLINE_DEPTH_MAX 64

/*
 * The functions inlined at file address vaddr of f, innermost first: up to
 * max of them (0 without debug info, or none inlined there); kept in the
 * cache's entry for vaddr when elf_info_addr made one. Each one's
 * call_file:call_line is where its caller (the next one, and after the last
 * the function of the symbol) calls it.
 */
size_t elf_info_inlines(struct elf_info *f, uint64_t vaddr, struct elf_inline *out, size_t max);

/*
 * Load the symbols and the debug info's address index (ELF_LOAD_SYMBOLS,
 * the file's loading; a lookup in a file loaded without does it first),
 * debug files found through debug (NULL: local files only); idempotent.
 */
void elf_info_load_symbols(struct elf_info *f, struct debuginfo *debug);

/* Build the symbol index now (elf_info_load_symbols does); idempotent. */
void elf_info_addr_prepare(struct elf_info *f);

/*
 * Forget what was indexed of the debug info's units (their entries belong
 * to the lookups' session, which is ending: elf_cache_trim).
 */
void elf_info_addr_forget_units(struct elf_info *f);

/* Free the index and the cache (the file's release does it). */
void elf_info_addr_release(struct elf_info *f);

#endif
