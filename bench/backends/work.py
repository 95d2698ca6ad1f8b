"""Fixed work for the slowdown benchmark: Python calling zlib and a pure
Python loop, timed by the target itself. Prints the elapsed seconds."""
import os
import sys
import time
import zlib

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
data = bytes(range(256)) * 4096


def py_part():
    s = 0
    for i in range(200000):
        s += i * i
    return s


def native_part():
    return len(zlib.compress(data, 6))


t0 = time.perf_counter()
for _ in range(ROUNDS):
    py_part()
    native_part()
print("%.6f" % (time.perf_counter() - t0))
