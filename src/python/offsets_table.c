/*
 * GENERATED FILE -- DO NOT EDIT BY HAND.
 * Regenerate with tools/gen-offsets/gen-offsets.py (see its README.md).
 *
 * CPython struct layouts for framewalk (x86-64, default GIL builds), taken
 * from each interpreter's OWN headers: tools/gen-offsets/probe.c is compiled
 * against every version's include directory with -DPy_BUILD_CORE and prints
 * offsetof()/sizeof(); nothing here is typed in by hand.
 *
 * py_offsets_builtin(): built-in tables for 3.8 - 3.12, whose runtimes carry
 * no self-description. *_size fields are the smallest byte count covering
 * every listed field of that struct. PYOFF_NONE: the version has no such
 * field.
 *
 * GIL fields:
 *   3.8 - 3.11: the GIL lives in _PyRuntime (runtime->ceval.gil), so
 *     gil_in_interp = 0 and gil_holder / gil_locked are offsets from the
 *     start of _PyRuntime of ceval.gil.last_holder (a PyThreadState *) and
 *     ceval.gil.locked (an int).
 *   3.12: each interpreter has interp->ceval.gil, a POINTER to its
 *     struct _gil_runtime_state. gil_in_interp = 1; the reader must
 *       gil = *(void **)(interp + interp_gil_ptr);
 *       holder = *(PyThreadState **)(gil + gil_holder);
 *       locked = *(int *)(gil + gil_locked);
 *     (gil_holder / gil_locked are offsets inside struct _gil_runtime_state.)
 *     For the main interpreter the pointer targets the struct embedded in
 *     the interpreter itself (interp->_gil), but following the pointer is
 *     correct for subinterpreters sharing the main GIL as well.
 *
 * py_debug_layout(): for 3.13+, where each needed value sits inside the
 * _Py_DebugOffsets block at the start of _PyRuntime (read a uint64 there).
 */
#include <stddef.h>

#include "python/offsets.h"


/* from pyenv 3.8.18 headers */
static const struct py_offsets py38 = {
	.version_hex = 0x03080000,
	.frame_model = PY_FRAMES_OBJECTS,
	.instr_model = PY_INSTR_LASTI_BYTES,
	.line_model = PY_LINES_LNOTAB,
	.free_threaded = 0,
	.runtime_interpreters_head = 32,
	.interp_next = 0,
	.interp_threads_head = 8,
	.interp_id = 16,
	.tstate_size = 184,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 24,
	.cframe_current_frame = PYOFF_NONE,
	.tstate_thread_id = 176,
	.tstate_native_thread_id = PYOFF_NONE,
	.tstate_datastack_chunk = PYOFF_NONE,
	.frame_size = 108,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instr = 104,
	.frame_owner = PYOFF_NONE,
	.frame_is_entry = PYOFF_NONE,
	.frame_code_tagged = 0,
	.code_size = 128,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = PYOFF_NONE,
	.code_linetable = 120,
	.code_firstlineno = 40,
	.code_code_adaptive = PYOFF_NONE,
	.object_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.chunk_size = PYOFF_NONE,
	.gil_holder = 1160,
	.gil_locked = 1168,
	.gil_in_interp = 0,
	.interp_gil_ptr = PYOFF_NONE,
	.chunk_data = PYOFF_NONE,
	.frame_gen = 96,
};

/* from pyenv 3.9.18 headers */
static const struct py_offsets py39 = {
	.version_hex = 0x03090000,
	.frame_model = PY_FRAMES_OBJECTS,
	.instr_model = PY_INSTR_LASTI_BYTES,
	.line_model = PY_LINES_LNOTAB,
	.free_threaded = 0,
	.runtime_interpreters_head = 32,
	.interp_next = 0,
	.interp_threads_head = 8,
	.interp_id = 24,
	.tstate_size = 184,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 24,
	.cframe_current_frame = PYOFF_NONE,
	.tstate_thread_id = 176,
	.tstate_native_thread_id = PYOFF_NONE,
	.tstate_datastack_chunk = PYOFF_NONE,
	.frame_size = 108,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instr = 104,
	.frame_owner = PYOFF_NONE,
	.frame_is_entry = PYOFF_NONE,
	.frame_code_tagged = 0,
	.code_size = 128,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = PYOFF_NONE,
	.code_linetable = 120,
	.code_firstlineno = 40,
	.code_code_adaptive = PYOFF_NONE,
	.object_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.chunk_size = PYOFF_NONE,
	.gil_holder = 360,
	.gil_locked = 368,
	.gil_in_interp = 0,
	.interp_gil_ptr = PYOFF_NONE,
	.chunk_data = PYOFF_NONE,
	.frame_gen = 96,
};

