/*
 * A Cython function's .pyx line. Cython writes, before the C code of each
 * .pyx line, a comment naming it: `/ * "lxml/etree.pyx":1234` (without the
 * space); the debug info names the generated .c file and its line. So the
 * .pyx line of a C line is the last such comment at or above it, read from
 * the .c file where the debug info says it was built, inside the target's
 * root (target/safe_open.h: a regular file only, at most CYTHON_C_MAX_BYTES
 * read, once per file), and kept with the ELF file that named it.
 */
#ifndef FRAMEWALK_ELF_CYTHON_H
#define FRAMEWALK_ELF_CYTHON_H

#include "elf/elffile.h"

#define CYTHON_C_MAX_BYTES (64u << 20)
#define CYTHON_MARKS_MAX (1u << 20)

/*
 * The .pyx file (its path as Cython wrote it) and line of line c_line of the
 * generated C file c_path (as the debug info names it), in f's root; 0, or
 * -1 when the .c file is not there or has no such comment above that line.
 */
int elf_cython_line(struct elf_info *f, const char *c_path, int c_line, const char **pyx,
		    int *pyx_line);

/* Forget what was read (the file's release does it). */
void elf_cython_release(struct elf_info *f);

#endif
