/*
 * Implementation of debuginfo.h. Files in the target's root are opened inside
 * /proc/PID/root (target/safe_open.h: openat2 RESOLVE_IN_ROOT), so a
 * container's absolute symlinks (/usr/lib/debug/.build-id/... ->
 * /usr/lib/debug/...) resolve in the container; only regular files are
 * opened, never blocking (a FIFO planted there cannot stop the profiler);
 * a candidate is used only when its
 * build-id (or, without one, its debuglink CRC) matches. A candidate is
 * mapped guarded (target/mapguard.h) while it is checked.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "target/debuginfo.h"
#include "target/debuginfod.h"
#include "target/mapguard.h"
#include "target/safe_open.h"
#include "util/strbuf.h"
#include "util/util.h"

static const struct debuginfo_env no_env;

void debuginfo_say(const struct debuginfo_env *env, int warning, const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT;
	va_list ap;

	if (!env || !env->say)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&text, fmt, ap);
	va_end(ap);
	env->say(warning, strbuf_str(&text));
	strbuf_release(&text);
}

void debuginfo_init_root(struct debuginfo *d, const char *root, const struct debuginfo_env *env)
{
	memset(d, 0, sizeof(*d));
	d->env = env ? env : &no_env;
	xsnprintf(d->root, sizeof(d->root), "%s", root);
	/* Trailing slashes would double in "ROOT/usr/...". */
	for (size_t n = strlen(d->root); n && d->root[n - 1] == '/'; n--)
		d->root[n - 1] = '\0';
	d->root_fd = safe_root_open(d->root);
	d->budget_ns = (uint64_t)((d->env->budget_s > 0 ? d->env->budget_s : DEBUGINFO_BUDGET_S) * 1e9);
}

void debuginfo_init(struct debuginfo *d, pid_t pid, const struct debuginfo_env *env,
		    int allow_servers)
{
	char root[64];

	xsnprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	debuginfo_init_root(d, root, env);
	d->servers = allow_servers && d->env->urls && d->env->urls[strspn(d->env->urls, " \t")];
}

void debuginfo_release(struct debuginfo *d)
{
	if (d->root_fd >= 0)
		close(d->root_fd);
	dbgd_end(d->client);
	for (size_t i = 0; i < d->nhits; i++)
		free(d->hits[i].path);
	free(d->hits);
	memset(d, 0, sizeof(*d));
	d->root_fd = -1;
}

static void hex_of(const unsigned char *bid, size_t len, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < len && 2 * i + 2 < size; i++)
		xsnprintf(buf + 2 * i, 3, "%02x", bid[i]);
}

/* path (absolute, as the target sees it) inside the target's root. */
static int open_in_root(const struct debuginfo *d, const char *path, char *shown, size_t size)
{
	xsnprintf(shown, size, "%s%s", d->root, path);
	return d->root_fd >= 0 ? safe_open_in(d->root_fd, path) : -ENOENT;
}

static int open_host(const char *path, char *shown, size_t size)
{
	xsnprintf(shown, size, "%s", path);
	return safe_open_path(path);
}

static int crc_matches(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET))
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	lseek(fd, 0, SEEK_SET);
	return n == 0 && (uint32_t)crc == want;
}

/* libelf's Elf over a candidate's mapping, guarded until candidate_end (NULL: none). */
static Elf *candidate_begin(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t size = 0;
	char *raw = elf ? elf_rawfile(elf, &size) : NULL;

	if (raw && size)
		map_guard(raw, size);
	return elf;
}

static void candidate_end(Elf *elf)
{
	size_t size = 0;
	char *raw = elf ? elf_rawfile(elf, &size) : NULL;

	if (raw && size)
		map_unguard(raw);
	if (elf)
		elf_end(elf);
}

