"""
Live check of the generated offsets (used by gen-offsets.py --verify-live).

Each interpreter runs WALKER below on itself: through ctypes it finds
_PyRuntime, follows interpreters.head -> threads.head -> this thread ->
current frame -> previous ..., using only the generated numbers, and compares
what it read from memory with what Python reports about itself (code object
addresses, co_name / co_qualname / co_filename / co_firstlineno, f_lasti of
the caller, the linetable bytes, native thread id, the GIL holder, the
datastack chunk bounds). 3.13+ take every offset from their own
_Py_DebugOffsets block at the generated positions.

Interpreters: pyenv 3.8-3.13 (shared builds), and the Debian 3.13/3.14/3.15
binaries in the Debian root when they can be started through that root's own
dynamic loader (skipped with a note otherwise).
"""

import json
import os
import subprocess
import sys

WALKER = r'''
import ctypes, json, sys, threading, types
cfg = json.loads(sys.argv[1])
api = ctypes.pythonapi
RT = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
def u64(a): return ctypes.c_uint64.from_address(a).value
def i32(a): return ctypes.c_int32.from_address(a).value
def u8(a): return ctypes.c_uint8.from_address(a).value
minor = sys.version_info[1]
out = {"minor": minor, "checks": 0}
def ok(cond, what):
    if not cond:
        raise AssertionError(what)
    out["checks"] += 1

if cfg["kind"] == "layout":
    L = cfg["layout"]
    ok(ctypes.string_at(RT, 8) == b"xdebugpy", "cookie")
    ok(u64(RT + L["version"]) >> 16 == (0x0300 | minor), "block version")
    ok(u64(RT + L["free_threaded"]) == 0, "free_threaded")
    O = {}
    for k, v in L.items():
        if k in ("minor", "block_size") or not isinstance(v, int) or v < 0:
            continue
        if k in ("chunk_size_field", "chunk_header_size", "executable_tag_mask",
                 "unicode_compact_data", "frame_owner_shim",
                 "frame_owner_generator", "frame_owner_last", "varobject_size"):
            O[k] = v                   # plain values
        else:
            O[k] = u64(RT + v)         # read from the block
    m = dict(runtime_interpreters_head="runtime_interpreters_head",
             interp_next="interp_next", interp_threads_head="interp_threads_head",
             interp_id="interp_id", tstate_next="tstate_next",
             tstate_interp="tstate_interp", tstate_frame="tstate_current_frame",
             tstate_thread_id="tstate_thread_id",
             tstate_native_thread_id="tstate_native_thread_id",
             tstate_datastack_chunk="tstate_datastack_chunk",
             frame_previous="frame_previous", frame_code="frame_executable",
             frame_instr="frame_instr_ptr", frame_owner="frame_owner",
             code_filename="code_filename", code_name="code_name",
             code_qualname="code_qualname", code_linetable="code_linetable",
             code_firstlineno="code_firstlineno",
             code_code_adaptive="code_co_code_adaptive",
             object_type="object_type", bytes_size="bytes_size",
             bytes_data="bytes_data", unicode_state="unicode_state",
             unicode_length="unicode_length",
             unicode_ascii_data="unicode_asciiobject_size",
             unicode_compact_data="unicode_compact_data",
             chunk_size="chunk_size_field", chunk_data="chunk_header_size")
    C = {k: O[v] for k, v in m.items()}
    if "unicode_compactunicodeobject_size" in O:
        ok(O["unicode_compactunicodeobject_size"] == O["unicode_compact_data"],
           "block compact unicode size == header value")
    C["frame_model"] = "312"  # same shim-frame rule for 3.13+
    C["instr_model"] = "pointer"
    C["tag_mask"] = O["executable_tag_mask"]
    C["owner_shim"] = O["frame_owner_shim"]
    for k in ("frame_owner_last", "varobject_size"):
        C[k] = O[k]
else:
    C = dict(cfg["table"])
    C["tag_mask"] = 0
    C["owner_shim"] = C["frame_owner_shim"]
    O = None
out["values"] = {k: C[k] for k in ("tstate_frame", "frame_code", "frame_instr",
                                   "code_name", "code_code_adaptive")
                 if k in C}

def pystr(o):
    st = u64(o + C["unicode_state"]) & 0xffffffff
    kind = (st >> 2) & 7
    compact = (st >> 5) & 1
    ascii_ = (st >> 6) & 1
    n = u64(o + C["unicode_length"])
    ok(compact, "compact str")
    data = o + (C["unicode_ascii_data"] if ascii_ else C["unicode_compact_data"])
    raw = ctypes.string_at(data, n * kind)
    return raw.decode({1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind])

def pybytes(o):
    n = u64(o + C["bytes_size"])
    return ctypes.string_at(o + C["bytes_data"], n)

def my_tstate():
    interp = u64(RT + C["runtime_interpreters_head"])
    ok(u64(interp + C["interp_id"]) == 0, "main interpreter id 0")
    t = u64(interp + C["interp_threads_head"])
    me = threading.get_ident()
    seen = 0
    while t and u64(t + C["tstate_thread_id"]) != me:
        t = u64(t + C["tstate_next"]); seen += 1
        ok(seen < 1000, "thread list terminates")
    ok(t != 0, "found own thread state")
    ok(u64(t + C["tstate_interp"]) == interp, "tstate->interp")
    if C.get("tstate_native_thread_id", -1) >= 0:
        ok(u64(t + C["tstate_native_thread_id"]) == threading.get_native_id(),
           "native_thread_id")
    return interp, t

def check_gil(interp, t):
    if O is not None:
        gp = u64(interp + O["interp_ceval_gil"])
        ok(gp == interp + O["interp_gil_runtime_state"], "ceval.gil -> _gil")
        ok(u64(interp + O["interp_gil_runtime_state_holder"]) == t, "gil holder")
        ok(i32(interp + O["interp_gil_runtime_state_locked"]) == 1, "gil locked")
        if "tstate_holds_gil" in O:
            ok(i32(t + O["tstate_holds_gil"]) == 1, "holds_gil")
    elif C["gil_in_interp"]:
        gp = u64(interp + C["interp_gil_ptr"])
        ok(u64(gp + C["gil_holder"]) == t, "gil holder")
        ok(i32(gp + C["gil_locked"]) == 1, "gil locked")
    else:
        ok(u64(RT + C["gil_holder"]) == t, "gil holder")
        ok(i32(RT + C["gil_locked"]) == 1, "gil locked")

def frames(t):
    me = sys._getframe()   # the walk starts in this very frame
    lastis = [me.f_back.f_lasti, me.f_back.f_back.f_lasti]  # callers, now
    fm = C["frame_model"]
    # read the current frame inline: inside a helper such as u64() the
    # current frame would be the helper's own
    rd = ctypes.c_uint64.from_address
    if C.get("cframe_current_frame", -1) >= 0:
        f = rd(rd(t + C["tstate_frame"]).value + C["cframe_current_frame"]).value
    else:
        f = rd(t + C["tstate_frame"]).value
    res = []
    kinds = []   # per frame: "py", "entry" (3.11 is_entry) or "shim"
    tagged = 0
    while f and len(kinds) < 256:
        raw = u64(f + C["frame_code"])
        code = raw & ~C["tag_mask"]
        tagged += (raw & C["tag_mask"]) != 0
        skip = False
        if fm != "objects":
            owner = u8(f + C["frame_owner"])
            ok(owner <= C["frame_owner_last"], "owner %d <= the highest" % owner)
            skip = owner >= C["owner_shim"] and fm != "311"
        if skip:
            kinds.append("shim")
        else:
            if fm == "311" and u8(f + C["frame_is_entry"]):
                kinds.append("entry")
            else:
                kinds.append("py")
            if fm == "objects":
                off = i32(f + C["frame_instr"])
                if C["instr_model"] == "units":
                    off *= 2
            else:
                off = u64(f + C["frame_instr"]) - (code + C["code_code_adaptive"])
            if len(res) < 4:
                res.append((f, code, off))
        if raw & C["tag_mask"]:
            kinds[-1] += "+tag"
        f = u64(f + C["frame_previous"])
    # frames <- wälk_ƒ <- outer <- main are Python-to-Python calls; the
    # <module> frame below them was entered from C
    if fm == "311":
        ok([k.split("+")[0] for k in kinds[:5]] == ["py"] * 4 + ["entry"],
           "is_entry %s" % kinds)
    elif fm == "312":
        ok([k.split("+")[0] for k in kinds[:6]] == ["py"] * 5 + ["shim"],
           "shim %s" % kinds)
    ok(f == 0, "frame chain ends")
    out["chain"] = kinds
    out["tagged"] = tagged
    return res, me, lastis

def wälk_ƒ():
    interp, t = my_tstate()
    check_gil(interp, t)
    got, pf, lastis = frames(t)
    want = []
    while pf and len(want) < len(got):
        want.append(pf); pf = pf.f_back
    ok(len(got) >= 3, "at least 3 frames")
    for i, ((f, code, off), pf) in enumerate(zip(got, want)):
        co = pf.f_code
        ok(code == id(co), "frame %d code address" % i)
        ok(u64(code + C["object_type"]) == id(types.CodeType), "ob_type")
        ok(pystr(u64(code + C["code_name"])) == co.co_name, "co_name %d" % i)
        ok(pystr(u64(code + C["code_filename"])) == co.co_filename, "co_filename")
        ok(i32(code + C["code_firstlineno"]) == co.co_firstlineno, "firstlineno")
        if C.get("code_qualname", -1) >= 0:
            ok(pystr(u64(code + C["code_qualname"])) == co.co_qualname, "qualname")
        lt = co.co_linetable if minor >= 10 else co.co_lnotab
        ok(pybytes(u64(code + C["code_linetable"])) == lt, "linetable bytes")
        ok(0 <= off < len(co.co_code), "instr offset in range")
        if minor >= 11:
            ok(u64(code + C["varobject_size"]) * 2 == len(co.co_code), "ob_size: code units")
        if C.get("object_refcnt", -1) >= 0:
            ok(u64(code + C["object_refcnt"]) >= 1, "ob_refcnt of a live code object")
        if 1 <= i <= len(lastis):
            ok(off == lastis[i - 1],
               "caller f_lasti %d: %d vs %d" % (i, off, lastis[i - 1]))
        if C.get("chunk_size", -1) >= 0 and i == 0:
            ch = u64(t + C["tstate_datastack_chunk"])
            ok(ch + C["chunk_data"] <= f < ch + u64(ch + C["chunk_size"]),
               "frame inside datastack chunk")
    out["names"] = [pystr(u64(c + C["code_name"])) for _, c, _ in got]
    return out

# contextvars: a lookup through the thread's own context, with the objects
# layout (from the headers, and probe.c's copies of Python/hamt.c's nodes)
OB = (cfg["layout"] if cfg["kind"] == "layout" else cfg["table"])["objects"]
def u32(a): return ctypes.c_uint32.from_address(a).value
def tpname(o):
    return ctypes.string_at(u64(u64(o + C["object_type"]) + OB["type_name"]))

def hamt_find(node, h, key):
    shift = 0
    for depth in range(8):
        tp = tpname(node)
        if tp == b"hamt_bitmap_node":
            bm = u32(node + OB["hamt_bitmap_bitmap"])
            bit = 1 << ((h >> shift) & 31)
            if not bm & bit:
                return None
            i = bin(bm & (bit - 1)).count("1")
            ok(2 * i + 1 < u64(node + OB["hamt_bitmap_size"]), "bitmap node size")
            k = u64(node + OB["hamt_bitmap_array"] + 16 * i)
            v = u64(node + OB["hamt_bitmap_array"] + 16 * i + 8)
            if k == 0:
                node = v
            else:
                return v if k == key else None
        elif tp == b"hamt_array_node":
            node = u64(node + OB["hamt_array_array"] + 8 * ((h >> shift) & 31))
            if not node:
                return None
        else:
            ok(tp == b"hamt_collision_node", "node type %r" % tp)
            n = u64(node + OB["hamt_collision_size"])
            for j in range(0, n, 2):
                if u64(node + OB["hamt_collision_array"] + 8 * j) == key:
                    return u64(node + OB["hamt_collision_array"] + 8 * j + 8)
            return None
        shift += 5
    ok(False, "HAMT deeper than 7 levels")

def check_context(t):
    import contextvars
    sentinel = object()
    nvars = 40     # more than 16 at one level: an array node
    vs = [contextvars.ContextVar("v%d" % i, default=sentinel) for i in range(nvars)]
    vals = ["value %d" % i for i in range(nvars)]
    def inside():
        for v, x in zip(vs, vals):
            v.set(x)
        ctx = u64(t + OB["tstate_context"])
        ok(tpname(ctx).endswith(b"Context"), "tstate->context is a Context")
        hamt = u64(ctx + OB["context_vars"])
        ok(tpname(hamt) == b"hamt", "ctx_vars is a hamt")
        ok(u64(hamt + OB["hamt_count"]) == nvars, "h_count")
        root = u64(hamt + OB["hamt_root"])
        ok(tpname(root) == b"hamt_array_node", "%d variables: an array root" % nvars)
        ok(u64(root + OB["hamt_array_count"]) <= 32, "a_count")
        for v, x in zip(vs, vals):
            vh = ctypes.c_int64.from_address(id(v) + OB["contextvar_hash"]).value
            ok(vh == hash(v), "var_hash")
            ok(u64(id(v) + OB["contextvar_default"]) == id(sentinel), "var_default")
            h32 = ((vh & 0xffffffff) ^ ((vh >> 32) & 0xffffffff))
            ok(hamt_find(root, h32, id(v)) == id(x), "lookup of %s" % v.name)
        # the cache ContextVar.get() trusts: its value for this thread state
        # at this context version
        v = vs[-1]
        ok(v.get() is vals[-1], "get")
        ok(u64(id(v) + OB["contextvar_cached"]) == id(vals[-1]), "var_cached")
        ok(u64(id(v) + OB["contextvar_cached_tsid"]) == u64(t + OB["tstate_id"]),
           "var_cached_tsid is the thread state's id")
        ok(u64(id(v) + OB["contextvar_cached_tsver"]) == u64(t + OB["tstate_context_ver"]),
           "var_cached_tsver is the thread state's context_ver")
        return ctx
    ctx = contextvars.copy_context()
    ok(ctx.run(inside) == id(ctx), "the running context is the thread's")
    out["context_vars"] = nvars

def outer():
    return wälk_ƒ()

def main():
    res = outer()
    interp, t = my_tstate()
    check_context(t)
    return res

print(json.dumps(main()))
'''


