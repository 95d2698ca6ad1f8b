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
    realities.py remapcode         move the interpreter's code (libpython's, else
                                   the executable's) to anonymous memory at the
                                   same address, as huge-page text remappers do
    realities.py dlmopen2          load libz again in a namespace of its own
                                   (dlmopen) and spin in that copy's crc32
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


def remap_code():
    """Each executable mapping of the interpreter's file copied to anonymous
    memory and moved over itself (mremap MAYMOVE|FIXED): the code stays, the
    file has no executable mapping left."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mremap.restype = ctypes.c_void_p
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                            ctypes.c_void_p]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    rows = [l.split() for l in open("/proc/self/maps")]
    libpython = [r[5] for r in rows if len(r) >= 6 and "libpython" in r[5]]
    path = libpython[0] if libpython else os.path.realpath(sys.executable)
    regions = [tuple(int(x, 16) for x in r[0].split("-")) for r in rows
               if len(r) >= 6 and "x" in r[1] and r[5] == path]
    for a, b in regions:
        n = b - a
        new = libc.mmap(None, n, 3, 0x22, -1, 0)          # RW, PRIVATE|ANONYMOUS
        assert new not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        ctypes.memmove(new, a, n)
        assert libc.mprotect(new, n, 5) == 0               # R|X
        assert libc.mremap(new, n, n, 3, a) == a, ctypes.get_errno()   # MAYMOVE|FIXED
    print("REMAPPED %s %d" % (path, len(regions)), flush=True)


def second_libz_crc32():
    """crc32 of a copy of libz loaded with dlmopen(LM_ID_NEWLM): the same
    file mapped twice, each image where its loader put it."""
    import ctypes
    import zlib     # the first copy, in the main namespace (shared builds)
    libc = ctypes.CDLL(None)
    libc.dlmopen.restype = ctypes.c_void_p
    libc.dlmopen.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_int]
    libc.dlsym.restype = ctypes.c_void_p
    libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    handle = libc.dlmopen(-1, b"libz.so.1", 2)          # LM_ID_NEWLM, RTLD_NOW
    assert handle, "dlmopen failed"
    crc32 = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_ulong, ctypes.c_char_p,
                             ctypes.c_uint)(libc.dlsym(handle, b"crc32"))
    assert crc32(0, b"abc", 3) == zlib.crc32(b"abc")
    return crc32


def crc_spin(crc32):
    buf = bytes(1 << 20)
    while True:
        crc32(0, buf, len(buf))     # @call_crc32


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
    elif mode == "remapcode":
        remap_code()
        print("READY", flush=True)
        spin()              # @call_spin_remapped
    elif mode == "dlmopen2":
        crc32 = second_libz_crc32()
        print("READY", flush=True)
        crc_spin(crc32)     # @call_crc_spin
    elif mode == "churn":
        print("READY", flush=True)
        churn(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit("unknown mode %r" % mode)


main()                      # @call_main
