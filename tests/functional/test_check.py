"""framewalk check: the interpreter's frame-pointer verdict (3.15 from the
Debian-unstable root, pyenv 3.12), every module's verdict (libz, the test C
extension built with and without -fno-omit-frame-pointer at -O0/-O2/-O3,
stripped, without unwind tables), permissions as root and as an unprivileged
user, exit codes, and the JSON report carrying the same facts as the text."""
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from fwtest import INTERP_BY_ID, REPO, SID_ROOT, pyenv_root, run_fw, wait_ready, framewalk_path

EXT_SRC = REPO / "tests" / "ext" / "fwext.c"
PYENV_312 = pyenv_root() / "versions" / "3.12.1"
UNPRIVILEGED = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                "--inh-caps=-all"]


def fw_binary():
    env = os.environ.get("FRAMEWALK")
    if env:
        if not os.access(env, os.X_OK):
            pytest.fail("FRAMEWALK=%s is not an executable" % env)
        return env
    return framewalk_path()


def check(*args, prefix=(), binary=None):
    return run_fw("check", *args, timeout=60, prefix=prefix, binary=binary or fw_binary())


def check_json(*args, prefix=(), binary=None):
    r = check("--json", *args, prefix=prefix, binary=binary)
    try:
        doc = json.loads(r.stdout)
    except ValueError as e:
        pytest.fail("check --json is not JSON (%s): %r" % (e, r))
    assert doc["exit_code"] == r.returncode, r
    return r, doc


def module(doc, prefix):
    found = [m for m in doc["modules"] if m["name"].startswith(prefix)]
    assert found, "no module %s* in %s" % (prefix, [m["name"] for m in doc["modules"]])
    return found[0]


def backend(doc, name):
    return next(b for b in doc["backends"] if b["name"] == name)


def module_line(text, prefix):
    """The row of the module table for the module named prefix*."""
    for line in text.splitlines():
        if re.match(r"^  %s\S*\s" % re.escape(prefix), line):
            return line
    pytest.fail("no row for %s in:\n%s" % (prefix, text))


# --------------------------------------------------------------------------
# Interpreters
# --------------------------------------------------------------------------

