"""Benchmark target for bench/native: one thread (the main one) doing a fixed
unit of native work per request, so the profiler's effect on it can be timed.

usage: target.py zlib|ext [EXT_DIR]
  zlib: zlib.compress(~0.9 MB, 9) calls (python3.15: libz without frame pointers)
  ext:  fwext.call_twice(py_callback) from tests/native/fwext.c: Python -> C ->
        Python -> C -> qsort
Prints "READY". Then reads commands on stdin, one per line:
  calibrate SECONDS  sets the unit to the number of calls taking ~SECONDS,
                     prints "UNIT n"
  go                 does one unit, prints "ELAPSED seconds" (wall, monotonic)
  spin SECONDS       works for SECONDS, prints "DONE"
"""
import random
import sys
import time

MODE = sys.argv[1]

if MODE == "zlib":
    import zlib
    rng = random.Random(1234)
    WORDS = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(2000)]
    DATA = " ".join(rng.choice(WORDS) for _ in range(150000)).encode()

    def work():
        return zlib.compress(DATA, 9)
else:
    sys.path.insert(0, sys.argv[2])
    import fwext

    def py_callback():
        return fwext.spin(100000)

    def work():
        return fwext.call_twice(py_callback)


def main():
    unit = 1
    print("READY", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "calibrate":
            want = float(cmd[1])
            t0 = time.monotonic()
            n = 0
            while time.monotonic() - t0 < want / 4:
                work()
                n += 1
            unit = max(1, int(n * 4))
            print("UNIT %d" % unit, flush=True)
        elif cmd[0] == "go":
            t0 = time.monotonic()
            for _ in range(unit):
                work()
            print("ELAPSED %.6f" % (time.monotonic() - t0), flush=True)
        elif cmd[0] == "spin":
            end = time.monotonic() + float(cmd[1])
            while time.monotonic() < end:
                work()
            print("DONE", flush=True)


if __name__ == "__main__":
    main()