/* Is fd the debug file of the module with this build-id (or debuglink CRC)? */
static int debug_matches(int fd, const unsigned char *bid, size_t len, int use_crc, uint32_t crc)
{
	Elf *elf = candidate_begin(fd);
	const void *got = NULL;
	ssize_t n = -1;
	int ok;

	if (!elf)
		return 0;
	if (elf_kind(elf) == ELF_K_ELF)
		n = dwelf_elf_gnu_build_id(elf, &got);
	/* got points into elf's data: compare before elf_end. */
	ok = len && n == (ssize_t)len && !memcmp(got, bid, len);
	candidate_end(elf);
	if (!len)
		ok = use_crc && crc_matches(fd, crc);
	return ok;
}

/* Try one candidate; fd on a match (its path in out), else -1. */
static int try_candidate(int fd, const unsigned char *bid, size_t len, int use_crc, uint32_t crc)
{
	if (fd < 0)
		return -1;
	if (debug_matches(fd, bid, len, use_crc, crc))
		return fd;
	close(fd);
	return -1;
}

/* libdebuginfod's cache directory (the environment's, debuginfo_env) into buf. 0 or -1. */
static int cache_dir(const struct debuginfo *d, char *buf, size_t size)
{
	if (!d->env->cache_dir || !*d->env->cache_dir)
		return -1;
	return xsnprintf(buf, size, "%s", d->env->cache_dir) < 0 ? -1 : 0;
}

int debuginfo_find_local(const struct debuginfo *d, const char *target_path,
			 const unsigned char *bid, size_t len, const char *link, uint32_t crc,
			 char **path, const char **via)
{
	char shown[PATH_MAX + 64], id[81], rel[PATH_MAX];
	int fd = -1;

	*path = NULL;
	*via = NULL;
	if (len >= 2) {
		hex_of(bid, len, id, sizeof(id));
		xsnprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		fd = try_candidate(open_in_root(d, rel, shown, sizeof(shown)), bid, len, 0, 0);
		if (fd < 0)
			fd = try_candidate(open_host(rel, shown, sizeof(shown)), bid, len, 0, 0);
		*via = "build-id";
	}
	if (fd < 0 && link && *link && !strchr(link, '/') && target_path[0] == '/') {
		const char *base = strrchr(target_path, '/') + 1;
		int dirlen = (int)(base - 1 - target_path);

		*via = "debuglink";
		/* Beside the file (unless the link names the file itself), .debug/, /usr/lib/debug/DIR/. */
		if (strcmp(base, link)) {
			xsnprintf(rel, sizeof(rel), "%.*s/%s", dirlen, target_path, link);
			fd = try_candidate(open_in_root(d, rel, shown, sizeof(shown)), bid, len, 1, crc);
		}
		if (fd < 0) {
			xsnprintf(rel, sizeof(rel), "%.*s/.debug/%s", dirlen, target_path, link);
			fd = try_candidate(open_in_root(d, rel, shown, sizeof(shown)), bid, len, 1, crc);
		}
		if (fd < 0) {
			xsnprintf(rel, sizeof(rel), "/usr/lib/debug%.*s/%s", dirlen, target_path, link);
			fd = try_candidate(open_in_root(d, rel, shown, sizeof(shown)), bid, len, 1, crc);
			if (fd < 0)
				fd = try_candidate(open_host(rel, shown, sizeof(shown)), bid, len, 1, crc);
		}
	}
	/* Fetched earlier (by framewalk or debuginfod-find): no server needed. */
	if (fd < 0 && len >= 2 && !cache_dir(d, rel, sizeof(rel) - 100)) {
		size_t n = strlen(rel);

		xsnprintf(rel + n, sizeof(rel) - n, "/%s/debuginfo", id);
		fd = try_candidate(open_host(rel, shown, sizeof(shown)), bid, len, 0, 0);
		*via = "debuginfod cache";
	}
	if (fd < 0) {
		*via = NULL;
		return -1;
	}
	*path = xstrdup(shown);
	return fd;
}

static int find_local(const struct debuginfo *d, const char *target_path,
		      const unsigned char *bid, size_t len, const char *link, uint32_t crc,
		      char **path)
{
	const char *via;

	return debuginfo_find_local(d, target_path, bid, len, link, crc, path, &via);
}

static const struct debuginfo_hit *find_hit(const struct debuginfo *d, const char *id)
{
	for (size_t i = 0; i < d->nhits; i++)
		if (!strcmp(d->hits[i].build_id, id))
			return &d->hits[i];
	return NULL;
}

