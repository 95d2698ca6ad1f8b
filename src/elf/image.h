/*
 * Where the loader put a file in a process: the load bias and the span of
 * its code, from /proc/PID/maps and the file's PT_LOAD segments. The bias
 * chosen is the one under which the most segments have their first page
 * mapped where a loader puts it (bias + the segment's page-aligned
 * address, from its page-aligned file offset). A copy of the file a
 * process maps as data (a tool reading ELF files; framewalk's own agent)
 * starts at most one segment where a loader would, even when split in
 * pieces, so it is not the image, and a file mapped only so is not loaded
 * at all (an image without code must show two segments). Tiny files whose
 * segments share a page (lld), holes the kernel unmapped between segments,
 * and code remapped to anonymous memory (huge-page text) are placed from
 * the mappings that remain.
 */
#ifndef FW_ELF_IMAGE_H
#define FW_ELF_IMAGE_H

#include <stdint.h>

#include "elf/elfread.h"
#include "target/proc.h"

struct elf_image {
	uint64_t bias;              /* target address - file address */
	uint64_t start, end;        /* the image's executable mappings ([start, end) of its code) */
	uint64_t lowest;            /* its lowest mapping (the one at file offset 0 when mapped) */
	int explained;              /* segments whose first page is mapped where this bias puts it */
};

/*
 * Place the file (dev, inode) with segments loads in maps: 0, or -ENOENT
 * when no mapping of it is where a loader puts a file (mapped only as
 * data, or nowhere). With code (one of its executable mappings) given,
 * only the image holding that mapping is considered: a file loaded twice
 * (dlmopen) has two. page: the kernel's page size (0: this host's).
 */
int elf_image_place(const struct proc_maps *maps, const struct proc_map *code, uint64_t dev,
		    uint64_t inode, const struct elf_loads *loads, uint64_t page,
		    struct elf_image *out);

#endif