@pytest.fixture
def sid_python():
    """python3.15 running in the unstable root (seen from here like a
    containerised process), READY once started."""
    interp = INTERP_BY_ID["sid-py3.15"]
    interp.check()
    p = subprocess.Popen(
        interp.argv("-c", "import zlib, sys, time; print('READY', flush=True); time.sleep(120)"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=interp.env())
    try:
        wait_ready(p, what="python3.15 in %s" % SID_ROOT)
        yield p
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
        p.stderr.close()


def assert_315(doc, text):
    ip = doc["interpreter"]
    assert ip["version"].startswith("3.15"), ip
    assert ip["build"] == "static", ip
    assert ip["configured_frame_pointers"] == "yes", ip
    assert ip["frame_pointers"] == "yes", ip
    assert ip["fp_percent"] >= 90, ip
    assert "-fno-omit-frame-pointer" in ip["cflags"], ip
    assert re.search(r"frame pointers: yes \(configured: with .*code: with.*config and code agree",
                     text), text
    libz = module(doc, "libz.so")
    assert libz["frame_pointers"] == "no", libz
    assert libz["unwind_tables"] == ".eh_frame" and libz["unwind"] == "dwarf", libz
    assert re.search(r"\bno \(\d+%\), unwind tables present", module_line(text, "libz.so")), text
    assert any(b["module"].startswith("libz.so") for b in doc["chain_breaks"]), doc["chain_breaks"]
    assert re.search(r"the chain breaks in: .*libz\.so[^ ]*[ ,(].*framewalk will use DWARF there",
                     text), text
    py = module(doc, "python3.15")
    assert py["role"] == "interpreter" and py["frame_pointers"] == "yes", py


def test_sid_315_process(sid_python):
    r = check("-p", sid_python.pid)
    assert r.returncode == 0, r
    r2, doc = check_json("-p", sid_python.pid)
    assert_315(doc, r.stdout)
    assert doc["target"]["chroot"] is True, doc["target"]
    assert doc["target"]["root"] == str(SID_ROOT.resolve()), doc["target"]
    assert "in a chroot" in r.stdout, r


def test_sid_315_installation():
    INTERP_BY_ID["sid-py3.15"].check()
    exe = SID_ROOT / "usr" / "bin" / "python3.15"
    r = check("--python", exe)
    assert r.returncode == 0, r
    _, doc = check_json("--python", exe)
    assert_315(doc, r.stdout)
    assert doc["interpreter"]["module"] == "/usr/bin/python3.15", doc["interpreter"]
    # libz is found inside the root, not the host's
    assert module(doc, "libz.so")["host_path"].startswith(str(SID_ROOT.resolve())), doc


def test_pyenv_312_installation():
    exe = PYENV_312 / "bin" / "python3.12"
    if not os.access(str(exe), os.X_OK):
        pytest.fail("pyenv 3.12.1 missing: %s" % exe)
    r = check("--python", exe)
    assert r.returncode == 0, r
    assert re.search(r"frame pointers: no \(configured: without .*code: without", r.stdout), r
    _, doc = check_json("--python", exe)
    ip = doc["interpreter"]
    assert ip["version"] == "3.12.1" and ip["build"] == "shared", ip
    assert ip["configured_frame_pointers"] == "no" and ip["frame_pointers"] == "no", ip
    lib = module(doc, "libpython3.12.so")
    assert lib["role"] == "interpreter" and lib["unwind"] == "dwarf", lib
    assert module(doc, "_json.cpython-312")["role"] == "stdlib extension", doc


# --------------------------------------------------------------------------
# The test C extension
# --------------------------------------------------------------------------

VARIANTS = {
    # name: (flags, expected verdict); gcc keeps frame pointers at -O0 anyway
    "O0": ("-O0", "yes"),
    "O0fp": ("-O0 -fno-omit-frame-pointer", "yes"),
    "O2": ("-O2", "no"),
    "O2fp": ("-O2 -fno-omit-frame-pointer", "yes"),
    "O3": ("-O3", "no"),
    "O3fp": ("-O3 -fno-omit-frame-pointer", "yes"),
}


@pytest.fixture(scope="module")
def ext_builds():
    """fwext_<variant>.so for every variant, plus a stripped copy of O2fp and
    copies of O2 and O2fp without .eh_frame, in a temporary directory."""
    include = PYENV_312 / "include" / "python3.12"
    if not (include / "Python.h").is_file():
        pytest.fail("pyenv 3.12.1 headers missing: %s" % include)
    if not shutil.which("gcc") or not shutil.which("objcopy"):
        pytest.fail("gcc and objcopy are needed to build the test extension")
    d = Path(tempfile.mkdtemp(prefix="fw-check-ext-"))
    try:
        for name, (flags, _) in VARIANTS.items():
            out = d / ("fwext_%s.so" % name)
            subprocess.run(["gcc", "-shared", "-fPIC", "-g"] + flags.split() +
                           ["-I%s" % include, "-DFWEXT_NAME=fwext_%s" % name, "-o", str(out),
                            str(EXT_SRC)], check=True, timeout=60)
        shutil.copy(d / "fwext_O2fp.so", d / "stripped_O2fp.so")
        subprocess.run(["strip", str(d / "stripped_O2fp.so")], check=True, timeout=30)
        # CET's property note survives only where every object had it: no start files
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-fcf-protection=full", "-nostartfiles",
                        "-I%s" % include, "-DFWEXT_NAME=fwext_cet", "-o", str(d / "cet.so"),
                        str(EXT_SRC)], check=True, timeout=60)
        for name in ("O2", "O2fp"):
            subprocess.run(["objcopy", "--remove-section", ".eh_frame", "--remove-section",
                            ".eh_frame_hdr", str(d / ("fwext_%s.so" % name)),
                            str(d / ("noeh_%s.so" % name))], check=True, timeout=30)
        yield d
    finally:
        shutil.rmtree(str(d), ignore_errors=True)


def test_extension_variants(ext_builds):
    files = sorted(str(p) for p in ext_builds.glob("fwext_*.so"))
    r = check(*files)
    assert r.returncode == 0, r
    _, doc = check_json(*files)
    for name, (flags, want) in VARIANTS.items():
        m = module(doc, "fwext_%s.so" % name)
        assert m["frame_pointers"] == want, "%s (%s): %s" % (name, flags, m)
        assert m["symbols"] == "symtab" and m["stripped"] is False, m
        assert m["unwind_tables"] == ".eh_frame", m
        assert m["functions"]["with_fp"] + m["functions"]["without_fp"] >= 20, m
        row = module_line(r.stdout, "fwext_%s.so" % name)
        assert re.search(r"\s%s \(\d+%%\)" % want, row), row
        if want == "no":
            assert m["unwind"] == "dwarf" and "unwind tables present" in row, row
        else:
            assert m["unwind"] == "frame-pointers", m


