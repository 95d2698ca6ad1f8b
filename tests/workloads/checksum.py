"""Deterministic work whose result is checksummed: a profiled run must print
the same digest as an unprofiled one. Threads, recursion, zlib and hashing.
Prints the digest and exits. Valid on Python 3.8 through 3.15."""
import hashlib
import sys
import threading
import zlib

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 300


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def chunk(i):
    data = ("%d:%d;" % (i, fib(12 + i % 5))).encode() * 2000
    return hashlib.sha256(zlib.compress(data, 6)).digest()


def worker(start, out):
    h = hashlib.sha256()
    for i in range(start, ROUNDS, 2):
        h.update(chunk(i))
    out[start] = h.hexdigest()


results = {}
threads = [threading.Thread(target=worker, args=(k, results)) for k in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(hashlib.sha256((results[0] + results[1]).encode()).hexdigest())
