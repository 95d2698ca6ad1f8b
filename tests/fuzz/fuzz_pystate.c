/*
 * libFuzzer harness for the interpreter-state reads of --mode exception and
 * --mode gil (src/python/excstate.h, gilstate.h) over fuzz_reader's crafted
 * memory image (reader_image.h gives the input format; fuzz_reader's seeds
 * fit): for every thread state the reader lists, and at the start of every
 * region, the exception being raised or handled, its type's name and
 * (3.15+) the gil_requested flag; once, where waiters for the GIL sleep.
 * Checked against the words of the image read directly:
 *   - a raised exception is the thread state's current-exception word (a
 *     type only before 3.12); a handled one is the value of an item of its
 *     exc_info chain within PY_EXC_STACK_MAX items; an error reports none;
 *   - a type name is NUL-terminated within PY_OBJ_TYPE_NAME;
 *   - gil_requested is 0 or 1;
 *   - the GIL's condition variable and mutex spans have their layout's
 *     sizes, and py_gil_waits_on answers exactly for addresses in them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/discover.h"
#include "python/excstate.h"
#include "python/gilstate.h"
#include "python/objects.h"
#include "python/reader.h"
#include "target/memory.h"

#include "reader_image.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_pystate: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define STATES_MAX 16

static struct py_thread_info threads[PY_MAX_THREADS];
static struct py_target target;
static uint8_t runtime_copy[1u << 16];  /* region 0, patched */
static int verbose = -1;    /* FUZZ_VERBOSE=1: print what was read */

/* A word of the image, as the reference reads it: 0 or -1. */
static int word(struct target_mem *m, uint64_t addr, uint64_t *v)
{
	return mem_read(m, addr, v, 8) ? -1 : 0;
}

static void check_exception(struct py_objects *ob, struct target_mem *m, uint64_t tstate)
{
	const struct py_objects_layout *lo = ob->lo;
	uint64_t exc = 1, raised, item, value;
	int is_type = -1, ret, found = 0;
	const char *name;

	ret = py_exc_current(ob, tstate, &exc, &is_type);
	if (ret) {
		CHECK(ret < 0 && !exc && !is_type);
		return;
	}
	CHECK(is_type == 0 || is_type == 1);
	/* the raised word first */
	CHECK(!word(m, tstate + (uint64_t)lo->tstate_curexc, &raised));
	if (raised) {
		CHECK(exc == raised && is_type == (target.offsets.version_hex < 0x030c0000));
	} else {
		CHECK(!is_type);
		/* else an item's value, along the chain from exc_info */
		if (exc) {
			CHECK(!word(m, tstate + (uint64_t)lo->tstate_exc_info, &item));
			for (int depth = 0; item && depth < PY_EXC_STACK_MAX && !found; depth++) {
				if (word(m, item + (uint64_t)lo->exc_item_value, &value))
					break;
				found = value == exc;
				if (word(m, item + (uint64_t)lo->exc_item_previous, &item))
					break;
			}
			CHECK(found);
		}
	}
	if (exc) {
		name = py_exc_type_name(ob, exc, is_type);
		CHECK(name && memchr(name, '\0', PY_OBJ_TYPE_NAME));
		if (verbose)
			fprintf(stderr, "tstate %#llx: %s %s\n", (unsigned long long)tstate,
				raised ? "raising" : "handling", name);
	}
}

static void check_gil(struct py_reader *r)
{
	const struct py_objects_layout *lo = &r->off->objects;
	struct py_gil_waits w;
	uint64_t probes[8];

	if (py_gil_waits(r, &w))
		return;
	CHECK(w.cond_end - w.cond == (uint64_t)lo->gil_cond_size);
	CHECK(w.mutex_end - w.mutex == 8);
	probes[0] = w.cond;
	probes[1] = w.cond_end - 1;
	probes[2] = w.cond_end;
	probes[3] = w.cond - 1;
	probes[4] = w.mutex;
	probes[5] = w.mutex + 7;
	probes[6] = w.mutex_end;
	probes[7] = 0;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t a = probes[i];
		int in = (a >= w.cond && a < w.cond_end) || (a >= w.mutex && a < w.mutex_end);

		CHECK(py_gil_waits_on(&w, a) == in);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_region regions[READER_NREGIONS];
	uint64_t states[STATES_MAX + READER_NREGIONS];
	size_t nreg, pos = 2, npatch = 0, n = 0, nstates = 0;
	const uint8_t *patch = NULL;
	struct target_mem mem;
	struct py_objects ob;
	struct py_reader r;
	int minor, flags;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (size < 2)
		return 0;
	minor = 8 + data[0] % 8;
	flags = data[1];
	if (flags & READER_F_PATCH)
		npatch = reader_parse_patches(data, size, &pos, &patch);
	nreg = reader_parse_regions(data, size, &pos, regions);

	memset(&target, 0, sizeof(target));
	target.pid = getpid();
	target.major = 3;
	target.minor = minor;
	target.runtime_addr = READER_REGION(0);
	target.code_type_addr = (flags & READER_F_CODE_TYPE) ? READER_CODE_TYPE : 0;
	if (reader_offsets(minor, regions, nreg, patch, npatch, runtime_copy, sizeof(runtime_copy),
			   &target.offsets))
		return 0;
	mem_init_image(&mem, regions, nreg);
	py_reader_init(&r, &mem, &target);
	mem_tick_begin(&mem);
	if (!py_reader_threads(&r, threads, STATES_MAX, &n))
		for (size_t i = 0; i < n && i < STATES_MAX; i++)
			states[nstates++] = threads[i].tstate;
	for (size_t i = 0; i < nreg; i++)
		states[nstates++] = READER_REGION(i);
	if (!py_objects_init(&ob, &r)) {
		for (size_t i = 0; i < nstates; i++)
			check_exception(&ob, &mem, states[i]);
		py_objects_release(&ob);
	}
	for (size_t i = 0; i < nstates; i++) {
		int requested = -1, ret = py_gil_requested(&r, states[i], &requested);

		CHECK(requested == 0 || requested == 1);
		CHECK(ret <= 0 && (!ret || !requested));
	}
	check_gil(&r);
	mem_tick_end(&mem);
	py_reader_release(&r);
	mem_release(&mem);
	return 0;
}
