"""Shared helpers for framewalk's side-by-side benchmarks (bench/*.py).

Runs on the host's /usr/bin/python3 (3.11). Targets run as python3.15
inside the Debian-unstable root (scripts/sid-root.sh), exactly like a
containerised process; framewalk attaches from the host, 3.15's own sampler
(`python3.15 -m profiling.sampling attach`) runs inside the root, which
needs /proc mounted there (ProcMount below mounts it only if it is not
already, and unmounts only what it mounted).
"""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
ROOT = os.environ.get("FRAMEWALK_SID_ROOT", "/var/cache/framewalk/sid")
PY = "python3.15"
ROOT_TMP = "/tmp/framewalk-bench"          # as seen inside the root
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class Stop(Exception):
    """Raised by SIGTERM/SIGHUP so cleanup (finally blocks) runs."""


def _raise_stop(signum, frame):
    raise Stop("signal %d" % signum)


def install_signal_handlers():
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGHUP, _raise_stop)


def log(msg):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def ensure_root():
    """Create the sid root if python3.15 is missing (scripts/sid-root.sh)."""
    if os.access(os.path.join(ROOT, "usr/bin", PY), os.X_OK):
        return
    log("sid root missing at %s: running scripts/sid-root.sh" % ROOT)
    subprocess.run([os.path.join(REPO, "scripts/sid-root.sh"), ROOT], check=True)
    if not os.access(os.path.join(ROOT, "usr/bin", PY), os.X_OK):
        sys.exit("bench: %s has no %s; cannot run the benchmarks" % (ROOT, PY))


def prepare(a):
    """What every benchmark does first with its parsed arguments: framewalk
    as an absolute path, SIGTERM/SIGHUP as a clean stop, the sid root in
    place, and a.results/raw for the profilers' outputs, which it returns."""
    a.framewalk = os.path.abspath(a.framewalk)
    install_signal_handlers()
    ensure_root()
    raw = os.path.join(a.results, "raw")
    os.makedirs(raw, exist_ok=True)
    return raw


def is_mountpoint(path):
    return subprocess.run(["mountpoint", "-q", path]).returncode == 0


class ProcMount:
    """Mount proc at ROOT/proc if it is not mounted; undo only our mount."""

    def __init__(self):
        self.path = os.path.join(ROOT, "proc")
        self.mounted_by_us = False

    def ensure(self):
        if not is_mountpoint(self.path):
            subprocess.run(["mount", "-t", "proc", "proc", self.path], check=True)
            self.mounted_by_us = True

    def __enter__(self):
        self.ensure()
        return self

    def __exit__(self, *exc):
        if self.mounted_by_us and is_mountpoint(self.path):
            subprocess.run(["umount", self.path])
        return False


def stage(script):
    """Copy bench/targets/SCRIPT into the root's /tmp; return its in-root path."""
    d = ROOT + ROOT_TMP
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(BENCH, "targets", script), d)
    return ROOT_TMP + "/" + script


