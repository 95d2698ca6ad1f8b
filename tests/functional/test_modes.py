"""CPU vs wall-clock (issue 7): modes, [wait] leaves naming the system call,
the per-thread time summary from kernel accounting, GIL shares, following
subprocesses, many threads, and the sampling rate's fidelity."""
import os
import json
import re
import signal
import subprocess
import time

import pytest

from fwtest import (INTERP_BY_ID, collapsed_lines as collapsed, is_python_frame, parse_frame,
                    run_fw, start_workload)

SLEEP_SYSCALLS = ("clock_nanosleep", "nanosleep", "select", "pselect6", "poll")


def by_thread(lines):
    per = {}
    for thread, frames, count in lines:
        per.setdefault(thread, []).append((frames, count))
    return per


def record(w, tmp_path, *args, name="out.collapsed", fmt="collapsed", seconds=3, rate=200):
    out = tmp_path / name
    r = run_fw("record", "-p", w.pid, "-d", seconds, "-r", rate, "-q", "-f", fmt, "-o", out,
               *args, timeout=90)
    assert r.returncode == 0, r
    return out.read_text()


def func(frame):
    return frame.split(" (")[0]


def innermost_python(frames):
    """The innermost Python function of a stack (whole stacks by default:
    native frames may lie between it and a [wait] or <GC> leaf)."""
    py = [f for f in frames if is_python_frame(f)]
    return func(py[-1]) if py else None


@pytest.mark.parametrize("interp_id", ["py3.12", "py3.8", "sid-py3.15"])
def test_cpu_shows_busy_only_and_wall_shows_the_sleeper_waiting(interp_id, tmp_path):
    w = start_workload(INTERP_BY_ID[interp_id], "busy_sleep.py")
    try:
        cpu = by_thread(collapsed(record(w, tmp_path, "--mode", "cpu", name="cpu")))
        sleeper_cpu = sum(c for t in cpu.values() for f, c in t
                          if any(func(x) == "sleeper" for x in f))
        busy_cpu = sum(c for t in cpu.values() for f, c in t
                       if any(func(x) == "busy_loop" for x in f))
        assert busy_cpu > 100, cpu
        # a sleeper is runnable for a moment after each wake-up (longer on a
        # loaded machine): a few percent at most
        assert sleeper_cpu <= 0.05 * busy_cpu, (sleeper_cpu, busy_cpu)
        wall = collapsed(record(w, tmp_path, "--mode", "wall", name="wall"))
        sleeper = sum(c for _, f, c in wall if any(func(x) == "sleeper" for x in f))
        busy = sum(c for _, f, c in wall if any(func(x) == "busy_loop" for x in f))
        total = sleeper + busy
        assert total > 200
        assert abs(100.0 * sleeper / total - 50) <= 5, (sleeper, busy)
        waiting = sum(c for _, f, c in wall if any(func(x) == "sleeper" for x in f)
                      and f[-1].startswith("[wait] ")
                      and f[-1].split()[1] in SLEEP_SYSCALLS)
        assert waiting >= 0.95 * sleeper, wall
    finally:
        w.stop()


@pytest.mark.parametrize("backend", ["ptrace", "vm", "bpf"])
@pytest.mark.parametrize("interp_id", ["py3.12", "sid-py3.15"])
@pytest.mark.backend_interps(ptrace=("py3.12",), vm=("sid-py3.15",))
def test_cpu_mode_counts_cpu_time_not_runnable_time(interp_id, backend, tmp_path):
    """cpu mode is the CPU time a thread used, not the ticks at which it was
    runnable (issue 21, item 14): a thread waiting for a CPU is runnable but
    not running. cpu_contended.py spends equal wall time in two functions,
    sharing CPU 0 with a spinning process in one of them, and measures its
    own CPU time in each (time.thread_time): about 1/3 and 2/3. Counting
    each tick at which the thread was runnable gave about 1/2 (ptrace, vm);
    the bpf backend's samples come from the kernel's CPU clock. framewalk
    runs on the other CPU, so it takes no CPU from the target's; the bound
    is 5 points, the noise of 600-1800 samples being 1.2-2."""
    assert len(os.sched_getaffinity(0)) >= 2, "this test needs two CPUs"
    w = start_workload(INTERP_BY_ID[interp_id], "cpu_contended.py", "40")
    try:
        out = tmp_path / "cpu.collapsed"
        os.kill(w.pid, signal.SIGUSR2)
        r = run_fw("record", "-p", w.pid, "-d", 6, "-r", 397, "-q", "--python-only",
                   "--backend", backend, "-o", out, prefix=["taskset", "-c", "1"], timeout=90)
        os.kill(w.pid, signal.SIGUSR1)
        line = w.proc.stdout.readline().decode()
        assert r.returncode == 0, r
        truth = dict((k, int(v)) for k, v in (f.split("=") for f in line.split()[1:]))
        true_share = 100.0 * truth["contended"] / (truth["contended"] + truth["alone"])
        got = {"contended": 0, "alone": 0}
        for _, frames, count in collapsed(out.read_text()):
            names = [func(f) for f in frames]
            for k in got:
                if k in names:
                    got[k] += count
        total = got["contended"] + got["alone"]
        assert total >= 600, (got, r)   # ~1800 alone; ~1000 with both CPUs loaded
        share = 100.0 * got["contended"] / total
        assert 25 <= true_share <= 42, line     # the workload did what it says
        assert abs(share - true_share) <= 5, (
            "%s: contended %.1f%% of cpu-mode samples, %.1f%% of the CPU time it measured (%s)"
            % (backend, share, true_share, got))
    finally:
        w.stop()


