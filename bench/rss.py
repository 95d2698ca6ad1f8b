#!/usr/bin/python3
"""Profiler memory over a long capture: peak RSS at 1 kHz on a 50-thread
python3.15 target (targets/threads50.py: 10 CPU-bound, 20 sleeping, 10
queue-blocked, 10 lock-contending threads; a fixed set of a few hundred
distinct stacks however long it runs).

Each profiler in --profilers (default: framewalk, then 3.15's sampler) runs
for --seconds (default 600; run-all.sh --quick uses 60) on the same target,
one after the other. Every --every seconds the profiler's VmRSS and VmHWM
(/proc/PID/status) and CPU are recorded, so the series shows whether memory
follows the sample count (it must not) or only the distinct stacks (flat
once they have all been seen). At the end: peak RSS (VmHWM while sampling
and getrusage ru_maxrss including writing the output), the RSS growth over
the second half of the capture while samples kept growing, samples taken
and distinct stacks in the written profile.

Writes results/rss-<seconds>s.json and results/rss-<seconds>s.txt.

  bench/rss.py FRAMEWALK [--seconds 600] [--rate 1000] [--profilers framewalk,peer]
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402


def count_lines(path):
    try:
        with open(path, errors="replace") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return None


def capture(kind, a, target, raw):
    tag = "%s-%ds" % (kind, a.seconds)
    if kind == "framewalk":
        out_txt = os.path.join(raw, "rss-%s.txt" % tag)
        collapsed = os.path.join(raw, "rss-%s.collapsed" % tag)
        cmd = fb.framewalk_cmd(a.framewalk, target.pid, a.rate, a.seconds, out_txt, collapsed)
        log = os.path.join(raw, "rss-%s.log" % tag)
    else:
        out_txt = log = os.path.join(raw, "rss-%s.txt" % tag)
        in_root = "%s/rss-%s.collapsed" % (fb.ROOT_TMP, tag)
        collapsed = fb.ROOT + in_root
        cmd = fb.peer_cmd(target.pid, a.rate, a.seconds, in_root)
    last = [0.0]

    def progress(p):
        if p[0] - last[0] >= 60:
            last[0] = p[0]
            fb.log("rss %s: %.0f s, RSS %s KiB, CPU %.1f s" % (kind, p[0], p[2], p[1]))

    r = fb.run_profiler(kind, cmd, log, poll_every=a.every, on_poll=progress)
    text = open(out_txt, errors="replace").read() if os.path.exists(out_txt) else ""
    r.update(fb.parse_framewalk(text) if kind == "framewalk" else fb.parse_peer(text))
    r["distinct_stacks"] = count_lines(collapsed)
    polls = [p for p in r["polls"] if p[2] is not None]
    r["series"] = [{"t": p[0], "rss_kb": p[2], "hwm_kb": p[3], "cpu_s": round(p[1], 2)} for p in polls]
    del r["polls"]
    # While sampling: up to the requested duration (output is written after).
    during = [p for p in polls if p[0] <= a.seconds]
    r["peak_rss_sampling_kb"] = max((p[3] or p[2]) for p in during) if during else None

    def rss_at(frac):
        t = a.seconds * frac
        after = [p for p in during if p[0] >= t]
        return after[0][2] if after else (during[-1][2] if during else None)
    r["rss_at_kb"] = {"10%": rss_at(0.1), "25%": rss_at(0.25), "50%": rss_at(0.5),
                      "75%": rss_at(0.75), "100%": rss_at(1.0)}
    half = [p for p in during if p[0] >= a.seconds / 2]
    if len(half) >= 3:
        n = len(half)
        mt = sum(p[0] for p in half) / n
        mr = sum(p[2] for p in half) / n
        var = sum((p[0] - mt) ** 2 for p in half)
        slope = sum((p[0] - mt) * (p[2] - mr) for p in half) / var if var else 0.0
        r["rss_slope_second_half_kb_per_min"] = slope * 60
    if r["exit"] != 0 or "ticks" not in r:
        fb.log("%s: exit %s, see %s" % (kind, r["exit"], log))
    return r


def report(res):
    lines = ["Profiler memory: %d s at %d Hz on a 50-thread python3.15 target" % (res["seconds"], res["rate"]), ""]
    lines.append("%-10s %10s %10s %8s %10s %11s %11s %10s %10s" % (
        "profiler", "peak RSS", "maxrss", "RSS@10%", "RSS@100%", "growth 2nd", "samples/s", "errors", "stacks"))
    lines.append("%-10s %10s %10s %8s %10s %11s %11s %10s %10s" % (
        "", "(sampling)", "(w/ output)", "", "", "half/min", "(ticks)", "", "distinct"))
    for c in res["captures"]:
        ra = c["rss_at_kb"]
        lines.append("%-10s %9s %10s %8s %10s %11s %11s %9s%% %10s" % (
            c["kind"], fb.fmt(c["peak_rss_sampling_kb"] and c["peak_rss_sampling_kb"] / 1024, "{:.1f}M"),
            fb.fmt(c["maxrss_kb"] / 1024, "{:.1f}M"),
            fb.fmt(ra["10%"] and ra["10%"] / 1024, "{:.1f}M"), fb.fmt(ra["100%"] and ra["100%"] / 1024, "{:.1f}M"),
            fb.fmt(c.get("rss_slope_second_half_kb_per_min"), "{:+.0f}K"),
            fb.fmt(c.get("rate"), "{:,.0f}"), fb.fmt(c.get("error_pct")),
            fb.fmt(c.get("distinct_stacks"), "{:,}")))
        stacks = c.get("stacks")
        lines.append("%-10s %s ticks, %s stacks sampled; profiler CPU %.1f s; exit %s" % (
            "", fb.fmt(c.get("ticks"), "{:,}"), fb.fmt(stacks, "{:,}"), c["cpu_total_s"], c["exit"]))
    lines.append("")
    lines.append("goal: < 30 MB peak RSS; memory must follow distinct stacks, not samples")
    lines.append("")
    for c in res["captures"]:
        lines.append("RSS over time, %s (s: MiB):" % c["kind"])
        step = max(1, len(c["series"]) // 20)
        pts = c["series"][::step]
        lines.append("  " + "  ".join("%g:%.1f" % (p["t"], p["rss_kb"] / 1024) for p in pts))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--every", type=float, default=1.0, help="RSS poll interval, seconds")
    ap.add_argument("--profilers", default="framewalk,peer")
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    a = ap.parse_args()
    raw = fb.prepare(a)
    caps = []
    with fb.ProcMount() as pm, fb.Target("threads50.py") as target:
        for kind in a.profilers.split(","):
            pm.ensure()
            fb.log("rss: %s for %d s at %d Hz" % (kind, a.seconds, a.rate))
            caps.append(capture(kind, a, target, raw))
    res = {"benchmark": "rss", "seconds": a.seconds, "rate": a.rate,
           "machine": fb.machine_info(a.framewalk), "captures": caps}
    name = "rss-%ds" % a.seconds
    fb.write_json(os.path.join(a.results, name + ".json"), res)
    text = report(res)
    with open(os.path.join(a.results, name + ".txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
