"""N threads (default 200) sleeping (--nap seconds at a time) in a known
function, each on a 64 KiB stack (thousands fit in little memory). Prints
READY once all run; runs until killed."""
import sys
import threading
import time

N = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 200
# thousands of threads waking often keep the main thread from starting more
NAP = float(sys.argv[sys.argv.index("--nap") + 1]) if "--nap" in sys.argv else 0.2


def parked():
    while True:
        time.sleep(NAP)                                  # @parked


threading.stack_size(64 * 1024)
for _ in range(N):
    threading.Thread(target=parked, daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
while True:
    time.sleep(1)
