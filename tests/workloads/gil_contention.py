"""Two CPU-bound Python threads contending for the GIL.
Prints READY; runs until killed."""
import sys
import threading


def spin():
    x = 0
    while True:
        x += 1                                           # @spin


for _ in range(2):
    threading.Thread(target=spin, daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
threading.Event().wait()
