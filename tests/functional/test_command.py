"""record -- COMMAND as other profilers' tests run it (py-spy's, Austin's,
CPython's): the command gets exactly its own arguments, a command that exits
before the first sample is said so, one that starts slowly or under a wrapper
is still profiled, and nothing crashes when the first samples are dropped."""
import json
import re
import shlex
from collections import Counter
import os
import shutil
import tempfile

import pytest

from fwtest import INTERP_BY_ID, WORKLOADS, run_fw, parse_collapsed

HOST = "py3.12"

# Arguments a script must receive unchanged: options that look like
# framewalk's own, an empty one, a "--", spaces, non-ASCII.
ODD_ARGV = ["-o", "/tmp/x.col", "--", "-d", "1", "", "two words", "ünï", "-q", "--rate=5"]


def _in_root(interp, script):
    """The script's path as the interpreter sees it, and a cleanup dir."""
    if interp.kind == "host":
        return str(script), None
    d = tempfile.mkdtemp(prefix="fw-cmd-", dir=str(interp.root) + "/tmp")
    shutil.copy2(str(script), d)
    return d[len(str(interp.root)):] + "/" + os.path.basename(str(script)), d


@pytest.mark.interps("py3.9", "py3.12", "sid-py3.15")
def test_command_gets_its_own_arguments(interp, tmp_path):
    """The command's argv is what followed '--', terminated, never framewalk's
    options (Austin's sleepy.py died on float('-o'))."""
    interp.check()
    out = tmp_path / "argv.collapsed"
    code = "import sys, json; print('ARGV=' + json.dumps(sys.argv[1:]))"
    r = run_fw("record", "-q", "-d", "5", "-o", out, "--",
               *interp.argv("-c", code, *ODD_ARGV), timeout=60)
    assert r.returncode in (0, 10), r    # 10: it exited before a sample (see below)
    lines = [l for l in r.stdout.splitlines() if l.startswith("ARGV=")]
    assert len(lines) == 1, r
    assert json.loads(lines[0][5:]) == ODD_ARGV, r


@pytest.mark.interps("py3.12", "sid-py3.15")
def test_command_that_exits_at_once_is_said(interp, tmp_path):
    """A command that ends before its first sample: one error line saying so
    (Austin: 'too quickly'), a distinct exit code, no silent empty profile.
    framewalk holds a command until sampling starts, so only one that ends
    between two ticks gives nothing: here, ptrace at 1 Hz."""
    interp.check()
    out = tmp_path / "quick.collapsed"
    # ptrace at 1 Hz: the first tick finds the command held (stopped, so
    # not sampled in cpu mode), and it ends long before the second (bpf's
    # per-CPU clock may fire during its last milliseconds)
    r = run_fw("record", "-q", "-d", "5", "-r", "1", "--backend", "ptrace", "-o", out, "--",
               *interp.argv("-c", "pass"), timeout=60)
    assert r.returncode == 10, r
    lines = r.stderr.strip().splitlines()
    assert lines and lines[0].startswith("framewalk: error: "), r
    assert "before" in lines[0] and "sample" in lines[0], r
    assert interp.argv()[0].rsplit("/", 1)[-1] in lines[0], "the command is not named: %r" % r
    assert all(l.startswith("  hint: ") for l in lines[1:]), r
    # no empty profile in place of whatever the user had there
    assert not out.exists(), r


@pytest.mark.interps("py3.10", "py3.12", "sid-py3.15")
def test_slow_start_under_a_wrapper(interp, tmp_path):
    """A command that starts slowly under a wrapper (nice, and chroot for the
    root's interpreter) and runs briefly: no crash (a capture whose first
    samples were dropped once segfaulted), the script's functions profiled."""
    interp.check()
    script, cleanup = _in_root(interp, WORKLOADS / "split.py")
    out = tmp_path / "slow.collapsed"
    try:
        for _ in range(3):
            r = run_fw("record", "-q", "-d", "1", "--python-only", "-o", out, "--",
                       "nice", "-n", "10", *interp.argv("-B", script, "--seconds", "0.6"),
                       timeout=60)
            assert r.returncode in (0, 10), r
            assert "Sanitizer" not in r.stderr, r
            if r.returncode == 0:
                names = {f[0] for _, _, frames, _ in parse_collapsed(out.read_bytes())
                         for f in frames}
                assert names & {"hot_a", "hot_b", "main"}, (names, r)
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)


