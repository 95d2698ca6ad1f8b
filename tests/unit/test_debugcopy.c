/*
 * Unit tests of src/elf/debugcopy.c on a library with debug info
 * (INLINES_LIB) and its copy with zlib-compressed debug sections, made by
 * objcopy as Debian's packages are (ZLIB_LIB): the decompressed copy holds
 * every section's bytes as the uncompressed library does and libdw reads
 * the same line tables from it; it is unlinked, and nothing is copied for
 * a file with nothing compressed, for a memory file system, or for a file
 * that lies (cut short, a size its stream does not have, another kind of
 * compression, a section table past the end, streams shared by sections,
 * a file past the bound): the file comes back as it was, whole, and no
 * descriptor is left behind. A copy counts among the live bytes until it
 * is released.
 */
#include <dirent.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/debugcopy.h"

static const char *const here[] = { COPY_DIR, NULL };

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static Elf_Scn *section_named(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static void test_copy_holds_the_uncompressed_sections(void **state)
{
	int orig = open_ro(INLINES_LIB), zfd = open_ro(ZLIB_LIB), copy;
	uint64_t copied = 0, live = debugcopy_live_bytes(), grown = 0;
	struct stat zst;
	Elf *eo, *ec, *ez;
	size_t shstrndx, compressed = 0, compared = 0;
	Elf_Scn *scn = NULL;
	struct stat st;
	GElf_Shdr sh;

	(void)state;
	elf_version(EV_CURRENT);
	/* the objcopy'd library has zlib sections to begin with */
	ez = elf_begin(zfd, ELF_C_READ, NULL);
	assert_non_null(ez);
	while ((scn = elf_nextscn(ez, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			compressed++;
	elf_end(ez);
	assert_true(compressed >= 3);
	assert_int_equal(fstat(zfd, &zst), 0);

	copy = debugcopy_uncompressed(zfd, here, &copied);
	assert_true(copy >= 0);
	assert_int_not_equal(copy, zfd);
	assert_int_equal(fcntl(zfd, F_GETFD), -1);     /* the original was closed */
	assert_int_equal(fstat(copy, &st), 0);
	assert_int_equal(st.st_nlink, 0);              /* unlinked: no name to reach it by */
	assert_int_equal(copied, (uint64_t)st.st_size);
	assert_int_equal(debugcopy_live_bytes(), live + copied);
	assert_true(fcntl(copy, F_GETFD) & FD_CLOEXEC);

	eo = elf_begin(orig, ELF_C_READ, NULL);
	ec = elf_begin(copy, ELF_C_READ, NULL);
	assert_non_null(eo);
	assert_non_null(ec);
	assert_int_equal(elf_getshdrstrndx(eo, &shstrndx), 0);
	scn = NULL;
	while ((scn = elf_nextscn(eo, scn))) {
		GElf_Shdr so, sc;
		Elf_Scn *other;
		Elf_Data *d, *dc;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &so));
		name = elf_strptr(eo, shstrndx, so.sh_name);
		assert_non_null(name);
		other = section_named(ec, name);
		assert_non_null(other);
		assert_non_null(gelf_getshdr(other, &sc));
		assert_int_equal(sc.sh_flags & SHF_COMPRESSED, 0);
		assert_int_equal(sc.sh_type, so.sh_type);
		if (sc.sh_addralign > 1 && sc.sh_type != SHT_NOBITS)
			assert_int_equal(sc.sh_offset % sc.sh_addralign, 0);
		if (sc.sh_offset >= (uint64_t)zst.st_size)   /* written after the file: decompressed */
			grown += sc.sh_size;
		assert_int_equal(sc.sh_size, so.sh_size);
		assert_int_equal(sc.sh_addr, so.sh_addr);
		if (so.sh_type == SHT_NOBITS)
			continue;
		d = elf_rawdata(scn, NULL);
		dc = elf_rawdata(other, NULL);
		assert_non_null(d);
		assert_non_null(dc);
		assert_int_equal(dc->d_size, d->d_size);
		assert_memory_equal(dc->d_buf, d->d_buf, d->d_size);
		compared++;
	}
	assert_true(compared > compressed);
	/* the file, then every decompressed section */
	assert_true(copied >= (uint64_t)zst.st_size + grown);
	assert_true(grown > 0);
	elf_end(eo);
	elf_end(ec);

	/* libdw reads the same line tables from both */
	{
		Dwarf *dwo = dwarf_begin(orig, DWARF_C_READ), *dwc = dwarf_begin(copy, DWARF_C_READ);
		Dwarf_Off off = 0, next;
		size_t hsize, lines = 0;

		assert_non_null(dwo);
		assert_non_null(dwc);
		while (!dwarf_nextcu(dwo, off, &next, &hsize, NULL, NULL, NULL)) {
			Dwarf_Die cuo, cuc;
			Dwarf_Lines *lo, *lc;
			size_t no, nc;

			assert_non_null(dwarf_offdie(dwo, off + hsize, &cuo));
			assert_non_null(dwarf_offdie(dwc, off + hsize, &cuc));
			assert_int_equal(dwarf_getsrclines(&cuo, &lo, &no), 0);
			assert_int_equal(dwarf_getsrclines(&cuc, &lc, &nc), 0);
			assert_int_equal(nc, no);
			for (size_t i = 0; i < no; i++) {
				Dwarf_Addr ao, ac;
				int lno, lnc;

				dwarf_lineaddr(dwarf_onesrcline(lo, i), &ao);
				dwarf_lineaddr(dwarf_onesrcline(lc, i), &ac);
				dwarf_lineno(dwarf_onesrcline(lo, i), &lno);
				dwarf_lineno(dwarf_onesrcline(lc, i), &lnc);
				assert_int_equal(ac, ao);
				assert_int_equal(lnc, lno);
				lines++;
			}
			off = next;
		}
		assert_true(lines > 10);
		dwarf_end(dwo);
		dwarf_end(dwc);
	}
	close(orig);
	close(copy);
	debugcopy_release(copied);
	assert_int_equal(debugcopy_live_bytes(), live);
}

static void test_nothing_compressed_is_not_copied(void **state)
{
	int fd = open_ro(INLINES_LIB);
	uint64_t copied = 1;

	(void)state;
	assert_int_equal(debugcopy_uncompressed(fd, here, &copied), fd);
	assert_int_equal(copied, 0);
	close(fd);
}

static void test_memory_file_system_is_not_used(void **state)
{
	static const char *const shm[] = { "/dev/shm", NULL };
	struct statfs sf;
	int fd = open_ro(ZLIB_LIB);

	(void)state;
	if (statfs("/dev/shm", &sf) || sf.f_type != 0x01021994)
		skip();                 /* no tmpfs here to refuse */
	assert_int_equal(debugcopy_uncompressed(fd, shm, NULL), fd);
	close(fd);
}

/* The descriptors open now. */
static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A variant of ZLIB_LIB, changed by change() (NULL: as it is), written to a file: its descriptor. */
static int variant(const char *name, void (*change)(unsigned char *, size_t *), off_t grow_to)
{
	char path[512];
	size_t size;
	unsigned char *buf = slurp(ZLIB_LIB, &size);
	FILE *f;
	int fd;

	if (change)
		change(buf, &size);
	snprintf(path, sizeof(path), "%s/%s", COPY_DIR, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, size, f), size);
	fclose(f);
	free(buf);
	if (grow_to)            /* sparse: nothing written of its holes */
		assert_int_equal(truncate(path, grow_to), 0);
	fd = open_ro(path);
	unlink(path);           /* nothing left in the build directory */
	return fd;
}

/* The Elf64_Chdr of the largest compressed section of buf. */
static Elf64_Chdr *largest_chdr(unsigned char *buf, Elf64_Shdr **shp)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff), *best = NULL;

	for (unsigned i = 0; i < eh->e_shnum; i++)
		if ((sh[i].sh_flags & SHF_COMPRESSED) && (!best || sh[i].sh_size > best->sh_size))
			best = &sh[i];
	assert_non_null(best);
	if (shp)
		*shp = best;
	return (Elf64_Chdr *)(buf + best->sh_offset);
}

