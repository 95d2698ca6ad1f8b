/*
 * Where the loader put a file (elf/image.h's elf_image_place, from the
 * file's segments; target/proc.h's proc_maps_image_base and _end, from the
 * maps alone), from made-up /proc/PID/maps lines: the image, not a mapping
 * of the same file a process made again as data (framewalk's own agent
 * maps its targets' libc and libpython so), for the layouts loaders make:
 * glibc's, lld's tiny files whose segments share a page, a hole the kernel
 * left unmapped with another file in it, code remapped to anonymous
 * memory, a file loaded twice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <elf.h>
#include <errno.h>

#include "elf/image.h"
#include "target/proc.h"

static void parse(struct proc_maps *maps, const char *const *lines, size_t n)
{
	maps->maps = calloc(n, sizeof(*maps->maps));
	assert_non_null(maps->maps);
	maps->n = n;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(proc_maps_parse_line(lines[i], &maps->maps[i]), 0);
}

/* libc mapped whole as data below its image, and once more above it */
static const char *const AGENT[] = {
	"7ff3fde29000-7ff3fe000000 rw-p 00000000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3fe000000-7ff3fe329000 rw-p 00000000 fe:00 403329 /var/tmp/#403329 (deleted)",
	"7ff3ff14c000-7ff3ff172000 r--p 00000000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff172000-7ff3ff2c8000 r-xp 00026000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff2c8000-7ff3ff31b000 r--p 0017c000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff31b000-7ff3ff31f000 r--p 001cf000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff31f000-7ff3ff321000 rw-p 001d3000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff321000-7ff3ff32e000 rw-p 00000000 00:00 0 ",
	"7ff3ff32e000-7ff3ff330000 r--p 00000000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
	"7ff3ff330000-7ff3ff340000 r--p 00000000 fe:00 900001 /usr/lib/x86_64-linux-gnu/libz.so.1",
};

static void maps_image_beside_the_code(void **state)
{
	struct proc_maps maps;
	const struct proc_map *base;

	(void)state;
	parse(&maps, AGENT, sizeof(AGENT) / sizeof(*AGENT));
	base = proc_maps_image_base(&maps, &maps.maps[3]);
	assert_ptr_equal(base, &maps.maps[2]);
	/* through its .bss, up to the file mapped again above it */
	assert_int_equal(proc_maps_image_end(&maps, base), 0x7ff3ff321000);
	/* a mapping that is not executable has no image here */
	assert_null(proc_maps_image_base(&maps, &maps.maps[0]));
	proc_maps_release(&maps);
}

/* a library only mapped as data, and another's holes kept mapped by the loader */
static const char *const DATA_AND_HOLES[] = {
	"7f0000000000-7f0000100000 r--p 00000000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7f1000000000-7f1000001000 r--p 00000000 08:01 88 /opt/lib/libhole.so",
	"7f1000001000-7f1000200000 ---p 00001000 08:01 88 /opt/lib/libhole.so",
	"7f1000200000-7f1000201000 r-xp 00200000 08:01 88 /opt/lib/libhole.so",
	"7f1000201000-7f1000400000 ---p 00000000 00:00 0 ",
	"7f1000400000-7f1000401000 rw-p 00400000 08:01 88 /opt/lib/libhole.so",
	"7f1000401000-7f1000402000 rw-p 00000000 00:00 0 ",
	"7f1000402000-7f1000403000 r-xp 00000000 08:01 99 /opt/lib/libold.so",
};

static void maps_holes(void **state)
{
	struct proc_maps maps;
	const struct proc_map *base;

	(void)state;
	parse(&maps, DATA_AND_HOLES, sizeof(DATA_AND_HOLES) / sizeof(*DATA_AND_HOLES));
	base = proc_maps_image_base(&maps, &maps.maps[3]);
	assert_ptr_equal(base, &maps.maps[1]);
	/* an anonymous hole between its segments does not end the image; another file does */
	assert_int_equal(proc_maps_image_end(&maps, base), 0x7f1000401000);
	/* code at offset 0 is its own base */
	assert_ptr_equal(proc_maps_image_base(&maps, &maps.maps[7]), &maps.maps[7]);
	assert_int_equal(proc_maps_image_end(&maps, &maps.maps[7]), 0x7f1000403000);
	proc_maps_release(&maps);
}

#define R PF_R
#define RX (PF_R | PF_X)
#define RW (PF_R | PF_W)

static struct elf_loads loads_of(const struct elf_load *l, size_t n)
{
	struct elf_loads out = { .n = n };

	memcpy(out.l, l, n * sizeof(*l));
	return out;
}

/* glibc's libc.so.6 (2.36, x86-64): vaddr, memsz, offset, filesz, flags */
static const struct elf_load LIBC[] = {
	{ 0x0, 0x26000, 0x0, 0x26000, R },
	{ 0x26000, 0x156000, 0x26000, 0x156000, RX },
	{ 0x17c000, 0x53000, 0x17c000, 0x53000, R },
	{ 0x1cf8d0, 0x12000, 0x1cf8d0, 0x5000, RW },
};

