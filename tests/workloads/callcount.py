"""--count-calls target (tests/functional/test_callcount.py): one thread
calls f exactly N times per 10 ms tick, a recursion of depth DEPTH and a
generator resumed K times, each function counting its own runs. An audit
hook records the counters at each remote-execution request (the instant
framewalk's script starts or stops the counting, in this very thread), and
SIGUSR1 prints them with the sys.monitoring tools held, as one JSON line.
"""
import json
import signal
import sys
import time

N, DEPTH, K = 10, 20, 5
n_f = n_rec = n_gen_start = n_gen_resume = 0
snaps = []


def f():
    global n_f
    n_f += 1


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
    print(json.dumps({"snaps": snaps, "tools": tools}),
          flush=True)


def main():
    sys.addaudithook(audit)
    signal.signal(signal.SIGUSR1, report)
    print("READY", flush=True)
    while True:
        for _ in range(N):
            f()
        rec(DEPTH)
        for _ in gen(K):
            pass
        time.sleep(0.01)


main()