def test_blocked_client_waits_in_recv_under_the_right_frame(tmp_path):
    w = start_workload(INTERP_BY_ID["py3.12"], "socket_client.py")
    try:
        text = record(w, tmp_path, "--mode", "wall", fmt="text", name="wall.txt", seconds=4)
        col = collapsed(record(w, tmp_path, "--mode", "wall", name="wall.col", seconds=4))
        client = [(f, c) for t, f, c in col if t.startswith("client ")]
        total = sum(c for _, c in client)
        assert total > 300, col
        good = sum(c for f, c in client
                   if len(f) >= 2 and innermost_python(f[:-1]) == "execute" and
                   re.match(r"\[wait\] (recvfrom|recv|recvmsg|poll|ppoll|select)\b", f[-1]))
        assert good >= 0.90 * total, client
        # the time summary: the client thread used well under 10% of a CPU
        m = re.search(r"^  client \(\d+\): ([\d.]+) s wall, ([\d.]+) s CPU \((\d+)%\) - waiting: "
                      r"(\w+) (\d+)%", text, re.M)
        assert m, text[:3000]
        assert int(m.group(3)) < 10, m.group(0)
        assert m.group(4) in ("recvfrom", "recv", "recvmsg", "poll", "ppoll"), m.group(0)
        assert int(m.group(5)) >= 90, m.group(0)
    finally:
        w.stop()


@pytest.mark.parametrize("interp_id", ["py3.12", "py3.10", "sid-py3.15"])
def test_gil_contention_splits_holding_and_waiting(interp_id, tmp_path):
    w = start_workload(INTERP_BY_ID[interp_id], "gil_contention.py")
    try:
        text = record(w, tmp_path, "--mode", "gil", fmt="text", name="gil.txt", seconds=4)
        rows = re.findall(r"^      GIL: held (\d+)%, waiting (\d+)% of (\d+) ticks", text, re.M)
        # the two spinning threads (the main thread waits on an Event: never holds)
        busy = [(int(h), int(wt)) for h, wt, n in rows if int(h) > 10]
        assert len(busy) == 2, text[:3000]
        for held, waiting in busy:
            assert abs(held - 50) <= 15, text[:3000]
            assert abs(waiting - 50) <= 15, text[:3000]
        col = collapsed(record(w, tmp_path, "--mode", "gil", name="gil.col", seconds=2))
        assert col and all(any(func(x) == "spin" for x in f) for _, f, _ in col), col
    finally:
        w.stop()


def test_subprocesses_captures_every_prefork_worker(tmp_path):
    pids_file = tmp_path / "pids"
    w = start_workload(INTERP_BY_ID["py3.12"], "prefork.py", "--pids", str(pids_file))
    try:
        out = tmp_path / "pre.col"
        r = run_fw("record", "-p", w.pid, "-d", "4", "-r", "100", "-q", "--subprocesses",
                   "-f", "collapsed", "-o", out, timeout=60)
        assert r.returncode == 0, r
        workers = [int(p) for p in pids_file.read_text().split()]
        assert len(workers) == 3
        text = out.read_text()
        for pid in workers:
            lines = [l for l in text.splitlines() if "[pid %d]" % pid in l]
            assert lines, "worker %d missing:\n%s" % (pid, text[:3000])
            assert any("handle_request" in l for l in lines)
    finally:
        w.stop()


