#!/usr/bin/python3
"""Samples per agent period of services paced by their own sleeps.

Three tests/workloads/agent_worker.py services (each ~1 ms of pure-Python
work, then a 4 ms sleep: a cycle near a quarter of 49 Hz's 20.4 ms) under
`framewalk agent --period 1 -r 49 --python-only --dir DIR` for --seconds;
then each middle period's sample count per service, from the agent's
pprofs read back by `framewalk report`. A sampler in step with the
services' cycle gives periods with no sample of a busy service and others
with three times the mean; one whose phase is drawn again (src/sampler/
pacing.h) gives counts near the mean.

  bench/agent_phase.py FRAMEWALK [--python PATH] [--seconds 40]

Root (the bpf backend). Prints the number of periods, those with 0 and
with at most 2 samples, the mean and the histogram.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "..", "tests", "workloads", "agent_worker.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seconds", type=float, default=40)
    a = ap.parse_args()
    tag = "fwphase-%d-" % os.getpid()
    ws = [subprocess.Popen([a.python, WORKER, "--seconds", str(a.seconds + 60), tag + str(i)],
                           stdout=subprocess.PIPE) for i in range(3)]
    out = tempfile.mkdtemp(prefix="fw-agent-phase-")
    try:
        for w in ws:
            assert w.stdout.readline().strip() == b"READY"
        ag = subprocess.Popen([a.framewalk, "agent", "--match", tag, "--dir", out, "--period", "1",
                               "--scan", "0.3", "-r", "49", "--python-only", "-q"])
        time.sleep(a.seconds)
        ag.terminate()
        ag.wait(timeout=60)
        per = collections.defaultdict(list)
        for f in sorted(glob.glob(os.path.join(out, "*.pb.gz"))):
            pid = int(re.search(r"-(\d+)\.pb\.gz$", f).group(1))
            text = subprocess.run([a.framewalk, "report", f], capture_output=True, text=True,
                                  timeout=60).stdout
            m = re.search(r"Samples:\s+(\d+)", text)
            per[pid].append(int(m.group(1)) if m else 0)
        # the first and the last period of each are cut short
        counts = [c for v in per.values() for c in v[1:-1]]
        print("periods %d  zero %d  at most 2 %d  mean %.1f" % (
            len(counts), counts.count(0), sum(1 for c in counts if c <= 2),
            sum(counts) / max(len(counts), 1)))
        print("histogram (samples: periods):", sorted(collections.Counter(counts).items()))
    finally:
        for w in ws:
            w.kill()
            w.wait()
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
