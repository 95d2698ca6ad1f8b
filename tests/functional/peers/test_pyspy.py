"""py-spy's public suite (benfred/py-spy tests/integration_test.rs and
tests/integration_test.py, MIT), translated to framewalk's CLI: each case
runs py-spy's own target script (pyspy/, LICENSE-pyspy) and asserts what
py-spy asserts. py-spy's get_stack_traces() is `framewalk dump` (retried
while the target starts, as py-spy's retry_new does); its `record` cases are
`framewalk record` to collapsed stacks. Line numbers are py-spy's, shifted
by the licence notice (PeerProcess.line)."""
import os
import re
import time

import pytest

from fwtest import (collapsed_lines, is_python_frame, parse_collapsed, parse_dump, parse_frame,
                    run_fw)
from peertest import (ASYNC, CHILDREN, RECORDED, descendants, dump_until, has_frame, proc_state, python_on_path, read_lines,
                      record, try_dump)

def main_frames(threads, pid):
    return threads[pid][2] if pid in threads else None


def names(frames):
    return [f[0] for f in frames]


def py_only(frames):
    """The Python frames of a collapsed line's frame strings, parsed."""
    return [parse_frame(f) for f in frames if is_python_frame(f)]


def capture(tmp_path, args, name="out.collapsed"):
    out = tmp_path / name
    r = record(args, out)
    assert r.returncode == 0, r
    return out.read_bytes(), r


# --- integration_test.rs ----------------------------------------------------

def test_busy_loop(interp, peer):
    """test_busy_loop: the busy thread is active (on a CPU)."""
    t = peer(interp, "pyspy/busyloop.py")
    head, threads = dump_until(t, lambda h, th: has_frame(th, "busy_loop")
                               and th[t.pid][1] == "on-cpu")
    assert names(main_frames(threads, t.pid)) == ["<module>", "busy_loop"], threads


def test_long_sleep(interp, peer):
    """test_long_sleep: one thread, innermost longsleep (longsleep.py:5) under
    <module> (:9). (py-spy also says it does not own the GIL: gil mode, below.)"""
    t = peer(interp, "pyspy/longsleep.py")
    path = t.target_path()
    head, threads = dump_until(t, lambda h, th: has_frame(th, "longsleep"))
    assert list(threads) == [t.pid], threads
    assert main_frames(threads, t.pid) == [("<module>", path, t.line(9)),
                                           ("longsleep", path, t.line(5))], threads


def test_thread_names(interp, peer):
    """test_thread_names: with idle threads, 11 stacks named
    CustomThreadName-0..9 and MainThread."""
    t = peer(interp, "pyspy/thread_names.py")
    head, threads = dump_until(t, lambda h, th: len(th) == 11 and all(
        has_frame({k: v}, "<lambda>") or has_frame({k: v}, "main.<locals>.<lambda>")
        for k, v in th.items() if k != t.pid))
    expected = {"CustomThreadName-%d" % i for i in range(10)} | {"MainThread"}
    assert {name for name, _, _ in threads.values()} == expected, threads


@pytest.mark.interps(*RECORDED)
def test_recursive(interp, peer, tmp_path):
    """test_recursive: every stack of recursive.py is at most 22 deep and its
    outermost frame is <module> at line 7 or 8 (py-spy takes 100 traces; here
    100 samples of one second)."""
    t = peer(interp, "pyspy/recursive.py")
    dump_until(t, lambda h, th: has_frame(th, "recurse"))
    # wall mode: every tick reads the thread, as py-spy's reads do
    data, r = capture(tmp_path, ["-p", t.pid, "--mode", "wall", "-d", 1, "-r", 100])
    samples = parse_collapsed(data, merged=True)
    assert sum(c for *_, c in samples) >= 20, r
    for _, _, frames, count in samples:
        assert frames and len(frames) <= 22, frames
        assert frames[0][0] == "<module>" and frames[0][2] in (t.line(7), t.line(8)), frames


def test_unicode(interp, peer):
    """test_unicode: function1 (unicode💩.py:6) under <module> (:9)."""
    t = peer(interp, "pyspy/unicode💩.py")
    head, threads = dump_until(t, lambda h, th: has_frame(th, "function1"))
    assert list(threads) == [t.pid], threads
    frames = main_frames(threads, t.pid)
    assert [(n, os.path.basename(f), l) for n, f, l in frames] == [
        ("<module>", "unicode💩.py", t.line(9)), ("function1", "unicode💩.py", t.line(6))], frames