def test_many_threads_are_all_sampled(tmp_path):
    w = start_workload(INTERP_BY_ID["py3.12"], "many_threads.py", "--threads", "200")
    try:
        col = collapsed(record(w, tmp_path, "--mode", "wall", seconds=2, rate=50))
        threads = {t for t, f, c in col if any(func(x) == "parked" for x in f)}
        assert len(threads) == 200, len(threads)
    finally:
        w.stop()


def test_rate_fidelity_at_100hz(tmp_path):
    """The report states the ticks asked for (duration x rate) and taken, and
    no thread gets more than one sample per tick. How many are taken on a
    loaded machine is a benchmark's question (bench/rate.py), not a test's."""
    w = start_workload(INTERP_BY_ID["py3.12"], "busy_sleep.py")
    try:
        # one capture, both outputs (each file's format from its extension)
        txt_path, col_path = tmp_path / "rate.txt", tmp_path / "rate.collapsed"
        r = run_fw("record", "-p", w.pid, "-d", 10, "-r", 100, "-q", "--mode", "wall",
                   "-o", txt_path, "-o", col_path, timeout=90)
        assert r.returncode == 0, r
        text = txt_path.read_text()
        m = re.search(r"^Samples: .* from (\d+) of (\d+) requested ticks", text, re.M)
        assert m, text[:2000]
        taken, requested = int(m.group(1)), int(m.group(2))
        assert abs(requested - 1000) <= 20, m.group(0)
        assert 0 < taken <= requested, m.group(0)
        col = collapsed(col_path.read_text())
        per = {}
        for t, f, c in col:
            per[t] = per.get(t, 0) + c
        assert len(per) == 2, per
        for t, n in per.items():
            assert 0 < n <= 1000 + 20, per
    finally:
        w.stop()


def bpf_ticks_per_thread(w, tmp_path, mode, seconds=6, rate=100):
    """A bpf capture of w in mode: (the ticks its duration asked for, {thread: samples})."""
    col_path, txt_path = tmp_path / "w.collapsed", tmp_path / "w.txt"
    r = run_fw("record", "-p", w.pid, "-d", seconds, "-r", rate, "-q", "--mode", mode,
               "--backend", "bpf", "-o", col_path, "-o", txt_path, timeout=90)
    assert r.returncode == 0, r
    m = re.search(r"^Duration:\s+([\d.]+) s", txt_path.read_text(), re.M)
    assert m, txt_path.read_text()[:2000]
    per = {}
    for t, f, c in collapsed(col_path.read_text()):
        per[t] = per.get(t, 0) + c
    return float(m.group(1)) * rate, per


def test_wall_counts_a_busy_thread_once_a_tick_beside_a_cpu_hog(tmp_path):
    """bpf in wall mode: the kernel's clock samples the threads on a CPU, the
    ticks read those off one. A busy thread whose CPU the tick itself takes
    for a moment (framewalk's own thread preempting it) was counted by both:
    1,065 samples for 1,000 ticks alone, 1,232-1,979 beside a process that
    keeps the other core busy. Now about one a tick, as a read at one
    instant counts it: within 5% of the ticks for both threads (the clock's
    samples are not aligned with the ticks: 1,030-1,035 a 10 s capture).
    Beside two such processes (the busy thread's CPU time sliced finer than
    a tick) it was counted 13-17% short; 1,000 of 1,000 since each record
    stands for the ticks since the thread's last (docs/BPF.md;
    test_a_busy_thread_counts_once_a_tick_sharing_its_cpu)."""
    w = start_workload(INTERP_BY_ID["py3.12"], "busy_sleep.py")
    hogs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"])]
    try:
        ticks, per = bpf_ticks_per_thread(w, tmp_path, "wall")
        assert len(per) == 2, per
        for t, n in per.items():
            assert 0.9 * ticks <= n <= 1.05 * ticks, (ticks, per)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        w.stop()


