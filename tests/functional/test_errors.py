"""Error cases (exit code, one 'framewalk: error:' line, optional hint) and
capture endings: record -- CMD, SIGINT, target exiting mid-capture."""
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest

from fwtest import (INTERP_BY_ID, WORKLOADS, Result, framewalk_path, parse_collapsed,
                    pyenv_root, run_fw, wait_ready, wait_sampling, wait_until)

HOST = "py3.12"


def assert_error(r, code, *patterns):
    """framewalk failed with CODE, printing exactly one error line (plus
    optional '  hint:' lines) on stderr, matching every regex in PATTERNS."""
    assert r.returncode == code, r
    lines = r.stderr.rstrip("\n").splitlines()
    assert lines, r
    assert lines[0].startswith("framewalk: error: "), r
    for extra in lines[1:]:
        assert extra.startswith("  hint: "), "not a hint line: %r\n%r" % (extra, r)
    message = "\n".join(lines)
    for p in patterns:
        assert re.search(p, message, re.I), "%r not in the message:\n%r" % (p, r)


@pytest.fixture
def idle(workload):
    return workload(INTERP_BY_ID[HOST], "idle.py")


# -- 2: bad option values ----------------------------------------------------

@pytest.mark.parametrize("args,word", [
    (["-r", "abc"], r"rate|-r"),
    (["-r", "0"], r"rate|-r"),
    (["-r", "10kz"], r"rate|-r"),
    (["-d", "-1"], r"duration|-d"),
    (["-d", "abc"], r"duration|-d"),
    (["--format", "nope"], r"format"),
], ids=["rate-abc", "rate-0", "rate-10kz", "duration-neg", "duration-abc", "format-nope"])
def test_bad_option_value(idle, args, word, tmp_path):
    r = run_fw("record", "-p", idle.pid, "-o", tmp_path / "x", *args, timeout=20)
    assert_error(r, 2, word)
    assert not (tmp_path / "x").exists()


def test_unknown_option():
    r = run_fw("record", "--no-such-option", timeout=20)
    assert_error(r, 2)


def test_usage_error_escapes_its_argument():
    """A usage error quotes the argument it refuses made safe for a terminal,
    as every other message (an escape sequence in it is not sent raw)."""
    r = run_fw("record", "-p", "12\x1b]0;owned\x07\x1b[31m", timeout=20)
    assert_error(r, 2, r"process id")
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr, repr(r.stderr)


# -- 3: no such process ---------------------------------------------------------

def test_no_such_process():
    r = run_fw("record", "-p", "999999999", "-d", "1", timeout=20)
    assert_error(r, 3, r"no such process", r"999999999")
    r = run_fw("dump", "-p", "999999999", timeout=20)
    assert_error(r, 3, r"no such process")


def test_exited_process():
    p = subprocess.Popen(["true"])
    p.wait()
    r = run_fw("record", "-p", p.pid, "-d", "1", timeout=20)
    assert_error(r, 3, r"no such process", str(p.pid))


# -- 4: not a Python process ----------------------------------------------------

def test_not_python():
    p = subprocess.Popen(["sleep", "100"])
    try:
        wait_until(lambda: os.path.basename(os.readlink("/proc/%d/exe" % p.pid)) == "sleep",
                   10, "the child to exec sleep", p)
        r = run_fw("record", "-p", p.pid, "-d", "1", timeout=20)
        assert_error(r, 4, r"not a Python process")
        r = run_fw("dump", "-p", p.pid, timeout=20)
        assert_error(r, 4, r"not a Python process")
    finally:
        p.kill()
        p.wait()


