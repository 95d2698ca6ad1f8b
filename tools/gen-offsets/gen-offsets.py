#!/usr/bin/env python3
"""
Regenerate src/python/offsets_table.c from each CPython's own headers.

For every input interpreter this compiles probe.c against that interpreter's
include directory with -DPy_BUILD_CORE, runs it, and collects offsetof() /
sizeof() facts ("st.*"), positions inside _Py_DebugOffsets ("dbg.*", 3.13+)
and, for 3.14+, the values the interpreter's own _Py_DebugOffsets_INIT puts
in the block ("blk.*"). It then checks what it can and writes the C tables.

Inputs (override with options or environment):
  pyenv root    $PYENV_ROOT, else `pyenv root`, else ~/.pyenv
                versions/{3.8.18,3.9.18,3.10.13,3.11.7,3.12.1,3.13.0}
  Debian root   $FRAMEWALK_SID_ROOT, else /var/cache/framewalk/sid, else
                /var/cache/framewalk/sid.tmp; headers for 3.13/3.14/3.15 in
                <root>/usr/include/python3.1X (+ x86_64-linux-gnu/python3.1X)

Usage:
  tools/gen-offsets/gen-offsets.py [--out FILE] [--check] [--verify-live]
  --check        do not write; fail if FILE differs from what would be written
  --verify-live  also run each pyenv interpreter (and, when runnable, each
                 Debian one) and walk its own runtime with the new offsets
                 through ctypes (see verify_live.py)
  --dump         print every probe fact as JSON and exit
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROBE = os.path.join(HERE, "probe.c")
DEFAULT_OUT = os.path.join(REPO, "src", "python", "offsets_table.c")
# the blocks the interpreters publish, for tests that craft a target's memory
BLOCKS_OUT = os.path.join(REPO, "tests", "unit", "debug_blocks.h")

PYENV_VERSIONS = ["3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"]
SID_MINORS = [13, 14, 15]
# The header directory of Debian's multiarch pyconfig.h (only x86-64's is
# installed in the sid root, whatever the target architecture).
MULTIARCH = "x86_64-linux-gnu"
ARM64_SYSROOT = os.environ.get("FRAMEWALK_ARM64_SYSROOT", "/var/cache/framewalk/arm64-sysroot")
# The architectures a table is made for: how the probe is compiled and run
# for it, and the file written. aarch64: Debian's cross compiler against the
# arm64 sysroot (scripts/arm64-sysroot.sh; glibc's own types: pthread_mutex_t
# is 48 bytes there, 40 on x86-64), run under qemu-user. CPython's headers
# and pyconfig.h are x86-64's: nothing in them that the probed structs use
# depends on the architecture (LP64 on both; the generator lists every fact
# that differs between the two, all of them behind glibc's types).
ARCHES = {
    "x86_64": {"cc": None, "cflags": [], "run": [], "multiarch": "x86_64-linux-gnu",
               "out": DEFAULT_OUT,
               "name": "x86-64"},
    "aarch64": {"cc": "aarch64-linux-gnu-gcc", "cflags": ["--sysroot=" + ARM64_SYSROOT],
                "run": ["qemu-aarch64-static", "-L", ARM64_SYSROOT],
                "multiarch": "aarch64-linux-gnu",
                "out": os.path.join(REPO, "src", "python", "offsets_table_aarch64.c"),
                "name": "aarch64"},
}
NONE = -1
FT_SUFFIX = " free-threaded"   # label of an input compiled with Py_GIL_DISABLED


def die(msg):
    sys.stderr.write("gen-offsets: error: %s\n" % msg)
    sys.exit(1)


def note(msg):
    sys.stderr.write("gen-offsets: %s\n" % msg)


def pyenv_root(arg):
    if arg:
        return arg
    if os.environ.get("PYENV_ROOT"):
        return os.environ["PYENV_ROOT"]
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return os.path.expanduser("~/.pyenv")


def sid_root(arg):
    if arg:
        return arg
    if os.environ.get("FRAMEWALK_SID_ROOT"):
        return os.environ["FRAMEWALK_SID_ROOT"]
    for r in ("/var/cache/framewalk/sid", "/var/cache/framewalk/sid.tmp"):
        if os.path.isdir(os.path.join(r, "usr", "include")):
            return r
    return "/var/cache/framewalk/sid"


def py_version_string(incdir):
    with open(os.path.join(incdir, "patchlevel.h")) as f:
        for line in f:
            if line.startswith("#define PY_VERSION ") or \
               line.startswith("#define PY_VERSION\t"):
                return line.split('"')[1]
    return "?"


def run_probe(tc, incdirs, label, tmp, defines=()):
    """tc: the toolchain, {"cc", "cflags", "run", "multiarch"} (ARCHES)."""
    exe = os.path.join(tmp, "probe-%s-%s" % (tc["multiarch"], label.replace(" ", "-")))
    cmd = [tc["cc"], "-std=gnu11", "-O0", "-DPy_BUILD_CORE", "-w"] + tc["cflags"]
    cmd += ["-D" + d for d in defines]
    cmd += ["-I" + d for d in incdirs]
    cmd += ["-o", exe, PROBE]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die("probe for %s failed to compile:\n%s\n%s" %
            (label, " ".join(cmd), r.stderr))
    out = subprocess.run(tc["run"] + [exe], capture_output=True, text=True, check=True)
    facts = {}
    for line in out.stdout.splitlines():
        key, val, size = line.split()
        facts[key] = (int(val), int(size))
    return facts


def probe_inputs(args, tmp, tc):
    """Returns {label: (minor, version string, incdir, facts)} as the
    toolchain tc compiles them."""
    res = {}
    proot = pyenv_root(args.pyenv_root)
    for v in PYENV_VERSIONS:
        mm = ".".join(v.split(".")[:2])
        inc = os.path.join(proot, "versions", v, "include", "python" + mm)
        if not os.path.isfile(os.path.join(inc, "Python.h")):
            die("missing headers for pyenv %s: %s" % (v, inc))
        label = "pyenv " + v
        facts = run_probe(tc, [inc], label, tmp)
        res[label] = (int(mm.split(".")[1]), py_version_string(inc), inc,
                      facts)
    sroot = sid_root(args.sid_root)
    for minor in SID_MINORS:
        mm = "3.%d" % minor
        inc = os.path.join(sroot, "usr", "include", "python" + mm)
        arch = os.path.join(sroot, "usr", "include", MULTIARCH, "python" + mm)
        if not os.path.isfile(os.path.join(inc, "Python.h")) or \
           not os.path.isfile(os.path.join(arch, "pyconfig.h")):
            die("missing Debian headers for %s under %s (is python%s-dev "
                "installed? set FRAMEWALK_SID_ROOT or --sid-root)" %
                (mm, sroot, mm))
        # Debian's pyconfig.h does #include <MULTIARCH/python3.X/...>, by the
        # compiler's architecture. Give the compiler only that directory
        # (x86-64's, the one installed) through a private shim, so the
        # compiler's libc headers are not replaced by the root's.
        shim = os.path.join(tmp, "shim-%s-%d" % (tc["multiarch"], minor))
        os.makedirs(os.path.join(shim, tc["multiarch"]))
        os.symlink(arch, os.path.join(shim, tc["multiarch"], "python" + mm))
        ver = py_version_string(inc)
        label = "debian " + ver
        facts = run_probe(tc, [inc, shim], label, tmp)
        res[label] = (minor, ver, inc, facts)
        # The same headers compiled as a free-threaded build's (Debian ships
        # no such build: the layout is what its own headers give it).
        label = "debian " + ver + FT_SUFFIX
        facts = run_probe(tc, [inc, shim], label, tmp,
                          defines=["Py_GIL_DISABLED=1"])
        res[label] = (minor, ver, inc, facts)
    return res


def is_ft(label):
    return label.endswith(FT_SUFFIX)


# ---------------------------------------------------------------------------
# built-in tables, 3.8 - 3.12

MODELS = {
    8: ("PY_FRAMES_OBJECTS", "PY_INSTR_LASTI_BYTES", "PY_LINES_LNOTAB"),
    9: ("PY_FRAMES_OBJECTS", "PY_INSTR_LASTI_BYTES", "PY_LINES_LNOTAB"),
    10: ("PY_FRAMES_OBJECTS", "PY_INSTR_LASTI_UNITS", "PY_LINES_310"),
    11: ("PY_FRAMES_INTERP_311", "PY_INSTR_POINTER", "PY_LINES_LOCATIONS"),
    12: ("PY_FRAMES_INTERP_312", "PY_INSTR_POINTER", "PY_LINES_LOCATIONS"),
}

# (field of struct py_offsets, probe key) -- all "st." keys; absent -> NONE
BUILTIN_FIELDS = [
    ("runtime_interpreters_head", "runtime_interpreters_head"),
    ("interp_next", "interp_next"),
    ("interp_threads_head", "interp_threads_head"),
    ("interp_id", "interp_id"),
    ("tstate_size", None),
    ("tstate_next", "tstate_next"),
    ("tstate_interp", "tstate_interp"),
    ("tstate_frame", "tstate_frame"),
    ("cframe_current_frame", "cframe_current_frame"),
    ("tstate_thread_id", "tstate_thread_id"),
    ("tstate_native_thread_id", "tstate_native_thread_id"),
    ("tstate_datastack_chunk", "tstate_datastack_chunk"),
    ("frame_size", None),
    ("frame_previous", "frame_previous"),
    ("frame_code", "frame_code"),
    ("frame_instr", "frame_instr"),
    ("frame_owner", "frame_owner"),
    ("frame_is_entry", "frame_is_entry"),
    ("frame_code_tagged", None),
    ("code_size", None),
    ("code_filename", "code_filename"),
    ("code_name", "code_name"),
    ("code_qualname", "code_qualname"),
    ("code_linetable", "code_linetable"),
    ("code_firstlineno", "code_firstlineno"),
    ("code_code_adaptive", "code_code_adaptive"),
    ("object_type", "object_type"),
    ("bytes_size", "bytes_size"),
    ("bytes_data", "bytes_data"),
    ("unicode_length", "unicode_length"),
    ("unicode_state", "unicode_state"),
    ("unicode_ascii_data", "unicode_ascii_data"),
    ("unicode_compact_data", "unicode_compact_data"),
    ("chunk_size", "chunk_size"),
    ("gil_holder", "gil_holder"),
    ("gil_locked", "gil_locked"),
    ("gil_in_interp", None),
    ("interp_gil_ptr", "interp_gil_ptr"),
    ("chunk_data", "chunk_data"),
    ("frame_gen", "frame_gen"),
    ("gc_collecting", "gc_collecting"),
    ("gc_in_interp", None),
    ("frame_owner_generator", None),
    ("frame_owner_shim", None),
    ("frame_owner_last", None),
    ("object_refcnt", "object_refcnt"),
    ("varobject_size", "varobject_size"),
    ("frame_exec_any", None),
    ("code_tlbc", "code_tlbc"),
    ("frame_tlbc_index", "frame_tlbc_index"),
    ("codearray_size", "codearray_size"),
    ("codearray_entries", "codearray_entries"),
]

SIZE_GROUPS = {
    "tstate_size": ["tstate_next", "tstate_interp", "tstate_frame",
                    "tstate_thread_id", "tstate_native_thread_id",
                    "tstate_datastack_chunk"],
    "frame_size": ["frame_previous", "frame_code", "frame_instr",
                   "frame_owner", "frame_is_entry", "frame_gen"],
    "code_size": ["code_filename", "code_name", "code_qualname",
                  "code_linetable", "code_firstlineno", "code_code_adaptive"],
}


# struct py_objects_layout: (field, probe fact name: "st.NAME" or "val.NAME")
OBJECT_FIELDS = [
    "interp_modules", "tstate_exc_info", "exc_item_value", "exc_item_previous",
    "tstate_curexc", "tstate_gil_requested", "gil_cond", "gil_mutex",
    "gil_cond_size", "module_dict",
    "type_name", "type_basicsize", "type_flags", "type_dictoffset", "type_base",
    "heaptype_cached_keys",
    "tpflags_heaptype",
    ("tpflags_long", "tpflags_long_subclass"),
    ("tpflags_unicode", "tpflags_unicode_subclass"),
    ("tpflags_dict", "tpflags_dict_subclass"),
    ("tpflags_tuple", "tpflags_tuple_subclass"),
    ("tpflags_list", "tpflags_list_subclass"),
    "tpflags_managed_dict", "tpflags_inline_values",
    "managed_model", "managed_dict_below", "managed_values_below",
    "dictvalues_values", "dictvalues_valid",
    "dict_model", "dict_used", "dict_keys", "dict_values",
    "dk_size", "dk_log2_size", "dk_log2_index_bytes", "dk_kind", "dk_nentries",
    "dk_indices", "dk_entry_size", "dk_unicode_entry_size",
    "set_used", "set_mask", "set_table", "set_entry_size",
    "list_size", "list_items", "tuple_size", "tuple_items",
    "long_size", "long_tag", "long_digits", "long_shift",
    "weakref_object", "method_func", "method_self", "cfunction_self",
    "function_closure", "cell_ref",
    "gen_frame", "gen_iframe", "gen_frame_state", "frame_localsplus",
    ("frame_stacktop_ptr", None), "frame_stackdepth", "frame_valuestack",
    "frame_stacktop", "frame_stackpointer",
    "has_frame_states", "has_yield_from_state",
    ("state_created", "frame_state_created"),
    ("state_suspended", "frame_state_suspended"),
    ("state_suspended_yield_from", "frame_state_suspended_yield_from"),
    ("state_executing", "frame_state_executing"),
    ("state_cleared", "frame_state_cleared"),
    "tstate_context", "tstate_context_ver", "tstate_id", "context_vars",
    "contextvar_default", "contextvar_hash", "contextvar_cached",
    "contextvar_cached_tsid", "contextvar_cached_tsver",
    "hamt_root", "hamt_count", "hamt_bitmap_size", "hamt_bitmap_bitmap",
    "hamt_bitmap_array", "hamt_array_array", "hamt_array_count",
    "hamt_collision_size", "hamt_collision_hash", "hamt_collision_array",
    "hamt_array_node_size",
]
# fields that are flags or enums: absent means 0, not PYOFF_NONE
OBJECT_ZERO_DEFAULT = {"tpflags_managed_dict", "tpflags_inline_values",
                       "has_frame_states", "has_yield_from_state",
                       "state_created", "state_suspended",
                       "state_suspended_yield_from", "state_executing",
                       "state_cleared"}
# 3.13+: fields the _Py_DebugOffsets block also has (same probe name)
OBJECT_BLOCK_POSITIONS = [
    "interp_modules", "type_name", "type_flags", "type_basicsize",
    "type_dictoffset", "heaptype_cached_keys", "tuple_items", "tuple_size",
    "list_items", "list_size", "dict_keys", "dict_values", "long_tag",
    "long_digits", "frame_localsplus", "frame_stackpointer", "set_used",
    "set_table", "set_mask", "gen_iframe", "gen_frame_state", "tstate_curexc",
    "exc_item_value", "tstate_gil_requested",
]


def fact(facts, name):
    for k in ("st." + name, "val." + name):
        if k in facts:
            return facts[k][0]
    return None


def object_values(minor, facts):
    """struct py_objects_layout of one interpreter, from its probe facts."""
    vals = {"known": 1}
    for f in OBJECT_FIELDS:
        field, key = f if isinstance(f, tuple) else (f, f)
        v = fact(facts, key) if key else None
        vals[field] = v if v is not None else \
            (0 if field in OBJECT_ZERO_DEFAULT else NONE)
    # f_stacktop is a pointer in 3.8/3.9 and an index from 3.11
    if minor <= 9:
        vals["frame_stacktop_ptr"] = fact(facts, "frame_stacktop")
        vals["frame_stacktop"] = NONE
    vals["dict_model"] = "PY_DICT_SIZE" if minor <= 10 else "PY_DICT_LOG2"
    vals["managed_model"] = {11: "PY_MANAGED_311", 12: "PY_MANAGED_312"}.get(
        minor, "PY_MANAGED_NONE" if minor <= 10 else "PY_MANAGED_313")
    for below, key in (("managed_dict_below", "managed_dict_offset"),
                       ("managed_values_below", "managed_values_offset")):
        v = fact(facts, key)
        vals[below] = -v if v is not None else NONE
    vals["has_frame_states"] = 1 if minor >= 11 else 0
    vals["has_yield_from_state"] = 1 if minor >= 13 else 0
    return vals


def emit_objects(vals, indent="\t"):
    lines = [indent + ".objects = {"]
    for f in ["known"] + OBJECT_FIELDS:
        field = f[0] if isinstance(f, tuple) else f
        v = vals[field]
        if isinstance(v, str):
            text = v
        elif v == NONE and field not in OBJECT_ZERO_DEFAULT:
            text = "PYOFF_NONE"
        else:
            text = str(v)
        lines.append(indent + "\t.%s = %s," % (field, text))
    lines.append(indent + "},")
    return lines


def cover(facts, keys):
    return max(facts["st." + k][0] + facts["st." + k][1]
               for k in keys if "st." + k in facts)


def owner_values(facts):
    """(generator, shim, last) values of _PyInterpreterFrame.owner; NONE
    for what the version lacks (every one <= 3.10, the shim in 3.11)."""
    owners = [v[0] for k, v in facts.items() if k.startswith("val.owner_")]
    if not owners:
        return NONE, NONE, NONE
    return (facts["val.owner_generator"][0],
            facts["val.owner_shim"][0] if "val.owner_shim" in facts else NONE,
            max(owners))


def builtin_values(minor, facts):
    vals = {}
    for field, key in BUILTIN_FIELDS:
        if key is not None:
            vals[field] = facts["st." + key][0] if "st." + key in facts \
                else NONE
    for field, keys in SIZE_GROUPS.items():
        vals[field] = cover(facts, keys)
    vals["frame_code_tagged"] = 0
    vals["gil_in_interp"] = 1 if minor >= 12 else 0
    vals["gc_in_interp"] = 1 if minor >= 9 else 0
    (vals["frame_owner_generator"], vals["frame_owner_shim"],
     vals["frame_owner_last"]) = owner_values(facts)
    vals["frame_exec_any"] = 0   # 3.13+ (py_offsets_from_debug)
    vals["objects"] = object_values(minor, facts)
    return vals


# ---------------------------------------------------------------------------
# _Py_DebugOffsets layouts, 3.13+

# fields of struct py_debug_offsets_layout that are positions in the block
# (probe key "dbg.<name>"); absent in a version -> NONE
LAYOUT_POSITIONS = [
    "version", "free_threaded", "runtime_interpreters_head",
    "interp_next", "interp_threads_head", "interp_id",
    "interp_gil_runtime_state", "interp_gil_runtime_state_locked",
    "interp_gil_runtime_state_holder",
    "tstate_size", "tstate_next", "tstate_interp", "tstate_current_frame",
    "tstate_thread_id", "tstate_native_thread_id", "tstate_datastack_chunk",
    "frame_size", "frame_previous", "frame_executable", "frame_instr_ptr",
    "frame_owner",
    "code_size", "code_filename", "code_name", "code_qualname",
    "code_linetable", "code_firstlineno", "code_co_code_adaptive",
    "object_type", "bytes_size", "bytes_data",
    "unicode_size", "unicode_state", "unicode_length",
    "unicode_asciiobject_size",
]
# positions appended at the end of the struct by this generator
LAYOUT_EXTRA_POSITIONS = [
    "interp_ceval_gil", "tstate_holds_gil", "interp_code_object_generation",
    "unicode_compactunicodeobject_size", "interp_gc", "gc_collecting",
    "code_tlbc", "frame_tlbc_index",
    "dbg_eval_breaker", "dbg_remote_support", "dbg_remote_enabled",
    "dbg_pending_call", "dbg_script_path", "dbg_script_path_size",
]
# plain values from the headers appended at the end (not block positions)
LAYOUT_EXTRA_VALUES = [
    ("chunk_size_field", "st.chunk_size"),
    ("chunk_header_size", "st.chunk_data"),
    ("executable_tag_mask", "val.stackref_tag_bits"),
    ("unicode_compact_data", "st.unicode_compact_data"),
    ("frame_owner_shim", "val.owner_shim"),
    ("frame_owner_generator", "val.owner_generator"),
    ("frame_owner_last", None),
    ("varobject_size", "st.varobject_size"),
    ("codearray_size_field", "st.codearray_size"),
    ("codearray_entries", "st.codearray_entries"),
]

# what each block position must hold, as a function of the "st." facts:
# used to check the 3.14+ block initializer (blk.*) and, live, 3.13's block
BLOCK_EXPECT = {
    "runtime_interpreters_head": ["runtime_interpreters_head"],
    "interp_next": ["interp_next"],
    "interp_threads_head": ["interp_threads_head"],
    "interp_id": ["interp_id"],
    "interp_ceval_gil": ["interp_gil_ptr"],
    "interp_gil_runtime_state": ["interp_gil_embedded"],
    "interp_gil_runtime_state_locked": ["interp_gil_embedded", "gil_locked"],
    "interp_gil_runtime_state_holder": ["interp_gil_embedded", "gil_holder"],
    "tstate_next": ["tstate_next"],
    "tstate_interp": ["tstate_interp"],
    "tstate_current_frame": ["tstate_frame"],
    "tstate_thread_id": ["tstate_thread_id"],
    "tstate_native_thread_id": ["tstate_native_thread_id"],
    "tstate_datastack_chunk": ["tstate_datastack_chunk"],
    "frame_size": ["sizeof_interp_frame"],
    "frame_previous": ["frame_previous"],
    "frame_executable": ["frame_code"],
    "frame_instr_ptr": ["frame_instr"],
    "frame_owner": ["frame_owner"],
    "code_size": ["sizeof_code"],
    "code_filename": ["code_filename"],
    "code_name": ["code_name"],
    "code_qualname": ["code_qualname"],
    "code_linetable": ["code_linetable"],
    "code_firstlineno": ["code_firstlineno"],
    "code_co_code_adaptive": ["code_code_adaptive"],
    "object_type": ["object_type"],
    "bytes_size": ["bytes_size"],
    "bytes_data": ["bytes_data"],
    "unicode_state": ["unicode_state"],
    "unicode_length": ["unicode_length"],
    "unicode_asciiobject_size": ["unicode_ascii_data"],
    "code_tlbc": ["code_tlbc"],
    "frame_tlbc_index": ["frame_tlbc_index"],
    "unicode_compactunicodeobject_size": ["unicode_compact_data"],
}
BLOCK_EXPECT.update({k: [k] for k in OBJECT_BLOCK_POSITIONS})


def block_expectations(facts):
    exp = {}
    for k, parts in BLOCK_EXPECT.items():
        if all("st." + p in facts for p in parts):
            exp[k] = sum(facts["st." + p][0] for p in parts)
    return exp


def layout_values(minor, facts):
    vals = {"minor": minor,
            "block_size": facts["st.sizeof_debug_offsets"][0]}
    for name in LAYOUT_POSITIONS + LAYOUT_EXTRA_POSITIONS:
        vals[name] = facts["dbg." + name][0] if "dbg." + name in facts \
            else NONE
    for name, key in LAYOUT_EXTRA_VALUES:
        vals[name] = facts[key][0] if key in facts else NONE
    vals["frame_owner_last"] = owner_values(facts)[2]
    if vals["executable_tag_mask"] == NONE:
        vals["executable_tag_mask"] = 0   # 3.13: a plain PyObject *
    vals["objects"] = object_values(minor, facts)
    for name in OBJECT_BLOCK_POSITIONS:
        vals["pos_" + name] = facts["dbg." + name][0] \
            if "dbg." + name in facts else NONE
    return vals


def layout_compare_key(facts):
    """Everything of a probe that the 3.13 layout depends on."""
    objs = object_values(13, facts)
    keyed = {k: v for k, v in facts.items()
             if k.startswith("dbg.") or k in ("st.sizeof_debug_offsets",
                                             "st.chunk_size", "st.chunk_data",
                                             "st.unicode_compact_data",
                                             "val.owner_shim",
                                             "val.owner_generator",
                                             "st.varobject_size",
                                             "val.free_threaded")}
    keyed.update({"objects." + k: (v, 0) for k, v in objs.items()})
    return keyed


def check(inputs):
    """Consistency checks; returns a list of human-readable findings."""
    found = []
    for label, (minor, ver, inc, facts) in sorted(inputs.items()):
        if facts["val.minor"][0] != minor:
            die("%s: headers say minor %d" % (label, facts["val.minor"][0]))
        if facts["val.pointer_size"][0] != 8:
            die("%s: not an LP64 build" % label)
        if facts["val.free_threaded"][0] != (1 if is_ft(label) else 0) or \
           facts["val.py_debug"][0]:
            die("%s: headers are for a %s build" %
                (label, "debug" if facts["val.py_debug"][0] else
                 "GIL" if is_ft(label) else "free-threaded"))
        blk = {k[4:]: v[0] for k, v in facts.items() if k.startswith("blk.")}
        if blk:
            exp = block_expectations(facts)
            bad = ["%s: block %d, headers %d" % (k, blk[k], exp[k])
                   for k in exp if k in blk and blk[k] != exp[k]]
            if bad:
                die("%s: _Py_DebugOffsets_INIT disagrees with offsetof():\n  %s"
                    % (label, "\n  ".join(bad)))
            found.append("%s: _Py_DebugOffsets_INIT matches offsetof() for "
                         "%d mapped fields" % (label,
                                               len([k for k in exp
                                                    if k in blk])))
    # A free-threaded build publishes the same block layout as its GIL twin:
    # the reader finds the block's free_threaded byte through either.
    for label, (minor, ver, inc, facts) in sorted(inputs.items()):
        twin = label[:-len(FT_SUFFIX)] if is_ft(label) else None
        if twin not in inputs:
            continue
        gil = inputs[twin][3]
        pos = sorted(k for k in set(facts) | set(gil)
                     if k.startswith("dbg.") and facts.get(k) != gil.get(k))
        if pos or facts["st.sizeof_debug_offsets"] != gil["st.sizeof_debug_offsets"]:
            die("%s: _Py_DebugOffsets positions differ from %s: %s" %
                (label, twin, ", ".join(pos) or "block size"))
        found.append("%s: the block layout of %s (%d positions)" %
                     (label, twin, len([k for k in facts if k.startswith("dbg.")])))
    # 3.13 from pyenv 3.13.0 and from Debian must give the same layout
    p13 = [l for l, i in inputs.items() if i[0] == 13 and l.startswith("pyenv")]
    d13 = [l for l, i in inputs.items() if i[0] == 13 and l.startswith("debian")
           and not is_ft(l)]
    if p13 and d13:
        a = inputs[p13[0]][3]
        b = inputs[d13[0]][3]
        ka, kb = layout_compare_key(a), layout_compare_key(b)
        if ka != kb:
            diff = sorted(k for k in set(ka) | set(kb) if ka.get(k) != kb.get(k))
            die("3.13 layouts differ between %s and %s: %s" %
                (p13[0], d13[0], ", ".join(diff)))
        found.append("3.13 _Py_DebugOffsets layout: %s == %s (%d facts)" %
                     (p13[0], d13[0], len(ka)))
        other = sorted(k for k in set(a) | set(b)
                       if k.startswith("st.") and a.get(k) != b.get(k))
        if other:
            found.append("3.13 struct offsets that moved between %s and %s "
                         "(read from the block, so harmless): %s" %
                         (p13[0], d13[0], ", ".join(
                             "%s %s->%s" % (k[3:], a.get(k, ("-",))[0],
                                            b.get(k, ("-",))[0])
                             for k in other)))
    return found


# ---------------------------------------------------------------------------
# asyncio's Future and Task (Modules/_asynciomodule.c, in no header): measured
# live by asyncio_probe.py in every interpreter

ASYNCIO_PROBE = os.path.join(HERE, "asyncio_probe.py")
ASYNCIO_FIELDS = ["future_size", "task_size", "fut_loop", "fut_callback0",
                  "fut_callbacks", "fut_state", "state_pending",
                  "state_cancelled", "state_finished", "task_fut_waiter",
                  "task_coro", "task_name", "task_context", "futureiter_future",
                  "yf_depth", "wakeup_task"]
# what must agree between two builds of one minor version (3.13 here)
ASYNCIO_COMPARE = [f for f in ASYNCIO_FIELDS]


def interp_argv(label, minor, ver, proot, sroot):
    """(argv, env) that runs the interpreter of one input, or (None, why)."""
    if label.startswith("pyenv"):
        return [os.path.join(proot, "versions", ver, "bin",
                             "python3.%d" % minor), "-I", "-B"], None
    ld = os.path.join(sroot, "lib64", "ld-linux-x86-64.so.2")
    libs = ":".join(os.path.join(sroot, d) for d in
                    ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"))
    exe = os.path.join(sroot, "usr", "bin", "python3.%d" % minor)
    if not (os.path.exists(ld) and os.path.exists(exe)):
        return None, "no runnable binary under %s" % sroot
    env = dict(os.environ, PYTHONHOME=os.path.join(sroot, "usr"),
               PYTHONDONTWRITEBYTECODE="1")
    return [ld, "--library-path", libs, exe, "-I", "-B"], env


def frame_layout_for_probe(objs):
    return {k: (objs[k] if isinstance(objs[k], int) else -1)
            for k in ("gen_iframe", "gen_frame", "frame_localsplus",
                      "frame_stackpointer", "frame_stackdepth",
                      "frame_valuestack", "frame_stacktop",
                      "frame_stacktop_ptr")}


def asyncio_debug_section(path):
    """The 13 uint64 of an .AsyncioDebug section in an ELF file, or None."""
    import struct
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    names = sh(shstrndx)
    for i in range(shnum):
        h = sh(i)
        start = names[4] + h[0]
        name = data[start:data.index(b"\0", start)]
        if name == b".AsyncioDebug" and h[5] >= 13 * 8:
            return struct.unpack_from("<13Q", data, h[4])
    return None


def asyncio_inputs(inputs, proot, sroot):
    """{label: measured asyncio layout} for every input."""
    res = {}
    for label, (minor, ver, inc, facts) in sorted(inputs.items()):
        argv, env = interp_argv(label, minor, ver, proot, sroot)
        if argv is None:
            die("%s: cannot run the interpreter to measure asyncio: %s" % (label, env))
        lay = frame_layout_for_probe(object_values(minor, facts))
        r = subprocess.run(argv + [ASYNCIO_PROBE, json.dumps(lay)],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            die("%s: asyncio_probe.py failed: %s" % (label, r.stderr.strip()))
        m = json.loads(r.stdout)
        if m["minor"] != minor or m["future_type"] != "_asyncio.Future":
            die("%s: asyncio_probe.py ran %s with %s" % (label, m["version"],
                                                       m["future_type"]))
        res[label] = m
    return res


def check_asyncio(inputs, measured, sroot):
    found = []
    for m13 in [[l for l in measured if inputs[l][0] == 13]]:
        if len(m13) == 2:
            a, b = (measured[l] for l in sorted(m13))
            diff = [k for k in ASYNCIO_COMPARE if a.get(k) != b.get(k)]
            if diff:
                die("3.13 asyncio layouts differ between %s: %s" %
                    (" and ".join(sorted(m13)), ", ".join(diff)))
            found.append("3.13 asyncio layout: %s agree" % " and ".join(sorted(m13)))
    # 3.14+: the measured task fields equal what the interpreter's own
    # .AsyncioDebug section says (section: size, name, awaited_by, is_task,
    # awaited_by_is_set, coro, node, ...)
    for label, (minor, ver, inc, facts) in sorted(inputs.items()):
        if minor < 14 or not label.startswith("debian"):
            continue
        m = measured[label]
        cands = [os.path.join(sroot, "usr", "bin", "python3.%d" % minor)]
        dyn = os.path.join(sroot, "usr", "lib", "python3.%d" % minor, "lib-dynload")
        if os.path.isdir(dyn):
            cands += [os.path.join(dyn, f) for f in sorted(os.listdir(dyn))
                      if f.startswith("_asyncio.")]
        sec = None
        for c in cands:
            sec = asyncio_debug_section(c)
            if sec:
                break
        if not sec:
            die("%s: no .AsyncioDebug section found in %s" % (label, ", ".join(cands)))
        if (sec[0], sec[1], sec[5]) != (m["task_size"], m["task_name"], m["task_coro"]):
            die("%s: .AsyncioDebug (size %d, name %d, coro %d) disagrees with the "
                "measured task (size %d, name %d, coro %d)" %
                (label, sec[0], sec[1], sec[5], m["task_size"], m["task_name"],
                 m["task_coro"]))
        found.append("%s: measured task layout matches its .AsyncioDebug section (%s)"
                     % (label, os.path.basename(c)))
    return found


def emit_asyncio(minor, src, m):
    lines = ["/* %s */" % src,
             "static const struct py_asyncio_layout aio3%d = {" % minor,
             "\t.minor = %d," % minor]
    for k in ASYNCIO_FIELDS:
        v = m.get(k)
        lines.append("\t.%s = %s," % (k, "PYOFF_NONE" if v is None else v))
    lines.append("};")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# output

HEADER = """\
/*
 * GENERATED FILE -- DO NOT EDIT BY HAND.
 * Regenerate with tools/gen-offsets/gen-offsets.py (see its README.md).
 *
 * CPython struct layouts for framewalk (x86-64), taken
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
 * The block's positions are the same in a free-threaded build (checked);
 * its plain values and objects layout (dbg3XXt) are the same headers
 * compiled with Py_GIL_DISABLED: every PyObject is 16 bytes longer, and
 * 3.14+ frames name a thread's own copy of the bytecode (tlbc_index).
 */
