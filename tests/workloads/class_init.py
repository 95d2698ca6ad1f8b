"""Object construction in a loop: from 3.13 the interpreter runs a class's
__init__ through its own shim code object (_Py_InitCleanup: named and filed
"__init__", line 0), which is not a user frame. Prints READY; runs until killed."""
import sys


class Point:
    def __init__(self, x):                              # @init
        self.x = x                                      # @init


def build():
    while True:                                         # @build
        for i in range(1000):                           # @build
            Point(i)                                    # @build_call


sys.stdout.write("READY\n")
sys.stdout.flush()
build()
