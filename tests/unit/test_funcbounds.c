/*
 * Functions of a stripped library known by their unwind entries
 * (elf/funcbounds.h): each function of a library built here has, in the
 * copy stripped of every symbol, the same start and end as its symbol in
 * the original; every address in it is named by that start
 * (elf/addrinfo.h), so a function's samples group; a table made hostile
 * (garbled or cut short) yields "unknown", never a read outside the file.
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
#include <unistd.h>

#include <cmocka.h>

#include "elf/addrinfo.h"
#include "elf/funcbounds.h"

struct func {
	char name[64];
	uint64_t start, size;
};

/* The original's function symbols with a size, read with libelf. */
static size_t read_functions(const char *path, struct func *out, size_t max)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t n = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize && n < max; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			snprintf(out[n].name, sizeof(out[n].name), "%s", name ? name : "?");
			out[n].start = s.st_value;
			out[n++].size = s.st_size;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

static struct elf_info *open_file(struct elf_cache *c, const char *path)
{
	int loaded;
	struct elf_info *f = elf_cache_open_path(c, path, path, "", &loaded);

	assert_non_null(f);
	elf_info_load_symbols(f, NULL);
	return f;
}

static int is_fixture_function(const char *name)
{
	static const char *const names[] = { "small_leaf", "looping", "branchy", "fw_fixture_entry" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(name, names[i], strlen(names[i])))
			return 1;
	return 0;
}

static void test_stripped_functions_keep_their_bounds(void **state)
{
	struct func funcs[256];
	size_t n = read_functions(FIXTURE_LIB, funcs, 256), seen = 0;
	struct elf_cache *c = elf_cache_new();
	struct elf_info *f = open_file(c, FIXTURE_STRIPPED);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		uint64_t probes[3] = { funcs[i].start, funcs[i].start + funcs[i].size / 2,
				       funcs[i].start + funcs[i].size - 1 };

		if (!is_fixture_function(funcs[i].name))
			continue;
		seen++;
		for (int k = 0; k < 3; k++) {
			uint64_t start = 0, end = 0;
			struct elf_addr_info ai;
			struct elf_addr_cost cost = { 0, 0 };

			assert_int_equal(elf_function_bounds(f, probes[k], &start, &end), 0);
			if (start != funcs[i].start || end != funcs[i].start + funcs[i].size)
				print_message("%s+%d: [%#llx, %#llx) against [%#llx, +%#llx)\n",
					      funcs[i].name, k, (unsigned long long)start,
					      (unsigned long long)end,
					      (unsigned long long)funcs[i].start,
					      (unsigned long long)funcs[i].size);
			assert_int_equal(start, funcs[i].start);
			assert_int_equal(end, funcs[i].start + funcs[i].size);
			elf_info_addr(f, probes[k], &ai, &cost);
			/* the static ones have no name left: known by their start */
			if (strcmp(funcs[i].name, "fw_fixture_entry")) {
				assert_null(ai.symbol);
				assert_int_equal(ai.start, funcs[i].start);
			}
		}
	}
	assert_int_equal(seen, 4);
	elf_cache_put(c, f);
	elf_cache_free(c);
}

/* A copy of the stripped library with its section named section changed by fn. */
static char *hostile_copy(const char *section, void (*fn)(uint8_t *bytes, size_t size))
{
	static char path[] = "/tmp/fw-funcbounds-XXXXXX";
	int in = open(FIXTURE_STRIPPED, O_RDONLY), out;
	uint8_t *buf;
	off_t size = lseek(in, 0, SEEK_END);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_true(in >= 0 && size > 0);
	buf = malloc((size_t)size);
	assert_int_equal(pread(in, buf, (size_t)size, 0), size);
	elf = elf_memory((char *)buf, (size_t)size);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), section))
			break;
	}
	assert_non_null(scn);
	{
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		elf_end(elf);
		fn(buf + sh.sh_offset, sh.sh_size);
	}
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	out = mkstemp(path);
	assert_true(out >= 0);
	assert_int_equal(write(out, buf, (size_t)size), size);
	close(out);
	close(in);
	free(buf);
	return path;
}

/* Every pair and count word set to a pointer far outside the file. */
static void garble(uint8_t *hdr, size_t size)
{
	for (size_t i = 4; i + 4 <= size; i += 4)
		memcpy(hdr + i, "\x00\x00\x00\x7f", 4);
}

/* Lengths, CIE pointers, encodings and ranges in the CIEs and FDEs bent. */
static void bend_fdes(uint8_t *frame, size_t size)
{
	for (size_t i = 0; i < size; i += 7)
		frame[i] ^= 0x5a;
}

/* Every length and CIE pointer word made as large as it goes. */
static void huge_words(uint8_t *frame, size_t size)
{
	for (size_t i = 0; i + 4 <= size; i += 4)
		if (i % 12 == 0)
			memcpy(frame + i, "\xfe\xff\xff\xff", 4);
}

static void probe_everything(const char *path)
{
	struct func funcs[256];
	size_t n = read_functions(FIXTURE_LIB, funcs, 256);
	struct elf_cache *c = elf_cache_new();
	int loaded;
	struct elf_info *f = elf_cache_open_path(c, path, path, "", &loaded);

	/* a file bent this far may not open at all: that is an answer too */
	if (f) {
		for (size_t i = 0; i < n; i++)
			for (uint64_t a = funcs[i].start; a < funcs[i].start + funcs[i].size; a++) {
				uint64_t start = 0, end = 0;

				if (!elf_function_bounds(f, a, &start, &end))
					assert_true(start <= a && a < end);
			}
		elf_cache_put(c, f);
	}
	elf_cache_free(c);
	unlink(path);
}

static void test_hostile_tables_yield_unknown(void **state)
{
	(void)state;
	probe_everything(hostile_copy(".eh_frame_hdr", garble));
	probe_everything(hostile_copy(".eh_frame", bend_fdes));
	probe_everything(hostile_copy(".eh_frame", huge_words));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripped_functions_keep_their_bounds),
		cmocka_unit_test(test_hostile_tables_yield_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
