#!/usr/bin/python3
"""framewalk's own CPU per sample in steady state (issue 25, goal 3): the
same target (bench/targets/cpu.py units --zlib under python3.15) recorded
for a short and a long capture with each backend; the marginal cost is
(CPU long - CPU short) / (samples long - samples short), so start-up
(symbols, ELF files, the BPF program's load) and writing the output fall
out. Also the BPF program's mean run time per run and runs per sample,
from the report's "BPF:" line.

  bench/steady.py FRAMEWALK [--rate 1000] [--short 2] [--long 10] [--reps 3]
Prints one line per backend: medians over --reps.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

# per-cpu: bpf's events per CPU (as the agent's), restarted at spread moments (pacing.h)
CONFIGS = {"default": [], "python-only": ["--python-only"], "vm": ["--backend", "vm"],
           "ptrace": ["--backend", "ptrace"], "per-cpu": ["--subprocesses"]}


def capture(fw, pid, rate, seconds, out, extra):
    subprocess.run([fw, "record", "-q", "-p", str(pid), "-d", str(seconds), "-r", str(rate)] +
                   extra + ["-o", out], check=True, timeout=seconds + 120)
    text = open(out, errors="replace").read()
    samples, cpu = fb.report_counts(text)
    m = fb.bpf_runs(text)
    return samples, cpu, m and (float(m.group(1)), int(m.group(2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--short", type=float, default=2.0)
    ap.add_argument("--long", type=float, default=10.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help="which of %s" % ", ".join(CONFIGS))
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    a = ap.parse_args()
    raw = fb.prepare(a)
    fw = os.path.join(raw, "framewalk-steady")
    shutil.copy(a.framewalk, fw)
    names = a.configs.split(",")
    seconds = (a.short + a.long + 3) * a.reps * len(names) + 30
    target = fb.units_target(seconds)
    fb.drain(target)           # a unit line every ~20 ms
    rows = {n: [] for n in names}
    try:
        for rep in range(a.reps):
            for n in names:
                out = os.path.join(raw, "steady-%s.txt" % n)
                s_ticks, s_cpu, _ = capture(fw, target.pid, a.rate, a.short, out, CONFIGS[n])
                l_ticks, l_cpu, bpf = capture(fw, target.pid, a.rate, a.long, out, CONFIGS[n])
                marginal = (l_cpu - s_cpu) / (l_ticks - s_ticks) * 1e6 if l_ticks > s_ticks else None
                rows[n].append((marginal, l_cpu / l_ticks * 1e6 if l_ticks else None,
                                bpf[0] if bpf else None, bpf[1] / l_ticks if bpf and l_ticks else None,
                                l_ticks / a.long))
                fb.log("rep %d %s: %s" % (rep + 1, n, rows[n][-1]))
    finally:
        target.kill()
        target.wait()

    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    lines = ["framewalk's CPU per sample at %d Hz (python3.15, cpu.py units --zlib; medians of %d; "
             "marginal = (CPU %gs - CPU %gs) / (samples %gs - samples %gs))"
             % (a.rate, a.reps, a.long, a.short, a.long, a.short), "",
             "%-12s %14s %14s %12s %12s %10s" % ("backend", "marginal us", "whole us", "BPF us/run",
                                                 "runs/sample", "samples/s")]
    for n in names:
        r = rows[n]
        lines.append("%-12s %14s %14s %12s %12s %10s" % (
            n, fb.fmt(med([x[0] for x in r]), "{:.1f}"), fb.fmt(med([x[1] for x in r]), "{:.1f}"),
            fb.fmt(med([x[2] for x in r]), "{:.2f}"), fb.fmt(med([x[3] for x in r]), "{:.2f}"),
            fb.fmt(med([x[4] for x in r]), "{:.0f}")))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.results, "steady.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
