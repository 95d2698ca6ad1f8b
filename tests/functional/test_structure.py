"""record -p on structure.py: every known leaf shows with its exact frame
chain (names per interpreter version, line numbers from the source markers),
and >= 99% of each thread's samples have one of that thread's valid chains
(whole chains, innermost frame included: fwtest.StructureSpec), through the
default backend (each sample at one instant) and through the reader that
never stops the target (--backend vm)."""
from collections import Counter

import pytest

from fwtest import (StructureSpec, chain_matches, fmt_frames, parse_collapsed_waiting,
                    run_fw)

THREADS = ["fw-method", "fw-lambda", "fw-gen", "fw-genexpr", "fw-nested",
           "fw-helper", "fw-unicode", "fw-worker"]


@pytest.mark.parametrize("backend", ["default", "vm"])
def test_structure(interp, structure, tmp_path, backend):
    w = structure
    names = w.thread_names()
    assert sorted(names.values()).count("fw-worker") == 1, names
    out = tmp_path / "structure.collapsed"
    # wall mode: every thread at every tick, so each thread's chains are
    # checked over ~400 samples, not only the ticks it held the GIL. The
    # default gives whole stacks (bpf): their Python frames, in their order,
    # must be the whole true chain.
    extra = [] if backend == "default" else ["--backend", backend]
    r = run_fw("record", "-p", w.pid, "-d", "2", "-r", "200", "--mode", "wall", *extra,
               "--format", "collapsed", "-o", out, "-q", timeout=60)
    assert r.returncode == 0, r
    assert w.alive(), "the target died while being profiled"
    raw = out.read_bytes()
    samples = parse_collapsed_waiting(raw, merged=backend == "default")
    assert samples, "no samples recorded"

    by_tid = {}
    for tname, tid, frames, count, waiting in samples:
        assert tid in names, "sample for unknown thread %d (threads: %s)" % (tid, names)
        # Python's name where threading has one (the main thread), else the comm
        want = "MainThread" if tid == w.pid else names[tid]
        assert tname == want, "thread %d labelled %r, want %r (comm %r)" % (
            tid, tname, want, names[tid])
        by_tid.setdefault(tid, Counter())[(tuple(frames), waiting)] += count

    # The thread named from inside itself with prctl shows as "fw-worker (TID)".
    worker_tid = [t for t, n in names.items() if n == "fw-worker"][0]
    assert ("\nfw-worker (%d);" % worker_tid).encode() in b"\n" + raw
    # Non-ASCII function names come out as UTF-8.
    assert "calcul_énergie (".encode("utf-8") in raw
    assert "計算 (".encode("utf-8") in raw

    spec = StructureSpec(w)
    problems = []
    for tid, stacks in sorted(by_tid.items()):
        key = spec.key_for(w, tid, names[tid])
        if key not in spec.valid:
            problems.append("unexpected thread %s (%d) with %d samples"
                            % (names[tid], tid, sum(stacks.values())))
            continue
        total = sum(stacks.values())
        good = sum(c for (f, waiting), c in stacks.items()
                   if spec.matches_any(key, list(f), waiting))
        # vm reads without stopping and keeps a copy that mixes two moments
        # by design (src/sampler/vm.c; test_code_cache allows it 2% too):
        # 7 of 402 of sid-py3.15's generator thread once (a caller's line
        # one past the call), 2026-12-02; the stopping and instant readers 1%
        need = 0.98 if backend == "vm" else 0.99
        if good < need * total:
            bad = [(c, fmt_frames(f) + (" [waiting]" if waiting else ""))
                   for (f, waiting), c in stacks.most_common()
                   if not spec.matches_any(key, list(f), waiting)][:5]
            problems.append(
                "thread %s: only %d of %d samples have a valid chain; valid: %s; "
                "unexpected (count, stack): %s" % (key, good, total, spec.valid[key], bad))

    for comm in THREADS:
        tid = [t for t, n in names.items() if n == comm]
        assert len(tid) == 1, "workload thread %s not found: %s" % (comm, names)
        stacks = by_tid.get(tid[0])
        if not stacks:
            problems.append("thread %s (%d) has no samples" % (comm, tid[0]))
            continue
        if not any(chain_matches(spec.exact[comm], list(f)) for f, _ in stacks):
            problems.append("thread %s: expected chain %s not found; got: %s" % (
                comm, spec.exact[comm],
                [(c, fmt_frames(f)) for (f, _), c in stacks.most_common(4)]))
    assert not problems, "\n".join(problems)


@pytest.mark.interps("py3.12", "py3.13", "sid-py3.13", "sid-py3.14", "sid-py3.15")
def test_no_interpreter_shim_frames(interp, workload, tmp_path):
    """A class's __init__ called from Python shows under its caller, without
    the interpreter's shim code in between (3.13+ _Py_InitCleanup); with
    --native-all the shim is kept, as the interpreter's other internals are."""
    w = workload(interp, "class_init.py")
    out = tmp_path / "init.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", "2", "-r", "500", "-f", "collapsed", "-o", out,
               "-q", timeout=60)
    assert r.returncode == 0, r
    text = out.read_text()
    init = [l for l in text.splitlines() if "Point.__init__ (" in l or ";__init__ (" in l]
    assert init, text[:2000]
    shim = [l for l in text.splitlines() if "(__init__:0)" in l]
    assert not shim, "shim frames in:\n" + "\n".join(shim[:5])
    # whole chains: build -> Point.__init__, nothing between
    names = "Point.__init__" if interp.has_qualname() else "__init__"
    for line in init:
        frames = [f.split(" (")[0] for f in line.rpartition(" ")[0].split(";")[1:]]
        assert frames[-2:] == ["build", names], line
    if interp.version >= (3, 13):
        r = run_fw("record", "-p", w.pid, "-d", "1", "-r", "500", "--native-all",
                   "-f", "collapsed", "-o", out, "-q", timeout=60)
        assert r.returncode == 0, r
        assert "(__init__:0)" in out.read_text()
