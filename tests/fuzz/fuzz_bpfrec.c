/*
 * libFuzzer harness for the BPF ring-buffer records as user space decodes
 * them (src/sampler/bpfrec.h, the bpf backend's handle_record): the record
 * is checked against its length, its Python frames replayed by the reader
 * over the overlay of the copied frames and the rest of the target's memory
 * (a crafted image, as fuzz_reader's), its frame-pointer walk turned into
 * an unwind result and its stack copy read as the unwinder reads it.
 *
 * Input:
 *   byte 0      minor version: 8 + (b % 8), so 3.8 ... 3.15
 *   byte 1      flags: RECORD_F_CODE_TYPE, RECORD_F_SMALL_MAX
 *   byte 2      3.13+: frame_size raised to 8 + (b % 249) when larger, as
 *               a _Py_DebugOffsets block declaring a frame field further
 *               out would (py_offsets_from_debug allows up to 256)
 *   bytes 3-4   the record's length (u16 LE), then the record
 *   then        the memory image in reader_image.h's region format (3.13+:
 *               region 0 starts with the _Py_DebugOffsets block)
 * The record is copied to a buffer of exactly its length (ASan sees any read
 * past it); of each copied frame, the bytes the program does not write (data
 * past the frame size it copies, code_id past the bytes it copies or all of
 * it when not copied) are poisoned: they hold what an earlier sample, maybe
 * another process's, left in the program's scratch buffer.
 *
 * Checked: a record is accepted exactly when its parts fit; the parts lie
 * inside it; the replayed stack is bounded, well-formed and an error leaves
 * no frames; the frame-pointer walk keeps the record's pcs, at most
 * FW_USTACK_MAX; the kernel pcs are bounded; the stack copy serves only the
 * words inside it (all of them), with the record's bytes.
 */
#include <errno.h>
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/discover.h"
#include "python/reader.h"
#include "sampler/bpfrec.h"
#include "target/memory.h"
#include "unwind/stackcopy.h"

#include "reader_image.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_bpfrec: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define RECORD_F_CODE_TYPE 0x01   /* the reader knows PyCode_Type */
#define RECORD_F_SMALL_MAX 0x02   /* room for only 5 frames */

static struct py_frame_info frames[PY_MAX_DEPTH];
static struct unwind_result uw;
static struct py_target target;
static int verbose = -1;    /* FUZZ_VERBOSE=1: print the replayed stack */

/* The offsets of the version, as discovery finds them; 0 or -1. */
static int offsets_for(int minor, const struct mem_region *regions, size_t nreg, int raise)
{
	const struct py_debug_offsets_layout *l;

	if (minor <= 12) {
		target.offsets = *py_offsets_builtin(minor);
		return 0;
	}
	/* as discover.c does: the block is the start of _PyRuntime */
	if (!nreg)
		return -1;
	l = py_debug_layout_of_block(minor, regions[0].data, regions[0].len);
	if (!l || regions[0].len < (size_t)l->block_size ||
	    py_offsets_from_debug(l, regions[0].data, (size_t)l->block_size, &target.offsets))
		return -1;
	if (raise > target.offsets.frame_size)
		target.offsets.frame_size = raise;
	return 0;
}

/* How many bytes of a frame's code object the program copies (bpf.c's target_config). */
static uint32_t code_id_len(const struct py_offsets *o)
{
	int32_t start;
	size_t len;

	py_code_id_span(o, &start, &len);
	return start >= 0 && len < FW_CODE_ID_COPY && o->frame_code >= 0 ? (uint32_t)len : 0;
}

/* Poison what the program leaves unwritten in each copied frame (or unpoison it all). */
static void poison_unwritten(const struct bpf_record *rec, uint32_t frame_size, uint32_t id_len,
			     int on)
{
	const struct fw_sample_hdr *h = rec->h;
	uint32_t copied = frame_size < h->py_data_len ? frame_size : h->py_data_len;
	uint32_t room = h->npy ? h->py_stride - (uint32_t)sizeof(struct fw_py_frame) : 0;

	for (uint32_t i = 0; i < h->npy; i++) {
		uint8_t *slot = (uint8_t *)rec->py + (size_t)i * h->py_stride;
		uint8_t *data = slot + sizeof(struct fw_py_frame);
		struct fw_py_frame f;
		uint32_t id;

		memcpy(&f, slot, sizeof(f));
		id = f.code_id_addr && id_len <= room - h->py_data_len ? id_len : 0;
		if (on) {
			ASAN_POISON_MEMORY_REGION(data + copied, h->py_data_len - copied);
			ASAN_POISON_MEMORY_REGION(data + h->py_data_len + id, room - h->py_data_len - id);
		} else {
			ASAN_UNPOISON_MEMORY_REGION(data, room);
		}
	}
}

static void check_python(const struct bpf_record *rec, const struct mem_region *regions,
			 size_t nreg, size_t max)
{
	uint32_t frame_size = (uint32_t)target.offsets.frame_size;
	uint32_t id_len = code_id_len(&target.offsets);
	struct target_mem mem;
	struct py_reader r;
	size_t depth = 0;
	int ret;

	mem_init_image(&mem, regions, nreg);
	py_reader_init(&r, &mem, &target);
	poison_unwritten(rec, frame_size, id_len, 1);
	ret = bpf_record_python(&r, &mem, rec, frame_size, id_len, frames, max, &depth);
	poison_unwritten(rec, frame_size, id_len, 0);
	if (verbose)
		fprintf(stderr, "3.%d: %u frames copied, replay %d, depth %zu\n", target.minor,
			rec->h->npy, ret, depth);
	CHECK(depth <= max && !(ret && depth));
	CHECK(rec->h->npy || ret == -ENOENT);
	for (size_t j = 0; j < depth; j++) {
		const struct py_code *c = frames[j].code;

		CHECK(c && c->name && c->file);
		CHECK(strlen(c->name) <= 4 * PY_NAME_MAX && strlen(c->file) <= 4 * PY_FILE_MAX);
		CHECK(!c->table_len || c->table);
		CHECK(frames[j].line >= 0);
		if (verbose)
			fprintf(stderr, "  %s (%s:%d)\n", c->name, c->file, frames[j].line);
	}
	py_reader_release(&r);
	mem_release(&mem);
}

