"""N threads (default 200) sleeping in a known function.
Prints READY once all run; runs until killed."""
import sys
import threading
import time

N = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 200


def parked():
    while True:
        time.sleep(0.2)                                  # @parked


for _ in range(N):
    threading.Thread(target=parked, daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
while True:
    time.sleep(1)
