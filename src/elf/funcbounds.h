/*
 * Where the function holding an address starts and ends, from the file's
 * own unwind tables when it has no symbol there: the sorted search table of
 * .eh_frame_hdr gives every function's first address (one entry per FDE)
 * and the FDE it points to gives its length. A stripped library's samples
 * are then grouped by function, not split per return address (libdw's
 * dwarf_frame_info gives the bounds of one CFI row, a part of a function).
 *
 * The tables are the file's, i.e. the target's: every offset is checked
 * against the file's size and a malformed table yields "unknown", never a
 * read outside the file. Files without .eh_frame_hdr (.debug_frame only)
 * give "unknown".
 */
#ifndef FRAMEWALK_ELF_FUNCBOUNDS_H
#define FRAMEWALK_ELF_FUNCBOUNDS_H

#include <stdint.h>

#include "elf/elffile.h"

/*
 * The function of f holding file address vaddr: 0 and [*start, *end), or -1
 * when the tables do not say (no table, a malformed one, or an address
 * between functions). The table is found once per file.
 */
int elf_function_bounds(struct elf_info *f, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* Forget the table (the file's release does it). */
void elf_function_bounds_release(struct elf_info *f);

#endif
