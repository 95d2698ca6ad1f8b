"""Subinterpreters (concurrent.interpreters, 3.14+): every interpreter's
threads are sampled, each labelled with its interpreter ("[interp main]",
"[interp N]"), by every backend and by dump (tests/workloads/subinterp.py:
the main thread spins in main_spin, a thread spins in sub_spin inside a
subinterpreter).
"""
import pytest

from fwtest import parse_collapsed, parse_dump, run_fw
from test_pyview import read_until_ready

INTERPS = ("sid-py3.14", "sid-py3.15")


def start(workload, interp):
    w = workload(interp, "subinterp.py", ready=False)
    lines = read_until_ready(w)
    _, tid, iid = [l for l in lines if l.startswith("WORKER ")][0].split()
    return w, int(tid), int(iid)


@pytest.mark.interps(*INTERPS)
@pytest.mark.parametrize("backend", ["bpf", "ptrace", "vm"])
def test_record_samples_every_interpreter(interp, workload, tmp_path, backend):
    w, worker, iid = start(workload, interp)
    out = tmp_path / "s.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", "2", "--python-only", "--backend", backend,
               "-f", "collapsed", "-o", out, "-q")
    assert r.returncode == 0, r
    want = {w.pid: ("main_spin", " [interp main]"), worker: ("sub_spin", " [interp %d]" % iid)}
    got = {tid: [0, 0] for tid in want}
    labels = {}
    for name, tid, frames, count in parse_collapsed(out.read_bytes()):
        if tid not in want:
            continue
        func, label = want[tid]
        labels.setdefault(tid, set()).add(name)
        got[tid][1] += count
        if name.endswith(label) and frames and frames[-1][0] == func:
            got[tid][0] += count
    print("\n%s %s: main thread %d of %d samples right, subinterpreter's thread %d of %d"
          % (interp.id, backend, got[w.pid][0], got[w.pid][1], got[worker][0], got[worker][1]))
    # both spin on a CPU for the 2 s (own GILs): each has samples, 95% right
    for tid, (right, total) in got.items():
        assert total >= 20, "thread %d (%s): %d samples; labels %s" % (
            tid, want[tid][0], total, labels.get(tid))
        assert right >= 0.95 * total, "thread %d: %d of %d right; labels %s" % (
            tid, right, total, labels.get(tid))


@pytest.mark.interps(*INTERPS)
def test_dump_shows_every_interpreter(interp, workload):
    w, worker, iid = start(workload, interp)
    r = run_fw("dump", "-p", w.pid)
    assert r.returncode == 0, r
    _, threads = parse_dump(r.stdout)
    assert w.pid in threads and worker in threads, r.stdout
    name, _, frames = threads[w.pid]
    assert name.endswith(" [interp main]") and frames[-1][0] == "main_spin", threads[w.pid]
    name, _, frames = threads[worker]
    assert name.endswith(" [interp %d]" % iid) and frames[-1][0] == "sub_spin", threads[worker]