def test_branch_protection(ext_builds):
    """check notes the branch protection a file's .note.gnu.property records:
    x86-64's IBT and SHSTK for an extension built with -fcf-protection=full,
    nothing for one without; PAC and BTI for the arm64 object built with
    -mbranch-protection=standard (its frame pointers unknown here, another
    architecture's code), in the text and in the JSON."""
    a64 = REPO / "tests" / "unit" / "fixtures" / "a64_funcs.so"
    files = [str(ext_builds / "cet.so"), str(ext_builds / "fwext_O2fp.so"), str(a64)]
    r = check(*files)
    assert r.returncode == 0, r
    _, doc = check_json(*files)
    assert module(doc, "cet.so")["branch_protection"] == ["IBT", "SHSTK"], module(doc, "cet.so")
    assert module(doc, "fwext_O2fp.so")["branch_protection"] == [], module(doc, "fwext_O2fp.so")
    assert module(doc, "a64_funcs.so")["branch_protection"] == ["PAC", "BTI"], \
        module(doc, "a64_funcs.so")
    assert re.search(r"\s(yes|no|partly) \(\d+%\).*, IBT, SHSTK", module_line(r.stdout, "cet.so"))
    assert "IBT" not in module_line(r.stdout, "fwext_O2fp.so")
    assert re.search(r"unknown \(not x86-64\), PAC, BTI", module_line(r.stdout, "a64_funcs.so"))


def test_extension_stripped(ext_builds):
    f = ext_builds / "stripped_O2fp.so"
    r = check(f)
    assert r.returncode == 0, r
    assert "stripped (.dynsym only)" in module_line(r.stdout, "stripped_O2fp.so"), r
    _, doc = check_json(f)
    m = module(doc, "stripped_O2fp.so")
    assert m["symbols"] == "dynsym" and m["stripped"] is True, m
    assert m["debug_info"]["via"] is None, m
    # the unwind tables still list every function: the verdict survives stripping
    assert m["frame_pointers"] == "yes", m
    assert m["build_id"] == module(check_json(ext_builds / "fwext_O2fp.so")[1],
                                   "fwext_O2fp.so")["build_id"], m


def test_extension_without_unwind_tables(ext_builds):
    nofp, fp = ext_builds / "noeh_O2.so", ext_builds / "noeh_O2fp.so"
    r = check(nofp, fp)
    assert r.returncode == 9, r
    assert "no unwind tables: cannot unwind" in module_line(r.stdout, "noeh_O2.so"), r
    assert "cannot unwind through it" in r.stdout, r
    _, doc = check_json(nofp, fp)
    m = module(doc, "noeh_O2.so")
    assert m["unwind_tables"] is None and m["unwind"] == "none", m
    assert m["frame_pointers"] == "no", m
    # with frame pointers, the prologue alone shows the chain holds
    m = module(doc, "noeh_O2fp.so")
    assert m["frame_pointers"] == "yes" and m["unwind"] == "frame-pointers", m
    assert [b["module"] for b in doc["chain_breaks"]] == ["noeh_O2.so"], doc["chain_breaks"]


