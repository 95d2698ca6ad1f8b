/*
 * The records the BPF program (bpf/fwprof.bpf.c) writes into the ring
 * buffer, as user space decodes them: checked against the length the ring
 * buffer gives before any part is used, then replayed (the Python walk over
 * the frames the program copied, the kernel's frame-pointer walk as an
 * unwind result). Pure functions of a record's bytes, apart from the
 * reader's overlay, so the bpf backend (sampler/bpf.c) and the fuzzer call
 * the same code; built whether the backend is or not.
 */
#ifndef FRAMEWALK_SAMPLER_BPFREC_H
#define FRAMEWALK_SAMPLER_BPFREC_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/fwprof.h"
#include "python/reader.h"
#include "target/memory.h"
#include "unwind/unwind.h"

/*
 * The parts of one record, pointing into its bytes: the header, npy copied
 * Python frames (h->npy, at most FW_MAX_PY_FRAMES, py_stride bytes each),
 * the kernel's pcs, the user pcs of the kernel's frame-pointer walk and
 * stack_bytes of user stack (h->stack_bytes, at most FW_STACK_COPY), all
 * inside the record.
 */
struct bpf_record {
	const struct fw_sample_hdr *h;
	const uint8_t *py;
	const uint8_t *kstack, *ustack;   /* nkernel, nuser pcs (8 bytes each, unaligned) */
	size_t nkernel, nuser;
	const uint8_t *stack;
};

/*
 * Decode the size bytes at data (8-byte aligned, as the ring buffer hands
 * records over) into *rec. 0, or -EINVAL when the parts do not fit.
 */
int bpf_record_decode(const void *data, size_t size, struct bpf_record *rec);

/*
 * Replay the Python walk of thread h->tid over the record's frames: each
 * frame's frame_size bytes (no more than the program copied: py_data_len)
 * and code_id_len bytes of its code object serve the reader's reads
 * (mem's overlay) while it walks from the first. r reads through mem. 0 or
 * -errno as py_reader_stack; -ENOENT when the record holds no frame.
 */
int bpf_record_python(struct py_reader *r, struct target_mem *mem, const struct bpf_record *rec,
		      uint32_t frame_size, uint32_t code_id_len, struct py_frame_info *out,
		      size_t max, size_t *depth);

/*
 * User pcs of a record without a stack copy (FW_REC_SMALL), from the
 * kernel's frame-pointer walk, as an unwind result.
 */
void bpf_record_fp_walk(const struct bpf_record *rec, struct unwind_result *uw);

/* The record's i-th kernel pc (i < rec->nkernel). */
uint64_t bpf_record_kernel_pc(const struct bpf_record *rec, size_t i);

#endif
