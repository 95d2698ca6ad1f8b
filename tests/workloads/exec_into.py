"""Runs before_exec() for SECONDS, then execs into another program: this
interpreter again on exec_after.py (a Python program), or /bin/sleep (not
Python). Prints READY. For the exec test of tests/functional/test_realities.py.

    python exec_into.py SECONDS python|sleep
"""
import os
import sys
import time


def before_exec(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1                                          # @before


seconds = float(sys.argv[1])
sys.stdout.write("READY\n")
sys.stdout.flush()
before_exec(seconds)
if sys.argv[2] == "python":
    here = os.path.dirname(os.path.abspath(__file__))
    os.execv(sys.executable, [sys.executable, os.path.join(here, "exec_after.py"), "30"])
else:
    os.execv("/bin/sleep", ["sleep", "30"])
