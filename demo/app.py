"""framewalk demo workload: a small "report service" with threads.

One thread builds and compresses reports (zlib, a C library, called from
Python), one hashes records (hashlib: OpenSSL), one packs records through
the demo's own C extension (demo/fastpath.c, built without frame pointers,
calling zlib) when scripts/demo.sh could build it, and the main thread does
pure-Python number crunching. It runs for --seconds (default 6).
"""
import hashlib
import json
import sys
import threading
import time
import zlib

try:
    import fastpath     # demo/fastpath.c, built by scripts/demo.sh
except ImportError:
    fastpath = None


def render_row(i):
    return {"id": i, "name": "item-%d" % i, "tags": ["a", "b", "c"], "score": i * 0.5}


def build_report(n):
    rows = [render_row(i) for i in range(n)]
    return json.dumps(rows).encode()


def compress_report(data):
    return zlib.compress(data, 9)


def report_worker(stop):
    while not stop.is_set():
        data = build_report(2000)
        compress_report(data)


def digest_records(stop):
    blob = b"x" * 65536
    while not stop.is_set():
        for _ in range(50):
            hashlib.sha256(blob).hexdigest()
        time.sleep(0.001)


def pack_records(stop):
    blob = json.dumps([render_row(i) for i in range(500)]).encode()
    while not stop.is_set():
        fastpath.score(blob)
        fastpath.pack(blob)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def crunch(deadline):
    while time.time() < deadline:
        fib(20)


def main():
    seconds = 6.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    stop = threading.Event()
    threads = [
        threading.Thread(target=report_worker, args=(stop,), name="reports"),
        threading.Thread(target=digest_records, args=(stop,), name="digests"),
    ]
    if fastpath:
        threads.append(threading.Thread(target=pack_records, args=(stop,), name="records"))
    for t in threads:
        t.start()
    crunch(time.time() + seconds)
    stop.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
