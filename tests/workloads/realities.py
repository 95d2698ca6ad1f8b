"""Workload of tests/functional/test_realities.py: a process whose files are
deleted or replaced under it, that loads a library mid-capture, or that
loads and unloads libraries in a loop. The main thread does the work; it
prints "TID <tid>" and READY once every file it needs is loaded.

    realities.py spin              <module> -> spin -> middle -> leaf
    realities.py ext DIR           <module> -> ext_spin -> fwext.run (C)
    realities.py dlopen DIR SECS   spin for SECS, then import fwext and ext_spin
    realities.py churn SO DIR      load a fresh copy of SO, call it, dlclose, unlink
    realities.py mapown            map its executable, libpython and libc once
                                   more as data (whole, read-only), then spin
"""
import os
import sys
import threading
import time


def leaf(n):
    s = 0
    for i in range(n):      # @leaf
        s += i * i          # @leaf
    return s                # @leaf


def middle():
    return leaf(20000)      # @call_leaf


def spin(until=None):
    while until is None or time.monotonic() < until:   # @spin_loop
        middle()            # @call_middle


def ext_spin(mod):
    while True:             # @ext_loop
        mod.run(200)        # @call_run


def churn(so, where):
    import ctypes
    import _ctypes
    import shutil

    i = 0
    while True:
        # A new file each time: another inode, mapped wherever the loader puts it.
        path = os.path.join(where, "churn-%d.so" % (i % 8))
        shutil.copyfile(so, path)
        lib = ctypes.CDLL(path)
        lib.fw_churn.restype = ctypes.c_long
        lib.fw_churn.argtypes = [ctypes.c_long]
        lib.fw_churn(20000000)
        _ctypes.dlclose(lib._handle)
        os.unlink(path)
        i += 1


def map_own_files():
    """Each file the loader mapped executable (the interpreter, libpython,
    libc) mapped again whole as data, the way a tool reading ELF files does:
    the kernel puts it below the loaded images. Prints the paths, kept."""
    import mmap
    paths = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and parts[5].startswith("/") and \
                    parts[5] not in paths:
                paths.append(parts[5])
    kept = []
    for path in paths:
        base = os.path.basename(path)
        if path != os.path.realpath(sys.executable) and not base.startswith(("libpython",
                                                                            "libc.so")):
            continue
        with open(path, "rb") as f:
            kept.append(mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ))
        print("MAPPED %s" % path, flush=True)
    return kept


def main():
    mode = sys.argv[1]
    print("TID %d" % threading.get_native_id(), flush=True)
    if mode == "spin":
        print("READY", flush=True)
        spin()              # @call_spin
    elif mode == "ext":
        sys.path.insert(0, sys.argv[2])
        import fwext
        print("READY", flush=True)
        ext_spin(fwext)     # @call_ext_spin
    elif mode == "dlopen":
        sys.path.insert(0, sys.argv[2])
        print("READY", flush=True)
        spin(time.monotonic() + float(sys.argv[3]))     # @call_spin_until
        import fwext
        print("LOADED", flush=True)
        ext_spin(fwext)     # @call_ext_spin_late
    elif mode == "mapown":
        kept = map_own_files()
        print("READY", flush=True)
        spin()              # @call_spin_mapped
        del kept
    elif mode == "churn":
        print("READY", flush=True)
        churn(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit("unknown mode %r" % mode)


main()                      # @call_main