def test_cyrillic(interp, peer):
    """test_cyrillic: кириллица (:4) under <module> (:7)."""
    t = peer(interp, "pyspy/cyrillic.py")
    head, threads = dump_until(t, lambda h, th: has_frame(th, "кириллица"))
    assert list(threads) == [t.pid], threads
    assert [(n, l) for n, _, l in main_frames(threads, t.pid)] == [
        ("<module>", t.line(7)), ("кириллица", t.line(4))], threads


def test_local_vars():
    pytest.skip("py-spy's test_local_vars reads local variables (dump --locals): framewalk "
                "shows stacks only and has no locals to compare")


@pytest.mark.interps(*CHILDREN)
def test_subprocesses(interp, peer, tmp_path):
    """test_subprocesses: --subprocesses samples all 3 processes of
    subprocesses.py (the parent and two multiprocessing children; they sleep,
    so wall mode: py-spy's sampler reports idle threads)."""
    t = peer(interp, "pyspy/subprocesses.py")
    deadline = time.monotonic() + 20
    while sum(_asleep_in(pid, "target") for pid in descendants(t.pid)) < 2:
        assert time.monotonic() < deadline and t.alive(), \
            "children never started: %s" % descendants(t.pid)
        time.sleep(0.05)
    data, r = capture(tmp_path, ["-p", t.pid, "--subprocesses", "--mode", "wall", "-d", 1])
    pids = set(int(p) for p in re.findall(r"\[pid (\d+)\]", data.decode()))
    assert len(pids) >= 3 and t.pid in pids, (pids, data.decode()[:3000])


def _asleep_in(pid, func):
    parsed, _ = try_dump(pid)
    return bool(parsed) and has_frame(parsed[1], func)


@pytest.mark.interps(*CHILDREN)
def test_subprocesses_zombiechild(interp, peer, tmp_path):
    """test_subprocesses_zombiechild: following subprocesses of a process
    whose child is a zombie works (py-spy: the sampler is created)."""
    t = peer(interp, "pyspy/subprocesses_zombie_child.py")
    dump_until(t, lambda h, th: has_frame(th, "<module>", t.target_path(), t.line(11)))
    # 3.14's default start method (forkserver) reaps the child: no zombie there
    if interp.version < (3, 14):
        deadline = time.monotonic() + 20
        while not any(proc_state(k) == "Z" for k in descendants(t.pid)):
            assert time.monotonic() < deadline and t.alive(), "the child never became a zombie"
            time.sleep(0.05)
    data, r = capture(tmp_path, ["-p", t.pid, "--subprocesses", "--mode", "wall", "-d", 1])
    assert data, r


def test_negative_linenumber_increment(interp, peer):
    """test_negative_linenumber_increment: a multi-line list comprehension:
    <listcomp> (3.11: f.<locals>.<listcomp>) in lines 5-10 under f (5-10)
    under <module> (:13); 3.12 inlines it (PEP 709): f under <module>."""
    t = peer(interp, "pyspy/negative_linenumber_offsets.py")
    head, threads = dump_until(t, lambda h, th: has_frame(th, "f"))
    frames = main_frames(threads, t.pid)
    body = {t.line(n) for n in range(5, 11)}
    if interp.version <= (3, 11):
        listcomp = "f.<locals>.<listcomp>" if interp.version >= (3, 11) else "<listcomp>"
        assert names(frames) == ["<module>", "f", listcomp], frames
        assert frames[2][2] in body and frames[1][2] in body, frames
    else:
        assert names(frames) == ["<module>", "f"], frames
        assert frames[1][2] in body, frames
    assert frames[0][2] == t.line(13), frames


@pytest.mark.interps(*CHILDREN)
def test_delayed_subprocess(interp, peer, tmp_path):
    """test_delayed_subprocess: --subprocesses on a bash script that starts
    Python after 0.5 s: the samples are the Python child's, not bash's."""
    def path(host_dir, target_dir):
        if interp.kind == "host":       # not in the source tree
            host_dir, target_dir = tmp_path, str(tmp_path)
        return python_on_path(interp, host_dir, target_dir)[0]

    def argv(target_dir):
        cmd = ["bash", target_dir + "/pyspy/delayed_launch.sh"]
        return ["chroot", str(interp.root)] + cmd if interp.kind == "chroot" else cmd

    t = peer(interp, "pyspy/delayed_launch.sh", argv=argv, env_path=path)
    data, r = capture(tmp_path, ["-p", t.pid, "--subprocesses", "--mode", "wall", "-d", 2])
    text = data.decode()
    # every tid and pid of the thread labels: bash's main thread has its pid
    ids = set(int(n) for label, _, _ in collapsed_lines(text)
              for n in re.findall(r"\d+", label.rsplit(" (", 1)[-1]))
    assert ids and t.pid not in ids, (ids, r, text[:2000])
    assert "<module>" in text, text[:2000]


