#!/usr/bin/python3
"""Target slowdown, fine-grained: the profiler stays attached and is paused
(SIGSTOP) and resumed (SIGCONT) every ~--window seconds while the target
runs ~20 ms units of fixed work back to back and timestamps each one.
Units wholly inside a running window (after a --margin) are "on", wholly
inside a paused window "off"; slowdown = median(on) / median(off) - 1.

Why: on this 2-core VM the same 1.5 s of work varies by up to +-40% between
rounds even with the machine otherwise idle (host-level noise, no steal
time reported), so slowdown.py's whole-round comparison cannot resolve 1%.
Alternating every half second cancels that slow drift. The 95% interval
is a bootstrap over windows (not units), so it stays honest about drift.

Caveat for the peer: after SIGCONT, 3.15's sampler catches up on the ticks
it missed while paused (its loop samples back to back until on schedule),
so during "on" windows it takes about twice its requested rate; the report
gives each profiler's effective rate over the on-time. framewalk skips
missed ticks. The default is framewalk only (the goal is framewalk's).

Writes results/toggle.json and results/toggle.txt (--name NAME: NAME.*).
--fw-args adds framewalk options, e.g. the eBPF backend's overhead:

  bench/toggle.py FRAMEWALK --rates 100,1000 --name toggle-bpf \
      --fw-args "--backend bpf --native --kernel --mode cpu"

With bpf, a paused framewalk leaves the BPF program attached: it keeps
running on every tick but finds the ring buffer full and returns at once,
so "off" still carries that prologue (well under a microsecond per tick)
and the slowdown is underestimated by about that much.

  bench/toggle.py FRAMEWALK [--rates 100,10000] [--seconds 60] [--profilers framewalk]
"""
import argparse
import os
import random
import shlex
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402


def run_phase(a, kind, rate, raw):
    tag = "%s-%d-%s" % (a.name, rate, kind)
    path = fb.stage("cpu.py")
    target = subprocess.Popen(["chroot", fb.ROOT, fb.PY, path, "units", "--unit-ms", str(a.unit_ms),
                               "--seconds", str(a.seconds + a.settle + 5)],
                              stdout=subprocess.PIPE, text=True)
    ready = target.stdout.readline().split()
    if not ready or ready[0] != "READY":
        target.kill()
        raise RuntimeError("units target did not start")
    if kind == "framewalk":
        out = os.path.join(raw, tag + ".txt")
        cmd = fb.framewalk_cmd(a.framewalk, target.pid, rate, a.seconds + a.settle + 30, out)
        cmd += shlex.split(a.fw_args)
        log = os.path.join(raw, tag + ".log")
    else:
        out = log = os.path.join(raw, tag + ".txt")
        cmd = fb.peer_cmd(target.pid, rate, a.seconds + a.settle + 30,
                          "%s/%s.collapsed" % (fb.ROOT_TMP, tag))
    units = []
    windows = []            # (start, end, on)
    prof = None
    try:
        with open(log, "w") as lf:
            prof = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT)
        t_start = time.monotonic()
        time.sleep(a.settle)
        if prof.poll() is not None:
            raise SystemExit("toggle: the profiler exited at once (%s): %s"
                             % (" ".join(cmd), open(log, errors="replace").read()[-2000:]))
        rng = random.Random(rate)
        on = True
        t = time.monotonic()
        end = t + a.seconds
        on_cpu = 0.0
        load0 = fb.read_stat()
        tcpu0 = fb.proc_cpu_seconds(target.pid)
        pcpu0 = fb.proc_cpu_seconds(prof.pid)
        while t < end:
            w = a.window * rng.uniform(0.8, 1.2)      # jitter: no aliasing with periodic noise
            c0 = fb.proc_cpu_seconds(prof.pid) if on else None
            time.sleep(w)
            t1 = time.monotonic()
            if on:
                on_cpu += (fb.proc_cpu_seconds(prof.pid) or 0) - (c0 or 0)
            windows.append((t, t1, on))
            on = not on
            prof.send_signal(signal.SIGCONT if on else signal.SIGSTOP)
            t = time.monotonic()
        if not on:
            prof.send_signal(signal.SIGCONT)
        load1 = fb.read_stat()
        own = (fb.proc_cpu_seconds(target.pid) - tcpu0) + (fb.proc_cpu_seconds(prof.pid) - pcpu0)
        other = fb.other_cpu_load(load0, load1, own)
        prof.send_signal(signal.SIGINT)
        t_stop = time.monotonic()
        prof.wait(60)
    finally:
        if prof is not None and prof.poll() is None:
            prof.send_signal(signal.SIGCONT)
            prof.kill()
            prof.wait()
        target.kill()
        for line in target.stdout:
            parts = line.split()
            if len(parts) == 2:
                units.append((float(parts[0]), float(parts[1])))
        target.wait()
    text = open(out, errors="replace").read() if os.path.exists(out) else ""
    parsed = fb.parse_framewalk(text) if kind == "framewalk" else fb.parse_peer(text)
    on_time = sum(e - s for s, e, o in windows if o)
    running = (t_stop - t_start) - sum(e - s for s, e, o in windows if not o)
    # classify units by window, dropping the first `margin` s of each window
    per_window = []
    j = 0
    units.sort()
    for (s, e, o) in windows:
        lo = s + a.margin
        while j < len(units) and units[j][0] < lo:
            j += 1
        k = j
        ds = []
        while k < len(units) and units[k][1] <= e:
            ds.append(units[k][1] - units[k][0])
            k += 1
        per_window.append((o, ds))
    on_d = [d for o, ds in per_window if o for d in ds]
    off_d = [d for o, ds in per_window if not o for d in ds]
    r = {"kind": kind, "rate": rate, "cmd": cmd, "windows": len(windows),
         "units_on": len(on_d), "units_off": len(off_d),
         "median_on_ms": fb.median(on_d) and fb.median(on_d) * 1e3,
         "median_off_ms": fb.median(off_d) and fb.median(off_d) * 1e3,
         "mean_on_ms": on_d and sum(on_d) / len(on_d) * 1e3,
         "mean_off_ms": off_d and sum(off_d) / len(off_d) * 1e3,
         "profiler_cpu_util_on": on_cpu / on_time if on_time else None,
         "profiler_samples": parsed.get("ticks"),
         "profiler_effective_rate_on": (parsed.get("ticks") / running) if parsed.get("ticks") and running > 0 else None,
         "profiler_error_pct": parsed.get("error_pct"),
         "other_load_cpus": other}
    if r["median_on_ms"] and r["median_off_ms"]:
        r["slowdown"] = r["median_on_ms"] / r["median_off_ms"]
        r["slowdown_mean"] = r["mean_on_ms"] / r["mean_off_ms"]
        # bootstrap over windows (pairs of adjacent on/off windows keep drift honest)
        pairs = [(per_window[i][1], per_window[i + 1][1]) if per_window[i][0] else
                 (per_window[i + 1][1], per_window[i][1]) for i in range(0, len(per_window) - 1, 2)]
        rng = random.Random(7)
        ratios = []
        for _ in range(2000):
            pick = rng.choices(pairs, k=len(pairs))
            on_s = [d for p in pick for d in p[0]]
            off_s = [d for p in pick for d in p[1]]
            if on_s and off_s:
                ratios.append(fb.median(on_s) / fb.median(off_s))
        ratios.sort()
        if ratios:
            r["slowdown_ci95"] = [ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]]
    return r


