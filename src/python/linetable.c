/*
 * Line-number decoders for CPython line tables (co_lnotab, the 3.10
 * co_linetable, the 3.11+ location table), written for untrusted bytes read
 * out of another process: bounded by len, no overflow, -1 on garbage.
 */
#include <limits.h>

#include "python/linetable.h"

/*
 * Lines are summed in 64 bits. lnotab / 3.10 deltas are at most 128 so the
 * sum cannot overflow; a location table delta can reach 2^35, so that
 * decoder gives up as soon as the running line leaves the int range (it
 * never does in a real table). The caller gets -1 for a line outside
 * [0, INT_MAX].
 */
static int line_or_error(int64_t line)
{
	if (line < 0 || line > INT_MAX)
		return -1;
	return (int)line;
}

/*
 * Negative offsets are what a frame that has not run yet reports
 * (f_lasti == -1); CPython's PyCode_Addr2Line answers co_firstlineno.
 */
static int before_start(int firstlineno)
{
	return firstlineno < 0 ? -1 : firstlineno;
}

int linetable_lnotab_line(const uint8_t *table, size_t len, int firstlineno,
			  int byte_offset)
{
	int64_t line = firstlineno;
	int64_t addr = 0;
	size_t i;

	if (len % 2 || (len && !table))
		return -1;
	if (byte_offset < 0)
		return before_start(firstlineno);
	/* As PyCode_Addr2Line: apply pairs until the address passes byte_offset. */
	for (i = 0; i < len; i += 2) {
		addr += table[i];
		if (addr > byte_offset)
			break;
		line += (int8_t)table[i + 1];
	}
	return line_or_error(line);
}

int linetable_310_line(const uint8_t *table, size_t len, int firstlineno,
		       int byte_offset)
{
	int64_t line = firstlineno;
	int64_t end = 0;
	size_t i;

	if (len && !table)
		return -1;
	if (byte_offset < 0)
		return before_start(firstlineno);
	/*
	 * Each pair covers [end, end + length); its line delta applies even
	 * when the length is 0 (how big deltas are split). -128 = no line and
	 * leaves the running line alone.
	 */
	for (i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)table[i + 1];

		end += table[i];
		if (delta != -128)
			line += delta;
		if (byte_offset < end)
			return delta == -128 ? 0 : line_or_error(line);
	}
	return -1;
}

/* Location table entry codes (Include/cpython/code.h). */
enum {
	LOC_ONE_LINE0 = 10,
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13,
	LOC_LONG = 14,
	LOC_NONE = 15,
};

/* At most 6 chunks of 6 bits: more than any int CPython writes. */
#define VARINT_MAX_CHUNKS 6

/*
 * Read a varint (6-bit chunks, LSB first, 0x40 = more) at *pos; bytes of an
 * entry never have the top bit set. 0, or -1 when truncated or malformed.
 */
static int read_varint(const uint8_t *table, size_t len, size_t *pos,
		       uint64_t *val)
{
	unsigned int shift = 0;
	int chunks;

	*val = 0;
	for (chunks = 0; chunks < VARINT_MAX_CHUNKS; chunks++) {
		uint8_t b;

		if (*pos >= len)
			return -1;
		b = table[(*pos)++];
		if (b & 0x80)
			return -1;
		*val |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40))
			return 0;
		shift += 6;
	}
	return -1;
}

/* Signed varint: the magnitude shifted left one, low bit set if negative. */
static int read_svarint(const uint8_t *table, size_t len, size_t *pos,
			int64_t *val)
{
	uint64_t u;

	if (read_varint(table, len, pos, &u))
		return -1;
	*val = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

/* Skip n bytes that must be present and have the top bit clear. */
static int skip_bytes(const uint8_t *table, size_t len, size_t *pos, int n)
{
	while (n--) {
		if (*pos >= len || table[*pos] & 0x80)
			return -1;
		(*pos)++;
	}
	return 0;
}

/*
 * Decode the entry at *pos (whose first byte is checked by the caller):
 * its line delta, and *pos moved past it. 0, or -1 when malformed.
 */
static int read_entry(const uint8_t *table, size_t len, size_t *pos,
		      int code, int64_t *delta)
{
	uint64_t ignored;
	int i;

	*delta = 0;
	switch (code) {
	case LOC_NONE:
		return 0;
	case LOC_NO_COLUMNS:
		return read_svarint(table, len, pos, delta);
	case LOC_LONG:
		if (read_svarint(table, len, pos, delta))
			return -1;
		/* end line delta, column + 1, end column + 1 */
		for (i = 0; i < 3; i++)
			if (read_varint(table, len, pos, &ignored))
				return -1;
		return 0;
	default:
		if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
			*delta = code - LOC_ONE_LINE0;
			return skip_bytes(table, len, pos, 2);
		}
		/* short form 0-9: same line, one byte of columns */
		return skip_bytes(table, len, pos, 1);
	}
}

int linetable_locations_line(const uint8_t *table, size_t len, int firstlineno,
			     int instr_index)
{
	int64_t line = firstlineno;
	int64_t end = 0;
	size_t pos = 0;

	if (len && !table)
		return -1;
	if (instr_index < 0)
		return before_start(firstlineno);
	/* Each entry: 1 | code (4 bits) | length - 1 (3 bits), in code units. */
	while (pos < len) {
		uint8_t first = table[pos++];
		int code = (first >> 3) & 0x0f;
		int64_t delta;

		if (!(first & 0x80))
			return -1;
		if (read_entry(table, len, &pos, code, &delta))
			return -1;
		line += delta;
		if (line < INT_MIN || line > INT_MAX)
			return -1;
		end += (first & 0x07) + 1;
		if (instr_index < end)
			return code == LOC_NONE ? 0 : line_or_error(line);
	}
	return -1;
}
