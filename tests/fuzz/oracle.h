/*
 * What several harnesses check text with, written apart from the code under
 * test so a shared mistake cannot hide: a buffer whose end is an unreadable
 * page (a parser reading past its length faults), and the UTF-8 rule as
 * RFC 3629 states it. Each harness defines CHECK before including this.
 */
#ifndef FRAMEWALK_FUZZ_ORACLE_H
#define FRAMEWALK_FUZZ_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* data[0..len) copied to end where a page that cannot be read begins (len <= max). */
static inline char *text_at_guard(const uint8_t *data, size_t len, size_t max)
{
	static char *area;
	long page = sysconf(_SC_PAGESIZE);

	if (!area) {
		area = mmap(NULL, max + (size_t)page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(area != MAP_FAILED);
		CHECK(mprotect(area + max, (size_t)page, PROT_NONE) == 0);
	}
	memcpy(area + max - len, data, len);
	return area + max - len;
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 when invalid (the oracle's own). */
__attribute__((no_sanitize("coverage")))
static inline size_t oracle_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

#endif