def test_a_busy_thread_counts_once_a_tick_sharing_its_cpu(tmp_path):
    """bpf in wall mode, the busy thread sharing its CPU with a hog (both
    pinned to CPU 0: the scheduler slices the CPU between them in pieces
    shorter than a 10 ms tick). At a tick the thread may be running, so the
    iterator does not read it, while at the cpu-clock's moment in the same
    interval the hog ran: it went uncounted for that interval, 24% short
    (455 of 600). Now each of its samples stands for the ticks since its
    last: within 5% of the ticks, as the sleeper. (gil mode keeps the rule
    that was short here, 452-463 of 600 against a stopped read's 597: the
    same count read callshapes.py further from the stopped reference,
    docs/BPF.md.)"""
    assert len(os.sched_getaffinity(0)) >= 2, "this test needs two CPUs"
    w = start_workload(INTERP_BY_ID["py3.12"], "busy_sleep.py")
    hog = subprocess.Popen(["taskset", "-c", "0", "/bin/sh", "-c", "while :; do :; done"])
    try:
        w.pin(0)
        ticks, per = bpf_ticks_per_thread(w, tmp_path, "wall")
        assert len(per) == 2, per
        for t, n in per.items():
            assert 0.95 * ticks <= n <= 1.05 * ticks, (ticks, per)
    finally:
        hog.kill()
        hog.wait()
        w.stop()


@pytest.mark.parametrize("backend, mode, extra, period", [
    ("bpf", "wall", (), "0.01"), ("bpf", "cpu", ("--subprocesses",), "0.01"),
    ("ptrace", "cpu", (), "0.01"), ("ptrace", "wall", (), "0.01"), ("vm", "cpu", (), "0.01"),
    ("vm", "wall", (), "0.01"), ("bpf", "wall", (), "0.0025"), ("bpf", "gil", (), "0.0025")])
def test_a_periodic_target_is_not_read_in_phase(backend, mode, extra, period, tmp_path):
    """A thread paced by a 100 Hz clock, half of each 10 ms in first_half and
    half in second_half (phase_locked.py), sampled at 100 Hz: each half gets
    about half of the samples. A sampler reading at fixed 10 ms intervals
    reads the same half every time (before the capture loop's ticks were
    spread, each of these showed 0 and ~300: sampler/pacing.h). The bound,
    35-65%, is five standard deviations of ~300 samples drawn at random
    phases. bpf in cpu mode with an event per CPU (--subprocesses here; the
    agent's too): the loop restarts the events at spread moments (the
    phase drawn again; before, 0 and ~300 as well), bound 25-75% (below).
    bpf in cpu mode with
    events on the target's threads (record -p) is not here: their countdown
    is the thread's CPU time, which a restart would throw away (pacing.h),
    and it reads such a target in phase, as perf does (docs/BENCHMARKS.md,
    "A periodic target").

    bpf in wall and gil modes: a thread on a CPU was read by the next sample
    of a per-CPU cpu-clock at four times the rate after the tick, on that
    clock's 2.5 ms lattice at 100 Hz, never restarted. A target paced at
    10 ms landed evenly on it by chance; one paced at 2.5 ms was read in one
    half only (0 and ~300). Those threads are now the per-CPU clock's, at
    the rate and restarted at spread moments as in cpu mode (bound 25-75%)."""
    w = start_workload(INTERP_BY_ID["py3.12"], "phase_locked.py", "30", period)
    try:
        col = collapsed(record(w, tmp_path, "--backend", backend, "--mode", mode, *extra,
                               seconds=3, rate=100))
        halves = {"first_half": 0, "second_half": 0}
        for _, f, c in col:
            for name in {func(x) for x in f} & set(halves):
                halves[name] += c
        total = sum(halves.values())
        assert total >= 150, col
        # per-CPU events: the ~20 samples between two restarts share one
        # drawn phase and period, so the share spreads wider than for
        # independent phases (6.6 points in a simulation of the restarts:
        # 25-75% is over 3.5 of those); 0% and 100% still fail it
        lo, hi = (0.25, 0.75) if backend == "bpf" and (mode == "cpu" or period != "0.01") \
            else (0.35, 0.65)
        assert lo <= halves["first_half"] / total <= hi, halves
    finally:
        w.stop()


def test_per_cpu_clocks_restarted_only_where_a_target_ran(tmp_path):
    """bpf's per-CPU clocks (--subprocesses; the agent's) are restarted at
    spread moments so that a periodic target is not read in step; each
    restart is a call on that CPU (an interrupt there), so only the CPUs
    where a target was sampled since are restarted: a host of many CPUs
    profiling one process pays for the CPUs it runs on. The target pinned to
    one CPU: at most one clock restarted per moment (before, every CPU's:
    os.cpu_count() per moment), and most moments restart it (it is busy)."""
    if (os.cpu_count() or 1) < 2:
        pytest.fail("this test needs two CPUs to tell one restarted from all")
    w = start_workload(INTERP_BY_ID["py3.12"], "phase_locked.py", "30", "0.01")
    try:
        os.sched_setaffinity(w.pid, {0})
        text = record(w, tmp_path, "--backend", "bpf", "--subprocesses", name="out.txt",
                      fmt="text", seconds=3, rate=100)
        m = re.search(r"drawn again at (\d+) moments, on the CPUs where a target ran: "
                      r"(\d+) clocks restarted", text)
        assert m, text
        moments, restarts = int(m.group(1)), int(m.group(2))
        assert moments >= 5, text
        assert moments // 2 <= restarts <= moments, text
    finally:
        w.stop()


