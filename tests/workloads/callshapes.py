"""Ordinary call-heavy Python, one shape per function, for accuracy checks
against a stopped reference read of the same process at the same time
(../shared/notes/accuracy.md): deep recursion, tiny methods and object
construction, a generator pipeline, a comprehension calling a function, a
decorated one-line function, a raise/except loop, and calls into C (zlib,
builtins). Each shape runs a few milliseconds per cycle, so a few seconds of
sampling average many cycles. Runs on 3.8 and later.

    python callshapes.py SECONDS [THREADS [SLEEPERS]]

With THREADS > 1 the same loop runs in that many threads sharing the GIL;
SLEEPERS more threads sleep in time.sleep (in wait_here). Prints READY once
running.
"""
import functools
import sys
import threading
import time
import zlib


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursion():
    fib(14)


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def add(self, other):
        return Vec(self.x + other.x, self.y + other.y)


def methods():
    v = Vec(0, 0)
    one = Vec(1, 2)
    for _ in range(600):
        v = v.add(one)


def numbers(n):
    for i in range(n):
        yield i


def squares(it):
    for i in it:
        yield i * i


def generators():
    sum(squares(numbers(1500)))


def scale(x):
    return x * 3 + 1


def comprehension():
    [scale(i) for i in range(1500)]


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@logged
def tiny(x):
    return x + 1


def decorated():
    t = 0
    for _ in range(800):
        t = tiny(t)


def fail(i):
    raise ValueError(i)


def exceptions():
    for i in range(300):
        try:
            fail(i)
        except ValueError:
            pass


DATA = bytes(range(256)) * 16


def native():
    zlib.compress(DATA, 6)
    sorted(range(1000), key=abs)


SHAPES = (recursion, methods, generators, comprehension, decorated, exceptions, native)


def loop(end):
    while time.time() < end:
        for shape in SHAPES:
            shape()


def wait_here(end):
    while time.time() < end:
        time.sleep(0.05)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    nsleepers = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    end = time.time() + seconds
    workers = [threading.Thread(target=loop, args=(end,), name="shapes-%d" % i)
               for i in range(1, nthreads)]
    workers += [threading.Thread(target=wait_here, args=(end,), name="sleeper-%d" % i)
                for i in range(nsleepers)]
    for w in workers:
        w.start()
    print("READY", flush=True)
    loop(end)
    for w in workers:
        w.join()


main()