#include <stddef.h>

#include "python/offsets.h"
"""


def emit_builtin(minor, src, vals):
    fm, im, lm = MODELS[minor]
    lines = ["/* %s */" % src,
             "static const struct py_offsets py3%d = {" % minor,
             "\t.version_hex = 0x03%02x0000," % minor,
             "\t.frame_model = %s," % fm,
             "\t.instr_model = %s," % im,
             "\t.line_model = %s," % lm,
             "\t.free_threaded = 0,"]
    for field, _ in BUILTIN_FIELDS:
        v = vals[field]
        lines.append("\t.%s = %s," % (field,
                                       "PYOFF_NONE" if v == NONE else v))
    lines += emit_objects(vals["objects"])
    lines.append("};")
    return "\n".join(lines)


def emit_layout(minor, src, vals, ft=False):
    lines = ["/* %s */" % src,
             "static const struct py_debug_offsets_layout dbg3%d%s = {" %
             (minor, "t" if ft else ""),
             "\t.minor = %d," % minor,
             "\t.block_size = %d," % vals["block_size"]]
    for name in LAYOUT_POSITIONS + LAYOUT_EXTRA_POSITIONS:
        v = vals[name]
        lines.append("\t.%s = %s," % (name, "PYOFF_NONE" if v == NONE else v))
    lines.append("\t/* plain values from the headers, not block positions */")
    for name, _ in LAYOUT_EXTRA_VALUES:
        v = vals[name]
        lines.append("\t.%s = %s," % (name, "PYOFF_NONE" if v == NONE else v))
    lines += emit_objects(vals["objects"])
    lines.append("\t/* block positions of values the objects layout also has */")
    for name in OBJECT_BLOCK_POSITIONS:
        v = vals["pos_" + name]
        lines.append("\t.pos_%s = %s," % (name, "PYOFF_NONE" if v == NONE else v))
    lines.append("};")
    return "\n".join(lines)


def generate(inputs, measured, arch="x86_64"):
    parts = [HEADER.replace("for framewalk (x86-64)", "for framewalk (%s)" % ARCHES[arch]["name"])]
    by_minor = {}
    for label, (minor, ver, inc, facts) in inputs.items():
        # 3.8-3.12 from pyenv; 3.13+ from Debian (3.13 checked equal to pyenv)
        if minor <= 12 or (label.startswith("debian") and not is_ft(label)):
            by_minor[minor] = (label, facts)
    ft_minor = {i[0]: (l, i[3]) for l, i in inputs.items() if is_ft(l)}
    for minor in sorted(m for m in by_minor if m <= 12):
        label, facts = by_minor[minor]
        parts.append(emit_builtin(minor, "from %s headers" % label,
                                  builtin_values(minor, facts)))
    parts.append("""\
