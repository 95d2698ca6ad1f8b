"""One thread splitting its CPU time 70/30 between hot_a and hot_b by
construction: it alternates busy loops of 7*s ms in hot_a and 3*s ms in
hot_b, with s drawn at random in [0.5, 1.5] for each pair so the cycle never
phase-locks with a periodic sampler (an exact 10 ms cycle sampled at 200 Hz
would alias: every sample at the same two phases).

The loops are timed with the thread's CPU clock (time.thread_time), not the
wall clock: on a busy machine the target is preempted, and a wall-clock
loop then loses CPU time in proportion to its length (hot_a's share of CPU
would drop below 70%). With the CPU clock the CPU split is exact, and the
wall-clock split is 70/30 too as long as preemption strikes at random.
Valid on Python 3.8 through 3.15.

Prints READY (flushed) when it starts the loop; runs for --seconds N
(default 10), then exits 0.
"""
import random
import sys
import time

from time import thread_time

A_SECONDS = 0.007
B_SECONDS = 0.003


def hot_a(duration):
    end = thread_time() + duration
    while thread_time() < end:                         # @hot_a
        pass                                            # @hot_a


def hot_b(duration):
    end = thread_time() + duration
    while thread_time() < end:                         # @hot_b
        pass                                            # @hot_b


def main():
    seconds = 10.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    deadline = time.monotonic() + seconds
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    rand = random.Random(1234).random                   # a C method: no frame
    while time.monotonic() < deadline:                  # @split_loop
        s = 0.5 + rand()                                # @split_loop
        hot_a(A_SECONDS * s)                            # @call_a
        hot_b(B_SECONDS * s)                            # @call_b
    sys.stdout.write("DONE\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()                                              # @call_main
