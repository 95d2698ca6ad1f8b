/*
 * framewalk offset probe: compiled once per interpreter against that
 * interpreter's own headers (with -DPy_BUILD_CORE) by gen-offsets.py. It
 * prints one line per fact:
 *
 *     <key> <offset-or-value> <size>
 *
 * "st.*" keys are offsetof()/sizeof() in the interpreter's real structs
 * (size = sizeof the field, so the generator can compute read sizes);
 * "dbg.*" keys (3.13+) are offsetof() inside _Py_DebugOffsets, i.e. where a
 * uint64 sits in the block at the start of _PyRuntime; "blk.*" (3.14+) are
 * the values the interpreter's own _Py_DebugOffsets_INIT stores there;
 * "val.*" are plain constants. A key the version lacks is not printed.
 */
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION < 8
#error "unsupported Python version"
#endif
#define MINOR PY_MINOR_VERSION

#include <frameobject.h>
#if MINOR == 8
#include "internal/pycore_pystate.h"      /* _PyRuntimeState, PyInterpreterState */
#else
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#endif
#if MINOR >= 11
#include "internal/pycore_frame.h"        /* _PyInterpreterFrame, PyFrameObject */
#include "internal/pycore_code.h"
#endif
#if MINOR >= 10
#include "internal/pycore_moduleobject.h" /* PyModuleObject */
#endif
#if MINOR >= 11
#include "internal/pycore_dict.h"         /* PyDictKeysObject, PyDictValues */
#include "internal/pycore_object.h"       /* MANAGED_DICT_OFFSET */
#endif
#include "internal/pycore_context.h"      /* PyContext, PyContextVar, PyHamtObject */
#include "internal/pycore_hamt.h"
#if MINOR >= 14
#include "internal/pycore_interpframe_structs.h"
#include "internal/pycore_stackref.h"     /* Py_TAG_BITS */
#include "internal/pycore_debug_offsets.h"
#endif

/*
 * Python/hamt.c (not installed), the same from 3.8 to 3.15: the array and
 * collision nodes of a HAMT, and before 3.12 (when pycore_hamt.h got it)
 * the bitmap node. Checked live by verify_live.py (a lookup through them).
 */
#define FW_HAMT_ARRAY_NODE_SIZE 32
typedef struct {
	PyObject_HEAD
	PyHamtNode *a_array[FW_HAMT_ARRAY_NODE_SIZE];
	Py_ssize_t a_count;
} fw_hamt_array_node;
typedef struct {
	PyObject_VAR_HEAD
	int32_t c_hash;
	PyObject *c_array[1];
} fw_hamt_collision_node;
#if MINOR >= 12
typedef PyHamtNode_Bitmap fw_hamt_bitmap_node;
#else
typedef struct {
	PyObject_VAR_HEAD
	uint32_t b_bitmap;
	PyObject *b_array[1];
} fw_hamt_bitmap_node;
#endif

#define FSIZE(T, f) sizeof(((T *)0)->f)
#define ST(key, T, f) \
	printf("st.%s %zu %zu\n", key, offsetof(T, f), FSIZE(T, f))
/* a flexible array member: its offset only */
#define STO(key, T, f) printf("st.%s %zu 0\n", key, offsetof(T, f))
#define SZ(key, T) printf("st.%s %zu 0\n", key, sizeof(T))
#define VAL(key, v) printf("val.%s %lld 0\n", key, (long long)(v))
#define DBG(key, f) \
	printf("dbg.%s %zu %zu\n", #key, offsetof(_Py_DebugOffsets, f), \
	       FSIZE(_Py_DebugOffsets, f));

