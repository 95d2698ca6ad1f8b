/*
 * Implementation of merge.h. Which native frames fold away is decided by
 * their position relative to the Python frames and by their module, not by
 * their names, so a stripped interpreter reads like a named one (README,
 * "Which native frames are shown"):
 *
 *   outer   (between the thread's entry and the first Python frame): the
 *           entry is kept; C-library start-up frames directly inside it and
 *           the interpreter's frames fold, except the first interpreter frame
 *           after a frame of another module (where C called into Python:
 *           Py_BytesMain, a thread's start routine, an embedding program)
 *           when it has a name (unnamed, it says no more than the Python
 *           frame after it);
 *   between (two Python frames): the interpreter's frames and its JIT code
 *           fold; other modules (an extension calling back into Python) stay;
 *   inner   (below the innermost Python frame): everything stays (the
 *           builtin or library doing the work) except JIT code and the named
 *           call helpers of symbolize.c.
 *
 * The interpreter's module is the one whose frame evaluator claimed Python
 * frames in this stack. native_all keeps every frame.
 */
#include "sampler/merge.h"
#include "util/strbuf.h"
#include "util/util.h"

enum frame_class {
	FC_OTHER = 0,
	FC_INTERP,      /* in the interpreter's own ELF */
	FC_CRT,         /* the C library or the dynamic loader */
	FC_JIT,         /* anonymous executable code called from the interpreter */
};

uint32_t merge_python_frame(struct profile *p, const struct py_frame_info *f)
{
	struct py_code *code = (struct py_code *)f->code;

	if (!code->user_name) {
		code->user_name = profile_cstring(p, code->name);
		code->user_file = code->marker ? 0 : profile_cstring(p, code->file);
	}
	if (code->marker)
		return profile_frame(p, FRAME_OTHER, code->user_name, 0, 0);
	return profile_frame(p, FRAME_PYTHON, code->user_name, code->user_file, f->line);
}

static uint32_t native_frame(struct profile *p, const struct native_symbol *sym)
{
	uint32_t name = profile_cstring(p, sym->name);
	uint32_t file = sym->source ? profile_cstring(p, sym->source) : 0;
	uint32_t module = sym->module ? profile_cstring(p, sym->module->path) : 0;
	uint32_t bid = sym->module && sym->module->build_id[0] ?
		profile_cstring(p, sym->module->build_id) : 0;

	uint32_t id = profile_frame_module(p, FRAME_NATIVE, name, file, sym->line, module, bid);

	if (sym->linkage)
		profile_frame_set_system_name(p, id, profile_cstring(p, sym->linkage));
	return id;
}

/*
 * A native frame into out (innermost first): the functions inlined at its
 * address, then its own function. Returns the new depth.
 */
static size_t emit_native(struct profile *p, const struct native_symbol *sym, uint32_t *out,
			  size_t n, size_t max)
{
	for (size_t k = 0; k < sym->ninl && n < max; k++) {
		const struct native_inline *in = &sym->inl[k];
		struct native_symbol as = *sym;

		as.name = in->name;
		as.linkage = in->linkage;
		as.source = in->source;
		as.line = in->line;
		as.inl = NULL;
		as.ninl = 0;
		out[n++] = native_frame(p, &as);
	}
	if (n < max)
		out[n++] = native_frame(p, sym);
	return n;
}

/* A JIT frame (native_all): "[jit] NAME" after the Python function it runs. */
static uint32_t jit_frame(struct profile *p, const struct py_frame_info *running)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t id;

	strbuf_addstr(&sb, "[jit]");
	if (running && running->code && running->code->name)
		strbuf_addf(&sb, " %s", running->code->name);
	id = profile_frame_module(p, FRAME_NATIVE, profile_cstring(p, sb.buf), 0, 0,
				  profile_cstring(p, "[jit]"), 0);
	strbuf_release(&sb);
	return id;
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