const struct py_offsets *py_offsets_builtin(int minor)
{
	switch (minor) {
%s	default: return NULL;
	}
}""" % "".join("\tcase %d: return &py3%d;\n" % (m, m)
               for m in sorted(by_minor) if m <= 12))
    for minor in sorted(m for m in by_minor if m >= 13):
        label, facts = by_minor[minor]
        src = "from %s headers" % label
        if minor == 13:
            src += " (identical to pyenv 3.13.0: checked by the generator)"
        parts.append(emit_layout(minor, src, layout_values(minor, facts)))
        if minor in ft_minor:
            label, facts = ft_minor[minor]
            parts.append(emit_layout(minor, "from %s headers compiled with "
                                     "Py_GIL_DISABLED (no such build was run)" %
                                     label[:-len(FT_SUFFIX)],
                                     layout_values(minor, facts), ft=True))
    aio = {}
    for label, m in measured.items():
        minor = inputs[label][0]
        if minor <= 12 or (label.startswith("debian") and not is_ft(label)):
            aio[minor] = (label, m)
    for minor in sorted(aio):
        label, m = aio[minor]
        how = "measured in %s by asyncio_probe.py" % label
        if arch != "x86_64":
            # no arm64 interpreter runs here: the C structs of Future and
            # Task hold pointers, ints and bit fields only, laid out alike
            how += " on x86-64 (pointers and ints only: the same on %s)" % ARCHES[arch]["name"]
        parts.append(emit_asyncio(minor, how, m))
    parts.append("""\