/* (our name, member of _Py_DebugOffsets), for 3.13+ */
#if MINOR >= 14
#define DEBUG_FIELDS_314(X) \
	X(interp_code_object_generation, interpreter_state.code_object_generation) \
	X(set_used, set_object.used) \
	X(set_table, set_object.table) \
	X(set_mask, set_object.mask) \
	X(gen_iframe, gen_object.gi_iframe) \
	X(gen_frame_state, gen_object.gi_frame_state) \
	X(frame_stackpointer, interpreter_frame.stackpointer) \
	X(code_tlbc, code_object.co_tlbc) \
	X(frame_tlbc_index, interpreter_frame.tlbc_index) \
	X(dbg_eval_breaker, debugger_support.eval_breaker) \
	X(dbg_remote_support, debugger_support.remote_debugger_support) \
	X(dbg_remote_enabled, debugger_support.remote_debugging_enabled) \
	X(dbg_pending_call, debugger_support.debugger_pending_call) \
	X(dbg_script_path, debugger_support.debugger_script_path) \
	X(dbg_script_path_size, debugger_support.debugger_script_path_size)
#else
#define DEBUG_FIELDS_314(X)
#endif
#if MINOR >= 15
#define DEBUG_FIELDS_315(X) \
	X(tstate_holds_gil, thread_state.holds_gil) \
	X(unicode_compactunicodeobject_size, unicode_object.compactunicodeobject_size) \
	X(type_basicsize, type_object.tp_basicsize) \
	X(type_dictoffset, type_object.tp_dictoffset) \
	X(heaptype_cached_keys, heap_type_object.ht_cached_keys) \
	X(tstate_curexc, thread_state.current_exception) \
	X(tstate_exc_state, thread_state.exc_state) \
	X(exc_item_value, err_stackitem.exc_value) \
	X(tstate_gil_requested, thread_state.gil_requested)
#else
#define DEBUG_FIELDS_315(X)
#endif
#define DEBUG_FIELDS(X) \
	X(version, version) \
	X(free_threaded, free_threaded) \
	X(runtime_size, runtime_state.size) \
	X(runtime_interpreters_head, runtime_state.interpreters_head) \
	X(interp_size, interpreter_state.size) \
	X(interp_next, interpreter_state.next) \
	X(interp_threads_head, interpreter_state.threads_head) \
	X(interp_id, interpreter_state.id) \
	X(interp_ceval_gil, interpreter_state.ceval_gil) \
	X(interp_gil_runtime_state, interpreter_state.gil_runtime_state) \
	X(interp_gil_runtime_state_locked, interpreter_state.gil_runtime_state_locked) \
	X(interp_gil_runtime_state_holder, interpreter_state.gil_runtime_state_holder) \
	X(tstate_size, thread_state.size) \
	X(tstate_next, thread_state.next) \
	X(tstate_interp, thread_state.interp) \
	X(tstate_current_frame, thread_state.current_frame) \
	X(tstate_thread_id, thread_state.thread_id) \
	X(tstate_native_thread_id, thread_state.native_thread_id) \
	X(tstate_datastack_chunk, thread_state.datastack_chunk) \
	X(frame_size, interpreter_frame.size) \
	X(frame_previous, interpreter_frame.previous) \
	X(frame_executable, interpreter_frame.executable) \
	X(frame_instr_ptr, interpreter_frame.instr_ptr) \
	X(frame_owner, interpreter_frame.owner) \
	X(code_size, code_object.size) \
	X(code_filename, code_object.filename) \
	X(code_name, code_object.name) \
	X(code_qualname, code_object.qualname) \
	X(code_linetable, code_object.linetable) \
	X(code_firstlineno, code_object.firstlineno) \
	X(code_co_code_adaptive, code_object.co_code_adaptive) \
	X(object_type, pyobject.ob_type) \
	X(bytes_size, bytes_object.ob_size) \
	X(bytes_data, bytes_object.ob_sval) \
	X(unicode_size, unicode_object.size) \
	X(unicode_state, unicode_object.state) \
	X(unicode_length, unicode_object.length) \
	X(unicode_asciiobject_size, unicode_object.asciiobject_size) \
	X(interp_gc, interpreter_state.gc) \
	X(gc_collecting, gc.collecting) \
	X(interp_modules, interpreter_state.imports_modules) \
	X(type_name, type_object.tp_name) \
	X(type_flags, type_object.tp_flags) \
	X(tuple_items, tuple_object.ob_item) \
	X(tuple_size, tuple_object.ob_size) \
	X(list_items, list_object.ob_item) \
	X(list_size, list_object.ob_size) \
	X(dict_keys, dict_object.ma_keys) \
	X(dict_values, dict_object.ma_values) \
	X(long_tag, long_object.lv_tag) \
	X(long_digits, long_object.ob_digit) \
	X(frame_localsplus, interpreter_frame.localsplus) \
	DEBUG_FIELDS_314(X) \
	DEBUG_FIELDS_315(X)

