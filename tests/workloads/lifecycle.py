"""Threads whose life ends, or stalls in the kernel, while a profiler may hold
them stopped (tests/functional/test_ptrace_life.py). Valid on Python 3.8+.

  spin           8 threads take turns at the GIL forever; READY
  exit           as spin; on a line "go" on stdin the main thread prints
                 "EXITING <monotonic>" and calls os._exit(7)
  exec           as spin; on "go" a non-main thread prints "EXECING <monotonic>"
                 and execs this interpreter, which prints "EXECED <monotonic>"
                 and sleeps
  spawnwait FIFO a thread named spawner posix_spawn()s /bin/true with FIFO
                 opened for reading in the child first: glibc's vfork-style
                 spawn keeps the thread in uninterruptible sleep (D) until
                 someone opens FIFO for writing; then it sleeps (S). Prints
                 READY, then "SPAWNER <tid>" (from that thread).
"""
import os
import sys
import threading
import time


def spin():
    while True:
        sum(range(200))                                 # @spin


def start_spinners(n=8):
    for i in range(n):
        threading.Thread(target=spin, name="spin%d" % i, daemon=True).start()


def execer():
    print("EXECING %r" % time.monotonic(), flush=True)
    os.execv(sys.executable, [sys.executable, "-c",
                              "import time; print('EXECED %r' % time.monotonic(), flush=True); "
                              "time.sleep(60)"])


def spawner(fifo):
    print("SPAWNER %d" % threading.get_native_id(), flush=True)
    # CPython calls posix_spawn holding the GIL: the other threads wait too
    pid = os.posix_spawn("/bin/true", ["true"], dict(os.environ),
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, fifo, os.O_RDONLY, 0)])
    os.waitpid(pid, 0)
    while True:
        time.sleep(0.5)                                 # @after_spawn


def main():
    mode = sys.argv[1]
    if mode != "spawnwait":
        start_spinners()
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    if mode == "spawnwait":
        threading.Thread(target=spawner, args=(sys.argv[2],), name="spawner",
                         daemon=True).start()
    if mode in ("exit", "exec"):
        sys.stdin.readline()
        if mode == "exit":
            print("EXITING %r" % time.monotonic(), flush=True)
            os._exit(7)
        threading.Thread(target=execer, name="execer").start()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