/* The C library or the dynamic loader (glibc, musl), by file name. */
static int c_runtime(const struct fw_module *m)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "libpthread.so", "libpthread-", "ld-linux", "ld-musl", "libc.musl",
	};

	for (size_t i = 0; m && i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(m->name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/*
 * Per native frame: how many Python frames it evaluates (claims, -1 when it
 * is no evaluator) and its class. Returns the cursor after the last claim.
 */
static void classify_frames(const struct merge_input *in, int16_t *claims, uint8_t *cls)
{
	const struct unwind_result *uw = in->native;
	const struct fw_module *interp = NULL;
	size_t cursor = 0;

	for (size_t i = 0; i < uw->n; i++) {
		claims[i] = -1;
		if (!runs_python(in, i, cursor))
			continue;
		claims[i] = 0;
		while (cursor < in->npy) {
			claims[i]++;
			if (in->py[cursor++].entry)
				break;
		}
		if (!interp)
			interp = in->syms[i].module;
	}
	for (size_t i = uw->n; i-- > 0;) {
		const struct native_symbol *sym = &in->syms[i];

		if (interp && sym->module == interp)
			cls[i] = FC_INTERP;
		else if (sym->is_anon)
			/* JIT code when the nearest named caller is the interpreter. */
			cls[i] = i + 1 < uw->n && (cls[i + 1] == FC_INTERP || cls[i + 1] == FC_JIT) ?
				FC_JIT : FC_OTHER;
		else if (c_runtime(sym->module))
			cls[i] = FC_CRT;
		else
			cls[i] = FC_OTHER;
	}
}

/* Outer segment: does frame i (not the outermost) fold? */
static int outer_folds(const uint8_t *cls, const struct native_symbol *sym, size_t i, size_t n)
{
	if (cls[i] == FC_INTERP)
		/* Kept where C called into Python, when it has a name to say so. */
		return cls[i + 1] == FC_INTERP || sym->is_unnamed;
	if (cls[i] == FC_CRT) {
		/* Start-up code only: C-library frames up to the entry. */
		for (size_t k = i + 1; k + 1 < n; k++)
			if (cls[k] != FC_CRT)
				return 0;
		return 1;
	}
	return cls[i] == FC_JIT;
}

size_t merge_stack(struct profile *p, const struct merge_input *in, uint32_t *out, size_t max,
		   size_t *leftover)
{
	int16_t claims[UNWIND_MAX];
	uint8_t cls[UNWIND_MAX];
	size_t n = 0, cursor = 0, nn = in->native ? in->native->n : 0;

	if (nn > UNWIND_MAX)
		nn = UNWIND_MAX;
	/* Innermost first into out, reversed at the end. */
	if (in->wait && n < max)
		out[n++] = profile_frame(p, FRAME_OTHER, profile_cstring(p, in->wait), 0, 0);
	if (in->marker && n < max)
		out[n++] = profile_frame(p, FRAME_OTHER, profile_cstring(p, in->marker), 0, 0);
	if (in->gc && n < max)
		out[n++] = profile_frame(p, FRAME_OTHER, profile_cstring(p, "<GC>"), 0, 0);
	for (size_t k = 0; k < in->nkernel && n < max; k++)
		out[n++] = kernel_frame(p, in->kernel[k]);
	if (nn)
		classify_frames(in, claims, cls);
	for (size_t i = 0; i < nn && n < max; i++) {
		const struct native_symbol *sym = &in->syms[i];
		int fold;

		if (claims[i] >= 0) {
			/* This evaluator call ran Python frames up to an entry frame. */
			for (int k = 0; k < claims[i] && n < max; k++)
				out[n++] = merge_python_frame(p, &in->py[cursor++]);
			if (in->native_all)
				n = emit_native(p, sym, out, n, max);
			continue;
		}
		if (in->native_all) {
			if (cls[i] == FC_JIT)
				out[n++] = jit_frame(p, cursor < in->npy ? &in->py[cursor] : NULL);
			else
				n = emit_native(p, sym, out, n, max);
			continue;
		}
		if (!in->npy)
			fold = 0;
		else if (cls[i] == FC_JIT)
			fold = 1;
		else if (cursor == 0)
			fold = sym->is_internal;
		else if (cursor < in->npy)
			fold = cls[i] == FC_INTERP || sym->is_internal;
		else
			fold = i + 1 < nn && outer_folds(cls, sym, i, nn);
		if (!fold)
			n = emit_native(p, sym, out, n, max);
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
