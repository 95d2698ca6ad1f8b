"""50-thread benchmark target for the memory (peak RSS) benchmark.

A service-like mix whose set of distinct stacks is fixed and small (a few
hundred), however long it runs, so a profiler whose memory follows the
number of distinct stacks stays flat while the sample count grows:

  10 "cpu-N"   threads: pure-Python arithmetic under a call chain whose
                        depth cycles through 0..9, alternating two leaves
  20 "sleep-N" threads: time.sleep of 5-50 ms under a short call chain
  10 "queue-N" threads: blocked in queue.Queue.get(timeout=...)
  10 "lock-N"  threads: contend for one threading.Lock, short work inside

Prints "READY" (flushed) once all 50 threads run; runs until killed or for
--seconds S.
"""
import queue
import sys
import threading
import time

STOP = threading.Event()
LOCK = threading.Lock()
QUEUE = queue.Queue()


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i % 13
    return s


def mix(n):
    s = 1
    for i in range(n):
        s = (s * 33 + i) & 0xFFFFF
    return s


def descend(d, leaf, n):
    if d:
        return descend(d - 1, leaf, n)
    return leaf(n)


def cpu_worker(k):
    i = k
    while not STOP.is_set():
        descend(i % 10, crunch if i % 2 else mix, 3000)
        i += 1


def nap(d, seconds):
    if d:
        return nap(d - 1, seconds)
    time.sleep(seconds)


def sleep_worker(k):
    i = k
    while not STOP.is_set():
        nap(i % 3, 0.005 + 0.005 * (i % 10))
        i += 1


def queue_worker(k):
    while not STOP.is_set():
        try:
            QUEUE.get(timeout=0.05 + 0.01 * k)
        except queue.Empty:
            pass


def locked_section(n):
    with LOCK:
        return crunch(n)


def lock_worker(k):
    while not STOP.is_set():
        locked_section(500)
        time.sleep(0.001)


def main():
    args = sys.argv[1:]
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 0.0
    kinds = [("cpu", cpu_worker, 10), ("sleep", sleep_worker, 20),
             ("queue", queue_worker, 10), ("lock", lock_worker, 10)]
    threads = []
    for name, fn, count in kinds:
        for k in range(count):
            t = threading.Thread(target=fn, args=(k,), name="%s-%d" % (name, k), daemon=True)
            t.start()
            threads.append(t)
    print("READY", flush=True)
    deadline = time.monotonic() + seconds if seconds else None
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    STOP.set()
    for t in threads:
        t.join(1.0)


if __name__ == "__main__":
    main()
