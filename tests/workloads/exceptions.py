"""Exception state (--mode exception): one thread raises and catches in a
loop and does its work inside the handler (in a generator's handler every
other round, whose exception state is a stack item of its own); another
does the same work outside any handler; a third sleeps in a handler.
Prints READY; runs until killed."""
import sys
import threading
import time


class Retry(Exception):
    pass


def work():
    x = 0
    for i in range(20000):
        x += i                                           # @work
    return x


def handle():
    work()                                               # @handle


def in_generator():
    try:
        raise KeyError("k")
    except KeyError:
        work()                                           # @gen_handler
        yield 1


def raiser():
    n = 0
    while True:
        n += 1
        if n % 2:
            for _ in in_generator():                     # @gen_loop
                pass
            continue
        try:
            raise Retry(n)
        except Retry:
            handle()                                     # @raiser_handler


def calm():
    while True:
        work()                                           # @calm


def sleeper():
    while True:
        try:
            raise TimeoutError
        except TimeoutError:
            time.sleep(0.05)                             # @sleep_handler


threading.Thread(target=raiser, name="raiser", daemon=True).start()
threading.Thread(target=calm, name="calm", daemon=True).start()
threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
threading.Event().wait()
