#!/usr/bin/python3
"""Combine results/rate.json, slowdown.json, toggle.json and rss-<N>s.json into one
table against the goals; writes results/summary.txt and summary.json.

  bench/summarize.py [--results DIR] [--rss-seconds N]
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def verdict(ok):
    return "-" if ok is None else ("yes" if ok else "NO")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=os.path.join(fb.BENCH, "results"))
    ap.add_argument("--rss-seconds", type=int, default=None,
                    help="which rss-<N>s.json to use (default: the longest present)")
    a = ap.parse_args()
    rate = load(os.path.join(a.results, "rate.json"))
    slow = load(os.path.join(a.results, "slowdown.json"))
    if a.rss_seconds is None:
        runs = sorted(int(n[4:-6]) for n in os.listdir(a.results)
                      if n.startswith("rss-") and n.endswith("s.json") and n[4:-6].isdigit())
        a.rss_seconds = runs[-1] if runs else 0
    rss = load(os.path.join(a.results, "rss-%ds.json" % a.rss_seconds))
    tog = load(os.path.join(a.results, "toggle.json"))

    rows = []   # (metric, framewalk, peer, goal, met)
    summary = {}
    if rate:
        s = rate["summary"]
        f, p = s["framewalk"], s["peer"]
        ratio = s.get("rate_ratio")
        ok = None
        if ratio is not None and f["error_pct"] is not None and p["error_pct"] is not None:
            ok = ratio >= 3 and f["error_pct"] <= p["error_pct"]
        rows.append(("max rate, samples/s (%s Hz asked)" % "{:,}".format(rate["rate_requested"]),
                     fb.fmt(f["rate"], "{:,.0f}"), fb.fmt(p["rate"], "{:,.0f}"),
                     ">= 3x peer (%s)" % fb.fmt(ratio, "{:.2f}x"), verdict(ok)))
        rows.append(("  error rate at max rate", fb.fmt(f["error_pct"], "{:.2f}%"),
                     fb.fmt(p["error_pct"], "{:.2f}%"), "<= peer",
                     verdict(None if f["error_pct"] is None or p["error_pct"] is None
                             else f["error_pct"] <= p["error_pct"])))
        rows.append(("  CPU per sample, us (steady)", fb.fmt(f["cpu_us_per_sample_steady"]),
                     fb.fmt(p["cpu_us_per_sample_steady"]), "", ""))
        rows.append(("  CPU per sample, us (whole process)", fb.fmt(f["cpu_us_per_sample_total"]),
                     fb.fmt(p["cpu_us_per_sample_total"]), "", ""))
        summary["rate"] = s
    if slow:
        for r, s in slow["summary"].items():
            f, p = s["framewalk"], s["peer"]
            pct = lambda x: None if x is None else (x - 1) * 100  # noqa: E731
            goal, ok = "", ""
            ci = f.get("slowdown_ci95")
            if int(r) == 100:
                goal = "< 1%"
                if ci is None:
                    ok = verdict(None if f["slowdown"] is None else pct(f["slowdown"]) < 1.0)
                elif pct(ci[1]) < 1.0:
                    ok = "yes"
                elif pct(ci[0]) >= 1.0:
                    ok = "NO"
                else:
                    ok = "unresolved (noise)"
            rows.append(("target slowdown at %s Hz (wall, medians)" % "{:,}".format(int(r)),
                         fb.fmt(pct(f["slowdown"]), "{:+.2f}%"), fb.fmt(pct(p["slowdown"]), "{:+.2f}%"),
                         goal, ok))

            def ci_txt(k):
                c = k.get("slowdown_ci95")
                return "%+.0f..%+.0f%%" % (pct(c[0]), pct(c[1])) if c else "-"
            rows.append(("  95% interval (bootstrap)", ci_txt(f), ci_txt(p), "", ""))
            rows.append(("  target thread CPU ratio", fb.fmt(pct(f["cpu_slowdown"]), "{:+.2f}%"),
                         fb.fmt(pct(p["cpu_slowdown"]), "{:+.2f}%"), "", ""))
            rows.append(("  paired per-repetition median", fb.fmt(pct(f["slowdown_paired_median"]), "{:+.2f}%"),
                         fb.fmt(pct(p["slowdown_paired_median"]), "{:+.2f}%"), "", ""))
            rows.append(("  profiler CPU during the round", fb.fmt(f["profiler_cpu_util"], "{:.1%}"),
                         fb.fmt(p["profiler_cpu_util"], "{:.1%}"), "", ""))
            rows.append(("  achieved samples/s", fb.fmt(f["profiler_rate"], "{:,.0f}"),
                         fb.fmt(p["profiler_rate"], "{:,.0f}"), "", ""))
        summary["slowdown"] = slow["summary"]
    if tog:
        pct = lambda x: None if x is None else (x - 1) * 100  # noqa: E731
        for hz in sorted({p["rate"] for p in tog["phases"]}):
            ph = {p["kind"]: p for p in tog["phases"] if p["rate"] == hz}
            f, p = ph.get("framewalk", {}), ph.get("peer", {})
            goal = ok = ""
            ci = f.get("slowdown_ci95")
            if hz == 100:
                goal = "< 1%"
                if ci:
                    ok = "yes" if pct(ci[1]) < 1.0 else "NO" if pct(ci[0]) >= 1.0 else "unresolved"
            rows.append(("slowdown at %s Hz, pause/resume (%g s)" % ("{:,}".format(hz), tog["seconds"]),
                         fb.fmt(pct(f.get("slowdown")), "{:+.2f}%"), fb.fmt(pct(p.get("slowdown")), "{:+.2f}%"),
                         goal, ok))

            def ci_txt(k):
                c = k.get("slowdown_ci95")
                return "%+.1f..%+.1f%%" % (pct(c[0]), pct(c[1])) if c else "-"
            rows.append(("  95% interval (bootstrap over windows)", ci_txt(f), ci_txt(p), "", ""))
            rows.append(("  profiler CPU while running", fb.fmt(f.get("profiler_cpu_util_on"), "{:.1%}"),
                         fb.fmt(p.get("profiler_cpu_util_on"), "{:.1%}"), "", ""))
            rows.append(("  effective samples/s while running", fb.fmt(f.get("profiler_effective_rate_on"), "{:,.0f}"),
                         fb.fmt(p.get("profiler_effective_rate_on"), "{:,.0f}"), "", ""))
        summary["toggle"] = tog["phases"]
    if rss:
        caps = {c["kind"]: c for c in rss["captures"]}
        f, p = caps.get("framewalk"), caps.get("peer")

        def peak(c):
            if not c:
                return None
            vals = [v for v in (c.get("peak_rss_sampling_kb"), c.get("maxrss_kb")) if v]
            return max(vals) / 1024 if vals else None
        rows.append(("peak RSS, MiB (50 threads, 1 kHz, %d s)" % rss["seconds"],
                     fb.fmt(peak(f), "{:.1f}"), fb.fmt(peak(p), "{:.1f}"), "< 30 MB",
                     verdict(None if peak(f) is None else peak(f) * 1048576 < 30e6)))
        rows.append(("  RSS growth, 2nd half, KiB/min",
                     fb.fmt(f and f.get("rss_slope_second_half_kb_per_min"), "{:+.0f}"),
                     fb.fmt(p and p.get("rss_slope_second_half_kb_per_min"), "{:+.0f}"), "flat", ""))
        rows.append(("  achieved ticks/s, errors",
                     "%s, %s" % (fb.fmt(f and f.get("rate"), "{:,.0f}"), fb.fmt(f and f.get("error_pct"), "{:.2f}%")),
                     "%s, %s" % (fb.fmt(p and p.get("rate"), "{:,.0f}"), fb.fmt(p and p.get("error_pct"), "{:.2f}%")),
                     "", ""))
        rows.append(("  distinct stacks in the profile", fb.fmt(f and f.get("distinct_stacks"), "{:,}"),
                     fb.fmt(p and p.get("distinct_stacks"), "{:,}"), "", ""))
        summary["rss"] = {k: {x: c.get(x) for x in ("peak_rss_sampling_kb", "maxrss_kb", "rss_at_kb",
                                                     "rss_slope_second_half_kb_per_min", "rate",
                                                     "error_pct", "distinct_stacks", "ticks", "stacks")}
                          for k, c in caps.items()}
        summary["rss_seconds"] = rss["seconds"]

    w0 = max(len(r[0]) for r in rows) if rows else 10
    head = ("%-" + str(w0) + "s %14s %14s  %-22s %s") % ("", "framewalk", "3.15 sampler", "goal", "met")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(("%-" + str(w0) + "s %14s %14s  %-22s %s") % r)
    m = (rate or slow or tog or rss or {}).get("machine")
    if m:
        lines += ["", "machine: %s CPUs (%s), %s, kernel %s; framewalk %s (%s); target %s" % (
            m["cpus"], m["cpu_model"], m["mem_total"], m["kernel"], m["framewalk"],
            m["framewalk_rev"], m["python_target"].splitlines()[0] if m["python_target"] else "?")]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.results, "summary.txt"), "w") as f:
        f.write(text)
    fb.write_json(os.path.join(a.results, "summary.json"), {"machine": m, "summary": summary})
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
