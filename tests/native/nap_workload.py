"""Whole-stack workload: thread "fw-nap" alternates ~4 ms of pure Python with
a 0.5 ms sleep, so it keeps entering and leaving a system call.

A sample taken while it runs Python must carry no kernel frames; one taken in
the sleep carries the clock_nanosleep path under the time.sleep line; none may
carry the profiler's own ptrace-stop path.
Prints "TID <native id>" and READY.
"""
import threading
import time

started = threading.Event()


def nap():
    started.set()
    x = 0
    while True:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.004:
            for i in range(200):
                x = (x * 31 + i) % 1000003  # @busy
        time.sleep(0.0005)  # @sleep


def main():
    t = threading.Thread(target=nap, name="fw-nap", daemon=True)
    t.start()
    started.wait()
    print("TID %d" % t.native_id, flush=True)
    print("READY", flush=True)
    t.join()


if __name__ == "__main__":
    main()