@pytest.mark.parametrize("backend", ["ptrace", "vm"])
def test_a_read_that_waits_on_the_target_stands_for_the_moments_it_waited(backend, tmp_path):
    """A thread that holds its memory map's lock ~90% of the time
    (maplock.py: mprotect over a big mapping, then Python, 4 ms each), in
    wall mode: a reader of its memory waits for the lock, milliseconds per
    tick, and the moments that pass meanwhile were dropped, so the locked
    function got 36-39% of the samples where the target's own clock said
    88-96% (and Python the rest: the reads came just after each lock was let
    go). Each read now stands for the moments that passed while it waited
    (sampler/pacing.h, tick_clock). Bound: within 10 points of the
    target's own measure over the capture's window. (Counted by the
    innermost function, python()'s samples in its generator expression
    were left out, which read 83-87% for a true 70-77% once mprotect got
    faster, 2026-12-04; counted by the function on the stack: ptrace 71.9
    for 71.3, vm 69.9 for 69.6.)"""
    w = start_workload(INTERP_BY_ID["py3.12"], "maplock.py", "5")
    try:
        t0 = time.monotonic()
        col = collapsed(record(w, tmp_path, "--backend", backend, "--mode", "wall",
                               seconds=3, rate=797))
        t1 = time.monotonic()
        shares = {"locked": 0, "python": 0}
        for _, f, c in col:
            # python()'s time is mostly in its generator expression: the
            # function on the stack, not only the innermost one
            names = {func(x) for x in f if is_python_frame(x)}
            for fn in shares:
                if fn in names:
                    shares[fn] += c
        out, _ = w.proc.communicate(timeout=30)
        whole = float(re.search(rb"TRUTH ([0-9.]+)", out).group(1))
        cycles = json.loads(re.search(rb"CYCLES (.*)", out).group(1))
        # The target's own measure over the capture's window (its 3 s end
        # as record returns; the 0.3 s before them its start-up): a reader
        # slows mprotect down (it takes the lock too), so the share while
        # sampled is not the whole run's (2026-12-04: 70-77% over the run,
        # 83-87% sampled, on a machine where the run gave 88-96% before).
        lo, hi = t1 - 3.0, t1
        locked = python = 0.0
        for a, b, c in cycles:
            locked += max(0.0, min(b, hi) - max(a, lo))
            python += max(0.0, min(c, hi) - max(b, lo))
        truth = 100.0 * locked / (locked + python)
        total = sum(shares.values())
        assert total >= 1000, col
        got = 100.0 * shares["locked"] / total
        print("%s: locked %.1f%% sampled, %.1f%% in the window, %.1f%% over the run (%.2f s)"
              % (backend, got, truth, whole, t1 - t0))
        assert abs(got - truth) <= 10, (got, truth, whole, shares)
    finally:
        w.stop()


@pytest.mark.parametrize("interp_id", ["py3.8", "py3.12", "sid-py3.15"])
def test_gc_frame_while_the_collector_runs(interp_id, tmp_path):
    w = start_workload(INTERP_BY_ID[interp_id], "gc_churn.py")
    try:
        col = collapsed(record(w, tmp_path, seconds=2, rate=200))
        total = sum(c for _, f, c in col)
        gc_under_collect = sum(c for _, f, c in col
                               if f and f[-1] == "<GC>" and len(f) >= 2 and
                               innermost_python(f) == "churn")
        assert total > 50, col
        # the collector takes 0.80 (3.8) to 0.95 (3.15) of the loop's CPU
        # time by construction (gc_churn.py); half is a bound a reader that
        # misses <GC> cannot meet and a right one misses only by bad luck
        # far beyond binomial noise (n > 50)
        assert gc_under_collect >= 0.5 * total, col
        # automatic collections also start inside allocations
        allowed = {"churn", "<listcomp>", "churn.<locals>.<listcomp>", "__init__",
                   "Node.__init__"}
        assert all(f[-1] != "<GC>" or innermost_python(f) in allowed for _, f, c in col), col
    finally:
        w.stop()
