"""A launched command for --count-calls (tests/functional/test_callcount.py):
it waits, calling no Python function, until framewalk's counting tool is
registered in it (at most 20 s; the start script runs in this very thread,
so once the tool is seen the counting is on), then calls f exactly F
times, rec(DEPTH) R times and drains gen(K) R times, prints COUNTING (or
NOT COUNTED), spins 0.5 s so the capture has samples, and exits normally:
framewalk reads the counts its exit handler wrote.
"""
import sys
import time

F, R, DEPTH, K = 300000, 100, 20, 5


def f():
    pass


def rec(d):
    if d:
        rec(d - 1)


def gen(k):
    for i in range(k):
        yield i


# module-level loops only until the counting is seen: no Python function runs
found = False
deadline = time.monotonic() + 20
while not found and time.monotonic() < deadline:
    for i in range(6):
        tool = sys.monitoring.get_tool(i)
        if tool is not None and tool.startswith("framewalk-callcount-"):
            found = True
for _ in range(F):
    f()
for _ in range(R):
    rec(DEPTH)
for _ in range(R):
    for _ in gen(K):
        pass
print("COUNTING" if found else "NOT COUNTED", flush=True)
end = time.monotonic() + 0.5
while time.monotonic() < end:
    pass