static void cut_in_a_section(unsigned char *buf, size_t *size)
{
	Elf64_Shdr *sh;

	largest_chdr(buf, &sh);
	/* the table moved before the cut, so only the section's data is missing */
	*size = sh->sh_offset + sh->sh_size / 2;
	memmove(buf + *size - ((Elf64_Ehdr *)buf)->e_shnum * sizeof(Elf64_Shdr),
		buf + ((Elf64_Ehdr *)buf)->e_shoff, ((Elf64_Ehdr *)buf)->e_shnum * sizeof(Elf64_Shdr));
	((Elf64_Ehdr *)buf)->e_shoff = *size - ((Elf64_Ehdr *)buf)->e_shnum * sizeof(Elf64_Shdr);
}

static void size_too_large(unsigned char *buf, size_t *size)
{
	(void)size;
	largest_chdr(buf, NULL)->ch_size += 1;
}

static void size_too_small(unsigned char *buf, size_t *size)
{
	(void)size;
	largest_chdr(buf, NULL)->ch_size -= 1;
}

static void size_huge(unsigned char *buf, size_t *size)
{
	(void)size;
	largest_chdr(buf, NULL)->ch_size = 1ull << 40;
}

static void zstd_kind(unsigned char *buf, size_t *size)
{
	(void)size;
	largest_chdr(buf, NULL)->ch_type = 2;   /* ELFCOMPRESS_ZSTD */
}

