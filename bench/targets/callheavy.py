"""Call-heavy benchmark target: a loop calling a one-line function, about a
million Python calls a second on one thread, for the non-stopping reader's
torn-read handling (dropped vs mixed stacks).

    python callheavy.py SECONDS

True stacks: <module> -> main -> mid (line of the loop header or the call)
[-> leaf]. A stack with mid at its loop header (`for`) and leaf above it
mixes two moments: leaf is only ever called from the line below.
"""
import sys
import time


def leaf(i):
    return i + 1


def mid(n):
    s = 0
    for i in range(n):          # loop header
        s += leaf(i)            # the only call of leaf
    return s


def main():
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        mid(1000)


main()