def units_target(seconds, *extra):
    """bench/targets/cpu.py units --zlib (extra: more of its options) under
    python3.15 in the root for SECONDS, once it said READY: the Popen, its
    unit lines on .stdout (read them: a full pipe would stop it)."""
    path = stage("cpu.py")
    target = subprocess.Popen(["chroot", ROOT, PY, path, "units", "--zlib"] +
                              [str(x) for x in extra] + ["--seconds", str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    ready = target.stdout.readline().split()
    if not ready or ready[0] != "READY":
        target.kill()
        target.wait()
        raise SystemExit("the units target did not start")
    return target


def drain(proc):
    """Read and drop proc's output in a thread, so that it never blocks on a full pipe."""
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()


class Target:
    """A python3.15 process in the root; .pid is valid from the host too
    (same pid namespace; chroot execs python)."""

    def __init__(self, script, *args, stdin=False):
        path = stage(script)
        self.proc = subprocess.Popen(
            ["chroot", ROOT, PY, path] + [str(a) for a in args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "READY":
            self.close()
            raise RuntimeError("target %s did not start (got %r)" % (script, line))
        self.ready = line[1:]

    def command(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def close(self):
        if self.proc.poll() is None:
            try:
                if self.proc.stdin:
                    self.proc.stdin.write("quit\n")
                    self.proc.stdin.flush()
                    self.proc.wait(2)
            except Exception:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def proc_cpu_seconds(pid):
    """utime+stime of PID (all its threads) from /proc/PID/stat, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_rss_kb(pid):
    """(VmRSS, VmHWM) in KiB from /proc/PID/status, or (None, None)."""
    rss = hwm = None
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


# --- profilers ----------------------------------------------------------------

_MODE_FLAG = {}


def framewalk_mode_args(framewalk):
    """["--mode", "wall"] when this build has --mode (its default is cpu:
    only on-CPU threads), so both profilers sample every thread, as the
    peer's default wall mode does; [] for older builds (always every thread)."""
    if framewalk not in _MODE_FLAG:
        h = subprocess.run([framewalk, "record", "--help"], capture_output=True, text=True)
        _MODE_FLAG[framewalk] = ["--mode", "wall"] if "--mode" in h.stdout + h.stderr else []
    return _MODE_FLAG[framewalk]


def framewalk_cmd(framewalk, pid, rate, seconds, out_txt, out_collapsed=None):
    cmd = [framewalk, "record", "-p", str(pid), "-d", str(seconds), "-r", str(rate)] + \
        framewalk_mode_args(framewalk) + ["-o", out_txt, "-q"]
    if out_collapsed:
        cmd[-1:-1] = ["-o", out_collapsed]
    return cmd


def peer_cmd(pid, rate, seconds, out_in_root):
    # -a: every thread, like framewalk; --collapsed: the aggregating collector
    # closest to framewalk's own profile (the default pstats aggregates too).
    return ["chroot", ROOT, PY, "-m", "profiling.sampling", "attach", "-a", "--mode", "wall",
            "-r", str(rate), "-d", str(int(round(seconds))), "--collapsed", "-o", out_in_root,
            str(pid)]


_FW_SAMPLES = re.compile(r"^Samples:\s+(\d+) stacks from (\d+) of (\d+) requested ticks"
                         r".*?([\d.]+) ticks/s achieved", re.M)
_FW_ERRORS = re.compile(r"^Errors:\s+(\d+) dropped samples \(([\d.]+)%\)", re.M)
_FW_TICK = re.compile(r"^Per tick:\s+mean ([\d.]+) us, max ([\d.]+) us; profiler CPU ([\d.]+) s", re.M)
_FW_DUR = re.compile(r"^Duration:\s+([\d.]+) s", re.M)


def parse_framewalk(text):
    r = {}
    m = _FW_SAMPLES.search(text)
    if m:
        r.update(stacks=int(m.group(1)), ticks=int(m.group(2)),
                 ticks_requested=int(m.group(3)), rate=float(m.group(4)))
    m = _FW_ERRORS.search(text)
    if m:
        r.update(errors=int(m.group(1)), error_pct=float(m.group(2)))
    m = _FW_TICK.search(text)
    if m:
        r.update(tick_mean_us=float(m.group(1)), tick_max_us=float(m.group(2)),
                 self_cpu_s=float(m.group(3)))
    m = _FW_DUR.search(text)
    if m:
        r["duration_s"] = float(m.group(1))
    return r


_FW_ANY_SAMPLES = re.compile(r"^Samples:\s+(\d+) ", re.M)
_FW_CPU = re.compile(r"profiler CPU ([\d.]+) s|^Profiler:\s+([\d.]+) s CPU", re.M)
_FW_BPF = re.compile(r"^BPF:\s+program mean ([\d.]+) us per run over (\d+) runs", re.M)


def report_counts(text):
    """(samples, framewalk's CPU seconds in the capture) from a text report,
    whatever the backend (bpf's header counts stacks, not ticks, and says its
    CPU on a "Profiler:" line)."""
    m = _FW_ANY_SAMPLES.search(text)
    c = _FW_CPU.search(text)
    return (int(m.group(1)) if m else 0,
            float(c.group(1) or c.group(2)) if c else 0.0)


def bpf_runs(text):
    """The report's "BPF:" line as a match: (mean us per run, runs), or None."""
    return _FW_BPF.search(text)


_PEER_CAPT = re.compile(r"Captured ([\d,]+) samples? in ([\d.,]+) seconds")
_PEER_RATE = re.compile(r"Sample rate: ([\d.,]+) samples/sec")
_PEER_ERR = re.compile(r"Error rate: ([\d.,]+)")


def _num(s):
    return float(s.replace(",", ""))


def parse_peer(text):
    r = {}
    m = _PEER_CAPT.search(text)
    if m:
        r.update(ticks=int(_num(m.group(1))), duration_s=_num(m.group(2)))
    m = _PEER_RATE.search(text)
    if m:
        r["rate"] = _num(m.group(1))
    m = _PEER_ERR.search(text)
    if m:
        r["error_pct"] = _num(m.group(1))
        if "ticks" in r:
            r["errors"] = int(round(r["ticks"] * r["error_pct"] / 100.0))
    return r


def child_pid(pid, timeout=5.0):
    """The first child of PID (waits for it to appear), or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            return None
        time.sleep(0.005)
    return None


def run_profiler(kind, cmd, out_path, poll_every=0.25, stop_after=None, on_poll=None):
    """Run a profiler to completion (or SIGINT it after stop_after seconds),
    polling its /proc stat/status. Returns dict with wall, CPU (getrusage),
    peak RSS and the poll series [(t, cpu_s, rss_kb, hwm_kb)].

    The profiler runs under GNU time (/usr/bin/time -f %M): a child forked
    from this Python process inherits its ~13 MB high-water mark in
    ru_maxrss (Linux keeps the pre-exec peak), which would swamp a small
    profiler's real peak; time's own footprint is ~2 MB."""
    t0 = time.monotonic()
    maxrss_file = out_path + ".maxrss"
    wrapped = ["/usr/bin/time", "-f", "%M", "-o", maxrss_file] + cmd
    with open(out_path, "w") as out:
        p = subprocess.Popen(wrapped, stdout=out, stderr=subprocess.STDOUT)
    prof = child_pid(p.pid)
    polls = []
    status = rusage = None
    try:
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                status, rusage = st, ru
                break
            now = time.monotonic() - t0
            cpu = proc_cpu_seconds(prof) if prof else None
            rss, hwm = proc_rss_kb(prof) if prof else (None, None)
            if cpu is not None:
                polls.append((round(now, 3), cpu, rss, hwm))
                if on_poll:
                    on_poll(polls[-1])
            if stop_after is not None and now >= stop_after and prof:
                os.kill(prof, signal.SIGINT)
                stop_after = None
            time.sleep(poll_every)
    finally:
        if status is None:
            if prof:
                try:
                    os.kill(prof, signal.SIGKILL)
                except OSError:
                    pass
            p.kill()
            _, status, rusage = os.wait4(p.pid, 0)
        p.returncode = status
    wall = time.monotonic() - t0
    maxrss = None
    try:
        with open(maxrss_file) as f:
            maxrss = int(f.read().split()[-1])
        os.unlink(maxrss_file)
    except (OSError, ValueError, IndexError):
        pass
    code = os.waitstatus_to_exitcode(status)
    return {
        "kind": kind, "cmd": cmd, "wall_s": round(wall, 3), "exit": code,
        "cpu_user_s": rusage.ru_utime, "cpu_sys_s": rusage.ru_stime,
        "cpu_total_s": rusage.ru_utime + rusage.ru_stime,
        "maxrss_kb": maxrss, "polls": polls,
    }


def steady_cpu_util(polls, t_from, t_to):
    """CPU seconds per wall second between the first poll >= t_from and the
    last poll <= t_to (None if fewer than two polls fall there)."""
    sel = [p for p in polls if t_from <= p[0] <= t_to]
    if len(sel) < 2 or sel[-1][0] <= sel[0][0]:
        return None
    return (sel[-1][1] - sel[0][1]) / (sel[-1][0] - sel[0][0])


def other_cpu_load(t0_stat, t1_stat, own_cpu_s):
    """Busy CPUs (out of os.cpu_count()) used by everything else on the
    machine between two read_stat() snapshots, given the CPU seconds our own
    processes (target + profiler) used meanwhile. The machine is shared:
    this shows when another job competed for the two cores."""
    (b0, w0), (b1, w1) = t0_stat, t1_stat
    if w1 <= w0:
        return None
    return max(0.0, ((b1 - b0) - own_cpu_s) / (w1 - w0))


def read_stat():
    """(busy CPU seconds over all CPUs, monotonic time) from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return ((sum(v[:8]) - idle) / CLK_TCK, time.monotonic())


def wait_quiet(own_pids, max_wait, threshold=0.25):
    """Wait (up to max_wait seconds) until the rest of the machine uses less
    than `threshold` CPUs over a 1 s window, not counting own_pids. Returns
    the last measured load. The machine is shared with other jobs; this
    keeps captures from landing on a busy moment when it can."""
    deadline = time.monotonic() + max_wait
    load = None
    while True:
        own0 = sum(proc_cpu_seconds(p) or 0 for p in own_pids)
        s0 = read_stat()
        time.sleep(1.0)
        own1 = sum(proc_cpu_seconds(p) or 0 for p in own_pids)
        load = other_cpu_load(s0, read_stat(), own1 - own0)
        if load is not None and load < threshold:
            return load
        if time.monotonic() >= deadline:
            log("machine busy: %.2f CPUs used by other jobs; measuring anyway" % load)
            return load
        time.sleep(2.0)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")


def machine_info(framewalk):
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.strip()
        except Exception:
            return ""
    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "kernel": os.uname().release,
        "cpus": os.cpu_count(),
        "cpu_model": model.strip(),
        "mem_total": sh("grep MemTotal /proc/meminfo | awk '{print $2\" kB\"}'"),
        "framewalk": os.environ.get("FWBENCH_FRAMEWALK_SOURCE") or os.path.abspath(framewalk),
        "framewalk_sha256": sh("sha256sum %s | cut -c1-16" % framewalk),
        "framewalk_built": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(framewalk).st_mtime)),
        "framewalk_mode_args": framewalk_mode_args(framewalk),
        "framewalk_rev": sh("git -C %s rev-parse --short HEAD" % REPO) +
        (" (+ uncommitted changes)" if sh("git -C %s status --porcelain -uno" % REPO) else ""),
        "python_target": sh("chroot %s %s -VV" % (ROOT, PY)),
    }


def fmt(x, spec="{:.2f}", none="-"):
    return none if x is None else spec.format(x)
