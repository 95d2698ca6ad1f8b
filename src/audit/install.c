/*
 * Implementation of install.h. Library lookup follows ld.so's order minus
 * the environment (an installation is audited as it would load by default):
 * DT_RPATH when there is no DT_RUNPATH, DT_RUNPATH, then the ld.so.conf
 * directories and the defaults, each inside the sysroot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "audit/install.h"
#include "elf/elfread.h"
#include "python/version.h"
#include "target/safe_open.h"
#include "util/util.h"

#define MAX_LINKS 40
#define WALK_MAX_DEPTH 16
#define WALK_MAX_ENTRIES 200000
#define MAX_NEEDED 256
#define LD_CONF_MAX_BYTES (1u << 20)
#define LD_CONF_BUDGET 256      /* ld.so.conf files and include patterns read */

/* After the multiarch pair (/lib/TRIPLET, /usr/lib/TRIPLET, from arch/). */
static const char *const default_libdirs[] = {
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

const char *install_role_name(enum install_role r)
{
	switch (r) {
	case ROLE_INTERPRETER: return "interpreter";
	case ROLE_EXECUTABLE: return "executable";
	case ROLE_STDLIB_EXTENSION: return "stdlib extension";
	case ROLE_SITE_EXTENSION: return "site-packages extension";
	case ROLE_LIBRARY: return "library";
	case ROLE_GIVEN:
	default: return "module";
	}
}

int install_resolve(const char *root, const char *path, char *out, size_t size)
{
	char cur[PATH_MAX] = "", rest[2 * PATH_MAX], link[PATH_MAX], host[2 * PATH_MAX];
	int links = 0;

	if (path[0] != '/' || xsnprintf(rest, sizeof(rest), "%s", path) < 0)
		return -EINVAL;
	while (rest[0]) {
		char comp[NAME_MAX + 1], *p = rest, tmp[2 * PATH_MAX];
		size_t n;
		struct stat st;
		ssize_t ln;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n) {
			rest[0] = '\0';
			break;
		}
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, n);
		comp[n] = '\0';
		memmove(rest, p + n, strlen(p + n) + 1);
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		if (xsnprintf(host, sizeof(host), "%s%s/%s", root, cur, comp) < 0)
			return -ENAMETOOLONG;
		if (lstat(host, &st))
			return -errno;
		if (!S_ISLNK(st.st_mode)) {
			size_t cl = strlen(cur);
			if (cl + 1 + n + 1 > sizeof(cur))
				return -ENAMETOOLONG;
			cur[cl] = '/';
			memcpy(cur + cl + 1, comp, n + 1);
			continue;
		}
		if (++links > MAX_LINKS)
			return -ELOOP;
		ln = readlink(host, link, sizeof(link) - 1);
		if (ln < 0)
			return -errno;
		link[ln] = '\0';
		if (link[0] == '/')
			cur[0] = '\0';
		if (xsnprintf(tmp, sizeof(tmp), "%s/%s", link, rest) < 0)
			return -ENAMETOOLONG;
		memcpy(rest, tmp, strlen(tmp) + 1);
	}
	return xsnprintf(out, size, "%s%s", root, cur[0] ? cur : "/") < 0 ? -ENAMETOOLONG : 0;
}

/* The path inside root of a host path under it. */
static const char *inside_root(const char *root, const char *host)
{
	size_t n = strlen(root);

	if (n && !strncmp(host, root, n) && host[n] == '/')
		return host + n;
	return host;
}

static int regular_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = safe_open_path(path);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && !memcmp(magic, "\177ELF", 4);
}

/* ------------------------------------------------------------------ */
/* Versions                                                            */

static int holds_runtime(struct elf_file *ef)
{
	uint64_t a, s;

	return !elf_file_section(ef, ".PyRuntime", &a, &s) ||
	       !elf_file_symbol(ef, "_PyRuntime", &a, NULL) ||
	       !elf_file_symbol(ef, "Py_Initialize", &a, NULL);
}

/* ------------------------------------------------------------------ */
/* Dynamic section                                                     */

struct dyninfo {
	char *needed[MAX_NEEDED];
	size_t nneeded;
	char *runpath, *rpath;
};

static void dyninfo_release(struct dyninfo *d)
{
	for (size_t i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->runpath);
	free(d->rpath);
	memset(d, 0, sizeof(*d));
}

static void take_dynamic(void *ctx, int64_t tag, const char *s)
{
	struct dyninfo *d = ctx;

	if (tag == DT_NEEDED && d->nneeded < MAX_NEEDED)
		d->needed[d->nneeded++] = xstrdup(s);
	else if (tag == DT_RUNPATH && !d->runpath)
		d->runpath = xstrdup(s);
	else if (tag == DT_RPATH && !d->rpath)
		d->rpath = xstrdup(s);
}

