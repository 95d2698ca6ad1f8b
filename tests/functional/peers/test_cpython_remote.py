"""CPython's own remote-inspection suite (python/cpython
Lib/test/test_external_inspection.py, PSF licence), translated to
framewalk's CLI: each case runs the script CPython's test runs (cpython/,
LICENSE-PSF; the port it reports to is its argv[1]) and asserts what the test
asserts of RemoteUnwinder, through `framewalk dump` (get_stack_trace) or
`framewalk record` (the async and status cases). CPython reads only its own
version; these run on every interpreter the case's Python features exist
on. Line numbers are CPython's, shifted by the licence notice."""
import os
import re

import pytest

from fwtest import collapsed_lines, is_python_frame, parse_frame
from peertest import ASYNC, RECORDED, dump_until, has_frame, record

def qual(interp, name):
    """framewalk names a frame by co_qualname from 3.11 on, co_name before
    (CPython's reader exists from 3.14 only, so its tests expect qualnames)."""
    return name if interp.version >= (3, 11) else name.rsplit(".", 1)[-1]


def start(peer, listener, interp, rel, *args):
    return peer(interp, rel, listener.port, *args)


def py_only(frames):
    return [parse_frame(f) for f in frames if is_python_frame(f)]


def tids_sent(data, tag):
    return [int(x) for x in re.findall(tag + rb":(\d+)", data)]


def capture(tmp_path, args, name="out.collapsed"):
    out = tmp_path / name
    r = record(args, out)
    assert r.returncode == 0, r
    return collapsed_lines(out.read_text()), r


def label_tid(label):
    return int(re.match(r".* \((\d+)\)(?: \[pid \d+\])?$", label).group(1))


# --- TestGetStackTrace --------------------------------------------------------

def test_remote_stack_trace(interp, peer, listener):
    """test_remote_stack_trace: the thread's stack is foo (:15), baz, bar,
    Thread.run, Thread._bootstrap_inner, Thread._bootstrap (innermost first);
    the main thread is at <module> (:19)."""
    t = start(peer, listener, interp, "cpython/remote_stack_trace.py")
    listener.wait_for(t, [b"ready:main", b"ready:thread"])
    path = t.target_path()
    head, threads = dump_until(t, lambda h, th: has_frame(th, "foo", path, t.line(15))
                               and has_frame(th, "<module>", path, t.line(19)))
    worker = [frames for _, _, frames in threads.values()
              if any(f[0] == "foo" and f[2] == t.line(15) for f in frames)]
    assert len(worker) == 1, threads
    innermost_first = [f[0] for f in reversed(worker[0])]
    # 3.8-3.10: framewalk prints `run`, not `Thread.run` (co_name: no qualname there)
    assert innermost_first[:6] == ["foo", "baz", "bar"] + [
        qual(interp, n) for n in ("Thread.run", "Thread._bootstrap_inner",
                                  "Thread._bootstrap")], worker[0]
    assert threads[t.pid][2][0] == ("<module>", path, t.line(19)), threads[t.pid]


def test_remote_stack_trace_non_ascii_names(interp, peer, listener):
    """test_remote_stack_trace_non_ascii_names: a function and a file named
    with 1-, 2- and 4-byte characters are read whole."""
    rel = "cpython/mod_zażółć_λάμβδα_𐌀𐌁𐌂𐌃.py"
    t = start(peer, listener, interp, rel)
    listener.wait_for(t, [b"ready"])
    func = "zażółć_λάμβδα_𐌀𐌁𐌂𐌃"
    head, threads = dump_until(t, lambda h, th: has_frame(th, func))
    frame = [f for f in threads[t.pid][2] if f[0] == func]
    assert frame and frame[0][1] == t.target_path(), threads


def async_chains(lines, thread=None):
    """{innermost task name: [frames from the first [task] frame]} of the
    samples that have tasks (on THREAD's label prefix when given)."""
    out = {}
    for label, frames, count in lines:
        if thread and not label.startswith(thread + " ("):
            continue
        first = next((k for k, f in enumerate(frames) if f.startswith("[task] ")), None)
        if first is None:
            continue
        chain = frames[first:]
        task = [f for f in chain if f.startswith("[task] ")][-1][len("[task] "):]
        out.setdefault(task, []).append(chain)
    return out


def after_task(chain, name):
    """The Python frames (name, line) of a chain after its [task] NAME frame,
    up to the next [task] frame."""
    k = chain.index("[task] " + name)
    rest = []
    for f in chain[k + 1:]:
        if f.startswith("[task] "):
            break
        if is_python_frame(f):
            n, _, line = parse_frame(f)
            rest.append((n, line))
    return rest


def tasks_of(chain):
    return [f[len("[task] "):] for f in chain if f.startswith("[task] ")]


