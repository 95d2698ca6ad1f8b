/*
 * The layout of a CPython interpreter as an external reader needs it: where
 * the thread list, frame chain, code objects and strings live, for one minor
 * version. 3.8-3.12 come from built-in tables (offsets_table.c, generated from
 * each version's own headers); 3.13+ are read from the target's own
 * _Py_DebugOffsets block (debug_offsets.c), so every number here is data, not
 * code. A field that a version does not have is PYOFF_NONE.
 */
#ifndef FRAMEWALK_PYTHON_OFFSETS_H
#define FRAMEWALK_PYTHON_OFFSETS_H

#include <stdint.h>

#define PYOFF_NONE (-1)

/* How a thread's frame chain is built. */
enum py_frame_model {
	PY_FRAMES_OBJECTS = 1,   /* <= 3.10: PyFrameObject chain via f_back */
	PY_FRAMES_INTERP_311,    /* 3.11: _PyInterpreterFrame, is_entry flag */
	PY_FRAMES_INTERP_312,    /* 3.12+: _PyInterpreterFrame, owner == CSTACK shim */
};

/* How the instruction field of a frame counts. */
enum py_instr_model {
	PY_INSTR_LASTI_BYTES = 1,  /* 3.8/3.9: f_lasti is a byte offset */
	PY_INSTR_LASTI_UNITS,      /* 3.10: f_lasti counts 2-byte code units */
	PY_INSTR_POINTER,          /* 3.11+: pointer into co_code_adaptive */
};

/* How co_linetable / co_lnotab is encoded. */
enum py_line_model {
	PY_LINES_LNOTAB = 1,   /* <= 3.9 */
	PY_LINES_310,          /* 3.10 co_linetable */
	PY_LINES_LOCATIONS,    /* 3.11+ location table */
};

struct py_offsets {
	uint32_t version_hex;         /* PY_VERSION_HEX of the layout (major.minor) */
	enum py_frame_model frame_model;
	enum py_instr_model instr_model;
	enum py_line_model line_model;
	int free_threaded;

	/* _PyRuntimeState */
	int32_t runtime_interpreters_head;
	/* PyInterpreterState */
	int32_t interp_next;
	int32_t interp_threads_head;
	int32_t interp_id;
	/* PyThreadState */
	int32_t tstate_size;          /* bytes to read to cover every field below */
	int32_t tstate_next;
	int32_t tstate_interp;
	int32_t tstate_frame;         /* <=3.10 frame, 3.11/3.12 cframe, 3.13+ current_frame */
	int32_t cframe_current_frame; /* 3.11/3.12 only: _PyCFrame.current_frame */
	int32_t tstate_thread_id;     /* pthread_t */
	int32_t tstate_native_thread_id; /* 3.11+ */
	int32_t tstate_datastack_chunk;  /* 3.11+ */
	/* frame (PyFrameObject <=3.10, _PyInterpreterFrame 3.11+) */
	int32_t frame_size;           /* bytes to read to cover every field below */
	int32_t frame_previous;
	int32_t frame_code;           /* f_code / f_executable */
	int32_t frame_instr;          /* f_lasti / prev_instr / instr_ptr */
	int32_t frame_owner;          /* 3.11+ (char) */
	int32_t frame_is_entry;       /* 3.11 only (char) */
	int32_t frame_code_tagged;    /* 3.14+: f_executable is a _PyStackRef */
	/* PyCodeObject */
	int32_t code_size;            /* bytes to read to cover every field below */
	int32_t code_filename;
	int32_t code_name;
	int32_t code_qualname;        /* 3.11+ */
	int32_t code_linetable;       /* co_lnotab (<=3.9) or co_linetable */
	int32_t code_firstlineno;
	int32_t code_code_adaptive;   /* 3.11+: start of the instructions */
	/* PyObject */
	int32_t object_type;          /* ob_type */
	/* PyBytesObject */
	int32_t bytes_size;           /* ob_size */
	int32_t bytes_data;           /* ob_sval */
	/* PyUnicodeObject */
	int32_t unicode_length;
	int32_t unicode_state;
	int32_t unicode_ascii_data;   /* sizeof(PyASCIIObject) */
	int32_t unicode_compact_data; /* sizeof(PyCompactUnicodeObject) */
	/* 3.11+ _PyStackChunk header */
	int32_t chunk_size;           /* the chunk's size field */
	/* GIL (for later modes): runtime or interpreter relative */
	int32_t gil_holder;           /* offset of the last holder from gil_base */
	int32_t gil_locked;
	int32_t gil_in_interp;        /* 1: gil fields are interpreter-relative */
	/* added by tools/gen-offsets (fields appended at the end) */
	int32_t interp_gil_ptr;       /* 3.12: offsetof(PyInterpreterState, ceval.gil),
	                               * a struct _gil_runtime_state * to follow;
	                               * gil_holder/gil_locked are then offsets
	                               * inside that struct. PYOFF_NONE <= 3.11 */
	int32_t chunk_data;           /* 3.11+: offsetof(_PyStackChunk, data), where
	                               * the first frame of a chunk starts */
	int32_t frame_gen;            /* <= 3.10: PyFrameObject.f_gen (NULL unless a
	                               * generator's frame) */
	int32_t gc_collecting;        /* the collector's int "collecting" flag */
	int32_t gc_in_interp;         /* 1: gc_collecting is interpreter-relative
	                               * (3.9+), 0: runtime-relative (3.8) */
};

