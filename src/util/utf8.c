/*
 * Implementation of utf8.h.
 */
#include "util/utf8.h"

size_t utf8_seq(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0;   /* overlong, or a UTF-16 surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;   /* overlong, or above U+10FFFF */
		return 4;
	}
	return 0;
}

/* The sequence s (n bytes, valid) a bidirectional formatting control? */
static int is_bidi_control(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xd8 && s[1] == 0x9c;                      /* U+061C */
	if (n != 3 || s[0] != 0xe2)
		return 0;
	return (s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f ||       /* U+200E-F */
				 (s[2] >= 0xaa && s[2] <= 0xae))) ||     /* U+202A-E */
	       (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9);          /* U+2066-9 */
}

int utf8_is_control(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) || is_bidi_control(s, n);
}

void escape_append(struct strbuf *sb, const char *str, enum escape_mode mode)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n;

		if (utf8_is_control(s, 1)) {
			strbuf_addch(sb, '?');
			s++;
			continue;
		}
		if (mode == ESCAPE_COLLAPSED && *s == ';') {
			strbuf_addch(sb, ':');
			s++;
			continue;
		}
		n = utf8_seq(s, 4);
		if (!n) {
			strbuf_addstr(sb, "\xef\xbf\xbd");
			s++;
			continue;
		}
		if (utf8_is_control(s, n)) {
			strbuf_addch(sb, '?');
			s += n;
			continue;
		}
		strbuf_add(sb, s, n);
		s += n;
	}
}