/* The bytes a part of pcs takes in a record (fwprof.h's rule, restated). */
static size_t pcs_part(int32_t got)
{
	return got > 0 ? (size_t)got & 0x3f8 : 0;
}

static void check_native(const struct bpf_record *rec)
{
	const struct fw_sample_hdr *h = rec->h;
	size_t want = pcs_part(h->ustack_bytes) / 8;
	uint64_t base = h->stack_base, len = h->stack_bytes;
	uint64_t probes[8];
	struct stack_copy sc;

	bpf_record_fp_walk(rec, &uw);
	CHECK(rec->nuser == want && want <= FW_USTACK_MAX);
	CHECK(uw.n == want && uw.end == UNWIND_END_COMPLETE);
	CHECK(uw.fp_steps == (uw.n ? uw.n - 1 : 0) && !uw.cfi_steps);
	for (size_t i = 0; i < uw.n; i++)
		CHECK(!memcmp(&uw.pcs[i], rec->ustack + 8 * i, 8) && uw.signal_frame[i] == (i == 0));
	CHECK(rec->nkernel == pcs_part(h->kstack_bytes) / 8 && rec->nkernel <= FW_KSTACK_MAX);
	for (size_t i = 0; i < rec->nkernel; i++) {
		uint64_t pc = bpf_record_kernel_pc(rec, i);

		CHECK(!memcmp(&pc, rec->kstack + 8 * i, 8));
	}

	/* the copy as the unwinder reads it: around its ends and the stack pointer */
	stack_copy_init(&sc, rec->stack, base, len, FW_STACK_COPY);
	probes[0] = base;
	probes[1] = base + len - 8;
	probes[2] = base + len - 7;
	probes[3] = base + len;
	probes[4] = base - 1;
	probes[5] = h->regs[7];                 /* rsp */
	probes[6] = h->regs[6];                 /* rbp */
	probes[7] = UINT64_MAX - 3;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t a = probes[i], v = 0;
		int inside = a >= base && a - base <= len && len - (a - base) >= 8;
		int read = !stack_copy_read(&sc, a, &v);

		/* a copy that would end past the address space serves nothing (no stack is there) */
		CHECK(read ? inside : !inside || base + len < base);
		if (read)
			CHECK(!memcmp(&v, rec->stack + (a - base), 8));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_region regions[READER_NREGIONS];
	struct bpf_record rec;
	size_t len, nreg, need, pos;
	uint8_t *buf;
	int minor, flags, raise, ok;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (size < 5)
		return 0;
	minor = 8 + data[0] % 8;
	flags = data[1];
	raise = 8 + data[2] % 249;
	len = (size_t)data[3] | (size_t)data[4] << 8;
	if (len > size - 5)
		len = size - 5;
	pos = 5 + len;
	nreg = reader_parse_regions(data, size, &pos, regions);

	buf = malloc(len ? len : 1);
	CHECK(buf);
	memcpy(buf, data + 5, len);
	ok = bpf_record_decode(buf, len, &rec) == 0;
	/* accepted exactly when the parts fit */
	if (len >= sizeof(struct fw_sample_hdr)) {
		const struct fw_sample_hdr *h = (const void *)buf;
		int frames_ok = !h->npy || (h->py_stride <= FW_PY_SLOT_MAX &&
					    h->py_data_len <= FW_FRAME_COPY &&
					    h->py_stride >= sizeof(struct fw_py_frame) + h->py_data_len);

		need = FW_PY_OFFSET + (size_t)h->npy * h->py_stride + pcs_part(h->kstack_bytes) +
		       pcs_part(h->ustack_bytes) + h->stack_bytes;
		CHECK(ok == (h->npy <= FW_MAX_PY_FRAMES && h->stack_bytes <= FW_STACK_COPY && frames_ok &&
			     pcs_part(h->kstack_bytes) <= 8 * FW_KSTACK_MAX &&
			     pcs_part(h->ustack_bytes) <= 8 * FW_USTACK_MAX && need <= len));
	} else {
		CHECK(!ok);
	}
	if (!ok) {
		free(buf);
		return 0;
	}
	CHECK(rec.h == (const void *)buf && rec.h->npy <= FW_MAX_PY_FRAMES);
	CHECK(rec.py == buf + FW_PY_OFFSET);
	CHECK(rec.kstack == rec.py + (size_t)rec.h->npy * rec.h->py_stride);
	CHECK(rec.ustack == rec.kstack + 8 * rec.nkernel);
	CHECK(rec.stack == rec.ustack + 8 * rec.nuser);
	CHECK(rec.stack + rec.h->stack_bytes <= buf + len);

	check_native(&rec);
	memset(&target, 0, sizeof(target));
	target.pid = getpid();
	target.major = 3;
	target.minor = minor;
	target.runtime_addr = READER_REGION(0);
	target.code_type_addr = (flags & RECORD_F_CODE_TYPE) ? READER_CODE_TYPE : 0;
	if (!offsets_for(minor, regions, nreg, raise))
		check_python(&rec, regions, nreg, (flags & RECORD_F_SMALL_MAX) ? 5 : PY_MAX_DEPTH);
	free(buf);
	return 0;
}