static void stream_corrupt(unsigned char *buf, size_t *size)
{
	Elf64_Shdr *sh;

	(void)size;
	largest_chdr(buf, &sh);
	memset(buf + sh->sh_offset + sizeof(Elf64_Chdr) + 8, 0xff, 16);
}

static void table_past_end(unsigned char *buf, size_t *size)
{
	((Elf64_Ehdr *)buf)->e_shoff = *size - 8;
}

/* every compressed section named by the largest one's stream */
static void streams_shared(unsigned char *buf, size_t *size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff), *big;

	(void)size;
	largest_chdr(buf, &big);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if ((sh[i].sh_flags & SHF_COMPRESSED) && &sh[i] != big) {
			sh[i].sh_offset = big->sh_offset;
			sh[i].sh_size = big->sh_size;
		}
}

static void test_lying_files_are_not_copied(void **state)
{
	static const struct {
		const char *name;
		void (*change)(unsigned char *, size_t *);
	} cases[] = {
		{ "cut.so", cut_in_a_section }, { "larger.so", size_too_large },
		{ "smaller.so", size_too_small }, { "huge.so", size_huge },
		{ "zstd.so", zstd_kind }, { "corrupt.so", stream_corrupt },
		{ "table.so", table_past_end }, { "shared.so", streams_shared },
	};
	size_t fds = open_fds();
	uint64_t live = debugcopy_live_bytes();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) + 1; i++) {
		int last = i == sizeof(cases) / sizeof(cases[0]);
		int fd = last ? variant("past-bound.so", NULL, (off_t)DEBUGCOPY_MAX_BYTES + 4096) :
				variant(cases[i].name, cases[i].change, 0);
		uint64_t copied = 1;
		struct stat st;

		print_message("%s\n", last ? "past-bound.so" : cases[i].name);
		assert_int_equal(debugcopy_uncompressed(fd, here, &copied), fd);
		assert_int_equal(copied, 0);
		assert_int_equal(fstat(fd, &st), 0);   /* still open, untouched */
		close(fd);
	}
	assert_int_equal(open_fds(), fds);             /* no copy left open */
	assert_int_equal(debugcopy_live_bytes(), live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_holds_the_uncompressed_sections),
		cmocka_unit_test(test_nothing_compressed_is_not_copied),
		cmocka_unit_test(test_memory_file_system_is_not_used),
		cmocka_unit_test(test_lying_files_are_not_copied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
