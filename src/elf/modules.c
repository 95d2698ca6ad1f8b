/*
 * Implementation of modules.h. Mappings are grouped into modules by the
 * file they map (device + inode), never by path: after an upgrade a path
 * may be mapped twice, once for the deleted old file and once for the new
 * one, and those are two modules. A file loaded twice (dlmopen) is a module
 * per image: its placement (elf/image.h) is per executable mapping.
 */
#include <errno.h>
#include <gelf.h>

#include "elf/addrinfo.h"
#include "elf/image.h"
#include "elf/modules.h"
#include "target/proc.h"
#include "util/file.h"
#include "util/util.h"

static int cmp_module(const void *a, const void *b)
{
	const struct fw_module *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void module_free(struct module_map *mm, struct fw_module *m)
{
	elf_cache_put(mm->cache, m->file);
	free(m->host_path);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

static void ranges_free(struct module_map *mm)
{
	for (size_t i = 0; i < mm->nranges; i++)
		free(mm->ranges[i].name);
	free(mm->ranges);
	mm->ranges = NULL;
	mm->nranges = mm->ranges_alloc = 0;
}

void modules_release(struct module_map *mm)
{
	ranges_free(mm);
	for (size_t i = 0; i < mm->n; i++)
		module_free(mm, &mm->mods[i]);
	free(mm->mods);
	if (mm->own_cache)
		elf_cache_free(mm->cache);
	if (mm->debug) {
		debuginfo_release(mm->debug);
		free(mm->debug);
	}
	memset(mm, 0, sizeof(*mm));
}

/* The module of the file (dev, ino) whose code holds addr: a file loaded twice has two. */
static struct fw_module *find_at(struct fw_module *v, size_t n, uint64_t dev, uint64_t ino,
				 uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].path && v[i].dev == dev && v[i].ino == ino && addr >= v[i].start &&
		    addr < v[i].end)
			return &v[i];
	return NULL;
}

/* The file of a module new to this map: from the cache, else opened through the mapping. */
static void take_file(struct module_map *mm, struct fw_module *m, const struct proc_map *map)
{
	int fd, loaded;

	unsigned flags = mm->flags & MODULES_NO_SYMBOLS ? 0 : ELF_LOAD_SYMBOLS;

	m->file = elf_cache_find(mm->cache, m->dev, m->ino);
	if (m->file) {
		if (flags & ELF_LOAD_SYMBOLS)
			elf_info_load_symbols(m->file, mm->debug);
		mm->stats.reused++;
		return;
	}
	fd = proc_map_open(mm->pid, map, NULL);
	if (fd < 0) {
		m->err = fd;
		mm->stats.unreadable++;
		return;
	}
	m->file = elf_cache_add_fd(mm->cache, fd, m->dev, m->ino, m->path, m->host_path, mm->root,
				   mm->debug, flags, &loaded);
	if (!m->file) {
		m->err = -errno;
		mm->stats.unreadable++;
		return;
	}
	if (loaded)
		mm->stats.loaded++;
	else
		mm->stats.reused++;
}

/*
 * Where the file of exec_map was loaded (elf/image.h), from its segments;
 * without them, from the maps alone: the nearest mapping of the file at
 * offset 0 below its code (target/proc.h).
 */
static void place(const struct proc_maps *maps, const struct proc_map *exec_map,
		  const struct elf_info *f, uint64_t *lo, uint64_t *hi, uint64_t *bias)
{
	const struct proc_map *base;
	struct elf_image img;

	if (f && f->loads.n &&
	    !elf_image_place(maps, exec_map, exec_map->dev, exec_map->inode, &f->loads, 0,
			     &img)) {
		*lo = img.start;
		*hi = img.end;
		*bias = img.bias;
		return;
	}
	base = proc_maps_image_base(maps, exec_map);
	if (!base)
		base = exec_map;
	*lo = base->start;
	*hi = proc_maps_image_end(maps, base);
	/* Without the file, offsets from the start of its first mapping name code. */
	*bias = base->start - base->offset;
	if (f)
		*bias = f->e_type == ET_EXEC ? 0 : *bias - f->load_delta;
}

