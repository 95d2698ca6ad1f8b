#!/usr/bin/env python3
"""Accuracy against a reference read at one instant (../shared/notes/accuracy.md).

One call-heavy target (tests/workloads/callshapes.py: recursion, tiny methods
and __init__, generators, a comprehension, a decorated one-liner, raise/except,
calls into C) is sampled by several readers at the same time, at coprime
rates, so their ticks lock neither to each other nor to the workload:

    default   framewalk record (whatever backend it chooses)
    vm        framewalk record --backend vm (never stops the target)
    ref       framewalk record --backend ptrace (stops the thread for each read)
    austin    with --austin PATH: Austin (never stops the target), on the
              interpreters it reads (pyenv 3.8-3.12)
    cpython   with --peers: 3.15's own sampler (python3.15 -m
              profiling.sampling attach --mode cpu), on Debian's 3.15

Peers name functions by their code object's name (Austin) or qualified name
(3.15's sampler); their distances are computed with every reader's names
cut to the last dotted part, the reference's too, so naming alone does not
count as distance.

Each profile is reduced to the distribution of the innermost Python function
(leaf) and of the whole Python stack (function names, outermost first), and
compared with the reference by total variation distance, in points (half the
sum of the absolute differences of the shares). The default on a privileged
machine is bpf, itself a reader at one instant: its distance from ptrace is
the noise floor of the comparison at these sample counts.

    bench/accuracy.py build/framewalk [--interps all|py3.12,sid-py3.15,...]
                      [--seconds 15] [--reps 3] [--json out.json]
                      [--austin /path/to/austin] [--peers] [--vm-cpu target|any]

Also used by tests/functional/test_reference.py (the same functions, shorter).
"""
import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
WORKLOAD = os.path.join(REPO, "tests", "workloads", "callshapes.py")
SID_ROOT = os.environ.get("FRAMEWALK_SID_ROOT", "/var/cache/framewalk/sid")
PYENV = os.environ.get("PYENV_ROOT", "/root/.pyenv")

INTERPS = {
    "py3.8": os.path.join(PYENV, "versions/3.8.18/bin/python"),
    "py3.9": os.path.join(PYENV, "versions/3.9.18/bin/python"),
    "py3.10": os.path.join(PYENV, "versions/3.10.13/bin/python"),
    "py3.11": os.path.join(PYENV, "versions/3.11.7/bin/python"),
    "py3.12": os.path.join(PYENV, "versions/3.12.1/bin/python"),
    "py3.13": os.path.join(PYENV, "versions/3.13.0/bin/python"),
    "py3.11-static": "/usr/bin/python3.11",
    "sid-py3.13": "sid:python3.13",
    "sid-py3.14": "sid:python3.14",
    "sid-py3.15": "sid:python3.15",
}

