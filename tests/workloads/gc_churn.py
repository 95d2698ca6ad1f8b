"""Builds reference cycles and collects them in a loop, so the cyclic
collector runs most of the time. Prints READY; runs until killed."""
import gc
import sys


class Node:
    def __init__(self):
        self.me = self


def churn():
    while True:
        nodes = [Node() for _ in range(20000)]           # @alloc
        del nodes
        gc.collect()                                     # @collect


sys.stdout.write("READY\n")
sys.stdout.flush()
churn()
