#!/usr/bin/env python3
"""Where does a ptrace stop land, and how long does it take to land? This
process stops TID with PTRACE_INTERRUPT every ~1.25 ms (a 797 Hz reader's
pace), reads where it stopped (the instruction pointer), and lets it go:
the share of stops inside the library LIB (its executable mappings) and
the time from the request to the stop, per place. Compare the share with
the library's share of the thread's CPU time (perf record -e cpu-clock
-t TID, or the target's own clock): a stop that lands late, at moments
that are not spread evenly over the thread's time, shows here.

    bench/stop_landing.py TID [--stops 4000] [--lib libz]     # root, x86-64

Run it under taskset to choose its CPU against the target's
(docs/BENCHMARKS.md, "The stopped reference beside its target").
"""
import argparse
import collections
import ctypes
import ctypes.util
import os
import time

PTRACE_CONT, PTRACE_GETREGS, PTRACE_DETACH = 7, 12, 17
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000
RIP = 16                      # struct user_regs_struct, x86-64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tid", type=int)
    ap.add_argument("--stops", type=int, default=4000)
    ap.add_argument("--lib", default="libz")
    a = ap.parse_args()
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    spans = []
    with open("/proc/%d/maps" % a.tid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and a.lib in os.path.basename(parts[5]):
                lo, hi = parts[0].split("-")
                spans.append((int(lo, 16), int(hi, 16)))
    if libc.ptrace(PTRACE_SEIZE, a.tid, None, None):
        raise SystemExit("PTRACE_SEIZE: %s" % os.strerror(ctypes.get_errno()))
    regs = (ctypes.c_ulonglong * 27)()
    took = collections.defaultdict(list)
    try:
        for _ in range(a.stops):
            time.sleep(0.00125)
            t0 = time.perf_counter_ns()
            libc.ptrace(PTRACE_INTERRUPT, a.tid, None, None)
            os.waitpid(a.tid, WALL)
            t1 = time.perf_counter_ns()
            libc.ptrace(PTRACE_GETREGS, a.tid, None, ctypes.cast(regs, ctypes.c_void_p))
            ip = regs[RIP]
            took[a.lib if any(lo <= ip < hi for lo, hi in spans) else "elsewhere"].append(t1 - t0)
            libc.ptrace(PTRACE_CONT, a.tid, None, None)
    finally:
        libc.ptrace(PTRACE_DETACH, a.tid, None, None)
    total = sum(len(v) for v in took.values()) or 1
    for place, v in sorted(took.items()):
        v.sort()
        print("%-10s %5.1f%% of %d stops; request to stop, us: median %.1f, p90 %.1f" % (
            place, 100.0 * len(v) / total, total, v[len(v) // 2] / 1e3, v[int(len(v) * 0.9)] / 1e3))


if __name__ == "__main__":
    main()
