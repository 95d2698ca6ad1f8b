"""framewalk dump: header, every thread of /proc/PID/task with its comm, and
each thread's stack (innermost last) one of the chains the workload allows."""
import ctypes
import os

import pytest

from fwtest import DUMP_THREAD_RE, StructureSpec, chain_matches, fmt_frames, frame_name, parse_dump, run_fw, Pattern


def test_dump_structure(interp, structure):
    w = structure
    names = w.thread_names()
    r = run_fw("dump", "-p", w.pid, timeout=30)
    assert r.returncode == 0, r
    head, threads = parse_dump(r.stdout_bytes.decode("utf-8"))
    assert head["pid"] == w.pid, r
    assert head["name"] == names[w.pid], r
    assert head["version"] == interp.full_version, r
    assert sorted(threads) == w.tids(), "dump threads %s, /proc/%d/task has %s" % (
        sorted(threads), w.pid, w.tids())
    assert len(threads) == 9
    assert w.alive(), "the target died while being dumped"

    spec = StructureSpec(w)
    problems = []
    for tid, (name, state, frames) in sorted(threads.items()):
        # threading's names (the main thread's is MainThread), as record labels them
        want = "MainThread" if tid == w.pid else names[tid]
        if name != want:
            problems.append("thread %d named %r, want %r (comm %r)" % (tid, name, want,
                                                                        names[tid]))
        key = spec.key_for(w, tid, names[tid])
        # A dump is one instant, so every true instant is right, the rare
        # ones too: a caller innermost on its call line (the instructions
        # around a call), running or waiting for the GIL. The sampling tests
        # count those as missing a leaf for a running thread (below 1%); a
        # single read cannot, and did fail CI once that way on py3.10
        # (fw-nested on-cpu at `return inner(n)`, 2026-12-03).
        if not spec.matches_any(key, frames, waiting=True):
            problems.append("thread %s (%d, %s): stack %s is none of %s"
                            % (key, tid, state, fmt_frames(frames), spec.valid_waiting[key]))
    assert not problems, "\n".join(problems) + "\n" + repr(r)


def seize_without_stopping(tid):
    """Make this test process tid's tracer (PTRACE_SEIZE stops nothing), so
    that framewalk's own PTRACE_SEIZE is refused. The tracee is killed with
    its workload at the end of the test."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(0x4206, tid, None, None) != 0:  # PTRACE_SEIZE
        pytest.skip("cannot ptrace here: %s" % os.strerror(ctypes.get_errno()))


@pytest.mark.parametrize("how", ["stopping", "nonblocking", "traced"])
def test_dump_busy(interp, workload, how):
    """A thread that never blocks is on-cpu, in hot_a or hot_b: read while
    stopped (the default), while running (--nonblocking), and while running
    because another tracer holds the thread (one warning, same answer)."""
    w = workload(interp, "split.py", "--seconds", "30")
    if how == "traced":
        seize_without_stopping(w.pid)
    r = run_fw("dump", "-p", w.pid, *(["--nonblocking"] if how == "nonblocking" else []),
               timeout=30)
    assert r.returncode == 0, r
    if how == "traced":
        assert "warning: ptrace refused for thread %d" % w.pid in r.stderr, r
        assert len(r.stderr.strip().splitlines()) == 1, r
    else:
        assert r.stderr == "", r
    head, threads = parse_dump(r.stdout_bytes.decode("utf-8"))
    assert sorted(threads) == w.tids() == [w.pid], r
    src = w.source("split.py")
    path = w.target_path("split.py")
    name, state, frames = threads[w.pid]
    assert state == "on-cpu", r
    top = [Pattern("<module>", path, src.lines("call_main"))]
    valid = [top + [Pattern("main", path, src.own_lines("main"))]]
    for fn, call in (("hot_a", "call_a"), ("hot_b", "call_b")):
        valid.append(top + [Pattern("main", path, src.lines(call)),
                            Pattern(fn, path, src.own_lines(fn))])
    assert any(chain_matches(c, frames) for c in valid), "stack %s, expected one of %s\n%r" % (
        fmt_frames(frames), valid, r)


def test_dump_idle(interp, workload):
    w = workload(interp, "idle.py")
    # After READY it still has to finish writing it and get into time.sleep.
    w.wait_asleep(w.pid)
    r = run_fw("dump", "-p", w.pid, timeout=30)
    assert r.returncode == 0, r
    head, threads = parse_dump(r.stdout_bytes.decode("utf-8"))
    assert head["pid"] == w.pid and head["version"] == interp.full_version, r
    assert sorted(threads) == w.tids() == [w.pid], r
    src = w.source("idle.py")
    path = w.target_path("idle.py")
    expected = [Pattern("<module>", path, src.lines("call_main")),
                Pattern("main", path, src.lines("call_idle")),
                Pattern(frame_name(interp, "idle_wait"), path, src.lines("idle_wait"))]
    name, state, frames = threads[w.pid]
    assert state == "off-cpu", r
    assert chain_matches(expected, frames), "stack %s, expected %s\n%r" % (
        fmt_frames(frames), expected, r)
    # Innermost last: the sleeping function is the last frame printed.
    last = r.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("  %s (%s:" % (frame_name(interp, "idle_wait"), path)), r


def test_dump_native_cannot_be_nonblocking():
    """--native reads registers, which needs the thread stopped: asking for
    both is a usage error (exit 2) with one line saying why, before any
    process is looked at (the pid here does not exist)."""
    r = run_fw("dump", "--native", "--nonblocking", "-p", 999999999)
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be --nonblocking" in lines[0], r
    assert r.stdout == "", r


@pytest.mark.interps("py3.9", "py3.12", "sid-py3.15")
def test_dump_names_threads_as_python_does(interp, workload):
    """dump labels each thread with threading's name, like record and
    py-spy's dump (the kernel's comm is cut at 15 bytes: "a-thread-name-l");
    a thread threading does not know keeps its kernel name."""
    w = workload(interp, "thread_names.py")
    for extra in ((), ("--native",)):
        r = run_fw("dump", "-p", w.pid, *extra, timeout=60)
        assert r.returncode == 0, r
        names = {m.group("name") for m in map(DUMP_THREAD_RE.match, r.stdout.splitlines()) if m}
        for want in ("MainThread", "reports", "a-thread-name-longer-than-15-bytes",
                     "rapports-énergie-日本", "fw-raw"):
            assert want in names, (extra, want, names)


@pytest.mark.interps("py3.12", "sid-py3.15")
@pytest.mark.parametrize("script", ["zlib_loop.py", "idle.py"])
def test_dump_native_prints_every_stack(interp, workload, script):
    """dump --native prints each thread's merged stack, a running one (Python
    above zlib) and a sleeping one (its Python frames and the wait). It
    printed headers only: its one tick was cpu mode's, which weighs the CPU
    time since a previous sample a dump does not have, and skips sleepers
    (seen first in the arm64 guest, 2026-12-03)."""
    w = workload(interp, script)
    if script == "idle.py":
        w.wait_asleep(w.pid)
    r = run_fw("dump", "--native", "-p", w.pid, timeout=60)
    assert r.returncode == 0, r
    lines = [l.strip() for l in r.stdout.splitlines()]
    if script == "zlib_loop.py":
        at = [i for i, l in enumerate(lines) if l.startswith("compress_report (")]
        assert at and any("libz" in l for l in lines[at[0] + 1:]), r
    else:
        assert any(l.startswith("%s (" % frame_name(interp, "idle_wait")) for l in lines), r
        assert lines[-1].startswith("[wait] "), r
