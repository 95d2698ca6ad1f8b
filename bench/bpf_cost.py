#!/usr/bin/python3
"""The BPF program's time in the kernel per run, in steady state (issue 25,
goal 2): the same target as steady.py (bench/targets/cpu.py units --zlib
under python3.15, 14 Python frames over zlib), recorded with the default
(whole stacks) and --python-only at --rate. While each capture runs, the
program's run_time_ns and run_cnt are read once a second from
/proc/FRAMEWALK/fdinfo (the kernel keeps them while framewalk has BPF
statistics on, which it does for its whole capture), per program type (the
perf_event program that samples, the task iterator that reads waiting
threads). The first --skip seconds are left out (the program's first runs
copy untrimmed stacks and the iterator lists every thread), and each
one-second window gives delta(run_time_ns) / delta(run_cnt); printed: the
median of those windows over every rep, their spread (quartiles), runs per
second, and the capture's runs per sample (from the report). The report's
own "BPF: program mean" line is one mean over the whole capture, warm-up
included; this is the steady state's.

Given several builds (a change and its base), each rep runs every build
in turn on the same target: the VM's speed drifts by +-10% between runs a
minute apart (the same build read 4.66 and 5.20 us), so only builds
interleaved in one run compare.

  bench/bpf_cost.py FRAMEWALK [FRAMEWALK2 ...] [--rate 1000] [--seconds 12]
      [--skip 2] [--reps 3] [--configs default,python-only]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

CONFIGS = {"default": [], "python-only": ["--python-only"], "per-cpu": ["--subprocesses"]}
# enum bpf_prog_type (linux/bpf.h)
PROG_TYPES = {7: "perf_event", 26: "iterator"}


def prog_stats(pid):
    """{prog_type: (run_time_ns, run_cnt)} summed over pid's BPF program fds."""
    out = {}
    d = "/proc/%d/fdinfo" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        return out
    for fd in fds:
        try:
            text = open(os.path.join(d, fd)).read()
        except OSError:
            continue
        t = re.search(r"^prog_type:\s+(\d+)", text, re.M)
        ns = re.search(r"^run_time_ns:\s+(\d+)", text, re.M)
        cnt = re.search(r"^run_cnt:\s+(\d+)", text, re.M)
        if not (t and ns and cnt):
            continue
        kind = PROG_TYPES.get(int(t.group(1)), "type %s" % t.group(1))
        a, b = out.get(kind, (0, 0))
        out[kind] = (a + int(ns.group(1)), b + int(cnt.group(1)))
    return out


def capture(fw, pid, a, extra, out):
    """One capture: its windows {kind: [(us per run, runs per s)]} and the report's text."""
    proc = subprocess.Popen([fw, "record", "-q", "-p", str(pid), "-d", str(a.seconds),
                             "-r", str(a.rate)] + extra + ["-o", out])
    windows, last = {}, None
    t0 = time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() - t0 < a.seconds + 60:
            time.sleep(1.0)
            now, stats = time.monotonic(), prog_stats(proc.pid)
            if last and now - t0 > a.skip + 1 and now - t0 < a.seconds:
                dt = now - last[0]
                for kind, (ns, cnt) in stats.items():
                    ns0, cnt0 = last[1].get(kind, (0, 0))
                    if cnt > cnt0:
                        windows.setdefault(kind, []).append(
                            ((ns - ns0) / (cnt - cnt0) / 1000.0, (cnt - cnt0) / dt))
            last = (now, stats)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return windows, open(out, errors="replace").read() if os.path.exists(out) else ""


def label(k, builds):
    """A row's name: the config, after its build's index when there are several."""
    return k[1] if len(builds) == 1 else "%d %s" % k


def quartiles(xs):
    if len(xs) < 4:
        return None, None
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk", nargs="+")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--skip", type=float, default=2.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default="default,python-only",
                    help="which of %s" % ", ".join(CONFIGS))
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.framewalk]
    a.framewalk = builds[0]
    raw = fb.prepare(a)
    fws = []
    for i, b in enumerate(builds):
        fws.append(os.path.join(raw, "framewalk-bpfcost-%d" % i))
        shutil.copy(b, fws[-1])
    # a row per build and config, named by the build's index when there are several
    names = [(i, n) for n in a.configs.split(",") for i in range(len(fws))]
    seconds = (a.seconds + 5) * a.reps * len(names) + 30
    target = fb.units_target(seconds)
    fb.drain(target)
    rows = {k: {"windows": {}, "runs_per_sample": [], "report_us": []} for k in names}
    try:
        for rep in range(a.reps):
            for k in names:
                i, n = k
                out = os.path.join(raw, "bpfcost-%d-%s.txt" % (i, n))
                windows, text = capture(fws[i], target.pid, a, CONFIGS[n], out)
                samples, _ = fb.report_counts(text)
                m = fb.bpf_runs(text)
                r = rows[k]
                for kind, w in windows.items():
                    r["windows"].setdefault(kind, []).extend(w)
                if m:
                    r["report_us"].append(float(m.group(1)))
                    if samples:
                        r["runs_per_sample"].append(int(m.group(2)) / samples)
                fb.log("rep %d %s: %s" % (rep + 1, label(k, builds), {
                    kind: "%.2f us x %d" % (statistics.median(x[0] for x in w), len(w))
                    for kind, w in windows.items()}))
    finally:
        target.kill()
        target.wait()

    lines = ["The BPF program's time per run at %d Hz (python3.15, cpu.py units --zlib): "
             "median of 1 s windows after the first %gs, %d reps of %gs; the report's own "
             "mean (warm-up included) beside it" % (a.rate, a.skip, a.reps, a.seconds)]
    if len(builds) > 1:
        lines += ["build %d: %s" % (i, b) for i, b in enumerate(builds)]
    lines += ["", "%-14s %-11s %10s %17s %10s %8s %12s %12s" % (
        "config", "program", "us/run", "quartiles", "runs/s", "windows", "runs/sample",
        "report us")]
    for k in names:
        r = rows[k]
        for kind in sorted(r["windows"]):
            w = r["windows"][kind]
            us = [x[0] for x in w]
            lo, hi = quartiles(us)
            lines.append("%-14s %-11s %10s %17s %10s %8d %12s %12s" % (
                label(k, builds), kind, fb.fmt(statistics.median(us), "{:.2f}"),
                "%s-%s" % (fb.fmt(lo, "{:.2f}"), fb.fmt(hi, "{:.2f}")),
                fb.fmt(statistics.median(x[1] for x in w), "{:.0f}"), len(w),
                fb.fmt(fb.median(r["runs_per_sample"]) if kind == "perf_event" and
                       r["runs_per_sample"] else None, "{:.2f}"),
                fb.fmt(fb.median(r["report_us"]) if kind == "perf_event" and
                       r["report_us"] else None, "{:.2f}")))
    text = "\n".join(lines) + "\n"
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "bpf_cost.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
