/*
 * libFuzzer harness for the Python reader (src/python/reader.h) over a
 * crafted memory image (reader_image.h gives the input format): the thread
 * list, frame chains, code objects, strings and line tables of every version
 * 3.8-3.15, with 3.13+ offsets themselves taken from a fuzzed
 * _Py_DebugOffsets block (py_offsets_from_debug). Then, over the same image,
 * python/'s object readers: threading's thread names (python/thread_names.h) and
 * the asyncio task readers (python/asyncio.h) given the walk's frames and
 * every region as a loop. Whatever the memory holds, each must return an
 * error or a bounded, well-formed result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/asyncio.h"
#include "python/discover.h"
#include "python/objects.h"
#include "python/reader.h"
#include "python/thread_names.h"
#include "target/memory.h"

#include "reader_image.h"

static struct py_thread_info threads[PY_MAX_THREADS];
static struct py_frame_info frames[PY_MAX_DEPTH], first_frames[PY_MAX_DEPTH];
static struct py_target target;
static uint8_t runtime_copy[1u << 16];  /* region 0, patched */

static int verbose = -1;    /* FUZZ_VERBOSE=1: print what each walk read */

/*
 * Every offset the reader uses inside a struct it reads whole must lie in
 * the bytes it reads: else it reads past its buffer, or stale stack bytes.
 * The built-in tables satisfy this by construction; offsets taken from a
 * target's _Py_DebugOffsets block must be made to (py_offsets_from_debug).
 */
static void inside(const char *what, int32_t field, int width, int32_t size)
{
	if (field == PYOFF_NONE)
		return;
	if (field < 0 || field + width > size) {
		fprintf(stderr, "fuzz_reader: offsets accepted with %s = %d (+%d) outside the %d bytes "
			"read\n", what, field, width, size);
		abort();
	}
}

static void check_offsets(const struct py_offsets *o)
{
	int32_t code_read = o->code_size;

	if (o->varobject_size + 8 > code_read)
		code_read = o->varobject_size + 8;   /* as read_code_header */
	inside("tstate_next", o->tstate_next, 8, o->tstate_size);
	inside("tstate_frame", o->tstate_frame, 8, o->tstate_size);
	inside("tstate_thread_id", o->tstate_thread_id, 8, o->tstate_size);
	inside("tstate_native_thread_id", o->tstate_native_thread_id, 8, o->tstate_size);
	inside("frame_previous", o->frame_previous, 8, o->frame_size);
	inside("frame_code", o->frame_code, 8, o->frame_size);
	inside("frame_instr", o->frame_instr, o->instr_model == PY_INSTR_POINTER ? 8 : 4,
	       o->frame_size);
	inside("frame_owner", o->frame_owner, 1, o->frame_size);
	inside("frame_is_entry", o->frame_is_entry, 1, o->frame_size);
	inside("frame_tlbc_index", o->frame_tlbc_index, 4, o->frame_size);
	if (o->frame_model == PY_FRAMES_OBJECTS)
		inside("object_refcnt", o->object_refcnt, 8, o->frame_size);
	inside("code_filename", o->code_filename, 8, code_read);
	inside("code_name", o->code_name, 8, code_read);
	inside("code_qualname", o->code_qualname, 8, code_read);
	inside("code_linetable", o->code_linetable, 8, code_read);
	inside("code_firstlineno", o->code_firstlineno, 4, code_read);
	/* read_unicode reads unicode_compact_data bytes of header */
	inside("unicode_length", o->unicode_length, 8, o->unicode_compact_data);
	inside("unicode_state", o->unicode_state, 4, o->unicode_compact_data);
}

static void check_code(const struct py_code *c)
{
	/* names are capped in code points, 4 UTF-8 bytes each at most */
	if (!c || !c->name || !c->file || strlen(c->name) > 4 * PY_NAME_MAX ||
	    strlen(c->file) > 4 * PY_FILE_MAX || (c->table_len && !c->table))
		abort();
}