# The reference takes its ticks on time: as root it runs at a real-time
# priority (SCHED_FIFO, chrt). A stopped read in cpu mode counts the CPU
# time a thread used since its previous tick; a reference that waits for a
# CPU takes fewer ticks, each standing for more of that time at one
# instant, and its noise grows. On a 2-core machine with two more busy
# processes it took 29.5% of its ticks, and two bpf readers (per thread and
# per CPU: independent clocks) agreed within 1.6-2.3 points while both were
# 3.8-7.5 from it; at that priority 3.0-3.8 (py3.12, 5 runs each, 2026-12-03).
def on_time_prefix():
    """chrt's argv where a real-time priority is given here (root, and no
    cgroup withholds it), else none."""
    argv = ["chrt", "-f", "10"]
    if os.geteuid() != 0 or not shutil.which("chrt"):
        return []
    ok = subprocess.run(argv + ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return argv if ok.returncode == 0 else []


ON_TIME = on_time_prefix()

# The readers and their rates (coprime, so no two ticks lock).
READERS = {
    "default": (997, []),
    "vm": (797, ["--backend", "vm"]),
    "ref": (499, ["--backend", "ptrace"]),
}


def interp_argv(interp, script):
    """argv running script under interp ("sid:pythonX" runs inside the root)."""
    if interp.startswith("sid:"):
        inside = "/tmp/fw-accuracy-%d-%s" % (os.getpid(), os.path.basename(script))
        shutil.copy(script, SID_ROOT + inside)
        return ["chroot", SID_ROOT, interp[4:], inside], SID_ROOT + inside
    return [interp, script], None


def distributions(collapsed_text, workload_name):
    """(leaf Counter, whole-stack Counter) of the workload's Python frames."""
    leaf, stack = collections.Counter(), collections.Counter()
    for line in collapsed_text.splitlines():
        frames, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        names = [f.split(" (")[0] for f in frames.split(";")[1:] if workload_name in f]
        if names:
            leaf[names[-1]] += int(count)
            stack[";".join(names)] += int(count)
    return leaf, stack


def peer_distributions(text, workload_name):
    """As distributions, from a peer's collapsed output: a thread field (or
    Austin's P..;T..), then file:function:line frames, then a weight."""
    leaf, stack = collections.Counter(), collections.Counter()
    for line in text.splitlines():
        frames, _, count = line.rpartition(" ")
        if not count.isdigit() or line.startswith("#"):
            continue
        names = []
        for f in frames.split(";"):
            parts = f.rsplit(":", 2)
            if len(parts) == 3 and workload_name in parts[0]:
                names.append(parts[1])
        if names:
            leaf[short(names[-1])] += int(count)
            stack[";".join(short(n) for n in names)] += int(count)
    return leaf, stack


def short(name):
    return name.rsplit(".", 1)[-1]


def shortened(counter, whole_stack=False):
    out = collections.Counter()
    for k, v in counter.items():
        out[";".join(short(n) for n in k.split(";")) if whole_stack else short(k)] += v
    return out


PEER_RATE = {"austin": 1009, "cpython": 1013}   # Hz; coprime with the others


def peer_command(peer, pid, seconds, out, austin=None):
    """argv of a peer reader writing its collapsed output to out (a host
    path; 3.15's sampler runs inside the root, so out is under it)."""
    if peer == "austin":
        return [austin, "-i", str(int(1e6 / PEER_RATE["austin"])), "-x", str(int(seconds)),
                "-p", str(pid), "-o", out]
    return ["chroot", SID_ROOT, "/usr/bin/python3.15", "-m", "profiling.sampling", "attach",
            "-a", "--mode", "cpu", "-r", str(PEER_RATE["cpython"]), "-d", str(int(seconds)),
            "--collapsed", "-o", out[len(SID_ROOT):], str(pid)]


def tvd(a, b):
    """Total variation distance in points; 100 when either is empty."""
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return 100.0
    return 50.0 * sum(abs(a[k] / ta - b[k] / tb) for k in set(a) | set(b))


REPORT_RE = {
    "dropped": re.compile(r"^Errors: +(\d+) dropped samples \(([\d.]+)%\)", re.M),
    "backend": re.compile(r"^Backend: +(\w+)", re.M),
    "lost": re.compile(r"^Samples: +(\d+) .*; (\d+) lost to a full ring buffer", re.M),
    "ticks": re.compile(r"^Samples: +\d+ stacks from \d+ of \d+ requested ticks \(([\d.]+)%", re.M),
}


def parse_report(text):
    out = {}
    m = REPORT_RE["dropped"].search(text)
    if m:
        out["dropped"], out["dropped_pct"] = int(m.group(1)), float(m.group(2))
    m = REPORT_RE["backend"].search(text)
    if m:
        out["backend"] = m.group(1)
    m = REPORT_RE["lost"].search(text)
    if m:
        kept, lost = int(m.group(1)), int(m.group(2))
        out["lost_pct"] = 100.0 * lost / (kept + lost) if kept + lost else 0.0
    m = REPORT_RE["ticks"].search(text)
    if m:
        out["ticks_pct"] = float(m.group(1))
    return out


def run_readers(framewalk, pid, seconds, readers=READERS, workload_name="callshapes.py",
                prefix=None, peers=(), austin=None):
    """Run every reader on pid at once for seconds. readers: {name: (rate,
    args)}; prefix: {name: argv prepended} (e.g. to run one as another
    user; "ref" runs under ON_TIME unless given). Returns {reader: {"returncode", "stderr", "leaf", "stack",
    "samples", "dropped_pct", "backend"}}."""
    tmp = tempfile.mkdtemp(prefix="fw-accuracy-")
    os.chmod(tmp, 0o777)       # a reader may run as another user
    out, procs = {}, {}
    prefix = dict({"ref": ON_TIME}, **(prefix or {}))
    try:
        for name, (rate, args) in readers.items():
            paths = (os.path.join(tmp, name + ".collapsed"), os.path.join(tmp, name + ".txt"))
            cmd = list(prefix.get(name, ())) + [
                framewalk, "record", "-p", str(pid), "-d", str(seconds), "-r", str(rate), "-q",
                "-o", paths[0], "-o", paths[1]] + list(args)
            procs[name] = (subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True), paths)
        for peer in peers:
            where = tempfile.mkdtemp(prefix="fw-accuracy-", dir=SID_ROOT + "/tmp") \
                if peer == "cpython" else tmp
            path = os.path.join(where, peer + ".collapsed")
            procs[peer] = (subprocess.Popen(peer_command(peer, pid, seconds, path, austin),
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True), (path, None))
        for name, (p, paths) in procs.items():
            _, err = p.communicate(timeout=seconds + 120)
            res = {"returncode": p.returncode, "stderr": err, "leaf": collections.Counter(),
                   "stack": collections.Counter(), "samples": 0}
            if p.returncode == 0 and name in peers:
                with open(paths[0], errors="replace") as f:
                    res["leaf"], res["stack"] = peer_distributions(f.read(), workload_name)
                res["samples"] = sum(res["leaf"].values())
                if name == "cpython":
                    shutil.rmtree(os.path.dirname(paths[0]), ignore_errors=True)
            elif p.returncode == 0:
                with open(paths[0], errors="replace") as f:
                    res["leaf"], res["stack"] = distributions(f.read(), workload_name)
                with open(paths[1], errors="replace") as f:
                    res.update(parse_report(f.read()))
                res["samples"] = sum(res["leaf"].values())
            out[name] = res
    finally:
        for p, _ in procs.values():
            if p.poll() is None:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def measure(framewalk, interp, seconds, readers=READERS, workload=WORKLOAD, settle=0.5,
            peers=(), austin=None):
    """Start the workload under interp, run every reader on it at once."""
    argv, copied = interp_argv(interp, workload)
    target = subprocess.Popen(argv + [str(seconds + 10)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        if target.stdout.readline().strip() != "READY":
            raise RuntimeError("the workload did not start under %s" % interp)
        time.sleep(settle)
        return run_readers(framewalk, target.pid, seconds, readers, os.path.basename(workload),
                           peers=peers, austin=austin)
    finally:
        target.kill()
        target.wait()
        if copied:
            os.unlink(copied)


def compare(results, reader, ref="ref", short_names=False):
    """(leaf distance, stack distance) of reader from ref; short_names: every
    function name cut to its last dotted part on both sides (peers)."""
    a, b = results[reader], results[ref]
    if short_names:
        return (tvd(shortened(a["leaf"]), shortened(b["leaf"])),
                tvd(shortened(a["stack"], True), shortened(b["stack"], True)))
    return tvd(a["leaf"], b["leaf"]), tvd(a["stack"], b["stack"])


AUSTIN_READS = {"py3.8", "py3.9", "py3.10", "py3.11", "py3.12"}


def peers_for(name, austin, want_cpython):
    out = []
    if austin and name in AUSTIN_READS:
        out.append("austin")
    if want_cpython and name == "sid-py3.15":
        out.append("cpython")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--interps", default="all")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--default-rate", type=int, default=READERS["default"][0],
                    help="the default reader's rate (Hz): how high it stays right")
    ap.add_argument("--austin", help="Austin's binary: measure it too (pyenv 3.8-3.12)")
    ap.add_argument("--peers", action="store_true",
                    help="measure 3.15's own sampler too (on sid-py3.15; mounts proc in the root)")
    ap.add_argument("--vm-cpu", choices=("target", "any"),
                    help="the vm reader's --vm-cpu (default: its own default, target)")
    a = ap.parse_args()
    fw = os.path.abspath(a.framewalk)
    names = list(INTERPS) if a.interps == "all" else a.interps.split(",")
    proc = os.path.join(SID_ROOT, "proc")
    mounted = False
    if a.peers and "sid-py3.15" in names and not os.path.ismount(proc):
        subprocess.run(["mount", "-t", "proc", "proc", proc], check=True)
        mounted = True
    try:
        run(a, fw, names)
    finally:
        if mounted:
            subprocess.run(["umount", proc], check=False)


def run(a, fw, names):
    readers = dict(READERS, default=(a.default_rate, READERS["default"][1]))
    if a.vm_cpu:
        readers["vm"] = (READERS["vm"][0], READERS["vm"][1] + ["--vm-cpu", a.vm_cpu])
    table = {}
    for name in names:
        rows = []
        peers = peers_for(name, a.austin and os.path.abspath(a.austin), a.peers)
        for rep in range(a.reps):
            res = measure(fw, INTERPS[name], a.seconds, readers=readers, peers=peers,
                          austin=a.austin and os.path.abspath(a.austin))
            bad = [r for r, v in res.items() if v["returncode"] != 0]
            if bad:
                sys.exit("%s: %s failed: %s" % (name, bad, res[bad[0]]["stderr"][-500:]))
            row = {"default": compare(res, "default"), "vm": compare(res, "vm"),
                   "backend": res["default"].get("backend"),
                   "samples": {r: v["samples"] for r, v in res.items()},
                   "dropped_pct": {r: v.get("dropped_pct", 0.0) for r, v in res.items()}}
            for peer in peers:
                row[peer] = compare(res, peer, short_names=True)
                row[peer + "_default"] = compare(res, "default", short_names=True)
                print("%-14s rep %d: %s %.1f/%.1f (default, same names: %.1f/%.1f)"
                      % (name, rep + 1, peer, row[peer][0], row[peer][1],
                         row[peer + "_default"][0], row[peer + "_default"][1]), flush=True)
            rows.append(row)
            row["lost_pct"] = res["default"].get("lost_pct", 0.0)
            print("%-14s rep %d: default(%s) %.1f/%.1f  vm %.1f/%.1f  samples %s  vm dropped "
                  "%.2f%%  default lost %.3f%%"
                  % (name, rep + 1, row["backend"], row["default"][0], row["default"][1],
                     row["vm"][0], row["vm"][1], row["samples"], row["dropped_pct"]["vm"],
                     row["lost_pct"]), flush=True)
        table[name] = rows
    print("\nmedian of %d runs of %.0f s each (leaf / whole-stack distance from ptrace, points):"
          % (a.reps, a.seconds))
    print("%-14s %-18s %-14s %s" % ("interpreter", "default", "vm", "vm dropped"))
    for name, rows in table.items():
        med = lambda f: statistics.median(f(r) for r in rows)
        print("%-14s %-18s %-14s %.2f%%" % (
            name, "%.1f / %.1f (%s)" % (med(lambda r: r["default"][0]), med(lambda r: r["default"][1]),
                                        rows[0]["backend"]),
            "%.1f / %.1f" % (med(lambda r: r["vm"][0]), med(lambda r: r["vm"][1])),
            med(lambda r: r["dropped_pct"]["vm"])))
    for name, rows in table.items():
        for peer in ("austin", "cpython"):
            if peer in rows[0]:
                med = lambda k, i: statistics.median(r[k][i] for r in rows)
                print("%-14s %-8s %.1f / %.1f   (default with the same names: %.1f / %.1f)"
                      % (name, peer, med(peer, 0), med(peer, 1), med(peer + "_default", 0),
                         med(peer + "_default", 1)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