/* What the dynamic loader needs for path: its libraries and search paths. 0 or -errno. */
static int read_dyninfo(const char *path, struct dyninfo *d)
{
	struct elf_file *ef;

	memset(d, 0, sizeof(*d));
	ef = elf_file_open(path);
	if (!ef)
		return -errno;
	elf_file_dynamic_strings(ef, take_dynamic, d);
	elf_file_close(ef);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Library search                                                      */

static void add_libdir(struct py_install *in, const char *dir)
{
	for (size_t i = 0; i < in->nlibdirs; i++)
		if (!strcmp(in->libdirs[i], dir))
			return;
	if (in->nlibdirs < INSTALL_MAX_DIRS && dir[0] == '/')
		in->libdirs[in->nlibdirs++] = xstrdup(dir);
}

/*
 * ld.so.conf and what it includes, read inside the root (target/safe_open.h).
 * *budget counts the files opened and the patterns expanded, all levels
 * together: a file that includes itself N times would else be read N^4
 * times and its patterns expanded N^5 times.
 */
static void read_ld_conf(struct py_install *in, const char *conf, int depth, int *budget)
{
	struct safe_lines lines;
	char *line;
	int fd;

	if (depth > 4 || *budget <= 0)
		return;
	(*budget)--;
	fd = safe_open_in_dir(in->root, conf);
	if (fd < 0)
		return;
	safe_lines_init(&lines, fd, LD_CONF_MAX_BYTES);
	while ((line = safe_lines_next(&lines))) {
		char *p = line, *e;

		p[strcspn(p, "#\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
			char pattern[2 * PATH_MAX];
			glob_t g;

			p += 8;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*budget <= 0)
				break;
			(*budget)--;
			if (xsnprintf(pattern, sizeof(pattern), "%s%s", in->root, p) < 0)
				continue;
			if (!glob(pattern, 0, NULL, &g)) {
				for (size_t i = 0; i < g.gl_pathc && *budget > 0; i++)
					read_ld_conf(in, inside_root(in->root, g.gl_pathv[i]), depth + 1,
						     budget);
				globfree(&g);
			}
		} else if (p[0] == '/') {
			add_libdir(in, p);
		}
	}
	close(fd);
}

void install_read_ld_conf(struct py_install *in, const char *conf)
{
	int budget = LD_CONF_BUDGET;

	read_ld_conf(in, conf, 0, &budget);
}

/* Try dir/name (dir inside root, or a host dir when host is set). */
static int try_lib(const struct py_install *in, const char *dir, int host, const char *name,
		   char *out, size_t size)
{
	char path[2 * PATH_MAX];

	if (host) {
		if (xsnprintf(path, sizeof(path), "%s/%s", dir, name) < 0 || !regular_file(path))
			return -ENOENT;
		return install_resolve(in->root, inside_root(in->root, path), out, size);
	}
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return -ENOENT;
	if (install_resolve(in->root, path, out, size) || !regular_file(out))
		return -ENOENT;
	return 0;
}

/* A ':'-separated RUNPATH/RPATH list, with $ORIGIN = origin (a host dir). */
static int search_path_list(const struct py_install *in, const char *list, const char *origin,
			    const char *name, char *out, size_t size)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX];

		if (n && n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			if (!strncmp(dir, "$ORIGIN", 7) || !strncmp(dir, "${ORIGIN}", 9)) {
				char host[2 * PATH_MAX];
				const char *tail = dir + (dir[1] == '{' ? 9 : 7);

				if (xsnprintf(host, sizeof(host), "%s%s", origin, tail) >= 0 &&
				    !try_lib(in, host, 1, name, out, size))
					return 0;
			} else if (dir[0] == '/' && !try_lib(in, dir, 0, name, out, size)) {
				return 0;
			}
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

static int find_library(const struct py_install *in, const struct dyninfo *d, const char *origin,
			const char *name, char *out, size_t size)
{
	if (strchr(name, '/')) {
		if (name[0] == '/')
			return install_resolve(in->root, name, out, size);
		return try_lib(in, origin, 1, name, out, size);
	}
	if (!d->runpath && d->rpath && !search_path_list(in, d->rpath, origin, name, out, size))
		return 0;
	if (d->runpath && !search_path_list(in, d->runpath, origin, name, out, size))
		return 0;
	for (size_t i = 0; i < in->nlibdirs; i++)
		if (!try_lib(in, in->libdirs[i], 0, name, out, size))
			return 0;
	return -ENOENT;
}

/* ------------------------------------------------------------------ */

static void guess_root(const char *exe, char *root, size_t size)
{
	char cand[PATH_MAX], probe[PATH_MAX + 16];
	const char *usr = NULL;

	root[0] = '\0';
	/* ".../usr/bin/python" or ".../usr/local/bin/python" */
	for (const char *p = strstr(exe, "/usr/"); p; p = strstr(p + 1, "/usr/"))
		usr = p;
	if (!usr || usr == exe || (size_t)(usr - exe) >= sizeof(cand))
		return;
	memcpy(cand, exe, (size_t)(usr - exe));
	cand[usr - exe] = '\0';
	xsnprintf(probe, sizeof(probe), "%s/etc", cand);
	if (is_dir(probe))
		xsnprintf(root, size, "%s", cand);
}

int install_open(const char *python, const char *root, struct py_install *out, struct strbuf *why)
{
	char abs[PATH_MAX], found[PATH_MAX], bindir[PATH_MAX], dir[PATH_MAX + 64];
	struct elf_file *ef;
	struct dyninfo d;
	const char *interp;

	memset(out, 0, sizeof(*out));
	if (!realpath(python, abs)) {
		strbuf_addf(why, "%s: %s", python, strerror(errno));
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	}
	if (root) {
		if (!realpath(root, out->root)) {
			strbuf_addf(why, "%s: %s", root, strerror(errno));
			return -ENOENT;
		}
		if (!strcmp(out->root, "/"))
			out->root[0] = '\0';
	} else {
		guess_root(abs, out->root, sizeof(out->root));
	}
	xsnprintf(out->exe, sizeof(out->exe), "%s", abs);
	if (!regular_file(out->exe) || !is_elf(out->exe)) {
		strbuf_addf(why, "%s is not an ELF executable (a script or wrapper?)", python);
		return -ENOEXEC;
	}
	install_read_ld_conf(out, "/etc/ld.so.conf");
	xsnprintf(dir, sizeof(dir), "/lib/%s", arch_multiarch);
	add_libdir(out, dir);
	xsnprintf(dir, sizeof(dir), "/usr/lib/%s", arch_multiarch);
	add_libdir(out, dir);
	for (size_t i = 0; i < ARRAY_SIZE(default_libdirs); i++)
		add_libdir(out, default_libdirs[i]);

	path_dir(out->exe, bindir, sizeof(bindir));
	path_dir(bindir, out->prefix, sizeof(out->prefix));
	if (!read_dyninfo(out->exe, &d)) {
		for (size_t i = 0; i < d.nneeded; i++)
			if (!strncmp(d.needed[i], "libpython", 9) &&
			    !find_library(out, &d, bindir, d.needed[i], found, sizeof(found))) {
				xsnprintf(out->libpython, sizeof(out->libpython), "%s", found);
				break;
			}
		dyninfo_release(&d);
	}
	interp = out->libpython[0] ? out->libpython : out->exe;
	ef = elf_file_open(interp);
	if (!ef) {
		strbuf_addf(why, "%s: %s", interp, strerror(errno));
		return -ENOEXEC;
	}
	if (!holds_runtime(ef)) {
		elf_file_close(ef);
		strbuf_addf(why, "%s is not a CPython interpreter (no _PyRuntime, no libpython)", python);
		return -ESRCH;
	}
	py_file_facts_read(ef, interp, &out->file);
	elf_file_close(ef);
	if (!out->file.version_ok) {
		strbuf_addf(why, "cannot tell the Python version of %s", interp);
		return -ESRCH;
	}
	out->major = out->file.version.major;
	out->minor = out->file.version.minor;
	xsnprintf(out->version, sizeof(out->version), "%s", out->file.version.text);
	if (!py_version_supported(out->major, out->minor)) {
		py_unsupported_why(why, out->version);
		return -ENOTSUP;
	}
	/* The standard library: PREFIX/lib/pythonX.Y (t for free-threaded builds). */
	for (int k = 0; k < 4 && !out->stdlib[0]; k++) {
		/* the build's own name first, then the other */
		py_stdlib_dir(dir, sizeof(dir), out->prefix, k < 2 ? "lib" : "lib64", out->major,
			      out->minor, (k % 2) == (out->file.free_threaded ? 0 : 1));
		if (is_dir(dir))
			xsnprintf(out->stdlib, sizeof(out->stdlib), "%s", dir);
	}
	return 0;
}

void install_release(struct py_install *in)
{
	for (size_t i = 0; i < in->nlibdirs; i++)
		free(in->libdirs[i]);
	in->nlibdirs = 0;
}

/* ------------------------------------------------------------------ */
/* Module lists                                                        */

static int listed(const struct install_list *l, const char *host)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].host_path, host))
			return 1;
	return 0;
}

