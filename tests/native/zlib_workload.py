"""Whole-stack workload: zlib.compress in a loop on thread "fw-zlib".

usage: zlib_workload.py [PROGRESS_FILE]
Prints "TID <native id>" and READY. With PROGRESS_FILE, the main thread
rewrites it every 20 ms with the number of compress() calls done so far, so
a test can tell the process is still making progress.
"""
import os
import random
import sys
import threading
import time
import zlib

progress_path = sys.argv[1] if len(sys.argv) > 1 else None
done = 0
started = threading.Event()

rng = random.Random(1234)
WORDS = [("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))))
         for _ in range(2000)]
DATA = " ".join(rng.choice(WORDS) for _ in range(150000)).encode()   # ~0.9 MB


def compress_once():
    return zlib.compress(DATA, 9)  # @call_compress


def worker():
    global done
    started.set()
    while True:
        compress_once()  # @call_once
        done += 1


def main():
    t = threading.Thread(target=worker, name="fw-zlib", daemon=True)
    t.start()
    started.wait()
    print("TID %d" % t.native_id, flush=True)
    print("READY", flush=True)
    if not progress_path:
        t.join()
        return
    tmp = progress_path + ".tmp"
    while True:
        with open(tmp, "w") as f:
            f.write("%d %d\n" % (done, time.monotonic_ns()))
        os.replace(tmp, progress_path)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
