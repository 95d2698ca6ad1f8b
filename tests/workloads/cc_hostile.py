"""A target that turns on framewalk's --count-calls files (test_callcount.py),
as a process in a mount namespace of its own may (a rootless container).

    python cc_hostile.py status SECRET   at the start request, bind-mount the
                                         file SECRET over the request's status
                                         file (and refuse to run the script)
    python cc_hostile.py block SECONDS   count along for SECONDS, then block in
                                         C (os.read of a pipe no one writes)
    python cc_hostile.py idle            a plain loop (nothing hostile itself;
                                         its launcher prepares the trap)

Prints READY once running.
"""
import ctypes
import os
import sys
import time

MS_BIND = 4096


def bind(src, dst):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(src.encode(), dst.encode(), None, MS_BIND, None) != 0:
        raise OSError(ctypes.get_errno(), "mount %s on %s" % (src, dst))


def f():
    return 1


def main():
    mode = sys.argv[1]
    if mode == "status":
        secret = sys.argv[2]

        def hook(event, args):
            if event == "cpython.remote_debugger_script" and args[0].endswith("/start.py"):
                bind(secret, os.path.join(os.path.dirname(args[0]), "status"))
                raise RuntimeError("not running it")
        sys.addaudithook(hook)
    until = time.monotonic() + (float(sys.argv[2]) if mode == "block" else 3600)
    print("READY", flush=True)
    while time.monotonic() < until:
        f()
        time.sleep(0.01)
    r, _ = os.pipe()
    os.read(r, 1)


main()
