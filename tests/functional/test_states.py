"""The interpreter's own states as samples see them (issue 13): --mode
exception samples only threads raising or handling an exception, each
sample ending in <exception TYPE> (before any [wait] leaf)."""
import pytest

from fwtest import INTERP_BY_ID, asan_build, collapsed_lines as collapsed, is_python_frame, parse_frame, run_fw, start_workload

SLEEP_SYSCALLS = ("clock_nanosleep", "nanosleep", "select", "pselect6", "poll")


def record(w, tmp_path, *args, seconds=1.5, rate=200):
    out = tmp_path / "out.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", seconds, "-r", rate, "-q", "-f", "collapsed",
               "-o", out, *args, timeout=90)
    assert r.returncode == 0, r
    return collapsed(out.read_text())


def python_tail(frames):
    """(name, line) of each Python frame, outermost first."""
    return [parse_frame(f)[0::2] for f in frames if is_python_frame(f)]


def state_leaves(frames):
    """The marker after the innermost Python frame, and the [wait] leaf (or None)."""
    markers = [f for f in frames if f.startswith("<exception ")]
    wait = frames[-1] if frames and frames[-1].startswith("[wait] ") else None
    return markers, wait


def assert_true_raiser_chain(py, src, frames):
    """py (a raiser sample's Python frames, outermost first) is a stack the
    raiser thread really has at some instant: from raiser down, each frame
    called from its true caller's call line, the innermost at a line of its
    own function. How fast the stack is read does not enter."""
    callers = {
        "handle": {("raiser", src.line("raiser_handler"))},
        "in_generator": {("raiser", src.line("gen_loop"))},
        "work": {("handle", src.line("handle")), ("in_generator", src.line("gen_handler"))},
    }
    names = [name for name, _ in py]
    assert "raiser" in names, frames
    chain = py[names.index("raiser"):]
    for caller, callee in zip(chain, chain[1:]):
        assert caller in callers.get(callee[0], ()), frames
    assert chain[-1][1] in src.own_lines(chain[-1][0]), frames


@pytest.mark.parametrize("interp_id,backend", [
    ("py3.8", "auto"), ("py3.9", "auto"), ("py3.10", "auto"), ("py3.11", "auto"),
    ("py3.12", "auto"), ("py3.13", "auto"), ("sid-py3.14", "auto"), ("sid-py3.15", "auto"),
    ("py3.11", "vm"), ("sid-py3.13", "vm"),
])
def test_exception_mode_samples_only_threads_handling_one(interp_id, backend, tmp_path):
    w = start_workload(INTERP_BY_ID[interp_id], "exceptions.py")
    try:
        args = ["--mode", "exception"] + (["--backend", backend] if backend != "auto" else [])
        lines = record(w, tmp_path, *args)
        src = w.source("exceptions.py")
        work = src.own_lines("work")
        handler_chains = {
            "<exception Retry>": [("raiser", src.line("raiser_handler")),
                                  ("handle", src.line("handle"))],
            "<exception KeyError>": [("raiser", src.line("gen_loop")),
                                     ("in_generator", src.line("gen_handler"))],
        }
        per_thread = {}
        for thread, frames, count in lines:
            per_thread.setdefault(thread.rsplit(" (", 1)[0], []).append((frames, count))
        # the thread doing the same work outside any handler, and the main
        # thread waiting on an Event, are never sampled
        assert set(per_thread) <= {"raiser", "sleeper"}, sorted(per_thread)
        raiser = per_thread.get("raiser", [])
        total = sum(c for _, c in raiser)
        assert total >= 100, raiser
        exact = torn = 0
        for frames, count in raiser:
            markers, _ = state_leaves(frames)
            # the generator's end raises StopIteration (3.8/3.9) for a moment
            assert len(markers) == 1 and (markers[0] in handler_chains or
                                          markers[0] == "<exception StopIteration>"), frames
            py = python_tail(frames)
            chain = handler_chains.get(markers[0])
            # the whole chain up to the thread's entry, innermost frame included
            if (len(py) >= 3 and py[-3:-1] == chain and py[-1][0] == "work" and
                    py[-1][1] in work):
                exact += count
            # vm copies a stack without stopping the thread and, by design,
            # keeps a copy that mixes two moments rather than re-reading it
            # (src/sampler/vm.c: re-reading biases against short callees), so
            # a few chains are torn: a callee copied just before it returned
            # under its caller copied just after (CI, 2026-12-02: 'work' under
            # in_generator's yield line, plain build and sanitizer build).
            # Every backend that stops the thread reads each one true.
            try:
                assert_true_raiser_chain(py, src, frames)
            except AssertionError:
                if backend != "vm":
                    raise
                torn += count
        assert torn <= 0.03 * total, (torn, total)
        # the rest: read as it raised again (the raise line itself, between
        # handlers). The share is the plain build's to show: the sanitizer
        # build reads several times more slowly, so the state and the stack,
        # read one after the other, are more often of two moments (282 of
        # 297 right in one run). Each of the two is right on its own on any
        # build: the marker (above) and the chain (assert_true_raiser_chain).
        if not asan_build():
            assert exact >= 0.95 * total, (exact, total, raiser)
        sleeper = per_thread.get("sleeper", [])
        assert sum(c for _, c in sleeper) >= 20, sleeper
        for frames, count in sleeper:
            markers, wait = state_leaves(frames)
            assert markers == ["<exception TimeoutError>"], frames
            assert python_tail(frames)[-1][0] == "sleeper", frames
        # the sleeper sits in time.sleep, and after each sleep waits to take
        # the GIL back from the two threads that spin (on two CPUs, a third
        # of its time on 3.10: pselect6 155-224, futex 65-94, running 10-48
        # of ~300 in six runs; CI 2026-12-04 saw pselect6 147 of 302). Its
        # wait is named, as in wall mode: the sleep's syscall or the GIL's
        # futex, and the sleep is a real share of it.
        def wait_of(frames):
            return (state_leaves(frames)[1] or "[wait] -").split(" ")[1]
        sleeper_total = sum(c for _, c in sleeper)
        sleeping = sum(c for f, c in sleeper if wait_of(f) in SLEEP_SYSCALLS)
        named = sum(c for f, c in sleeper if wait_of(f) in SLEEP_SYSCALLS + ("futex",))
        assert named >= 0.6 * sleeper_total, sleeper
        assert sleeping >= 0.3 * sleeper_total, sleeper
    finally:
        w.stop()