/* Walk every thread; the depth of the first one's stack (its frames stay in frames). */
static size_t walk(struct py_reader *r, struct target_mem *m, int small)
{
	size_t maxt = small ? 3 : PY_MAX_THREADS, maxf = small ? 5 : PY_MAX_DEPTH;
	size_t n = 0, first = 0;

	int tret;

	mem_tick_begin(m);
	memset(&threads[0], 0, sizeof(threads[0]));
	tret = py_reader_threads(r, threads, maxt, &n);
	if (verbose)
		fprintf(stderr, "threads: %d, %zu\n", tret, n);
	if (tret == 0) {
		if (n > maxt)
			abort();
		for (size_t i = 0; i < n; i++) {
			size_t depth = 0;
			int ret = py_reader_stack(r, &threads[i], frames, maxf, &depth);

			if (depth > maxf || (ret && depth))
				abort();
			if (verbose)
				fprintf(stderr, "  thread %d: %d, depth %zu (code errors %llu)\n",
					threads[i].tid, ret, depth,
					(unsigned long long)r->stats.code_errors);
			for (size_t j = 0; j < depth; j++) {
				check_code(frames[j].code);
				if (verbose)
					fprintf(stderr, "    %s (%s:%d)%s\n", frames[j].code->name,
						frames[j].code->file, frames[j].line,
						frames[j].entry ? " entry" : "");
				if (frames[j].line < 0)
					abort();
			}
			py_reader_thread_frame(r, &threads[i]);
			/* the first thread's frames, for own_view */
			if (i == 0) {
				first = depth;
				memcpy(first_frames, frames, depth * sizeof(*frames));
			}
		}
	}
	mem_tick_end(m);
	return first;
}

static void task_frames(void *arg, const struct py_async_waiting_task *t)
{
	(void)arg;
	if (t->n > PY_ASYNC_CHAIN_MAX * (PY_ASYNC_PARENTS_MAX + 1) + 64)
		abort();
	for (size_t j = 0; j < t->n; j++)
		check_code(t->frames[j].code);
}

/* Thread names and asyncio tasks read from the image (after a walk: its frames). */
static void own_view(struct py_reader *r, struct target_mem *m, size_t depth)
{
	struct py_frame_info out[PY_MAX_DEPTH];
	struct strbuf why = STRBUF_INIT;
	struct py_thread_names tn;
	struct py_async_thread th;
	struct py_objects ob;
	struct py_async a;
	size_t nout = 0;

	if (py_objects_init(&ob, r))
		return;
	mem_tick_begin(m);
	py_thread_names_init(&tn, &ob);
	if (!py_thread_names_read(&tn, 1)) {
		if (tn.n > PY_THREAD_NAMES_MAX)
			abort();
		for (size_t i = 0; i < tn.n; i++)
			if (strlen(tn.names[i].name) > 4 * PY_THREAD_NAME_MAX)
				abort();
	}
	py_thread_names_release(&tn);
	if (!py_async_init(&a, r, &ob, &why)) {
		int ret = py_async_stack(&a, threads[0].tstate, first_frames, depth, out, PY_MAX_DEPTH,
					 &nout, &th);

		if ((ret && nout) || nout > PY_MAX_DEPTH)
			abort();
		for (size_t j = 0; j < nout; j++)
			check_code(out[j].code);
		for (size_t i = 0; i < READER_NREGIONS; i++)
			py_async_waiting(&a, READER_REGION(i) + 64, threads[0].tstate,
					 task_frames, NULL);
		py_async_release(&a);
	}
	mem_tick_end(m);
	strbuf_release(&why);
	py_objects_release(&ob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_region regions[READER_NREGIONS], regions2[READER_NREGIONS];
	struct target_mem mem;
	struct py_reader r;
	size_t nreg, nreg2 = 0, pos = 2, npatch = 0;
	const uint8_t *patch = NULL;
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
	if (flags & READER_F_CHANGE)
		nreg2 = reader_parse_regions(data, size, &pos, regions2);

	memset(&target, 0, sizeof(target));
	/* our own pid: the <= 3.10 tid scan reads our /proc/self/task */
	target.pid = getpid();
	target.major = 3;
	target.minor = minor;
	target.runtime_addr = READER_REGION(0);
	target.code_type_addr = (flags & READER_F_CODE_TYPE) ? READER_CODE_TYPE : 0;
	/* as discover.c does: 3.13+ the block is the start of _PyRuntime */
	if (reader_offsets(minor, regions, nreg, patch, npatch, runtime_copy, sizeof(runtime_copy),
			   &target.offsets))
		return 0;

	check_offsets(&target.offsets);
	mem_init_image(&mem, regions, nreg);
	py_reader_init(&r, &mem, &target);
	own_view(&r, &mem, walk(&r, &mem, flags & READER_F_SMALL_MAX));
	if (flags & (READER_F_TWO_PASSES | READER_F_CHANGE)) {
		if (flags & READER_F_CHANGE) {
			/* the prefetch log and snapshot survive, as in the sampler */
			mem.image = regions2;
			mem.nimage = nreg2;
		}
		if (flags & READER_F_RECHECK) {
			/* as if a second had passed: re-validate every cached entry */
			for (size_t i = 0; i < r.codes_cap; i++)
				if (r.codes[i])
					r.codes[i]->checked_ns = 0;
			r.threads_head_ns = 0;
		}
		walk(&r, &mem, flags & READER_F_SMALL_MAX);
	}
	py_reader_release(&r);
	mem_release(&mem);
	return 0;
}
