#!/usr/bin/python3
"""What the native copy adds to each ptrace stop: the rule behind whole
stacks by default with ptrace in cpu mode (docs/BENCHMARKS.md, "Whole
stacks by default").

One target per workload (tests/workloads: callshapes.py, call-heavy pure
Python; zlib_loop.py, time in a C library), sampled by `record --backend
ptrace` at --rate for --seconds, alternately with --python-only and with
--native, --reps times each, from one build. Each capture's text report
gives the mean and max time a thread was stopped per sample (its Stopped:
line, measured around the stop, the reads and the resume). Prints the
median over the reps of each, and the difference.

  bench/stopcost.py FRAMEWALK [--python PY] [--rate 500] [--seconds 4] [--reps 5]

Run it on a quiet machine: the stop time includes the scheduler's wake-up
of the stopped thread and of framewalk.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(HERE, "..", "tests", "workloads")
STOPPED_RE = re.compile(r"^Stopped: +mean ([0-9.]+) us, max ([0-9.]+) us", re.M)


def capture(fw, pid, view, rate, seconds):
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        r = subprocess.run([fw, "record", "-p", str(pid), "--backend", "ptrace", view,
                            "-d", str(seconds), "-r", str(rate), "-q", "-o", out.name],
                           capture_output=True, text=True, timeout=60 + seconds)
        if r.returncode:
            sys.exit("framewalk failed: %s" % r.stderr)
        m = STOPPED_RE.search(open(out.name).read())
        if not m:
            sys.exit("no Stopped: line in the report")
        return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    fw = os.path.abspath(a.framewalk)
    print("ptrace stop per sample, %s, %d Hz, %g s x %d reps, medians" %
          (a.python, a.rate, a.seconds, a.reps))
    print("%-14s %12s %12s %12s %14s" % ("workload", "python-only", "--native", "added",
                                         "max (py/nat)"))
    for script, args in (("callshapes.py", ["600"]), ("zlib_loop.py", ["600"])):
        t = subprocess.Popen([a.python, os.path.join(WORKLOADS, script)] + args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.5)
            res = {"--python-only": [], "--native": []}
            for _ in range(a.reps):
                for view in res:
                    res[view].append(capture(fw, t.pid, view, a.rate, a.seconds))
        finally:
            t.kill()
            t.wait()
        py = statistics.median(m for m, _ in res["--python-only"])
        nat = statistics.median(m for m, _ in res["--native"])
        print("%-14s %9.1f us %9.1f us %9.1f us %6.0f/%.0f us" %
              (script, py, nat, nat - py, statistics.median(x for _, x in res["--python-only"]),
               statistics.median(x for _, x in res["--native"])))


if __name__ == "__main__":
    main()
