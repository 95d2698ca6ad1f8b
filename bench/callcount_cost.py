#!/usr/bin/env python3
"""The cost of record --count-calls on call-heavy code (docs/CALLCOUNTS.md).

    bench/callcount_cost.py FRAMEWALK [--python python3.14] [--seconds 4] [--reps 3]

For each shape (a tight f() loop, a small method, recursion of depth 20, a
generator resumed 20 times, a web-style handler: JSON in, three small
functions and a generator expression, JSON out) a target in the Debian-unstable root counts its
own units of work (one call of f / the method / rec, one resume, one
request) and prints
how many it did in each 50 ms slice. framewalk record --count-calls -d
SECONDS --python-only -r 100 is attached once the rate is steady: the slices
before it give the baseline, those while counting the slowdown (sampling at
100 Hz included; measured alone it is < 1%), and the longest gap between two
slices around the start and the stop the handshake's pause. Run as root.
"""
import argparse
import os
import select
import statistics
import subprocess
import sys
import time

ROOT = os.environ.get("FRAMEWALK_SID_ROOT", "/var/cache/framewalk/sid")
SLICE = 0.05

TARGET = r'''
import sys, time
SLICE = %(slice)r
def f():
    pass
class C:
    def m(self):
        pass
def rec(d):
    if d:
        rec(d - 1)
def gen():
    for i in range(20):
        yield i
def unit_f():
    for _ in range(1000):
        f()
    return 1000
c = C()
def unit_m():
    for _ in range(1000):
        c.m()
    return 1000
def unit_rec():
    for _ in range(50):
        rec(19)
    return 1000
def unit_gen():
    for _ in range(50):
        for _ in gen():
            pass
    return 1000
import json
REQ = json.dumps({"user": 42, "items": [{"sku": i, "qty": i %% 3 + 1} for i in range(8)]})
def validate(req):
    return isinstance(req.get("user"), int) and all(it["qty"] > 0 for it in req["items"])
def price(item):
    return item["qty"] * (100 + item["sku"])
def handle(body):
    req = json.loads(body)
    if not validate(req):
        return "{}"
    total = sum(price(it) for it in req["items"])
    return json.dumps({"user": req["user"], "total": total, "n": len(req["items"])})
def unit_handler():
    for _ in range(20):
        handle(REQ)
    return 20
unit = globals()["unit_" + sys.argv[1]]
out = sys.stdout
print("READY", flush=True)
n = 0
t0 = time.perf_counter()
while True:
    n += unit()
    t = time.perf_counter()
    if t - t0 >= SLICE:
        out.write("%%.6f %%d\n" %% (t, n))
        out.flush()
        n = 0
        t0 = t
'''


def run_shape(fw, python, shape, seconds):
    script = os.path.join(ROOT, "tmp", "fw-callcount-bench.py")
    with open(script, "w") as f:
        f.write(TARGET % {"slice": SLICE})
    proc = subprocess.Popen(["chroot", ROOT, python, "-B", "/tmp/fw-callcount-bench.py", shape],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = []
    buf = b""

    def pump(until):
        nonlocal buf
        while time.monotonic() < until:
            r, _, _ = select.select([proc.stdout], [], [], 0.05)
            if r:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                *done, buf = buf.split(b"\n")
                for line in done:
                    if line and line != b"READY":
                        t, n = line.split()
                        lines.append((float(t), int(n)))
    try:
        pump(time.monotonic() + 1.5)          # warm up
        base_from = len(lines)
        pump(time.monotonic() + 2.0)
        base = lines[base_from:]
        t_attach = time.perf_counter()
        fw_proc = subprocess.Popen([fw, "record", "-d", str(seconds), "--count-calls",
                                    "--python-only", "-r", "100", "-p", str(proc.pid), "-q",
                                    "-o", "/dev/null"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        during_from = len(lines)
        while fw_proc.poll() is None:
            pump(time.monotonic() + 0.1)
        t_done = time.perf_counter()
        err = fw_proc.stderr.read().decode()
        fw_proc.stderr.close()
        pump(time.monotonic() + 1.0)
        after = [x for x in lines[during_from:] if x[0] > t_done + 0.2]
        during = [x for x in lines[during_from:] if t_attach + 0.5 < x[0] < t_done - 0.5]
        gaps = [b[0] - a[0] for a, b in zip(lines[during_from - 1:], lines[during_from:])]
        if "count-calls" not in err or "warning" in err:
            sys.stderr.write(err)
        rate = lambda xs: statistics.median(n / SLICE for _, n in xs) if xs else float("nan")
        return rate(base), rate(during), rate(after), max(gaps) if gaps else float("nan")
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        os.unlink(script)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("framewalk")
    ap.add_argument("--python", default="/usr/bin/python3.14")
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shapes", default="f,m,rec,gen,handler")
    a = ap.parse_args()
    print("%s, %d reps of %g s each; units of work per second (median of 50 ms slices)"
          % (a.python, a.reps, a.seconds))
    print("%-6s %14s %14s %9s %14s %11s" % ("shape", "before", "counting", "slowdown",
                                            "after", "max pause"))
    for shape in a.shapes.split(","):
        res = [run_shape(a.framewalk, a.python, shape, a.seconds) for _ in range(a.reps)]
        b = statistics.median(r[0] for r in res)
        d = statistics.median(r[1] for r in res)
        af = statistics.median(r[2] for r in res)
        gap = max(r[3] for r in res)
        print("%-6s %14.0f %14.0f %8.1fx %14.0f %9.0f ms" % (shape, b, d, b / d, af,
                                                            gap * 1000))


if __name__ == "__main__":
    main()
