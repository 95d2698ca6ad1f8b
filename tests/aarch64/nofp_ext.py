"""For the arm64 guest suite: Python calling a C extension built without
frame pointers (tests/ext/fwext.c, cross-built with -fomit-frame-pointer by
`make check-aarch64`, beside this file): ext_loop -> fwext.run -> stage0 ..
stage19 -> snprintf. Its frames keep no frame record (x29 untouched), so
only their CFI leads from them to Python's. Prints READY, runs until killed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwext  # noqa: E402


def ext_loop():
    while True:
        fwext.run(2000)


print("READY", flush=True)
ext_loop()
