#!/usr/bin/env python3
"""Target slowdown per backend and rate (issue 4's benchmark), side by side:
the same fixed work (work.py) runs without a profiler and under framewalk
with the vm, ptrace and bpf backends at 100 Hz, 1 kHz and 10 kHz, in
interleaved rounds (A, B, C, ... A, B, C ...), and the medians of the
target's own elapsed time give the ratios. Also: the BPF program's mean run
time (kernel BPF statistics, from the report) and lost samples.

    bench/backends/run.py FRAMEWALK [--python PY] [--rounds N] [--reps 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
    return float(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("framewalk")
    ap.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python"))
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "backends.txt"))
    a = ap.parse_args()
    work = [a.python, os.path.join(HERE, "work.py"), str(a.rounds)]
    configs = [("none", None, None)]
    for rate in ("100", "1k", "10k"):
        for backend in ("vm", "ptrace", "bpf"):
            configs.append(("%s@%s" % (backend, rate), backend, rate))
    times = {c[0]: [] for c in configs}
    reports = {}
    tmp = tempfile.mkdtemp(prefix="fw-bench-backends-")
    for rep in range(a.reps):
        for name, backend, rate in configs:
            if backend is None:
                argv = work
            else:
                native = [] if backend == "vm" else ["--native"]
                report = os.path.join(tmp, "%s.txt" % name.replace("@", "-"))
                argv = [a.framewalk, "record", "-q", "--backend", backend, *native, "-r", rate,
                        "-o", report, "--"] + work
                reports[name] = report
            times[name].append(run_one(argv))
            print("rep %d %-12s %.3f s" % (rep + 1, name, times[name][-1]), file=sys.stderr)
    base = statistics.median(times["none"])
    lines = ["Target slowdown by backend and rate (target's own elapsed time, medians of %d "
             "interleaved reps; %s; %d rounds of work.py)" % (a.reps, a.python, a.rounds),
             "", "%-12s %10s %8s   %s" % ("config", "median s", "ratio", "from the report")]
    for name, backend, rate in configs:
        med = statistics.median(times[name])
        extra = ""
        if name in reports and os.path.exists(reports[name]):
            text = open(reports[name]).read()
            for pat in (r"^BPF: +(.*)$", r"^Stopped: +(.*)$", r"^Samples: +(.*)$"):
                m = re.search(pat, text, re.M)
                if m and pat.startswith("^BPF") or (m and "Stopped" in pat):
                    extra += m.group(1) + "; "
            m = re.search(r"(\d+) lost to a full ring buffer", text)
            if m:
                extra += "lost %s; " % m.group(1)
        lines.append("%-12s %10.3f %7.3fx   %s" % (name, med, med / base, extra.strip("; ")))
    lines.append("")
    lines.append("machine: %d CPUs, load average at the end %.2f" % (os.cpu_count(),
                                                                    os.getloadavg()[0]))
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
