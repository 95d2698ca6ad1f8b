"""A main thread that spins, and a second thread started DELAY seconds
after READY that spins in its own function (late_spin), and a third
started by that one after another DELAY (later_spin): for the bpf
backend's events on a target's threads, which the threads a target starts
during a capture must inherit.

    python late_thread.py SECONDS [DELAY]
"""
import sys
import threading
import time


def spin(end):
    while time.time() < end:
        sum(range(200))


def later_spin(end):
    spin(end)


def late_spin(end, delay):
    time.sleep(delay)
    threading.Thread(target=later_spin, args=(end,), name="later").start()
    spin(end)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    end = time.time() + seconds
    print("READY", flush=True)
    time.sleep(delay)
    threading.Thread(target=late_spin, args=(end, delay), name="late").start()
    spin(end)


main()