int main(void)
{
	VAL("version_hex", PY_VERSION_HEX);
	VAL("minor", MINOR);
	VAL("pointer_size", sizeof(void *));
#ifdef Py_GIL_DISABLED
	VAL("free_threaded", 1);
#else
	VAL("free_threaded", 0);
#endif
#ifdef Py_DEBUG
	VAL("py_debug", 1);
#else
	VAL("py_debug", 0);
#endif

	/* _PyRuntimeState / PyInterpreterState */
	ST("runtime_interpreters_head", _PyRuntimeState, interpreters.head);
	ST("interp_next", PyInterpreterState, next);
	ST("interp_id", PyInterpreterState, id);
#if MINOR <= 10
	ST("interp_threads_head", PyInterpreterState, tstate_head);
#else
	ST("interp_threads_head", PyInterpreterState, threads.head);
#endif

	/* PyThreadState */
	ST("tstate_next", PyThreadState, next);
	ST("tstate_interp", PyThreadState, interp);
	ST("tstate_thread_id", PyThreadState, thread_id);
#if MINOR <= 10
	ST("tstate_frame", PyThreadState, frame);
#elif MINOR <= 12
	ST("tstate_frame", PyThreadState, cframe);
	ST("cframe_current_frame", _PyCFrame, current_frame);
#else
	ST("tstate_frame", PyThreadState, current_frame);
#endif
#if MINOR >= 11
	ST("tstate_native_thread_id", PyThreadState, native_thread_id);
	ST("tstate_datastack_chunk", PyThreadState, datastack_chunk);
	ST("chunk_size", _PyStackChunk, size);
	ST("chunk_data", _PyStackChunk, data);
#endif

	/* the cyclic garbage collector's "collecting" flag */
#if MINOR == 8
	ST("gc_collecting", _PyRuntimeState, gc.collecting);
#else
	ST("gc_collecting", PyInterpreterState, gc.collecting);
#endif

	/* frames */
#if MINOR <= 10
	ST("frame_previous", PyFrameObject, f_back);
	ST("frame_code", PyFrameObject, f_code);
	ST("frame_instr", PyFrameObject, f_lasti);
	ST("frame_gen", PyFrameObject, f_gen);
#else
	ST("frame_previous", _PyInterpreterFrame, previous);
#if MINOR <= 12
	ST("frame_code", _PyInterpreterFrame, f_code);
	ST("frame_instr", _PyInterpreterFrame, prev_instr);
#else
	ST("frame_code", _PyInterpreterFrame, f_executable);
	ST("frame_instr", _PyInterpreterFrame, instr_ptr);
#endif
	ST("frame_owner", _PyInterpreterFrame, owner);
#if MINOR == 11
	ST("frame_is_entry", _PyInterpreterFrame, is_entry);
#endif
	SZ("sizeof_interp_frame", _PyInterpreterFrame);
	VAL("owner_thread", FRAME_OWNED_BY_THREAD);
	VAL("owner_generator", FRAME_OWNED_BY_GENERATOR);
	VAL("owner_frame_object", FRAME_OWNED_BY_FRAME_OBJECT);
#if MINOR >= 12 && MINOR <= 13
	VAL("owner_shim", FRAME_OWNED_BY_CSTACK);
#elif MINOR >= 14
#if MINOR == 14
	VAL("owner_shim", FRAME_OWNED_BY_INTERPRETER);
	VAL("owner_cstack", FRAME_OWNED_BY_CSTACK);
#else
	VAL("owner_shim", FRAME_OWNED_BY_INTERPRETER);
#endif
#endif
#endif
#if MINOR >= 14
	VAL("stackref_tag_bits", Py_TAG_BITS);
#endif
#if MINOR >= 14 && defined(Py_GIL_DISABLED)
	/* each thread's own copy of the bytecode: frame.tlbc_index into code.co_tlbc */
	ST("code_tlbc", PyCodeObject, co_tlbc);
	ST("frame_tlbc_index", _PyInterpreterFrame, tlbc_index);
	ST("codearray_size", _PyCodeArray, size);
	STO("codearray_entries", _PyCodeArray, entries);
#endif

	/* PyCodeObject */
	ST("code_filename", PyCodeObject, co_filename);
	ST("code_name", PyCodeObject, co_name);
	ST("code_firstlineno", PyCodeObject, co_firstlineno);
#if MINOR <= 9
	ST("code_linetable", PyCodeObject, co_lnotab);
#else
	ST("code_linetable", PyCodeObject, co_linetable);
#endif
#if MINOR >= 11
	ST("code_qualname", PyCodeObject, co_qualname);
	ST("code_code_adaptive", PyCodeObject, co_code_adaptive);
#endif

	/* objects */
	ST("object_type", PyObject, ob_type);
#ifndef Py_GIL_DISABLED
	ST("object_refcnt", PyObject, ob_refcnt);   /* free-threaded: two counts, none read */
#endif
	ST("varobject_size", PyVarObject, ob_size);
	ST("bytes_size", PyBytesObject, ob_base.ob_size);
	ST("bytes_data", PyBytesObject, ob_sval);
	ST("unicode_length", PyASCIIObject, length);
	/* state is a bitfield struct: offsetof works on the struct member */
	ST("unicode_state", PyASCIIObject, state);
	SZ("unicode_ascii_data", PyASCIIObject);
	SZ("unicode_compact_data", PyCompactUnicodeObject);

	/* GIL */
#if MINOR <= 11
	ST("gil_holder", _PyRuntimeState, ceval.gil.last_holder);
	ST("gil_locked", _PyRuntimeState, ceval.gil.locked);
#else
	ST("interp_gil_ptr", PyInterpreterState, ceval.gil);
	ST("interp_gil_embedded", PyInterpreterState, _gil);
	ST("gil_holder", struct _gil_runtime_state, last_holder);
	ST("gil_locked", struct _gil_runtime_state, locked);
#endif

	/*
	 * Where a thread waiting for the GIL sleeps: the condition variable
	 * and mutex inside struct _gil_runtime_state (3.8-3.11 at runtime +
	 * gil_base, 3.12+ inside the struct interp->ceval.gil points at).
	 */
#if MINOR <= 11
	ST("gil_cond", _PyRuntimeState, ceval.gil.cond);
	ST("gil_mutex", _PyRuntimeState, ceval.gil.mutex);
#else
	ST("gil_cond", struct _gil_runtime_state, cond);
	ST("gil_mutex", struct _gil_runtime_state, mutex);
#endif
	VAL("gil_cond_size", sizeof(PyCOND_T));

	/* exceptions: the item sys.exc_info() reads, and one being raised */
	ST("tstate_exc_info", PyThreadState, exc_info);
	ST("exc_item_value", _PyErr_StackItem, exc_value);
	ST("exc_item_previous", _PyErr_StackItem, previous_item);
#if MINOR <= 11
	ST("tstate_curexc", PyThreadState, curexc_type);
#else
	ST("tstate_curexc", PyThreadState, current_exception);
#endif
#if MINOR >= 15
	ST("tstate_gil_requested", PyThreadState, gil_requested);
#endif

	/* objects python/objects.c reads (sys.modules, threading, asyncio) */
#if MINOR <= 11
	ST("interp_modules", PyInterpreterState, modules);
#else
	ST("interp_modules", PyInterpreterState, imports.modules);
#endif
#if MINOR >= 10
	ST("module_dict", PyModuleObject, md_dict);
#else
	/* Objects/moduleobject.c (not installed): PyObject_HEAD, md_dict */
	VAL("module_dict", sizeof(PyObject));
#endif
	ST("type_name", PyTypeObject, tp_name);
	ST("type_basicsize", PyTypeObject, tp_basicsize);
	ST("type_flags", PyTypeObject, tp_flags);
	ST("type_dictoffset", PyTypeObject, tp_dictoffset);
	ST("type_base", PyTypeObject, tp_base);
	ST("heaptype_cached_keys", PyHeapTypeObject, ht_cached_keys);
	VAL("tpflags_heaptype", Py_TPFLAGS_HEAPTYPE);
	VAL("tpflags_long_subclass", Py_TPFLAGS_LONG_SUBCLASS);
	VAL("tpflags_unicode_subclass", Py_TPFLAGS_UNICODE_SUBCLASS);
	VAL("tpflags_dict_subclass", Py_TPFLAGS_DICT_SUBCLASS);
	VAL("tpflags_tuple_subclass", Py_TPFLAGS_TUPLE_SUBCLASS);
	VAL("tpflags_list_subclass", Py_TPFLAGS_LIST_SUBCLASS);
#if MINOR >= 11
	VAL("tpflags_managed_dict", Py_TPFLAGS_MANAGED_DICT);
#endif
#if MINOR == 12
	/* _PyObject_DictOrValuesPointer(): a dict, or values tagged with bit 0 */
	VAL("managed_dict_offset", -3 * (long long)sizeof(PyObject *));
#elif MINOR >= 11
	VAL("managed_dict_offset", MANAGED_DICT_OFFSET);
#endif
#if MINOR == 11
	/* _PyObject_ValuesPointer(): the values pointer just below the dict's */
	VAL("managed_values_offset", -4 * (long long)sizeof(PyObject *));
#endif
#if MINOR >= 13
	VAL("tpflags_inline_values", Py_TPFLAGS_INLINE_VALUES);
	ST("dictvalues_valid", PyDictValues, valid);
#endif
	ST("dict_used", PyDictObject, ma_used);
	ST("dict_keys", PyDictObject, ma_keys);
	ST("dict_values", PyDictObject, ma_values);
#if MINOR >= 11
	ST("dk_log2_size", PyDictKeysObject, dk_log2_size);
	ST("dk_log2_index_bytes", PyDictKeysObject, dk_log2_index_bytes);
	ST("dk_kind", PyDictKeysObject, dk_kind);
	ST("dk_nentries", PyDictKeysObject, dk_nentries);
	STO("dk_indices", PyDictKeysObject, dk_indices);
	VAL("dk_entry_size", sizeof(PyDictKeyEntry));
	VAL("dk_unicode_entry_size", sizeof(PyDictUnicodeEntry));
	VAL("dk_kind_general", DICT_KEYS_GENERAL);
	ST("dictvalues_values", PyDictValues, values);
#else
	/*
	 * Objects/dict-common.h (not installed) of 3.8-3.10: dk_refcnt,
	 * dk_size, dk_lookup, dk_usable, dk_nentries, dk_indices[]; entries
	 * are {me_hash, me_key, me_value}. Checked live by verify_live.py.
	 */
	VAL("dk_size", sizeof(Py_ssize_t));
	VAL("dk_nentries", 4 * sizeof(Py_ssize_t));
	VAL("dk_indices", 5 * sizeof(Py_ssize_t));
	VAL("dk_entry_size", 3 * sizeof(PyObject *));
#endif
	ST("set_used", PySetObject, used);
	ST("set_mask", PySetObject, mask);
	ST("set_table", PySetObject, table);
	VAL("set_entry_size", sizeof(setentry));
	ST("list_size", PyListObject, ob_base.ob_size);
	ST("list_items", PyListObject, ob_item);
	ST("tuple_size", PyTupleObject, ob_base.ob_size);
	ST("tuple_items", PyTupleObject, ob_item);
#if MINOR <= 11
	ST("long_size", PyLongObject, ob_base.ob_size);
	ST("long_digits", PyLongObject, ob_digit);
#else
	ST("long_tag", PyLongObject, long_value.lv_tag);
	ST("long_digits", PyLongObject, long_value.ob_digit);
#endif
	VAL("long_shift", PyLong_SHIFT);
	ST("weakref_object", PyWeakReference, wr_object);
	ST("method_func", PyMethodObject, im_func);
	ST("method_self", PyMethodObject, im_self);
	ST("cfunction_self", PyCFunctionObject, m_self);
	ST("function_closure", PyFunctionObject, func_closure);
	ST("cell_ref", PyCellObject, ob_ref);

	/* coroutines and generators: their frame, its locals and value stack */
#if MINOR <= 10
	ST("gen_frame", PyGenObject, gi_frame);
	ST("frame_localsplus", PyFrameObject, f_localsplus);
#if MINOR <= 9
	ST("frame_stacktop", PyFrameObject, f_stacktop);
#else
	ST("frame_stackdepth", PyFrameObject, f_stackdepth);
	ST("frame_valuestack", PyFrameObject, f_valuestack);
#endif
#else
	ST("gen_iframe", PyGenObject, gi_iframe);
	ST("gen_frame_state", PyGenObject, gi_frame_state);
	ST("frame_localsplus", _PyInterpreterFrame, localsplus);
#if MINOR <= 13
	ST("frame_stacktop", _PyInterpreterFrame, stacktop);
#else
	ST("frame_stackpointer", _PyInterpreterFrame, stackpointer);
#endif
	VAL("frame_state_created", FRAME_CREATED);
	VAL("frame_state_suspended", FRAME_SUSPENDED);
#if MINOR >= 13
	VAL("frame_state_suspended_yield_from", FRAME_SUSPENDED_YIELD_FROM);
#endif
	VAL("frame_state_executing", FRAME_EXECUTING);
	VAL("frame_state_cleared", FRAME_CLEARED);
#endif

	/*
	 * contextvars (python/contextvars.c): a thread's current context, its
	 * variables (an immutable HAMT keyed by ContextVar), a variable's
	 * default and cached hash, and the cache of its value CPython's own
	 * ContextVar.get() trusts. No _Py_DebugOffsets block has them.
	 */
	ST("tstate_context", PyThreadState, context);
	ST("tstate_context_ver", PyThreadState, context_ver);
	ST("tstate_id", PyThreadState, id);
	ST("context_vars", PyContext, ctx_vars);
	ST("contextvar_default", PyContextVar, var_default);
	ST("contextvar_hash", PyContextVar, var_hash);
#ifndef Py_GIL_DISABLED
	/* the value last set or read, valid for thread state id tsid at context_ver tsver */
	ST("contextvar_cached", PyContextVar, var_cached);
	ST("contextvar_cached_tsid", PyContextVar, var_cached_tsid);
	ST("contextvar_cached_tsver", PyContextVar, var_cached_tsver);
#endif
	ST("hamt_root", PyHamtObject, h_root);
	ST("hamt_count", PyHamtObject, h_count);
	ST("hamt_bitmap_size", fw_hamt_bitmap_node, ob_base.ob_size);
	ST("hamt_bitmap_bitmap", fw_hamt_bitmap_node, b_bitmap);
	STO("hamt_bitmap_array", fw_hamt_bitmap_node, b_array);
	STO("hamt_array_array", fw_hamt_array_node, a_array);
	ST("hamt_array_count", fw_hamt_array_node, a_count);
	ST("hamt_collision_size", fw_hamt_collision_node, ob_base.ob_size);
	ST("hamt_collision_hash", fw_hamt_collision_node, c_hash);
	STO("hamt_collision_array", fw_hamt_collision_node, c_array);
	VAL("hamt_array_node_size", FW_HAMT_ARRAY_NODE_SIZE);

#if MINOR >= 13
	/* _Py_DebugOffsets: positions of the uint64 values in the block */
	SZ("sizeof_debug_offsets", _Py_DebugOffsets);
	SZ("sizeof_tstate", PyThreadState);
	SZ("sizeof_code", PyCodeObject);
	DEBUG_FIELDS(DBG)
#if MINOR >= 14
	{
		/*
		 * 3.14+ expose the block's initializer: print the values the
		 * interpreter itself puts in the block, so the generator can
		 * check that each position maps to the struct field we think.
		 */
		static const _Py_DebugOffsets blk =
			_Py_DebugOffsets_INIT(_Py_Debug_Cookie);
#define BLK(key, f) printf("blk.%s %llu 0\n", #key, \
			   (unsigned long long)blk.f);
		DEBUG_FIELDS(BLK)
	}
#endif
#endif
	return 0;
}
