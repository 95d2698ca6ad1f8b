"""Is the profile right? The default `record` against a reference read at one
instant of the same process at the same time (../shared/notes/accuracy.md),
on ordinary call-heavy code (tests/workloads/callshapes.py): recursion, tiny
methods and __init__, generators, a comprehension, a decorated one-liner,
raise/except, calls into C.

The reader under test and the reference (--backend ptrace --python-only,
which stops the thread for each read, Python frames only so its stops stay
short and its ~8000 ticks are taken on a loaded machine too; --backend bpf
where ptrace cannot run beside the reader under test) sample at once at coprime rates; each profile is reduced to the
distribution of the innermost Python function and of the whole Python stack,
and the total variation distance between the two must be at most 5 points.
Two readers at one instant agree within about 1-3 points at these sample
counts (the noise floor: docs/BENCHMARKS.md, "Accuracy"). A reader must also
keep its samples: at most 1% dropped.

The reference runs at a real-time priority as root (bench/accuracy.py,
ON_TIME): a stopped read that waits for a CPU takes fewer ticks, each
standing for more CPU time, and its own noise grew past the bound on a
loaded 2-core machine (29.5% of its ticks taken; 3.8-7.5 points from two
bpf readers that agreed within 2.3) while the reader under test was right.

Also: the default as an unprivileged user on its own process (it reads with
ptrace there), in wall mode with threads that wait for the GIL, in gil mode;
and the never-stopping reader (--backend vm).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from fwtest import INTERP_BY_ID, REPO, framewalk_path, start_workload

sys.path.insert(0, str(REPO / "bench"))
import accuracy  # noqa: E402  (bench/accuracy.py: the same measure the benchmark uses)

SECONDS = 10
VM_SECONDS = 7
MAX_POINTS = 5.0
MAX_DROPPED_PCT = 1.0
MIN_SAMPLES = 4000
WORKLOAD = "callshapes.py"


def check(results, reader, ref, what, max_points=MAX_POINTS, max_dropped=MAX_DROPPED_PCT):
    res = results[reader]
    assert res["returncode"] == 0, "%s failed: %s" % (reader, res["stderr"][-1500:])
    assert results[ref]["returncode"] == 0, "%s failed: %s" % (ref, results[ref]["stderr"][-1500:])
    leaf, stack = accuracy.compare(results, reader, ref)
    detail = "%s: leaf %.1f, stack %.1f points from %s; samples %s; ticks taken %s; " \
        "dropped %.2f%%\n%s" % (
            what, leaf, stack, ref, {k: v["samples"] for k, v in results.items()},
            {k: v["ticks_pct"] for k, v in results.items() if "ticks_pct" in v},
            res.get("dropped_pct", 0.0), shares(results, reader, ref))
    # Enough samples for the noise floor to be well under the bound: with
    # 4000 against ~8000 samples over callshapes' ~10 leaf functions, two
    # readers at one instant differ by ~2 points on average (and the bound is
    # 5). 4000, not 5000: a whole-stack ptrace reader on a loaded 2-core CI
    # machine kept 4403 of its 7970 ticks (the rest are reported as ticks
    # not taken, in Samples:) while 2.3 points from the reference.
    assert res["samples"] >= MIN_SAMPLES and results[ref]["samples"] >= MIN_SAMPLES, detail
    assert leaf <= max_points and stack <= max_points, detail
    assert res.get("dropped_pct", 0.0) <= max_dropped, detail
    return leaf, stack


def shares(results, reader, ref):
    a, b = results[reader]["leaf"], results[ref]["leaf"]
    ta, tb = sum(a.values()) or 1, sum(b.values()) or 1
    rows = sorted(set(a) | set(b), key=lambda k: -abs(a[k] / ta - b[k] / tb))
    return "\n".join("  %-28s %6.2f%% %6.2f%%" % (k, 100.0 * a[k] / ta, 100.0 * b[k] / tb)
                     for k in rows[:8])


def readers(**kw):
    return {name: spec for name, spec in kw.items()}


def beside_the_target(w):
    """Pin the target to CPU 0 and return the prefix that runs the stopped
    reference there too (the reader under test is not pinned). A stopping
    reader on the other CPU read callshapes.py's `native` (zlib, sorted)
    2.1-6.1 points above the target's own clock (its thread CPU time in
    native(), bench/reference_clock.py, py3.11-static, 6 runs) while bpf was
    within 0.7 of it; 1 of 12 runs of this test went past 5 points from bpf.
    On the target's CPU the reference was -0.2 to +2.2 from that clock (6
    runs): docs/BENCHMARKS.md, "The stopped reference beside its target"."""
    assert len(os.sched_getaffinity(0)) >= 2, "this test needs two CPUs"
    w.pin(0)
    return {"ref": ["taskset", "-c", "0"] + accuracy.ON_TIME}


def test_default_matches_a_stopped_read(interp, workload):
    """Every interpreter: the default (bpf here, as root) against ptrace."""
    w = workload(interp, WORKLOAD, str(SECONDS + 30))
    res = accuracy.run_readers(framewalk_path(), w.pid, SECONDS, readers(
        default=(1999, []), ref=(797, ["--backend", "ptrace", "--python-only"])), WORKLOAD,
        prefix=beside_the_target(w))
    check(res, "default", "ref", "%s default (%s)" % (interp.id, res["default"].get("backend")))


@pytest.mark.interps("py3.8", "py3.11", "sid-py3.15")
def test_vm_against_an_instant_read(interp, workload):
    """The reader that never stops the target (--backend vm) against bpf, a
    reader at one instant that stops nothing either, on one interpreter of
    each frame layout (frame objects, 3.11's interpreter frames, 3.14+'s
    tagged references; bench/accuracy.py measures every one). The target
    runs on CPU 0 and framewalk starts on the other one: the vm reader has to
    follow it to its CPU to read it at (nearly) one instant. Both readers
    sample at ~1-2 kHz, so 7 s are enough samples."""
    assert len(os.sched_getaffinity(0)) >= 2, "this test needs two CPUs"
    w = workload(interp, WORKLOAD, str(SECONDS + 30))
    w.pin(0)
    res = accuracy.run_readers(framewalk_path(), w.pid, VM_SECONDS, readers(
        vm=(997, ["--backend", "vm"]), ref=(1999, ["--backend", "bpf"])), WORKLOAD,
        prefix={"vm": ["taskset", "-c", "1"]})
    check(res, "vm", "ref", "%s vm" % interp.id)


def as_nobody(*argv):
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
            "--inh-caps=-all"] + [str(a) for a in argv]


@pytest.mark.parametrize("interp_id", ["py3.11-static", "sid-py3.15"])
def test_unprivileged_default_on_its_own_process(interp_id):
    """As nobody on nobody's own process (no bpf: the default reads with
    ptrace), against bpf run as root at the same time."""
    interp = INTERP_BY_ID[interp_id]
    interp.check()
    # a copy nobody can read (pyenv's interpreters live under /root)
    shared = tempfile.mkdtemp(prefix="fw-ref-nobody-", dir="/tmp")
    os.chmod(shared, 0o755)
    script = os.path.join(shared, WORKLOAD)
    shutil.copy(str(REPO / "tests" / "workloads" / WORKLOAD), script)
    os.chmod(script, 0o644)
    if interp.kind == "chroot":
        inside = "/tmp/" + os.path.basename(shared) + "-" + WORKLOAD
        shutil.copy(script, str(interp.root) + inside)
        os.chmod(str(interp.root) + inside, 0o644)
        argv = ["chroot", "--userspec=nobody:nogroup", str(interp.root), interp.exe, inside]
    else:
        argv = as_nobody(interp.exe, script)
    proc = subprocess.Popen(argv + [str(SECONDS + 30)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout.readline().strip() == b"READY"
        fw = framewalk_path()
        res = accuracy.run_readers(fw, proc.pid, SECONDS, readers(
            default=(797, []), ref=(1999, ["--backend", "bpf"])), WORKLOAD,
            prefix={"default": as_nobody()})
        assert res["default"].get("backend") == "ptrace", res["default"]
        check(res, "default", "ref", "%s as nobody" % interp_id)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(shared, ignore_errors=True)
        if interp.kind == "chroot":
            os.unlink(str(interp.root) + inside)


@pytest.mark.parametrize("mode", ["wall", "gil"])
@pytest.mark.interps("py3.12", "sid-py3.15")
def test_default_modes_match_a_stopped_read(interp, workload, mode):
    """A busy thread and a sleeping one: wall mode samples the sleeper too
    (off a CPU, read without stopping it), gil mode only the GIL's holder
    (checked at each sample's instant). Both threads and the reference on
    CPU 0 (beside_the_target): 1.1-2.2 points in 8 runs; pinned, the busy
    thread was counted ~4% short in wall mode (the reference preempting it
    at the clock's moments) until wall mode counted by ticks (docs/BPF.md)."""
    w = workload(interp, WORKLOAD, str(SECONDS + 30), "1", "1")
    res = accuracy.run_readers(framewalk_path(), w.pid, SECONDS, readers(
        default=(1999, ["--mode", mode]), ref=(797, ["--backend", "ptrace", "--python-only", "--mode", mode])),
        WORKLOAD, prefix=beside_the_target(w))
    check(res, "default", "ref", "%s %s mode (%s)" % (interp.id, mode,
                                                        res["default"].get("backend")))
