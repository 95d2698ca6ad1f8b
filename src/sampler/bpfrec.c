/* Implementation of bpfrec.h. */
#include <errno.h>

#include "sampler/bpfrec.h"
#include "util/util.h"

int bpf_record_decode(const void *data, size_t size, struct bpf_record *rec)
{
	const struct fw_sample_hdr *h = data;

	if (size < sizeof(*h) || h->npy > FW_MAX_PY_FRAMES ||
	    FW_PY_OFFSET + (size_t)h->npy * sizeof(*rec->py) + h->stack_bytes > size ||
	    h->stack_bytes > FW_STACK_COPY)
		return -EINVAL;
	rec->h = h;
	rec->py = (const void *)((const uint8_t *)data + FW_PY_OFFSET);
	rec->stack = (const uint8_t *)(rec->py + h->npy);
	return 0;
}

int bpf_record_python(struct py_reader *r, struct target_mem *mem, const struct bpf_record *rec,
		      uint32_t frame_size, uint32_t code_id_len, struct py_frame_info *out,
		      size_t max, size_t *depth)
{
	const struct fw_sample_hdr *h = rec->h;
	const struct fw_py_frame *py = rec->py;
	struct py_thread_info ti;
	int ret;

	*depth = 0;
	if (!h->npy)
		return -ENOENT;
	/*
	 * The program copies at most FW_FRAME_COPY bytes of a frame; past them
	 * its scratch buffer holds what an earlier sample left (3.13+ offsets
	 * come from the target and may declare larger frames): such frames
	 * are not served from the record, the reader reads them from the
	 * target.
	 */
	if (frame_size > FW_FRAME_COPY)
		frame_size = FW_FRAME_COPY;
	mem_overlay_begin(mem);
	for (uint32_t i = 0; i < h->npy; i++) {
		mem_overlay_add(mem, py[i].addr, py[i].data, frame_size);
		/* what the reader confirms each frame's code with, from the same instant */
		if (py[i].code_id_addr)
			mem_overlay_add(mem, py[i].code_id_addr, py[i].code_id, code_id_len);
	}
	mem_overlay_activate(mem);
	memset(&ti, 0, sizeof(ti));
	ti.tstate = h->tstate;
	ti.cframe = h->cframe;
	ti.frame = py[0].addr;
	ti.tid = (int32_t)h->tid;
	ret = py_reader_stack(r, &ti, out, max, depth);
	mem_overlay_end(mem);
	return ret;
}

void bpf_record_fp_walk(const struct fw_sample_hdr *h, struct unwind_result *uw)
{
	size_t n = h->ustack_bytes > 0 ? (size_t)h->ustack_bytes / 8 : 0;

	uw->n = 0;
	uw->fp_steps = uw->cfi_steps = 0;
	uw->end_module = NULL;
	for (size_t i = 0; i < n && i < FW_USTACK_MAX && uw->n < UNWIND_MAX; i++) {
		uw->pcs[uw->n] = h->ustack[i];
		uw->sps[uw->n] = 0;
		uw->signal_frame[uw->n] = i == 0;
		uw->n++;
	}
	uw->fp_steps = uw->n ? (uint32_t)uw->n - 1 : 0;
	uw->end = UNWIND_END_COMPLETE;
}

size_t bpf_record_nkernel(const struct fw_sample_hdr *h)
{
	size_t n = h->kstack_bytes > 0 ? (size_t)h->kstack_bytes / 8 : 0;

	return n < FW_KSTACK_MAX ? n : FW_KSTACK_MAX;
}
