"""Sleeps forever (or for --seconds N) in a known place, for dump and error
tests. Prints READY (flushed) first. Valid on Python 3.8 through 3.15 (and
parses on older ones too, for the unsupported-version test)."""
import sys
import time


def idle_wait(seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:                       # @idle_wait
        time.sleep(0.5)                                 # @idle_wait


def main():
    seconds = 10 ** 9
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    idle_wait(seconds)                                  # @call_idle


if __name__ == "__main__":
    main()                                              # @call_main
