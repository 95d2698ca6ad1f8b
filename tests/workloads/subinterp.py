"""A subinterpreter (concurrent.interpreters, 3.14+) doing CPU work in a
thread while the main thread does its own: for sampling every interpreter's
threads. The worker thread runs Interpreter.exec, which runs this file
again in the subinterpreter as __sub__ (sub_spin). Prints
"WORKER <tid> <interpreter id>", then READY once sub_spin runs.
"""
import os
import sys
import threading


def sub_spin(started_fd):
    os.write(started_fd, b"1")
    t = 0
    while True:
        for i in range(10000):
            t += i


def main_spin():
    t = 0
    while True:
        for i in range(10000):
            t += i


def worker(interp, code):
    sys.stdout.write("WORKER %d %d\n" % (threading.get_native_id(), interp.id))
    sys.stdout.flush()
    interp.exec(code)


def main():
    from concurrent import interpreters

    started_r, started_w = os.pipe()
    interp = interpreters.create()
    code = ("import runpy\n"
            "runpy.run_path(%r, init_globals={'STARTED_FD': %d}, run_name='__sub__')\n"
            % (os.path.abspath(__file__), started_w))
    threading.Thread(target=worker, args=(interp, code), daemon=True).start()
    os.read(started_r, 1)           # the subinterpreter runs
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    main_spin()


if __name__ == "__sub__":
    sub_spin(STARTED_FD)        # noqa: F821 (given by run_path)
elif __name__ == "__main__":
    main()
