"""framewalk top against a live target: in tmux (a real terminal) the
screen shows the hot function within a few refreshes, the keys sort,
filter by thread and pause, and q quits cleanly with exit 0; with stdout
not a terminal it prints one plain table per refresh; it ends by itself
when the target exits. The target runs top_hot_fn in two threads and
sleeps in a third. With --async (an asyncio service) the tasks are rows.
"""
import os
import stat
import subprocess
import uuid

import pytest

from fwtest import INTERP_BY_ID, start_workload, wait_until
from viewtest import framewalk, fw, python312, write_script

WORKLOAD = r'''
import sys, threading, time
from time import perf_counter

def top_hot_fn(d):
    end = perf_counter() + d
    while perf_counter() < end:
        for _ in range(250):
            pass

def top_idle_thread():
    while True:
        time.sleep(0.05)

def top_worker():
    while True:
        top_hot_fn(0.01)

threading.Thread(target=top_idle_thread, daemon=True).start()
threading.Thread(target=top_worker, daemon=True).start()
deadline = time.monotonic() + float(sys.argv[1])
import os
try:
    os.nice(-10)   # as root: a loaded machine preempts us less (see the docstring)
except OSError:
    pass
print("READY", flush=True)
while time.monotonic() < deadline:
    top_hot_fn(0.01)
'''


@pytest.fixture
def target(tmp_path):
    procs = []

    def start(seconds=60):
        script = write_script(tmp_path, "topload.py", WORKLOAD)
        p = subprocess.Popen([python312(), str(script), str(seconds)], stdout=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
        assert p.stdout.readline().strip() == "READY"
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


class Tmux:
    """A private tmux server (own socket) holding one window."""

    def __init__(self):
        self.sock = "fwtest-%s" % uuid.uuid4().hex[:10]

    def run(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.sock] + list(args), capture_output=True,
                              text=True, check=check, timeout=10)

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "fw").stdout

    def wait_for(self, pred, timeout=10.0):
        """The screen, once pred(screen) holds."""
        def matching():
            text = self.screen()
            return text if pred(text) else None
        return wait_until(matching, timeout, "the screen to match; last screen:",
                          detail=self.screen)

    def kill(self):
        self.run("kill-server", check=False)
        for suffix in ("", ".lock"):
            try:
                os.unlink("/tmp/tmux-%d/%s%s" % (os.getuid(), self.sock, suffix))
            except OSError:
                pass


@pytest.fixture
def tmux():
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        pytest.fail("/dev/null is not a character device (something replaced it), so tmux "
                    "cannot start its server; restore it: mknod -m 666 /dev/null.new c 1 3 && "
                    "mv /dev/null.new /dev/null")
    t = Tmux()
    yield t
    t.kill()


def test_top_in_tmux(target, tmux, tmp_path):
    p = target()
    rc = tmp_path / "top.rc"
    cmd = "%s top -p %d; echo $? > %s; sleep 30" % (framewalk(), p.pid, rc)
    tmux.run("new-session", "-d", "-s", "fw", "-x", "160", "-y", "40", cmd)
    # Within a few refreshes the hot function tops the table. Its loop reads
    # the clock once per 250 steps (a clock read per step put the vDSO's self
    # time above it in a 1 s table of 80 samples once) and counts over small
    # ints, which the interpreter does not allocate (range(2000) put
    # pymalloc_alloc's self time above it, 18% to 16%, in one CI table).
    def rows(screen):
        return [l for l in screen.splitlines() if "(" in l and "%" not in l and l.startswith(" ")]
    screen = tmux.wait_for(lambda s: "%Self" in s and rows(s) and "top_hot_fn" in rows(s)[0],
                           timeout=8)
    assert "framewalk top: PID %d" % p.pid in screen
    assert "sort: self" in screen and "thread: all" in screen
    # Keys: sort by total, by name, step to a thread, back to all, pause.
    tmux.run("send-keys", "-t", "fw", "t")
    tmux.wait_for(lambda s: "sort: total" in s)
    tmux.run("send-keys", "-t", "fw", "n")
    tmux.wait_for(lambda s: "sort: name" in s)
    tmux.run("send-keys", "-t", "fw", "]")
    screen = tmux.wait_for(lambda s: "thread: all" not in s and "thread: " in s)
    tmux.run("send-keys", "-t", "fw", "a")
    tmux.wait_for(lambda s: "thread: all" in s)
    tmux.run("send-keys", "-t", "fw", "Space")
    tmux.wait_for(lambda s: "[PAUSED]" in s)
    tmux.run("send-keys", "-t", "fw", "p")
    tmux.wait_for(lambda s: "[PAUSED]" not in s)
    # q quits cleanly: exit status 0 and the terminal given back.
    tmux.run("send-keys", "-t", "fw", "q")
    # the shell's "echo $? > rc" has run once rc holds a whole line
    wait_until(lambda: rc.exists() and rc.read_text().endswith("\n"), 5,
               "top to quit on q; screen:", detail=tmux.screen)
    assert rc.read_text().strip() == "0"
    assert p.poll() is None, "the target must keep running"


