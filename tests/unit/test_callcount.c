/*
 * Unit tests of --count-calls' two parsers of target-made data: the
 * remote-execution fields of a 3.14/3.15 _Py_DebugOffsets block
 * (python/remote_exec.c: refused before 3.14, when the interpreter's
 * config.remote_debug is off, on a block whose fields are out of range) laid
 * out in an image as CPython would (debug_blocks.h, generated from its
 * headers), and the counts file the script writes (python/callcount.c:
 * escapes undone, a file without its end line or with a wrong line count
 * refused, never half read).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "debug_blocks.h"
#include "python/callcount.h"
#include "python/remote_exec.h"
#include "util/util.h"

#define RUNTIME_ADDR 0x100000ull
#define RUNTIME_LEN 4096
#define INTERP_ADDR 0x200000ull
#define INTERP_LEN 16384

struct image {
	uint8_t runtime[RUNTIME_LEN];
	uint8_t interp[INTERP_LEN];
	struct mem_region regions[2];
	struct target_mem mem;
	struct py_target t;
};

static uint64_t block_value(const struct debug_block *db, const char *name)
{
	for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
		if (!strcmp(v->name, name))
			return v->value;
	fail_msg("no %s in the 3.%d block", name, db->minor);
	return 0;
}

static void image_init(struct image *im, const struct debug_block *db, int32_t enabled)
{
	const struct py_debug_offsets_layout *l;
	uint64_t interp = INTERP_ADDR;

	memset(im, 0, sizeof(*im));
	memcpy(im->runtime, "xdebugpy", 8);
	for (const struct debug_block_value *v = db->values; v->pos >= 0; v++)
		memcpy(im->runtime + v->pos, &v->value, 8);
	l = py_debug_layout_of_block(db->minor, im->runtime, RUNTIME_LEN);
	assert_non_null(l);
	assert_int_equal(py_offsets_from_debug(l, im->runtime, (size_t)l->block_size,
					       &im->t.offsets), 0);
	memcpy(im->runtime + im->t.offsets.runtime_interpreters_head, &interp, 8);
	memcpy(im->interp + block_value(db, "dbg_remote_enabled"), &enabled, 4);
	im->t.pid = 1;
	im->t.major = 3;
	im->t.minor = db->minor;
	snprintf(im->t.version, sizeof(im->t.version), "3.%d.0", db->minor);
	im->t.runtime_addr = RUNTIME_ADDR;
	im->regions[0] = (struct mem_region){ RUNTIME_ADDR, im->runtime, RUNTIME_LEN };
	im->regions[1] = (struct mem_region){ INTERP_ADDR, im->interp, INTERP_LEN };
	mem_init_image(&im->mem, im->regions, 2);
}

static void test_rexec_check(void **state)
{
	int tested = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(debug_blocks); i++) {
		const struct debug_block *db = &debug_blocks[i];
		struct image *im;
		struct strbuf why = STRBUF_INIT;

		if (db->minor < 14 || db->free_threaded)
			continue;
		im = calloc(1, sizeof(*im));
		assert_non_null(im);
		image_init(im, db, 1);
		assert_int_equal(py_rexec_check(&im->mem, &im->t, &why), 0);
		image_init(im, db, 0);
		assert_int_equal(py_rexec_check(&im->mem, &im->t, &why), -EPERM);
		assert_non_null(strstr(strbuf_str(&why), "PYTHON_DISABLE_REMOTE_DEBUG"));
		/* a path buffer size out of range: the block is not trusted */
		image_init(im, db, 1);
		{
			uint64_t huge = 1ull << 40;
			const struct py_debug_offsets_layout *l = py_debug_layout(db->minor, 0);

			memcpy(im->runtime + l->dbg_script_path_size, &huge, 8);
		}
		strbuf_reset(&why);
		assert_int_equal(py_rexec_check(&im->mem, &im->t, &why), -EPROTO);
		/* an older version: what it lacks, said */
		image_init(im, db, 1);
		im->t.minor = 12;
		strbuf_reset(&why);
		assert_int_equal(py_rexec_check(&im->mem, &im->t, &why), -ENOTSUP);
		assert_non_null(strstr(strbuf_str(&why), "PEP 768 came in 3.14"));
		/* a starting interpreter: no thread state yet, or none at all */
		image_init(im, db, 1);
		assert_int_equal(py_rexec_ready(&im->mem, &im->t), -EAGAIN);
		memset(im->runtime + im->t.offsets.runtime_interpreters_head, 0, 8);
		assert_int_equal(py_rexec_ready(&im->mem, &im->t), -EAGAIN);
		/* free-threaded: refused before anything is read */
		image_init(im, db, 1);
		im->t.offsets.free_threaded = 1;
		assert_int_equal(py_rexec_check(&im->mem, &im->t, &why), -EOPNOTSUPP);
		strbuf_release(&why);
		mem_release(&im->mem);
		free(im);
		tested++;
	}
	assert_true(tested >= 2);      /* 3.14 and 3.15 */
}

static int parse(const char *text, struct callcount *cc)
{
	char *copy = xstrdup(text);
	int ret;

	callcount_init(cc, 0);
	ret = callcount_parse(cc, copy, strlen(copy));
	free(copy);
	return ret;
}

static void test_parse(void **state)
{
	struct callcount cc;

	(void)state;
	assert_int_equal(parse("C\t12\t0\t3\t/app/a.py\tf\n"
			       "C\t1\t20\t7\t/app/we\\tird\\\\\\nname.py\tG.gen\n"
			       "end 2\n", &cc), 0);
	assert_int_equal(cc.n, 2);
	assert_string_equal(cc.fns[0].name, "f");
	assert_int_equal(cc.fns[0].starts, 12);
	assert_int_equal(cc.fns[0].firstline, 3);
	assert_string_equal(cc.fns[1].file, "/app/we\tird\\\nname.py");
	assert_int_equal(cc.fns[1].resumes, 20);
	callcount_release(&cc);

	/* cut short: no end line, or one that counts other lines */
	assert_int_equal(parse("C\t12\t0\t3\t/app/a.py\tf\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t12\t0\t3\t/app/a.py\tf\nend 5\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t12\t0\t3\t/app/a.py\tf\nend 1", &cc), -EPROTO);
	callcount_release(&cc);
	/* a line of another shape */
	assert_int_equal(parse("C\t12\t3\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("X\t1\t2\t3\ta\tb\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	/* numbers the script never writes: negative, trailing junk, past 64 bits */
	assert_int_equal(parse("C\t-1\t0\t3\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t12abc\t0\t3\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t1\t99999999999999999999999\t3\t/app/a.py\tf\nend 1\n", &cc),
			 -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t1\t0\t9999999999\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t\t0\t3\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t+1\t0\t3\t/app/a.py\tf\nend 1\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t1\t0\t3\t/app/a.py\tf\nend 1abc\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t1\t0\t3\t/app/a.py\tf\nend 1 -5\n", &cc), -EPROTO);
	callcount_release(&cc);
	assert_int_equal(parse("C\t1\t0\t3\t/app/a.py\tf\nend 1 250\n", &cc), 0);
	assert_int_equal(cc.stop_us, 250);
	callcount_release(&cc);
	/* nothing counted is a valid file */
	assert_int_equal(parse("end 0\n", &cc), 0);
	assert_int_equal(cc.n, 0);
	callcount_release(&cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rexec_check),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
