/*
 * Which CPython an ELF module is, and which ones framewalk reads. The one
 * version detection behind discovery (a running process, python/discover.c)
 * and the installation audit (files, audit/install.c); the supported range
 * is what the offsets tables hold (python/offsets_table.c), so a new table
 * entry is a new supported version everywhere, messages included.
 */
#ifndef FRAMEWALK_PYTHON_VERSION_H
#define FRAMEWALK_PYTHON_VERSION_H

#include <stddef.h>

#include "util/strbuf.h"

struct elf_file;

struct py_version {
	int major, minor;
	int micro;                      /* -1: unknown */
	char text[32];                  /* "3.15.0a3", "3.12.1", "3.9" (micro unknown) */
};

/*
 * "libpython3.12.so.1.0" -> 3.12, "python3.9" -> 3.9, "libpython2.7.so" ->
 * 2.7 (named, to say it is too old). 0 or -ENOENT.
 */
int py_version_from_name(const char *path, int *major, int *minor);

/*
 * The version of an interpreter module (path: its file name, as named):
 * Py_Version (3.11+); else the name's X.Y with an "X.Y.Z" string in
 * .rodata for the micro; else the first "3.M." string there for a supported
 * minor M. 0 or -ENOENT.
 */
int py_module_version(struct elf_file *ef, const char *path, struct py_version *out);
/*
 * How an interpreter module was built, from its symbols: free-threaded
 * (_Py_MergeZeroLocalRefcount) and debug (_Py_NegativeRefcount). The file's
 * answer, for check and the installation audit; a running process says it
 * in its _Py_DebugOffsets block too, which discovery reads.
 */
void py_module_build(struct elf_file *ef, int *free_threaded, int *debug);

/*
 * The standard library's directory under prefix: PREFIX/LIBDIR/pythonX.Y,
 * with a "t" for a free-threaded build (libdir: "lib" or "lib64").
 */
void py_stdlib_dir(char *out, size_t size, const char *prefix, const char *libdir, int major,
		   int minor, int free_threaded);

/* Does framewalk read CPython major.minor (a built-in table or a debug-offsets layout)? */
int py_version_supported(int major, int minor);

/* The supported minors of 3: the lowest and the highest. */
void py_supported_minors(int *lo, int *hi);
/* The minors read through the target's _Py_DebugOffsets (3.13+): lo to hi. */
void py_debug_offsets_minors(int *lo, int *hi);

/*
 * The supported versions for a message, appended to sb: "3.8 to 3.15", or
 * listed one by one ("3.8, 3.9, ... and 3.15") when list is set. Returns sb's text.
 */
const char *py_supported_text(struct strbuf *sb, int list);
/* "Python VERSION is not supported (framewalk reads CPython 3.8 to 3.15)" */
void py_unsupported_why(struct strbuf *sb, const char *version);

#endif
