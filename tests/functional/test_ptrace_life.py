"""The ptrace backend (record --backend ptrace, dump) against threads whose
life ends or stalls while framewalk may hold them stopped. Each test plays
the target (tests/workloads/lifecycle.py) and asserts a bound:

- the process exits (exit_group) or a thread execs while another thread is
  stopped: the parent gets the exit status, the exec'd image runs, within
  1 s (a killed thread framewalk held is reaped, not left a traced zombie);
- SIGTSTP (Ctrl-Z) to framewalk mid-capture: within 1 s no target thread is
  left stopped while framewalk itself is;
- a thread in uninterruptible sleep (a vfork-style posix_spawn waiting on a
  FIFO) cannot be stopped: dump ends anyway, record ends within 1 s of
  SIGINT, and once the thread wakes it is not left stopped.
"""
import os
import select
import signal
import subprocess
import tempfile
import time

import pytest

from fwtest import WORKLOADS, framewalk_path, run_fw

ITERATIONS = 10


def thread_states(pid):
    states = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except FileNotFoundError:
        return states
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                states[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return states


def tracer_of(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


def proc_state(pid):
    return thread_states(pid).get(pid)


def wait_until(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.005)
    pytest.fail("%s: not within %.1f s" % (what, timeout))


def read_line(proc, prefix, timeout):
    """The next stdout line of proc starting with prefix (bytes read one at a
    time, so nothing after it is swallowed)."""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    line = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail("no %r line from the workload within %.1f s" % (prefix, timeout))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        c = os.read(fd, 1)
        if not c:
            pytest.fail("the workload closed its stdout before a %r line" % prefix)
        if c != b"\n":
            line += c
            continue
        if line.startswith(prefix.encode()):
            return line.decode()
        line = b""


class Run:
    """A workload and, later, a framewalk record against it; both killed at the end."""

    def __init__(self, interp, *args):
        self.w = subprocess.Popen(interp.argv("-B", str(WORKLOADS / "lifecycle.py"), *args),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=interp.env())
        self.fw = None
        self.out = None
        read_line(self.w, "READY", 30)    # nothing after it is swallowed

    def record(self, *args, rate="1k", native=True):
        fd, self.out = tempfile.mkstemp(prefix="fw-life-", suffix=".collapsed")
        os.close(fd)
        argv = [framewalk_path(), "record", "--backend", "ptrace", "--mode", "wall",
                "-r", rate, "-q", "-p", str(self.w.pid), "-o", self.out]
        if native:
            argv.append("--native")
        # its own process group in this session: job-control signals apply to it
        self.fw = subprocess.Popen(argv + list(args), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   process_group=0)

    def wait_sampling(self, tids=None):
        """Until framewalk has been seen holding a thread stopped ('t')."""
        def seen():
            if self.fw.poll() is not None:
                pytest.fail("framewalk ended early: %s" % self.fw.stderr.read().decode())
            st = thread_states(self.w.pid)
            return any(s == "t" for t, s in st.items() if tids is None or t in tids)
        wait_until(seen, 15, "framewalk stopping a thread of %d" % self.w.pid)

    def fw_end(self, timeout):
        """framewalk's exit code and how long it took to end, or fail."""
        t0 = time.monotonic()
        try:
            rc = self.fw.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fw.kill()
            self.fw.wait()
            pytest.fail("framewalk did not end within %.1f s: %s"
                        % (timeout, self.fw.stderr.read().decode()[-2000:]))
        return rc, time.monotonic() - t0

    def close(self):
        for p in (self.fw, self.w):
            if p and p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        for p in (self.fw, self.w):
            if p:
                for f in (p.stdin, p.stdout, p.stderr):
                    if f:
                        f.close()
        if self.out and os.path.exists(self.out):
            os.unlink(self.out)


@pytest.fixture
def runs():
    made = []

    def make(interp, *args):
        r = Run(interp, *args)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


@pytest.mark.interps("py3.12")
def test_exit_while_sampled_reaches_the_parent(interp, runs):
    """exit_group while framewalk samples every thread at 1 kHz: the parent's
    wait returns within 1 s of the exit, every time, while framewalk goes on
    sampling a second target (so its own end releases nothing); SIGINT then
    ends it cleanly."""
    delays = []
    other = runs(interp, "spin")
    for _ in range(ITERATIONS):
        r = runs(interp, "exit")
        r.record("-d", "30", "-p", str(other.w.pid))
        r.wait_sampling()
        r.w.stdin.write(b"go\n")
        r.w.stdin.flush()
        exiting = float(read_line(r.w, "EXITING", 10).split()[1])
        try:
            status = r.w.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("the parent got no exit status 15 s after the exit (%s)"
                        % thread_states(r.w.pid))
        delays.append(time.monotonic() - exiting)
        assert status == 7, status
        assert r.fw.poll() is None, "framewalk ended (%s) instead of sampling on: %s" % (
            r.fw.returncode, r.fw.stderr.read().decode()[-2000:])
        r.fw.send_signal(signal.SIGINT)
        rc, took = r.fw_end(5)
        assert rc == 0, (rc, r.fw.stderr.read().decode()[-2000:])
        r.close()
    print("exit delays", ["%.3f" % d for d in delays])
    assert max(delays) < 1.0, "exit status seen after %s s" % ["%.2f" % d for d in delays]


@pytest.mark.interps("py3.12")
def test_exec_while_sampled_runs_the_new_image(interp, runs):
    """A non-main thread execs while framewalk samples every thread at 1 kHz:
    the exec'd image starts within 1 s (its execve never waits in D for a
    thread framewalk held), and framewalk ends cleanly (exit 0: an attach
    refused for a moment during the execve is not a lost target)."""
    delays = []
    for _ in range(ITERATIONS):
        r = runs(interp, "exec")
        r.record("-d", "30")
        r.wait_sampling()
        r.w.stdin.write(b"go\n")
        r.w.stdin.flush()
        execing = float(read_line(r.w, "EXECING", 10).split()[1])
        deadline = time.monotonic() + 15
        fd = r.w.stdout.fileno()
        got = None
        while got is None and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                got = read_line(r.w, "EXECED", 1)
        if got is None:
            pytest.fail("the exec'd image did not start within 15 s; states %s"
                        % thread_states(r.w.pid))
        delays.append(float(got.split()[1]) - execing)
        # it samples the new image, or (the exec seen as an exit) has ended: cleanly
        if r.fw.poll() is None:
            r.fw.send_signal(signal.SIGINT)
        rc, took = r.fw_end(5)
        assert rc == 0, (rc, r.fw.stderr.read().decode()[-2000:])
        assert took < 1.0, took
        r.close()
    # a new interpreter's start on a loaded machine is part of it
    print("exec delays", ["%.3f" % d for d in delays])
    assert max(delays) < 1.0, "exec'd image started after %s s" % ["%.2f" % d for d in delays]


@pytest.mark.interps("py3.12")
def test_sigtstp_leaves_no_target_thread_stopped(interp, runs):
    """Ctrl-Z (SIGTSTP) to framewalk during record --backend ptrace at 1 kHz,
    ten times: each time, within 1 s, framewalk is stopped and no thread of
    the target is (t or T); after SIGCONT it samples again; SIGINT ends it."""
    r = runs(interp, "spin")
    r.record()
    waits = []
    for _ in range(10):
        r.wait_sampling()
        r.fw.send_signal(signal.SIGTSTP)
        wait_until(lambda: proc_state(r.fw.pid) == "T", 2, "framewalk stopping on SIGTSTP")
        t0 = time.monotonic()
        held = None
        while time.monotonic() - t0 < 1.0:
            held = {t: s for t, s in thread_states(r.w.pid).items() if s in "tT"}
            if not held:
                break
            time.sleep(0.01)
        waits.append(time.monotonic() - t0)
        assert not held, "framewalk stopped, target threads still stopped after 1 s: %s" % held
        r.fw.send_signal(signal.SIGCONT)
    r.fw.send_signal(signal.SIGINT)
    rc, took = r.fw_end(5)
    assert rc == 0, (rc, r.fw.stderr.read().decode()[-2000:])


@pytest.fixture
def fifo():
    d = tempfile.mkdtemp(prefix="fw-life-")
    path = os.path.join(d, "fifo")
    os.mkfifo(path)
    yield path
    try:   # let a still-waiting spawner go
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
    os.unlink(path)
    os.rmdir(d)


def start_spawnwait(interp, runs, fifo):
    r = runs(interp, "spawnwait", fifo)
    tid = int(read_line(r.w, "SPAWNER", 10).split()[1])
    wait_until(lambda: thread_states(r.w.pid).get(tid) == "D", 10,
               "the spawner thread in uninterruptible sleep")
    return r, tid


@pytest.mark.interps("py3.12")
def test_dump_skips_a_thread_in_uninterruptible_sleep(interp, runs, fifo):
    """A thread that cannot be stopped (D) delays dump by the stop bound, not
    forever: dump and dump --native end within 3 s, the other threads shown."""
    r, tid = start_spawnwait(interp, runs, fifo)
    for native in ([], ["--native"]):
        res = run_fw("dump", *native, "-p", r.w.pid, timeout=20)
        assert res.returncode == 0, res
        assert res.elapsed < 3.0, res
        assert "Thread %d " % r.w.pid in res.stdout, res
    assert thread_states(r.w.pid).get(tid) == "D"


@pytest.mark.interps("py3.12")
def test_record_ends_on_sigint_with_a_thread_in_uninterruptible_sleep(interp, runs, fifo):
    """record --mode wall --native at 20 Hz with a thread in D: SIGINT ends it
    within 1 s with its output written."""
    r, tid = start_spawnwait(interp, runs, fifo)
    r.record(rate="20")
    wait_until(lambda: tracer_of(r.w.pid, tid) == r.fw.pid, 15, "framewalk seizing the spawner")
    r.fw.send_signal(signal.SIGINT)
    rc, took = r.fw_end(10)
    assert rc == 0, (rc, r.fw.stderr.read().decode()[-2000:])
    assert took < 1.0, took
    assert os.path.getsize(r.out) > 0


@pytest.mark.interps("py3.12")
def test_thread_waking_from_uninterruptible_sleep_is_not_left_stopped(interp, runs, fifo):
    """The thread framewalk could not stop wakes (the FIFO is opened) while
    record goes on: it stops for framewalk's pending interrupt and is let go
    at the next tick: within 1 s it is asleep (S) and stays so."""
    r, tid = start_spawnwait(interp, runs, fifo)
    r.record(rate="20")
    wait_until(lambda: tracer_of(r.w.pid, tid) == r.fw.pid, 15, "framewalk seizing the spawner")
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    t0 = time.monotonic()
    calm = 0
    seen = []
    while calm < 20:
        if time.monotonic() - t0 > 1.0:
            pytest.fail("spawner thread %d not let go within 1 s: states %s" % (tid, seen[-30:]))
        s = thread_states(r.w.pid).get(tid)
        seen.append(s)
        calm = calm + 1 if s == "S" else 0
        time.sleep(0.005)
    assert r.fw.poll() is None, r.fw.stderr.read().decode()
    r.fw.send_signal(signal.SIGINT)
    rc, took = r.fw_end(5)
    assert rc == 0, rc
