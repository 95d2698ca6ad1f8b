#!/usr/bin/python3
"""The cost of `framewalk agent` (issue 14's goal: under 1% of one core and
under 50 MB RSS for 20 Python processes at 49 Hz).

Starts --procs Python services (default 20) that each use about --duty of a
core (default 5%: a pure-Python loop for 1 ms out of 20 ms, so the machine
is not saturated and cpu-mode sampling sees what a quiet fleet host shows),
and one agent choosing them all (--match on a tag) at --rate 49 Hz with its
default backend (bpf: whole stacks), a --period of 5 s, sending every
period to a local OTLP receiver (this script: it counts requests and bytes)
and to a rotated --dir. After --warmup seconds, the agent's CPU (utime +
stime of /proc/PID/stat) is read over --windows consecutive windows of
--window seconds; the figure is the median share of one core, with the
smallest and largest, and the share over all windows together (one
window's figure moves in steps of 0.1: the clock's 10 ms ticks in 10 s; where
a cgroup of the agent's own can be made, its CPU is read from it instead, to the
nanosecond, every thread counted).
--no-dir sends to OTLP only. RSS is VmRSS (and its anonymous part, RssAnon) at
the end of each window; the figure is the largest.

  bench/agent_cost.py build/framewalk [--procs 20] [--rate 49] [--warmup 10]
                      [--window 10] [--windows 4] [--python PATH] [--no-dir]

Run as root (the agent reads other processes). Prints one table; writes
nothing else. Every process it starts ends with it.
"""
import argparse
import http.server
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwbench as fb  # noqa: E402

WORKER = r"""
import sys, time
def service_hot(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
busy, idle = float(sys.argv[1]), float(sys.argv[2])
sys.stdout.write("READY\n"); sys.stdout.flush()
while True:
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        service_hot(200)
    time.sleep(idle)
"""


def agent_process(pid, exe):
    """pid, or under a --agent-prefix wrapper the descendant running exe (the
    framewalk binary): the process to measure and to stop (a wrapper such as
    heaptrack writes its file only when the agent itself ends)."""
    todo = [pid]
    while todo:
        p = todo.pop(0)
        try:
            if os.path.realpath("/proc/%d/exe" % p) == exe:
                return p
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    sys.exit("no process running %s under the agent's wrapper" % exe)


class CpuGroup:
    """The agent's CPU to the nanosecond, all its threads (also those that
    ended) counted: a cgroup of its own, cgroup v1's cpuacct.usage or v2's
    cpu.stat usage_usec. Without either, None: /proc/PID/stat's clock ticks
    (10 ms each: a 20 s window moves in steps of 0.05% of a core)."""

    def __init__(self, pid, tag):
        self.dir = self.usage = None
        for root, usage in (("/sys/fs/cgroup/cpuacct", "cpuacct.usage"),
                            ("/sys/fs/cgroup/unified", "cpu.stat"),
                            ("/sys/fs/cgroup", "cpu.stat")):
            if not os.path.exists(os.path.join(root, "cgroup.procs")):
                continue
            d = os.path.join(root, tag)
            try:
                os.mkdir(d)
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
            except OSError:
                if os.path.isdir(d):
                    os.rmdir(d)
                continue
            self.root, self.dir, self.usage, self.pid = root, d, usage, pid
            return

    def seconds(self):
        with open(os.path.join(self.dir, self.usage)) as f:
            text = f.read()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        return int(text.split("usage_usec")[1].split()[0]) / 1e6

    def close(self):
        if not self.dir:
            return
        try:
            with open(os.path.join(self.root, "cgroup.procs"), "w") as f:
                f.write(str(self.pid))
        except OSError:
            pass
        for _ in range(50):
            try:
                os.rmdir(self.dir)
                return
            except OSError:
                time.sleep(0.1)


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Receiver(http.server.ThreadingHTTPServer):
    daemon_threads = True


