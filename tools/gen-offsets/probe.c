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
#if MINOR >= 14
#include "internal/pycore_interpframe_structs.h"
#include "internal/pycore_stackref.h"     /* Py_TAG_BITS */
#include "internal/pycore_debug_offsets.h"
#endif

#define FSIZE(T, f) sizeof(((T *)0)->f)
#define ST(key, T, f) \
	printf("st.%s %zu %zu\n", key, offsetof(T, f), FSIZE(T, f))
#define SZ(key, T) printf("st.%s %zu 0\n", key, sizeof(T))
#define VAL(key, v) printf("val.%s %lld 0\n", key, (long long)(v))
#define DBG(key, f) \
	printf("dbg.%s %zu %zu\n", #key, offsetof(_Py_DebugOffsets, f), \
	       FSIZE(_Py_DebugOffsets, f));

/* (our name, member of _Py_DebugOffsets), for 3.13+ */
#if MINOR >= 14
#define DEBUG_FIELDS_314(X) \
	X(interp_code_object_generation, interpreter_state.code_object_generation)
#else
#define DEBUG_FIELDS_314(X)
#endif
#if MINOR >= 15
#define DEBUG_FIELDS_315(X) \
	X(tstate_holds_gil, thread_state.holds_gil) \
	X(unicode_compactunicodeobject_size, unicode_object.compactunicodeobject_size)
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
