/*
 * Turning a 3.13+ target's own _Py_DebugOffsets block into struct
 * py_offsets. The block is target memory, so every value is range-checked
 * before it becomes an offset the reader will trust.
 */
#include <errno.h>
#include <stddef.h>

#include "python/discover.h"
#include "util/util.h"

#define MAX_STRUCT_OFFSET 4096

struct block {
	const uint8_t *data;
	size_t len;
	int bad;
};

/* The uint64 at position pos of the block, as an offset below limit. */
static int32_t field(struct block *b, int32_t pos, uint64_t limit)
{
	uint64_t v;

	if (pos == PYOFF_NONE)
		return PYOFF_NONE;
	if (pos < 0 || (size_t)pos + 8 > b->len) {
		b->bad = 1;
		return PYOFF_NONE;
	}
	memcpy(&v, b->data + pos, sizeof(v));
	if (v >= limit) {
		b->bad = 1;
		return PYOFF_NONE;
	}
	return (int32_t)v;
}

/* Smallest read size covering the given offsets (each an 8-byte field). */
static int32_t cover(const int32_t *offs, size_t n)
{
	int32_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (offs[i] != PYOFF_NONE && offs[i] + 8 > m)
			m = offs[i] + 8;
	return m;
}

/*
 * The objects layout: the minor version's header values, each replaced by
 * the target's own where its block has the field. A block value that is out
 * of range marks the block bad, like every other.
 */
static void objects_from_debug(const struct py_debug_offsets_layout *l, struct block *b,
			       struct py_objects_layout *obj)
{
	static const struct {
		size_t pos, field;
		uint64_t limit;
	} map[] = {
#define M(name, limit) { offsetof(struct py_debug_offsets_layout, pos_##name), \
			 offsetof(struct py_objects_layout, name), limit }
		M(interp_modules, MAX_STRUCT_OFFSET * 64),
		M(type_name, 512), M(type_flags, 512), M(type_basicsize, 512),
		M(type_dictoffset, 512), M(heaptype_cached_keys, 2048),
		M(tuple_items, 128), M(tuple_size, 128), M(list_items, 128), M(list_size, 128),
		M(dict_keys, 128), M(dict_values, 128), M(long_tag, 128), M(long_digits, 128),
		M(frame_localsplus, 256), M(frame_stackpointer, 256),
		M(set_used, 128), M(set_table, 128), M(set_mask, 128),
		M(gen_iframe, 256), M(gen_frame_state, 256),
		M(tstate_curexc, MAX_STRUCT_OFFSET), M(exc_item_value, 64),
		M(tstate_gil_requested, MAX_STRUCT_OFFSET),
#undef M
	};

	*obj = l->objects;
	for (size_t i = 0; obj->known && i < ARRAY_SIZE(map); i++) {
		int32_t pos, v;

		memcpy(&pos, (const char *)l + map[i].pos, sizeof(pos));
		if (pos == PYOFF_NONE)
			continue;
		v = field(b, pos, map[i].limit);
		if (v != PYOFF_NONE)
			memcpy((char *)obj + map[i].field, &v, sizeof(v));
	}
}

const struct py_debug_offsets_layout *py_debug_layout_of_block(int minor, const uint8_t *block,
							       size_t len)
{
	const struct py_debug_offsets_layout *l = py_debug_layout(minor, 0);

	if (!l || len < (size_t)l->block_size)
		return NULL;
	if (l->free_threaded != PYOFF_NONE && block[l->free_threaded])
		return py_debug_layout(minor, 1);
	return l;
}

