/*
 * A growable string (after git's strbuf): buf is always NUL-terminated, len
 * excludes the NUL; a zeroed or STRBUF_INIT strbuf is empty and valid.
 */
#ifndef FRAMEWALK_UTIL_STRBUF_H
#define FRAMEWALK_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include "util/util.h"

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns buf (never NULL), "" for an empty strbuf. */
const char *strbuf_str(const struct strbuf *sb);
/* Takes ownership of the buffer, leaving sb empty. */
char *strbuf_detach(struct strbuf *sb);

#endif
