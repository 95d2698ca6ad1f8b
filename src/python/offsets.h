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

/* How a dict's keys object is laid out. */
enum py_dict_model {
	PY_DICT_NONE = 0,
	PY_DICT_SIZE,          /* <= 3.10: dk_size, entries {hash, key, value} */
	PY_DICT_LOG2,          /* 3.11+: dk_log2_size, dk_kind (unicode entries {key, value}) */
};

/* Where an instance of a heap type keeps its attributes when the type manages them. */
enum py_managed_model {
	PY_MANAGED_NONE = 0,   /* <= 3.10: a dict at tp_dictoffset */
	PY_MANAGED_311,        /* a dict pointer and a values pointer below the object */
	PY_MANAGED_312,        /* one word below the object: a dict, or values | 1 */
	PY_MANAGED_313,        /* a dict pointer below, or values inline at tp_basicsize */
};

/*
 * Objects read beside the frames (python/objects.c and the readers built on
 * it: thread names, asyncio tasks, exception and GIL state). Offsets are
 * from the start of the object, *_below are bytes below it, tpflags_* are
 * tp_flags bits (0: the version has no such flag).
 */
struct py_objects_layout {
	int known;                    /* 0: no layout for this version */
	/* PyInterpreterState / PyThreadState */
	int32_t interp_modules;       /* sys.modules (a dict) */
	int32_t tstate_exc_info;      /* _PyErr_StackItem *: what sys.exc_info() reads */
	int32_t exc_item_value;
	int32_t exc_item_previous;
	int32_t tstate_curexc;        /* the exception being raised: curexc_type / current_exception */
	int32_t tstate_gil_requested; /* 3.15+: an int */
	/* the GIL's condition variable and mutex, from the same base as gil_holder
	 * (3.13+: made so by debug_offsets.c, the headers' are inside the GIL) */
	int32_t gil_cond, gil_mutex, gil_cond_size;
	int32_t module_dict;          /* PyModuleObject.md_dict */
	/* PyTypeObject, PyHeapTypeObject */
	int32_t type_name, type_basicsize, type_flags, type_dictoffset, type_base;
	int32_t heaptype_cached_keys;
	uint32_t tpflags_heaptype;
	uint32_t tpflags_long, tpflags_unicode, tpflags_dict, tpflags_tuple, tpflags_list;
	uint32_t tpflags_managed_dict, tpflags_inline_values;
	enum py_managed_model managed_model;
	int32_t managed_dict_below, managed_values_below;
	int32_t dictvalues_values, dictvalues_valid;
	/* PyDictObject and its keys */
	enum py_dict_model dict_model;
	int32_t dict_used, dict_keys, dict_values;
	int32_t dk_size, dk_log2_size, dk_log2_index_bytes, dk_kind, dk_nentries, dk_indices;
	int32_t dk_entry_size, dk_unicode_entry_size;
	/* set, list, tuple, int */
	int32_t set_used, set_mask, set_table, set_entry_size;
	int32_t list_size, list_items, tuple_size, tuple_items;
	int32_t long_size;            /* <= 3.11: signed digit count */
	int32_t long_tag;             /* 3.12+: digits << 3 | sign */
	int32_t long_digits, long_shift;
	/* weak references, bound methods, builtin methods, functions, cells */
	int32_t weakref_object, method_func, method_self, cfunction_self;
	int32_t function_closure, cell_ref;
	/* generators and coroutines, and the frames they own */
	int32_t gen_frame;            /* <= 3.10: PyFrameObject * */
	int32_t gen_iframe;           /* 3.11+: the frame inside the object */
	int32_t gen_frame_state;      /* 3.11+: int8 */
	int32_t frame_localsplus;
	int32_t frame_stacktop_ptr;   /* 3.8/3.9: PyObject **f_stacktop */
	int32_t frame_stackdepth, frame_valuestack;  /* 3.10 */
	int32_t frame_stacktop;       /* 3.11-3.13: int, index into localsplus */
	int32_t frame_stackpointer;   /* 3.14+: _PyStackRef * */
	int has_frame_states;         /* 3.11+: the gi_frame_state values below */
	int has_yield_from_state;     /* 3.13+: FRAME_SUSPENDED_YIELD_FROM exists */
	int8_t state_created, state_suspended, state_suspended_yield_from;
	int8_t state_executing, state_cleared;
	/*
	 * contextvars (python/contextvars.c): a thread's current context
	 * (PyContext *, NULL until it uses one), the context's variables (an
	 * immutable HAMT keyed by ContextVar objects) and a variable's default
	 * and cached hash; the HAMT's nodes (Python/hamt.c): bitmap (size
	 * slots of key/value pairs, a NULL key's value is a sub-node), array
	 * (hamt_array_node_size sub-nodes by 5 bits of the hash) and collision
	 * (size slots of pairs that share one hash). A variable's cache
	 * (GIL builds only) holds its value for thread state tstate_id at
	 * tstate_context_ver, as ContextVar.get() uses it.
	 */
	int32_t tstate_context, tstate_context_ver, tstate_id;
	int32_t context_vars, contextvar_default, contextvar_hash;
	int32_t contextvar_cached, contextvar_cached_tsid, contextvar_cached_tsver;
	int32_t hamt_root, hamt_count;
	int32_t hamt_bitmap_size, hamt_bitmap_bitmap, hamt_bitmap_array;
	int32_t hamt_array_array, hamt_array_count;
	int32_t hamt_collision_size, hamt_collision_hash, hamt_collision_array;
	int32_t hamt_array_node_size;
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
	/* the values of _PyInterpreterFrame.owner (3.11+; PYOFF_NONE <= 3.10) */
	int32_t frame_owner_generator; /* FRAME_OWNED_BY_GENERATOR */
	int32_t frame_owner_shim;     /* owner >= this: not a Python frame (the
	                               * C-stack / interpreter shim entry frame,
	                               * 3.12+; PYOFF_NONE: the version has none) */
	int32_t frame_owner_last;     /* the highest owner value: above is torn */
	int32_t object_refcnt;        /* PyObject.ob_refcnt (read <= 3.10: a
	                               * released frame object has none) */
	int32_t varobject_size;       /* PyVarObject.ob_size: 3.11+ a code
	                               * object's count of code units */
	int frame_exec_any;           /* 1 (3.13+): a frame's f_executable may be
	                               * other than a code object (skipped) */
	/* free-threaded 3.14+: each thread runs its own copy of the bytecode */
	int32_t code_tlbc;            /* PyCodeObject.co_tlbc, a _PyCodeArray * */
	int32_t frame_tlbc_index;     /* _PyInterpreterFrame.tlbc_index (int32) */
	int32_t codearray_size;       /* _PyCodeArray.size (Py_ssize_t) */
	int32_t codearray_entries;    /* _PyCodeArray.entries: char *[size] */
	struct py_objects_layout objects;
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
	int32_t code_tlbc;            /* block position (3.14+; 0 in a GIL build's block) */
	int32_t frame_tlbc_index;     /* block position (3.14+; 0 in a GIL build's block) */
	/*
	 * 3.14+ debugger_support (PEP 768 remote execution; python/remote_exec.c):
	 * block positions of the thread state's eval_breaker and
	 * remote_debugger_support, the interpreter's config.remote_debug, the
	 * pending-call flag and script path inside remote_debugger_support, and
	 * the path buffer's size (a value in the block, not an offset).
	 */
	int32_t dbg_eval_breaker, dbg_remote_support, dbg_remote_enabled;
	int32_t dbg_pending_call, dbg_script_path, dbg_script_path_size;
	/* more plain values from the headers (struct py_offsets has the same) */
	int32_t frame_owner_generator;
	int32_t frame_owner_last;
	int32_t varobject_size;
	int32_t codearray_size_field; /* offsetof(_PyCodeArray, size): free-threaded 3.14+ */
	int32_t codearray_entries;    /* offsetof(_PyCodeArray, entries) */
	/*
	 * The objects layout from that minor version's headers, and where the
	 * block has the same values (positions, PYOFF_NONE where it has none):
	 * those are taken from the target's block instead.
	 */
	struct py_objects_layout objects;
	int32_t pos_interp_modules, pos_type_name, pos_type_flags, pos_type_basicsize;
	int32_t pos_type_dictoffset, pos_heaptype_cached_keys;
	int32_t pos_tuple_items, pos_tuple_size, pos_list_items, pos_list_size;
	int32_t pos_dict_keys, pos_dict_values, pos_long_tag, pos_long_digits;
	int32_t pos_frame_localsplus, pos_frame_stackpointer;
	int32_t pos_set_used, pos_set_table, pos_set_mask;
	int32_t pos_gen_iframe, pos_gen_frame_state;
	int32_t pos_tstate_curexc, pos_exc_item_value, pos_tstate_gil_requested;
};

