"""Shipping framewalk (issue 17): the static binary in a container, the
Debian package, and --version.

- The static binary (`make static`, build-static/framewalk or
  $FRAMEWALK_STATIC) is copied into the minimal root of
  scripts/static-root.sh: Debian unstable with python3.13 and none of the
  shared libraries framewalk's ordinary build needs, nor any terminfo. A
  Python workload runs there (chroot) and framewalk runs from inside the
  same root with /proc mounted there (and unmounted at the end, also on
  failure): `record` Python-only and with --native must show the true,
  whole chain; `check` must say what this root allows; `top` must draw in a
  terminal with TERM=xterm-256color and fall back to plain tables with
  TERM=dumb; nothing may open NSS or shared-library files of its own.
- `make deb` builds the .deb with dpkg-buildpackage; its control fields
  and contents are checked with dpkg-deb, and it is installed with apt into
  a throwaway copy of a Debian 12 root (made once by mmdebstrap and cached
  in /var/cache/framewalk/bookworm-apt.tar), where --version runs.
- --version of each build prints the release and `git rev-parse --short
  HEAD`; a tree without git says it has no commit.
"""
import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from fwtest import REPO, WORKLOADS, SourceInfo, framewalk_path, wait_ready

STATIC = Path(os.environ.get("FRAMEWALK_STATIC", str(REPO / "build-static" / "framewalk")))
STATIC_ROOT = Path(os.environ.get("FRAMEWALK_STATIC_ROOT", "/var/cache/framewalk/static-root"))
PYTHON = "/usr/bin/python3.13"
SIZE_BUDGET = 15 * 1024 * 1024
# what framewalk's ordinary build links; none may be in the static root
SHARED_LIBS = ("libelf", "libdw", "libbpf", "libprotobuf-c", "libncursesw", "libtinfo",
               "liblzma", "libbz2", "libzstd", "libdebuginfod", "libcurl")
ROOT_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
BOOKWORM_BASE = Path("/var/cache/framewalk/bookworm-apt.tar")


def project_version():
    m = re.search(r"^\s*version\s*:\s*'([^']+)'", (REPO / "meson.build").read_text(), re.M)
    assert m, "no version in meson.build"
    return m.group(1)


def head_commit():
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    assert r.returncode == 0, "not a git checkout: %s" % r.stderr
    return r.stdout.strip()


VERSION_RE = re.compile(r"^framewalk (?P<ver>\S+) \(commit (?P<commit>[0-9a-f]{4,40}), "
                        r"(?P<kind>static|dynamic) build, (?P<arch>x86-64|aarch64)\)$")


def static_binary():
    if not os.access(str(STATIC), os.X_OK):
        pytest.fail("static framewalk missing: %s (build it: make static)" % STATIC)
    return STATIC


# --------------------------------------------------------------------------
# The static binary itself
# --------------------------------------------------------------------------

def test_static_binary_is_static_stripped_and_small():
    b = static_binary()
    out = subprocess.run(["file", "-b", str(b)], capture_output=True, text=True).stdout
    assert "statically linked" in out and "stripped" in out and "not stripped" not in out, out
    prog = subprocess.run(["readelf", "-lW", str(b)], capture_output=True, text=True).stdout
    assert "INTERP" not in prog and "DYNAMIC" not in prog, prog
    ldd = subprocess.run(["ldd", str(b)], capture_output=True, text=True)
    assert "not a dynamic executable" in ldd.stdout + ldd.stderr, ldd
    size = b.stat().st_size
    assert size <= SIZE_BUDGET, "static binary is %.1f MB, budget 15 MB" % (size / 2 ** 20)
    data = b.read_bytes()
    # libdw.a's debuginfod client (it dlopens libdebuginfod.so.1) stays out
    assert b"libdebuginfod.so" not in data
    # the BPF program and the HTML views are inside
    assert b"d3-flame-graph" in data and b"fwprof" in data


# --------------------------------------------------------------------------
# Inside a minimal root
# --------------------------------------------------------------------------

class Root:
    """The static root with framewalk and the workloads copied into
    /tmp/fw-ship-<id>/ and proc mounted on /proc."""

    def __init__(self, root):
        self.root = root
        self.inside = "/tmp/fw-ship-%s" % uuid.uuid4().hex[:12]
        self.host = Path(str(root) + self.inside)
        self.fw = self.inside + "/framewalk"
        self.procs = []

    def hostpath(self, inside):
        return Path(str(self.root) + inside)

    def argv(self, *args):
        return [CHROOT, str(self.root)] + [str(a) for a in args]

    def framewalk(self, *args, timeout=90, env=None, prefix=()):
        argv = list(prefix) + self.argv(self.fw, *args)
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  env=env or ROOT_ENV, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            pytest.fail("framewalk %s in the root did not finish in %d s: %s"
                        % (" ".join(map(str, args)), timeout, e.stderr))

    def start(self, script, *args):
        p = subprocess.Popen(self.argv(PYTHON, "-B", self.inside + "/" + script, *args),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=ROOT_ENV)
        self.procs.append(p)
        wait_ready(p, what="%s in the static root" % script)
        return p

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)
            for f in (p.stdout, p.stderr):
                f.close()
        self.procs = []


