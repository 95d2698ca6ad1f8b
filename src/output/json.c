/*
 * Implementation of json.h. Escaping is the part that matters: every byte of
 * a target-controlled string is either copied as part of a valid UTF-8
 * sequence that needs no escape, written as an escape, or replaced by U+FFFD.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>   /* isfinite, a macro: no libm */

#include "output/json.h"
#include "util/utf8.h"
#include "util/util.h"

void json_escape_append(struct strbuf *sb, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	strbuf_addch(sb, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		switch (c) {
		case '"':  strbuf_addstr(sb, "\\\""); i++; continue;
		case '\\': strbuf_addstr(sb, "\\\\"); i++; continue;
		case '\n': strbuf_addstr(sb, "\\n"); i++; continue;
		case '\r': strbuf_addstr(sb, "\\r"); i++; continue;
		case '\t': strbuf_addstr(sb, "\\t"); i++; continue;
		case '\b': strbuf_addstr(sb, "\\b"); i++; continue;
		case '\f': strbuf_addstr(sb, "\\f"); i++; continue;
		/* HTML-significant characters: "</script>", "<!--", "]]>", entities */
		case '<': case '>': case '&': case '\'':
			strbuf_addf(sb, "\\u%04x", c);
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			strbuf_addf(sb, "\\u%04x", c);
			i++;
			continue;
		}
		k = utf8_seq(s + i, n - i);
		if (!k) {
			strbuf_addstr(sb, "\\ufffd");
			i++;
			continue;
		}
		/* U+2028 and U+2029 end a line inside a JavaScript string literal. */
		if (k == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			strbuf_addstr(sb, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 3;
			continue;
		}
		strbuf_add(sb, s + i, k);
		i += k;
	}
	strbuf_addch(sb, '"');
}

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = 1;
}

static void put(struct json *j, const char *s, size_t n)
{
	if (j->err)
		return;
	if (n && fwrite(s, 1, n, j->f) != n)
		j->err = -EIO;
}

static void puts_(struct json *j, const char *s)
{
	put(j, s, strlen(s));
}

/* Separator before a value (or a key) at the current level. */
static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = 0;
}

static void open_(struct json *j, const char *c)
{
	before_value(j);
	put(j, c, 1);
	if (j->depth + 1 >= JSON_MAX_DEPTH) {
		if (!j->err)
			j->err = -EINVAL;
		return;
	}
	j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct json *j, const char *c)
{
	if (j->depth == 0 || j->after_key) {
		if (!j->err)
			j->err = -EINVAL;
		return;
	}
	j->depth--;
	put(j, c, 1);
}

void json_begin_object(struct json *j) { open_(j, "{"); }
void json_end_object(struct json *j) { close_(j, "}"); }
void json_begin_array(struct json *j) { open_(j, "["); }
void json_end_array(struct json *j) { close_(j, "]"); }

void json_key(struct json *j, const char *key)
{
	before_value(j);
	strbuf_reset(&j->buf);
	json_escape_append(&j->buf, key, strlen(key));
	strbuf_addch(&j->buf, ':');
	put(j, j->buf.buf, j->buf.len);
	j->after_key = 1;
}

void json_string_len(struct json *j, const char *s, size_t n)
{
	before_value(j);
	strbuf_reset(&j->buf);
	json_escape_append(&j->buf, s ? s : "", s ? n : 0);
	put(j, j->buf.buf, j->buf.len);
}

void json_string(struct json *j, const char *s)
{
	json_string_len(j, s, s ? strlen(s) : 0);
}

void json_int(struct json *j, int64_t v)
{
	char b[32];

	before_value(j);
	xsnprintf(b, sizeof(b), "%" PRId64, v);
	puts_(j, b);
}

void json_uint(struct json *j, uint64_t v)
{
	char b[32];

	before_value(j);
	xsnprintf(b, sizeof(b), "%" PRIu64, v);
	puts_(j, b);
}

void json_double(struct json *j, double v)
{
	char b[64];

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	before_value(j);
	/* Integral values print without an exponent up to 2^53; others as the
	 * shortest of %.15g / %.17g that reads back exactly. */
	if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(int64_t)v) {
		xsnprintf(b, sizeof(b), "%.0f", v);
	} else {
		xsnprintf(b, sizeof(b), "%.15g", v);
		if (strtod(b, NULL) != v)
			xsnprintf(b, sizeof(b), "%.17g", v);
	}
	puts_(j, b);
}

void json_bool(struct json *j, int v)
{
	before_value(j);
	puts_(j, v ? "true" : "false");
}

void json_null(struct json *j)
{
	before_value(j);
	puts_(j, "null");
}

void json_newline(struct json *j)
{
	put(j, "\n", 1);
}

int json_finish(struct json *j)
{
	int err = j->err;

	if (!err && (j->depth != 0 || j->after_key))
		err = -EINVAL;
	if (!err && fflush(j->f))
		err = -EIO;
	strbuf_release(&j->buf);
	return err;
}