/*
 * asyncio's C Future and Task (Modules/_asynciomodule.c; their structs are
 * in no installed header), measured in each interpreter by
 * tools/gen-offsets/asyncio_probe.py. 3.14+ also publish part of it in
 * their .AsyncioDebug section (python/asyncio.c reads and prefers that).
 */
struct py_asyncio_layout {
	int minor;
	int32_t future_size, task_size;   /* tp_basicsize of _asyncio.Future / Task */
	int32_t fut_loop, fut_callback0, fut_callbacks, fut_state;
	int32_t state_pending, state_cancelled, state_finished;
	int32_t task_fut_waiter, task_coro, task_name;
	int32_t task_context;             /* the task's own PyContext (task_context): the
	                                   * one it runs in once resumed */
	int32_t futureiter_future;        /* _asyncio.FutureIter: the future it awaits */
	int32_t yf_depth;                 /* a suspended coroutine's awaited object: this
	                                   * many slots below its value stack's top */
	int32_t wakeup_task;              /* 3.8/3.9 TaskWakeupMethWrapper's task;
	                                   * PYOFF_NONE: the wakeup is a builtin
	                                   * method (m_self is the task) */
};

/* The asyncio layout for a minor version, or NULL. */
const struct py_asyncio_layout *py_asyncio_layout(int minor);

/*
 * The _Py_DebugOffsets layout for a minor version (13+) of a GIL or a
 * free-threaded build, or NULL. The block's positions are the same in both:
 * either finds the block's free_threaded byte.
 */
const struct py_debug_offsets_layout *py_debug_layout(int minor, int free_threaded);

#endif
