/*
 * The check before libdw runs a file's CFI (elf/cfiguard.h): a library
 * built here with benign CFI passes, one naming a register libdw would grow
 * its frame to, one nesting remember_state past the bound and one whose last
 * instruction is cut by its FDE's end are refused (fixtures/cfi.S); the
 * checked tables' pages, and the ELF header, section headers and section
 * names (pinned when the file is mapped), are the process's own afterwards,
 * so the file rewritten under the mapping does not change what libelf and
 * libdw read (an unchecked page of the same mapping does change: the
 * control); section names past ELF_PIN_NAMES_MAX are not pinned, and the
 * file says so. A mapped file cut short on disk reads as zeros past its new
 * end (a SIGBUS before), counted; a SIGBUS elsewhere still ends the process.
 */
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/cfiguard.h"
#include "elf/elfread.h"
#include "target/mapguard.h"

static void lib_path(char *out, size_t n, int kind)
{
	snprintf(out, n, "%s/libfwcfi%d.so", CFI_LIB_DIR, kind);
}

static int guard_of(const char *path, struct elf_span *span)
{
	struct elf_file ef;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	assert_true(fd >= 0);
	assert_int_equal(elf_file_map(&ef, fd), 0);
	span->lo = span->hi = NULL;
	r = cfi_guard_eh_frame(ef.elf, span);
	elf_file_unmap(&ef);
	return r;
}

static void test_benign_passes_hostile_refused(void **state)
{
	static const int want[] = { 0, -1, -1, -1 };
	struct elf_span span = { NULL, NULL };
	char path[512];

	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		lib_path(path, sizeof(path), kind);
		assert_int_equal(guard_of(path, &span), want[kind]);
	}
}

/* A section's file offset and size. */
static void section_of(Elf *elf, const char *want, off_t *off, size_t *size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want)) {
			*off = (off_t)sh.sh_offset;
			*size = sh.sh_size;
			return;
		}
	}
	fail_msg("no section %s", want);
}

static void rewrite(int fd, off_t off, size_t n)
{
	uint8_t junk[256];

	memset(junk, 0xaa, sizeof(junk));
	assert_true(n <= sizeof(junk));
	assert_int_equal(pwrite(fd, junk, n, off), (ssize_t)n);
}

/* A copy of the benign library at tmp (a mkstemp template): its descriptor, open for writing. */
static int copy_of_benign(char *tmp)
{
	char src[512];
	uint8_t buf[65536];
	int in, out;
	ssize_t got;

	lib_path(src, sizeof(src), 0);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = mkstemp(tmp);
	assert_true(in >= 0 && out >= 0);
	while ((got = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)got), got);
	close(in);
	return out;
}

static void test_checked_tables_stay_as_checked(void **state)
{
	char tmp[] = "/tmp/fw-cfiguard-XXXXXX";
	struct elf_span span = { NULL, NULL };
	struct elf_file ef;
	off_t frame_off, text_off, names_off;
	size_t frame_size, text_size, names_size, n = 0;
	uint8_t before[64], ident[16], names[16];
	int out, fd;

	(void)state;
	out = copy_of_benign(tmp);
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elf_file_map(&ef, fd), 0);
	section_of(ef.elf, ".eh_frame", &frame_off, &frame_size);
	section_of(ef.elf, ".text", &text_off, &text_size);
	section_of(ef.elf, ".shstrtab", &names_off, &names_size);
	assert_true(names_size >= sizeof(names));
	assert_true(frame_size >= 16 && text_size >= 16);
	n = sizeof(before) < frame_size ? sizeof(before) : frame_size;
	memcpy(before, (uint8_t *)ef.image + frame_off, n);

	assert_int_equal(cfi_guard_eh_frame(ef.elf, &span), 0);
	assert_true((const uint8_t *)span.lo <= (uint8_t *)ef.image + frame_off);
	assert_true((const uint8_t *)span.hi >= (uint8_t *)ef.image + frame_off + frame_size);

	/* the target's owner rewrites the file under the mapping */
	memcpy(ident, ef.image, sizeof(ident));
	memcpy(names, (uint8_t *)ef.image + names_off, sizeof(names));
	rewrite(out, 0, sizeof(ident));
	rewrite(out, names_off, sizeof(names));
	rewrite(out, frame_off, n);
	rewrite(out, text_off + (off_t)(text_size / 2), 16);
	/* the header, section table and names (pinned when mapped), the tables (when checked) */
	assert_int_equal(ef.nkept, 3);
	assert_int_equal(ef.unpinned, 0);
	assert_memory_equal(ef.image, ident, sizeof(ident));
	assert_memory_equal((uint8_t *)ef.image + names_off, names, sizeof(names));
	assert_memory_equal((uint8_t *)ef.image + frame_off, before, n);
	/* the control: a page nothing pinned (the middle of f's 16 KiB) follows the file */
	assert_int_equal(((uint8_t *)ef.image)[text_off + (off_t)(text_size / 2)], 0xaa);

	elf_file_unmap(&ef);
	close(out);
	unlink(tmp);
}

/*
 * The section names moved to the file's end and grown past
 * ELF_PIN_NAMES_MAX: not pinned, and the file says so (its CFI then unused).
 */
