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
 * CFI_GUARD_DEPTH_MAX; no compiler writes either. What cannot be followed the
 * way libdw follows it (a table in another encoding, a file without section
 * headers, two sections of one name) is refused too: the file is then
 * unwound by its frame pointers. docs/SECURITY.md.
 */
#ifndef FRAMEWALK_ELF_CFIGUARD_H
#define FRAMEWALK_ELF_CFIGUARD_H

#include <elfutils/libdw.h>
#include <libelf.h>

#define CFI_GUARD_REG_MAX 256   /* x86-64's DWARF registers end at 130, arm64's at 127 */
#define CFI_GUARD_DEPTH_MAX 64

/* 0 when the .eh_frame dwarf_getcfi_elf(elf) would read (dwfl_module_eh_cfi's) is safe to run, -1 not. */
int cfi_guard_eh_frame(Elf *elf);

/* The same for the .debug_frame dwarf_getcfi(dwarf) reads (dwfl_module_dwarf_cfi's). */
int cfi_guard_debug_frame(Dwarf *dwarf);

#endif
