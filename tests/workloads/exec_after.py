"""What exec_into.py execs into: after_exec() for SECONDS."""
import sys
import time


def after_exec(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1                                          # @after


after_exec(float(sys.argv[1]))
