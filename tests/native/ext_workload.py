"""Whole-stack workload: Python -> C -> Python -> C -> libc, on one thread.

usage: ext_workload.py EXT_DIR [N]
Imports fwext from EXT_DIR, starts thread "fw-native" that loops
py_outer -> fwext.call_twice (ext_outer) -> py_callback -> fwext.spin
(ext_inner) -> qsort -> cmp_ints, prints "TID <native id>" and READY.
"""
import sys
import threading

sys.path.insert(0, sys.argv[1])
import fwext  # noqa: E402

N = int(sys.argv[2]) if len(sys.argv) > 2 else 400000   # ~50 ms of qsort per call
started = threading.Event()


def py_callback():
    return fwext.spin(N)  # @call_spin


def py_outer():
    return fwext.call_twice(py_callback)  # @call_twice


def worker():
    started.set()
    while True:
        py_outer()  # @call_outer


def main():
    t = threading.Thread(target=worker, name="fw-native", daemon=True)
    t.start()
    started.wait()
    print("TID %d" % t.native_id, flush=True)
    print("READY", flush=True)
    t.join()


if __name__ == "__main__":
    main()