def test_top_plain_output(target):
    p = target()
    r = fw("top", "-p", p.pid, "-d", "2.3", "-n", "5", "--python-only", timeout=30)
    tables = [t for t in r.stdout.split("\n\n") if t.strip()]
    assert len(tables) >= 2, r.stdout
    for t in tables:
        lines = t.splitlines()
        assert lines[0].startswith("framewalk top: PID %d" % p.pid)
        assert lines[2].split() == ["%Self", "%Total", "Self(s)", "Total(s)", "Function"]
        assert len(lines) <= 3 + 5
    last = tables[-1].splitlines()
    first_row = last[3].split()
    assert first_row[4] == "top_hot_fn", last
    # Two threads spin in top_hot_fn, a third sleeps: top shows CPU time, so
    # the sleeper does not count and top_hot_fn has (nearly) all of it.
    assert float(first_row[0]) >= 80, last
    assert "\x1b" not in r.stdout


def test_top_whole_stacks_by_default(target):
    """Without a view option top shows whole stacks (bpf here): top_hot_fn has
    (nearly) all the CPU time in total, and the clock reads it makes, native
    code under it, have self time of their own."""
    p = target()
    r = fw("top", "-p", p.pid, "-d", "2.3", "-n", "60", timeout=30)
    assert "whole stacks" in r.stderr, r.stderr
    last = [t for t in r.stdout.split("\n\n") if t.strip()][-1].splitlines()
    rows = {l.split()[4]: l.split() for l in last[3:] if len(l.split()) >= 5}
    assert "top_hot_fn" in rows and float(rows["top_hot_fn"][1]) >= 80, last
    python = {"top_hot_fn", "top_worker", "top_idle_thread", "<module>", "run", "_bootstrap",
              "_bootstrap_inner", "Thread.run", "Thread._bootstrap", "Thread._bootstrap_inner"}
    native_self = sum(float(v[0]) for k, v in rows.items() if k not in python)
    assert native_self > 0, last


def test_top_async_tasks_in_wall_mode():
    """top --async --mode wall on an asyncio service (tests/workloads/
    asyncio_tasks.py, 3.12): the tasks on the CPU are rows with their time,
    and the waiting ones too, each [await] leaf a row with the waiting
    tasks' share, every task at every tick."""
    w = start_workload(INTERP_BY_ID["py3.12"], "asyncio_tasks.py")
    try:
        r = fw("top", "-p", w.pid, "-d", "2.3", "-n", "200", "--async", "--mode", "wall",
               "--python-only", timeout=30)
    finally:
        w.stop()
    last = [t for t in r.stdout.split("\n\n") if t.strip()][-1].splitlines()
    assert last[0].endswith(", wall mode, asyncio tasks"), last[0]
    rows = {}
    for line in last[3:]:
        cols = line.split(None, 4)
        if len(cols) == 5:
            rows[cols[4]] = [float(c) for c in cols[:4]]
    # Over the whole capture (the seconds columns; the shares are of the
    # last interval, here the last 0.3 s): the CPU-bound tasks share the
    # loop thread's running time, the parked ones are sampled at every tick
    # like waiting threads.
    for task in ("[task] cpu-1", "[task] cpu-2", "[task] tg-child", "[task] sleepy",
                 "[task] sock-reader", "[task] queue-eater"):
        assert task in rows and rows[task][3] > 0, (task, last)
    for leaf in ("[await] sleep", "[await] socket read", "[await] Queue.get",
                 "[await] TaskGroup"):
        assert leaf in rows and rows[leaf][2] > 0, (leaf, last)
    # Every task counts at every tick, running or waiting: a busy task (on
    # the CPU a third of the time, waiting its turn at sleep(0) otherwise)
    # as much as a parked one, its waits under "[await] Future".
    assert rows["[await] Future"][2] > 0, last
    for task in ("[task] cpu-1", "[task] cpu-2", "[task] tg-child"):
        assert abs(rows[task][3] - rows["[task] sleepy"][3]) <= 0.15 * rows["[task] sleepy"][3], \
            (task, last)


def test_top_async_refused_before_311():
    w = start_workload(INTERP_BY_ID["py3.10"], "asyncio_tasks.py")
    try:
        r = fw("top", "-p", w.pid, "-d", "1", "--async", check=False, timeout=30)
    finally:
        w.stop()
    assert r.returncode == 5, r
    assert "--async is not supported on Python 3.10" in r.stderr, r.stderr
    assert "hint: watch it without --async" in r.stderr, r.stderr


def test_top_ends_with_the_target(target):
    p = target(seconds=2.5)
    # no -d: top must end when the target does (the 30 s limit fails it otherwise)
    r = fw("top", "-p", p.pid, timeout=30)
    assert "exited" in r.stderr
    assert "top_hot_fn" in r.stdout


def test_top_usage_errors():
    assert fw("top", check=False).returncode == 2
    assert fw("top", "-p", "abc", check=False).returncode == 2
    assert fw("top", "-p", "1", "extra", check=False).returncode == 2
    r = fw("top", "-p", str(2 ** 22 + 12345), check=False)
    assert r.returncode == 3 and "no such process" in r.stderr
    assert fw("top", "--help").stdout.startswith("usage: framewalk top")
    assert os.path.exists(framewalk())
