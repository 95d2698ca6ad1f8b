"""Behaviours Austin's functional suite checks (P403n1x87/austin
test/functional: test_cli.py, test_fork.py), as framewalk's own tests with
framewalk's own targets (own/): Austin is GPL, so nothing of its tests or
targets is copied, only what they expect of a profiler. Exit codes are
framewalk's (docs/EXIT-CODES.md), not Austin's 32-37."""
import re
import shutil

import pytest

from fwtest import collapsed_lines, is_python_frame, parse_frame, run_fw
from peertest import RECORDED, dump_until, read_lines, stage

HELLO = "print('Hello World')"


@pytest.fixture
def staged(interp):
    """The peers' scripts where INTERP can run them: (target_dir, argv prefix)."""
    host_dir, target_dir, cleanup = stage(interp)
    yield target_dir
    if cleanup:
        shutil.rmtree(str(cleanup), ignore_errors=True)


def record_command(out, *args, command, timeout=90):
    return run_fw("record", "-q", *[str(a) for a in args], "-o", out, "--", *command,
                  timeout=timeout)


def test_short_lived_command(interp, staged, tmp_path):
    """Austin's test_cli_short_lived: a command that exits at once is an
    error saying it exited too quickly, not an empty profile. framewalk:
    exit 10 (nothing sampled), one `framewalk: error:` line naming the
    command, and no output file. framewalk differs on purpose: it holds a
    command until sampling starts, so a short one IS profiled; only one that
    ends between two ticks (ptrace at 1 Hz here) gives nothing."""
    out = tmp_path / "hello.collapsed"
    command = interp.argv("-c", HELLO)
    r = record_command(out, "-r", 1, "--backend", "ptrace", command=command)
    assert r.returncode == 10, r
    errors = [l for l in r.stderr.splitlines() if l.startswith("framewalk: error: ")]
    assert len(errors) == 1 and interp.argv()[-1].rsplit("/", 1)[-1] in errors[0], r
    assert not out.exists(), "an empty profile was written: %r" % r


def test_non_python_command(tmp_path):
    """Austin's test_cli_no_python: `bash -c "sleep 2"` is not a Python
    program: framewalk's exit 4 with a message saying so (Austin: 32)."""
    out = tmp_path / "bash.collapsed"
    r = record_command(out, "-d", 5, command=["bash", "-c", "sleep 1"])
    assert r.returncode == 4, r
    assert "Python" in r.stderr and r.stderr.startswith("framewalk: error: "), r


def test_invalid_pid(tmp_path):
    """Austin's test_cli_invalid_pid: attaching to a process that does not
    exist fails at once: framewalk's exit 3 `no such process` (Austin: 36)."""
    r = run_fw("record", "-q", "-p", 9999999, "-d", 1, "-o", tmp_path / "x.collapsed")
    assert r.returncode == 3 and "no such process: 9999999" in r.stderr, r


def _nap_share(text):
    lines = collapsed_lines(text)
    total = sum(c for _, f, c in lines)
    nap = [(f, c) for _, f, c in lines
           if any(is_python_frame(x) and parse_frame(x)[0] == "nap" for x in f)]
    return total, nap


@pytest.mark.interps(*RECORDED)
def test_sleepy_cpu_vs_wall_with_arguments(interp, staged, tmp_path):
    """Austin's test_fork_cpu_time_idle and test_fork_exposure: a sleeping
    program started with an argument (its run length). In cpu mode it is
    (almost) never sampled; in wall mode (almost) every tick is in nap,
    waiting; it runs as long as its argument says and sees the arguments it
    was given (its stdout passes through). Austin sums the CPU time of the
    idle target's samples; here the sleeping function's cpu-mode samples
    are counted (start-up is CPU work, rightly sampled)."""
    script = staged + "/own/sleeper.py"
    args = ["1", "second arg", "-x"]
    cpu_out, wall_out = tmp_path / "cpu.collapsed", tmp_path / "wall.collapsed"
    # 1 kHz in cpu mode: the command is held once its runtime is found, and
    # what start-up work is left after that (a few ms) must be at least one
    # period of its CPU time to be sampled at all; at 100 Hz it was not once
    # (exit 10, no sample: a clean-clone run, 2026-12-02)
    cpu = record_command(cpu_out, "--mode", "cpu", "-r", 1000,
                         command=interp.argv("-B", script, *args))
    assert cpu.returncode == 0, cpu
    assert "args: %r" % (args,) in cpu.stdout, cpu
    # the interpreter's start-up is on a CPU and sampled; its sleep is not
    total, nap = _nap_share(cpu_out.read_text())
    assert sum(c for _, c in nap) <= 5, cpu_out.read_text()[:2000]
    wall = record_command(wall_out, "--mode", "wall", "-r", 100,
                          command=interp.argv("-B", script, *args))
    assert wall.returncode == 0, wall
    assert "args: %r" % (args,) in wall.stdout, wall
    total, nap = _nap_share(wall_out.read_text())
    # one second at 100 Hz: the interpreter's start and exit are the rest
    assert sum(c for _, c in nap) >= 50, wall_out.read_text()[:2000]
    assert sum(c for f, c in nap if f[-1].startswith("[wait] ")) >= 0.95 * sum(c for _, c in nap)


def test_qualnames(interp, peer):
    """Austin's test_qualnames (3.11+): two methods named run in two classes
    are told apart by their qualified names. Before 3.11 framewalk names
    frames by co_name (there is no qualname): both are `run`."""
    t = peer(interp, "own/qualnames.py")
    read_lines(t, ["READY"])
    head, threads = dump_until(t, lambda h, th: any(
        f[0].endswith("run") for f in th.get(t.pid, ("", "", []))[2]))
    names = [f[0] for f in threads[t.pid][2]]
    if interp.version >= (3, 11):
        assert names == ["<module>", "Outer.run", "Inner.run"], names
    else:
        assert names == ["<module>", "run", "run"], names
