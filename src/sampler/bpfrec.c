/* Implementation of bpfrec.h. */
#include <errno.h>
#include <string.h>

#include "sampler/bpfrec.h"
#include "util/util.h"

/* The bytes a part of pcs takes in the record: as the program advances past it. */
static size_t pcs_bytes(int32_t got, size_t max_pcs, int *bad)
{
	size_t n = FW_PCS_ADVANCE(got);

	if (n > 8 * max_pcs)
		*bad = 1;
	return n;
}

int bpf_record_decode(const void *data, size_t size, struct bpf_record *rec)
{
	const struct fw_sample_hdr *h = data;
	const uint8_t *at = (const uint8_t *)data + FW_PY_OFFSET;
	size_t kb, ub, need;
	int bad = 0;

	if (size < sizeof(*h) || h->npy > FW_MAX_PY_FRAMES || h->stack_bytes > FW_STACK_COPY)
		return -EINVAL;
	if (h->npy && (h->py_stride > FW_PY_SLOT_MAX || h->py_data_len > FW_FRAME_COPY ||
		       h->py_stride < sizeof(struct fw_py_frame) + h->py_data_len))
		return -EINVAL;
	kb = pcs_bytes(h->kstack_bytes, FW_KSTACK_MAX, &bad);
	ub = pcs_bytes(h->ustack_bytes, FW_USTACK_MAX, &bad);
	need = FW_PY_OFFSET + (size_t)h->npy * h->py_stride + kb + ub + h->stack_bytes;
	if (bad || need > size)
		return -EINVAL;
	rec->h = h;
	rec->py = at;
	at += (size_t)h->npy * h->py_stride;
	rec->kstack = at;
	rec->nkernel = kb / 8;
	at += kb;
	rec->ustack = at;
	rec->nuser = ub / 8;
	at += ub;
	rec->stack = at;
	return 0;
}

int bpf_record_python(struct py_reader *r, struct target_mem *mem, const struct bpf_record *rec,
		      uint32_t frame_size, uint32_t code_id_len, struct py_frame_info *out,
		      size_t max, size_t *depth)
{
	const struct fw_sample_hdr *h = rec->h;
	struct py_thread_info ti;
	struct fw_py_frame f;
	size_t id_room;
	int ret;

	*depth = 0;
	if (!h->npy)
		return -ENOENT;
	/*
	 * The program copies at most py_data_len bytes of a frame (its
	 * frame_size, no more than FW_FRAME_COPY: 3.13+ offsets come from the
	 * target and may declare larger frames): past them the reader reads
	 * from the target.
	 */
	if (frame_size > h->py_data_len)
		frame_size = h->py_data_len;
	id_room = h->py_stride - sizeof(f) - h->py_data_len;
	mem_overlay_begin(mem);
	for (uint32_t i = 0; i < h->npy; i++) {
		const uint8_t *slot = rec->py + (size_t)i * h->py_stride;

		memcpy(&f, slot, sizeof(f));
		mem_overlay_add(mem, f.addr, slot + sizeof(f), frame_size);
		/* what the reader confirms each frame's code with, from the same instant */
		if (f.code_id_addr && code_id_len <= id_room)
			mem_overlay_add(mem, f.code_id_addr, slot + sizeof(f) + h->py_data_len, code_id_len);
	}
	mem_overlay_activate(mem);
	memset(&ti, 0, sizeof(ti));
	ti.tstate = h->tstate;
	ti.cframe = h->cframe;
	memcpy(&ti.frame, rec->py, sizeof(ti.frame));
	ti.tid = (int32_t)h->tid;
	ret = py_reader_stack(r, &ti, out, max, depth);
	mem_overlay_end(mem);
	return ret;
}

void bpf_record_fp_walk(const struct bpf_record *rec, struct unwind_result *uw)
{
	uw->n = 0;
	uw->fp_steps = uw->cfi_steps = 0;
	uw->end_module = NULL;
	for (size_t i = 0; i < rec->nuser && uw->n < UNWIND_MAX; i++) {
		memcpy(&uw->pcs[uw->n], rec->ustack + 8 * i, 8);
		uw->sps[uw->n] = 0;
		uw->signal_frame[uw->n] = i == 0;
		uw->n++;
	}
	uw->fp_steps = uw->n ? (uint32_t)uw->n - 1 : 0;
	uw->end = UNWIND_END_COMPLETE;
}

uint64_t bpf_record_kernel_pc(const struct bpf_record *rec, size_t i)
{
	uint64_t pc;

	memcpy(&pc, rec->kstack + 8 * i, sizeof(pc));
	return pc;
}
