/*
 * A separate debug file's compressed sections, decompressed once into an
 * unlinked file of framewalk's own.
 *
 * libdw decompresses every compressed debug section (SHF_COMPRESSED: Debian
 * ships libc6-dbg so) into the heap when it opens the file's DWARF, and keeps
 * it there while the session lasts: libc's 10 MB, decompressed again each
 * time a lookup session ended for idleness is opened again (an address
 * never asked before), 0.15 s of CPU each time. Handed the copy instead,
 * libdw reads every section in place from a file mapping: its pages are
 * only those read, the kernel may drop them (page cache, not heap), and a
 * session opened again costs no decompression.
 *
 * The copy is the file's bytes unchanged, then each compressed section
 * decompressed, then a section header table pointing at them (the ELF
 * header's e_shoff changed to it): build-id, debuglink and program headers
 * stay as they were. Made only for a 64-bit ELF file of this machine's byte
 * order whose compressed sections are all zlib (ELFCOMPRESS_ZLIB), each
 * compressed byte in one section only, the file and its sections
 * decompressed no more than DEBUGCOPY_MAX_BYTES and every copy alive no
 * more than DEBUGCOPY_LIVE_MAX, as an O_TMPFILE (never a name) in a
 * directory on a disk (/var/tmp, else /tmp; never a memory file system,
 * where the copy would be the same memory elsewhere) with room to spare,
 * reserved before it is written. Anything else, or any error on the way,
 * leaves the file as it was: libdw decompresses it then. The file is the
 * target's (its root's): read with pread (a file cut short is an error,
 * never a fault), every offset and size checked, each stream's output
 * held to the size its header gives.
 */
#ifndef FRAMEWALK_ELF_DEBUGCOPY_H
#define FRAMEWALK_ELF_DEBUGCOPY_H

#include <stdint.h>

/* The most bytes one copy may hold: the file's and its sections' decompressed. */
#define DEBUGCOPY_MAX_BYTES (512ull << 20)
/* The most bytes all the copies not yet released hold. */
#define DEBUGCOPY_LIVE_MAX (1024ull << 20)

/*
 * fd (a regular file, opened safely) itself when there is nothing to
 * decompress or a copy cannot be made; else the copy's descriptor
 * (O_CLOEXEC, unlinked), fd closed. *copy_bytes (may be NULL): the copy's
 * size, counted among the live bytes until debugcopy_release(it) says the
 * copy is gone (every descriptor of it closed); 0 when fd is returned.
 * dirs: the directories to try, NULL-terminated; NULL: /var/tmp, /tmp.
 */
int debugcopy_uncompressed(int fd, const char *const *dirs, uint64_t *copy_bytes);
void debugcopy_release(uint64_t copy_bytes);
/* The bytes of the copies not yet released. */
uint64_t debugcopy_live_bytes(void);

#endif
