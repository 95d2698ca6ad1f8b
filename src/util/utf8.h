/*
 * The one UTF-8 rule for text that comes from a target (names, paths,
 * command lines): which bytes form a valid sequence, and how such text is
 * made safe for a terminal or a collapsed-stacks line. JSON (output/json.h)
 * and the agent's labels (agent/procinfo.h) build on the same validator.
 */
#ifndef FRAMEWALK_UTIL_UTF8_H
#define FRAMEWALK_UTIL_UTF8_H

#include <stddef.h>

#include "util/strbuf.h"

/*
 * Length (1-4) of the valid UTF-8 sequence at s[0..n), or 0 when invalid:
 * truncated, overlong, a UTF-16 surrogate or above U+10FFFF. Bytes are
 * looked at in order and a NUL ends any sequence, so a NUL-terminated
 * string may be passed with n = 4.
 */
size_t utf8_seq(const unsigned char *s, size_t n);

/*
 * Is the valid n-byte sequence at s a control character no line of text
 * should carry: C0, DEL, C1 (terminal escapes) or a bidirectional
 * formatting control (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069:
 * they reorder what a line shows)?
 */
int utf8_is_control(const unsigned char *s, size_t n);

enum escape_mode {
	ESCAPE_TERMINAL = 1,    /* control chars (C0, DEL, C1, bidirectional formatting)
	                         * -> '?', invalid UTF-8 -> U+FFFD */
	ESCAPE_COLLAPSED,       /* as terminal, and ';' -> ':' */
};

/* Append s (NUL-terminated, any bytes) to sb, safe for the destination mode. */
void escape_append(struct strbuf *sb, const char *s, enum escape_mode mode);

#endif
