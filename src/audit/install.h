/*
 * A Python installation seen as files, without running it: which module
 * holds the interpreter (the executable, or the libpython it needs), its
 * version and build, where its standard library and site-packages are, and
 * every ELF module it would load: extensions and the shared libraries they
 * need, found the way ld.so would (RUNPATH with $ORIGIN, ld.so.conf, the
 * default directories). An installation can live under a sysroot (a chroot
 * or container image): paths are then resolved inside it, symlinks included.
 */
#ifndef FRAMEWALK_AUDIT_INSTALL_H
#define FRAMEWALK_AUDIT_INSTALL_H

#include <limits.h>
#include <stddef.h>

#include "python/filefacts.h"
#include "util/strbuf.h"

struct elf_file;

#define INSTALL_MAX_MODULES 4000
#define INSTALL_MAX_DIRS 64

struct py_install {
	char root[PATH_MAX];            /* sysroot on the host, "" for / */
	char exe[PATH_MAX];             /* host path of the executable (resolved) */
	char libpython[PATH_MAX];       /* host path of libpython, "" when static */
	char prefix[PATH_MAX];          /* host path of the prefix (dir above bin/) */
	char stdlib[PATH_MAX];          /* host path of lib/pythonX.Y[t], "" unknown */
	int major, minor;
	char version[32];               /* "3.15.0a3", "3.12.1", "3.9" */
	struct py_file_facts file;      /* what the interpreter's file says: the version above,
	                                 * its build (free-threaded, debug) */
	char *libdirs[INSTALL_MAX_DIRS]; /* ld.so search directories inside root */
	size_t nlibdirs;
};

enum install_role {
	ROLE_INTERPRETER,               /* holds _PyRuntime */
	ROLE_EXECUTABLE,                /* the python executable of a shared build */
	ROLE_STDLIB_EXTENSION,
	ROLE_SITE_EXTENSION,            /* an .so under site-packages */
	ROLE_LIBRARY,                   /* a shared library needed by another module */
	ROLE_GIVEN,                     /* named on the command line */
};

struct install_module {
	char *host_path;                /* resolved, to open */
	char *name;                     /* as the installation names it (inside root) */
	enum install_role role;
	char *needed_by;                /* for ROLE_LIBRARY: the first module needing it */
};

struct install_list {
	struct install_module *v;
	size_t n, alloc;
	int truncated;                  /* INSTALL_MAX_MODULES reached */
};

/*
 * Inspect the interpreter at python (a host path). root: the sysroot, or
 * NULL to guess it (an executable at DIR/usr/bin/python with DIR/etc present
 * lives in root DIR). 0, or -ENOENT (no such file), -ENOEXEC (not ELF),
 * -ESRCH (not CPython), -ENOTSUP (a CPython framewalk does not read; its
 * version is filled in); why says what failed. The version comes from
 * python/version.h, the detection discovery uses.
 */
int install_open(const char *python, const char *root, struct py_install *out, struct strbuf *why);
void install_release(struct py_install *in);

/*
 * List the modules: the executable, libpython, lib-dynload, site-packages
 * when site is non-NULL ("" for the installation's own site-packages and
 * dist-packages, else that directory), then every library they need.
 */
void install_modules(const struct py_install *in, const char *site, struct install_list *out);

/* Add one file (host path) and then its needed libraries. */
void install_add_file(const struct py_install *in, const char *host_path, enum install_role role,
		      struct install_list *out);
/* Resolve the DT_NEEDED libraries of every listed module, transitively. */
void install_add_dependencies(const struct py_install *in, struct install_list *out);
void install_list_release(struct install_list *l);
const char *install_role_name(enum install_role r);

/*
 * Add the library directories the ld.so.conf file conf (a path inside
 * in->root) names, and those of the files it includes (glob patterns, also
 * inside the root, nested at most 4 deep, 256 files and patterns in all),
 * to in->libdirs: absolute paths only, each once, at most
 * INSTALL_MAX_DIRS. install_open reads /etc/ld.so.conf so.
 */
void install_read_ld_conf(struct py_install *in, const char *conf);

/* Resolve path (absolute, inside root) to a host path, following symlinks within root. */
int install_resolve(const char *root, const char *path, char *out, size_t size);

#endif