def umount(path):
    for _ in range(10):
        if not os.path.ismount(str(path)):
            return
        if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
            continue
        time.sleep(0.3)
    if os.path.ismount(str(path)):
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
    assert not os.path.ismount(str(path)), "could not unmount %s" % path


@pytest.fixture(scope="module")
def root():
    r = subprocess.run([str(REPO / "scripts" / "static-root.sh"), str(STATIC_ROOT)],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail("scripts/static-root.sh failed (exit %d):\n%s" % (r.returncode, r.stderr))
    b = static_binary()
    rt = Root(STATIC_ROOT)
    proc = STATIC_ROOT / "proc"
    umount(proc)                 # a leftover of a run that was killed
    rt.host.mkdir(parents=True)
    try:
        shutil.copy2(str(b), str(rt.host / "framewalk"))
        for f in WORKLOADS.glob("*.py"):
            shutil.copy2(str(f), str(rt.host / f.name))
        subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
        try:
            yield rt
        finally:
            rt.stop_all()
            umount(proc)
    finally:
        shutil.rmtree(str(rt.host), ignore_errors=True)


@pytest.fixture(autouse=True)
def stop_root_workloads(request):
    """The workloads a test started in the root end with that test (the root
    itself is the module's): a busy one left running slows every later test."""
    yield
    if "root" in request.fixturenames:
        request.getfixturevalue("root").stop_all()


def test_root_has_none_of_the_libraries(root):
    found = []
    for d in ("usr/lib", "lib", "usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"):
        p = root.root / d
        if p.is_dir():
            found += [f.name for f in p.iterdir() if f.name.startswith(SHARED_LIBS)]
    assert not found, "the static root has %s" % found
    for d in ("usr/share/terminfo", "lib/terminfo", "etc/terminfo"):
        assert not (root.root / d).exists(), "the static root has %s" % d
    r = root.framewalk("--version")
    assert r.returncode == 0, r.stderr
    m = VERSION_RE.match(r.stdout.strip())
    assert m and m.group("kind") == "static", r.stdout


def parse_stacks(text):
    """collapsed text -> [(thread, [(name, where)...outermost first], count)]."""
    out = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        parts = stack.split(";")
        frames = []
        for p in parts[1:]:
            name, sep, where = p.rpartition(" (")
            assert sep and where.endswith(")"), "malformed frame %r in %r" % (p, line)
            frames.append((name, where[:-1]))
        out.append((parts[0], frames, int(count)))
    return out


def python_chain(w, src):
    """The true chain of zlib_loop.py while it compresses: (name, where)."""
    return [("<module>", "%s:%d" % (w, src.line("main"))),
            ("generate_report", "%s:%d" % (w, src.line("generate"))),
            ("compress_report", "%s:%d" % (w, src.line("compress")))]


def test_record_python_inside_root(root, tmp_path):
    p = root.start("zlib_loop.py")
    out = root.inside + "/py.collapsed"
    # the Python view: its true chain is known exactly (whole stacks inside
    # the root: test_static_interpreter_executable in test_realities.py)
    r = root.framewalk("record", "-p", p.pid, "-d", "2", "-r", "200", "-q", "--python-only",
                       "-o", out)
    assert r.returncode == 0, r.stderr
    assert p.poll() is None, "the target died while sampled"
    stacks = parse_stacks(root.hostpath(out).read_text())
    wpath = root.inside + "/zlib_loop.py"
    chain = python_chain(wpath, SourceInfo(root.host / "zlib_loop.py"))
    total = sum(c for _, _, c in stacks)
    exact = sum(c for _, fr, c in stacks if fr == chain)
    # between two calls generate_report is innermost for an instant: a true chain too
    between = sum(c for _, fr, c in stacks if fr == chain[:2])
    assert total >= 100, "only %d samples in 2 s at 200 Hz" % total
    assert exact + between == total, "stacks other than the true chain:\n%s" % "\n".join(
        "%s %d" % (fr, c) for _, fr, c in stacks if fr not in (chain, chain[:2]))
    assert exact >= 0.9 * total, "%d of %d samples have the whole chain" % (exact, total)


def is_libz(frame):
    return frame[1].startswith("libz.so") or frame[0].startswith("libz.so")


def test_record_native_inside_root(root, tmp_path):
    p = root.start("zlib_loop.py")
    out = root.inside + "/native.collapsed"
    r = root.framewalk("record", "-p", p.pid, "--native", "-d", "2", "-r", "200", "-o", out)
    assert r.returncode == 0, r.stderr
    assert p.poll() is None, "the target died while sampled"
    # no sysfs in this root: the bpf backend cannot run, and says so
    assert "backend ptrace" in r.stderr and "mount sysfs" in r.stderr, r.stderr
    stacks = parse_stacks(root.hostpath(out).read_text())
    wpath = root.inside + "/zlib_loop.py"
    chain = python_chain(wpath, SourceInfo(root.host / "zlib_loop.py"))
    total = sum(c for _, _, c in stacks)
    assert total >= 100, "only %d samples" % total
    leaf_libz = [(fr, c) for _, fr, c in stacks if fr and is_libz(fr[-1])]
    n_libz = sum(c for _, c in leaf_libz)
    assert n_libz >= 0.8 * total, "only %d of %d samples end in libz:\n%s" % (
        n_libz, total, "\n".join("%s %d" % (fr[-3:], c) for _, fr, c in stacks[:10]))

    def problem(frames):
        if frames[0][0] != "_start":
            return "does not start at _start: %s" % frames[:2]
        py = [f for f in frames if f[1].startswith(wpath + ":")]
        if py != chain:
            return "Python frames %s" % py
        after = frames[frames.index(chain[-1]) + 1:]
        if any(f[1].startswith("/") for f in after):
            return "Python frames below compress_report"
        if not any(f[0] == "deflate" and is_libz(f) for f in after):
            return "no deflate under compress_report"
        return None

    bad = [(problem(fr), fr, c) for fr, c in leaf_libz if problem(fr)]
    nbad = sum(c for _, _, c in bad)
    assert nbad <= 0.01 * n_libz, "%d of %d libz samples are not whole chains:\n%s" % (
        nbad, n_libz, "\n".join("%s: %s" % (why, ";".join(n for n, _ in fr))
                                for why, fr, _ in bad[:5]))


def test_check_inside_root(root):
    p = root.start("zlib_loop.py")
    r = root.framewalk("check", "-p", p.pid)
    assert r.returncode == 0, r.stdout + r.stderr
    text = r.stdout
    assert re.search(r"^  Python 3\.13\.\d+", text, re.M), text
    assert "user: root (uid 0" in text, text          # /etc/passwd, without NSS
    assert "BTF unknown (sysfs not mounted on /sys)" in text, text
    backends = {m.group(1): m.group(2) for m in
                re.finditer(r"^  (vm|ptrace|bpf)\s+(usable|limited|unusable)", text, re.M)}
    assert backends == {"vm": "usable", "ptrace": "usable", "bpf": "unusable"}, text
    assert "fix: mount -t sysfs sysfs /sys" in text, text
    j = root.framewalk("check", "-p", p.pid, "--json")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    env = doc["environment"]
    assert env["user"] == "root" and env["sysfs"] is False and env["btf"] is False, env


def test_no_nss_or_shared_objects_at_run_time(root, tmp_path):
    """Under strace, neither record nor check opens anything of NSS, the
    dynamic loader, gconv or debuginfod: the static binary needs none."""
    if not shutil.which("strace"):
        pytest.fail("strace missing (apt-get install strace; scripts/deps.sh test)")
    p = root.start("zlib_loop.py")
    for args in (("check", "-p", p.pid), ("record", "-p", p.pid, "--native", "-d", "1", "-q",
                                          "-o", root.inside + "/strace.collapsed")):
        log = tmp_path / "strace.log"
        r = root.framewalk(*args, prefix=("strace", "-f", "-qq", "-o", str(log),
                                          "-e", "trace=execve,open,openat,openat2"))
        assert r.returncode == 0, r.stderr
        lines = log.read_text().splitlines()
        start = [i for i, l in enumerate(lines) if "execve(\"%s\"" % root.fw in l]
        assert start, "framewalk's execve not in the trace"
        mine = lines[start[0]:]
        bad = [l for l in mine if re.search(
            r"nsswitch\.conf|libnss_|ld\.so\.cache|gconv|libdebuginfod|/etc/ld\.so", l)]
        assert not bad, "framewalk %s opened:\n%s" % (args[0], "\n".join(bad[:10]))
        assert any("/etc/passwd" in l for l in mine) or args[0] != "check"


class Tmux:
    def __init__(self):
        self.sock = "fwship-%s" % uuid.uuid4().hex[:10]

    def run(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.sock] + list(args), capture_output=True,
                              text=True, check=check, timeout=10)

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "fw").stdout

    def wait_for(self, pred, timeout=10.0):
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if pred(text):
                return text
            time.sleep(0.2)
        pytest.fail("screen never matched; last screen:\n%s" % text)

    def kill(self):
        self.run("kill-server", check=False)


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_top_inside_root(root, term, tmp_path):
    p = root.start("split.py", "--seconds", "60")
    rc = tmp_path / "rc"
    cmd = "env -i TERM=%s PATH=/usr/bin %s %s %s top -p %d -d 4 2>&1; echo $? > %s; sleep 30" % (
        term, CHROOT, root.root, root.fw, p.pid, rc)
    t = Tmux()
    try:
        t.run("new-session", "-d", "-s", "fw", "-x", "150", "-y", "30", cmd)
        screen = t.wait_for(lambda s: "hot_a" in s and "%Self" in s)
        if term == "dumb":
            assert "TERM=dumb cannot move the cursor; printing plain tables instead" in screen
        else:
            # the curses view: one table redrawn in place, with the key help line
            assert "printing plain tables" not in screen, screen
            assert "q quit" in screen and screen.count("%Self") == 1, screen
            assert screen.splitlines()[0].startswith("framewalk top: PID %d" % p.pid), screen
        deadline = time.monotonic() + 15
        while not rc.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert rc.exists(), "top did not end after -d 4:\n%s" % t.screen()
        time.sleep(0.1)
        assert rc.read_text().strip() == "0", t.screen()
    finally:
        t.kill()
    # the built-in terminfo went to a private temporary directory, removed again
    assert not list((root.root / "tmp").glob("framewalk-terminfo.*"))


