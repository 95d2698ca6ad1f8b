#!/usr/bin/env python3
"""Is a distance from the stopped reference the reader's or the reference's?

Three readers of one call-heavy target at once, with N more busy processes
on the machine: the default (bpf, events on the target's threads: its CPU
time), bpf with events per CPU (--subprocesses: each CPU's wall time, an
independent clock) and the ptrace reference (stopped reads, cpu mode
weighted by the CPU time each thread used since its previous tick). When
the two bpf readers agree and both are far from the reference, the
reference is off: under load it takes fewer ticks, each standing for more
time. --plain runs the reference at the normal priority, else at
bench/accuracy.py's ON_TIME (chrt -f 10 where granted), as the tests do.

    bench/reference_under_load.py build/framewalk [--interp py3.12] [--reps 5]
                                  [--hogs 2] [--plain]

Prints per run the three leaf distances (points) and each reader's samples
and share of ticks taken (docs/BENCHMARKS.md, "Accuracy").
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

READERS = {
    "default": (1999, []),
    "ref": (797, ["--backend", "ptrace", "--python-only"]),
    "percpu": (1201, ["--subprocesses"]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--interp", default="py3.12")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--hogs", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--plain", action="store_true", help="the reference at normal priority")
    a = ap.parse_args()
    prefix = {"ref": []} if a.plain else {}
    # killed in the finally below (a timeout wrapper would leave its child running)
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.hogs)]
    rows = []
    try:
        real = accuracy.run_readers
        accuracy.run_readers = lambda fw, pid, s, r, name, **kw: real(
            fw, pid, s, r, name, **dict(kw, prefix=prefix))
        for rep in range(a.reps):
            res = accuracy.measure(a.framewalk, accuracy.INTERPS[a.interp], a.seconds,
                                   readers=READERS)
            bad = [r for r, v in res.items() if v["returncode"] != 0]
            if bad:
                sys.exit("%s failed: %s" % (bad, res[bad[0]]["stderr"][-500:]))
            row = (accuracy.compare(res, "default")[0], accuracy.compare(res, "percpu")[0],
                   accuracy.compare(res, "default", "percpu")[0])
            rows.append(row)
            print("rep %d: default-ref %.1f  percpu-ref %.1f  default-percpu %.1f  %s"
                  % ((rep + 1,) + row + ({k: (v["samples"], v.get("ticks_pct"))
                                          for k, v in res.items()},)), flush=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    print("reference %s, %d busy processes, %d runs: medians default-ref %.1f, percpu-ref "
          "%.1f, default-percpu %.1f" % ("plain" if a.plain else "ON_TIME %s" % accuracy.ON_TIME,
                                         a.hogs, a.reps,
                                         *(statistics.median(r[i] for r in rows) for i in range(3))))


if __name__ == "__main__":
    main()