static void test_names_past_the_bound_not_pinned(void **state)
{
	char src[512], tmp[] = "/tmp/fw-cfiguard-names-XXXXXX";
	size_t size, grown = ELF_PIN_NAMES_MAX + 4096;
	struct elf_file ef;
	Elf64_Ehdr eh;
	Elf64_Shdr names;
	uint8_t *bytes;
	FILE *in;
	int out, fd;

	(void)state;
	lib_path(src, sizeof(src), 0);
	in = fopen(src, "rb");
	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	size = (size_t)ftell(in);
	rewind(in);
	bytes = calloc(1, size + grown);
	assert_non_null(bytes);
	assert_int_equal(fread(bytes, 1, size, in), size);
	fclose(in);
	memcpy(&eh, bytes, sizeof(eh));
	memcpy(&names, bytes + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(names), sizeof(names));
	memcpy(bytes + size, bytes + names.sh_offset, names.sh_size);
	names.sh_offset = size;
	names.sh_size = grown;
	memcpy(bytes + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(names), &names, sizeof(names));
	out = mkstemp(tmp);
	assert_true(out >= 0);
	assert_int_equal(write(out, bytes, size + grown), (ssize_t)(size + grown));
	close(out);
	free(bytes);

	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elf_file_map(&ef, fd), 0);
	assert_int_equal(ef.unpinned, 1);
	assert_int_equal(ef.nkept, 2);          /* the header, the section table */
	elf_file_unmap(&ef);
	unlink(tmp);
}

/*
 * The target's owner cuts the file short while it is mapped: a page past
 * the new end (the middle of f's 16 KiB, not pinned) reads as zeros and is
 * counted, and a symbol lookup over the lost tables ends, without a
 * SIGBUS; the ELF header, before the cut, reads as it was (a pinned page
 * past the cut would read as zeros too: the kernel drops private copies
 * past a file's end).
 */
static void test_cut_short_file_reads_zeros(void **state)
{
	char tmp[] = "/tmp/fw-cfiguard-cut-XXXXXX";
	struct elf_file ef;
	off_t text_off, names_off, cut;
	size_t text_size, names_size;
	uint8_t ident[16];
	uint64_t value = 0, size = 0;
	unsigned long before;
	long page = sysconf(_SC_PAGESIZE);
	int out, fd;

	(void)state;
	out = copy_of_benign(tmp);
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	unlink(tmp);                    /* nothing left behind, whatever fails */
	assert_true(fd >= 0);
	assert_int_equal(elf_file_map(&ef, fd), 0);
	section_of(ef.elf, ".text", &text_off, &text_size);
	section_of(ef.elf, ".shstrtab", &names_off, &names_size);
	memcpy(ident, ef.image, sizeof(ident));
	cut = (text_off + (off_t)(text_size / 2)) & ~((off_t)page - 1);
	assert_true(cut >= page);
	assert_int_equal(ftruncate(out, cut), 0);

	before = map_guard_cut_pages();
	assert_int_equal(((volatile uint8_t *)ef.image)[text_off + (off_t)(text_size / 2)], 0);
	assert_int_equal(map_guard_cut_pages(), before + 1);
	/* the symbol table and its names lie past the cut: not found, or zeros, never a fault */
	(void)elf_file_symbol(&ef, "f", &value, &size);
	assert_true(map_guard_cut_pages() > before + 1);
	assert_memory_equal(ef.image, ident, sizeof(ident));
	elf_file_unmap(&ef);
	close(out);
}

/*
 * A mapping made elsewhere (as libdwfl maps a debug file) guarded with
 * map_guard reads as zeros past the cut; unguarded, or never guarded, a
 * SIGBUS there still ends the process (in a child: it says "G" after the
 * guarded read, then dies by SIGBUS).
 */
static void test_other_sigbus_still_ends_the_process(void **state)
{
	char tmp[] = "/tmp/fw-cfiguard-other-XXXXXX", said = 0;
	int status = 0, pipefd[2];
	pid_t child;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct elf_file ef;
		int out, fd;
		long page = sysconf(_SC_PAGESIZE);
		volatile uint8_t *other;

		signal(SIGBUS, SIG_DFL);        /* not cmocka's: the default before the guard */
		out = copy_of_benign(tmp);
		fd = open(tmp, O_RDONLY | O_CLOEXEC);
		unlink(tmp);
		if (fd < 0 || elf_file_map(&ef, fd))
			_exit(2);
		other = mmap(NULL, (size_t)page * 3, PROT_READ, MAP_SHARED, out, 0);
		if (other == MAP_FAILED || ftruncate(out, page))
			_exit(3);
		map_guard((const void *)other, (size_t)page * 3);
		if (other[page] != 0)           /* guarded: zeros */
			_exit(4);
		map_unguard((const void *)other);
		if (write(pipefd[1], "G", 1) != 1)
			_exit(5);
		(void)other[2 * page];          /* past the end of a mapping no longer guarded */
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(read(pipefd[0], &said, 1), 1);
	close(pipefd[0]);
	assert_int_equal(said, 'G');
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGBUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_benign_passes_hostile_refused),
		cmocka_unit_test(test_checked_tables_stay_as_checked),
		cmocka_unit_test(test_names_past_the_bound_not_pinned),
		cmocka_unit_test(test_cut_short_file_reads_zeros),
		cmocka_unit_test(test_other_sigbus_still_ends_the_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
