/* Implementation of version.h. */
#include <errno.h>

#include "elf/elfread.h"
#include "python/offsets.h"
#include "python/version.h"
#include "util/util.h"

/* Minor versions probed for a table; far above any CPython 3 there will be. */
#define PY_MINOR_PROBE_MAX 99

int py_version_from_name(const char *path, int *major, int *minor)
{
	const char *p = strstr(path_base(path), "python");
	long ma, mi;
	char *end;

	if (!p)
		return -ENOENT;
	p += 6;
	ma = strtol(p, &end, 10);
	if (end == p || *end != '.')
		return -ENOENT;
	p = end + 1;
	mi = strtol(p, &end, 10);
	if (end == p || ma < 2 || ma > 3 || mi < 0 || mi > PY_MINOR_PROBE_MAX)
		return -ENOENT;
	*major = (int)ma;
	*minor = (int)mi;
	return 0;
}

static void set(struct py_version *v, int major, int minor, int micro, const char *text)
{
	v->major = major;
	v->minor = minor;
	v->micro = micro;
	if (text)
		xsnprintf(v->text, sizeof(v->text), "%s", text);
	else if (micro >= 0)
		xsnprintf(v->text, sizeof(v->text), "%d.%d.%d", major, minor, micro);
	else
		xsnprintf(v->text, sizeof(v->text), "%d.%d", major, minor);
}

/* Py_Version is PY_VERSION_HEX: 0xMMmmuuLS (level a/b/c(rc)/f, serial). */
static int from_hex(struct elf_file *ef, struct py_version *v)
{
	uint64_t addr;
	uint32_t hex;
	unsigned level, serial;
	char text[32];

	if (elf_file_symbol(ef, "Py_Version", &addr, NULL) ||
	    elf_file_read_vaddr(ef, addr, &hex, sizeof(hex)) || (hex >> 24) != 3)
		return -ENOENT;
	level = (hex >> 4) & 0xf;
	serial = hex & 0xf;
	if (level >= 0xa && level <= 0xc)
		xsnprintf(text, sizeof(text), "3.%u.%u%s%u", (hex >> 16) & 0xff, (hex >> 8) & 0xff,
			  level == 0xa ? "a" : level == 0xb ? "b" : "rc", serial);
	else
		xsnprintf(text, sizeof(text), "3.%u.%u", (hex >> 16) & 0xff, (hex >> 8) & 0xff);
	set(v, 3, (int)((hex >> 16) & 0xff), (int)((hex >> 8) & 0xff), text);
	return 0;
}

/* An "X.Y.Z..." string in .rodata for prefix "X.Y.". */
static int from_string(struct elf_file *ef, int major, int minor, struct py_version *v)
{
	char prefix[16], str[32];

	xsnprintf(prefix, sizeof(prefix), "%d.%d.", major, minor);
	if (elf_file_find_version_string(ef, prefix, str, sizeof(str)))
		return -ENOENT;
	set(v, major, minor, (int)strtol(str + strlen(prefix), NULL, 10), str);
	return 0;
}

int py_module_version(struct elf_file *ef, const char *path, struct py_version *v)
{
	int major, minor, lo, hi;

	memset(v, 0, sizeof(*v));
	if (!from_hex(ef, v))
		return 0;
	if (!py_version_from_name(path, &major, &minor)) {
		if (from_string(ef, major, minor, v))
			set(v, major, minor, -1, NULL);
		return 0;
	}
	py_supported_minors(&lo, &hi);
	for (int m = lo; m <= hi; m++)
		if (!from_string(ef, 3, m, v))
			return 0;
	memset(v, 0, sizeof(*v));
	return -ENOENT;
}

int py_version_supported(int major, int minor)
{
	return major == 3 && (py_offsets_builtin(minor) || py_debug_layout(minor, 0));
}

static void range_of(int (*has)(int), int *lo, int *hi)
{
	*lo = *hi = -1;
	for (int m = 0; m <= PY_MINOR_PROBE_MAX; m++) {
		if (!has(m))
			continue;
		if (*lo < 0)
			*lo = m;
		*hi = m;
	}
}

static int has_table(int minor)
{
	return py_version_supported(3, minor);
}

static int has_debug_layout(int minor)
{
	return py_debug_layout(minor, 0) != NULL;
}

void py_supported_minors(int *lo, int *hi)
{
	range_of(has_table, lo, hi);
}

void py_debug_offsets_minors(int *lo, int *hi)
{
	range_of(has_debug_layout, lo, hi);
}

const char *py_supported_text(struct strbuf *sb, int list)
{
	int lo, hi, gap = 0;

	py_supported_minors(&lo, &hi);
	for (int m = lo; m <= hi; m++)
		gap |= !has_table(m);
	if (!list && !gap) {
		strbuf_addf(sb, "3.%d to 3.%d", lo, hi);
		return strbuf_str(sb);
	}
	for (int m = lo; m <= hi; m++)
		if (has_table(m))
			strbuf_addf(sb, "%s3.%d", m == lo ? "" : m == hi ? " and " : ", ", m);
	return strbuf_str(sb);
}

void py_unsupported_why(struct strbuf *sb, const char *version)
{
	strbuf_addf(sb, "Python %s is not supported (framewalk reads CPython ", version);
	py_supported_text(sb, 0);
	strbuf_addch(sb, ')');
}

void py_module_build(struct elf_file *ef, int *free_threaded, int *debug)
{
	uint64_t a;

	*free_threaded = !elf_file_symbol(ef, "_Py_MergeZeroLocalRefcount", &a, NULL);
	*debug = !elf_file_symbol(ef, "_Py_NegativeRefcount", &a, NULL);
}

void py_stdlib_dir(char *out, size_t size, const char *prefix, const char *libdir, int major,
		   int minor, int free_threaded)
{
	xsnprintf(out, size, "%s/%s/python%d.%d%s", prefix, libdir, major, minor,
		  free_threaded == 1 ? "t" : "");
}