def test_dump_subprocesses_no_duplication(interp, peer):
    """test_dump_subprocesses_no_duplication: the parent (4 worker threads)
    and its Python child each appear once. framewalk's dump takes one
    process: each is dumped by its pid; a process header and a thread must
    not repeat."""
    t = peer(interp, "pyspy/dump_subprocesses_threads.py")
    got = read_lines(t, ["PID_PARENT=", "PID_CHILD=", "READY"])
    parent, child = int(got["PID_PARENT="]), int(got["PID_CHILD="])
    assert parent == t.pid
    head, threads = dump_until(t, lambda h, th: len(th) == 5)
    assert head["pid"] == parent
    r = run_fw("dump", "-p", parent, timeout=30)
    assert r.stdout.count("Process %d " % parent) == 1, r
    assert len(parse_dump(r.stdout)[1]) == 5, r         # parse_dump: no thread twice
    deadline = time.monotonic() + 20
    while True:
        r = run_fw("dump", "-p", child, timeout=30)
        if r.returncode == 0 and "<module>" in r.stdout:
            break
        assert time.monotonic() < deadline, r
        time.sleep(0.05)
    assert [l for l in r.stdout.splitlines() if l.startswith("Process ")] == \
        [l for l in r.stdout.splitlines() if l.startswith("Process %d " % child)], r
    assert r.stdout.count("Process %d " % child) == 1, r


@pytest.mark.interps(*CHILDREN)
def test_dump_subprocesses_skips_non_python(interp, peer, tmp_path):
    """test_dump_subprocesses_skips_non_python (a py-spy pull request, issue
    846): a non-Python child is skipped, the Python parent and child are
    profiled. framewalk's dump takes one process, so this is record
    --subprocesses: the sh child has no samples, the others have."""
    t = peer(interp, "pyspy/dump_subprocesses_non_python.py")
    got = read_lines(t, ["PID_PARENT=", "PID_NON_PYTHON=", "PID_PYTHON_CHILD=", "READY"])
    child, shell = int(got["PID_PYTHON_CHILD="]), int(got["PID_NON_PYTHON="])
    deadline = time.monotonic() + 20
    while not _asleep_in(child, "<module>"):
        assert time.monotonic() < deadline, "the Python child never started"
        time.sleep(0.05)
    data, r = capture(tmp_path, ["-p", t.pid, "--subprocesses", "--mode", "wall", "-d", 1])
    pids = set(int(p) for p in re.findall(r"\[pid (\d+)\]", data.decode()))
    assert t.pid in pids and child in pids and shell not in pids, (pids, r)


@pytest.mark.interps(*CHILDREN)
def test_thread_reuse(interp, peer, tmp_path):
    """test_thread_reuse: native stacks of a program that keeps starting
    short-lived threads: at most 3 of 100 reads fail (py-spy's tolerance);
    here at most 3% of the capture's samples dropped, exit 0."""
    t = peer(interp, "pyspy/thread_reuse.py")
    dump_until(t, lambda h, th: has_frame(th, "<lambda>") or has_frame(th, "<module>"))
    out = tmp_path / "reuse.txt"
    r = record(["-p", t.pid, "--native", "--mode", "wall", "-d", 1, "-r", 100], out)
    assert r.returncode == 0, r
    text = out.read_text()
    m = re.search(r"^Samples:\s+(\d+) stacks", text, re.M)
    e = re.search(r"^Errors:\s+(\d+) dropped", text, re.M)
    assert m and e, text[:2000]
    assert int(m.group(1)) > 0 and int(e.group(1)) <= 0.03 * (int(m.group(1)) + int(e.group(1))), \
        text[:2000]


