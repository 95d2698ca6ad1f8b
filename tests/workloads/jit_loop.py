"""A hot loop for CPython's experimental JIT (PYTHON_JIT=1 on a build that
has it, e.g. Debian's python3.15): stage_two calls hot_leaf, whose loop
calls a builtin, so JIT code sits between Python frames and the C function.
A second thread runs the same loop under threading. Prints READY once both
run, then runs until killed. Valid on Python 3.8 through 3.15."""
import sys
import threading


def hot_leaf(n):
    t = 0
    for i in range(n):
        t += abs(i - 7) % 5              # @leaf
    return t


def stage_two():
    while True:
        hot_leaf(2000)                   # @stage_two


def worker():
    stage_two()                          # @worker


threading.Thread(target=worker, name="fw-jit", daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
stage_two()                              # @main
