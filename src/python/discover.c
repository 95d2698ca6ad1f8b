/*
 * Implementation of discover.h. Order of trust: the target's own
 * _Py_DebugOffsets (3.13+) over Py_Version over the version string in
 * .rodata over the file name; a layout is only used for the minor version it
 * was made for.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "elf/elfread.h"
#include "elf/image.h"
#include "python/discover.h"
#include "python/filefacts.h"
#include "python/version.h"
#include "target/privilege.h"
#include "target/proc.h"
#include "util/file.h"
#include "util/util.h"

#define DEBUG_COOKIE "xdebugpy"

/* glibc: libc.so.6, or an old libc-2.NN.so */
static int is_libc(const char *path)
{
	const char *b = path_base(path);

	return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && b[5] >= '0' && b[5] <= '9');
}

static void set_version(struct py_target *t, int major, int minor, int micro)
{
	t->major = major;
	t->minor = minor;
	t->micro = micro;
	if (micro >= 0)
		xsnprintf(t->version, sizeof(t->version), "%d.%d.%d", major, minor, micro);
	else
		xsnprintf(t->version, sizeof(t->version), "%d.%d", major, minor);
}

/* Open a mapped module through the mapping itself (deleted and replaced files too). */
static int open_module(pid_t pid, const struct proc_map *map, struct elf_file **ef)
{
	int fd = proc_map_open(pid, map, NULL);

	if (fd < 0)
		return fd;
	*ef = elf_file_open_fd(fd);
	if (!*ef)
		return -errno;
	return 0;
}

uint64_t py_glibc_sizeof_pthread(pid_t pid, const struct proc_maps *maps,
				 const struct proc_map *exe_map)
{
	/* the C library; else the executable (a static build) */
	for (size_t k = 0; k <= maps->n; k++) {
		const struct proc_map *m = k < maps->n ? &maps->maps[k] : exe_map;
		struct elf_file *ef;
		uint64_t value, size;
		uint32_t n = 0;
		int ok;

		if (!m || (k < maps->n && (m->offset != 0 || !is_libc(m->path))) ||
		    open_module(pid, m, &ef))
			continue;
		ok = !elf_file_symbol(ef, ARCH_GLIBC_SIZEOF_PTHREAD, &value, &size) &&
		     size >= sizeof(n) && !elf_file_read_vaddr(ef, value, &n, sizeof(n));
		elf_file_close(ef);
		/* a thread descriptor is a few hundred bytes to a few KiB */
		if (ok && n >= 256 && n <= 16384)
			return n;
	}
	return 0;
}

/*
 * Why a module that may hold the runtime could not be opened, with the fix:
 * the one line a user sees instead of a wrong "not a Python process".
 */
static void explain_unopened(pid_t pid, const struct proc_map *map, int err, struct strbuf *why)
{
	int other = 0, on_disk = proc_map_on_disk(pid, map, &other);
	const char *state = on_disk == 1 ? NULL : other ? "was replaced on disk since the process "
			    "started" : map->deleted || on_disk == 0 ? "was deleted from disk since the "
			    "process started" : NULL;

	strbuf_addf(why, "cannot tell whether process %d is a Python process: cannot open %s", (int)pid,
		    map->path);
	switch (err) {
	case -EPERM:
	case -EACCES:
		strbuf_addf(why, ", which %s; the file it mapped can be opened only through ",
			    state ? state : "is not reachable by its path");
		proc_map_files_refused(why, pid);
		break;
	case -EMFILE:
	case -ENFILE:
		strbuf_addstr(why, ": ");
		nofile_reached(why);
		break;
	default:
		strbuf_addf(why, "%s%s: %s", state ? ", which " : "", state ? state : "",
			    err == -ENOEXEC ? "not a 64-bit ELF file" : strerror(-err));
		break;
	}
}