def start_receiver(counts):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            counts["requests"] += 1
            counts["bytes"] += len(body)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = Receiver(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("framewalk")
    ap.add_argument("--procs", type=int, default=20)
    ap.add_argument("--rate", type=float, default=49)
    ap.add_argument("--duty", type=float, default=0.05)
    ap.add_argument("--period", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--window", type=float, default=10)
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python"))
    ap.add_argument("--agent-args", default="", help="more agent options, space-separated")
    ap.add_argument("--agent-prefix", default="",
                    help="a command the agent runs under, space-separated (heaptrack -o FILE: "
                         "where its memory goes); the agent itself is measured and stopped")
    ap.add_argument("--no-dir", action="store_true",
                    help="OTLP only (a fleet's usual agent), without the rotated --dir")
    a = ap.parse_args()

    tag = "fwcost-" + uuid.uuid4().hex[:8]
    tmp = tempfile.mkdtemp(prefix="agent-cost-")
    counts = {"requests": 0, "bytes": 0}
    srv = start_receiver(counts)
    workers, agent, group = [], None, None
    cycle = 0.020
    try:
        for _ in range(a.procs):
            w = subprocess.Popen([a.python, "-c", WORKER, str(cycle * a.duty),
                                  str(cycle * (1 - a.duty)), tag],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
            w.stdout.readline()
            workers.append(w)
        argv = a.agent_prefix.split() + [
                a.framewalk, "agent", "--match", tag, "-r", str(a.rate), "--period", str(a.period),
                "--scan", "5", "--otlp", "http://127.0.0.1:%d" % srv.server_address[1],
                "--status", "0"] + a.agent_args.split()
        if not a.no_dir:
            argv += ["--dir", os.path.join(tmp, "out"), "--dir-max-bytes", "16M"]
        agent = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(tmp, "agent.err"), "w"))
        time.sleep(a.warmup)
        if agent.poll() is not None:
            sys.exit("the agent exited: " + open(os.path.join(tmp, "agent.err")).read())
        pid = agent_process(agent.pid, os.path.realpath(a.framewalk))
        group = CpuGroup(pid, tag)
        cpu = group.seconds if group.dir else (lambda: fb.proc_cpu_seconds(pid))
        shares, rss, anon = [], [], []
        c_first, t_first = cpu(), time.monotonic()
        for _ in range(a.windows):
            c0, t0 = cpu(), time.monotonic()
            time.sleep(a.window)
            c1, t1 = cpu(), time.monotonic()
            shares.append(100.0 * (c1 - c0) / (t1 - t0))
            rss.append(proc_status(pid, "VmRSS"))
            anon.append(proc_status(pid, "RssAnon"))
        # over all windows together: finer than one window's clock ticks
        mean = 100.0 * (cpu() - c_first) / (time.monotonic() - t_first)
        os.kill(pid, signal.SIGTERM)
        agent.wait(timeout=30)
        err = open(os.path.join(tmp, "agent.err")).read()
        first = err.splitlines()[0] if err else ""
        print("framewalk agent cost: %d Python processes (%.0f%% of a core each), %g Hz, "
              "period %g s, %s" % (a.procs, a.duty * 100, a.rate, a.period,
                                     "OTLP" if a.no_dir else "OTLP + --dir"))
        print("  %s" % first)
        print("  agent CPU, %% of one core (%s), %d windows of %g s after %g s: median %.3f "
              "(min %.3f, max %.3f); all windows together %.3f" % (
                  "its cgroup's " + group.usage if group.dir else "clock ticks",
                  a.windows, a.window, a.warmup, statistics.median(shares), min(shares),
                  max(shares), mean))
        print("  agent RSS: max %.1f MB (anonymous %.1f MB); per window: %s MB" % (
            max(rss) / 1024, max(anon) / 1024, ", ".join("%.1f" % (r / 1024) for r in rss)))
        print("  OTLP: %d requests, %.1f kB each on average" % (
            counts["requests"], counts["bytes"] / max(1, counts["requests"]) / 1024))
        last = [l for l in err.splitlines() if " periods, " in l]
        if last:
            print("  agent's last status line: %s" % last[-1])
        goal = statistics.median(shares) < 1.0 and max(rss) < 50 * 1024
        print("  goal (< 1%% CPU, < 50 MB RSS): %s" % ("met" if goal else "NOT met"))
    finally:
        if group:
            group.close()
        if agent and agent.poll() is None:
            agent.kill()
            agent.wait()
        for w in workers:
            w.kill()
            w.wait()
        srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
