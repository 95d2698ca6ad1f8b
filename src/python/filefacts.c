/* An interpreter file's CPython facts, read once per file (filefacts.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elfread.h"
#include "python/filefacts.h"
#include "util/file.h"
#include "util/util.h"

int py_path_is_libpython(const char *path)
{
	return !strncmp(path_base(path), "libpython", 9);
}

int py_path_looks_like_python(const char *path)
{
	return py_path_is_libpython(path) || !strncmp(path_base(path), "python", 6);
}

/* Where _PyRuntime is in the file: the .PyRuntime section, or the symbol. */
static int runtime_vaddr(struct elf_file *ef, uint64_t *vaddr)
{
	uint64_t size;

	if (!elf_file_section(ef, ".PyRuntime", vaddr, &size) && size)
		return 0;
	return elf_file_symbol(ef, "_PyRuntime", vaddr, NULL);
}

static void read_runtime(struct elf_file *ef, struct py_file_facts *out)
{
	int loads = !elf_file_loads(ef, &out->loads);

	out->has_runtime = !runtime_vaddr(ef, &out->runtime_vaddr) && loads;
}

/* What a Python's file says beyond its runtime (the version scan is dear on a large binary). */
static void read_python(struct elf_file *ef, const char *path, struct py_file_facts *out)
{
	out->has_code_type = !elf_file_symbol(ef, "PyCode_Type", &out->code_type, NULL);
	out->version_ok = !py_module_version(ef, path, &out->version);
	py_module_build(ef, &out->free_threaded, &out->debug);
}

void py_file_facts_read(struct elf_file *ef, const char *path, struct py_file_facts *out)
{
	memset(out, 0, sizeof(*out));
	read_runtime(ef, out);
	read_python(ef, path, out);
}

struct kept_facts {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	char *path;                 /* NULL: a free slot */
	struct py_file_facts facts;
};

/* the oldest of FACTS_MAX makes room: the agent watches a few interpreters */
#define FACTS_MAX 32
static struct kept_facts kept[FACTS_MAX];
static size_t kept_next;

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static const struct kept_facts *find_kept(const struct stat *st, const char *path)
{
	for (size_t i = 0; i < FACTS_MAX; i++) {
		const struct kept_facts *k = &kept[i];

		if (k->path && k->dev == (uint64_t)st->st_dev && k->ino == (uint64_t)st->st_ino &&
		    k->size == (uint64_t)st->st_size && k->mtime_ns == mtime_ns(st) &&
		    !strcmp(k->path, path))
			return k;
	}
	return NULL;
}

static void keep(const struct stat *st, const char *path, const struct py_file_facts *f)
{
	struct kept_facts *k = &kept[kept_next++ % FACTS_MAX];

	free(k->path);
	k->dev = (uint64_t)st->st_dev;
	k->ino = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_ns = mtime_ns(st);
	k->path = xstrdup(path);
	k->facts = *f;
}

int py_file_facts(int fd, const char *path, struct py_file_facts *out, int *python)
{
	const struct kept_facts *k;
	struct elf_file *ef;
	struct stat st;
	int have_st = !fstat(fd, &st);

	memset(out, 0, sizeof(*out));
	*python = 0;
	if (have_st && (k = find_kept(&st, path))) {
		close(fd);
		*out = k->facts;
		*python = 1;
		return 0;
	}
	ef = elf_file_open_fd(fd);     /* takes fd */
	if (!ef)
		return -errno;
	read_runtime(ef, out);
	/* the table keeps Pythons' files only: other programs would push them out */
	*python = out->has_runtime || py_path_looks_like_python(path);
	if (*python)
		read_python(ef, path, out);
	elf_file_close(ef);
	if (have_st && *python)
		keep(&st, path, out);
	return 0;
}
