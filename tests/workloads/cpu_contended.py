"""One thread that alternates between two equal spans of wall time, each
spinning in Python: in `contended` a second process spins on the same CPU,
in `alone` it is paused. So `contended` is runnable as long as `alone` but
gets about half the CPU: a cpu-mode profile must give it about a third of
the CPU time, not half (a thread waiting for a CPU is runnable, not
running). The process measures its own CPU time per function
(time.thread_time) as the truth to compare with.

    python cpu_contended.py SECONDS

Prints READY once running. On SIGUSR2 it starts counting anew; on SIGUSR1
it prints "CPU contended=NS alone=NS" (its own CPU time in each since).
The competing process ends when this one does (its stdin closes).
"""
import os
import signal
import subprocess
import sys
import time

SPAN = 0.04
HOG = r"""
import os
os.sched_setaffinity(0, {0})
while True:
    b = os.read(0, 1)
    if not b:
        break
    if b == b"1":
        os.set_blocking(0, False)
        while True:
            try:
                b = os.read(0, 1)
            except BlockingIOError:
                continue
            if b != b"1":
                break
        os.set_blocking(0, True)
        if not b:
            break
"""

CPU = {"contended": 0, "alone": 0}


def spin(span):
    end = time.monotonic() + span
    while time.monotonic() < end:
        pass


def contended(hog):
    os.write(hog, b"1")
    spin(SPAN)
    os.write(hog, b"0")


def alone():
    spin(SPAN)


def report(*_):
    sys.stdout.write("CPU contended=%d alone=%d\n" % (CPU["contended"], CPU["alone"]))
    sys.stdout.flush()


def reset(*_):
    CPU["contended"] = CPU["alone"] = 0


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    os.sched_setaffinity(0, {0})
    hog = subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.PIPE)
    signal.signal(signal.SIGUSR1, report)
    signal.signal(signal.SIGUSR2, reset)
    fd = hog.stdin.fileno()
    now = time.thread_time_ns
    end = time.time() + seconds
    print("READY", flush=True)
    while time.time() < end:
        t = now()
        contended(fd)
        CPU["contended"] += now() - t
        t = now()
        alone()
        CPU["alone"] += now() - t
    hog.stdin.close()
    hog.wait()


main()