/*
 * The built-in table for a minor version (3.8-3.12), or NULL when there is
 * none. minor is e.g. 12 for 3.12.
 */
const struct py_offsets *py_offsets_builtin(int minor);

/*
 * The layout of _Py_DebugOffsets for a minor version that has one (13+):
 * the byte offset, inside the block, of each value a reader needs. A value is
 * read from the target as a uint64 at that position. PYOFF_NONE: absent.
 */
struct py_debug_offsets_layout {
	int minor;
	int32_t block_size;           /* bytes of the block to read */
	int32_t version;
	int32_t free_threaded;
	int32_t runtime_interpreters_head;
	int32_t interp_next;
	int32_t interp_threads_head;
	int32_t interp_id;
	int32_t interp_gil_runtime_state;       /* interp offset of gil */
	int32_t interp_gil_runtime_state_locked;
	int32_t interp_gil_runtime_state_holder;
	int32_t tstate_size;
	int32_t tstate_next;
	int32_t tstate_interp;
	int32_t tstate_current_frame;
	int32_t tstate_thread_id;
	int32_t tstate_native_thread_id;
	int32_t tstate_datastack_chunk;
	int32_t frame_size;
	int32_t frame_previous;
	int32_t frame_executable;
	int32_t frame_instr_ptr;
	int32_t frame_owner;
	int32_t code_size;
	int32_t code_filename;
	int32_t code_name;
	int32_t code_qualname;
	int32_t code_linetable;
	int32_t code_firstlineno;
	int32_t code_co_code_adaptive;
	int32_t object_type;
	int32_t bytes_size;
	int32_t bytes_data;
	int32_t unicode_size;
	int32_t unicode_state;
	int32_t unicode_length;
	int32_t unicode_asciiobject_size;

	/* added by tools/gen-offsets (fields appended at the end) */
	/* More block positions (PYOFF_NONE where the version's block lacks it): */
	int32_t interp_ceval_gil;     /* interp offset of ceval.gil (a pointer) */
	int32_t tstate_holds_gil;     /* 3.15+: tstate offset of holds_gil (int) */
	int32_t interp_code_object_generation; /* 3.14+: cache invalidation */
	int32_t unicode_compactunicodeobject_size; /* 3.15+ */
	/*
	 * Plain values taken from the headers of that minor version: these are
	 * NOT positions in the block, the block has no entry for them.
	 */
	int32_t chunk_size_field;     /* offsetof(_PyStackChunk, size) */
	int32_t chunk_header_size;    /* offsetof(_PyStackChunk, data) */
	int32_t executable_tag_mask;  /* low bits to clear from f_executable:
	                               * 0 for 3.13 (PyObject *), Py_TAG_BITS of
	                               * the default build for 3.14+ (_PyStackRef) */
	int32_t unicode_compact_data; /* sizeof(PyCompactUnicodeObject) */
	int32_t frame_owner_shim;     /* owner >= this: not a Python frame (the
	                               * C-stack / interpreter shim entry frame) */
	int32_t interp_gc;            /* block position: interp offset of its gc state */
	int32_t gc_collecting;        /* block position: "collecting" inside the gc state */
};

/* The _Py_DebugOffsets layout for a minor version (13+), or NULL. */
const struct py_debug_offsets_layout *py_debug_layout(int minor);

#endif
