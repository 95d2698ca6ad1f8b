/*
 * The input format of fuzz_reader, shared with the seed generator: how a
 * fuzz input becomes a CPython version and a crafted memory image.
 *
 *   byte 0      minor version: 8 + (b % 8), so 3.8 ... 3.15
 *   byte 1      flags (READER_F_*)
 *   then        with READER_F_PATCH (3.13+ only): a count byte n (at most
 *               READER_MAX_PATCHES are used), then n patches of 3 bytes:
 *               a field index and a u16 value (LE) written as the u64 at
 *               that field's position in the _Py_DebugOffsets block, so
 *               mutations reach the offsets the block declares directly
 *   then        up to READER_NREGIONS regions, each a little-endian u16
 *               length followed by that many bytes; region i is mapped at
 *               READER_REGION(i). Region 0 holds _PyRuntime (and, for
 *               3.13+, starts with the _Py_DebugOffsets block).
 *   then        with READER_F_CHANGE, a second image in the same form: the
 *               target as the second walk sees it (code objects freed and
 *               their addresses reused, threads gone, ...).
 */
#ifndef FRAMEWALK_FUZZ_READER_IMAGE_H
#define FRAMEWALK_FUZZ_READER_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include "python/discover.h"
#include "python/offsets.h"
#include "target/memory.h"

#define READER_NREGIONS 8
/* 64 KiB apart: a region never overlaps the next, prefetch spans may merge */
#define READER_REGION_BASE 0x100000ull
#define READER_REGION_STRIDE 0x10000ull
#define READER_REGION(i) (READER_REGION_BASE + (uint64_t)(i) * READER_REGION_STRIDE)
/* &PyCode_Type when READER_F_CODE_TYPE is set (outside every region) */
#define READER_CODE_TYPE 0x7f00c0de0000ull

#define READER_F_CODE_TYPE 0x01   /* the reader knows PyCode_Type */
#define READER_F_TWO_PASSES 0x02  /* walk again: cached code objects, prefetch */
#define READER_F_SMALL_MAX 0x04   /* room for only 3 threads and 5 frames */
#define READER_F_CHANGE 0x08      /* the second walk reads a second image */
#define READER_F_PATCH 0x20       /* patches of the debug-offsets block follow */
#define READER_MAX_PATCHES 16
#define READER_F_RECHECK 0x10     /* cached code objects are re-checked and the
                                   * thread list head re-read before walk 2 */

/* The debug-offsets block fields READER_F_PATCH can set, by index. */
#define READER_POS(f) offsetof(struct py_debug_offsets_layout, f)
static const size_t reader_patchable[] = {
	READER_POS(runtime_interpreters_head), READER_POS(interp_next),
	READER_POS(interp_threads_head), READER_POS(interp_id), READER_POS(tstate_next),
	READER_POS(tstate_interp), READER_POS(tstate_current_frame),
	READER_POS(tstate_thread_id), READER_POS(tstate_native_thread_id),
	READER_POS(frame_previous), READER_POS(frame_executable), READER_POS(frame_instr_ptr),
	READER_POS(frame_owner), READER_POS(code_filename), READER_POS(code_name),
	READER_POS(code_qualname), READER_POS(code_linetable), READER_POS(code_firstlineno),
	READER_POS(code_co_code_adaptive), READER_POS(object_type), READER_POS(bytes_size),
	READER_POS(bytes_data), READER_POS(unicode_state), READER_POS(unicode_length),
	READER_POS(unicode_asciiobject_size), READER_POS(unicode_compactunicodeobject_size),
	READER_POS(interp_gil_runtime_state_holder), READER_POS(interp_gil_runtime_state_locked),
	READER_POS(code_tlbc), READER_POS(frame_tlbc_index),
};
#define READER_NPATCHABLE (sizeof(reader_patchable) / sizeof(reader_patchable[0]))

/* The index in reader_patchable of a field, for the seed generator. */
static inline int reader_patch_index(size_t pos)
{
	for (size_t i = 0; i < READER_NPATCHABLE; i++)
		if (reader_patchable[i] == pos)
			return (int)i;
	return -1;
}

/*
 * The patches of a READER_F_PATCH input at data[*pos]: *patch and the count
 * used (at most READER_MAX_PATCHES); *pos moves past all that were given.
 */
static inline size_t reader_parse_patches(const uint8_t *data, size_t size, size_t *pos,
					  const uint8_t **patch)
{
	size_t n;

	*patch = NULL;
	if (*pos >= size)
		return 0;
	n = data[(*pos)++];
	if (n > (size - *pos) / 3)
		n = (size - *pos) / 3;
	*patch = data + *pos;
	*pos += 3 * n;
	return n > READER_MAX_PATCHES ? READER_MAX_PATCHES : n;
}

/* Up to READER_NREGIONS regions at data[*pos], mapped at READER_REGION(i); how many. */
static inline size_t reader_parse_regions(const uint8_t *data, size_t size, size_t *pos,
					  struct mem_region *regions)
{
	size_t nreg = 0;

	while (nreg < READER_NREGIONS && *pos + 2 <= size) {
		size_t len = (size_t)data[*pos] | (size_t)data[*pos + 1] << 8;

		*pos += 2;
		if (len > size - *pos)
			len = size - *pos;
		regions[nreg].addr = READER_REGION(nreg);
		regions[nreg].data = data + *pos;
		regions[nreg].len = len;
		nreg++;
		*pos += len;
	}
	return nreg;
}

/*
 * The version's offsets as discover.c finds them: the built-in table up to
 * 3.12; 3.13+ the _Py_DebugOffsets block at the start of region 0 (with the
 * patches applied in copy, which then stands for region 0), read with the
 * layout the block's own free-threaded byte names. 0 or -1.
 */
static inline int reader_offsets(int minor, struct mem_region *regions, size_t nreg,
				 const uint8_t *patch, size_t npatch, uint8_t *copy,
				 size_t copy_size, struct py_offsets *out)
{
	const struct py_debug_offsets_layout *l;

	if (minor <= 12) {
		*out = *py_offsets_builtin(minor);
		return 0;
	}
	l = py_debug_layout(minor, 0);
	if (!nreg || regions[0].len < (size_t)l->block_size || regions[0].len > copy_size)
		return -1;
	if (npatch) {
		memcpy(copy, regions[0].data, regions[0].len);
		for (size_t i = 0; i < npatch; i++) {
			int32_t at = *(const int32_t *)((const char *)l +
				reader_patchable[patch[3 * i] % READER_NPATCHABLE]);
			uint64_t v = (uint64_t)patch[3 * i + 1] | (uint64_t)patch[3 * i + 2] << 8;

			if (at != PYOFF_NONE && (size_t)at + 8 <= regions[0].len)
				memcpy(copy + at, &v, 8);
		}
		regions[0].data = copy;
	}
	l = py_debug_layout_of_block(minor, regions[0].data, regions[0].len);
	if (!l || py_offsets_from_debug(l, regions[0].data, (size_t)l->block_size, out))
		return -1;
	return 0;
}

#endif