/* from pyenv 3.10.13 headers */
static const struct py_offsets py310 = {
	.version_hex = 0x030a0000,
	.frame_model = PY_FRAMES_OBJECTS,
	.instr_model = PY_INSTR_LASTI_UNITS,
	.line_model = PY_LINES_310,
	.free_threaded = 0,
	.runtime_interpreters_head = 32,
	.interp_next = 0,
	.interp_threads_head = 8,
	.interp_id = 24,
	.tstate_size = 184,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 24,
	.cframe_current_frame = PYOFF_NONE,
	.tstate_thread_id = 176,
	.tstate_native_thread_id = PYOFF_NONE,
	.tstate_datastack_chunk = PYOFF_NONE,
	.frame_size = 100,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instr = 96,
	.frame_owner = PYOFF_NONE,
	.frame_is_entry = PYOFF_NONE,
	.frame_code_tagged = 0,
	.code_size = 128,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = PYOFF_NONE,
	.code_linetable = 120,
	.code_firstlineno = 40,
	.code_code_adaptive = PYOFF_NONE,
	.object_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.chunk_size = PYOFF_NONE,
	.gil_holder = 360,
	.gil_locked = 368,
	.gil_in_interp = 0,
	.interp_gil_ptr = PYOFF_NONE,
	.chunk_data = PYOFF_NONE,
	.frame_gen = 88,
};

/* from pyenv 3.11.7 headers */
static const struct py_offsets py311 = {
	.version_hex = 0x030b0000,
	.frame_model = PY_FRAMES_INTERP_311,
	.instr_model = PY_INSTR_POINTER,
	.line_model = PY_LINES_LOCATIONS,
	.free_threaded = 0,
	.runtime_interpreters_head = 40,
	.interp_next = 0,
	.interp_threads_head = 16,
	.interp_id = 48,
	.tstate_size = 304,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 56,
	.cframe_current_frame = 8,
	.tstate_thread_id = 152,
	.tstate_native_thread_id = 160,
	.tstate_datastack_chunk = 296,
	.frame_size = 70,
	.frame_previous = 48,
	.frame_code = 32,
	.frame_instr = 56,
	.frame_owner = 69,
	.frame_is_entry = 68,
	.frame_code_tagged = 0,
	.code_size = 185,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 72,
	.code_code_adaptive = 184,
	.object_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.chunk_size = 8,
	.gil_holder = 368,
	.gil_locked = 376,
	.gil_in_interp = 0,
	.interp_gil_ptr = PYOFF_NONE,
	.chunk_data = 24,
	.frame_gen = PYOFF_NONE,
};

/* from pyenv 3.12.1 headers */
static const struct py_offsets py312 = {
	.version_hex = 0x030c0000,
	.frame_model = PY_FRAMES_INTERP_312,
	.instr_model = PY_INSTR_POINTER,
	.line_model = PY_LINES_LOCATIONS,
	.free_threaded = 0,
	.runtime_interpreters_head = 40,
	.interp_next = 0,
	.interp_threads_head = 72,
	.interp_id = 8,
	.tstate_size = 240,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 56,
	.cframe_current_frame = 0,
	.tstate_thread_id = 136,
	.tstate_native_thread_id = 144,
	.tstate_datastack_chunk = 232,
	.frame_size = 71,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_instr = 56,
	.frame_owner = 70,
	.frame_is_entry = PYOFF_NONE,
	.frame_code_tagged = 0,
	.code_size = 193,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 68,
	.code_code_adaptive = 192,
	.object_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 40,
	.unicode_compact_data = 56,
	.chunk_size = 8,
	.gil_holder = 8,
	.gil_locked = 16,
	.gil_in_interp = 1,
	.interp_gil_ptr = 384,
	.chunk_data = 24,
	.frame_gen = PYOFF_NONE,
};

const struct py_offsets *py_offsets_builtin(int minor)
{
	switch (minor) {
	case 8: return &py38;
	case 9: return &py39;
	case 10: return &py310;
	case 11: return &py311;
	case 12: return &py312;
	default: return NULL;
	}
}

