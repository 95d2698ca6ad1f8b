/*
 * Small shared helpers: allocation that dies in one place, error and warning
 * printing, the documented exit codes, a monotonic clock, path components.
 * Library code returns 0 or -errno (pointers: NULL with errno set); only
 * cmd_* exits. The other util/ headers: strbuf.h (strings), file.h (the
 * bounded file reader), hashidx.h (the hash index), options.h (the option
 * parser), outfile.h (outputs written whole or not at all).
 */
#ifndef FRAMEWALK_UTIL_UTIL_H
#define FRAMEWALK_UTIL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit codes; docs/EXIT-CODES.md is the user-facing list. */
enum fw_exit {
	FW_EXIT_OK = 0,
	FW_EXIT_FAILURE = 1,        /* an error not listed below */
	FW_EXIT_USAGE = 2,          /* bad option or option value */
	FW_EXIT_NO_PROCESS = 3,     /* no such process */
	FW_EXIT_NOT_PYTHON = 4,     /* the process is not running CPython */
	FW_EXIT_UNSUPPORTED = 5,    /* the Python version is not supported */
	FW_EXIT_PERMISSION = 6,     /* not allowed to read the process */
	FW_EXIT_OUTPUT = 7,         /* output file not writable / write failed */
	FW_EXIT_BAD_INPUT = 8,      /* corrupt or unreadable input file */
	FW_EXIT_CHECK_FAILED = 9,   /* `check`: something needed does not work */
	FW_EXIT_NO_SAMPLES = 10,    /* the targets exited before any sample was taken */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow *arr (of *alloc elements of size elem) to hold at least need. */
void *xgrow(void *arr, size_t elem, size_t need, size_t *alloc);
/* Words at byte offset off of a buffer copied from a target (any alignment). */
static inline uint64_t load_u64(const void *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)buf + off, sizeof(v));
	return v;
}

static inline int32_t load_i32(const void *buf, size_t off)
{
	int32_t v;

	memcpy(&v, (const char *)buf + off, sizeof(v));
	return v;
}

/* An array of n owned strings: append a copy of s; free them all and the array. */
void strv_add(char ***arr, size_t *n, const char *s);
void strv_free(char **arr, size_t n);
/* qsort for arrays that may be empty (and NULL then: qsort's base must not be). */
static inline void sort_array(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
/* qsort's comparison of two uint64_t */
int cmp_u64(const void *a, const void *b);
/* Sort n words and keep each value once, in place; returns how many are kept. */
size_t sort_unique_u64(uint64_t *v, size_t n);
/*
 * In an array of n elements of size bytes sorted by the uint64_t at
 * key_offset in each (offsetof), how many have it at or below key: the
 * index of the first above it, by halving. The last at or below key is
 * the one before (none when 0).
 */
static inline size_t count_at_or_below(const void *base, size_t n, size_t size, size_t key_offset,
				       uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;

		memcpy(&at, (const char *)base + mid * size + key_offset, sizeof(at));
		if (at <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
static inline void sort_array_r(void *base, size_t n, size_t size,
				int (*cmp)(const void *, const void *, void *), void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

/*
 * "framewalk: error: ..." on stderr. Every line these print is made safe
 * for a terminal as a whole (util/utf8.h): arguments may hold a target's
 * paths and names.
 */
void fw_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
void fw_verror(const char *fmt, va_list ap);
void fw_warning(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* "framewalk: ...": a note, no prefix */
void fw_note(const char *fmt, ...) PRINTF_LIKE(1, 2);
void fw_vnote(const char *fmt, va_list ap);
/* A second line after an error: "  hint: ..." */
void fw_hint(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* Monotonic time in nanoseconds. */
uint64_t fw_now_ns(void);
/* CPU time of the calling process in nanoseconds. */
uint64_t fw_cpu_ns(void);

/* snprintf that always terminates and reports truncation as -1. */
int xsnprintf(char *buf, size_t size, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Does s end with suffix? */
static inline int str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* The last component of a path ("libz.so.1" of "/usr/lib/libz.so.1"); path itself when it has no '/' or ends in one. */
const char *path_base(const char *path);
/* The directory of a path into out: "/usr/lib" of "/usr/lib/libz.so.1", "/" for "/x" or "x". */
void path_dir(const char *path, char *out, size_t size);

/* Parse a whole decimal number; 0 or -EINVAL. */
int parse_long(const char *s, long *out);

#include "util/banned.h"

/*
 * The wait before the next periodic look at something that seldom changes
 * (a thread list, thread names, the mappings): 0 after a look that found it
 * changed (the caller's own interval then), else twice the last wait, at
 * least first and at most most. One rule for every such look.
 */
static inline uint64_t look_again_after(uint64_t every, int unchanged, uint64_t first, uint64_t most)
{
	if (!unchanged)
		return 0;
	return every < first / 2 ? first : every > most / 2 ? most : every * 2;
}

#endif