def test_backend_that_cannot_start_falls_back(workload, tmp_path):
    """One fallback for every command: when the backend auto picked cannot
    start (here bpf at a rate above the kernel's perf event limit, which
    would otherwise starve the machine), the capture goes on with the next
    one, says why once, and the profile names the backend that ran. Asked
    for by name, the same backend is refused with its true reason instead
    (not "lost access to a target")."""
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "60")
    with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
        limit = int(f.read())
    rate = "%d" % (limit * 2)
    out = tmp_path / "fb.txt"
    r = run_fw("record", "-p", w.pid, "-d", "1", "-r", rate, "-o", out, timeout=60)
    assert r.returncode == 0, r
    said = [l for l in r.stderr.splitlines() if "could not start" in l]
    assert len(said) == 1, r
    assert "bpf backend" in said[0] and "perf_event_max_sample_rate" in said[0], r
    assert "going on with ptrace" in said[0], r
    report = out.read_text()
    assert "Backend:   ptrace" in report, report[:2000]
    assert "hot_a" in report, report[:2000]

    r = run_fw("record", "-p", w.pid, "-d", "1", "-r", rate, "--backend", "bpf", "-o",
               tmp_path / "no.txt", timeout=60)
    assert r.returncode == 1, r
    assert r.stderr.startswith("framewalk: error: the bpf backend could not start: "), r
    assert "perf_event_max_sample_rate" in r.stderr and "lost access" not in r.stderr, r
    assert not (tmp_path / "no.txt").exists(), "an empty output was left"


@pytest.mark.interps("py3.12", "sid-py3.15")
def test_subprocesses_under_a_shell(interp, tmp_path):
    """--subprocesses with a root that is not Python (a shell entrypoint, as
    in a container): every Python process it starts is profiled, the one it
    forks and the one it execs last, as py-spy --subprocesses does (this
    was refused, exit 4, after a 10 s wait)."""
    interp.check()
    script, cleanup = _in_root(interp, WORKLOADS / "split.py")
    py = " ".join(shlex.quote(a) for a in interp.argv("-B", script, "--seconds", "1"))
    out = tmp_path / "sub.collapsed"
    try:
        r = run_fw("record", "-q", "--subprocesses", "-d", "20", "-r", "200", "-o", out, "--",
                   "bash", "-c", "sleep 0.3; %s; %s" % (py, py), timeout=60)
        assert r.returncode == 0, r
        assert r.elapsed < 15, "the capture did not end with the command: %r" % r
        hot = Counter()
        for line in out.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            parts = stack.split(";")
            py = [f for f in parts[1:] if re.search(r"\.py:\d+\)$", f)]
            thread = parts[0]
            if py and py[-1].startswith(("hot_a ", "hot_b ")):
                hot[thread] += int(count)
        # "NAME (TID) [pid PID]": several processes
        pids = {re.search(r"\[pid (\d+)\]", t).group(1) for t in hot}
        assert len(pids) == 2, ("want both Python processes", dict(hot), r)
        assert all(c >= 20 for c in hot.values()), dict(hot)
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)


def test_wait_for_python_bounded_by_duration(tmp_path):
    """With a command that never starts Python, -d bounds the wait (it was
    10 s whatever -d said): one error line, exit 4."""
    r = run_fw("record", "-q", "--subprocesses", "-d", "1", "-o", tmp_path / "x.collapsed",
               "--", "sleep", "30", timeout=60)
    assert r.returncode == 4, r
    assert r.elapsed < 6, r
    assert r.stderr.startswith("framewalk: error: "), r


@pytest.mark.interps("py3.12", "sid-py3.15")
def test_short_command_profiled_from_its_start(interp, tmp_path):
    """A command that runs for one second is profiled for (about) that
    second: it is held while the backend loads (which takes a second or
    more), not left to run unsampled (a 1 s split.py was over before the
    first sample: 0 samples)."""
    interp.check()
    script, cleanup = _in_root(interp, WORKLOADS / "split.py")
    out = tmp_path / "short.collapsed"
    try:
        r = run_fw("record", "-q", "-d", "20", "-r", "200", "--mode", "wall", "-o", out, "--",
                   *interp.argv("-B", script, "--seconds", "1"), timeout=60)
        assert r.returncode == 0, r
        assert "DONE" in r.stdout, r
        samples = parse_collapsed(out.read_bytes(), merged=True)
        total = sum(c for _, _, _, c in samples)
        hot = sum(c for _, _, frames, c in samples
                  if frames and frames[-1][0] in ("hot_a", "hot_b"))
        # 1 s at 200 Hz in wall mode: 200 ticks (a loaded machine takes
        # fewer); split.py spends nearly all of its second in hot_a/hot_b
        assert total >= 20 and hot >= 0.5 * total, (hot, total, r)
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)


def test_non_python_command_exiting_while_looked_at(tmp_path):
    """A command that is not Python and exits while framewalk is reading it
    (the window between two looks: Austin's test_cli_no_python with `sleep
    1` met it in CI, 'no such process', exit 3) is said to have exited, exit
    4, every time."""
    codes = Counter()
    for i in range(40):
        r = run_fw("record", "-q", "-d", 5, "-o", tmp_path / "x.collapsed",
                   "--", "bash", "-c", "sleep 0.%d" % (i % 3), timeout=60)
        codes[r.returncode] += 1
        if r.returncode != 4:
            assert False, (dict(codes), r)
        assert "exited (status 0) before a Python runtime appeared" in r.stderr, r
    assert not (tmp_path / "x.collapsed").exists()
