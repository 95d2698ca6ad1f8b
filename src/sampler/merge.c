/* Implementation of merge.h. */
#include "sampler/merge.h"
#include "util/util.h"

uint32_t merge_python_frame(struct profile *p, const struct py_frame_info *f)
{
	struct py_code *code = (struct py_code *)f->code;

	if (!code->user_name) {
		code->user_name = profile_cstring(p, code->name);
		code->user_file = profile_cstring(p, code->file);
	}
	return profile_frame(p, FRAME_PYTHON, code->user_name, code->user_file, f->line);
}

static uint32_t native_frame(struct profile *p, const struct native_symbol *sym)
{
	uint32_t name = profile_cstring(p, sym->name);
	uint32_t file = sym->source ? profile_cstring(p, sym->source) : 0;
	uint32_t module = sym->module ? profile_cstring(p, sym->module->path) : 0;
	uint32_t bid = sym->module && sym->module->build_id[0] ?
		profile_cstring(p, sym->module->build_id) : 0;

	return profile_frame_module(p, FRAME_NATIVE, name, file, sym->line, module, bid);
}

static uint32_t kernel_frame(struct profile *p, const char *name)
{
	return profile_frame(p, FRAME_KERNEL, profile_cstring(p, name), 0, 0);
}

/*
 * Does native frame i evaluate the next group of Python frames? 3.12+ tell
 * exactly: the group's C-stack entry frame lies inside frame i's stack
 * memory. Otherwise (and for groups without one) the evaluator's name says.
 */
static int runs_python(const struct merge_input *in, size_t i, size_t cursor)
{
	const struct unwind_result *uw = in->native;
	uint64_t lo = uw->sps[i], hi = i + 1 < uw->n ? uw->sps[i + 1] : UINT64_MAX;

	for (size_t k = cursor; k < in->npy; k++) {
		if (in->py[k].entry) {
			if (in->py[k].shim)
				return in->py[k].shim >= lo && in->py[k].shim < hi;
			break;
		}
	}
	return in->syms[i].is_eval;
}

size_t merge_stack(struct profile *p, const struct merge_input *in, uint32_t *out, size_t max,
		   size_t *leftover)
{
	size_t n = 0, cursor = 0;

	/* Innermost first into out, reversed at the end. */
	if (in->wait && n < max)
		out[n++] = profile_frame(p, FRAME_OTHER, profile_cstring(p, in->wait), 0, 0);
	if (in->gc && n < max)
		out[n++] = profile_frame(p, FRAME_OTHER, profile_cstring(p, "<GC>"), 0, 0);
	for (size_t k = 0; k < in->nkernel && n < max; k++)
		out[n++] = kernel_frame(p, in->kernel[k]);
	if (in->native) {
		for (size_t i = 0; i < in->native->n && n < max; i++) {
			const struct native_symbol *sym = &in->syms[i];

			if (runs_python(in, i, cursor)) {
				/* This evaluator call ran Python frames up to an entry frame. */
				while (cursor < in->npy && n < max) {
					int entry = in->py[cursor].entry;
					out[n++] = merge_python_frame(p, &in->py[cursor++]);
					if (entry)
						break;
				}
				if (in->native_all && n < max)
					out[n++] = native_frame(p, sym);
				continue;
			}
			if (sym->is_internal && !in->native_all && cursor < in->npy)
				continue;
			out[n++] = native_frame(p, sym);
		}
	}
	*leftover = in->native ? in->npy - cursor : 0;
	/* Python frames no evaluator frame claimed stay outermost, in order. */
	while (cursor < in->npy && n < max)
		out[n++] = merge_python_frame(p, &in->py[cursor++]);
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}