/* A file fetched earlier in this capture, from libdebuginfod's cache. */
static int open_hit(const struct debuginfo *d, const unsigned char *bid, size_t len, char **path)
{
	const struct debuginfo_hit *h;
	char id[81], shown[PATH_MAX + 64];
	int fd;

	*path = NULL;
	if (!len)
		return -1;
	hex_of(bid, len, id, sizeof(id));
	h = find_hit(d, id);
	if (!h)
		return -1;
	fd = try_candidate(open_host(h->path, shown, sizeof(shown)), bid, len, 0, 0);
	if (fd >= 0)
		*path = xstrdup(h->path);
	return fd;
}

/* .gnu_debugaltlink of an ELF file: its file name and build-id. Length or 0. */
static size_t read_altlink(const char *path, char *name, size_t name_size,
			   unsigned char *bid, size_t bid_size)
{
	int fd = safe_open_path(path);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, len = 0;

	if (fd < 0)
		return 0;
	elf = candidate_begin(fd);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;
			Elf_Data *data;
			const char *p;
			size_t nlen;

			if (!gelf_getshdr(scn, &sh))
				continue;
			n = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!n || strcmp(n, ".gnu_debugaltlink"))
				continue;
			data = elf_getdata(scn, NULL);
			if (!data || !data->d_buf || !data->d_size)
				break;
			p = data->d_buf;
			nlen = strnlen(p, data->d_size);
			if (nlen + 1 >= data->d_size || nlen + 1 > name_size)
				break;
			len = data->d_size - nlen - 1;
			if (len > bid_size) {
				len = 0;
				break;
			}
			memcpy(name, p, nlen + 1);
			memcpy(bid, p + nlen + 1, len);
			break;
		}
	}
	candidate_end(elf);
	close(fd);
	return len;
}

int debuginfo_dwfl_find(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct debuginfo *d = userdata ? *userdata : NULL;
	const unsigned char *bits = NULL;
	unsigned char altbid[64];
	char altname[PATH_MAX], shown[PATH_MAX + 64];
	GElf_Addr vaddr;
	int len, fd;
	size_t altlen;

	(void)base;
	errno = ENOENT;
	if (!d || !modname)
		return -1;
	/* dwz's alternate file: asked for with the altlink's name and no CRC. */
	if (debuglink_file && debuglink_file[0] == '/' && !debuglink_crc && file_name &&
	    (altlen = read_altlink(file_name, altname, sizeof(altname), altbid, sizeof(altbid))) &&
	    !strcmp(altname, debuglink_file)) {
		fd = find_local(d, "", altbid, altlen, NULL, 0, debuginfo_file_name);
		if (fd < 0)
			fd = try_candidate(open_in_root(d, altname, shown, sizeof(shown)),
					   altbid, altlen, 0, 0);
		if (fd >= 0 && !*debuginfo_file_name)
			*debuginfo_file_name = xstrdup(shown);
		if (fd < 0)
			fd = open_hit(d, altbid, altlen, debuginfo_file_name);
		errno = fd < 0 ? ENOENT : 0;
		return fd;
	}
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len < 0)
		len = 0;
	fd = find_local(d, modname, bits, (size_t)len, debuglink_file, debuglink_crc,
			debuginfo_file_name);
	if (fd < 0)
		fd = open_hit(d, bits, (size_t)len, debuginfo_file_name);
	errno = fd < 0 ? ENOENT : 0;
	return fd;
}

/* ------------------------------------------------------------------ */
/* debuginfod servers                                                  */

static int on_progress(void *arg, long done, long total)
{
	struct debuginfo *d = arg;
	uint64_t now = fw_now_ns();

	(void)done;     /* before a server answers, libdebuginfod passes a loop count */
	if (now >= d->cur_deadline_ns || (d->stop && *d->stop))
		return 1;
	/* A line once a file is actually coming (not for "not here" or no answer). */
	if (!d->announced && total > 0) {
		debuginfo_say(d->env, 0, "fetching debug info for %s (build-id %.12s...) from "
			      "debuginfod...", d->cur_name, d->cur_id);
		d->announced = 1;
	}
	return 0;
}