@pytest.mark.parametrize("factory", ["asyncio.new_event_loop", "new_eager_loop"])
@pytest.mark.interps("py3.12", "py3.13", "sid-py3.15")
def test_async_remote_stack_trace(interp, peer, listener, tmp_path, factory):
    """test_async_remote_stack_trace (both loop factories): tasks c2_root,
    sub_main_1, sub_main_2 and Task-1; c2_root runs c5 (:10), c4 (:14), c3
    (:17), c2 (:20) and is awaited by Task-1 (through TaskGroup's __aexit__,
    main :26), sub_main_1 and sub_main_2 (c1 :23), which Task-1 awaits.
    framewalk shows the graph as stacks (record --async --mode wall): the
    running chain has one of its awaiters above it, every waiting task its
    own chain. TaskGroup and asyncio.run's loop_factory need 3.12."""
    if interp.version < (3, 12):
        pytest.skip("the script needs asyncio.run(loop_factory=) (3.12)")
    t = start(peer, listener, interp, "cpython/async_taskgroup.py", factory)
    listener.wait_for(t, [b"ready"])
    lines, r = capture(tmp_path, ["-p", t.pid, "--async", "--mode", "wall", "-d", 1])
    chains = async_chains(lines)
    # CPython 3.13's eager task factory names asyncio.run's task "None"
    # (asyncio.current_task().get_name() == 'None' there; 3.14 says Task-1):
    # framewalk shows the name the task has
    main = "None" if interp.version == (3, 13) and factory == "new_eager_loop" else "Task-1"
    assert {"c2_root", "sub_main_1", "sub_main_2"} <= set(chains), (sorted(chains), lines)
    for chain in chains["c2_root"]:
        assert after_task(chain, "c2_root")[:4] == [
            ("c2", t.line(20)), ("c3", t.line(17)), ("c4", t.line(14)), ("c5", t.line(10))], chain
        assert tasks_of(chain)[0] == main, chain
        assert after_task(chain, main)[0] == ("main", t.line(26)), chain
        assert tasks_of(chain)[1:] in (["c2_root"], ["sub_main_1", "c2_root"],
                                       ["sub_main_2", "c2_root"]), chain
    for name in ("sub_main_1", "sub_main_2"):
        for chain in chains[name]:
            assert tasks_of(chain) == [main, name], chain
            assert after_task(chain, name)[0] == ("c1", t.line(23)), chain
            assert chain[-1] == "[await] task c2_root", chain


@pytest.mark.interps(*ASYNC)
def test_async_gather_remote_stack_trace(interp, peer, listener, tmp_path):
    """test_async_gather_remote_stack_trace: Task-2 runs deep (:11) under c1
    (:15) and is awaited by Task-1 (main :21, through gather). framewalk
    refuses --async before 3.11 (exit 5)."""
    t = start(peer, listener, interp, "cpython/async_gather.py")
    listener.wait_for(t, [b"ready"])
    out = tmp_path / "gather.collapsed"
    r = record(["-p", t.pid, "--async", "--mode", "wall", "-d", 1], out)
    if interp.version < (3, 11):
        assert r.returncode == 5 and "--async is not supported" in r.stderr, r
        return
    assert r.returncode == 0, r
    chains = async_chains(collapsed_lines(out.read_text()))
    assert "Task-2" in chains, chains
    for chain in chains["Task-2"]:
        assert tasks_of(chain) == ["Task-1", "Task-2"], chain
        assert after_task(chain, "Task-1")[0] == ("main", t.line(21)), chain
        assert after_task(chain, "Task-2")[:2] == [("c1", t.line(15)), ("deep", t.line(11))], chain


@pytest.mark.interps(*ASYNC)
def test_async_remote_stack_trace_from_non_main_thread(interp, peer, listener, tmp_path):
    """test_async_remote_stack_trace_from_non_main_thread: the running task
    "worker task" of a loop in thread async-worker is found there."""
    t = start(peer, listener, interp, "cpython/async_other_thread.py")
    data = listener.wait_for(t, [b"ready:"])
    worker_tid = tids_sent(data, b"ready")[0]
    out = tmp_path / "thread.collapsed"
    r = record(["-p", t.pid, "--async", "--mode", "wall", "-d", 1], out)
    if interp.version < (3, 11):
        assert r.returncode == 5 and "--async is not supported" in r.stderr, r
        return
    assert r.returncode == 0, r
    lines = collapsed_lines(out.read_text())
    on_worker = [f for label, f, c in lines if label_tid(label) == worker_tid]
    # the running task on the worker thread (Task-1, waiting on it, is sampled too)
    assert any("[task] worker task" in f for f in on_worker), [";".join(f) for f in on_worker]
    assert all(any(x.startswith("[task] ") for x in f) for f in on_worker), on_worker
    assert all(label.startswith("async-worker (") for label, f, c in lines
               if label_tid(label) == worker_tid), lines


