/*
 * A small streaming JSON writer for the JSON outputs (speedscope, gecko) and
 * for JSON embedded in HTML. Strings come from the target, so escaping is
 * strict: '"' and '\' are escaped, control characters become \n, \t or
 * \u00XX, invalid UTF-8 becomes U+FFFD, and '<', '>', '&', U+2028 and U+2029
 * are written as \u escapes, so the output can sit inside an HTML <script>
 * element without a "</script>" or "<!--" ever appearing in it.
 *
 * The writer inserts commas itself; nesting depth is capped at JSON_MAX_DEPTH.
 * Write errors are sticky: json_finish() reports the first one.
 */
#ifndef FRAMEWALK_OUTPUT_JSON_H
#define FRAMEWALK_OUTPUT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strbuf.h"

#define JSON_MAX_DEPTH 64

struct json {
	FILE *f;
	int depth;
	int err;                        /* 0 or -errno, sticky */
	unsigned char first[JSON_MAX_DEPTH]; /* no value written yet at this level */
	unsigned char after_key;        /* the next value follows a key */
	struct strbuf buf;              /* scratch for escaping */
};

void json_init(struct json *j, FILE *f);
/* Flush; 0 or the first error (-EIO, -EINVAL for unbalanced nesting). Releases j. */
int json_finish(struct json *j);

void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
/* An object key; the next call writes its value. */
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s);
void json_string_len(struct json *j, const char *s, size_t n);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/* Non-finite values are written as null (JSON has no NaN or Infinity). */
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* A newline between top-level items keeps big files diffable; no effect on meaning. */
void json_newline(struct json *j);

/* Append s (n bytes) to sb as a quoted, escaped JSON string. */
void json_escape_append(struct strbuf *sb, const char *s, size_t n);

#endif