static int read_debug_offsets(struct target_mem *mem, struct py_target *t, struct strbuf *why)
{
	const struct py_debug_offsets_layout *layout;
	uint8_t head[24], *block;
	uint64_t version;
	int minor, ret;

	ret = mem_read(mem, t->runtime_addr, head, sizeof(head));
	if (ret) {
		strbuf_addf(why, "cannot read _PyRuntime at 0x%" PRIx64, t->runtime_addr);
		return ret == -EFAULT ? -EPROTO : ret;
	}
	if (memcmp(head, DEBUG_COOKIE, 8)) {
		strbuf_addf(why, "Python %s: _PyRuntime does not start with the debug offsets cookie",
			    t->version);
		return -EPROTO;
	}
	memcpy(&version, head + 8, sizeof(version));
	minor = (int)((version >> 16) & 0xff);
	if ((version >> 24) != 3 || minor != t->minor) {
		/* The block is the authority; the file name may lie. */
		if ((version >> 24) != 3) {
			strbuf_addf(why, "_Py_DebugOffsets carries version 0x%" PRIx64, version);
			return -EPROTO;
		}
	}
	set_version(t, 3, minor, (int)((version >> 8) & 0xff));
	layout = py_debug_layout(minor, 0);
	if (!layout) {
		int lo, hi;

		py_debug_offsets_minors(&lo, &hi);
		strbuf_addf(why, "Python %s is not supported (framewalk knows the debug-offsets layout "
			    "of 3.%d to 3.%d)", t->version, lo, hi);
		return -ENOTSUP;
	}
	block = xmalloc((size_t)layout->block_size);
	ret = mem_read(mem, t->runtime_addr, block, (size_t)layout->block_size);
	if (!ret && !(layout = py_debug_layout_of_block(minor, block, (size_t)layout->block_size))) {
		free(block);
		strbuf_addf(why, "Python %st (free-threaded) is not supported", t->version);
		return -ENOTSUP;
	}
	if (!ret)
		ret = py_offsets_from_debug(layout, block, (size_t)layout->block_size, &t->offsets);
	/* as Python names its ABI: 3.14.2t */
	if (!ret && t->offsets.free_threaded)
		xsnprintf(t->version + strlen(t->version), sizeof(t->version) - strlen(t->version),
			  "t");
	free(block);
	if (ret) {
		strbuf_addf(why, "Python %s: its _Py_DebugOffsets block is unreadable or inconsistent",
			    t->version);
		return -EPROTO;
	}
	return 0;
}

static int unsupported(const struct py_target *t, struct strbuf *why)
{
	py_unsupported_why(why, t->version);
	return -ENOTSUP;
}

static int use_builtin_offsets(struct py_target *t, struct strbuf *why)
{
	const struct py_offsets *off = py_offsets_builtin(t->minor);

	if (t->major != 3 || !off)
		return unsupported(t, why);
	t->offsets = *off;
	return 0;
}

/* The facts of the file a mapping maps (python/filefacts.h). */
static int module_facts(pid_t pid, const struct proc_map *map, struct py_file_facts *out)
{
	int fd = proc_map_open(pid, map, NULL), python;

	if (fd < 0)
		return fd;
	return py_file_facts(fd, map->path, out, &python);
}

/* The file's version into t (major 0: it gave none). */
static void module_version(const struct py_file_facts *f, struct py_target *t)
{
	if (f->version_ok)
		set_version(t, f->version.major, f->version.minor, f->version.micro);
	else
		t->major = 0;
}

/*
 * Try one mapped module (map: a mapping of its file) as the holder of
 * _PyRuntime, at the place the loader put it (elf/image.h). 1 found, 0
 * not (nor loaded: a file mapped only as data), 2 a Python without a
 * _PyRuntime (too old to read), 3 the file could not be opened (*open_err
 * says why).
 */
