"""Helpers of the peers' suites (issue 21): py-spy's and CPython's target
scripts (pyspy/, cpython/, under their licences: LICENSE-pyspy, LICENSE-PSF)
and framewalk's own Austin-like ones (own/), run under every interpreter of
tests/functional (its conftest.py parametrizes `interp`; fwtest.py is
importable from here).

A copied script starts with a notice whose lines begin with '#| '; the
peers' line numbers are shifted by it: PeerProcess.line() maps them.
Targets run in their own session and the whole group is killed at teardown (several spawn
children). They are synchronised the way the peers do it: CPython's scripts
connect to a socket the test listens on (the port is their argv[1]) and send
ready lines; py-spy's are polled (py-spy retries until its reader attaches)
with `framewalk dump` until the stack wanted is there, within a deadline.
"""
import os
import select
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from fwtest import CHROOT_PATH, parse_dump, run_fw

PEERS = Path(__file__).resolve().parent
NOTICE_PREFIX = "#| "

# A dump costs ~0.1 s, a capture 1-3 s: dump cases run on every interpreter,
# captures on these (a pyenv build, the newest in its root; the dumps read
# Python's structures the same way on every version), so that the peers'
# suites take about two minutes in all.
RECORDED = ("py3.12", "sid-py3.15")
# following children: fork (3.12) and 3.14's default forkserver
CHILDREN = ("py3.12", "sid-py3.15")
# --async: its refusal (3.10), 3.13's tasks, the newest
ASYNC = ("py3.10", "py3.13", "sid-py3.15")


def notice_lines(host_path):
    """How many lines the licence notice adds at the top of a copied script."""
    n = 0
    with open(str(host_path), encoding="utf-8") as f:
        for line in f:
            if not line.startswith(NOTICE_PREFIX):
                break
            n += 1
    return n


class PeerProcess:
    """A peer's target script running under an interpreter."""

    def __init__(self, interp, rel, args, proc, host_dir, target_dir, cleanup):
        self.interp = interp
        self.rel = rel
        self.args = args
        self.proc = proc
        self.pid = proc.pid
        self.host_dir = host_dir          # the copy of tests/functional/peers the test reads
        self.target_dir = target_dir      # the same directory as the target sees it
        self._cleanup = cleanup

    def target_path(self, rel=None):
        """A script's path as the interpreter has it (co_filename)."""
        return self.target_dir.rstrip("/") + "/" + (rel or self.rel)

    def line(self, n, rel=None):
        """The line of the copied script that is line N of the peer's original."""
        return n + notice_lines(self.host_dir / (rel or self.rel))

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        # the whole group: a leader that is gone may have left children
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdout, self.proc.stderr):
            if f:
                f.close()
        if self._cleanup:
            shutil.rmtree(self._cleanup, ignore_errors=True)
            self._cleanup = None


def stage(interp):
    """(host_dir, target_dir, cleanup) of the peers' scripts for INTERP: the
    tree itself for a host interpreter, a copy inside the root for a chroot."""
    interp.check()
    if interp.kind == "host":
        return PEERS, str(PEERS), None
    unique = "peers-%s-%s" % (interp.id, uuid.uuid4().hex[:12])
    host_dir = Path(str(interp.root)) / "tmp" / "fw-tests" / unique
    shutil.copytree(str(PEERS), str(host_dir),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "test_*.py", "conftest.py", "peertest.py"))
    return host_dir, "/tmp/fw-tests/" + unique, host_dir


def python_on_path(interp, host_dir, target_dir):
    """A PATH whose `python` is INTERP (py-spy's shell script runs `python`)."""
    bindir = host_dir / ("bin-" + uuid.uuid4().hex[:8])
    bindir.mkdir()
    os.symlink(str(interp.exe), str(bindir / "python"))
    inside = target_dir + "/" + bindir.name
    base = CHROOT_PATH if interp.kind == "chroot" else os.environ.get("PATH", CHROOT_PATH)
    return inside + ":" + base, bindir


def start_peer(interp, rel, *args, argv=None, env_path=None):
    """Start peers/REL under INTERP (or ARGV, a function of the target
    directory returning the command, for a non-Python root) in a new
    session. stdout and stderr are pipes."""
    host_dir, target_dir, cleanup = stage(interp)
    if argv is None:
        cmd = interp.argv("-B", target_dir + "/" + rel, *[str(a) for a in args])
    else:
        cmd = argv(target_dir)
    env = interp.env()
    if env_path:
        env["PATH"] = env_path(host_dir, target_dir)
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except BaseException:
        if cleanup:
            shutil.rmtree(str(cleanup), ignore_errors=True)
        raise
    return PeerProcess(interp, rel, args, proc, host_dir, target_dir, cleanup)


