/*
 * The input format of fuzz_reader, shared with the seed generator: how a
 * fuzz input becomes a CPython version and a crafted memory image.
 *
 *   byte 0      minor version: 8 + (b % 8), so 3.8 ... 3.15
 *   byte 1      flags (READER_F_*)
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

#include <stdint.h>

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
#define READER_F_RECHECK 0x10     /* cached code objects are re-checked and the
                                   * thread list head re-read before walk 2 */

#endif
