"""record -- COMMAND as other profilers' tests run it (py-spy's, Austin's,
CPython's): the command gets exactly its own arguments, a command that exits
before the first sample is said so, one that starts slowly or under a wrapper
is still profiled, and nothing crashes when the first samples are dropped."""
import json
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
    (Austin: 'too quickly'), a distinct exit code, no silent empty profile."""
    interp.check()
    out = tmp_path / "quick.collapsed"
    r = run_fw("record", "-q", "-d", "5", "-o", out, "--",
               *interp.argv("-c", "pass"), timeout=60)
    assert r.returncode == 10, r
    lines = r.stderr.strip().splitlines()
    assert lines and lines[0].startswith("framewalk: error: "), r
    assert "before" in lines[0] and "sample" in lines[0], r
    assert all(l.startswith("  hint: ") for l in lines[1:]), r


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
