/*
 * Where the loader put a file (target/proc.h's proc_maps_image_base,
 * proc_maps_image_end, proc_maps_loaded_base), from made-up /proc/PID/maps
 * lines: the image beside the code, not a mapping of the same file a
 * process made again as data (framewalk's own agent maps its targets'
 * libc and libpython so, below their images).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

static void image_beside_the_code(void **state)
{
	struct proc_maps maps;
	const struct proc_map *base;

	(void)state;
	parse(&maps, AGENT, sizeof(AGENT) / sizeof(*AGENT));
	base = proc_maps_image_base(&maps, &maps.maps[3]);
	assert_ptr_equal(base, &maps.maps[2]);
	/* through its .bss, up to the file mapped again above it */
	assert_int_equal(proc_maps_image_end(&maps, base), 0x7ff3ff321000);
	assert_ptr_equal(proc_maps_loaded_base(&maps, maps.maps[3].dev, 332835), base);
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

static void data_only_and_holes(void **state)
{
	struct proc_maps maps;
	const struct proc_map *base;

	(void)state;
	parse(&maps, DATA_AND_HOLES, sizeof(DATA_AND_HOLES) / sizeof(*DATA_AND_HOLES));
	assert_null(proc_maps_loaded_base(&maps, maps.maps[0].dev, 77));
	base = proc_maps_loaded_base(&maps, maps.maps[1].dev, 88);
	assert_ptr_equal(base, &maps.maps[1]);
	/* an anonymous hole between its segments does not end the image; another file does */
	assert_int_equal(proc_maps_image_end(&maps, base), 0x7f1000401000);
	/* code at offset 0 is its own base */
	assert_ptr_equal(proc_maps_image_base(&maps, &maps.maps[7]), &maps.maps[7]);
	assert_int_equal(proc_maps_image_end(&maps, &maps.maps[7]), 0x7f1000403000);
	proc_maps_release(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(image_beside_the_code),
		cmocka_unit_test(data_only_and_holes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
