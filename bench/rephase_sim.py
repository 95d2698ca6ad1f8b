#!/usr/bin/python3
"""A simulation of bpf's per-CPU clock restarts (src/sampler/pacing.h)
against a periodic target: how the mean gap between restarts changes the
spread of a half/half target's share and the chance that an agent period
has no sample of a service busy 1 ms in every 5.1 ms (49 Hz, 1 s periods).

Restarts at moments drawn from [0.5, 1.5) of the mean gap R; each draws a
period c*u, u uniform in [0.9, 1.1), c as pacing_rephase_period; the first
sample one period after the restart. Pure arithmetic: no framewalk run.

  bench/rephase_sim.py [--runs 4000]

Measured with it (2026-12-06): empty periods 0.005% at R = 200 ms (the
setting), 0.065% at 500 ms, 0.55% at 1 s (docs/BENCHMARKS.md, "A periodic
target").
"""
import argparse
import math
import random
import statistics


def shares(R, rate, T, busy, dur, rnd):
    """The samples of one capture of dur seconds: (in the busy part, all)."""
    interval = 1.0 / rate
    c = 5 * math.log(11 / 9) * interval / (1 + interval / (2 * R))
    t = rnd.random() * 10
    end = t + dur
    hit = n = 0
    p = c * (0.9 + 0.2 * rnd.random())
    nexts = t + rnd.random() * p
    restart = t + R * (0.5 + rnd.random()) * rnd.random()    # in the middle of a gap
    while True:
        if restart <= nexts:
            if restart >= end:
                break
            p = c * (0.9 + 0.2 * rnd.random())
            nexts = restart + p
            restart += R * (0.5 + rnd.random())
            continue
        if nexts >= end:
            break
        n += 1
        hit += (nexts % T) < busy * T
        nexts += p
    return hit, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=4000)
    a = ap.parse_args()
    for R in (0.2, 0.5, 1.0):
        rnd = random.Random(1)
        half = [shares(R, 100, 0.010, 0.5, 3.0, rnd) for _ in range(a.runs)]
        x = [h / n for h, n in half]
        busy = [shares(R, 49, 0.0051, 0.2, 1.0, rnd)[0] for _ in range(a.runs * 5)]
        print("mean gap %.1f s: half/half at 100 Hz for 3 s: sd %.1f points, outside 25-75%%: "
              "%.2f%%; 1 s periods at 49 Hz, a service busy 20%%: no sample %.3f%%, "
              "at most 2 %.2f%%" % (
                  R, 100 * statistics.pstdev(x),
                  100 * sum(v < 0.25 or v > 0.75 for v in x) / len(x),
                  100 * sum(b == 0 for b in busy) / len(busy),
                  100 * sum(b <= 2 for b in busy) / len(busy)))


if __name__ == "__main__":
    main()
