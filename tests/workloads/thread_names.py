"""Threads with Python names a profiler must show, for test_pyview.py.

Valid on Python 3.8 through 3.15. Each thread spins (so every mode samples
it) under a name given to threading.Thread: one longer than the kernel's 15
bytes, one not ASCII, one hostile (markup, a terminal escape, ';', quotes).
One thread is started with _thread (threading never hears of it) and names
itself for the kernel only (prctl): its label must be that name.

Prints "THREAD <native id> <index>" per thread, then READY. Runs until killed.
"""
import _thread
import ctypes
import sys
import threading
import time

NAMES = ["reports", "a-thread-name-longer-than-15-bytes", "rapports-énergie-日本",
         "<b>x</b>\x1b[31m;\"'&evil"]
RAW_COMM = b"fw-raw"
_libc = ctypes.CDLL(None, use_errno=True)


def spin():
    x = 0
    for i in range(20000):
        x += i
    return x


def burn(index, started):
    print("THREAD %d %d" % (threading.get_native_id(), index), flush=True)
    started.set()
    while True:
        spin()
        time.sleep(0.001)


def raw(started):
    _libc.prctl(15, ctypes.c_char_p(RAW_COMM), 0, 0, 0)
    burn(len(NAMES), started)


for i, name in enumerate(NAMES):
    ev = threading.Event()
    threading.Thread(target=burn, args=(i, ev), name=name, daemon=True).start()
    ev.wait()
ev = threading.Event()
_thread.start_new_thread(raw, (ev,))
ev.wait()
time.sleep(0.1)
print("READY", flush=True)
while True:
    time.sleep(1)
