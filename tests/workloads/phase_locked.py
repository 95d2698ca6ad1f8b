"""A thread paced by the clock: for the first half of every PERIOD seconds
(default 0.01, a 100 Hz loop, as a poller or a game loop runs) it spins in
first_half, for the second half in second_half. Each takes half of the CPU
time, but a sampler that reads at fixed intervals of the same period lands
in the same half tick after tick.

    python phase_locked.py SECONDS [PERIOD]

Prints READY once running. Valid on Python 3.8 through 3.15.
"""
import sys
import time


def phase(period):
    return (time.perf_counter() % period) / period


def first_half(period):
    while phase(period) < 0.5:
        pass


def second_half(period):
    while phase(period) >= 0.5:
        pass


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    period = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    end = time.monotonic() + seconds
    print("READY", flush=True)
    while time.monotonic() < end:
        first_half(period)
        second_half(period)


main()
