#!/usr/bin/env python3
"""Which reader is right about callshapes.py's `native`? The target's own
clock decides: a copy of tests/workloads/callshapes.py that adds up its
thread CPU time inside native() (time.thread_time_ns; SIGUSR2 starts the
window 2 s after the readers start, SIGUSR1 reports it at 9.5 s and exits) runs beside
the default (bpf, 1999 Hz) and the stopped reference (ptrace
--python-only, 797 Hz, real-time priority), as test_reference.py runs them.

    bench/reference_clock.py FRAMEWALK [--python /usr/bin/python3.11] [--runs 6] [--pin]

--pin: the target and the reference on CPU 0 (as the test runs now).
Prints, per run, native's share by the clock, by bpf and by the reference.
Root (bpf, the real-time priority). docs/BENCHMARKS.md, "The stopped
reference beside its target".
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import accuracy  # noqa: E402

CLOCKED = '''
ACC = [0, 0]


def report(*a):
    sys.stderr.write("CLOCK %.4f\\n" % (ACC[0] / max(1, time.thread_time_ns() - ACC[1])))
    sys.stderr.flush()
    os._exit(0)


def restart(*a):
    ACC[0], ACC[1] = 0, time.thread_time_ns()


def native():
    t = time.thread_time_ns()
    zlib.compress(DATA, 6)
    sorted(range(1000), key=abs)
    ACC[0] += time.thread_time_ns() - t


signal.signal(signal.SIGUSR1, report)
signal.signal(signal.SIGUSR2, restart)
'''


def clocked_copy(where):
    src = (HERE.parent / "tests" / "workloads" / "callshapes.py").read_text()
    old = "def native():\n    zlib.compress(DATA, 6)\n    sorted(range(1000), key=abs)\n"
    assert old in src, "callshapes.py's native() changed: update " + __file__
    src = src.replace(old, CLOCKED).replace("import zlib\n", "import zlib\nimport os\nimport signal\n", 1)
    path = Path(where) / "callshapes.py"        # the readers' distributions key on this name
    path.write_text(src)
    return path


def one_run(fw, python, script, pin):
    p = subprocess.Popen([python, str(script), "60"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "READY"
        prefix = None
        if pin:
            for tid in os.listdir("/proc/%d/task" % p.pid):
                os.sched_setaffinity(int(tid), {0})
            prefix = {"ref": ["taskset", "-c", "0"] + accuracy.ON_TIME}
        time.sleep(1)
        # The clock's window lies inside the readers' 10 s, past their
        # start-up (while they load, native runs at 51-61% for ~0.5 s; a
        # window from before it read native ~5 points high in 3 runs of 20).
        timers = [threading.Timer(2.0, os.kill, (p.pid, signal.SIGUSR2)),
                  threading.Timer(9.5, os.kill, (p.pid, signal.SIGUSR1))]
        for t in timers:
            t.start()
        res = accuracy.run_readers(fw, p.pid, 10, {
            "default": (1999, []), "ref": (797, ["--backend", "ptrace", "--python-only"])},
            "callshapes.py", prefix=prefix)
        for t in timers:
            t.join()
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    clock = [float(l.split()[1]) for l in err.splitlines() if l.startswith("CLOCK ")]
    assert clock, err[-2000:]
    shares = {}
    for name, r in res.items():
        assert r["returncode"] == 0, r["stderr"][-1500:]
        shares[name] = 100.0 * r["leaf"]["native"] / max(1, sum(r["leaf"].values()))
    return 100.0 * clock[0], shares


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--pin", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fw-refclock-") as tmp:
        script = clocked_copy(tmp)
        print("%-4s %8s %8s %8s %10s %10s" % ("run", "clock", "bpf", "ref", "bpf-clock", "ref-clock"))
        for i in range(a.runs):
            clock, s = one_run(a.framewalk, a.python, script, a.pin)
            print("%-4d %7.2f%% %7.2f%% %7.2f%% %+10.2f %+10.2f" % (
                i + 1, clock, s["default"], s["ref"], s["default"] - clock, s["ref"] - clock),
                flush=True)


if __name__ == "__main__":
    main()
