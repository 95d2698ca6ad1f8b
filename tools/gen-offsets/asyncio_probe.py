"""
Measures, inside one interpreter, the C layout of asyncio's Future and Task
objects (Modules/_asynciomodule.c: their structs are in no installed header)
and where a suspended coroutine keeps the object it awaits. Run by
gen-offsets.py on every interpreter it generates tables for; prints one JSON
object.

How: objects with known contents are made (a future with two callbacks, a
task with a name waiting on a future, a coroutine suspended in an await) and
their memory is searched, through ctypes, for the addresses (id()) of the
objects they must hold. A field found at no offset or at several fails the
run: the table is then not made, rather than made wrong.
"""

import asyncio
import contextvars
import ctypes
import gc
import json
import struct
import sys

minor = sys.version_info[1]
LAYOUT = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
OUT = {"minor": minor, "version": "%d.%d.%d" % sys.version_info[:3]}


def words(obj, size):
    raw = ctypes.string_at(id(obj), size)
    return [struct.unpack_from("<Q", raw, o)[0] for o in range(0, size - 7, 8)]


def find(obj, size, target, what, tag_mask=0):
    hits = [8 * i for i, w in enumerate(words(obj, size)) if w & ~tag_mask == target]
    if len(hits) != 1:
        raise SystemExit("asyncio_probe: %s found at %s in %s" % (what, hits, type(obj)))
    return hits[0]


def int32s(obj, size):
    raw = ctypes.string_at(id(obj), size)
    return {o: struct.unpack_from("<i", raw, o)[0] for o in range(0, size - 3, 4)}


def u64(addr):
    return ctypes.c_uint64.from_address(addr).value


def i32(addr):
    return ctypes.c_int32.from_address(addr).value


def yf_depth(coro, yf):
    """k such that the awaited object is the k-th slot below the value stack's top."""
    L = LAYOUT
    if L.get("gen_iframe", -1) >= 0:
        frame = id(coro) + L["gen_iframe"]
    else:
        frame = u64(id(coro) + L["gen_frame"])
    if L.get("frame_stackpointer", -1) >= 0:
        top = u64(frame + L["frame_stackpointer"])
    elif L.get("frame_stacktop", -1) >= 0:
        top = frame + L["frame_localsplus"] + 8 * i32(frame + L["frame_stacktop"])
    elif L.get("frame_stacktop_ptr", -1) >= 0:
        top = u64(frame + L["frame_stacktop_ptr"])
    else:
        top = u64(frame + L["frame_valuestack"]) + 8 * i32(frame + L["frame_stackdepth"])
    for k in range(1, 8):
        if u64(top - 8 * k) & ~3 == id(yf):
            return k
    raise SystemExit("asyncio_probe: awaited object not found below the stack top")


def cb_a(f):
    pass


def cb_b(f):
    pass


async def waiter_of(fut):
    return await fut


async def main():
    loop = asyncio.get_running_loop()
    C = asyncio.Future
    OUT["future_type"] = C.__module__ + "." + C.__qualname__
    OUT["future_size"] = C.__basicsize__
    OUT["task_size"] = asyncio.Task.__basicsize__

    f = loop.create_future()
    size = type(f).__basicsize__
    OUT["fut_loop"] = find(f, size, id(loop), "fut_loop")
    f.add_done_callback(cb_a)
    OUT["fut_callback0"] = find(f, size, id(cb_a), "fut_callback0")
    one = words(f, size)
    f.add_done_callback(cb_b)
    two = words(f, size)
    # the C future keeps the first callback apart and the others in a list:
    # the word that the second callback set
    new = [8 * i for i in range(len(one)) if one[i] == 0 and two[i] != 0]
    if len(new) != 1:
        raise SystemExit("asyncio_probe: fut_callbacks at %s" % new)
    OUT["fut_callbacks"] = new[0]
    lst = ctypes.cast(ctypes.c_void_p(two[new[0] // 8]), ctypes.py_object).value
    if type(lst) is not list or lst[0][0] is not cb_b:
        raise SystemExit("asyncio_probe: fut_callbacks is not the list of (callback, context)")
    # fut_state: 0 pending, 1 cancelled, 2 finished
    pending = int32s(f, size)
    done = loop.create_future()
    done.set_result(None)
    cancelled = loop.create_future()
    cancelled.cancel()
    d, c = int32s(done, size), int32s(cancelled, size)
    states = [o for o in pending if pending[o] == 0 and d[o] == 2 and c[o] == 1]
    if len(states) != 1:
        raise SystemExit("asyncio_probe: fut_state at %s" % states)
    OUT["fut_state"] = states[0]
    OUT["state_pending"], OUT["state_cancelled"], OUT["state_finished"] = 0, 1, 2

    # a task waiting on a future
    inner = loop.create_future()
    t = loop.create_task(waiter_of(inner), name="probe-task-name")
    await asyncio.sleep(0)
    tsize = type(t).__basicsize__
    OUT["task_coro"] = find(t, tsize, id(t._coro), "task_coro")
    OUT["task_name"] = find(t, tsize, id(t.get_name()), "task_name")
    OUT["task_fut_waiter"] = find(t, tsize, id(inner), "task_fut_waiter")
    # the task's own context (task_context: what it runs in when resumed):
    # the one Context the task refers to (its first callback's context,
    # fut_context0, is unset: it has no callbacks yet); 3.12+ name it too
    ctxs = [o for o in gc.get_referents(t) if type(o) is contextvars.Context]
    if len(ctxs) != 1:
        raise SystemExit("asyncio_probe: the task refers to %d contexts" % len(ctxs))
    if hasattr(t, "get_context") and t.get_context() is not ctxs[0]:
        raise SystemExit("asyncio_probe: the task's context is not get_context()'s")
    OUT["task_context"] = find(t, tsize, id(ctxs[0]), "task_context")

    # what the coroutine awaits (cr_await), relative to its value stack top
    coro = t._coro
    yf = coro.cr_await
    OUT["yf_type"] = type(yf).__name__
    if type(yf).__name__ == "FutureIter":
        OUT["futureiter_future"] = find(yf, type(yf).__basicsize__, id(inner),
                                        "FutureIter.future")
    OUT["yf_depth"] = yf_depth(coro, yf)

    # who a task's callbacks name when another task awaits it
    async def parent():
        await t
    p = loop.create_task(parent())
    await asyncio.sleep(0)
    wake = t._callbacks[0][0] if t._callbacks else None
    OUT["wakeup_type"] = type(wake).__name__
    if OUT["wakeup_type"] not in ("method", "builtin_function_or_method"):
        OUT["wakeup_task"] = find(wake, type(wake).__basicsize__, id(p), "wakeup's task")
    inner.set_result(None)
    await p
    print(json.dumps(OUT))


asyncio.run(main())
