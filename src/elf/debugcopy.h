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
 * order whose compressed sections are all zlib (ELFCOMPRESS_ZLIB), with no
 * more than DEBUGCOPY_MAX_BYTES decompressed, in a directory on a disk
 * (/var/tmp, else /tmp; never a memory file system, where the copy would be
 * the same memory elsewhere) with room to spare. Anything else, or any
 * error on the way, leaves the file as it was: libdw decompresses it then.
 * The file is the target's (its root's); it is read with pread (a file cut
 * short is an error, never a fault), every offset and size checked.
 */
#ifndef FRAMEWALK_ELF_DEBUGCOPY_H
#define FRAMEWALK_ELF_DEBUGCOPY_H

#include <stdint.h>

/* The most decompressed bytes one copy may hold. */
#define DEBUGCOPY_MAX_BYTES (512ull << 20)

/*
 * fd (a regular file, opened safely) itself when there is nothing to
 * decompress or a copy cannot be made; else the copy's descriptor
 * (O_CLOEXEC, unlinked), fd closed. *decompressed (may be NULL): the
 * sections' bytes the copy holds decompressed, 0 when fd is returned.
 * dirs: the directories to try, NULL-terminated; NULL: /var/tmp, /tmp.
 */
int debugcopy_uncompressed(int fd, const char *const *dirs, uint64_t *decompressed);

#endif