const struct py_asyncio_layout *py_asyncio_layout(int minor)
{
	switch (minor) {
%s	default: return NULL;
	}
}""" % "".join("\tcase %d: return &aio3%d;\n" % (m, m) for m in sorted(aio)))
    parts.append("""\
const struct py_debug_offsets_layout *py_debug_layout(int minor, int free_threaded)
{
	switch (minor) {
%s	default: return NULL;
	}
}""" % "".join("\tcase %d: return %s;\n" % (
        m, ("free_threaded ? &dbg3%dt : &dbg3%d" % (m, m)) if m in ft_minor
        else "free_threaded ? NULL : &dbg3%d" % m)
        for m in sorted(by_minor) if m >= 13))
    return "\n\n".join(parts) + "\n"


# struct facts a test needs beside the block to lay out a target as CPython does
BLOCK_FIXTURE_FACTS = ["st.varobject_size", "st.unicode_compact_data",
                       "st.codearray_size", "st.codearray_entries",
                       "val.stackref_tag_bits", "val.owner_shim",
                       "val.owner_generator", "st.chunk_data", "st.chunk_size",
                       # objects: types, dicts, modules, ints, the exception state
                       "st.type_name", "st.type_basicsize", "st.type_flags",
                       "st.type_dictoffset", "st.type_base",
                       "val.tpflags_long_subclass", "val.tpflags_unicode_subclass",
                       "val.tpflags_dict_subclass", "val.tpflags_managed_dict",
                       "val.managed_dict_offset", "st.dict_used", "st.dict_keys",
                       "st.dict_values", "st.dk_log2_size", "st.dk_log2_index_bytes",
                       "st.dk_kind", "st.dk_nentries", "st.dk_indices",
                       "val.dk_entry_size", "st.module_dict", "st.interp_modules",
                       "st.long_tag", "st.long_digits", "st.tstate_exc_info",
                       "st.exc_item_value", "st.exc_item_previous",
                       "st.tstate_curexc"]


def block_fixture(inputs):
    """tests/unit/debug_blocks.h: every 3.13+ block as its interpreter fills it
    (3.14+: its own _Py_DebugOffsets_INIT; 3.13: the offsetof() it is made of)."""
    out = ["""\
