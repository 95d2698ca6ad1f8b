/*
 * Where the loader put a file in a process: the load bias and the span of
 * its code, from /proc/PID/maps and the file's PT_LOAD segments. The bias
 * chosen is the one under which the most of the file's mappings sit where
 * a loader puts them (each segment at bias + its page-aligned address, at
 * its page-aligned file offset). A copy of the file a process maps as data
 * (a tool reading ELF files; framewalk's own agent) sits where no loader
 * would put the file's other segments, so it explains only itself, and a
 * file mapped only so is not loaded at all. Tiny files whose segments
 * share a page (lld), holes the kernel unmapped between segments, and code
 * remapped to anonymous memory (huge-page text) are placed from the
 * mappings that remain.
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
	int explained;              /* the file's mappings placed by this bias */
};

/*
 * Place the file (dev, inode) with segments loads in maps: 0, or -ENOENT
 * when no mapping of it is where a loader puts a file (mapped only as
 * data, or nowhere). With code (one of its executable mappings) given,
 * only the image holding that mapping is considered: a file loaded twice
 * (dlmopen) has two.
 */
int elf_image_place(const struct proc_maps *maps, const struct proc_map *code, uint64_t dev,
		    uint64_t inode, const struct elf_loads *loads, struct elf_image *out);

#endif
