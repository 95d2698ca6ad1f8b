"""Whole-stack benchmark: framewalk `record --native` (ptrace backend) on
native workloads, and perf side by side. Not a test: it prints figures.

For each interpreter x workload (bench/native/target.py, the work on the main
thread):

  cost        per thread sample: how long the target thread is stopped (the
              report's Stopped line, mean and max), framewalk's CPU per sample
              (the report's profiler CPU / stacks), frame-pointer vs CFI steps
  slowdown    the target's time for a fixed unit of work (~--unit s) with
              framewalk attached at each rate / without, rounds interleaved
              (none, fw, fw, none, ...) in the same run; ratio of medians.
              Each unit follows 1.5 s of the same work (framewalk attached in
              its rounds), so the first-sample cost is outside the timed unit;
              it shows in the Stopped max instead. "stopped share" = mean stop
              x rate: the part of a busy thread's time it spends stopped.
  complete    share of the main thread's samples whose stack reaches _start,
              for framewalk --native, `perf record -g` (the kernel's
              frame-pointer walk) and `perf record --call-graph dwarf`, each
              over the same busy target

usage: bench.py [--framewalk PATH] [--interps sid-py3.15,py3.12]
                [--workloads zlib,ext] [--rates 100,1000] [--reps 5]
                [--extra-backends bpf]
                [--unit 2] [--seconds 3] [--json FILE]
Run as root. The framewalk binary is copied first, so a rebuild mid-run does
not mix two builds.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SID_ROOT = Path(os.environ.get("FRAMEWALK_SID_ROOT", "/var/cache/framewalk/sid"))
CHROOT_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
              "LC_ALL": "C.UTF-8", "HOME": "/root", "PYTHONDONTWRITEBYTECODE": "1"}
ENTRY = {"_start", "__libc_start_main", "__libc_start_call_main"}
MAIN = {"main", "Py_BytesMain", "Py_Main"}     # the interpreter's own main
WARMUP = 1.5    # seconds of work before each timed unit, with and without framewalk


def pyenv_root():
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    except OSError:
        pass
    return Path("/root/.pyenv")


INTERPS = {
    "sid-py3.15": ("chroot", "/usr/bin/python3.15", (3, 15)),
    "py3.12": ("host", str(pyenv_root() / "versions/3.12.1/bin/python"), (3, 12)),
    "py3.8": ("host", str(pyenv_root() / "versions/3.8.18/bin/python"), (3, 8)),
    "py3.13": ("host", str(pyenv_root() / "versions/3.13.0/bin/python"), (3, 13)),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Target:
    """target.py running under one interpreter, driven over stdin/stdout."""

    def __init__(self, interp, workload):
        kind, exe, ver = INTERPS[interp]
        self.interp, self.kind, self.exe, self.ver = interp, kind, exe, ver
        if kind == "chroot":
            if not (SID_ROOT / exe.lstrip("/")).exists():
                sys.exit("bench: %s missing in %s (run scripts/sid-root.sh)" % (exe, SID_ROOT))
            name = "fw-bench-native-%s" % uuid.uuid4().hex[:10]
            self.host = SID_ROOT / "tmp" / name
            self.target = "/tmp/" + name
        else:
            if not os.access(exe, os.X_OK):
                sys.exit("bench: interpreter %s missing: %s" % (interp, exe))
            self.host = Path(tempfile.mkdtemp(prefix="fw-bench-native-"))
            self.target = str(self.host)
        self.host.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(HERE / "target.py"), str(self.host / "target.py"))
        shutil.copy2(str(REPO / "tests/native/fwext.c"), str(self.host / "fwext.c"))
        args = [workload]
        if workload == "ext":
            self.build_ext()
            args.append(self.target)
        self.proc = subprocess.Popen(self.argv("-B", self.target + "/target.py", *args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=self.env(), bufsize=1)
        self.expect("READY")
        self.pid = self.proc.pid

    def argv(self, *args):
        if self.kind == "chroot":
            return ["chroot", str(SID_ROOT), self.exe] + list(args)
        return [self.exe] + list(args)

    def env(self):
        if self.kind == "chroot":
            return dict(CHROOT_ENV)
        e = dict(os.environ)
        e["PYTHONDONTWRITEBYTECODE"] = "1"
        return e

    def build_ext(self):
        """fwext with -O2 -g -fomit-frame-pointer: the case without frame pointers."""
        suffix = subprocess.run(self.argv("-c", "import sysconfig; print(sysconfig."
                                          "get_config_var('EXT_SUFFIX'))"),
                                capture_output=True, text=True, env=self.env(),
                                check=True).stdout.strip()
        if self.kind == "chroot":
            cmd = ["chroot", str(SID_ROOT), "gcc", "-I/usr/include/python%d.%d" % self.ver]
        else:
            inc = Path(self.exe).parent.parent / "include" / ("python%d.%d" % self.ver)
            cmd = ["gcc", "-I" + str(inc)]
        cmd += ["-O2", "-g", "-fomit-frame-pointer", "-shared", "-fPIC",
                self.target + "/fwext.c", "-o", self.target + "/fwext" + suffix]
        subprocess.run(cmd, check=True, env=self.env())

    def expect(self, word):
        line = self.proc.stdout.readline()
        if not line.startswith(word):
            sys.exit("bench: target said %r, expected %s" % (line, word))
        return line.split()[1:]

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        shutil.rmtree(str(self.host), ignore_errors=True)


# --------------------------------------------------------------------------
# framewalk's report
# --------------------------------------------------------------------------

def parse_report(text):
    out = {}
    m = re.search(r"^Stopped:\s+mean ([\d.]+) us, max ([\d.]+) us", text, re.M)
    if m:
        out["stopped_mean_us"], out["stopped_max_us"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"^Per tick:.*profiler CPU ([\d.]+) s", text, re.M)
    if m:
        out["cpu_s"] = float(m.group(1))
    m = re.search(r"^Duration:\s+([\d.]+) s", text, re.M)
    if m:
        out["duration_s"] = float(m.group(1))
    m = re.search(r"^Samples:\s+(\d+) stacks from (\d+) of (\d+) requested ticks", text, re.M)
    if m:
        out["stacks"], out["ticks"], out["requested"] = map(int, m.groups())
    m = re.search(r"^Unwinding:\s+([\d.]+)% of (\d+) native stacks complete; (\d+) "
                  r"frame-pointer and (\d+) CFI steps", text, re.M)
    if m:
        out["unwinding_pct"] = float(m.group(1))
        out["fp_steps"], out["cfi_steps"] = int(m.group(3)), int(m.group(4))
    m = re.search(r"^Breaks:\s+(.*)$", text, re.M)
    if m:
        out["breaks"] = m.group(1)
    return out


def collapsed_completeness(path, tid):
    """(complete, total, with_python, reaching main) samples of thread tid in a
    collapsed file."""
    done = total = py = main = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not re.search(r"\(%d\)$" % tid, frames[0]):
            continue
        n = int(count)
        total += n
        first = frames[1] if len(frames) > 1 else ""
        if first.rsplit(" (", 1)[0] in ENTRY:
            done += n
        if any(re.search(r"\.py:\d+\)$", f) for f in frames[1:]):
            py += n
        if any(f.rsplit(" (", 1)[0] in MAIN and not re.search(r"\.py:\d+\)$", f)
               for f in frames[1:]):
            main += n
    return done, total, py, main


def start_fw(fw, pid, rate, outs, seconds=600, backend="ptrace"):
    argv = [fw, "record", "-p", str(pid), "--backend", backend, "--native", "-r", str(rate),
            "-d", str(seconds), "-q"]
    for o in outs:
        argv += ["-o", str(o)]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def stop_fw(p):
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    if p.returncode != 0:
        log("bench: framewalk exited %s: %s" % (p.returncode, err.decode(errors="replace")))
    return p.returncode


# --------------------------------------------------------------------------
# perf
# --------------------------------------------------------------------------

def perf_completeness(pid, mode, seconds, workdir):
    """(complete, total, bytes recorded, reaching main) user stacks of thread
    pid under perf record."""
    data = Path(workdir) / ("perf-%s.data" % mode)
    cg = ["-g"] if mode == "fp" else ["--call-graph", "dwarf"]
    r = subprocess.run(["perf", "record", "-F", "1000", *cg, "-p", str(pid), "-o", str(data),
                        "--", "sleep", str(seconds)], capture_output=True, text=True)
    if r.returncode != 0:
        log("bench: perf record failed: %s" % r.stderr[-500:])
        return 0, 0, 0, 0
    size = data.stat().st_size
    r = subprocess.run(["perf", "script", "-i", str(data), "-F", "tid,ip,sym,dso"],
                       capture_output=True, text=True)
    done = total = main = 0
    for block in r.stdout.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines or not lines[0].strip().isdigit() or int(lines[0].strip()) != pid:
            continue
        total += 1
        user = [l for l in lines[1:] if "[kernel.kallsyms]" not in l]
        if user:
            parts = user[-1].split()
            sym = parts[1].rsplit("+0x", 1)[0] if len(parts) > 1 else ""
            if sym in ENTRY:
                done += 1
        syms = [(l.split() + ["", ""])[1].rsplit("+0x", 1)[0] for l in user]
        if any(x in MAIN for x in syms):
            main += 1
    data.unlink()
    return done, total, size, main


# --------------------------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def bench_one(fw, interp, workload, args, workdir):
    log("== %s %s" % (interp, workload))
    t = Target(interp, workload)
    res = {"interp": interp, "workload": workload}
    try:
        t.send("calibrate %s" % args.unit)
        res["unit_calls"] = int(t.expect("UNIT")[0])
        # Slowdown: rounds interleaved none/fw, fw/none, ...
        res["rates"] = {}
        for rate in args.rates:
            none, withfw, reports = [], [], []
            for rep in range(args.reps):
                order = ("none", "fw") if rep % 2 == 0 else ("fw", "none")
                for what in order:
                    if what == "none":
                        t.send("spin %s" % WARMUP)
                        t.expect("DONE")
                        t.send("go")
                        none.append(float(t.expect("ELAPSED")[0]))
                        continue
                    out = Path(workdir) / ("%s-%s-%d-%d.txt" % (interp, workload, rate, rep))
                    p = start_fw(fw, t.pid, rate, [out])
                    # Busy warm-up: in cpu mode an idle thread is not sampled,
                    # so its first sample (and framewalk's loading of unwind
                    # and debug info, done while it is stopped) would fall in
                    # the timed unit. The Stopped max shows that cost.
                    t.send("spin %s" % WARMUP)
                    t.expect("DONE")
                    t.send("go")
                    withfw.append(float(t.expect("ELAPSED")[0]))
                    stop_fw(p)
                    reports.append(parse_report(out.read_text()))
            agg = {"none_s": median(none), "fw_s": median(withfw),
                   "none_all": none, "fw_all": withfw}
            agg["slowdown"] = agg["fw_s"] / agg["none_s"]
            for k in ("stopped_mean_us", "unwinding_pct"):
                agg[k] = median([r[k] for r in reports if k in r])
            agg["stopped_max_us"] = max([r.get("stopped_max_us", 0) for r in reports] or [0])
            stacks = sum(r.get("stacks", 0) for r in reports)
            agg["cpu_per_sample_us"] = (1e6 * sum(r.get("cpu_s", 0) for r in reports) / stacks
                                        if stacks else float("nan"))
            # The share of a busy thread's time it spends stopped at this rate:
            # mean stop x rate. Much less noisy than the ratio of times.
            agg["stopped_share_pct"] = 100.0 * agg["stopped_mean_us"] * 1e-6 * rate
            agg["achieved_pct"] = (100.0 * sum(r.get("ticks", 0) for r in reports) /
                                   max(1, sum(r.get("requested", 0) for r in reports)))
            fp = sum(r.get("fp_steps", 0) for r in reports)
            cfi = sum(r.get("cfi_steps", 0) for r in reports)
            agg["fp_steps"], agg["cfi_steps"] = fp, cfi
            agg["fp_share_pct"] = 100.0 * fp / (fp + cfi) if fp + cfi else float("nan")
            agg["breaks"] = sorted({r["breaks"] for r in reports if "breaks" in r})
            res["rates"][rate] = agg
            log("   %5d Hz: slowdown %.3f (none %.3f s, fw %.3f s), stopped mean %.0f us "
                "max %.0f us (%.2f%% of the time), cpu/sample %.0f us, fp %d / cfi %d steps, "
                "unwinding %.1f%%"
                % (rate, agg["slowdown"], agg["none_s"], agg["fw_s"], agg["stopped_mean_us"],
                   agg["stopped_max_us"], agg["stopped_share_pct"], agg["cpu_per_sample_us"],
                   fp, cfi, agg["unwinding_pct"]))
        # Completeness, side by side on the same busy target.
        comp = {}
        backends = [("framewalk", "ptrace")] + [("framewalk-" + b, b) for b in args.extra_backends]
        for label, backend in backends:
            t.send("spin %s" % (args.seconds + 2))
            time.sleep(0.5)
            out_txt = Path(workdir) / ("c-%s-%s-%s.txt" % (interp, workload, backend))
            out_col = Path(workdir) / ("c-%s-%s-%s.collapsed" % (interp, workload, backend))
            p = start_fw(fw, t.pid, 1000, [out_txt, out_col], seconds=args.seconds,
                         backend=backend)
            p.communicate(timeout=120)
            t.expect("DONE")
            d, n, py, mn = collapsed_completeness(out_col, t.pid)
            comp[label] = {"complete": d, "total": n, "python": py, "main": mn,
                           "report": parse_report(out_txt.read_text())}
        for mode in ("fp", "dwarf"):
            t.send("spin %s" % (args.seconds + 2))
            time.sleep(0.5)
            d, n, size, mn = perf_completeness(t.pid, mode, args.seconds, workdir)
            t.expect("DONE")
            comp["perf-" + mode] = {"complete": d, "total": n, "python": 0, "bytes": size,
                                    "main": mn}
        for k, v in comp.items():
            v["pct"] = 100.0 * v["complete"] / v["total"] if v["total"] else float("nan")
            v["main_pct"] = 100.0 * v["main"] / v["total"] if v["total"] else float("nan")
            v["python_pct"] = 100.0 * v["python"] / v["total"] if v["total"] else float("nan")
            log("   %-16s %5.1f%% of %d main-thread stacks reach _start, %.1f%% the "
                "interpreter's main, %.1f%% have Python frames%s"
                % (k, v["pct"], v["total"], v["main_pct"], v["python_pct"],
                   ", %.1f MB recorded" % (v["bytes"] / 1e6) if "bytes" in v else ""))
        res["complete"] = comp
    finally:
        t.close()
    return res


def table(results, rates):
    lines = []
    lines.append("| interpreter | workload | rate | slowdown (median fw / none; min-max "
                 "ratio of pairs) | stopped per thread sample, mean / max | stopped share (mean x rate) | "
                 "framewalk CPU per sample | FP / CFI steps | ticks achieved | "
                 "unwinding complete |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        for rate in rates:
            a = r["rates"][rate]
            pairs = [f / n for f, n in zip(a["fw_all"], a["none_all"])]
            lines.append("| %s | %s | %d Hz | %.3f (%.2f s / %.2f s; %.2f-%.2f) | "
                         "%.0f us / %.0f us | %.2f%% | %.0f us | %d / %d (%.0f%% FP) | "
                         "%.0f%% | %.1f%% |"
                         % (r["interp"], r["workload"], rate, a["slowdown"], a["fw_s"],
                            a["none_s"], min(pairs), max(pairs), a["stopped_mean_us"],
                            a["stopped_max_us"], a["stopped_share_pct"],
                            a["cpu_per_sample_us"], a["fp_steps"], a["cfi_steps"],
                            a["fp_share_pct"], a["achieved_pct"], a["unwinding_pct"]))
    lines.append("")
    keys = []
    for r in results:
        for k in r["complete"]:
            if k not in keys:
                keys.append(k)
    lines.append("Main-thread stacks reaching _start / the interpreter's main "
                 "(Py_BytesMain), of N samples:")
    lines.append("")
    lines.append("| interpreter | workload | " + " | ".join(keys) + " |")
    lines.append("| --- | --- |" + " --- |" * len(keys))
    for r in results:
        cells = []
        for k in keys:
            v = r["complete"].get(k)
            if not v:
                cells.append("")
                continue
            cell = "%.1f%% / %.1f%% of %d" % (v["pct"], v["main_pct"], v["total"])
            if "bytes" in v:
                cell += " (%.1f MB)" % (v["bytes"] / 1e6)
            cells.append(cell)
        lines.append("| %s | %s | %s |" % (r["interp"], r["workload"], " | ".join(cells)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", default=os.environ.get("FRAMEWALK",
                                                          str(REPO / "build/framewalk")))
    ap.add_argument("--interps", default="sid-py3.15,py3.12")
    ap.add_argument("--workloads", default="zlib,ext")
    ap.add_argument("--rates", default="100,1000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--unit", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--extra-backends", default="",
                    help="also measure completeness with these backends (e.g. bpf)")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.rates = [int(x) for x in args.rates.split(",")]
    args.extra_backends = [b for b in args.extra_backends.split(",") if b]
    if os.geteuid() != 0:
        sys.exit("bench: run as root (ptrace, perf, chroot)")
    workdir = tempfile.mkdtemp(prefix="fw-bench-native-out-")
    fw = str(Path(workdir) / "framewalk")
    shutil.copy2(args.framewalk, fw)
    results = []
    try:
        for interp in args.interps.split(","):
            for workload in args.workloads.split(","):
                results.append(bench_one(fw, interp, workload, args, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": os.getloadavg(),
            "nproc": os.cpu_count(), "args": {k: v for k, v in vars(args).items()},
            "results": results}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(info, indent=1, default=str))
    print("load average at the end: %.1f %.1f %.1f on %d CPUs" % (*info["loadavg"],
                                                                   info["nproc"]))
    print(table(results, args.rates))


if __name__ == "__main__":
    main()
