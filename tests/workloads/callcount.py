"""--count-calls target (tests/functional/test_callcount.py): one thread
calls f exactly N times per 10 ms tick, a recursion of depth DEPTH and a
generator resumed K times, each function counting its own runs. An audit
hook records the counters at each remote-execution request (the instant
framewalk's script starts or stops the counting, in this very thread), and
SIGUSR1 prints them with the sys.monitoring tools held, as one JSON line;
SIGUSR2 makes each tick call f five times as often (a deploy's N+1);
SIGHUP starts a thread calling f3 BURST times beside the main loop;
SIGWINCH forks a child that reports the sys.monitoring tools it holds (its
parent's, inherited, unless something turned them off) and exits: the
report's child_tools.
Arguments: "busy" runs the ticks back to back (no sleep); "hog" takes every free sys.monitoring tool id first; "block"
blocks the main thread in C (a read of a pipe nobody writes) after READY.
"""
import json
import os
import signal
import sys
import time

N, DEPTH, K = 10, 20, 5
n_f = n_rec = n_gen_start = n_gen_resume = 0
BURST = 200000
burst_done = 0
snaps = []
child_tools = None


def f():
    global n_f
    n_f += 1


def f3():
    pass


def burst_run():
    global burst_done
    for _ in range(BURST):
        f3()
    burst_done += 1


def burst(sig, frame):
    # BURST calls of f3 in a thread of their own, beside the main loop
    import threading
    threading.Thread(target=burst_run, name="burst").start()


def rec(d):
    global n_rec
    n_rec += 1
    if d:
        rec(d - 1)


def gen(k):
    global n_gen_start, n_gen_resume
    n_gen_start += 1
    for i in range(k):
        yield i
        n_gen_resume += 1


def audit(event, args):
    if "remote_debugger_script" in event:
        snaps.append({"event": event, "path": str(args[0]), "f": n_f, "rec": n_rec,
                      "gen_start": n_gen_start, "gen_resume": n_gen_resume})


def report(sig, frame):
    tools = [sys.monitoring.get_tool(i) for i in range(6)]
    # os.write, not print: a signal during print's flush would re-enter it
    os.write(1, (json.dumps({"snaps": snaps, "tools": tools, "burst_done": burst_done,
                             "child_tools": child_tools}) + "\n").encode())


def fork_child(sig, frame):
    global child_tools
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, json.dumps([sys.monitoring.get_tool(i) for i in range(6)]).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 65536)
    os.close(r)
    os.waitpid(pid, 0)
    child_tools = json.loads(data)


def more(sig, frame):
    global N
    N *= 5


def main():
    sys.addaudithook(audit)
    signal.signal(signal.SIGUSR1, report)
    signal.signal(signal.SIGUSR2, more)
    signal.signal(signal.SIGHUP, burst)
    signal.signal(signal.SIGWINCH, fork_child)
    if "hog" in sys.argv[1:]:
        for i in range(6):
            if sys.monitoring.get_tool(i) is None:
                sys.monitoring.use_tool_id(i, "hog %d" % i)
    busy = "busy" in sys.argv[1:]
    print("READY", flush=True)
    if "block" in sys.argv[1:]:
        r, w = os.pipe()
        os.read(r, 1)
    while True:
        for _ in range(N):
            f()
        rec(DEPTH)
        for _ in gen(K):
            pass
        if not busy:
            time.sleep(0.01)


main()