def test_exception_mode_refuses_the_bpf_backend(tmp_path):
    w = start_workload(INTERP_BY_ID["py3.12"], "exceptions.py")
    try:
        r = run_fw("record", "-p", w.pid, "-d", 1, "-q", "--mode", "exception",
                   "--backend", "bpf", "-o", tmp_path / "x.collapsed", timeout=60)
        assert r.returncode == 2, r
        assert "--mode exception cannot be sampled with --backend bpf" in r.stderr, r
        assert not (tmp_path / "x.collapsed").exists()
    finally:
        w.stop()


def marker_of(frames):
    m = [f for f in frames if f in ("<waiting for GIL>", "<running without GIL>")]
    assert len(m) <= 1 and (not m or frames[-1] == m[0]), frames
    return m[0] if m else None


@pytest.mark.parametrize("interp_id,backend", [
    ("py3.8", "ptrace"), ("py3.10", "auto"), ("py3.12", "auto"), ("py3.12", "ptrace"),
    ("sid-py3.13", "auto"), ("sid-py3.15", "auto"), ("sid-py3.15", "ptrace"),
])
def test_gil_mode_marks_waiting_and_released_threads(interp_id, backend, tmp_path):
    """Two threads taking turns with the GIL, one hashing with it released,
    one asleep: in gil mode the holder's samples carry no marker, a waiter's
    end in <waiting for GIL>, the hasher's in <running without GIL> under its
    Python frame, and a thread blocked elsewhere is not sampled."""
    w = start_workload(INTERP_BY_ID[interp_id], "gil_states.py")
    try:
        args = ["--mode", "gil", "--python-only"] + (
            ["--backend", backend] if backend != "auto" else [])
        lines = record(w, tmp_path, *args, seconds=2)
        src = w.source("gil_states.py")
        per = {}
        for thread, frames, count in lines:
            name = thread.rsplit(" (", 1)[0]
            leaf = python_tail(frames)[-1]
            per.setdefault(name, {}).setdefault(marker_of(frames), []).append((leaf, count))
        # the main thread waits on an Event: blocked elsewhere, not sampled
        # (but for a moment after READY, on its way there without the GIL)
        main = per.pop("MainThread", {})
        assert sum(c for m in main.values() for _, c in m) <= 5, main
        assert set(per) <= {"spin-a", "spin-b", "hasher", "sleeper"}, sorted(per)

        def n(name, marker):
            return sum(c for _, c in per.get(name, {}).get(marker, []))
        hasher = sum(n("hasher", m) for m in per.get("hasher", {}))
        released = n("hasher", "<running without GIL>")
        # it hashes with the GIL released, then waits for it (a switch
        # interval, longer on a loaded machine) before hashing again. How
        # its time splits is the scheduler's (two spinners and the hasher on
        # two CPUs): 25% released in a CI sanitizer pass, more on a quiet
        # machine. What framewalk must get right is each sample's marker,
        # checked by the leaves below.
        # (A sanitizer build of framewalk takes a CPU from them: one run saw
        # the hasher only waiting. There the shares are not asserted; what
        # does not depend on speed is, on every build: each hasher sample,
        # whatever its marker, is at the hash line, or at the loop's jump
        # back, which 3.12+ puts on the `while True:` line: the hasher holds
        # the GIL there between two hashes, 2 of 278 samples in a CI
        # sanitizer run with ptrace.)
        if not asan_build():
            assert released >= 10 and released >= 0.15 * hasher, per.get("hasher")
        assert hasher >= 20, per.get("hasher")
        assert n("hasher", None) <= 0.1 * hasher, per.get("hasher")
        assert all(leaf[0] == "hasher" and leaf[1] in src.lines("hash", "hashloop")
                   for m in per.get("hasher", {}).values() for leaf, _ in m), per.get("hasher")
        spin_lines = src.own_lines("spin")
        spinners = [per.get(name, {}) for name in ("spin-a", "spin-b")]
        total = sum(c for sp in spinners for m in sp.values() for _, c in m)
        held = sum(c for sp in spinners for _, c in sp.get(None, []))
        waiting = sum(c for sp in spinners for _, c in sp.get("<waiting for GIL>", []))
        # they take turns: each holds it and waits for it about half the time
        assert held >= 0.25 * total and waiting >= 0.1 * total, spinners
        # woken and on a CPU in take_gil, not yet holding it, a waiter is
        # "running without" it: up to 15% of a spinner's samples measured
        # (3.15 with ptrace), under 3% with bpf
        released = sum(c for sp in spinners for _, c in sp.get("<running without GIL>", []))
        assert released <= 0.2 * total, spinners
        assert all(leaf[0] == "spin" and leaf[1] in spin_lines
                   for sp in spinners for m in sp.values() for leaf, _ in m), spinners
    finally:
        w.stop()