static void new_module(struct module_map *mm, const struct proc_maps *maps,
		       const struct proc_map *exec_map, struct fw_module *old, size_t nold)
{
	struct fw_module *m, *prev;
	char host[PATH_MAX + 64];
	uint64_t lo, hi, bias;

	mm->mods = xgrow(mm->mods, sizeof(*mm->mods), mm->n + 1, &mm->alloc);
	m = &mm->mods[mm->n++];
	/* The same file at the same place as before the refresh: keep all of it. */
	prev = find_at(old, nold, exec_map->dev, exec_map->inode, exec_map->start);
	if (prev) {
		place(maps, exec_map, prev->file, &lo, &hi, &bias);
		if (prev->start == lo && prev->end == hi && prev->bias == bias) {
			*m = *prev;
			memset(prev, 0, sizeof(*prev));
			mm->stats.kept++;
			return;
		}
	}
	memset(m, 0, sizeof(*m));
	m->dev = exec_map->dev;
	m->ino = exec_map->inode;
	m->path = xstrdup(exec_map->path);
	m->name = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	m->deleted = proc_map_on_disk(mm->pid, exec_map, &m->replaced) == 0;
	/* Its directory, for debug files beside it: a chroot's maps show host paths. */
	if (proc_map_host_path(mm->pid, exec_map, host, sizeof(host)))
		xsnprintf(host, sizeof(host), "%s%s", mm->root, m->path);
	m->host_path = xstrdup(host);
	take_file(mm, m, exec_map);
	/* the image the loader made, not the file mapped again as data elsewhere */
	place(maps, exec_map, m->file, &m->start, &m->end, &m->bias);
	if (m->file)
		memcpy(m->build_id, m->file->build_id, sizeof(m->build_id));
}

/* Build the module list from the current mappings, reusing what old holds. */
static int read_modules(struct module_map *mm, struct fw_module *old, size_t nold)
{
	struct proc_maps maps;
	int ret;

	ret = proc_maps_read(mm->pid, &maps);
	if (ret)
		return ret;
	mm->stats.capped = 0;
	mm->debug->stop = mm->stop;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];

		if (m->perms[2] != 'x')
			continue;
		mm->ranges = xgrow(mm->ranges, sizeof(*mm->ranges), mm->nranges + 1,
				   &mm->ranges_alloc);
		mm->ranges[mm->nranges].start = m->start;
		mm->ranges[mm->nranges].end = m->end;
		mm->ranges[mm->nranges].dev = m->dev;
		mm->ranges[mm->nranges].ino = m->inode;
		mm->ranges[mm->nranges].name = xstrdup(m->path);
		mm->nranges++;
		if (m->path[0] != '/' || !m->inode ||
		    find_at(mm->mods, mm->n, m->dev, m->inode, m->start))
			continue;
		if (mm->n >= MODULES_MAX) {
			mm->stats.capped++;
			continue;
		}
		/* the ranges stay whole; modules_changed asks for a refresh */
		if (mm->stop && *mm->stop) {
			ret = -EINTR;
			continue;
		}
		new_module(mm, &maps, m, old, nold);
	}
	proc_maps_release(&maps);
	sort_array(mm->mods, mm->n, sizeof(*mm->mods), cmp_module);
	mm->incomplete = ret == -EINTR;
	return ret;
}

int modules_load(struct module_map *mm, pid_t pid, struct elf_cache *cache, unsigned flags,
		 const volatile sig_atomic_t *stop)
{
	memset(mm, 0, sizeof(*mm));
	mm->pid = pid;
	mm->flags = flags;
	mm->stop = stop;
	mm->cache = cache;
	if (!mm->cache) {
		mm->cache = elf_cache_new();
		mm->own_cache = 1;
	}
	mm->debug = xcalloc(1, sizeof(*mm->debug));
	debuginfo_init(mm->debug, pid, elf_cache_env(mm->cache) ? &elf_cache_env(mm->cache)->debug :
		       NULL, !(flags & MODULES_NO_DEBUGINFOD));
	xsnprintf(mm->root, sizeof(mm->root), "/proc/%d/root", (int)pid);
	return read_modules(mm, NULL, 0);
}