# --------------------------------------------------------------------------
# --version
# --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["dynamic", "static"])
def test_version_names_the_commit(which):
    b = framewalk_path() if which == "dynamic" else str(static_binary())
    r = subprocess.run([b, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, r
    m = VERSION_RE.match(r.stdout.strip())
    assert m, r.stdout
    assert m.group("ver") == project_version()
    assert m.group("commit") == head_commit(), (
        "%s was built from %s, HEAD is %s (rebuild it)" % (b, m.group("commit"), head_commit()))
    assert m.group("kind") == which
    # the architecture of the arch file linked (src/arch/): this machine's
    assert m.group("arch") == {"x86_64": "x86-64", "aarch64": "aarch64"}.get(
        platform.machine(), platform.machine()), r.stdout


def test_version_without_git(tmp_path):
    """A tree with no .git: tools/version.sh finds no commit and meson's
    version.h says so; a `git archive` tree carries the commit it came from."""
    archive = tmp_path / "archive"
    archive.mkdir()
    tar = subprocess.run("git -C %s archive HEAD | tar -x -C %s" % (REPO, archive), shell=True)
    assert tar.returncode == 0
    r = subprocess.run(["sh", str(archive / "tools/version.sh"), str(archive)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == head_commit(), r
    # the same tree without what git archive wrote: a copy made by hand
    (archive / "tools/COMMIT").write_text("$Format:%h$\n")
    r = subprocess.run(["sh", str(archive / "tools/version.sh"), str(archive)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and r.stdout == "", r
    build = tmp_path / "b"
    r = subprocess.run(["meson", "setup", str(build), str(archive)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["ninja", "-C", str(build), "version.h"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '#define FRAMEWALK_COMMIT "unknown"' in (build / "version.h").read_text()


# --------------------------------------------------------------------------
# make install (meson install of the ordinary build)
# --------------------------------------------------------------------------

def test_install_puts_binary_man_page_and_docs(tmp_path):
    build = Path(framewalk_path()).parent
    dest = tmp_path / "dest"
    r = subprocess.run(["meson", "install", "-C", str(build), "--no-rebuild", "--destdir",
                        str(dest)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    bins = list(dest.glob("**/bin/framewalk"))
    assert len(bins) == 1, list(dest.rglob("*"))
    prefix = bins[0].parent.parent
    assert (prefix / "share/man/man1/framewalk.1").is_file()
    for doc in ("README.md", "CHECK.md", "EXIT-CODES.md", "FORMATS.md"):
        assert (prefix / "share/doc/framewalk" / doc).is_file(), doc
    v = subprocess.run([str(bins[0]), "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and VERSION_RE.match(v.stdout.strip()), v


# --------------------------------------------------------------------------
# The Debian package
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def deb():
    r = subprocess.run(["make", "-C", str(REPO), "deb"], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, "make deb failed:\n%s\n%s" % (r.stdout[-4000:], r.stderr[-4000:])
    debs = sorted((REPO / "build-deb").glob("framewalk_%s_amd64.deb" % project_version()))
    assert len(debs) == 1, "make deb wrote %s" % list((REPO / "build-deb").iterdir())
    return debs[0]


def test_deb_fields_and_contents(deb):
    def field(name):
        return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True,
                              text=True, check=True).stdout.strip()

    assert field("Package") == "framewalk"
    assert field("Version") == project_version()
    assert field("Architecture") == "amd64"
    depends = [d.strip().split(" ")[0] for d in field("Depends").split(",")]
    # computed by dh_shlibdeps from the binary's DT_NEEDED, with versions
    for lib in ("libc6", "libelf1", "libdw1", "libbpf1", "libprotobuf-c1", "libncursesw6",
                "zlib1g"):
        assert lib in depends, field("Depends")
    assert re.search(r"libdw1 \(>= [0-9.]+\)", field("Depends")), field("Depends")
    files = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                           check=True).stdout
    names = {line.split()[-1].lstrip(".") for line in files.splitlines()}
    for want in ("/usr/bin/framewalk", "/usr/share/man/man1/framewalk.1.gz",
                 "/usr/share/doc/framewalk/copyright", "/usr/share/doc/framewalk/README.md.gz",
                 "/usr/share/doc/framewalk/CHECK.md.gz"):
        assert want in names, "%s not in the package:\n%s" % (want, files)


def bookworm_base():
    """A Debian 12 root with apt and its package lists, made once with
    mmdebstrap (about a minute, from the network) and kept as a tarball
    beside the other cached roots; each run installs into a fresh copy."""
    BOOKWORM_BASE.parent.mkdir(parents=True, exist_ok=True)
    with open(str(BOOKWORM_BASE) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not BOOKWORM_BASE.is_file():
            part = Path("%s.part.%d.tar" % (BOOKWORM_BASE, os.getpid()))
            try:
                r = subprocess.run(["mmdebstrap", "--variant=apt", "--skip=cleanup/apt/lists",
                                    "bookworm", str(part), "http://deb.debian.org/debian"],
                                   capture_output=True, text=True, timeout=900)
                assert r.returncode == 0, "mmdebstrap failed:\n%s" % r.stderr[-4000:]
                os.rename(str(part), str(BOOKWORM_BASE))
            finally:
                if part.exists():
                    part.unlink()
    return BOOKWORM_BASE


def test_deb_installs_and_runs(deb):
    """apt installs the .deb (and the libraries it depends on, from Debian's
    mirror) into a fresh Debian 12 root; framewalk --version runs there."""
    base = bookworm_base()
    parent = Path("/var/cache/framewalk")
    target = Path(tempfile.mkdtemp(prefix="static-deb-test.", dir=str(parent)))
    try:
        subprocess.run(["tar", "-xf", str(base), "-C", str(target)], check=True)
        shutil.copy(str(deb), str(target / "tmp"))
        shutil.copy("/etc/resolv.conf", str(target / "etc" / "resolv.conf"))
        r = subprocess.run(
            [CHROOT, str(target), "sh", "-c", "apt-get update -qq && apt-get install -y "
             "--no-install-recommends /tmp/%s" % deb.name],
            capture_output=True, text=True, timeout=900,
            env=dict(ROOT_ENV, DEBIAN_FRONTEND="noninteractive"))
        assert r.returncode == 0, "apt-get install failed:\n%s\n%s" % (r.stdout[-3000:],
                                                                       r.stderr[-3000:])
        v = subprocess.run([CHROOT, str(target), "framewalk", "--version"],
                           capture_output=True, text=True, env=ROOT_ENV)
        assert v.returncode == 0, v.stderr
        m = VERSION_RE.match(v.stdout.strip())
        assert m and m.group("kind") == "dynamic", v.stdout
        assert m.group("ver") == project_version()
        assert m.group("commit") == head_commit()     # make deb packages HEAD
        assert (target / "usr/share/man/man1/framewalk.1.gz").is_file()
        h = subprocess.run([CHROOT, str(target), "framewalk", "check", "--help"],
                           capture_output=True, text=True, env=ROOT_ENV)
        assert h.returncode == 0 and h.stdout.startswith("usage: framewalk check"), h
    finally:
        if not any(m.startswith(str(target) + "/") for m in
                   subprocess.run(["findmnt", "-rno", "TARGET"], capture_output=True,
                                  text=True).stdout.split()):
            shutil.rmtree(str(target), ignore_errors=True)
