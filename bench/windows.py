#!/usr/bin/python3
"""What a profiler costs the service, side by side with perf (issue 25's
table): one python3.15 target (bench/targets/cpu.py units --zlib: ~20 ms
units of fixed Python work 14 frames deep with a zlib.compress in each,
timestamped) runs for the whole benchmark; each profiler in turn is
attached for a window of --window seconds, then nothing runs for as long,
--cycles times, rotating through the profilers every cycle (A on, off, B
on, off, ...) so slow drift of the machine's speed falls on all alike.
Units wholly inside an "on" window (after --margin: the attach) are "on",
wholly inside the "off" window that follows are its "off"; a profiler's
slowdown = median(on) / median(off), over all its windows, with the
median of its per-window ratios beside it. The "null" profiler (sleep for
the window) measures the noise floor in the same run.

Profilers (--profilers, comma-separated; default all):
  null        sleep WINDOW
  perf        perf record -F RATE -p PID (no call graph)
  perf-g      perf record -F RATE -g -p PID (frame-pointer call graph)
  perf-dwarf  perf record -F RATE --call-graph dwarf,8192 -p PID (the kernel's
              copy of 8 KiB of user stack and the registers per sample: what
              an unprivileged user may open on their own process where
              perf_event_paranoid <= 2)
  fw          framewalk record (its default: bpf as root, whole stacks)
  fw-py       framewalk record --python-only
  fw-vm       framewalk record --backend vm (read from the target's CPU)
  fw-vm-any   framewalk record --backend vm --vm-cpu any (from anywhere)
  fw-ptrace   framewalk record --backend ptrace
  pinned-copy bench/pinned_copy.c: a process that moves to the target's CPU
              and copies 4 KiB of it each tick, nothing else (the floor of
              any reader that runs on the target's CPU, as fw-vm does)
Each at every rate in --rates (default 100,1000). From framewalk's report:
the BPF program's mean run time and runs per sample, and framewalk's own
CPU per sample (its "profiler CPU" / samples: start-up and output
included).

  bench/windows.py FRAMEWALK [--rates 100,1000] [--cycles 10] [--window 2]
                   [--base OLD_FRAMEWALK]
With --base, each framewalk profiler asked is also run from that build
("base:fw-ptrace" and so on), in the same cycles: a change measured in one
run against the build before it.
Writes results/windows.{json,txt}. Run as root on an otherwise idle machine.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

PROFILERS = ("null", "perf", "perf-g", "perf-dwarf", "fw", "fw-py", "fw-vm", "fw-vm-any", "fw-ptrace", "pinned-copy")
FW_ARGS = {"fw": [], "fw-py": ["--python-only"], "fw-vm": ["--backend", "vm"],
           "fw-vm-any": ["--backend", "vm", "--vm-cpu", "any"],
           "fw-ptrace": ["--backend", "ptrace"]}
BACKEND_RE = re.compile(r"^Backend:\s+(\S+)", re.M)


def build_pinned_copy(where):
    """bench/pinned_copy.c compiled into WHERE; its path."""
    exe = os.path.join(where, "pinned_copy")
    subprocess.run(["cc", "-O2", "-Wall", "-o", exe,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "pinned_copy.c")],
                   check=True)
    return exe


def command(kind, framewalk, pid, rate, window, out, base=None):
    if kind.startswith("base:"):
        return command(kind[5:], base, pid, rate, window, out)
    if kind == "null":
        return ["sleep", str(window)]
    if kind == "pinned-copy":
        return [os.path.join(os.path.dirname(framewalk), "pinned_copy"), str(pid), str(rate),
                str(window)]
    if kind.startswith("perf"):
        g = {"perf-g": ["-g"], "perf-dwarf": ["--call-graph", "dwarf,8192"]}.get(kind, [])
        return ["timeout", "-s", "INT", str(window), "perf", "record", "-q", "-F", str(rate)] + \
            g + ["-p", str(pid), "-o", out]
    return [framewalk, "record", "-q", "-p", str(pid), "-d", str(window), "-r", str(rate)] + \
        FW_ARGS[kind] + ["-o", out]


def window_units(units, start, end, margin):
    return [e - s for s, e in units if s >= start + margin and e <= end]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--rates", default="100,1000")
    ap.add_argument("--profilers", default=",".join(PROFILERS))
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--margin", type=float, default=0.5,
                    help="seconds of each window left out (attaching, detaching)")
    ap.add_argument("--unit-ms", type=float, default=20.0)
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    ap.add_argument("--name", default="windows")
    ap.add_argument("--base", help="an older framewalk build to run beside FRAMEWALK")
    a = ap.parse_args()
    fb.ensure_root()
    kinds = a.profilers.split(",")
    for k in kinds:
        if k not in PROFILERS:
            raise SystemExit("unknown profiler %s (one of %s)" % (k, ", ".join(PROFILERS)))
    if any(k.startswith("perf") for k in kinds) and not shutil.which("perf"):
        raise SystemExit("perf is not installed (Debian: linux-perf)")
    fw = os.path.join(fb.prepare(a), "framewalk")
    shutil.copy(a.framewalk, fw)          # rebuilding mid-run mixes no builds
    if "pinned-copy" in kinds:
        build_pinned_copy(os.path.dirname(fw))
    base = None
    if a.base:
        base = fw + "-base"
        shutil.copy(a.base, base)
        kinds += ["base:" + k for k in kinds if k.startswith("fw")]
    rates = [int(r) for r in a.rates.split(",")]
    configs = [(k, r) for r in rates for k in kinds]
    total = len(configs) * a.cycles * 2 * (a.window + 0.3) + 30
    target = fb.units_target(total, "--unit-ms", a.unit_ms)
    # read its units as they come: a full pipe would stop the target
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(target.stdout), daemon=True)
    reader.start()
    raw = os.path.join(a.results, "raw")
    windows = {c: [] for c in configs}      # (on_start, on_end, off_end)
    reports = {c: [] for c in configs}
    try:
        time.sleep(2)
        for cycle in range(a.cycles):
            for c in configs:
                kind, rate = c
                out = os.path.join(raw, "%s-%s-%d-%d.%s" % (a.name, kind.replace(":", "-"), rate, cycle,
                                                            "txt" if "fw" in kind else "data"))
                t0 = time.monotonic()
                p = subprocess.Popen(command(kind, fw, target.pid, rate, a.window, out, base),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                err = p.communicate(timeout=a.window + 60)[1]
                t1 = time.monotonic()
                if p.returncode not in (0, 124) and kind != "null":
                    raise SystemExit("%s failed (%d): %s" % (kind, p.returncode, err[-1500:]))
                time.sleep(a.window)
                windows[c].append((t0, t1, time.monotonic()))
                if "fw" in kind and os.path.exists(out):
                    reports[c].append(open(out, errors="replace").read())
                fb.log("cycle %d %s@%d: %.2f s on" % (cycle + 1, kind, rate, t1 - t0))
        time.sleep(1.5)         # the target writes its units 50 at a time: the last ones out
    finally:
        target.kill()
        target.wait()
        reader.join(10)
    units = []
    for line in lines:
        parts = line.split()
        if len(parts) == 2:
            units.append((float(parts[0]), float(parts[1])))
    units.sort()
    res = {"benchmark": a.name, "cycles": a.cycles, "window": a.window, "margin": a.margin,
           "unit_ms": a.unit_ms, "machine": fb.machine_info(a.framewalk), "rows": []}
    for c in configs:
        kind, rate = c
        on, off, ratios = [], [], []
        for (s, e, f) in windows[c]:
            w_on = window_units(units, s, e, a.margin)
            w_off = window_units(units, e, f, a.margin)
            on += w_on
            off += w_off
            if w_on and w_off:
                ratios.append(statistics.median(w_on) / statistics.median(w_off))
        row = {"profiler": kind, "rate": rate, "units_on": len(on), "units_off": len(off),
               "slowdown": statistics.median(on) / statistics.median(off) if on and off else None,
               "window_ratio_median": statistics.median(ratios) if ratios else None}
        if reports[c]:
            counts = [fb.report_counts(t) for t in reports[c]]
            samples = sum(n for n, _ in counts)
            bpf = [fb.bpf_runs(t) for t in reports[c]]
            bpf = [(float(m.group(1)), int(m.group(2))) for m in bpf if m]
            be = BACKEND_RE.search(reports[c][0])
            fw_cpu = sum(cpu for _, cpu in counts)
            row.update(backend=be.group(1) if be else None, samples=samples,
                       fw_cpu_us_per_sample=fw_cpu / samples * 1e6 if samples else None)
            if bpf:
                runs = sum(n for _, n in bpf)
                row.update(bpf_us_per_run=sum(us * n for us, n in bpf) / runs if runs else None,
                           bpf_runs_per_sample=runs / samples if samples else None)
        res["rows"].append(row)
    fb.write_json(os.path.join(a.results, a.name + ".json"), res)
    lines = ["Target slowdown, profilers attached in turn for %g s windows, %d cycles "
             "(python3.15, cpu.py units --zlib, ~%g ms units; first %g s of each window left out)"
             % (a.window, a.cycles, a.unit_ms, a.margin), "",
             "%-14s %6s %9s %13s %10s %12s %12s %14s" % (
                 "profiler", "rate", "slowdown", "per-window", "units on", "BPF us/run",
                 "runs/sample", "fw CPU us/smp")]
    for r in res["rows"]:
        lines.append("%-14s %6d %9s %13s %10d %12s %12s %14s" % (
            r["profiler"], r["rate"], fb.fmt(r["slowdown"], "x{:.3f}"),
            fb.fmt(r["window_ratio_median"], "x{:.3f}"), r["units_on"],
            fb.fmt(r.get("bpf_us_per_run"), "{:.2f}"), fb.fmt(r.get("bpf_runs_per_sample"), "{:.2f}"),
            fb.fmt(r.get("fw_cpu_us_per_sample"), "{:.1f}")))
    lines += ["", "slowdown: median unit time in the profiler's windows / in the idle windows "
              "after them; per-window: median of each window pair's ratio. null = the noise floor."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.results, a.name + ".txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
