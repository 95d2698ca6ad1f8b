"""Named threads that keep starting: every 100 ms a thread named
"churn-N" starts, burns CPU for 1.5 s and ends, for --seconds. A profiler
attached at any moment sees threads that start while it attaches."""
import sys
import threading
import time


def burn(until):
    x = 0
    while time.monotonic() < until:
        x += 1


def main():
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 30
    end = time.monotonic() + seconds
    print("READY", flush=True)
    n = 0
    while time.monotonic() < end:
        n += 1
        threading.Thread(target=burn, args=(time.monotonic() + 1.5,), name="churn-%d" % n).start()
        time.sleep(0.1)


main()
