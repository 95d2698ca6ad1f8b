/*
 * Whether a file's CFI may be handed to libdw's CFA interpreter.
 *
 * libdw runs a CIE's and an FDE's instructions into a Dwarf_Frame whose
 * register array it grows to the largest register number the program names
 * (up to 2^28: DW_CFA_offset_extended r100000000 makes it allocate and clear
 * 800 MB, and the frame comes back to us) and copies whole for every
 * DW_CFA_remember_state. The tables are the target's: a hostile library
 * could make every unwind through it cost gigabytes. Before a file's
 * .eh_frame or .debug_frame is given to libdw, every program libdw could run
 * from it is read here the way libdw reads it (elfutils 0.188: the entries
 * dwarf_next_cfi walks in order, the FDEs .eh_frame_hdr's search table names,
 * the CIE each FDE names), and the CFI is refused when one names a register
 * at or above CFI_GUARD_REG_MAX or nests remember_state deeper than
 * CFI_GUARD_DEPTH_MAX; no compiler writes either. So is CFI past the bounds
 * below of what libdw keeps and repeats (CIEs, a program's length, DWARF
 * expressions), an instruction cut by its program's end, an FDE naming a CIE
 * that is not an entry of its own, and what cannot be followed the way libdw
 * follows it (a table in another encoding, a file without section headers,
 * two sections of one name). A refused file is unwound by its frame
 * pointers. docs/SECURITY.md.
 */
#ifndef FRAMEWALK_ELF_CFIGUARD_H
#define FRAMEWALK_ELF_CFIGUARD_H

#include <elfutils/libdw.h>
#include <libelf.h>

#include "elf/elfread.h"

#define CFI_GUARD_REG_MAX 256   /* x86-64's DWARF registers end at 130, arm64's at 127 */
#define CFI_GUARD_DEPTH_MAX 64
/* libdw keeps state per CIE used (~8 bytes a register) and ~70 bytes per expression byte
 * evaluated, and runs a program from its start for every lookup */
#define CFI_GUARD_CIES_MAX 4096
#define CFI_GUARD_PROGRAM_MAX 65536
#define CFI_GUARD_REMEMBER_BYTES_MAX (4u << 20) /* remember_state's copies in one program */
#define CFI_GUARD_EXPR_MAX 1024
#define CFI_GUARD_EXPR_TOTAL_MAX (256 * 1024)
/* what the check itself reads and keeps (libtorch_cpu: 9.5 MiB, ~240,000 FDEs) */
#define CFI_GUARD_SECTION_MAX (64u << 20)
#define CFI_GUARD_FDES_MAX 1000000

/*
 * 0 when the .eh_frame dwarf_getcfi_elf(elf) would read (dwfl_module_eh_cfi's)
 * is safe to run, -1 not. elf must be elf_file_map's, on its private writable
 * image, whose headers it pinned: the tables' pages are pinned here before
 * they are read, so libdw reads what was checked. *span is widened over
 * them (elf_span_widen): they must not be dropped (MADV_DONTNEED would
 * bring the file's bytes back).
 */
int cfi_guard_eh_frame(Elf *elf, struct elf_span *span);

/* The same for the .debug_frame dwarf_getcfi(dwarf) reads (dwfl_module_dwarf_cfi's). */
int cfi_guard_debug_frame(Dwarf *dwarf, struct elf_span *span);

#endif