static void glibc_layout_and_data_copies(void **state)
{
	struct elf_loads l = loads_of(LIBC, 4);
	struct proc_maps maps;
	struct elf_image img;

	(void)state;
	parse(&maps, AGENT, sizeof(AGENT) / sizeof(*AGENT));
	for (int anchored = 0; anchored < 2; anchored++) {
		assert_int_equal(elf_image_place(&maps, anchored ? &maps.maps[3] : NULL,
						 maps.maps[3].dev, 332835, &l, 4096, &img), 0);
		assert_int_equal(img.bias, 0x7ff3ff14c000);
		assert_int_equal(img.start, 0x7ff3ff172000);
		assert_int_equal(img.end, 0x7ff3ff2c8000);
		assert_int_equal(img.lowest, 0x7ff3ff14c000);
		/* the four segments where the loader put them; neither copy */
		assert_int_equal(img.explained, 4);
	}
	proc_maps_release(&maps);
}

/* lld, -z noseparate-code, a file under a page: every segment at offset 0 */
static const char *const TINY[] = {
	"7f0000000000-7f0000001000 r--p 00000000 08:01 55 /opt/tiny.so",
	"7f36f8730000-7f36f8731000 r--p 00000000 08:01 55 /opt/tiny.so",
	"7f36f8731000-7f36f8732000 r-xp 00000000 08:01 55 /opt/tiny.so",
	"7f36f8732000-7f36f8733000 r--p 00000000 08:01 55 /opt/tiny.so",
	"7f36f8733000-7f36f8734000 rw-p 00000000 08:01 55 /opt/tiny.so",
};
static const struct elf_load TINY_LOADS[] = {
	{ 0x0, 0x5a0, 0x0, 0x5a0, R },
	{ 0x15a0, 0x100, 0x5a0, 0x100, RX },
	{ 0x26a0, 0x50, 0x6a0, 0x50, RW },
	{ 0x36f0, 0x20, 0x6f0, 0x10, RW },
};