def test_not_python_names_python_child():
    interp = INTERP_BY_ID[HOST]
    interp.check()
    # "; true" keeps sh from exec'ing python: sh stays the parent.
    p = subprocess.Popen(["sh", "-c", '"$0" -B "$1"; true', str(interp.exe),
                          str(WORKLOADS / "idle.py")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        wait_ready(p, what="sh -c python idle.py")
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            children = [int(x) for x in f.read().split()]
        assert len(children) == 1, children
        r = run_fw("record", "-p", p.pid, "-d", "1", timeout=20)
        assert_error(r, 4, r"not a Python process", r"\b%d\b" % children[0])
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        p.stderr.close()


# -- 5: unsupported Python version ------------------------------------------------

def _old_pythons():
    base = pyenv_root() / "versions"
    found = []
    for v in ("3.7.16", "3.6.15", "2.7.18"):
        exe = base / v / "bin" / "python"
        if os.access(str(exe), os.X_OK):
            found.append((v, exe))
    return found


def test_unsupported_version():
    olds = _old_pythons()
    if not olds:
        pytest.skip("no Python older than 3.8 installed under %s" % pyenv_root())
    for version, exe in olds:
        p = subprocess.Popen([str(exe), "-B", str(WORKLOADS / "idle.py")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_ready(p, what="python %s idle.py" % version)
            r = run_fw("record", "-p", p.pid, "-d", "1", timeout=20)
            short = ".".join(version.split(".")[:2])
            assert_error(r, 5, r"not supported|unsupported", re.escape(short))
        finally:
            p.kill()
            p.wait()
            p.stdout.close()
            p.stderr.close()


# -- 6: permission denied -------------------------------------------------------

def test_permission_denied(idle):
    # A copy that user nobody can reach whatever the work tree's modes are.
    d = tempfile.mkdtemp(prefix="fw-nobody-")
    try:
        os.chmod(d, 0o755)
        exe = os.path.join(d, "framewalk")
        shutil.copy2(framewalk_path(), exe)
        os.chmod(exe, 0o755)
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        r = run_fw("record", "-p", idle.pid, "-d", "1", prefix=prefix, binary=exe,
                   timeout=20)
        assert_error(r, 6, r"permission|not allowed", r"CAP_SYS_PTRACE")
        r = run_fw("dump", "-p", idle.pid, prefix=prefix, binary=exe, timeout=20)
        assert_error(r, 6, r"CAP_SYS_PTRACE")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# -- 7: output not writable (before sampling starts) -----------------------------

def test_output_dir_missing(idle):
    # -d 300 with a 20 s limit: a record that sampled before checking its
    # output would time out instead of failing at once.
    r = run_fw("record", "-p", idle.pid, "-d", "300", "--format", "collapsed",
               "-o", "/nonexistent/dir/x", timeout=20)
    assert_error(r, 7, r"not writable", r"/nonexistent/dir/x")


def test_output_readonly_dir(idle):
    d = tempfile.mkdtemp(prefix="fw-ro-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "fw-ro", d], check=True)
    try:
        target = os.path.join(d, "out.collapsed")
        r = run_fw("record", "-p", idle.pid, "-d", "300", "--format", "collapsed",
                   "-o", target, timeout=20)
        assert_error(r, 7, r"not writable", re.escape(target))
    finally:
        subprocess.run(["umount", d], check=True)
        os.rmdir(d)


# -- 8: corrupt or unreadable input (report) -------------------------------------

@pytest.mark.parametrize("name,content", [
    ("garbage.collapsed", b"this is not a profile\n"),
    ("nocount.collapsed", b"python (1);main (/x.py:3)\n"),
    ("junk.pb.gz", b"\x1f\x8b\x08\x00garbage-after-a-gzip-magic" * 4),
    ("notgzip.pb.gz", b"plain text, not gzip\n"),
], ids=["garbage", "no-count", "junk-gzip", "not-gzip"])
def test_report_corrupt_input(tmp_path, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    r = run_fw("report", f, timeout=20)
    assert_error(r, 8, re.escape(name))
    assert r.stdout == "", "output printed for a corrupt input: %r" % r


def test_report_missing_input(tmp_path):
    f = tmp_path / "absent.collapsed"
    r = run_fw("report", f, timeout=20)
    assert_error(r, 8, re.escape(str(f)))


def test_report_reads_a_recording(workload, tmp_path):
    """The counterpart of the corrupt cases: a real recording is accepted."""
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "30")
    out = tmp_path / "rec.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", "1", "-r", "200", "--format", "collapsed",
               "-o", out, "-q", timeout=30)
    assert r.returncode == 0, r
    r = run_fw("report", out, timeout=20)
    assert r.returncode == 0, r
    assert "Top functions (self)" in r.stdout and "hot_a" in r.stdout, r


# -- capture endings ---------------------------------------------------------------

def _hot_samples(data, path):
    samples = parse_collapsed(data, merged=True)    # the default: whole stacks
    hot = {"hot_a": 0, "hot_b": 0}
    for _, _, frames, count in samples:
        if frames and frames[-1][1] == path and frames[-1][0] in hot:
            hot[frames[-1][0]] += count
    return hot


@pytest.mark.interps("py3.12", "sid-py3.15")
def test_record_command(interp, tmp_path):
    """record -- CMD starts CMD, profiles it until it exits, writes the output.
    For the sid interpreter CMD is `chroot ROOT python3.15 ...`, which execs."""
    interp.check()
    out = tmp_path / "cmd.collapsed"
    if interp.kind == "host":
        script = str(WORKLOADS / "split.py")
        cleanup = None
    else:
        d = tempfile.mkdtemp(prefix="fw-cmd-", dir=str(interp.root) + "/tmp")
        shutil.copy2(str(WORKLOADS / "split.py"), d)
        script = d[len(str(interp.root)):] + "/split.py"
        cleanup = d
    try:
        # -d 300 with a 60 s limit: it must stop when the command exits.
        r = run_fw("record", "-d", "300", "-r", "200", "--format", "collapsed", "-o", out,
                   "--", *interp.argv("-B", script, "--seconds", "2"), timeout=60)
        assert r.returncode == 0, r
        assert "target exited" in r.stderr, r
        assert "DONE" in r.stdout, "the command's stdout did not pass through: %r" % r
        hot = _hot_samples(out.read_bytes(), script)
        assert hot["hot_a"] > 0 and hot["hot_b"] > 0, (hot, r)
        assert hot["hot_a"] > hot["hot_b"], hot
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)


def test_sigint_writes_output(workload, tmp_path):
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "60")
    out = tmp_path / "int.collapsed"
    argv = [framewalk_path(), "record", "-p", str(w.pid), "-d", "60", "-r", "200",
            "--format", "collapsed", "-o", str(out)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # 1 CPU s sampled at 200 Hz: ~200 ticks that find it running
    wait_sampling(p, w.pid, cpu=1.0)
    p.send_signal(signal.SIGINT)
    try:
        so, se = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("record did not stop within 10 s of SIGINT")
    r = Result(argv, p.returncode, so, se, 0)
    assert p.returncode == 0, r
    assert w.alive(), "the target died"
    hot = _hot_samples(out.read_bytes(), w.target_path("split.py"))
    # ~200 ticks found it running; a loaded machine loses some.
    assert hot["hot_a"] + hot["hot_b"] >= 40, (hot, r)


def test_target_exits_mid_capture(workload, tmp_path):
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "1.5")
    out = tmp_path / "exit.collapsed"
    # -d 300 with a 60 s limit: it must stop when the target exits.
    r = run_fw("record", "-p", w.pid, "-d", "300", "-r", "200", "--format", "collapsed",
               "-o", out, timeout=60)
    assert r.returncode == 0, r
    assert "target exited" in r.stderr, r
    hot = _hot_samples(out.read_bytes(), w.target_path("split.py"))
    # ~1.5 s at 200 Hz = 300 ticks; a loaded machine loses some.
    assert hot["hot_a"] + hot["hot_b"] >= 30, (hot, r)
