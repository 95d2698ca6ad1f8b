/*
 * Reading an interpreter's build configuration from its _sysconfigdata
 * module without executing it: the file is a generated Python dict literal
 * (`build_time_vars = {'KEY': value, ...}`), so a small tokenizer takes the
 * string and integer values of the keys framewalk needs. The file may come
 * from a container: it is read bounded and parsed without trusting it.
 */
#ifndef FRAMEWALK_AUDIT_SYSCONFIG_H
#define FRAMEWALK_AUDIT_SYSCONFIG_H

#include <limits.h>
#include <stddef.h>

#include "util/strbuf.h"

struct py_sysconfig {
	char path[PATH_MAX];            /* the file read */
	char *cflags;                   /* CFLAGS (or PY_CFLAGS), NULL when absent */
	char *abiflags;                 /* ABIFLAGS */
	char *version;                  /* VERSION, "3.12" */
	char *config_args;              /* CONFIG_ARGS */
	int py_debug;                   /* Py_DEBUG: 1, 0, or -1 when absent */
	int gil_disabled;               /* Py_GIL_DISABLED: 1, 0, -1 */
	int enable_shared;              /* Py_ENABLE_SHARED: 1, 0, -1 */
};

/* What the compiler flags say about frame pointers. */
enum sysconfig_fp {
	SYSCONFIG_FP_UNKNOWN,
	SYSCONFIG_FP_WITHOUT,
	SYSCONFIG_FP_WITH,
};

/*
 * Find the _sysconfigdata_*.py file in stdlib_dir (e.g. /usr/lib/python3.12).
 * abiflags ("", "t", "d", "td") picks among several; NULL takes any. Names are
 * tried in sorted order, so the choice is stable. 0 or -ENOENT.
 */
int sysconfig_find(const char *stdlib_dir, const char *abiflags, char *out, size_t size);

/* Read and parse path. 0 or -errno (-EINVAL: no build_time_vars dict). */
int sysconfig_load(const char *path, struct py_sysconfig *out);
void sysconfig_release(struct py_sysconfig *sc);

/*
 * Parse the dict literal in the len bytes at text (not necessarily
 * NUL-terminated), calling fn for each key whose value is a
 * string (str set, num 0) or an integer (str NULL). Adjacent string literals
 * are joined, as Python does. Returns the number of keys, or -EINVAL.
 */
int sysconfig_parse(const char *text, size_t len,
		    void (*fn)(const char *key, const char *str, long num, void *arg), void *arg);

/*
 * Decide from compiler flags whether code is built with frame pointers: the
 * last -f[no-]omit-frame-pointer wins; without one, GCC and Clang omit them
 * from -O1 on (also -Os, -Og, -Ofast) and keep them at -O0. why receives the
 * deciding flags ("-fno-omit-frame-pointer", "-O3, no -fno-omit-frame-pointer").
 */
enum sysconfig_fp sysconfig_frame_pointers(const char *cflags, struct strbuf *why);

#endif
