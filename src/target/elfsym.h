/*
 * Just enough of an ELF file for discovery and the installation audit: named
 * sections, symbol values from .symtab or .dynsym, the first loadable
 * segment (to rebase addresses), the build-id, the dynamic section's
 * strings, and a bounded read of file bytes by virtual address. Built on
 * elfutils' libelf; the file may come from a hostile container, so every
 * size is checked before use.
 */
#ifndef FRAMEWALK_TARGET_ELFSYM_H
#define FRAMEWALK_TARGET_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

/* Open path (e.g. /proc/PID/root/usr/lib/libpython3.12.so). NULL + errno. */
struct elf_file *elf_file_open(const char *path);
/* The same on an open file (a mapping's, see proc_map_open); fd is consumed. */
struct elf_file *elf_file_open_fd(int fd);
void elf_file_close(struct elf_file *ef);

/* Address and size of a section by name. 0 or -ENOENT. */
int elf_file_section(struct elf_file *ef, const char *name, uint64_t *addr, uint64_t *size);

/* Value and size of a defined symbol (.symtab first, then .dynsym). 0 or -ENOENT. */
int elf_file_symbol(struct elf_file *ef, const char *name, uint64_t *value, uint64_t *size);

/*
 * p_vaddr - p_offset of the first PT_LOAD segment: the load bias of a
 * mapping of this file at file offset 0 is start - this value.
 */
int elf_file_load_delta(struct elf_file *ef, uint64_t *delta);

/* Copy file bytes that hold virtual addresses [addr, addr+len). 0 or -ENOENT. */
int elf_file_read_vaddr(struct elf_file *ef, uint64_t addr, void *buf, size_t len);

/*
 * Find a NUL-delimited string "<prefix><digits>[.<digits>][a|b|rc<digits>]"
 * in the read-only data sections (a version string such as "3.9.18").
 * Returns 0 and copies it into buf, or -ENOENT.
 */
int elf_file_find_version_string(struct elf_file *ef, const char *prefix, char *buf, size_t size);

/*
 * The string entries of the dynamic section (DT_NEEDED, DT_SONAME,
 * DT_RPATH, DT_RUNPATH), in order, through fn. 0, or -ENOENT without one.
 */
int elf_file_dynamic_strings(struct elf_file *ef,
			     void (*fn)(void *ctx, int64_t tag, const char *value), void *ctx);

/* Build-id as lower-case hex into buf. 0 or -ENOENT. */
int elf_file_build_id(struct elf_file *ef, char *buf, size_t size);

#endif