int modules_changed(const struct module_map *mm)
{
	struct proc_maps maps;
	size_t n = 0;
	int changed = 0;

	if (mm->incomplete)
		return 1;
	if (proc_maps_read(mm->pid, &maps))
		return 0;
	for (size_t i = 0; i < maps.n && !changed; i++) {
		const struct proc_map *m = &maps.maps[i];

		if (m->perms[2] != 'x')
			continue;
		changed = n >= mm->nranges || m->start != mm->ranges[n].start ||
			  m->end != mm->ranges[n].end || m->inode != mm->ranges[n].ino ||
			  m->dev != mm->ranges[n].dev || strcmp(m->path, mm->ranges[n].name);
		n++;
	}
	proc_maps_release(&maps);
	return changed || n != mm->nranges;
}

int modules_refresh(struct module_map *mm)
{
	struct fw_module *old = mm->mods;
	size_t nold = mm->n;
	int ret;

	ranges_free(mm);
	mm->mods = NULL;
	mm->n = mm->alloc = 0;
	mm->stats.refreshes++;
	ret = read_modules(mm, old, nold);
	/* What no current mapping took over is released (its file, if last). */
	for (size_t i = 0; i < nold; i++)
		if (old[i].path)
			module_free(mm, &old[i]);
	free(old);
	return ret;
}

const struct exec_range *modules_find_range(const struct module_map *mm, uint64_t pc)
{
	for (size_t i = 0; i < mm->nranges; i++)
		if (pc >= mm->ranges[i].start && pc < mm->ranges[i].end)
			return &mm->ranges[i];
	return NULL;
}

struct fw_module *modules_find(struct module_map *mm, uint64_t pc)
{
	size_t lo = 0, hi = mm->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pc < mm->mods[mid].start)
			hi = mid;
		else if (pc >= mm->mods[mid].end)
			lo = mid + 1;
		else
			return &mm->mods[mid];
	}
	return NULL;
}

enum fpa_verdict module_fp_verdict(const struct fw_module *m)
{
	return m->file ? m->file->fp : FPA_UNKNOWN;
}

Dwarf_Frame *module_cfi_frame(struct fw_module *m, uint64_t pc)
{
	return m->file ? elf_info_cfi_frame(m->file, pc - m->bias) : NULL;
}

int module_in_plt(struct fw_module *m, uint64_t pc)
{
	return m->file && elf_info_in_plt(m->file, pc - m->bias);
}

int module_problem(const struct fw_module *m, pid_t pid, char *buf, size_t size)
{
	const char *state = m->replaced ? "replaced on disk since the process started" :
			    m->deleted ? "deleted from disk since the process started" : NULL;
	char why[160];
	int err = m->file ? m->file->debug_err : m->err;

	if (m->file && !err)
		return 0;
	if (err == -EMFILE || err == -ENFILE) {
		struct strbuf sb = STRBUF_INIT;

		nofile_reached(&sb);
		xsnprintf(why, sizeof(why), "%s", strbuf_str(&sb));
		strbuf_release(&sb);
	} else
		xsnprintf(why, sizeof(why), "%s", err == -ENOEXEC ? "not a 64-bit ELF file" :
			  strerror(err ? -err : EIO));
	if (m->file) {
		xsnprintf(buf, size, "%s: its debug file %s could not be opened: %s", m->path,
			  m->file->audit.debug_path, why);
		return 1;
	}
	if (err == -EPERM || err == -EACCES) {
		struct strbuf sb = STRBUF_INIT;

		proc_map_files_refused(&sb, pid);
		xsnprintf(buf, size, "%s: %s, and the mapped file can be opened only through %s",
			  m->path, state ? state : "its path does not reach it", strbuf_str(&sb));
		strbuf_release(&sb);
	} else
		xsnprintf(buf, size, "%s: %s", m->path, why);
	return 1;
}
