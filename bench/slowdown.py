#!/usr/bin/python3
"""Target slowdown: how much longer a fixed amount of work takes while a
profiler samples it, framewalk vs 3.15's profiling.sampling, one run.

One python3.15 target (targets/cpu.py serve) calibrates a unit of pure-Python
work lasting ~--round seconds, then runs it on demand. For each rate
(default 100 Hz and 10 kHz) the rounds are interleaved in rotating order
(none, framewalk, peer / framewalk, peer, none / peer, none, framewalk ...),
--reps times: a profiler is started, left --settle seconds to attach, the
work round runs, the profiler is stopped with SIGINT (and must have sampled
at about the requested rate). Every condition runs on the same process.

Reported per rate and profiler: median round time with / without, their
ratio (the slowdown), the median of the per-repetition paired ratios, the
target's thread-CPU ratio, and the profiler's own CPU use during the round.

Writes results/slowdown.json and results/slowdown.txt.

  bench/slowdown.py FRAMEWALK [--rates 100,10000] [--reps 7] [--round 2]
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

CONDS = ("none", "framewalk", "peer")


def start_profiler(kind, framewalk, pid, rate, seconds, raw, tag):
    if kind == "framewalk":
        out = os.path.join(raw, "slow-%s.txt" % tag)
        cmd = fb.framewalk_cmd(framewalk, pid, rate, seconds, out)
        log = os.path.join(raw, "slow-%s.log" % tag)
    else:
        out = log = os.path.join(raw, "slow-%s.txt" % tag)
        cmd = fb.peer_cmd(pid, rate, seconds, "%s/slow-%s.collapsed" % (fb.ROOT_TMP, tag))
    with open(log, "w") as lf:
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT)
    return p, out, log, cmd


def stop_profiler(p, timeout=60):
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        pid, st, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = os.waitstatus_to_exitcode(st)
            return p.returncode, ru
        time.sleep(0.05)
    p.kill()
    _, st, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(st)
    return p.returncode, ru


def one_round(cond, a, target, rate, raw, tag):
    holder = []
    try:
        return _one_round(cond, a, target, rate, raw, tag, holder)
    except BaseException:
        for p in holder:            # interrupted: leave no profiler behind
            if p.poll() is None:
                p.kill()
                p.wait()
        raise


def _one_round(cond, a, target, rate, raw, tag, holder):
    r = {"cond": cond, "rate": rate}
    prof = None
    if cond != "none":
        prof, out, log, cmd = start_profiler(cond, a.framewalk, target.pid, rate,
                                             int(a.settle + a.round * 5 + 60), raw, tag)
        holder.append(prof)
        r["cmd"] = cmd
    time.sleep(a.settle)
    if prof is not None and prof.poll() is not None:
        r["error"] = "profiler exited early (%s), see %s" % (prof.returncode, log)
        fb.log(r["error"])
        return r
    pcpu0 = fb.proc_cpu_seconds(prof.pid) if prof else None
    st0 = fb.read_stat()
    tcpu0 = fb.proc_cpu_seconds(target.pid)
    line = target.command("go").split()
    tcpu1 = fb.proc_cpu_seconds(target.pid)
    st1 = fb.read_stat()
    pcpu1 = fb.proc_cpu_seconds(prof.pid) if prof else None
    r["wall_s"], r["thread_cpu_s"] = float(line[0]), float(line[1])
    own = (tcpu1 - tcpu0) + ((pcpu1 - pcpu0) if prof else 0)
    r["other_load_cpus"] = fb.other_cpu_load(st0, st1, own)
    if prof is not None:
        r["profiler_cpu_util"] = (pcpu1 - pcpu0) / r["wall_s"]
        code, ru = stop_profiler(prof)
        r["profiler_exit"] = code
        text = open(out, errors="replace").read() if os.path.exists(out) else ""
        parsed = fb.parse_framewalk(text) if cond == "framewalk" else fb.parse_peer(text)
        r["profiler_rate"] = parsed.get("rate")
        r["profiler_error_pct"] = parsed.get("error_pct")
        # exit 130 (or -2) after SIGINT is a normal stop for some tools
        if parsed.get("rate") is None:
            r["error"] = "%s produced no parsable summary (exit %s), see %s" % (cond, code, out)
            fb.log(r["error"])
        elif parsed["rate"] < 0.5 * rate:
            fb.log("%s achieved only %.0f of %d Hz in round %s" % (cond, parsed["rate"], rate, tag))
    return r


def bootstrap_ci(xs, base, n=4000, seed=1):
    """95% interval of median(xs)/median(base) by resampling both sets."""
    if len(xs) < 3 or len(base) < 3:
        return None
    rng = random.Random(seed)
    med = fb.median
    ratios = sorted(med(rng.choices(xs, k=len(xs))) / med(rng.choices(base, k=len(base)))
                    for _ in range(n))
    return [ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]]


def summarize(rounds, rates):
    out = {}
    for rate in rates:
        ok = [r for r in rounds if r["rate"] == rate and "wall_s" in r and "error" not in r]
        rr = [r for r in ok if not r.get("busy")]
        fallback = any(len([r for r in rr if r["cond"] == c]) < 3 for c in CONDS)
        if fallback:            # too few quiet rounds: count them all, flagged
            rr = ok
        base = [r for r in rr if r["cond"] == "none"]
        bw = fb.median(r["wall_s"] for r in base)
        bc = fb.median(r["thread_cpu_s"] for r in base)
        s = {"none": {"rounds": len(base), "median_wall_s": bw, "median_thread_cpu_s": bc}}
        for cond in CONDS[1:]:
            cs = [r for r in rr if r["cond"] == cond]
            w = fb.median(r["wall_s"] for r in cs)
            c = fb.median(r["thread_cpu_s"] for r in cs)
            paired = []
            for r in cs:
                mate = [b for b in base if b["rep"] == r["rep"]]
                if mate:
                    paired.append(r["wall_s"] / mate[-1]["wall_s"])
            s[cond] = {
                "rounds": len(cs),
                "median_wall_s": w,
                "median_thread_cpu_s": c,
                "slowdown": (w / bw) if w and bw else None,
                "slowdown_ci95": bootstrap_ci([r["wall_s"] for r in cs], [r["wall_s"] for r in base]),
                "slowdown_paired_median": fb.median(paired),
                "cpu_slowdown": (c / bc) if c and bc else None,
                "profiler_cpu_util": fb.median(r.get("profiler_cpu_util") for r in cs),
                "profiler_rate": fb.median(r.get("profiler_rate") for r in cs),
                "profiler_error_pct": fb.median(r.get("profiler_error_pct") for r in cs),
            }
        s["other_load_cpus_max"] = max((r.get("other_load_cpus") or 0) for r in rr) if rr else None
        s["rounds_discarded_busy"] = 0 if fallback else sum(
            1 for r in rounds if r["rate"] == rate and r.get("busy"))
        s["busy_fallback"] = fallback
        out[str(rate)] = s
    return out


def report(res):
    lines = ["Target slowdown: fixed work of ~%g s (pure Python, 1 thread, python3.15), "
             "%d interleaved repetitions per condition, medians" % (res["round_s"], res["reps"]), ""]
    lines.append("%-8s %-10s %10s %9s %17s %9s %9s %10s %10s" % (
        "rate", "profiler", "wall s", "slowdown", "95% interval", "paired", "cpu", "prof CPU", "achieved"))
    for rate, s in res["summary"].items():
        lines.append("%-8s %-10s %10s" % (rate, "none", fb.fmt(s["none"]["median_wall_s"], "{:.4f}")))
        for cond in CONDS[1:]:
            k = s[cond]
            ci = k.get("slowdown_ci95")
            lines.append("%-8s %-10s %10s %9s %17s %9s %9s %10s %10s" % (
                rate, cond, fb.fmt(k["median_wall_s"], "{:.4f}"),
                fb.fmt(k["slowdown"] and (k["slowdown"] - 1) * 100, "{:+.2f}%"),
                "%+.1f%%..%+.1f%%" % ((ci[0] - 1) * 100, (ci[1] - 1) * 100) if ci else "-",
                fb.fmt(k["slowdown_paired_median"] and (k["slowdown_paired_median"] - 1) * 100, "{:+.2f}%"),
                fb.fmt(k["cpu_slowdown"] and (k["cpu_slowdown"] - 1) * 100, "{:+.2f}%"),
                fb.fmt(k["profiler_cpu_util"], "{:.1%}"),
                fb.fmt(k["profiler_rate"], "{:,.0f}/s")))
        lines.append("%-8s other jobs on the machine: up to %s CPUs busy during a counted round; "
                     "%d rounds discarded (busier than %s CPUs)" % (
                         "", fb.fmt(s["other_load_cpus_max"]), s["rounds_discarded_busy"], res["busy"]))
        if s["busy_fallback"]:
            lines.append("%-8s WARNING: fewer than 3 quiet rounds per condition: busy rounds counted too" % "")
    lines.append("")
    lines.append("slowdown = median wall with profiler / median wall without, minus 1; 95% interval: "
                 "bootstrap of that ratio over the rounds; paired = median of per-repetition ratios; "
                 "cpu = same on the target's thread CPU time; goal < 1% at 100 Hz")
    lines.append("")
    lines.append("Rounds (in order):")
    for r in res["rounds"]:
        lines.append("  rep %d %6d Hz %-10s wall %s  cpu %s  prof %s  other %s%s" % (
            r["rep"], r["rate"], r["cond"], fb.fmt(r.get("wall_s"), "{:.4f}"),
            fb.fmt(r.get("thread_cpu_s"), "{:.4f}"), fb.fmt(r.get("profiler_rate"), "{:,.0f}/s"),
            fb.fmt(r.get("other_load_cpus")), ("  ERROR " + r["error"]) if "error" in r else
            ("" if not r.get("busy") else "  (busy)" if res["summary"][str(r["rate"])]["busy_fallback"]
             else "  (busy: not counted)")))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--rates", default="100,10000")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--round", type=float, default=2.0, help="seconds of work per round (calibrated)")
    ap.add_argument("--settle", type=float, default=1.5, help="seconds between profiler start and the round")
    ap.add_argument("--quiet-wait", type=float, default=15.0,
                    help="before each round wait up to this many seconds for other jobs to go quiet")
    ap.add_argument("--busy", type=float, default=0.3,
                    help="a round during which other jobs used more CPUs than this is not counted")
    ap.add_argument("--retries", type=int, default=1, help="re-runs of a round not counted as busy")
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    a = ap.parse_args()
    raw = fb.prepare(a)
    a.iterations = None
    rates = [int(x) for x in a.rates.split(",")]
    rounds = []
    interrupted = False
    try:
        run_rounds(a, rates, raw, rounds)
    except (fb.Stop, KeyboardInterrupt):
        interrupted = True
        fb.log("interrupted: writing the %d rounds measured so far" % len(rounds))
    res = {"benchmark": "slowdown", "rates": rates, "reps": a.reps, "round_s": a.round, "busy": a.busy,
           "interrupted": interrupted, "iterations": a.iterations,
           "machine": fb.machine_info(a.framewalk), "rounds": rounds}
    res["summary"] = summarize(rounds, rates)
    fb.write_json(os.path.join(a.results, "slowdown.json"), res)
    text = report(res)
    with open(os.path.join(a.results, "slowdown.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


def run_rounds(a, rates, raw, rounds):
    with fb.ProcMount() as pm, fb.Target("cpu.py", "serve", "--round", a.round, stdin=True) as target:
        a.iterations = int(target.ready[0])
        fb.log("slowdown: target calibrated to %s iterations per round" % target.ready[0])
        target.command("go")                      # warm-up round, not counted
        for rate in rates:
            for rep in range(a.reps):
                order = CONDS[rep % 3:] + CONDS[:rep % 3]
                for cond in order:
                    for attempt in range(a.retries + 1):
                        pm.ensure()
                        fb.wait_quiet([target.pid], a.quiet_wait)
                        tag = "%d-%s-%d" % (rate, cond, rep + 1)
                        r = one_round(cond, a, target, rate, raw, tag)
                        r["rep"] = rep
                        load = r.get("other_load_cpus")
                        r["busy"] = load is not None and load > a.busy
                        rounds.append(r)
                        fb.log("slowdown %s: %s s%s" % (tag, fb.fmt(r.get("wall_s"), "{:.4f}"),
                                                         " (machine busy, %.2f CPUs: retry)" % load
                                                         if r["busy"] and attempt < a.retries else ""))
                        if not r["busy"]:
                            break


if __name__ == "__main__":
    main()
