"""zlib.compress in a loop: Python calling a C extension calling libz.
Prints READY, runs until killed. Valid on Python 3.8 through 3.15."""
import os
import sys
import zlib

data = os.urandom(1 << 16) + b"a" * (1 << 18)


def compress_report():
    return zlib.compress(data, 9)                 # @compress


def generate_report():
    while True:
        compress_report()                         # @generate


sys.stdout.write("READY\n")
sys.stdout.flush()
generate_report()                                 # @main
