/*
 * libFuzzer harness for the line-table decoders (src/python/linetable.h).
 * Input: a kind byte (lnotab, 3.10, locations), firstlineno and an
 * instruction offset (i32 little-endian each), then the table. Every decoder
 * is bounded by the table length: the table is copied to a buffer of exactly
 * that size so ASan sees any read past it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/linetable.h"

static int decode(int kind, const uint8_t *t, size_t len, int first, int off)
{
	switch (kind) {
	case 0:
		return linetable_lnotab_line(t, len, first, off);
	case 1:
		return linetable_310_line(t, len, first, off);
	default:
		return linetable_locations_line(t, len, first, off);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first, off;
	uint8_t *table;
	size_t len;
	int kind;

	if (size < 9)
		return 0;
	kind = data[0] % 3;
	memcpy(&first, data + 1, 4);
	memcpy(&off, data + 5, 4);
	len = size - 9;
	table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + 9, len);

	/* the asked offset in every decoder, then every offset the table can cover */
	for (int k = 0; k < 3; k++) {
		int line = decode(k, table, len, first, off);

		/* a frame that has not started yet is on its first line */
		if (line < -1 || (k && first >= 0 && off < 0 && line != first))
			abort();
	}
	for (int i = -1; i <= (int)(2 * len + 4) && i < 4096; i++)
		if (decode(kind, table, len, first, i) < -1)
			abort();
	/* an empty or absent table is not a crash either */
	decode(kind, NULL, 0, first, off);
	free(table);
	return 0;
}
