"""framewalk's own target for test_austin_like.py (written for framewalk, not
copied): prints the arguments it was given, then sleeps argv[1] seconds in
nap(): a program that is never on a CPU, whose run length is its argument."""
import sys
import time


def nap(seconds):
    time.sleep(seconds)


def main(argv):
    print("args: %r" % (argv[1:],), flush=True)
    nap(float(argv[1]))


if __name__ == "__main__":
    main(sys.argv)
