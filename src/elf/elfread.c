/*
 * Implementation of elfread.h over libelf. Section data is taken only through
 * elf_getdata, whose bounds libelf checks against the file; symbol names come
 * through elf_strptr, which checks the string table. A mapped image is
 * guarded (target/mapguard.h): cut short under framewalk, it reads as zeros
 * past its new end.
 */
#include <ctype.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elfread.h"
#include "target/mapguard.h"
#include "target/safe_open.h"
#include "util/util.h"

void pin_private(const void *p, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = (uintptr_t)p, end = at + n;

	if (page <= 0 || end < at)
		return;
	while (at < end) {
		volatile uint8_t *b = (volatile uint8_t *)at;

		*b = *b;
		at = (at | ((uintptr_t)page - 1)) + 1;
	}
}

/* Pin [p, p + n) of the image and remember it in ef->kept; 0, or -1 when it does not fit. */
static int keep(struct elf_file *ef, const void *p, size_t n)
{
	const uint8_t *lo = p, *base = ef->image;

	if (!p || !n || lo < base || lo >= base + ef->size || n > (size_t)(base + ef->size - lo) ||
	    ef->nkept >= ELF_KEPT_MAX)
		return -1;
	pin_private(p, n);
	ef->kept[ef->nkept].lo = lo;
	ef->kept[ef->nkept++].hi = lo + n;
	return 0;
}

/*
 * Before elf_begin, which takes every section's offset and size from the
 * section header table: the table, found from the pinned ELF header (its
 * count in section 0 when e_shnum is 0). A table of the other byte order or
 * another entry size libelf copies and converts: nothing of the image to pin.
 */
static void pin_section_table(struct elf_file *ef)
{
	const uint8_t *base = ef->image;
	Elf64_Ehdr eh;
	Elf64_Shdr first;
	uint64_t n;

	memcpy(&eh, base, sizeof(eh));
	if (eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || (!eh.e_shoff && !eh.e_shnum))
		return;
	if (eh.e_shoff >= ef->size || ef->size - eh.e_shoff < sizeof(first)) {
		ef->unpinned = 1;
		return;
	}
	pin_private(base + eh.e_shoff, sizeof(first));
	memcpy(&first, base + eh.e_shoff, sizeof(first));
	n = eh.e_shnum ? eh.e_shnum : first.sh_size;
	if (n > ELF_PIN_TABLE_MAX / sizeof(Elf64_Shdr) ||
	    keep(ef, base + eh.e_shoff, (size_t)n * sizeof(Elf64_Shdr)))
		ef->unpinned = 1;
}

/*
 * After elf_begin: the section names libelf and libdw look sections up by,
 * again and again (where elf_begin put them, from the pinned table).
 */
static void pin_section_names(struct elf_file *ef)
{
	size_t shstrndx;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *names;

	if (elf_getshdrstrndx(ef->elf, &shstrndx) || !shstrndx)
		return;
	if (!(scn = elf_getscn(ef->elf, shstrndx)) || !gelf_getshdr(scn, &sh) ||
	    sh.sh_type != SHT_STRTAB || sh.sh_size > ELF_PIN_NAMES_MAX ||
	    !(names = elf_rawdata(scn, NULL)) || !names->d_buf ||
	    keep(ef, names->d_buf, names->d_size))
		ef->unpinned = 1;
}

int elf_file_map(struct elf_file *ef, int fd)
{
	struct stat st;
	int ret = 0;

	memset(ef, 0, sizeof(*ef));
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		ret = -ENOEXEC;
	else if ((uint64_t)st.st_size > ELF_MAX_SIZE)
		ret = -EFBIG;
	if (!ret) {
		ef->size = (size_t)st.st_size;
		ef->deleted = st.st_nlink == 0;
		/* Private and writable: libelf may convert data in place, never on disk. */
		ef->image = mmap(NULL, ef->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (ef->image == MAP_FAILED) {
			ef->image = NULL;
			ret = -errno;
		} else {
			map_guard(ef->image, ef->size);
		}
	}
	close(fd);
	if (ret)
		return ret;
	elf_version(EV_CURRENT);
	keep(ef, ef->image, sizeof(Elf64_Ehdr));        /* what elf_begin reads first */
	pin_section_table(ef);
	ef->elf = elf_memory(ef->image, ef->size);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || gelf_getclass(ef->elf) != ELFCLASS64)
		return -ENOEXEC;
	pin_section_names(ef);
	return 0;
}

void elf_file_unmap(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->image) {
		map_unguard(ef->image);
		munmap(ef->image, ef->size);
	}
	memset(ef, 0, sizeof(*ef));
}

struct elf_file *elf_file_open_fd(int fd)
{
	struct elf_file *ef = xcalloc(1, sizeof(*ef));
	int ret = elf_file_map(ef, fd);

	if (ret) {
		elf_file_close(ef);
		errno = -ret;
		return NULL;
	}
	return ef;
}

struct elf_file *elf_file_open(const char *path)
{
	int fd = safe_open_path(path);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return elf_file_open_fd(fd);
}

void elf_file_close(struct elf_file *ef)
{
	if (!ef)
		return;
	elf_file_unmap(ef);
	free(ef);
}

