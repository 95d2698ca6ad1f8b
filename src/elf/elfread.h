/*
 * The facts one ELF file states about itself, each read in one place: named
 * sections, symbol values by name (.symtab, then .dynsym), the load delta
 * of its first loadable segment, its build-id, the dynamic section's
 * strings, a version string in .rodata, and a bounded read of its bytes by
 * virtual address. A struct elf_file is a file's bytes (a private mapping,
 * its descriptor closed at once) and libelf's view of them; it stands alone
 * for a one-off question (discovery, version, the installation audit, the
 * agent's procinfo) and inside every cached file of elf/elffile.h, whose
 * build-id and load delta are read here too. The file may come from a
 * hostile container: it is reached only through target/safe_open.h or a
 * mapping's own descriptor, must be a regular file of bounded size, and
 * every size is checked before use (section data only through elf_getdata,
 * names only through elf_strptr).
 */
#ifndef FRAMEWALK_ELF_ELFREAD_H
#define FRAMEWALK_ELF_ELFREAD_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Larger files are not mapped: no real module is, a hostile one may be. */
#define ELF_MAX_SIZE (4ull << 30)

#define ELF_KEPT_MAX 3

/* A span of memory: [lo, hi). */
struct elf_span {
	const void *lo, *hi;
};

/* Widen *s over [lo, hi) (an empty *s, lo NULL, becomes it). */
static inline void elf_span_widen(struct elf_span *s, const void *lo, const void *hi)
{
	if (!s->lo || (uintptr_t)lo < (uintptr_t)s->lo)
		s->lo = lo;
	if (!s->hi || (uintptr_t)hi > (uintptr_t)s->hi)
		s->hi = hi;
}

struct elf_file {
	void *image;                /* the file's bytes (private, writable: libelf may convert in place) */
	size_t size;
	int deleted;                /* it had no name left on disk when mapped */
	Elf *elf;                   /* on image; NULL once handed to another owner (libdwfl) */
	/* the headers sections are chosen by, made private (pin_private): never to be dropped */
	struct elf_span kept[ELF_KEPT_MAX];
	int nkept;
	int unpinned;               /* a table or names past the bounds below: not pinned */
};

/* What elf_file_map pins at most: the section header table, the section names. */
#define ELF_PIN_TABLE_MAX (4u << 20)
#define ELF_PIN_NAMES_MAX (1u << 20)

/*
 * Make the pages of [p, p + n) the process's own: a page of a private file
 * mapping nobody wrote follows the file, which a target's owner may rewrite
 * while framewalk reads it; written (each page's first byte in the range,
 * with its own value) it is a private copy. The memory must be writable.
 */
void pin_private(const void *p, size_t n);

/*
 * Map the file open on fd (always consumed) into ef. 0, or -errno: ENOEXEC
 * not a regular 64-bit ELF file, EFBIG larger than ELF_MAX_SIZE. The ELF
 * header and the section header table (before libelf reads them) and the
 * section names are pinned (pin_private), so what libelf and libdw choose
 * later by name is what a check chose before (elf/cfiguard.h); ef->kept
 * lists them; ef->unpinned says a table or names were past the bounds.
 */
int elf_file_map(struct elf_file *ef, int fd);
/* Undo elf_file_map (ends ef->elf unless it was handed on); ef may be half mapped. */
void elf_file_unmap(struct elf_file *ef);

/* Open path (e.g. /proc/PID/root/usr/lib/libpython3.12.so) safely. NULL + errno. */
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
 * mapping of this file at file offset 0 is start - this value. 0 or -ENOENT.
 */
int elf_file_load_delta(struct elf_file *ef, uint64_t *delta);

/* A file's PT_LOAD segments, as the loader maps them (elf/image.h places them). */
#define ELF_LOADS_MAX 16
struct elf_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;             /* PF_R, PF_W, PF_X */
};
struct elf_loads {
	size_t n;                   /* the first ELF_LOADS_MAX */
	struct elf_load l[ELF_LOADS_MAX];
};

/* The file's PT_LOAD segments into out. 0, or -ENOENT when it has none. */
int elf_file_loads(struct elf_file *ef, struct elf_loads *out);

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

/* The GNU build-id note's bytes: their length (*bits set), or -1 without one. */
ssize_t elf_file_build_id_bits(struct elf_file *ef, const void **bits);
/*
 * Build-id as lower-case hex into buf, of at most max_bytes of it (0: all,
 * -ENOSPC when buf is too small for all). 0 or -ENOENT.
 */
int elf_file_build_id(struct elf_file *ef, char *buf, size_t size, size_t max_bytes);
/* The same on an Elf alone (the frame-pointer audit's, elf/fpaudit.h). */
int elfread_build_id(Elf *elf, char *buf, size_t size, size_t max_bytes);

#endif