/* from debian 3.13.18 headers (identical to pyenv 3.13.0: checked by the generator) */
static const struct py_debug_offsets_layout dbg313 = {
	.minor = 13,
	.block_size = 584,
	.version = 8,
	.free_threaded = 16,
	.runtime_interpreters_head = 40,
	.interp_next = 64,
	.interp_threads_head = 72,
	.interp_id = 56,
	.interp_gil_runtime_state = 120,
	.interp_gil_runtime_state_locked = 136,
	.interp_gil_runtime_state_holder = 144,
	.tstate_size = 152,
	.tstate_next = 168,
	.tstate_interp = 176,
	.tstate_current_frame = 184,
	.tstate_thread_id = 192,
	.tstate_native_thread_id = 200,
	.tstate_datastack_chunk = 208,
	.frame_size = 224,
	.frame_previous = 232,
	.frame_executable = 240,
	.frame_instr_ptr = 248,
	.frame_owner = 264,
	.code_size = 272,
	.code_filename = 280,
	.code_name = 288,
	.code_qualname = 296,
	.code_linetable = 304,
	.code_firstlineno = 312,
	.code_co_code_adaptive = 344,
	.object_type = 360,
	.bytes_size = 520,
	.bytes_data = 528,
	.unicode_size = 536,
	.unicode_state = 544,
	.unicode_length = 552,
	.unicode_asciiobject_size = 560,
	.interp_ceval_gil = 112,
	.tstate_holds_gil = PYOFF_NONE,
	.interp_code_object_generation = PYOFF_NONE,
	.unicode_compactunicodeobject_size = PYOFF_NONE,
	/* plain values from the headers, not block positions */
	.chunk_size_field = 8,
	.chunk_header_size = 24,
	.executable_tag_mask = 0,
	.unicode_compact_data = 56,
	.frame_owner_shim = 3,
};

/* from debian 3.14.10 headers */
static const struct py_debug_offsets_layout dbg314 = {
	.minor = 14,
	.block_size = 760,
	.version = 8,
	.free_threaded = 16,
	.runtime_interpreters_head = 40,
	.interp_next = 64,
	.interp_threads_head = 72,
	.interp_id = 56,
	.interp_gil_runtime_state = 128,
	.interp_gil_runtime_state_locked = 144,
	.interp_gil_runtime_state_holder = 152,
	.tstate_size = 176,
	.tstate_next = 192,
	.tstate_interp = 200,
	.tstate_current_frame = 208,
	.tstate_thread_id = 216,
	.tstate_native_thread_id = 224,
	.tstate_datastack_chunk = 232,
	.frame_size = 248,
	.frame_previous = 256,
	.frame_executable = 264,
	.frame_instr_ptr = 272,
	.frame_owner = 288,
	.code_size = 312,
	.code_filename = 320,
	.code_name = 328,
	.code_qualname = 336,
	.code_linetable = 344,
	.code_firstlineno = 352,
	.code_co_code_adaptive = 384,
	.object_type = 408,
	.bytes_size = 600,
	.bytes_data = 608,
	.unicode_size = 616,
	.unicode_state = 624,
	.unicode_length = 632,
	.unicode_asciiobject_size = 640,
	.interp_ceval_gil = 120,
	.tstate_holds_gil = PYOFF_NONE,
	.interp_code_object_generation = 160,
	.unicode_compactunicodeobject_size = PYOFF_NONE,
	/* plain values from the headers, not block positions */
	.chunk_size_field = 8,
	.chunk_header_size = 24,
	.executable_tag_mask = 3,
	.unicode_compact_data = 56,
	.frame_owner_shim = 3,
};

/* from debian 3.15.2 headers */
static const struct py_debug_offsets_layout dbg315 = {
	.minor = 15,
	.block_size = 888,
	.version = 8,
	.free_threaded = 16,
	.runtime_interpreters_head = 40,
	.interp_next = 64,
	.interp_threads_head = 72,
	.interp_id = 56,
	.interp_gil_runtime_state = 128,
	.interp_gil_runtime_state_locked = 144,
	.interp_gil_runtime_state_holder = 152,
	.tstate_size = 176,
	.tstate_next = 192,
	.tstate_interp = 200,
	.tstate_current_frame = 208,
	.tstate_thread_id = 240,
	.tstate_native_thread_id = 248,
	.tstate_datastack_chunk = 256,
	.frame_size = 312,
	.frame_previous = 320,
	.frame_executable = 328,
	.frame_instr_ptr = 336,
	.frame_owner = 352,
	.code_size = 376,
	.code_filename = 384,
	.code_name = 392,
	.code_qualname = 400,
	.code_linetable = 408,
	.code_firstlineno = 416,
	.code_co_code_adaptive = 448,
	.object_type = 472,
	.bytes_size = 696,
	.bytes_data = 704,
	.unicode_size = 712,
	.unicode_state = 720,
	.unicode_length = 728,
	.unicode_asciiobject_size = 736,
	.interp_ceval_gil = 120,
	.tstate_holds_gil = 272,
	.interp_code_object_generation = 160,
	.unicode_compactunicodeobject_size = 744,
	/* plain values from the headers, not block positions */
	.chunk_size_field = 8,
	.chunk_header_size = 24,
	.executable_tag_mask = 3,
	.unicode_compact_data = 56,
	.frame_owner_shim = 3,
};

const struct py_debug_offsets_layout *py_debug_layout(int minor)
{
	switch (minor) {
	case 13: return &dbg313;
	case 14: return &dbg314;
	case 15: return &dbg315;
	default: return NULL;
	}
}