static Elf_Scn *find_section(struct elf_file *ef, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(ef->elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int elf_file_section(struct elf_file *ef, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr shdr;

	if (!find_section(ef, name, &shdr))
		return -ENOENT;
	*addr = shdr.sh_addr;
	*size = shdr.sh_size;
	return 0;
}

/* The next section of a type with fixed-size entries after *scn: its data and entry count. */
static Elf_Data *next_table(Elf *elf, Elf_Scn **scn, Elf64_Word type, GElf_Shdr *shdr,
			    size_t *count)
{
	while ((*scn = elf_nextscn(elf, *scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(*scn, shdr) || shdr->sh_type != type || !shdr->sh_entsize)
			continue;
		data = elf_getdata(*scn, NULL);
		if (!data)
			continue;
		*count = data->d_size / shdr->sh_entsize;
		return data;
	}
	return NULL;
}

static int symbol_in(struct elf_file *ef, Elf64_Word type, const char *name,
		     uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t count;

	while ((data = next_table(ef->elf, &scn, type, &shdr, &count))) {
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(ef->elf, shdr.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				if (size)
					*size = sym.st_size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int elf_file_dynamic_strings(struct elf_file *ef,
			     void (*fn)(void *ctx, int64_t tag, const char *value), void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t count;

	data = next_table(ef->elf, &scn, SHT_DYNAMIC, &shdr, &count);
	if (!data)
		return -ENOENT;
	for (size_t i = 0; i < count; i++) {
		GElf_Dyn dyn;
		const char *s;

		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME && dyn.d_tag != DT_RUNPATH &&
		    dyn.d_tag != DT_RPATH)
			continue;
		s = elf_strptr(ef->elf, shdr.sh_link, dyn.d_un.d_val);
		if (s)
			fn(ctx, dyn.d_tag, s);
	}
	return 0;
}

int elf_file_symbol(struct elf_file *ef, const char *name, uint64_t *value, uint64_t *size)
{
	if (!symbol_in(ef, SHT_SYMTAB, name, value, size))
		return 0;
	return symbol_in(ef, SHT_DYNSYM, name, value, size);
}

int elf_file_load_delta(struct elf_file *ef, uint64_t *delta)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		*delta = ph.p_vaddr - ph.p_offset;
		return 0;
	}
	return -ENOENT;
}

int elf_file_loads(struct elf_file *ef, struct elf_loads *out)
{
	size_t n;

	out->n = 0;
	if (elf_getphdrnum(ef->elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n && out->n < ELF_LOADS_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->l[out->n++] = (struct elf_load){ ph.p_vaddr, ph.p_memsz, ph.p_offset,
						      ph.p_filesz, ph.p_flags };
	}
	return out->n ? 0 : -ENOENT;
}

int elf_file_read_vaddr(struct elf_file *ef, uint64_t addr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		if (addr < shdr.sh_addr || addr - shdr.sh_addr >= shdr.sh_size)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || addr - shdr.sh_addr > data->d_size ||
		    len > data->d_size - (addr - shdr.sh_addr))
			return -ENOENT;
		memcpy(buf, (const char *)data->d_buf + (addr - shdr.sh_addr), len);
		return 0;
	}
	return -ENOENT;
}

/* Does s (of at most n bytes) match prefix + digits [. digits] [a|b|rc digits] + NUL? */
static size_t match_version(const char *s, size_t n, const char *prefix)
{
	size_t pl = strlen(prefix), i;

	if (n < pl + 2 || memcmp(s, prefix, pl))
		return 0;
	i = pl;
	if (!isdigit((unsigned char)s[i]))
		return 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i < n && s[i] == '+')
		i++;
	if (i + 1 < n && (s[i] == 'a' || s[i] == 'b'))
		i++;
	else if (i + 2 < n && s[i] == 'r' && s[i + 1] == 'c')
		i += 2;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i >= n || s[i] != '\0')
		return 0;
	return i;
}

int elf_file_find_version_string(struct elf_file *ef, const char *prefix, char *buf, size_t size)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;

	scn = find_section(ef, ".rodata", &shdr);
	if (scn) {
		Elf_Data *data = elf_getdata(scn, NULL);
		const char *d = data ? data->d_buf : NULL;
		size_t len = data ? data->d_size : 0;

		for (size_t i = 1; d && i < len; i++) {
			size_t m;

			/*
			 * The linker merges a string into the tail of a longer one
			 * ("/root/.pyenv/versions/3.8.18"), so accept any start
			 * that is not part of a longer number or word.
			 */
			if (d[i] != prefix[0] || isalnum((unsigned char)d[i - 1]) || d[i - 1] == '.')
				continue;
			m = match_version(d + i, len - i, prefix);
			if (m && m < size) {
				memcpy(buf, d + i, m);
				buf[m] = '\0';
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* libdw's reading of the note: the one the debug-file lookup (target/debuginfo.c) trusts. */
static ssize_t build_id_bits(Elf *elf, const void **bits)
{
	ssize_t len = dwelf_elf_gnu_build_id(elf, bits);

	return len > 0 ? len : -1;
}

ssize_t elf_file_build_id_bits(struct elf_file *ef, const void **bits)
{
	return build_id_bits(ef->elf, bits);
}

int elf_file_build_id(struct elf_file *ef, char *buf, size_t size, size_t max_bytes)
{
	return elfread_build_id(ef->elf, buf, size, max_bytes);
}

int elfread_build_id(Elf *elf, char *buf, size_t size, size_t max_bytes)
{
	const void *bits;
	ssize_t len = build_id_bits(elf, &bits);
	size_t n;

	if (len < 0)
		return -ENOENT;
	n = (size_t)len;
	if (max_bytes && n > max_bytes)
		n = max_bytes;
	if (!size || n > (size - 1) / 2)
		return -ENOSPC;
	for (size_t i = 0; i < n; i++)
		xsnprintf(buf + 2 * i, 3, "%02x", ((const uint8_t *)bits)[i]);
	buf[2 * n] = '\0';
	return 0;
}
