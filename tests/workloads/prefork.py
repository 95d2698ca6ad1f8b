"""A pre-fork server in the style of gunicorn: the master forks WORKERS
workers after start-up, each serving (spinning on) requests until killed.
Prints READY, forks a second later, and writes the worker pids to the
file named by --pids. Valid on Python 3.8 through 3.15."""
import os
import signal
import sys
import time

WORKERS = 3


def handle_request():
    x = 0
    for i in range(20000):
        x += i                                           # @handle
    return x


def worker(parent):
    # die with the master, even when it is killed with SIGKILL
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)    # PR_SET_PDEATHSIG
    except Exception:
        pass
    while os.getppid() == parent:
        handle_request()


def main():
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    time.sleep(1.0)             # the profiler attaches before the fork
    pids = []
    for _ in range(WORKERS):
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            worker(parent)
            os._exit(0)
        pids.append(pid)
    with open(sys.argv[sys.argv.index("--pids") + 1], "w") as f:
        f.write(" ".join(map(str, pids)))
    try:
        while True:
            time.sleep(1)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    main()