# --------------------------------------------------------------------------
# Synchronisation
# --------------------------------------------------------------------------

class Listener:
    """CPython's way: the target connects to a port and sends ready lines."""

    def __init__(self, backlog=5):
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("localhost", 0))
        self.server.listen(backlog)
        self.port = self.server.getsockname()[1]
        self.conns = []
        self.data = b""

    def wait_for(self, target, signals, timeout=30.0):
        """Accept connections and read until every one of SIGNALS (bytes) was
        received; fail with the target's stderr if it dies first."""
        return self.wait_until([target], lambda data: all(s in data for s in signals),
                               timeout, what=repr(signals))

    def wait_until(self, targets, cond, timeout=30.0, what="the ready lines"):
        """Accept connections and read until cond(all data received) holds."""
        deadline = time.monotonic() + timeout
        while not cond(self.data):
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("targets did not send %s within %.0f s (got %r)"
                            % (what, timeout, self.data))
            for target in targets:
                if not target.alive():
                    err = target.proc.stderr.read().decode("utf-8", "replace")
                    pytest.fail("target exited (%s) before sending %s: %s"
                                % (target.proc.returncode, what, err[-3000:]))
            r, _, _ = select.select([self.server] + self.conns, [], [], min(left, 0.2))
            for s in r:
                if s is self.server:
                    conn, _ = self.server.accept()
                    self.conns.append(conn)
                else:
                    chunk = s.recv(4096)
                    if not chunk:
                        self.conns.remove(s)
                        s.close()
                    self.data += chunk
        return self.data

    def close(self):
        for s in self.conns + [self.server]:
            s.close()


def read_lines(target, prefixes, timeout=30.0):
    """Read the target's stdout until a line starting with each of PREFIXES
    was seen; return {prefix: rest of its line}."""
    deadline = time.monotonic() + timeout
    found = {}
    buf = b""
    fd = target.proc.stdout.fileno()
    while len(found) < len(prefixes):
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail("target did not print %s within %.0f s (got %r)"
                        % (prefixes, timeout, buf))
        r, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not r:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            err = target.proc.stderr.read().decode("utf-8", "replace")
            pytest.fail("target exited before printing %s: %s" % (prefixes, err[-3000:]))
        buf += chunk
        for line in buf.decode("utf-8", "replace").splitlines():
            for p in prefixes:
                if line.startswith(p):
                    found[p] = line[len(p):].strip()
    return found


def descendants(pid):
    """Every living descendant of PID (multiprocessing's forkserver, 3.14's
    default, makes workers grandchildren)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for tid in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (p, tid)) as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                kids = []
            out += kids
            todo += kids
    return out


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def try_dump(pid):
    """`framewalk dump -p PID` parsed (parse_dump's form: (head, {tid: (name,
    state, frames outermost first)})), or None while the target is starting
    (no Python yet, no threads yet); and the run's Result."""
    r = run_fw("dump", "-p", pid, timeout=30)
    if r.returncode != 0 or "(the interpreter has no threads" in r.stdout:
        return None, r
    # a thread without Python frames (yet) has an empty stack
    text = "\n".join(l for l in r.stdout.splitlines() if l != "  (no Python frames)")
    try:
        return parse_dump(text), r
    except AssertionError as e:
        # A thread that is starting can be listed twice (seen on 3.8: the
        # main thread's tid on both thread states); waiting goes on, and
        # test_dump_subprocesses_no_duplication checks a settled dump.
        if "listed twice" not in str(e):
            raise
        return None, r


def dump_until(target, cond, timeout=20.0):
    """Dump TARGET until cond(head, threads) holds; return (head, threads).
    The peers retry the same way while a target starts."""
    deadline = time.monotonic() + timeout
    while True:
        parsed, last = try_dump(target.pid)
        if parsed and cond(*parsed):
            return parsed
        if time.monotonic() >= deadline:
            pytest.fail("the dump never showed what was waited for within %.0f s; last: %r"
                        % (timeout, last))
        if not target.alive():
            pytest.fail("target exited (%s): %s" % (
                target.proc.returncode,
                target.proc.stderr.read().decode("utf-8", "replace")[-3000:]))
        time.sleep(0.05)


def has_frame(threads, name, file=None, line=None):
    """Some thread has a frame NAME (in FILE, at LINE when given)."""
    return any(f[0] == name and (file is None or f[1] == file) and (line is None or f[2] == line)
               for _, _, frames in threads.values() for f in frames)


def record(args, out, timeout=90):
    """framewalk record ARGS -q -o OUT; the result (the caller checks it)."""
    return run_fw("record", "-q", *[str(a) for a in args], "-o", out, timeout=timeout)