def report(res):
    lines = ["Target slowdown, paused/resumed profiler: %g s per rate, windows of ~%g s, "
             "units of ~%g ms of pure-Python work (python3.15, 1 thread)%s" % (
                 res["seconds"], res["window"], res["unit_ms"],
                 "; framewalk " + res["fw_args"] if res.get("fw_args") else ""),
             "",
             "%-7s %-10s %9s %9s %10s %17s %9s %10s %12s %7s" % (
                 "rate", "profiler", "on ms", "off ms", "slowdown", "95% interval", "mean", "prof CPU",
                 "eff. rate", "other")]
    for r in res["phases"]:
        ci = r.get("slowdown_ci95")
        lines.append("%-7d %-10s %9s %9s %10s %17s %9s %10s %12s %7s" % (
            r["rate"], r["kind"], fb.fmt(r["median_on_ms"], "{:.3f}"), fb.fmt(r["median_off_ms"], "{:.3f}"),
            fb.fmt(r.get("slowdown") and (r["slowdown"] - 1) * 100, "{:+.2f}%"),
            "%+.2f%%..%+.2f%%" % ((ci[0] - 1) * 100, (ci[1] - 1) * 100) if ci else "-",
            fb.fmt(r.get("slowdown_mean") and (r["slowdown_mean"] - 1) * 100, "{:+.2f}%"),
            fb.fmt(r["profiler_cpu_util_on"], "{:.1%}"),
            fb.fmt(r["profiler_effective_rate_on"], "{:,.0f}/s"), fb.fmt(r["other_load_cpus"])))
    lines += ["", "on/off ms: median unit time with the profiler running / paused; mean: same with means; "
              "prof CPU: profiler CPU while running; eff. rate: samples / running time; "
              "other: CPUs used by other jobs meanwhile. Goal: < 1% at 100 Hz."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--rates", default="100,10000")
    ap.add_argument("--profilers", default="framewalk")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--window", type=float, default=0.5)
    ap.add_argument("--margin", type=float, default=0.03, help="seconds ignored after each switch")
    ap.add_argument("--unit-ms", type=float, default=20.0)
    ap.add_argument("--settle", type=float, default=1.5)
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    ap.add_argument("--fw-args", default="",
                    help="more framewalk options, e.g. '--backend bpf --native --kernel'")
    ap.add_argument("--name", default="toggle", help="results/NAME.{json,txt}")
    a = ap.parse_args()
    raw = fb.prepare(a)
    phases = []
    with fb.ProcMount() as pm:
        for rate in [int(x) for x in a.rates.split(",")]:
            for kind in a.profilers.split(","):
                pm.ensure()
                fb.log("toggle: %s at %d Hz for %g s" % (kind, rate, a.seconds))
                phases.append(run_phase(a, kind, rate, raw))
    res = {"benchmark": a.name, "fw_args": a.fw_args, "seconds": a.seconds, "window": a.window, "margin": a.margin,
           "unit_ms": a.unit_ms, "machine": fb.machine_info(a.framewalk), "phases": phases}
    fb.write_json(os.path.join(a.results, a.name + ".json"), res)
    text = report(res)
    with open(os.path.join(a.results, a.name + ".txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
