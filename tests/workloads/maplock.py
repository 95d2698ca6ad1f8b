"""A thread that holds its memory map's lock most of the time: mprotect over
a populated 128 MB mapping, back and forth, for 4 ms (the lock held for
writing while the kernel walks its page tables, milliseconds each call),
then 4 ms of plain Python, in turn. A reader of its memory (process_vm_readv,
a ptrace read) waits on that lock. At the end it prints its own measure:
"TRUTH <percent of the time in locked()>", then "CYCLES [[start, end of
locked, end of python], ...]" (time.monotonic(), the host's CLOCK_MONOTONIC)
for a measure over a capture's own window.

    python maplock.py SECONDS
"""
import ctypes
import json
import mmap
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
SIZE = 128 << 20
PROT_READ, PROT_WRITE = 1, 2

region = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
addr = ctypes.addressof(ctypes.c_char.from_buffer(region))
for page in range(0, SIZE, mmap.PAGESIZE):
    region[page] = 1


def locked():
    until = time.monotonic() + 0.004
    while time.monotonic() < until:
        libc.mprotect(addr, SIZE, PROT_READ)
        libc.mprotect(addr, SIZE, PROT_READ | PROT_WRITE)


def python():
    until = time.monotonic() + 0.004
    while time.monotonic() < until:
        sum(i * i for i in range(200))


def main():
    end = time.monotonic() + float(sys.argv[1])
    in_locked = in_python = 0.0
    cycles = []
    print("READY", flush=True)
    while time.monotonic() < end:
        a = time.monotonic()
        locked()
        b = time.monotonic()
        python()
        c = time.monotonic()
        in_locked += b - a
        in_python += c - b
        cycles.append((a, b, c))
    print("TRUTH %.2f" % (100.0 * in_locked / (in_locked + in_python)), flush=True)
    # each cycle's start, end of locked(), end of python() (CLOCK_MONOTONIC)
    print("CYCLES " + json.dumps(cycles), flush=True)


main()
