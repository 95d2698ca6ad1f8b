#!/usr/bin/python3
"""Sampling in phase with a periodic target: framewalk's backends and perf.

tests/workloads/phase_locked.py spends the first half of every 10 ms in
first_half and the second half in second_half (a thread paced by a 100 Hz
clock): each half is 50% of its CPU time. Each reader samples it at 100 Hz
for --seconds, one after the other, on one target; the figure is the share
of first_half among the samples of the two halves. A reader at fixed
intervals lands in the same half tick after tick (0% or 100%); a right one
gives 50% within sampling noise (about 3 points for 300 samples).

perf has no Python frames here (pyenv's builds have no frame pointers and
no perf map), so its share is the phase of each sample's time: perf record
-k CLOCK_MONOTONIC stamps samples with the clock the target paces itself
by (time.perf_counter), and a sample at phase < 0.5 lies in first_half.

  bench/phase.py FRAMEWALK [--python PATH] [--seconds 3] [--reps 3]

Readers: bpf (cpu mode: perf cpu-clock events on the target's threads,
whose period the kernel keeps fixed), bpf-percpu (cpu mode with an event
per CPU, as the agent and --subprocesses sample: the loop restarts them at
spread moments), bpf-wall (wall mode: the capture loop's ticks), ptrace
and vm (cpu mode, the loop's ticks), perf. Root (the bpf backend, perf on another
process). Prints one line per reader and rep, then the medians.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "..", "tests", "workloads", "phase_locked.py")
PERIOD = 0.01


def framewalk_share(framewalk, pid, reader, seconds, tmp):
    backend, _, mode = reader.partition("-")
    extra = []
    if mode == "percpu":
        mode, extra = "cpu", ["--subprocesses"]   # events per CPU, not on the threads
    out = os.path.join(tmp, "fw-%s.collapsed" % reader)
    subprocess.run([framewalk, "record", "-q", "-p", str(pid), "-d", str(seconds), "-r", "100",
                    "--backend", backend, "--mode", mode or "cpu", "-o", out] + extra, check=True,
                   timeout=seconds + 60)
    halves = {"first_half": 0, "second_half": 0}
    with open(out, errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            names = {frame.split(" (")[0] for frame in stack.split(";")}
            for name in names & set(halves):
                halves[name] += int(count)
    return halves["first_half"], halves["first_half"] + halves["second_half"]


def perf_share(pid, seconds, tmp):
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "cpu-clock", "-F", "100",
                    "-p", str(pid), "-o", data, "--", "sleep", str(seconds)],
                   check=True, timeout=seconds + 60, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    r = subprocess.run(["perf", "script", "-F", "time", "-i", data], capture_output=True,
                       text=True, timeout=120, check=True)
    first = total = 0
    for line in r.stdout.split():
        t = float(line.rstrip(":"))
        first += (t % PERIOD) / PERIOD < 0.5
        total += 1
    return first, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    readers = ["bpf", "bpf-percpu", "bpf-wall", "ptrace", "vm"] + (["perf"] if shutil.which("perf") else [])
    shares = {r: [] for r in readers}
    for rep in range(a.reps):
        target = subprocess.Popen([a.python, WORKLOAD, str(len(readers) * (a.seconds + 5) + 10)],
                                  stdout=subprocess.PIPE)
        tmp = tempfile.mkdtemp(prefix="fw-phase-")
        try:
            assert target.stdout.readline().strip() == b"READY"
            for r in readers:
                if r == "perf":
                    first, total = perf_share(target.pid, a.seconds, tmp)
                else:
                    first, total = framewalk_share(a.framewalk, target.pid, r, a.seconds, tmp)
                share = 100.0 * first / total if total else float("nan")
                shares[r].append(share)
                print("rep %d  %-10s first_half %5.1f%% of %d samples" % (rep + 1, r, share, total),
                      flush=True)
        finally:
            target.kill()
            target.wait()
            shutil.rmtree(tmp, ignore_errors=True)
    print("medians (50% is right):")
    for r in readers:
        print("  %-10s %5.1f%%" % (r, statistics.median(shares[r])))


if __name__ == "__main__":
    main()
