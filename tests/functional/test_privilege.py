"""A framewalk that holds capabilities its real user lacks (a setcap copy, as
docs/CHECK.md once told everyone to make) lends them to no one: user nobody
running such a copy may profile nobody's own processes, never root's; it
keeps no capability it does not use; and `check` recommends a copy only a
group may run, never a capability on a world-executable file."""
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from fwtest import WORKLOADS, framewalk_path, run_fw, wait_ready

NOBODY = 65534
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
# a static interpreter every user may run (pyenv's live under /root, mode 0700)
PYTHON = "/usr/bin/python3.11"


def _need_root_tools():
    if os.geteuid() != 0:
        pytest.skip("needs root: makes a setcap copy and runs processes as another user")
    for tool in ("setcap", "setpriv"):
        if not shutil.which(tool):
            pytest.skip("%s not installed (libcap2-bin, util-linux)" % tool)
    if not os.access(PYTHON, os.X_OK):
        pytest.skip("%s missing (a Python every user may run)" % PYTHON)


@pytest.fixture
def scratch():
    """A directory nobody can enter, on a mount where file capabilities
    apply (nosuid ignores them), with a subdirectory nobody may write."""
    _need_root_tools()
    for parent in ("/var/tmp", "/tmp", str(Path(framewalk_path()).parent)):
        if os.path.isdir(parent) and not os.statvfs(parent).f_flag & os.ST_NOSUID:
            break
    else:
        pytest.skip("no directory without nosuid: file capabilities cannot apply")
    d = Path(tempfile.mkdtemp(prefix="fw-privilege-", dir=parent))
    os.chmod(str(d), 0o755)
    out = d / "out"
    out.mkdir()
    os.chown(str(out), NOBODY, NOBODY)
    yield d
    shutil.rmtree(str(d), ignore_errors=True)


def capability_copy(scratch, caps):
    """A copy of framewalk anyone may run, holding CAPS (setcap CAPS+ep):
    the setup this test shows to be unsafe unless framewalk refuses."""
    copy = scratch / "framewalk"
    shutil.copy2(framewalk_path(), str(copy))
    os.chmod(str(copy), 0o755)
    r = subprocess.run(["setcap", caps + "+ep", str(copy)], capture_output=True, text=True,
                       timeout=30)
    if r.returncode:
        pytest.skip("setcap failed here: %s" % r.stderr.strip())
    return str(copy)


@pytest.fixture
def idle_as():
    """start(prefix): idle.py under PYTHON, run through prefix (e.g. AS_NOBODY)."""
    procs = []

    def start(prefix=()):
        p = subprocess.Popen(list(prefix) + [PYTHON, "-B", str(WORKLOADS / "idle.py")],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        procs.append(p)
        wait_ready(p, what="idle.py")
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait(timeout=10)
        p.stdout.close()
        p.stderr.close()


def task_states(pid):
    states = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                states[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            pass
    return states


def assert_refused(r, pid):
    """Exit 6 with the reason and its hint; nothing of the target's stack."""
    assert r.returncode == 6, r
    assert re.search(r"error: process %d belongs to another user \(uid 0\)" % pid, r.stderr), r
    assert "hint:" in r.stderr, r
    assert "idle_wait" not in r.stdout + r.stderr, r
    assert not re.search(r"^Thread ", r.stdout, re.M), r


def test_setcap_copy_refuses_another_users_process(scratch, idle_as):
    root_target = idle_as()
    copy = capability_copy(scratch, "cap_sys_ptrace")
    r = run_fw("dump", "-p", root_target.pid, binary=copy, prefix=AS_NOBODY, timeout=30)
    assert_refused(r, root_target.pid)
    r = run_fw("dump", "--native", "-p", root_target.pid, binary=copy, prefix=AS_NOBODY,
               timeout=30)
    assert_refused(r, root_target.pid)
    out = scratch / "out" / "root.txt"
    r = run_fw("record", "-p", root_target.pid, "-d", "1", "-o", out, binary=copy,
               prefix=AS_NOBODY, timeout=30)
    assert_refused(r, root_target.pid)
    assert not out.exists(), r
    assert all(s not in "tT" for s in task_states(root_target.pid).values())


def test_setcap_copy_profiles_own_process(scratch, idle_as):
    own = idle_as(AS_NOBODY)
    copy = capability_copy(scratch, "cap_sys_ptrace")
    r = run_fw("dump", "-p", own.pid, binary=copy, prefix=AS_NOBODY, timeout=30)
    assert r.returncode == 0, r
    assert "idle_wait" in r.stdout, r
    out = scratch / "out" / "own.collapsed"
    r = run_fw("record", "--mode", "wall", "-p", own.pid, "-d", "1", "-o", out, binary=copy,
               prefix=AS_NOBODY, timeout=30)
    assert r.returncode == 0, r
    assert "idle_wait" in out.read_text(), r


def test_setcap_copy_all_python_skips_other_users(scratch, idle_as):
    """--all-python as nobody: nobody's process is profiled, root's is not
    even looked into (its files are not parsed, nothing of it is written)."""
    root_target = idle_as()
    own = idle_as(AS_NOBODY)
    copy = capability_copy(scratch, "cap_sys_ptrace")
    out = scratch / "out" / "all.collapsed"
    r = run_fw("record", "--all-python", "--mode", "wall", "-d", "1", "-o", out,
               binary=copy, prefix=AS_NOBODY, timeout=60)
    assert r.returncode == 0, r
    text = out.read_text()
    assert re.search(r"\b%d\b" % own.pid, text), (text[:2000], r)
    assert not re.search(r"\b%d\b" % root_target.pid, text), (text[:2000], r)


def test_setcap_copy_drops_unneeded_capabilities(scratch):
    """A copy given CAP_SYS_ADMIN as well keeps only what profiling uses:
    check (which reports the capabilities it holds) no longer has it."""
    copy = capability_copy(scratch, "cap_sys_ptrace,cap_sys_admin")
    r = run_fw("check", binary=copy, prefix=AS_NOBODY, timeout=60)
    m = re.search(r"capabilities: (.*)", r.stdout)
    assert m, r
    assert "CAP_SYS_PTRACE yes" in m.group(1), r
    assert "CAP_SYS_ADMIN no" in m.group(1), r


def test_check_recommends_a_group_only_copy(scratch, idle_as):
    """The fix `check` prints for a missing capability puts it on a copy
    only a group may run (perf's model), never on a world-executable file."""
    root_target = idle_as()
    copy = scratch / "plain"
    shutil.copy2(framewalk_path(), str(copy))
    os.chmod(str(copy), 0o755)
    r = run_fw("check", "-p", root_target.pid, binary=str(copy), prefix=AS_NOBODY, timeout=60)
    fixes = [l for l in r.stdout.splitlines() if "setcap" in l]
    assert fixes, r
    for line in fixes:
        assert "-g framewalk -m 0750" in line, line
        assert re.search(r"setcap \S*cap_sys_ptrace\S*\+ep /\S+", line), line
