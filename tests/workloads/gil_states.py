"""GIL states (gil mode's markers): two threads spin in Python, taking
turns with the GIL (each waits for it while the other holds it); one
hashes a large buffer in C with the GIL released; one sleeps (blocked
elsewhere: not sampled in gil mode). Prints READY once the hasher has its
buffer and is in its loop (before, a capture saw it waiting for the GIL at
the allocation: a true state, not the one measured); runs until killed."""
import hashlib
import sys
import threading
import time


def spin():
    x = 0
    while True:
        x += 1                                           # @spin
        if x % 200000 == 0:
            # let go now and then: two spinners alone can starve the hasher
            # of the GIL for seconds (3.10)
            time.sleep(0)                                # @spin


hashing = threading.Event()


def hasher():
    data = b"\x5a" * (64 << 20)
    hashing.set()
    while True:                                          # @hashloop
        hashlib.sha256(data).digest()                    # @hash


def sleeper():
    while True:
        time.sleep(0.05)                                 # @sleep


for name, target in (("spin-a", spin), ("spin-b", spin), ("hasher", hasher),
                     ("sleeper", sleeper)):
    threading.Thread(target=target, name=name, daemon=True).start()
hashing.wait()
sys.stdout.write("READY\n")
sys.stdout.flush()
threading.Event().wait()
