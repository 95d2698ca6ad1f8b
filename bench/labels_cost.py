#!/usr/bin/python3
"""What --label costs per sample (issue 28), in the kernel and in user space:
tests/workloads/labels_app.py's asyncio server under its own client (each
request a task that sets `route` and `tenant`; most samples walk the
context's HAMT) recorded at --rate with each configuration in turn, on the
same target, --reps times (round robin: A, B, C, A, B, C, ...):

- bpf without labels, bpf with two labels: the BPF program's mean run time
  ("BPF:" line) and framewalk's CPU per sample, both medians;
- bpf, ptrace and vm with the labels: framewalk's own "label ... mean X us"
  (user space's time to make a sample's label set: for bpf rendering what
  the program copied, for ptrace and vm the reads themselves).

  bench/labels_cost.py FRAMEWALK [--python PATH] [--rate 1000] [--seconds 3] [--reps 3]
Prints one line per configuration; writes bench/results/labels_cost.txt.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

LABELS = ["--label", "route=__main__:route", "--label", "tenant=__main__:tenant"]
CONFIGS = [("bpf", ["--backend", "bpf"]),
           ("bpf+labels", ["--backend", "bpf"] + LABELS),
           ("ptrace+labels", ["--backend", "ptrace", "--python-only"] + LABELS),
           ("vm+labels", ["--backend", "vm"] + LABELS)]
LABEL_LINE = re.compile(r"read for (\d+) samples, mean ([0-9.]+) us each; values: (\d+) from "
                        r"the variable's cache, (\d+) by walking the context, (\d+) unreadable")


def capture(fw, pid, rate, seconds, out, extra):
    subprocess.run([fw, "record", "-q", "-p", str(pid), "-d", str(seconds), "-r", str(rate)] +
                   extra + ["-o", out], check=True, timeout=seconds + 120)
    text = open(out, errors="replace").read()
    samples, cpu = fb.report_counts(text)
    bpf = fb.bpf_runs(text)
    lab = LABEL_LINE.search(text)
    return {"samples": samples,
            "cpu_us": cpu / samples * 1e6 if samples else None,
            "bpf_us": float(bpf.group(1)) if bpf else None,
            "label_us": float(lab.group(2)) if lab else None,
            "cached": int(lab.group(3)) if lab else None,
            "walked": int(lab.group(4)) if lab else None,
            "unreadable": int(lab.group(5)) if lab else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--python", default="/root/.pyenv/versions/3.12.1/bin/python3.12")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    a = ap.parse_args()
    raw = fb.prepare(a)
    fw = os.path.join(raw, "framewalk-labels")
    shutil.copy(a.framewalk, fw)
    load = int((a.seconds + 2) * a.reps * len(CONFIGS) + 20)
    app = os.path.join(fb.REPO, "tests/workloads/labels_app.py")
    target = subprocess.Popen([a.python, app, "asyncio", str(load)], stdout=subprocess.PIPE,
                              text=True)
    if not target.stdout.readline().startswith("READY"):
        target.kill()
        raise SystemExit("labels_app.py did not start")
    threading.Thread(target=lambda: [None for _ in target.stdout], daemon=True).start()
    rows = {n: [] for n, _ in CONFIGS}
    try:
        for rep in range(a.reps):
            for n, extra in CONFIGS:
                out = os.path.join(raw, "labels-%s.txt" % n)
                rows[n].append(capture(fw, target.pid, a.rate, a.seconds, out, extra))
                fb.log("rep %d %s: %s" % (rep + 1, n, rows[n][-1]))
                time.sleep(0.5)
    finally:
        target.kill()
        target.wait()

    def med(n, key):
        return fb.median(r[key] for r in rows[n])

    lines = ["--label's cost at %d Hz (%s, labels_app.py asyncio; medians of %d captures of %gs)"
             % (a.rate, os.path.basename(a.python), a.reps, a.seconds), "",
             "%-14s %9s %12s %12s %14s %8s %8s %11s" % (
                 "config", "samples", "CPU us/smp", "BPF us/run", "label us/smp", "cached",
                 "walked", "unreadable")]
    for n, _ in CONFIGS:
        lines.append("%-14s %9s %12s %12s %14s %8s %8s %11s" % (
            n, fb.fmt(med(n, "samples"), "{:.0f}"), fb.fmt(med(n, "cpu_us"), "{:.1f}"),
            fb.fmt(med(n, "bpf_us"), "{:.2f}"), fb.fmt(med(n, "label_us"), "{:.1f}"),
            fb.fmt(med(n, "cached"), "{:.0f}"), fb.fmt(med(n, "walked"), "{:.0f}"),
            fb.fmt(med(n, "unreadable"), "{:.0f}")))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.results, "labels_cost.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