def test_extension_loaded_in_process(ext_builds):
    """The same verdicts for the modules a live pyenv 3.12 process loaded."""
    exe = PYENV_312 / "bin" / "python3.12"
    code = ("import sys, time; sys.path.insert(0, %r); import fwext_O2, fwext_O2fp; "
            "fwext_O2.run(3); print('READY', flush=True); time.sleep(120)" % str(ext_builds))
    p = subprocess.Popen([str(exe), "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_ready(p, what="pyenv 3.12 with the test extension")
        r, doc = check_json("-p", p.pid, "--native")
        assert r.returncode == 0, r
        assert module(doc, "fwext_O2fp.so")["frame_pointers"] == "yes", doc
        assert module(doc, "fwext_O2.so")["frame_pointers"] == "no", doc
        assert module(doc, "libpython3.12.so")["role"] == "interpreter", doc
        assert doc["interpreter"]["configured_frame_pointers"] == "no", doc["interpreter"]
        assert backend(doc, "ptrace")["required"] is True, doc
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
        p.stderr.close()


# --------------------------------------------------------------------------
# Permissions
# --------------------------------------------------------------------------

def test_machine_as_root():
    if os.geteuid() != 0:
        pytest.skip("needs root (the functional tests run as root)")
    r = check()
    assert r.returncode == 0, r
    for name in ("vm", "ptrace", "bpf"):
        assert re.search(r"^  %s\s+usable\s" % name, r.stdout, re.M), r
    _, doc = check_json()
    assert doc["mode"] == "machine" and doc["modules"] is None, doc
    assert all(b["status"] == "usable" for b in doc["backends"]), doc["backends"]
    env = doc["environment"]
    assert env["capabilities"]["CAP_SYS_PTRACE"] is True, env
    assert env["bpf_probe"]["ok"] is True, env
    assert env["uid"] == 0 and isinstance(env["perf_event_paranoid"], int), env
    # which backend record and top will use, and that record does use it
    assert re.search(r"^  default: record and top use bpf here: whole stacks", r.stdout, re.M), r
    assert doc["default_backend"] == "bpf" and doc["default_whole_stacks"] is True, doc


@pytest.fixture(scope="module")
def shared_binary():
    """A copy of framewalk that the unprivileged user can execute."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    if not shutil.which("setpriv"):
        pytest.fail("setpriv (util-linux) is needed for the unprivileged tests")
    d = tempfile.mkdtemp(prefix="fw-check-bin-")
    try:
        os.chmod(d, 0o755)
        dst = os.path.join(d, "framewalk")
        shutil.copy(fw_binary(), dst)
        os.chmod(dst, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        yield dst
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_machine_unprivileged(shared_binary):
    r = check(prefix=UNPRIVILEGED, binary=shared_binary)
    assert r.returncode == 0, r     # own processes: the default vm backend works
    assert re.search(r"^  bpf\s+unusable\s+missing CAP_BPF, CAP_PERFMON", r.stdout, re.M), r
    # on a copy only group framewalk may run (perf's model), never on a file anyone runs
    assert re.search(r"^\s+fix: sudo groupadd -f framewalk && .* -g framewalk -m 0750 .* && "
                     r"sudo setcap cap_bpf,cap_perfmon\+ep ", r.stdout, re.M), r
    _, doc = check_json(prefix=UNPRIVILEGED, binary=shared_binary)
    assert doc["environment"]["uid"] != 0, doc
    bpf = backend(doc, "bpf")
    assert bpf["status"] == "unusable" and bpf["fixes"], bpf
    for name in ("vm", "ptrace"):
        b = backend(doc, name)
        assert b["status"] == "limited" and "CAP_SYS_PTRACE" in b["reason"], b
    # own processes through ptrace (what record chooses for them), vm for others
    assert re.search(r"^  default: record and top use ptrace here \(for the processes ptrace "
                     r"may read", r.stdout, re.M), r
    assert doc["default_backend"] == "ptrace", doc
    r = check("--backend", "bpf", prefix=UNPRIVILEGED, binary=shared_binary)
    assert r.returncode == 6, r


def test_root_target_unprivileged(shared_binary):
    """nobody cannot read a root process: vm and ptrace unusable, the missing
    capability named, a fix given; exit 6."""
    p = subprocess.Popen(["sleep", "60"])
    try:
        r = check("-p", p.pid, prefix=UNPRIVILEGED, binary=shared_binary)
        assert r.returncode == 6, r
        for name in ("vm", "ptrace"):
            assert re.search(r"^  %s\s+unusable\s+.*uid 0 \(root\).*without CAP_SYS_PTRACE" % name,
                             r.stdout, re.M), r
        assert re.search(r"fix: .* -m 0750 .* && sudo setcap cap_sys_ptrace\+ep ", r.stdout), r
        _, doc = check_json("-p", p.pid, prefix=UNPRIVILEGED, binary=shared_binary)
        for name in ("vm", "ptrace", "bpf"):
            b = backend(doc, name)
            assert b["status"] == "unusable" and b["fixes"], b
        assert "CAP_SYS_PTRACE" in backend(doc, "bpf")["reason"], doc
    finally:
        p.kill()
        p.wait()


# --------------------------------------------------------------------------
# Exit codes and the JSON report
# --------------------------------------------------------------------------

def test_exit_codes(tmp_path):
    assert check("-p", "999999999").returncode == 3     # no such process
    p = subprocess.Popen(["sleep", "60"])
    try:
        r = check("-p", p.pid)
        assert r.returncode == 4, r     # not Python
    finally:
        p.kill()
        p.wait()
    r = check("-p", p.pid)
    assert r.returncode == 3, r         # gone
    assert check("--python", tmp_path / "nope").returncode == 8
    r = check("--python", "/bin/true")
    assert r.returncode == 4, r
    assert check("--site-packages").returncode == 2


def test_json_carries_the_text_facts():
    INTERP_BY_ID["sid-py3.15"].check()
    exe = SID_ROOT / "usr" / "bin" / "python3.15"
    r = check("--python", exe)
    _, doc = check_json("--python", exe)
    rows = {}
    head = r.stdout.index("  MODULE ")
    for line in r.stdout[head:].splitlines()[1:]:
        if not line.startswith("  ") or line.startswith("  the chain"):
            break
        name, verdict = line.split()[0], line.split()[1]
        rows[name] = verdict
    assert len(rows) == len(doc["modules"]), (rows, doc["modules"])
    for m in doc["modules"]:
        assert rows[m["name"]] == m["frame_pointers"], (m, rows[m["name"]])
    for b in doc["backends"]:
        assert re.search(r"^  %s\s+%s\s" % (b["name"], b["status"]), r.stdout, re.M), r