/*
 * GENERATED FILE -- DO NOT EDIT BY HAND (tools/gen-offsets/gen-offsets.py).
 *
 * The _Py_DebugOffsets block each 3.13+ interpreter publishes, GIL and
 * free-threaded builds (the latter: the same headers compiled with
 * Py_GIL_DISABLED), as (position, value) pairs: 3.14+ from the
 * interpreter's own _Py_DebugOffsets_INIT, 3.13 from the offsetof() its
 * initializer is made of. With the struct facts beside them, for tests that
 * lay out a target's memory as CPython would and read it with framewalk's
 * reader. Positions of fields a build lacks are absent.
 */
#ifndef FRAMEWALK_TESTS_DEBUG_BLOCKS_H
#define FRAMEWALK_TESTS_DEBUG_BLOCKS_H

#include <stdint.h>

struct debug_block_value {
	int32_t pos;
	uint64_t value;
	const char *name;
};

struct debug_block {
	int minor, free_threaded;
	const char *source;
	const struct debug_block_value *values;   /* ends with pos -1 */
	const struct debug_block_value *facts;    /* pos -1; name, value; ends with name NULL */
};
"""]
    rows = []
    for label, (minor, ver, inc, facts) in sorted(inputs.items()):
        if minor < 13 or not label.startswith("debian"):
            continue
        ident = "3%d%s" % (minor, "t" if is_ft(label) else "")
        blk = {k[4:]: v[0] for k, v in facts.items() if k.startswith("blk.")}
        if not blk:
            blk = block_expectations(facts)
            blk["free_threaded"] = facts["val.free_threaded"][0]
            for size_key, st in (("frame_size", "st.sizeof_interp_frame"),
                                 ("code_size", "st.sizeof_code"),
                                 ("tstate_size", "st.sizeof_tstate")):
                if st in facts:
                    blk[size_key] = facts[st][0]
        blk["version"] = facts["val.version_hex"][0]
        vals = sorted((facts["dbg." + k][0], v, k) for k, v in blk.items()
                      if "dbg." + k in facts)
        out.append("static const struct debug_block_value block_%s[] = {" % ident)
        out += ["\t{ %d, %d, \"%s\" }," % v for v in vals]
        out.append("\t{ -1, 0, 0 },\n};")
        out.append("static const struct debug_block_value facts_%s[] = {" % ident)
        out += ["\t{ -1, %d, \"%s\" }," % (facts[k][0], k)
                for k in BLOCK_FIXTURE_FACTS if k in facts]
        out.append("\t{ -1, 0, 0 },\n};")
        rows.append("\t{ %d, %d, \"%s\", block_%s, facts_%s }," %
                    (minor, 1 if is_ft(label) else 0, label, ident, ident))
    out.append("static const struct debug_block debug_blocks[] = {")
    out += rows
    out.append("};\n\n#endif")
    return "\n".join(out) + "\n"


def arch_differences(host, other, name):
    """Every fact that differs between the host's probe and another
    architecture's, grouped by struct: what the note and docs/AARCH64.md
    say (glibc's pthread types are the expected cause)."""
    out = []
    for label in sorted(host):
        a, b = host[label][3], other[label][3]
        if set(a) != set(b):
            die("%s: the probe printed other facts on %s: %s" %
                (label, name, ", ".join(sorted(set(a) ^ set(b)))))
        diff = sorted(k for k in a if a[k] != b[k])
        out.append("%s: %d of %d facts differ on %s%s" %
                   (label, len(diff), len(a), name,
                    (": " + ", ".join("%s %d/%d->%d/%d" % ((k,) + a[k] + b[k]) for k in diff))
                    if diff else ""))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--arch", choices=sorted(ARCHES), default="x86_64",
                    help="the architecture whose table is written (default x86_64)")
    ap.add_argument("--pyenv-root")
    ap.add_argument("--sid-root")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--dump", action="store_true")
    ap.add_argument("--verify-live", action="store_true")
    args = ap.parse_args()

    host = dict(ARCHES["x86_64"], cc=args.cc)
    target = host if args.arch == "x86_64" else ARCHES[args.arch]
    if args.out is None:
        args.out = target["out"]
    if args.arch != "x86_64" and args.verify_live:
        die("--verify-live runs the interpreters: x86-64 only")
    tmp = tempfile.mkdtemp(prefix="gen-offsets.")
    try:
        # The host's facts: what the interpreters run here are measured
        # against (asyncio, --verify-live) and what another architecture's
        # are compared with.
        inputs = probe_inputs(args, tmp, host)
        arch_inputs = inputs if target is host else probe_inputs(args, tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if target is not host:
        for line in arch_differences(inputs, arch_inputs, target["name"]):
            note(line)

    if args.dump:
        inputs = arch_inputs
        json.dump({l: {"minor": i[0], "version": i[1], "include": i[2],
                       "facts": {k: v[0] for k, v in sorted(i[3].items())}}
                   for l, i in inputs.items()}, sys.stdout, indent=1)
        print()
        return

    for line in check(arch_inputs):
        note(line)
    # free-threaded layouts have no interpreter to run: not measured live
    runnable = {l: i for l, i in inputs.items() if not is_ft(l)}
    measured = asyncio_inputs(runnable, pyenv_root(args.pyenv_root),
                              sid_root(args.sid_root))
    for line in check_asyncio(runnable, measured, sid_root(args.sid_root)):
        note(line)
    text = generate(arch_inputs, measured, args.arch)

    if args.verify_live:
        sys.path.insert(0, HERE)
        sys.dont_write_bytecode = True
        import verify_live as vl
        ok = vl.verify_all(runnable, pyenv_root(args.pyenv_root),
                           sid_root(args.sid_root), builtin_values,
                           layout_values)
        if not ok:
            die("live verification failed")

    outputs = [(args.out, text)]
    if args.out == DEFAULT_OUT and args.arch == "x86_64":
        outputs.append((BLOCKS_OUT, block_fixture(inputs)))
    for path, content in outputs:
        if args.check:
            try:
                with open(path) as f:
                    cur = f.read()
            except OSError:
                cur = None
            if cur != content:
                die("%s is out of date" % path)
            note("%s is up to date" % path)
            continue
        with open(path, "w") as f:
            f.write(content)
        note("wrote %s" % path)


if __name__ == "__main__":
    main()
