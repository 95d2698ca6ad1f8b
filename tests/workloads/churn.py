"""A target that forks, execs and exits children and starts and ends threads
continuously, while its main thread computes: for ptrace safety tests.
Prints READY; writes a progress counter to the file named by --progress."""
import os
import subprocess
import sys
import threading
import time

progress = sys.argv[sys.argv.index("--progress") + 1]


def short_thread():
    sum(range(10000))


def churn():
    while True:
        t = threading.Thread(target=short_thread)
        t.start()
        t.join()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        subprocess.run(["/bin/true"])


threading.Thread(target=churn, daemon=True).start()
sys.stdout.write("READY\n")
sys.stdout.flush()
n = 0
while True:
    sum(range(20000))
    n += 1
    if n % 50 == 0:
        with open(progress + ".tmp", "w") as f:
            f.write(str(n))
        os.replace(progress + ".tmp", progress)     # never seen half written