static void add(const struct py_install *in, struct install_list *l, const char *host,
		enum install_role role, const char *needed_by)
{
	struct install_module m;

	if (listed(l, host))
		return;
	if (l->n >= INSTALL_MAX_MODULES) {
		l->truncated = 1;
		return;
	}
	m.host_path = xstrdup(host);
	m.name = xstrdup(inside_root(in->root, host));
	m.role = role;
	m.needed_by = needed_by ? xstrdup(needed_by) : NULL;
	l->v = xgrow(l->v, sizeof(*l->v), l->n + 1, &l->alloc);
	l->v[l->n++] = m;
}

static int is_so_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 3 && !strcmp(name + n - 3, ".so")) || strstr(name, ".so.");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every shared object under dir (sorted per directory, symlinked dirs skipped). */
static void walk(const struct py_install *in, const char *dir, int depth, size_t *budget,
		 enum install_role role, struct install_list *l)
{
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	if (depth > WALK_MAX_DEPTH || !*budget || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) && *budget) {
		(*budget)--;
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		names = xgrow(names, sizeof(*names), n + 1, &alloc);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	sort_array(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[2 * PATH_MAX], real[PATH_MAX];
		struct stat st;

		if (xsnprintf(path, sizeof(path), "%s/%s", dir, names[i]) < 0 || lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk(in, path, depth + 1, budget, role, l);
		else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && is_so_name(names[i]) &&
			 regular_file(path) && is_elf(path) &&
			 !install_resolve(in->root, inside_root(in->root, path), real, sizeof(real)))
			add(in, l, real, role, NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void install_add_dependencies(const struct py_install *in, struct install_list *out)
{
	/* out grows while we walk it: index, not pointer. */
	for (size_t i = 0; i < out->n; i++) {
		char origin[PATH_MAX], found[PATH_MAX], *host = xstrdup(out->v[i].host_path);
		struct dyninfo d;

		path_dir(host, origin, sizeof(origin));
		if (!read_dyninfo(host, &d)) {
			for (size_t k = 0; k < d.nneeded; k++)
				if (!find_library(in, &d, origin, d.needed[k], found, sizeof(found)))
					add(in, out, found, ROLE_LIBRARY, inside_root(in->root, host));
			dyninfo_release(&d);
		}
		free(host);
	}
}

void install_add_file(const struct py_install *in, const char *host_path, enum install_role role,
		      struct install_list *out)
{
	add(in, out, host_path, role, NULL);
}

void install_modules(const struct py_install *in, const char *site, struct install_list *out)
{
	char dir[2 * PATH_MAX];
	size_t budget = WALK_MAX_ENTRIES;

	if (in->libpython[0]) {
		add(in, out, in->libpython, ROLE_INTERPRETER, NULL);
		add(in, out, in->exe, ROLE_EXECUTABLE, NULL);
	} else {
		add(in, out, in->exe, ROLE_INTERPRETER, NULL);
	}
	if (in->stdlib[0]) {
		xsnprintf(dir, sizeof(dir), "%s/lib-dynload", in->stdlib);
		walk(in, dir, WALK_MAX_DEPTH, &budget, ROLE_STDLIB_EXTENSION, out);
	}
	if (site && site[0]) {
		walk(in, site, 0, &budget, ROLE_SITE_EXTENSION, out);
	} else if (site) {
		const char *dirs[] = { "%s/site-packages", "%s/dist-packages" };

		for (size_t i = 0; in->stdlib[0] && i < ARRAY_SIZE(dirs); i++) {
			xsnprintf(dir, sizeof(dir), dirs[i], in->stdlib);
			walk(in, dir, 0, &budget, ROLE_SITE_EXTENSION, out);
		}
		/* Debian: /usr/lib/python3/dist-packages, /usr/local/lib/pythonX.Y/dist-packages */
		xsnprintf(dir, sizeof(dir), "%s/lib/python3/dist-packages", in->prefix);
		walk(in, dir, 0, &budget, ROLE_SITE_EXTENSION, out);
		xsnprintf(dir, sizeof(dir), "%s/local/lib/python%d.%d/dist-packages", in->prefix,
			  in->major, in->minor);
		walk(in, dir, 0, &budget, ROLE_SITE_EXTENSION, out);
	}
	install_add_dependencies(in, out);
}

void install_list_release(struct install_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].host_path);
		free(l->v[i].name);
		free(l->v[i].needed_by);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