def _run(argv, cfg, env=None):
    r = subprocess.run(argv + ["-c", WALKER, json.dumps(cfg)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(r.stdout), None


def _table_cfg(minor, vals):
    t = dict(vals)
    t["frame_model"] = {8: "objects", 9: "objects", 10: "objects",
                        11: "311", 12: "312"}[minor]
    t["instr_model"] = {8: "bytes", 9: "bytes", 10: "units"}.get(minor,
                                                                  "pointer")
    return {"kind": "table", "table": t}


def verify_all(inputs, proot, sroot, builtin_values, layout_values):
    ok = True
    for label, (minor, ver, inc, facts) in sorted(inputs.items(),
                                                 key=lambda x: (x[1][0], x[0])):
        if minor <= 12:
            cfg = _table_cfg(minor, builtin_values(minor, facts))
        else:
            cfg = {"kind": "layout", "layout": layout_values(minor, facts)}
        env = None
        if label.startswith("pyenv"):
            argv = [os.path.join(proot, "versions", ver, "bin",
                                 "python3.%d" % minor), "-I", "-B"]
        else:
            ld = os.path.join(sroot, "lib64", "ld-linux-x86-64.so.2")
            libs = ":".join(os.path.join(sroot, d) for d in
                            ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"))
            exe = os.path.join(sroot, "usr", "bin", "python3.%d" % minor)
            argv = [ld, "--library-path", libs, exe, "-I", "-B"]
            env = dict(os.environ, PYTHONHOME=os.path.join(sroot, "usr"),
                       PYTHONDONTWRITEBYTECODE="1")
            if not (os.path.exists(ld) and os.path.exists(exe)):
                sys.stderr.write("verify-live: %s: no runnable binary, "
                                 "skipped\n" % label)
                continue
        res, err = _run(argv, cfg, env)
        if res is None:
            sys.stderr.write("verify-live: %s: FAILED: %s\n" % (label, err))
            ok = False
            continue
        sys.stderr.write("verify-live: %s: %d checks passed; frames %s; "
                         "chain %s; tagged f_executable %d; %s\n"
                         % (label, res["checks"], " <- ".join(res["names"]),
                            ",".join(res["chain"]), res["tagged"],
                            res["values"]))
    return ok