static void lld_tiny_file(void **state)
{
	struct elf_loads l = loads_of(TINY_LOADS, 4);
	struct proc_maps maps;
	struct elf_image img;

	(void)state;
	parse(&maps, TINY, sizeof(TINY) / sizeof(*TINY));
	assert_int_equal(elf_image_place(&maps, &maps.maps[2], maps.maps[2].dev, 55, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0x7f36f8730000);     /* not the code's own page */
	assert_int_equal(img.start, 0x7f36f8731000);
	assert_int_equal(img.end, 0x7f36f8732000);
	assert_int_equal(img.explained, 4);
	assert_int_equal(elf_image_place(&maps, NULL, maps.maps[2].dev, 55, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0x7f36f8730000);
	proc_maps_release(&maps);
}

/* the kernel unmaps the gap between an interpreter's segments: a file may land in it */
static const char *const HOLE[] = {
	"ffff9a5f0000-ffff9a5f1000 r--p 00000000 08:01 66 /lib/ld-musl-aarch64.so.1",
	"ffff9a5f1000-ffff9a5f2000 r--p 00000000 08:01 67 /usr/lib/locale/C.utf8/LC_NUMERIC",
	"ffff9a600000-ffff9a680000 r-xp 00010000 08:01 66 /lib/ld-musl-aarch64.so.1",
	"ffff9a690000-ffff9a692000 rw-p 00090000 08:01 66 /lib/ld-musl-aarch64.so.1",
};
static const struct elf_load HOLE_LOADS[] = {
	{ 0x0, 0x800, 0x0, 0x800, R },
	{ 0x10000, 0x80000, 0x10000, 0x80000, RX },
	{ 0xa0000, 0x2000, 0x90000, 0x1000, RW },
};

static void another_file_in_a_hole(void **state)
{
	struct elf_loads l = loads_of(HOLE_LOADS, 3);
	struct proc_maps maps;
	struct elf_image img;

	(void)state;
	parse(&maps, HOLE, sizeof(HOLE) / sizeof(*HOLE));
	assert_int_equal(elf_image_place(&maps, &maps.maps[2], maps.maps[2].dev, 66, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0xffff9a5f0000);
	assert_int_equal(img.start, 0xffff9a600000);
	assert_int_equal(img.end, 0xffff9a680000);
	assert_int_equal(img.explained, 3);
	proc_maps_release(&maps);
}

/* huge-page text: the code copied to anonymous memory and moved over the file's mapping */
static const char *const REMAPPED[] = {
	"7fad00000000-7fad00400000 rw-p 00000000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7fad04800000-7fad04906000 r--p 00000000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7fad04906000-7fad04b79000 r-xp 00000000 00:00 0 ",
	"7fad04b79000-7fad04bef000 r--p 00379000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7fad04bf0000-7fad04bf3000 r--p 003ef000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7fad04bf3000-7fad04c2b000 rw-p 003f2000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
};
static const struct elf_load PY_LOADS[] = {
	{ 0x0, 0x106000, 0x0, 0x106000, R },
	{ 0x106000, 0x273000, 0x106000, 0x273000, RX },
	{ 0x379000, 0x76000, 0x379000, 0x76000, R },
	{ 0x3f0d40, 0x90000, 0x3efd40, 0x3c000, RW },
};

static void code_remapped_to_anonymous(void **state)
{
	struct elf_loads l = loads_of(PY_LOADS, 4);
	struct proc_maps maps;
	struct elf_image img;

	(void)state;
	parse(&maps, REMAPPED, sizeof(REMAPPED) / sizeof(*REMAPPED));
	assert_int_equal(elf_image_place(&maps, NULL, maps.maps[1].dev, 77, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0x7fad04800000);
	assert_int_equal(img.explained, 3);
	assert_int_equal(img.start, 0);                 /* no code of the file left */
	proc_maps_release(&maps);
}

/* one copy as data, split in two (madvise or mprotect of a part) where two segments lie */
static const char *const SPLIT[] = {
	"7f0000000000-7f0000380000 r--p 00000000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
	"7f0000380000-7f0000400000 r--p 00380000 08:01 77 /opt/py/lib/libpython3.12.so.1.0",
};

static void mapped_only_as_data(void **state)
{
	struct elf_loads l = loads_of(PY_LOADS, 4);
	struct proc_maps maps, many;
	struct elf_image img;

	(void)state;
	parse(&maps, REMAPPED, 1);
	assert_int_equal(elf_image_place(&maps, NULL, maps.maps[0].dev, 77, &l, 4096, &img), -ENOENT);
	proc_maps_release(&maps);
	parse(&maps, SPLIT, 2);
	assert_int_equal(elf_image_place(&maps, NULL, maps.maps[0].dev, 77, &l, 4096, &img), -ENOENT);
	proc_maps_release(&maps);
	/* a target that maps a file 60000 times: bounded work, nothing placed */
	many.n = 60000;
	many.maps = calloc(many.n, sizeof(*many.maps));
	assert_non_null(many.maps);
	for (size_t i = 0; i < many.n; i++) {
		char line[128];

		snprintf(line, sizeof(line), "%llx-%llx r--p 00000000 08:01 77 /opt/lib/x.so",
			 0x100000000ull + i * 0x2000, 0x100001000ull + i * 0x2000);
		assert_int_equal(proc_maps_parse_line(line, &many.maps[i]), 0);
	}
	assert_int_equal(elf_image_place(&many, NULL, many.maps[0].dev, 77, &l, 4096, &img), -ENOENT);
	proc_maps_release(&many);
}

/* dlmopen: the same file loaded in two namespaces */
static const char *const TWICE[] = {
	"7f1000000000-7f1000026000 r--p 00000000 08:01 88 /lib/libc.so.6",
	"7f1000026000-7f100017c000 r-xp 00026000 08:01 88 /lib/libc.so.6",
	"7f200017c000-7f20001cf000 r--p 0017c000 08:01 99 /lib/other.so",
	"7f3000000000-7f3000026000 r--p 00000000 08:01 88 /lib/libc.so.6",
	"7f3000026000-7f300017c000 r-xp 00026000 08:01 88 /lib/libc.so.6",
	"7f300017c000-7f30001cf000 r--p 0017c000 08:01 88 /lib/libc.so.6",
};

static void loaded_twice(void **state)
{
	struct elf_loads l = loads_of(LIBC, 4);
	struct proc_maps maps;
	struct elf_image img;

	(void)state;
	parse(&maps, TWICE, sizeof(TWICE) / sizeof(*TWICE));
	assert_int_equal(elf_image_place(&maps, &maps.maps[1], maps.maps[1].dev, 88, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0x7f1000000000);
	assert_int_equal(img.end, 0x7f100017c000);
	assert_int_equal(elf_image_place(&maps, &maps.maps[4], maps.maps[4].dev, 88, &l, 4096, &img), 0);
	assert_int_equal(img.bias, 0x7f3000000000);
	assert_int_equal(img.start, 0x7f3000026000);
	assert_int_equal(img.explained, 3);
	proc_maps_release(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_image_beside_the_code),
		cmocka_unit_test(maps_holes),
		cmocka_unit_test(glibc_layout_and_data_copies),
		cmocka_unit_test(lld_tiny_file),
		cmocka_unit_test(another_file_in_a_hole),
		cmocka_unit_test(code_remapped_to_anonymous),
		cmocka_unit_test(mapped_only_as_data),
		cmocka_unit_test(loaded_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
