/*
 * Line-number decoders for CPython code objects: from the bytes of a code
 * object's line table and the offset of the instruction a frame is at, the
 * source line. Three encodings: co_lnotab (<= 3.9), the 3.10 co_linetable and
 * the 3.11+ location table (Objects/locations.md). The input is untrusted
 * target memory: every decoder is bounded by len and never reads past it.
 */
#ifndef FRAMEWALK_PYTHON_LINETABLE_H
#define FRAMEWALK_PYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * co_lnotab (3.8, 3.9): pairs of (byte-offset delta, signed line delta).
 * byte_offset is the offset in bytes of the instruction (f_lasti).
 * Returns the line, or -1 when the table is malformed.
 */
int linetable_lnotab_line(const uint8_t *table, size_t len, int firstlineno,
			  int byte_offset);

/*
 * co_linetable of 3.10: pairs of (byte-range length, signed line delta, -128 =
 * no line). byte_offset is f_lasti * 2. Returns the line, 0 when the
 * instruction has no line, or -1 when the table is malformed or too short.
 */
int linetable_310_line(const uint8_t *table, size_t len, int firstlineno,
		       int byte_offset);

/*
 * 3.11+ location table. instr_index counts 2-byte code units from the start
 * of the code. Returns the line, 0 when the instruction has no location, or
 * -1 when the table is malformed or ends before the instruction.
 */
int linetable_locations_line(const uint8_t *table, size_t len, int firstlineno,
			     int instr_index);

#endif
