#!/usr/bin/python3
"""Maximum sampling rate: framewalk vs 3.15's profiling.sampling, one run.

One single-threaded CPU-bound python3.15 target (targets/cpu.py spin) is
started once; the two profilers take turns on it (F,P,P,F,F,P,... so neither
always goes first), each asked for 1,000,000 Hz for --seconds. Per capture:

  achieved rate   ticks (one stack of every thread) per second, as each
                  profiler reports it
  error rate      failed / taken samples, as each profiler reports it
  CPU per sample  steady-state profiler CPU (utime+stime from /proc/PID/stat,
                  polled, excluding start-up and output) / achieved rate;
                  also whole-process CPU (getrusage of the child) / samples
  target share    CPU the target got while being sampled (it should stay ~1.0)

Writes results/rate.json and results/rate.txt; raw outputs in results/raw/.

  bench/rate.py FRAMEWALK [--seconds 10] [--reps 3] [--rate 1000000]
                [--fw-args '--backend vm --vm-cpu any']
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402


def one_capture(kind, framewalk, target, rate, seconds, raw, tag, fw_args=()):
    if kind == "framewalk":
        out_txt = os.path.join(raw, "rate-%s.txt" % tag)
        cmd = fb.framewalk_cmd(framewalk, target.pid, rate, seconds, out_txt) + list(fw_args)
        log_path = os.path.join(raw, "rate-%s.log" % tag)
    else:
        in_root = "%s/rate-%s.collapsed" % (fb.ROOT_TMP, tag)
        cmd = fb.peer_cmd(target.pid, rate, seconds, in_root)
        log_path = os.path.join(raw, "rate-%s.txt" % tag)
    tcpu0 = fb.proc_cpu_seconds(target.pid)
    st0 = fb.read_stat()
    r = fb.run_profiler(kind, cmd, log_path)
    st1 = fb.read_stat()
    tcpu1 = fb.proc_cpu_seconds(target.pid)
    r["other_load_cpus"] = fb.other_cpu_load(st0, st1, (tcpu1 - tcpu0) + r["cpu_total_s"])
    text = open(out_txt if kind == "framewalk" else log_path, errors="replace").read() \
        if (kind != "framewalk" or os.path.exists(out_txt)) else ""
    parsed = fb.parse_framewalk(text) if kind == "framewalk" else fb.parse_peer(text)
    r.update(parsed)
    # Steady state: skip the first 1.5 s (start-up, attach) and stop at
    # `seconds` after spawn, before the end of the capture and the output.
    util = fb.steady_cpu_util(r["polls"], 1.5, seconds)
    r["steady_cpu_util"] = util
    rate_achieved = r.get("rate")
    r["cpu_us_per_sample_steady"] = (util / rate_achieved * 1e6) if util and rate_achieved else None
    r["cpu_us_per_sample_total"] = (r["cpu_total_s"] / r["ticks"] * 1e6) if r.get("ticks") else None
    r["target_cpu_share"] = ((tcpu1 - tcpu0) / r["wall_s"]) if tcpu0 is not None and tcpu1 is not None else None
    del r["polls"]
    if r["exit"] != 0 or "rate" not in r:
        fb.log("%s capture %s: exit %s, parsed %s (see %s)" % (kind, tag, r["exit"], parsed, log_path))
    return r


def summarize(caps):
    out = {}
    for kind in ("framewalk", "peer"):
        cs = [c for c in caps if c["kind"] == kind and not c.get("busy")]
        all_busy = not cs
        if all_busy:            # never quiet: report them all, flagged
            cs = [c for c in caps if c["kind"] == kind]
        out[kind] = {
            "captures": len(cs),
            "rate": fb.median(c.get("rate") for c in cs),
            "rate_best": max((c.get("rate") or 0) for c in cs) if cs else None,
            "error_pct": fb.median(c.get("error_pct") for c in cs),
            "cpu_us_per_sample_steady": fb.median(c.get("cpu_us_per_sample_steady") for c in cs),
            "cpu_us_per_sample_total": fb.median(c.get("cpu_us_per_sample_total") for c in cs),
            "steady_cpu_util": fb.median(c.get("steady_cpu_util") for c in cs),
            "target_cpu_share": fb.median(c.get("target_cpu_share") for c in cs),
            "tick_mean_us": fb.median(c.get("tick_mean_us") for c in cs),
            "other_load_cpus": fb.median(c.get("other_load_cpus") for c in cs),
            "all_busy": all_busy,
            "discarded_busy": 0 if all_busy else sum(1 for c in caps if c["kind"] == kind and c.get("busy")),
            "failed": sum(1 for c in cs if c["exit"] != 0 or c.get("rate") is None),
        }
    f, p = out["framewalk"]["rate"], out["peer"]["rate"]
    out["rate_ratio"] = (f / p) if f and p else None
    return out


def report(res):
    s = res["summary"]
    lines = ["Maximum rate: %d Hz requested, %g s captures, %d each, single-threaded "
             "CPU-bound python3.15 target (medians)" % (res["rate_requested"], res["seconds"], res["reps"]),
             "",
             "%-10s %12s %8s %14s %14s %9s %9s" % ("profiler", "samples/s", "errors",
                                                  "CPU us/sample", "(whole proc)", "prof CPU", "target"),
             ]
    for kind in ("framewalk", "peer"):
        k = s[kind]
        lines.append("%-10s %12s %7s%% %14s %14s %9s %9s" % (
            kind, fb.fmt(k["rate"], "{:,.0f}"), fb.fmt(k["error_pct"], "{:.2f}"),
            fb.fmt(k["cpu_us_per_sample_steady"]), fb.fmt(k["cpu_us_per_sample_total"]),
            fb.fmt(k["steady_cpu_util"], "{:.0%}"), fb.fmt(k["target_cpu_share"], "{:.0%}")))
    lines.append("")
    lines.append("framewalk / peer achieved rate: %s (goal >= 3x at equal or lower error rate)"
                 % fb.fmt(s["rate_ratio"], "{:.2f}x"))
    for kind in ("framewalk", "peer"):
        if s[kind]["all_busy"]:
            lines.append("WARNING: every %s capture ran while other jobs kept the machine busy" % kind)
    lines.append("best capture: framewalk %s/s, peer %s/s" % (
        fb.fmt(s["framewalk"]["rate_best"], "{:,.0f}"), fb.fmt(s["peer"]["rate_best"], "{:,.0f}")))
    lines.append("")
    lines.append("Per capture:")
    for c in res["captures"]:
        counted = not c.get("busy") or s[c["kind"]]["all_busy"]
        lines.append("  %-10s %12s/s  err %6s%%  steady %6s us/sample  proc %6s us/sample  other load %s CPUs  exit %s" % (
            c["kind"], fb.fmt(c.get("rate"), "{:,.0f}"), fb.fmt(c.get("error_pct")),
            fb.fmt(c.get("cpu_us_per_sample_steady")), fb.fmt(c.get("cpu_us_per_sample_total")),
            fb.fmt(c.get("other_load_cpus")), c["exit"]) + ("" if not c.get("busy") else "  (busy)" if counted else "  (busy: not counted)"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rate", type=int, default=1000000)
    ap.add_argument("--quiet-wait", type=float, default=30.0,
                    help="before each capture wait up to this many seconds for other jobs to go quiet")
    ap.add_argument("--busy", type=float, default=0.3,
                    help="a capture during which other jobs used more CPUs than this is not counted")
    ap.add_argument("--retries", type=int, default=1, help="re-runs of a capture not counted as busy")
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    ap.add_argument("--fw-args", default="",
                    help="more framewalk options, space-separated (e.g. '--backend vm')")
    a = ap.parse_args()
    raw = fb.prepare(a)
    caps = []
    interrupted = False
    try:
        run_captures(a, raw, caps)
    except (fb.Stop, KeyboardInterrupt):
        interrupted = True
        fb.log("interrupted: writing the %d captures taken so far" % len(caps))
    res = {"benchmark": "rate", "rate_requested": a.rate, "seconds": a.seconds, "reps": a.reps,
           "interrupted": interrupted,
           "machine": fb.machine_info(a.framewalk), "captures": caps}
    res["summary"] = summarize(caps)
    fb.write_json(os.path.join(a.results, "rate.json"), res)
    text = report(res)
    with open(os.path.join(a.results, "rate.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


def run_captures(a, raw, caps):
    with fb.ProcMount() as pm, fb.Target("cpu.py", "spin") as target:
        order = []
        for i in range(a.reps):
            order += [("framewalk", "peer"), ("peer", "framewalk")][i % 2]
        for n, kind in enumerate(order):
            for attempt in range(a.retries + 1):
                pm.ensure()
                fb.wait_quiet([target.pid], a.quiet_wait)
                tag = "%s-%d%s" % (kind, n // 2 + 1, "" if not attempt else "-retry%d" % attempt)
                fb.log("rate: %s capture %d/%d" % (kind, n + 1, len(order)))
                c = one_capture(kind, a.framewalk, target, a.rate, a.seconds, raw, tag,
                                a.fw_args.split())
                load = c.get("other_load_cpus")
                c["busy"] = load is not None and load > a.busy
                caps.append(c)
                if not c["busy"]:
                    break
                fb.log("machine was busy (%.2f CPUs) during the capture%s" % (
                    load, ": retrying" if attempt < a.retries else ""))


if __name__ == "__main__":
    main()