static int try_module(struct py_target *t, const struct proc_maps *maps,
		      const struct proc_map *map, int *open_err)
{
	const char *path = map->path;
	struct py_file_facts f;
	struct elf_image img;
	int ret;

	ret = module_facts(t->pid, map, &f);
	if (ret) {
		*open_err = ret;
		return 3;
	}
	/* a file mapped only as data is no Python of the process, old or new */
	if (elf_image_place(maps, NULL, map->dev, map->inode, &f.loads, 0, &img))
		return 0;
	if (!f.has_runtime) {
		/* A python without _PyRuntime is too old (<= 3.6) or not CPython. */
		if (!py_path_looks_like_python(path) || py_version_from_name(path, &t->major, &t->minor))
			return 0;
		module_version(&f, t);
		return 2;
	}
	module_version(&f, t);
	t->module_facts = f;
	t->module_bias = img.bias;
	t->runtime_addr = f.runtime_vaddr + t->module_bias;
	if (f.has_code_type)
		t->code_type_addr = f.code_type + t->module_bias;
	t->shared = py_path_is_libpython(path);
	t->module_dev = map->dev;
	t->module_ino = map->inode;
	xsnprintf(t->module, sizeof(t->module), "%s", path);
	return 1;
}

/* Is m the first mapping of its file in maps? */
static int first_of_file(const struct proc_maps *maps, const struct proc_map *m)
{
	for (const struct proc_map *x = maps->maps; x < m; x++)
		if (x->inode == m->inode && x->dev == m->dev && x->path[0] == '/')
			return 0;
	return 1;
}

/*
 * A mapping of the executable: of the file /proc/PID/exe is (its path may
 * be deleted, or name another file now), by device and inode, else by inode
 * alone (an overlay may show another device), else by its path.
 */
static const struct proc_map *exe_mapping(pid_t pid, const struct proc_maps *maps,
					  const char *exe)
{
	char path[64];
	struct stat st;

	xsnprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st)) {
		for (size_t i = 0; i < maps->n; i++)
			if (!strcmp(maps->maps[i].path, exe))
				return &maps->maps[i];
		return NULL;
	}
	for (int by_inode = 0; by_inode < 2; by_inode++)
		for (size_t i = 0; i < maps->n; i++) {
			const struct proc_map *m = &maps->maps[i];

			if (m->path[0] == '/' && m->inode == (uint64_t)st.st_ino &&
			    (by_inode || m->dev == (uint64_t)st.st_dev))
				return m;
		}
	return NULL;
}

/* Does maps hold code of m's file (the loader's, not a copy read as data)? */
static int file_has_code(const struct proc_maps *maps, const struct proc_map *m)
{
	for (size_t i = 0; i < maps->n; i++)
		if (maps->maps[i].perms[2] == 'x' && maps->maps[i].inode == m->inode &&
		    maps->maps[i].dev == m->dev)
			return 1;
	return 0;
}

