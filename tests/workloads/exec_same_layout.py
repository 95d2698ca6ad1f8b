"""Execs from one interpreter into another through a path of the same
length, with the same arguments and environment. Under `setarch -R` the new
program's stack, arguments and environment land where the old one's were,
and two pyenv builds' small launchers even share their code, data and heap
addresses (/proc/PID/stat's layout fields all equal), so only the
executable's identity tells the two programs apart. For
tests/functional/test_realities.py.

    FW_EXEC_NEXT=PATH python exec_same_layout.py GO

The first program (any executable but PATH's) prints READY, runs
before_exec() until the file GO exists and 1.5 s of its CPU more, then
execs PATH with its own arguments; the second runs after_exec() for 30 s.
"""
import os
import sys
import time


def before_exec(go):
    x = 0
    end = None
    while end is None or time.thread_time() < end:
        for _ in range(1000):
            x += 1
        if end is None and os.path.exists(go):
            end = time.thread_time() + 1.5


def after_exec():
    x = 0
    end = time.monotonic() + 30
    while time.monotonic() < end:
        for _ in range(1000):
            x += 1


NEXT = os.environ["FW_EXEC_NEXT"]
if os.path.realpath(sys.executable) != os.path.realpath(NEXT):
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    before_exec(sys.argv[1])
    os.execv(NEXT, [NEXT] + sys.orig_argv[1:])
after_exec()
