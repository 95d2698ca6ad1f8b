#!/usr/bin/python3
"""What `framewalk agent` costs on a host with many processes it does not
choose (issue 25): --procs idle processes (`sleep`, default 2000) run
beside an agent whose --match chooses none of them, scanning every 5 s
(its default). After --warmup seconds (past the agent's 10 s window in
which a new process is looked at at every scan), its CPU (utime + stime
of /proc/PID/stat) is read over --seconds; repeated --reps times, and with
--base OLD_FRAMEWALK the two builds alternate (new, old, new, old, ...) so
the machine's drift falls on both. Prints the median share of one core
per build with each run's figure.

  bench/agent_scan.py build/framewalk [--base OLD] [--procs 2000] [--reps 3]
                      [--warmup 12] [--seconds 30]

Run as root on an otherwise idle machine. Every process it starts ends
with it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402


def one_run(framewalk, warmup, seconds, where):
    """The agent's share of one core over SECONDS after WARMUP, in percent."""
    agent = subprocess.Popen([framewalk, "agent", "--match", "fw-agent-scan-chooses-none-xyz",
                              "--period", "5", "--dir", where, "-q"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        time.sleep(warmup)
        c0, t0 = fb.proc_cpu_seconds(agent.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = fb.proc_cpu_seconds(agent.pid), time.monotonic()
    finally:
        agent.terminate()
        try:
            agent.wait(30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()
    return 100.0 * (c1 - c0) / (t1 - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("--base", help="an older framewalk build, alternated with FRAMEWALK")
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=12)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the agent reads other processes")
    builds = [("new", os.path.abspath(a.framewalk))]
    if a.base:
        builds.append(("base", os.path.abspath(a.base)))
    idle = []
    results = {name: [] for name, _ in builds}
    with tempfile.TemporaryDirectory(prefix="fw-agent-scan-") as where:
        try:
            for _ in range(a.procs):
                idle.append(subprocess.Popen(["sleep", "100000"], stdin=subprocess.DEVNULL))
            time.sleep(2)
            total = len(os.listdir("/proc"))
            for rep in range(a.reps):
                for name, fw in builds:
                    share = one_run(fw, a.warmup, a.seconds, os.path.join(where, "%s-%d" % (name, rep)))
                    results[name].append(share)
                    print("rep %d %s: %.3f%% of a core" % (rep + 1, name, share), file=sys.stderr)
        finally:
            for p in idle:
                p.kill()
            for p in idle:
                p.wait()
    print("framewalk agent choosing none of %d idle processes (%d entries in /proc), "
          "scan every 5 s, CPU over %g s after %g s:" % (a.procs, total, a.seconds, a.warmup))
    for name, fw in builds:
        runs = results[name]
        print("  %-4s %s: median %.3f%% of a core (runs: %s)" % (
            name, fw, statistics.median(runs), ", ".join("%.3f" % r for r in runs)))


if __name__ == "__main__":
    main()
