"""Runs before_exec() until the file GO exists, then for SECONDS of its own
CPU time more, then execs into another program: this interpreter again on
exec_after.py (a Python program), or /bin/sleep (not Python). Prints READY.
For the exec tests of tests/functional/test_realities.py, which create GO
once framewalk samples the process: the time before the exec is then the
same whatever attaching took (a sanitizer build on a loaded machine took
over 1.5 s once) and however loaded the machine is.

    python exec_into.py SECONDS python|sleep [GO]   (no GO: at once)
"""
import os
import sys
import time


def before_exec(seconds, go):
    x = 0
    end = None
    while end is None or time.thread_time() < end:
        for _ in range(1000):
            x += 1                                      # @before
        if end is None and (go is None or os.path.exists(go)):
            end = time.thread_time() + seconds


seconds = float(sys.argv[1])
sys.stdout.write("READY\n")
sys.stdout.flush()
before_exec(seconds, sys.argv[3] if len(sys.argv) > 3 else None)
if sys.argv[2] == "python":
    here = os.path.dirname(os.path.abspath(__file__))
    os.execv(sys.executable, [sys.executable, os.path.join(here, "exec_after.py"), "30"])
else:
    os.execv("/bin/sleep", ["sleep", "30"])