int py_discover(pid_t pid, struct target_mem *mem, struct py_target *t, struct strbuf *why)
{
	const struct proc_map *exe_map, *unopened = NULL;
	struct proc_maps maps;
	int ret, found = 0, too_old, open_err = 0, debug_lo, debug_hi;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	ret = proc_exists(pid);
	if (ret) {
		strbuf_addf(why, "no such process: %d", (int)pid);
		return -ESRCH;
	}
	/* before any of its files is parsed: an elevated framewalk lends nothing */
	ret = privilege_may_profile(pid, why);
	if (ret == -ESRCH)
		strbuf_addf(why, "no such process: %d", (int)pid);
	if (ret)
		return ret;
	ret = proc_exe(pid, t->exe, sizeof(t->exe));
	if (ret == -EACCES || ret == -EPERM) {
		strbuf_addf(why, "not allowed to inspect process %d", (int)pid);
		return -EPERM;
	}
	if (ret) {
		strbuf_addf(why, "no such process: %d", (int)pid);
		return -ESRCH;
	}
	ret = proc_maps_read(pid, &maps);
	if (ret) {
		if (ret == -EACCES || ret == -EPERM) {
			strbuf_addf(why, "not allowed to read the memory map of process %d", (int)pid);
			return -EPERM;
		}
		strbuf_addf(why, "no such process: %d", (int)pid);
		return -ESRCH;
	}
	/* The executable first (static builds), then any libpython. */
	exe_map = exe_mapping(pid, &maps, t->exe);
	if (exe_map)
		found = try_module(t, &maps, exe_map, &open_err);
	if (found == 3) {
		unopened = exe_map;
		found = 0;
	}
	too_old = found == 2;
	for (size_t i = 0; (found == 0 || found == 2) && i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];
		int err = 0;

		/* each libpython file once */
		if (!py_path_is_libpython(m->path) || !first_of_file(&maps, m) ||
		    (exe_map && m->inode == exe_map->inode && m->dev == exe_map->dev))
			continue;
		found = try_module(t, &maps, m, &err);
		too_old |= found == 2;
		if (found == 3 && !file_has_code(&maps, m)) {
			found = 0;      /* unreadable, and only ever mapped as data: not ours to tell */
		} else if (found == 3) {
			/* A libpython is what a shared build runs on: its failure is the one to tell. */
			if (!unopened || !py_path_is_libpython(unopened->path)) {
				unopened = m;
				open_err = err;
			}
			found = 0;
		}
	}
	/*
	 * A module that could not be opened outranks "too old": a shared build's
	 * executable has no _PyRuntime of its own, its libpython does.
	 */
	if (found != 1 && unopened)
		explain_unopened(pid, unopened, open_err, why);
	if (found == 1 && arch_pthread_below_tp)
		t->pthread_below_tp = py_glibc_sizeof_pthread(pid, &maps, exe_map);
	proc_maps_release(&maps);
	if (found != 1 && too_old && !unopened)
		return unsupported(t, why);
	if (found != 1 && why->len) {
		/* Not a question of Python: a file of the process could not be opened. */
		return open_err == -EPERM || open_err == -EACCES ? -EACCES :
		       open_err == -EMFILE || open_err == -ENFILE ? -EMFILE : -EIO;
	}
	if (!found) {
		strbuf_addf(why, "process %d (%s) is not a Python process: no CPython runtime "
			    "(_PyRuntime) in its executable or a libpython", (int)pid, t->exe);
		return -ENOEXEC;
	}
	/* From the first version with _Py_DebugOffsets on, the target describes itself. */
	py_debug_offsets_minors(&debug_lo, &debug_hi);
	if (t->major == 3 && t->minor >= debug_lo)
		return read_debug_offsets(mem, t, why);
	return use_builtin_offsets(t, why);
}

int py_discover_quiet(pid_t pid, struct py_target *out)
{
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	int ret;

	mem_init_pid(&mem, pid);
	ret = py_discover(pid, &mem, out, &why);
	mem_release(&mem);
	strbuf_release(&why);
	return ret;
}

int py_find_section(pid_t pid, const char *name, uint64_t *addr, uint64_t *size)
{
	struct proc_maps maps;
	int ret = proc_maps_read(pid, &maps), found = -ENOENT;

	if (ret)
		return ret;
	for (size_t i = 0; found && i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];
		const char *base = path_base(m->path);
		struct elf_file *ef;
		struct elf_loads loads;
		struct elf_image img;
		uint64_t vaddr, sz;

		if (m->path[0] != '/' ||
		    (!py_path_looks_like_python(m->path) && strncmp(base, "_asyncio", 8)))
			continue;
		/* Each file once, where the loader put it (not a copy mapped as data). */
		if (!first_of_file(&maps, m) || open_module(pid, m, &ef))
			continue;
		if (!elf_file_section(ef, name, &vaddr, &sz) && sz && !elf_file_loads(ef, &loads) &&
		    !elf_image_place(&maps, NULL, m->dev, m->inode, &loads, 0, &img)) {
			*addr = vaddr + img.bias;
			*size = sz;
			found = 0;
		}
		elf_file_close(ef);
	}
	proc_maps_release(&maps);
	return found;
}