static void give_up(struct debuginfo *d, int err)
{
	d->gave_up = 1;
	if (err == -ECANCELED)
		debuginfo_say(d->env, 1, "debuginfod: no answer from %s within %.1f s; continuing "
			      "with local debug info (FRAMEWALK_DEBUGINFOD_TIMEOUT sets the time, "
			      "--no-debuginfod skips the servers)", d->env->urls,
			      (double)d->budget_ns / 1e9);
	else
		debuginfo_say(d->env, 1, "debuginfod: cannot reach %s (%s); continuing with local "
			      "debug info (--no-debuginfod skips the servers)", d->env->urls,
			      strerror(-err));
}

/* Ask the servers for one build-id; records the file. 0 or -errno. */
static int fetch(struct debuginfo *d, const char *name, const unsigned char *bid, size_t len)
{
	char id[81], *path = NULL;
	uint64_t now = fw_now_ns();
	int fd;

	hex_of(bid, len, id, sizeof(id));
	if (find_hit(d, id))
		return 0;
	if (d->spent_ns >= d->budget_ns) {
		give_up(d, -ECANCELED);
		return -ECANCELED;
	}
	if (!d->client) {
		d->client = dbgd_begin();
		if (!d->client) {
			d->servers = 0;
			if (errno == ENOENT)
				debuginfo_say(d->env, 1, "DEBUGINFOD_URLS is set but %s; no server "
					      "is asked", dbgd_missing());
			return -ENOSYS;
		}
	}
	d->cur_name = name;
	d->cur_id = id;
	d->cur_start_ns = now;
	d->cur_deadline_ns = now + (d->budget_ns - d->spent_ns);
	d->announced = 0;
	d->asked++;
	fd = dbgd_find_debuginfo(d->client, bid, len, on_progress, d, &path);
	d->spent_ns += fw_now_ns() - now;
	d->cur_name = d->cur_id = NULL;
	if (fd < 0) {
		free(path);
		/* a stop request cancelled it: no server is to blame */
		if (fd == -ECANCELED && d->stop && *d->stop)
			return -EINTR;
		if (fd != -ENOENT && fd != -ENOSYS)
			give_up(d, fd);
		return fd;
	}
	close(fd);
	d->hits = xgrow(d->hits, sizeof(*d->hits), d->nhits + 1, &d->hits_alloc);
	xsnprintf(d->hits[d->nhits].build_id, sizeof(d->hits[d->nhits].build_id), "%s", id);
	d->hits[d->nhits].path = path;
	d->nhits++;
	d->fetched++;
	return 0;
}

static int has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return 1;
	}
	return 0;
}

void debuginfo_prefetch(struct debuginfo *d, const char *target_path, Elf *elf,
			const unsigned char *bid, size_t bid_len)
{
	const char *base = strrchr(target_path, '/');
	const char *link = NULL;
	GElf_Word crc = 0;
	char *path = NULL, altname[PATH_MAX];
	unsigned char altbid[64];
	size_t altlen;
	int fd;

	if (!d->servers || d->gave_up || !bid_len || !elf)
		return;
	if (has_section(elf, ".debug_info"))
		return;
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	fd = find_local(d, target_path, bid, bid_len, link, crc, &path);
	if (fd >= 0) {
		close(fd);
		free(path);
		return;
	}
	base = base ? base + 1 : target_path;
	if (fetch(d, base, bid, bid_len))
		return;
	/* The file fetched may point at dwz's common file: fetch that too. */
	path = NULL;
	fd = open_hit(d, bid, bid_len, &path);
	if (fd < 0)
		return;
	close(fd);
	altlen = read_altlink(path, altname, sizeof(altname), altbid, sizeof(altbid));
	free(path);
	if (!altlen)
		return;
	fd = find_local(d, "", altbid, altlen, NULL, 0, &path);
	if (fd < 0) {
		fetch(d, base, altbid, altlen);
		return;
	}
	close(fd);
	free(path);
}