@pytest.mark.interps(*ASYNC)
def test_asyncio_tasks(interp, peer, tmp_path):
    """test_asyncio_tasks (a py-spy pull request): nested-worker pending in
    nested_worker (:9), sleep-worker pending in sleep, finished-worker
    finished. framewalk shows tasks in stacks (record --async --mode wall):
    the two pending tasks are sampled as [task] NAME frames, the finished one
    not at all. framewalk reads tasks from 3.11 on and refuses --async
    before (exit 5), where py-spy reads them from 3.7."""
    t = peer(interp, "pyspy/asyncio_tasks.py")
    read_lines(t, ["ready"])
    out = tmp_path / "tasks.collapsed"
    r = record(["-p", t.pid, "--async", "--mode", "wall", "-d", 1], out)
    if interp.version < (3, 11):
        refusal = "--async is not supported on Python 3.%d" % interp.version[1]
        assert r.returncode == 5 and refusal in r.stderr, r
        return
    assert r.returncode == 0, r
    lines = collapsed_lines(out.read_text())
    by_task = {}
    for _, frames, count in lines:
        tasks = [f[len("[task] "):] for f in frames if f.startswith("[task] ")]
        if tasks:
            by_task.setdefault(tasks[-1], []).append(frames)
    assert "nested-worker" in by_task and "sleep-worker" in by_task, sorted(by_task)
    assert "finished-worker" not in by_task, by_task["finished-worker"]
    path = t.target_path()
    for frames in by_task["nested-worker"]:
        body = frames[frames.index("[task] nested-worker") + 1:]
        assert py_only(body)[0] == ("nested_worker", path, t.line(9)), frames
    for frames in by_task["sleep-worker"]:
        body = frames[frames.index("[task] sleep-worker") + 1:]
        assert py_only(body)[0][0] == "sleep", frames


# --- integration_test.py (py-spy's command-line tests) ------------------------

@pytest.mark.interps(*RECORDED)
def test_longsleep_gil_and_idle(interp, peer, tmp_path):
    """test_longsleep: with --gil ~no samples (<= 10); with --idle >= 95% of
    samples are the one stack <module> (:9);longsleep (:5). framewalk's
    --mode gil and --mode wall; py-spy records 2 s, here 1 s (<= 5)."""
    t = peer(interp, "pyspy/longsleep.py")
    dump_until(t, lambda h, th: has_frame(th, "longsleep"))
    gil, r = capture(tmp_path, ["-p", t.pid, "--mode", "gil", "-d", 1], "gil.collapsed")
    assert sum(c for *_, c in parse_collapsed(gil, merged=True)) <= 5, gil
    wall, r = capture(tmp_path, ["-p", t.pid, "--mode", "wall", "-d", 1], "wall.collapsed")
    per = {}
    for _, _, frames, count in parse_collapsed(wall, merged=True):
        key = tuple((n, l) for n, _, l in frames)
        per[key] = per.get(key, 0) + count
    total = sum(per.values())
    top = max(per, key=per.get)
    assert total >= 20 and per[top] >= 0.95 * total, per
    assert top == (("<module>", t.line(9)), ("longsleep", t.line(5))), per


@pytest.mark.interps(*RECORDED)
def test_busyloop_gil(interp, peer, tmp_path):
    """test_busyloop: with --gil ~all samples hold the GIL (py-spy: >= 95
    of 2 s at 100 Hz; here the same share of 1 s: >= 48)."""
    t = peer(interp, "pyspy/busyloop.py")
    dump_until(t, lambda h, th: has_frame(th, "busy_loop"))
    data, r = capture(tmp_path, ["-p", t.pid, "--mode", "gil", "-d", 1, "-r", 100])
    held = sum(c for _, frames, c in collapsed_lines(data.decode())
               if "<waiting for GIL>" not in frames and "<running without GIL>" not in frames)
    assert held >= 48, (held, r)


@pytest.mark.interps(*RECORDED)
def test_thread_names_record(interp, peer, tmp_path):
    """test_thread_names (record --threads --idle): the profile's threads are
    CustomThreadName-0..9 and MainThread."""
    t = peer(interp, "pyspy/thread_names.py")
    dump_until(t, lambda h, th: len(th) == 11)
    data, r = capture(tmp_path, ["-p", t.pid, "--mode", "wall", "-d", 1])
    got = {name for name, _, _, _ in parse_collapsed(data, merged=True)}
    expected = {"CustomThreadName-%d" % i for i in range(10)} | {"MainThread"}
    assert got == expected, got


@pytest.mark.interps("py3.9", "sid-py3.15")
def test_gc_collecting(interp, peer, tmp_path):
    """test_gc_collecting (py-spy's gc branch, Python >= 3.9): some samples
    are spent in garbage collection: framewalk's <GC> leaf, under
    fill_global_graph."""
    t = peer(interp, "pyspy/gc.py")
    dump_until(t, lambda h, th: has_frame(th, "fill_global_graph"))
    data, r = capture(tmp_path, ["-p", t.pid, "-d", 1])
    gc = [(frames, c) for _, frames, c in collapsed_lines(data.decode())
          if frames and frames[-1] == "<GC>"]
    assert gc, data.decode()[:3000]
    assert all(py_only(f)[-1][0] == "fill_global_graph" for f, _ in gc), gc
