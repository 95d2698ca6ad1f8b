# -*- coding: utf-8 -*-
"""Workload with a known call structure, for framewalk's functional tests.

Valid on Python 3.8 through 3.15. Every thread spins in one loop whose body
calls exactly known functions, so every sample's stack is predictable:

  thread (comm)   entry function     calls                        leaf
  main            <module> -> main   time.sleep                   main (@main_wait)
  fw-method       thread_method      Worker.spin                  @leaf_method
  fw-lambda       thread_lambda      <lambda>                     @leaf_lambda
  fw-gen          thread_gen         consume_squares -> squares   @leaf_gen
  fw-genexpr      thread_genexpr     spin_genexpr -> <genexpr>    @leaf_genexpr
  fw-nested       thread_nested      outer -> outer.<locals>.inner  @leaf_inner
  fw-helper       thread_helper      structure_helper.helper_spin @leaf_helper
  fw-unicode      計算               calcul_énergie               @leaf_unicode
  fw-worker       thread_named       named_spin                   @leaf_named

Threads are started with _thread.start_new_thread (not threading) so that the
thread's outermost Python frame is the entry function itself. Each thread sets
its OS-level name (/proc/PID/task/TID/comm) with prctl(PR_SET_NAME); threading
knows only the main thread ("MainThread"), so the others carry their comm.

Lines that tests look for carry a trailing marker comment "# @name"; tests
parse this file for them instead of hard-coding line numbers. Do not put
anything that runs Python code between the calls listed above (no __del__,
no signal handlers, no tracing): it would make stacks unpredictable.

Prints READY (flushed) on stdout once every thread runs. Runs until killed,
or for --seconds N.
"""
import _thread
import ctypes
import os
import sys
import threading    # so Python names the main thread "MainThread" on every version
import time

import structure_helper

PR_SET_NAME = 15
SPIN = 20000          # loop iterations per leaf call (about 1 ms)
THREAD_COUNT = 8

started = []
_libc = ctypes.CDLL(None, use_errno=True)


def set_thread_name(name):
    if _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME) failed")


class Worker(object):
    def __init__(self):
        self.total = 0

    def spin(self, n):
        i = 0
        while i < n:                                    # @leaf_method
            i += 1                                      # @leaf_method
        self.total += i
        return i


def thread_method():
    set_thread_name(b"fw-method")
    started.append("fw-method")
    w = Worker()
    while True:                                         # @loop_method
        w.spin(SPIN)                                    # @call_method


spin_lambda = lambda n: sum(range(n * 5))               # @leaf_lambda


def thread_lambda():
    set_thread_name(b"fw-lambda")
    started.append("fw-lambda")
    while True:                                         # @loop_lambda
        spin_lambda(SPIN)                               # @call_lambda


def squares(n):
    i = 0
    while i < n:                                        # @leaf_gen
        yield i * i                                     # @leaf_gen
        i += 1                                          # @leaf_gen


def consume_squares(n):
    total = 0
    for v in squares(n):                                # @call_gen
        total += v                                      # @loop_consume
    return total


def thread_gen():
    set_thread_name(b"fw-gen")
    started.append("fw-gen")
    while True:                                         # @loop_gen
        consume_squares(SPIN)                           # @call_consume


def spin_genexpr(n):
    return sum(i for i in range(n))                     # @call_genexpr @leaf_genexpr


def thread_genexpr():
    set_thread_name(b"fw-genexpr")
    started.append("fw-genexpr")
    while True:                                         # @loop_genexpr
        spin_genexpr(SPIN)                              # @call_spin_genexpr


def outer(n):
    def inner(k):
        j = 0
        while j < k:                                    # @leaf_inner
            j += 1                                      # @leaf_inner
        return j
    return inner(n)                                     # @call_inner


def thread_nested():
    set_thread_name(b"fw-nested")
    started.append("fw-nested")
    while True:                                         # @loop_nested
        outer(SPIN)                                     # @call_outer


def thread_helper():
    set_thread_name(b"fw-helper")
    started.append("fw-helper")
    while True:                                         # @loop_helper
        structure_helper.helper_spin(SPIN)              # @call_helper


def calcul_énergie(n):
    e = 0
    while e < n:                                        # @leaf_unicode
        e += 1                                          # @leaf_unicode
    return e


def 計算():
    set_thread_name(b"fw-unicode")
    started.append("fw-unicode")
    while True:                                         # @loop_unicode
        calcul_énergie(SPIN)                            # @call_unicode


def named_spin(n):
    x = 0
    while x < n:                                        # @leaf_named
        x += 1                                          # @leaf_named
    return x


def thread_named():
    set_thread_name(b"fw-worker")
    started.append("fw-worker")
    while True:                                         # @loop_named
        named_spin(SPIN)                                # @call_named


def parse_seconds(argv):
    if "--seconds" in argv:
        return float(argv[argv.index("--seconds") + 1])
    return None


def main():
    seconds = parse_seconds(sys.argv[1:])
    for fn in (thread_method, thread_lambda, thread_gen, thread_genexpr,
               thread_nested, thread_helper, 計算, thread_named):
        _thread.start_new_thread(fn, ())
    while len(started) < THREAD_COUNT:
        time.sleep(0.005)
    deadline = None if seconds is None else time.monotonic() + seconds
    # The READY line can reach the reader during write() (the test may then
    # sample main still in it, waiting for the GIL) or during flush().
    sys.stdout.write("READY\n")                         # @main_ready
    sys.stdout.flush()                                  # @main_ready
    while deadline is None or time.monotonic() < deadline:  # @main_wait
        time.sleep(0.05)                                # @main_wait
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()                                              # @call_main