@pytest.mark.interps("sid-py3.14", "sid-py3.15")
def test_subinterpreter_stack_trace(interp, peer, listener):
    """test_subinterpreter_stack_trace (concurrent.interpreters, 3.14+): the
    main interpreter's main_worker and the subinterpreter's sub_worker or
    nested_func are both seen; and the main thread, joining, at <module>."""
    t = start(peer, listener, interp, "cpython/subinterpreter.py")
    listener.wait_for(t, [b"ready:main", b"ready:sub"])
    head, threads = dump_until(t, lambda h, th: has_frame(th, "main_worker") and (
        has_frame(th, "sub_worker") or has_frame(th, "sub_worker.<locals>.nested_func")),
        timeout=5)
    assert t.pid in threads and threads[t.pid][2] and \
        threads[t.pid][2][0][0] == "<module>", threads


# --- TestDetectionOfThreadStatus ----------------------------------------------

def _status_target(peer, listener, interp):
    t = start(peer, listener, interp, "cpython/thread_status.py")
    data = listener.wait_for(t, [b"ready:main", b"ready:sleeper", b"ready:busy"])
    return t, tids_sent(data, b"ready:sleeper")[0], tids_sent(data, b"ready:busy")[0]


def test_thread_status_detection(interp, peer, listener):
    """test_thread_status_detection (cpu mode): the sleeper is off CPU, the
    busy thread on CPU: dump's thread states."""
    t, sleeper, busy = _status_target(peer, listener, interp)
    dump_until(t, lambda h, th: sleeper in th and busy in th and th[sleeper][1] == "off-cpu"
               and th[busy][1] == "on-cpu")


@pytest.mark.interps(*RECORDED)
def test_thread_status_gil_detection(interp, peer, listener, tmp_path):
    """test_thread_status_gil_detection: the busy thread holds the GIL, the
    sleeper does not (record --mode gil: the busy thread's samples hold it,
    the sleeper has none that do)."""
    t, sleeper, busy = _status_target(peer, listener, interp)
    dump_until(t, lambda h, th: busy in th and has_frame({busy: th[busy]}, "busy"))
    lines, r = capture(tmp_path, ["-p", t.pid, "--mode", "gil", "-d", 1])
    holding = {}
    for label, frames, count in lines:
        if "<waiting for GIL>" in frames or "<running without GIL>" in frames:
            continue
        holding[label_tid(label)] = holding.get(label_tid(label), 0) + count
    assert holding.get(busy, 0) >= 20 and holding.get(sleeper, 0) == 0, (holding, r)


@pytest.mark.interps(*RECORDED)
def test_thread_status_exception_mode_filtering(interp, peer, listener, tmp_path):
    """test_thread_status_exception_detection / _mode_filtering: the thread
    inside `except ValueError` has an exception, the normal one does not and
    is filtered out (record --mode exception: only the first is sampled,
    ending in <exception ValueError>)."""
    t = start(peer, listener, interp, "cpython/exception_threads.py")
    data = listener.wait_for(t, [b"exception:", b"normal:"])
    exc_tid, normal_tid = tids_sent(data, b"exception")[0], tids_sent(data, b"normal")[0]
    lines, r = capture(tmp_path, ["-p", t.pid, "--mode", "exception", "-d", 1])
    tids = {label_tid(label) for label, f, c in lines}
    assert exc_tid in tids and normal_tid not in tids, (tids, r)
    assert all("<exception ValueError>" in f for label, f, c in lines
               if label_tid(label) == exc_tid), lines


SCENARIOS = {"except_block": True, "finally_propagating": True,
             "finally_after_except": False, "finally_no_exception": False}


@pytest.mark.interps(*RECORDED)
def test_exception_detection_scenarios(interp, peer, listener, tmp_path):
    """TestExceptionDetectionScenarios: a thread in an except block or with
    an exception propagating through a finally has one; one in a finally
    after the exception was handled, or with none raised, has none. The four
    scripts are recorded in one capture (-p four times, --mode exception)."""
    started = {}
    for name in SCENARIOS:
        started[name] = start(peer, listener, interp, "cpython/exc_%s.py" % name)
    data = listener.wait_until(list(started.values()),
                               lambda d: len(tids_sent(d, b"ready")) >= 4)
    tid_of = {}
    for tid in tids_sent(data, b"ready"):
        for name, p in started.items():
            if os.path.exists("/proc/%d/task/%d" % (p.pid, tid)):
                tid_of[name] = tid
    assert len(tid_of) == 4, (tid_of, data)
    args = []
    for p in started.values():
        args += ["-p", p.pid]
    lines, r = capture(tmp_path, args + ["--mode", "exception", "-d", 1])
    tids = {label_tid(label) for label, f, c in lines}
    got = {name: tid_of[name] in tids for name in SCENARIOS}
    assert got == SCENARIOS, (got, lines)