int py_offsets_from_debug(const struct py_debug_offsets_layout *l,
			  const uint8_t *data, size_t len, struct py_offsets *o)
{
	struct block b = { data, len, 0 };
	uint64_t version;

	if (len < (size_t)l->block_size || l->version + 8 > (int32_t)len)
		return -EPROTO;
	memcpy(&version, data + l->version, sizeof(version));
	memset(o, 0, sizeof(*o));
	o->version_hex = (uint32_t)version;
	o->frame_model = PY_FRAMES_INTERP_312;
	o->instr_model = PY_INSTR_POINTER;
	o->line_model = PY_LINES_LOCATIONS;
	o->free_threaded = l->free_threaded != PYOFF_NONE && data[l->free_threaded] != 0;

	o->runtime_interpreters_head = field(&b, l->runtime_interpreters_head, MAX_STRUCT_OFFSET * 4);
	o->interp_next = field(&b, l->interp_next, MAX_STRUCT_OFFSET * 64);
	o->interp_threads_head = field(&b, l->interp_threads_head, MAX_STRUCT_OFFSET * 64);
	o->interp_id = field(&b, l->interp_id, MAX_STRUCT_OFFSET * 64);

	o->tstate_next = field(&b, l->tstate_next, MAX_STRUCT_OFFSET);
	o->tstate_interp = field(&b, l->tstate_interp, MAX_STRUCT_OFFSET);
	o->tstate_frame = field(&b, l->tstate_current_frame, MAX_STRUCT_OFFSET);
	o->cframe_current_frame = PYOFF_NONE;
	o->tstate_thread_id = field(&b, l->tstate_thread_id, MAX_STRUCT_OFFSET);
	o->tstate_native_thread_id = field(&b, l->tstate_native_thread_id, MAX_STRUCT_OFFSET);
	o->tstate_datastack_chunk = field(&b, l->tstate_datastack_chunk, MAX_STRUCT_OFFSET);
	{
		/* datastack_chunk is read on its own when needed: keep the per-tick read small */
		int32_t t[] = { o->tstate_next, o->tstate_interp, o->tstate_frame,
				o->tstate_thread_id, o->tstate_native_thread_id };
		o->tstate_size = cover(t, ARRAY_SIZE(t));
	}

	/*
	 * Free-threaded 3.14+: a frame runs its thread's own copy of the
	 * bytecode, entry tlbc_index of the code's co_tlbc array (entry 0 is
	 * co_code_adaptive). A GIL build's block holds 0 for both.
	 */
	o->code_tlbc = o->frame_tlbc_index = PYOFF_NONE;
	o->codearray_size = o->codearray_entries = PYOFF_NONE;
	if (o->free_threaded && l->code_tlbc != PYOFF_NONE && l->frame_tlbc_index != PYOFF_NONE &&
	    l->codearray_size_field != PYOFF_NONE && l->codearray_entries != PYOFF_NONE) {
		o->code_tlbc = field(&b, l->code_tlbc, 512);
		o->frame_tlbc_index = field(&b, l->frame_tlbc_index, 256);
		o->codearray_size = l->codearray_size_field;
		o->codearray_entries = l->codearray_entries;
		if (o->code_tlbc <= 0 || o->frame_tlbc_index <= 0)
			b.bad = 1;
	}
	o->frame_previous = field(&b, l->frame_previous, 256);
	o->frame_code = field(&b, l->frame_executable, 256);
	o->frame_instr = field(&b, l->frame_instr_ptr, 256);
	o->frame_owner = field(&b, l->frame_owner, 256);
	o->frame_is_entry = PYOFF_NONE;
	o->frame_gen = PYOFF_NONE;
	o->frame_code_tagged = l->executable_tag_mask ? l->executable_tag_mask : PYOFF_NONE;
	o->frame_owner_generator = l->frame_owner_generator;
	o->frame_owner_shim = l->frame_owner_shim;
	o->frame_owner_last = l->frame_owner_last;
	o->frame_exec_any = 1;
	/* a GIL build's objects begin with their count (reader_codes.c obj_state) */
	o->object_refcnt = o->free_threaded ? PYOFF_NONE : 0;
	o->varobject_size = l->varobject_size;
	{
		int32_t t[] = { o->frame_previous, o->frame_code, o->frame_instr, o->frame_owner,
				o->frame_tlbc_index };
		o->frame_size = cover(t, ARRAY_SIZE(t));
	}

	o->code_filename = field(&b, l->code_filename, 512);
	o->code_name = field(&b, l->code_name, 512);
	o->code_qualname = field(&b, l->code_qualname, 512);
	o->code_linetable = field(&b, l->code_linetable, 512);
	o->code_firstlineno = field(&b, l->code_firstlineno, 512);
	o->code_code_adaptive = field(&b, l->code_co_code_adaptive, 1024);
	o->object_type = field(&b, l->object_type, 64);
	{
		int32_t t[] = { o->code_filename, o->code_name, o->code_qualname,
				o->code_linetable, o->code_firstlineno, o->object_type,
				o->code_tlbc };
		o->code_size = cover(t, ARRAY_SIZE(t));
	}

	o->bytes_size = field(&b, l->bytes_size, 128);
	o->bytes_data = field(&b, l->bytes_data, 128);
	o->unicode_length = field(&b, l->unicode_length, 128);
	o->unicode_state = field(&b, l->unicode_state, 128);
	o->unicode_ascii_data = field(&b, l->unicode_asciiobject_size, 128);
	if (l->unicode_compactunicodeobject_size != PYOFF_NONE)
		o->unicode_compact_data = field(&b, l->unicode_compactunicodeobject_size, 128);
	else
		o->unicode_compact_data = l->unicode_compact_data;
	o->chunk_size = l->chunk_size_field;
	o->chunk_data = l->chunk_header_size;

	o->gc_in_interp = 1;
	o->gc_collecting = PYOFF_NONE;
	if (l->interp_gc != PYOFF_NONE && l->gc_collecting != PYOFF_NONE) {
		int32_t gc = field(&b, l->interp_gc, MAX_STRUCT_OFFSET * 64);
		int32_t col = field(&b, l->gc_collecting, MAX_STRUCT_OFFSET);
		if (gc != PYOFF_NONE && col != PYOFF_NONE)
			o->gc_collecting = gc + col;
	}
	o->gil_in_interp = 1;
	o->interp_gil_ptr = PYOFF_NONE;
	o->gil_holder = field(&b, l->interp_gil_runtime_state_holder, MAX_STRUCT_OFFSET * 64);
	o->gil_locked = field(&b, l->interp_gil_runtime_state_locked, MAX_STRUCT_OFFSET * 64);
	/* No GIL: its holder field is never set (nor when an extension turns one on: not read). */
	if (o->free_threaded)
		o->gil_holder = o->gil_locked = PYOFF_NONE;

	objects_from_debug(l, &b, &o->objects);
	/*
	 * The headers give the GIL's condition variable and mutex inside struct
	 * _gil_runtime_state; the block gives the holder from the interpreter
	 * (the main interpreter's own _gil): the same base as the holder.
	 */
	{
		int32_t gil = field(&b, l->interp_gil_runtime_state, MAX_STRUCT_OFFSET * 64);

		if (gil != PYOFF_NONE && o->objects.gil_cond >= 0 && o->objects.gil_mutex >= 0) {
			o->objects.gil_cond += gil;
			o->objects.gil_mutex += gil;
		} else {
			o->objects.gil_cond = o->objects.gil_mutex = PYOFF_NONE;
		}
	}

	if (b.bad || o->tstate_frame == PYOFF_NONE || o->frame_code == PYOFF_NONE ||
	    o->frame_previous == PYOFF_NONE || o->code_name == PYOFF_NONE ||
	    o->code_linetable == PYOFF_NONE || o->unicode_ascii_data <= 0 ||
	    o->unicode_compact_data <= 0 || o->code_size <= 0 || o->frame_size <= 0 ||
	    o->tstate_size <= 0)
		return -EPROTO;
	/* The string header fields must lie inside the header the reader copies. */
	if (o->unicode_length < 0 || o->unicode_state < 0 ||
	    o->unicode_length + 8 > o->unicode_ascii_data ||
	    o->unicode_state + 4 > o->unicode_ascii_data ||
	    o->unicode_ascii_data > o->unicode_compact_data)
		return -EPROTO;
	/* The walkers read at most these sizes in one piece. */
	if (o->frame_size > 256 || o->code_size > 512 || o->tstate_size > 1024 ||
	    o->unicode_compact_data > 128)
		return -EPROTO;
	return 0;
}
