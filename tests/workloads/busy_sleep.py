"""One thread busy (busy_loop), one sleeping (sleeper) — for cpu vs wall.
Prints READY; runs until killed. Valid on Python 3.8 through 3.15."""
import sys
import threading
import time


def sleeper():
    while True:
        time.sleep(0.5)                                  # @sleep


def busy_loop():
    x = 0
    while True:
        x += 1                                           # @busy


threading.Thread(target=sleeper, daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
busy_loop()
