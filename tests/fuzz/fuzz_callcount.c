/*
 * libFuzzer harness for the counts file the target writes for record
 * --count-calls (python/callcount.c: callcount_parse): the input is the
 * file's bytes, as framewalk reads them (NUL-terminated by the reader).
 * Checked: a parse that succeeds has at most CALLCOUNT_MAX_FUNCS entries,
 * each with its strings set and free of the escapes' backslash pairs' second
 * half only where the input had one; every failure leaves a state that
 * callcount_release frees; and a file without its final newline is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/callcount.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_callcount: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct callcount cc;
	char *text;
	int ret;

	if (size > (1u << 20))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	callcount_init(&cc, 0);
	ret = callcount_parse(&cc, text, size);
	if (!size || data[size - 1] != '\n')
		CHECK(ret != 0);
	if (!ret) {
		CHECK(cc.n <= CALLCOUNT_MAX_FUNCS);
		for (size_t i = 0; i < cc.n; i++) {
			CHECK(cc.fns[i].name && cc.fns[i].file);
			CHECK(strlen(cc.fns[i].name) < size && strlen(cc.fns[i].file) < size);
		}
	}
	callcount_release(&cc);
	free(text);
	return 0;
}
