"""Production realities: targets whose files changed under them, targets in
a PID namespace, libraries that come and go, and a low open-file limit.

1. A copied interpreter (pyenv 3.12's executable and libpython, or Debian's
   static python3.11) started, then its executable or libpython deleted, or
   replaced by another build at the same path (the way an upgrade renames a
   new file over the old one), and a deleted C extension (tests/ext/fwext.c):
   `record` with the default backend and with whole stacks (--backend ptrace
   --native) finds the interpreter and gives the true chain of the workload
   in every sample (innermost frame included, complete to _start for whole
   stacks, named from the deleted files); `check -p` reports the module as
   "replaced on disk since the process started". Without the privilege to
   open a deleted libpython, discovery says so instead of "not a Python
   process".
2. `-X perf` inside `unshare --pid --fork --mount-proc`: the target writes
   /tmp/perf-1.map; framewalk reads it (trampolines named, as outside a
   namespace) and maps the target's own thread numbers to ours.
3. The module layer's counters: a library loaded mid-capture loads only that
   file, two targets of one interpreter load its files once, and the open
   descriptors (and mappings) of framewalk stay flat over a 20 s capture of a
   target loading and unloading libraries in a loop.
4. `ulimit -n 32`: a capture degrades and says so; lower, it fails with one
   line naming the limit and the fix, exit 1, and no output file.
"""
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from fwtest import (REPO, WORKLOADS, Result, SourceInfo, asan_build, framewalk_path, pyenv_root,
                    run_fw, wait_sampling)
from test_native import ENTRY_NAMES, Frame

PY312 = pyenv_root() / "versions" / "3.12.1"
PY311 = pyenv_root() / "versions" / "3.11.7"     # another build, to replace files with
STATIC311 = Path("/usr/bin/python3.11")
EXT_SRC = REPO / "tests" / "ext" / "fwext.c"
CHURN_SRC = REPO / "tests" / "ext" / "fwchurn.c"
SCRIPT = WORKLOADS / "realities.py"
CAPTURES = {
    "default": (),
    "native": ("--backend", "ptrace", "--native"),
}
REPLACED = "replaced on disk since the process started"
UNPRIVILEGED = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                "--inh-caps=-all"]


def fw_binary():
    env = os.environ.get("FRAMEWALK")
    if env:
        if not os.access(env, os.X_OK):
            pytest.fail("FRAMEWALK=%s is not an executable" % env)
        return env
    return framewalk_path()


def fw(*args, timeout=90, prefix=()):
    return run_fw(*args, timeout=timeout, prefix=prefix, binary=fw_binary())


class PerfMapFrame:
    """A frame named by /tmp/perf-PID.map (-X perf trampolines): no module, no line."""

    def __init__(self, text):
        self.text = self.name = text
        self.kind, self.file, self.module, self.line = "native", None, None, 0

    def __repr__(self):
        return self.text


def frame_of(text):
    return PerfMapFrame(text) if text.startswith("py::") else Frame(text)


def parse_native_collapsed(path):
    """[(thread_name, tid, [frames] outermost first, count)] (as test_native's, with perf-map names)."""
    out = []
    for no, line in enumerate(Path(path).read_text().splitlines(), 1):
        stack, sep, count = line.rpartition(" ")
        assert sep and count.isdigit(), "line %d: no count: %r" % (no, line)
        parts = stack.split(";")
        m = re.match(r"^(?P<name>.*) \((?P<tid>\d+)\)$", parts[0])
        assert m, "line %d: bad thread %r" % (no, parts[0])
        out.append((m.group("name"), int(m.group("tid")), [frame_of(p) for p in parts[1:]],
                    int(count)))
    return out


def need(path):
    if not Path(path).exists():
        pytest.fail("missing %s (pyenv install / Debian python3.11)" % path)
    return Path(path)


# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------

class Target:
    """A started workload: proc, its main thread's tid, and the lines it printed."""

    def __init__(self, argv, env, prefix=()):
        self.proc = subprocess.Popen(list(prefix) + [str(a) for a in argv],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.pid = self.proc.pid
        self.lines = []
        self.wait_line("READY")
        tids = [int(l.split()[1]) for l in self.lines if l.startswith("TID ")]
        assert tids, self.lines
        self.tid = tids[0]

    def wait_line(self, word, timeout=30.0):
        deadline = time.monotonic() + timeout
        buf = b""
        while word not in self.lines:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("workload did not print %s within %.0f s" % (word, timeout))
            r, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.5))
            if not r:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                self.proc.wait()
                pytest.fail("workload exited (%s) before %s: %s" % (
                    self.proc.returncode, word, self.proc.stderr.read().decode(errors="replace")))
            buf += chunk
            *done, buf = buf.split(b"\n")
            self.lines += [l.decode() for l in done]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()


class CopiedPython:
    """An interpreter copied into its own directory. 'shared': pyenv 3.12's
    executable and libpython (LD_LIBRARY_PATH makes the copy of libpython the
    one loaded; the standard library stays in place through PYTHONHOME, or
    with stdlib=True is copied too, without its tests, so that other users
    can run the copy); 'static': Debian's /usr/bin/python3.11, which holds
    the runtime itself."""

    STDLIB_SKIP = ("test", "idlelib", "tkinter", "ensurepip", "lib2to3", "site-packages",
                   "turtledemo", "__pycache__")

    def __init__(self, root, kind, stdlib=False):
        self.kind = kind
        self.dir = Path(root) / ("python-" + kind)
        (self.dir / "bin").mkdir(parents=True)
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        if kind == "shared":
            prefix = need(PY312)
            self.exe = self.dir / "bin" / "python3.12"
            shutil.copy2(str(prefix / "bin" / "python3.12"), str(self.exe))
            (self.dir / "lib").mkdir()
            self.lib = self.dir / "lib" / "libpython3.12.so.1.0"
            shutil.copy2(str(prefix / "lib" / "libpython3.12.so.1.0"), str(self.lib))
            self.env["LD_LIBRARY_PATH"] = str(self.dir / "lib")
            self.env["PYTHONHOME"] = str(prefix)
            if stdlib:
                skip = self.STDLIB_SKIP
                shutil.copytree(str(prefix / "lib" / "python3.12"),
                                str(self.dir / "lib" / "python3.12"),
                                ignore=lambda d, names: [n for n in names if n in skip or
                                                         n.startswith(("config-", "_test"))])
                self.env["PYTHONHOME"] = str(self.dir)
            self.include = prefix / "include" / "python3.12"
            self.ext_suffix = ".cpython-312-x86_64-linux-gnu.so"
        else:
            self.exe = self.dir / "bin" / "python3.11"
            shutil.copy2(str(need(STATIC311)), str(self.exe))
            self.lib = None
            self.env["PYTHONHOME"] = "/usr"
        for p in self.dir.rglob("*"):
            p.chmod(p.stat().st_mode | 0o055)
        self.dir.chmod(0o755)
        self.targets = []

    def start(self, *args, prefix=()):
        t = Target([self.exe, "-B", SCRIPT] + list(args), self.env, prefix=prefix)
        self.targets.append(t)
        maps = open("/proc/%d/maps" % t.pid).read()
        assert str(self.exe) in maps, "the copy is not what runs"
        if self.lib:
            assert str(self.lib) in maps, "LD_LIBRARY_PATH did not pick the copied libpython"
        return t

    def close(self):
        for t in self.targets:
            t.stop()


def replace_file(path, other):
    """What an upgrade does: the new file renamed over the old name."""
    tmp = Path(str(path) + ".new")
    shutil.copy2(str(other), str(tmp))
    os.replace(str(tmp), str(path))


def change_file(path, how, other):
    if how == "deleted":
        os.unlink(str(path))
    else:
        replace_file(path, other)


def build_ext(include, suffix, out_dir, frame_pointers=False):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    so = out_dir / ("fwext" + suffix)
    subprocess.run(["gcc", "-O2", "-g", "-shared", "-fPIC",
                    "-fno-omit-frame-pointer" if frame_pointers else "-fomit-frame-pointer",
                    "-I" + str(include), str(EXT_SRC), "-o", str(so)], check=True,
                   capture_output=True, timeout=120)
    so.chmod(0o755)
    return so


@pytest.fixture
def scratch():
    """A directory other users can read (the unprivileged cases run as nobody)."""
    d = Path(tempfile.mkdtemp(prefix="fw-realities-", dir="/tmp"))
    d.chmod(0o755)
    made = []

    def copy(kind, stdlib=False):
        c = CopiedPython(d, kind, stdlib)
        made.append(c)
        return c

    copy.dir = d
    copy.out = d / "out"
    copy.out.mkdir()
    copy.out.chmod(0o777)
    yield copy
    for c in made:
        c.close()
    shutil.rmtree(str(d), ignore_errors=True)


# --------------------------------------------------------------------------
# The true chains of realities.py (Python frames, outermost first)
# --------------------------------------------------------------------------

SRC = SourceInfo(SCRIPT)
SPATH = str(SCRIPT)


def P(name, lines):
    return (name, frozenset(lines))


def spin_chains(call_from):
    """Every chain a sample of the spinning main thread may have; the last is the full one."""
    head = [P("<module>", SRC.lines("call_main")), P("main", SRC.lines(call_from))]
    call_middle = SRC.lines("call_middle")
    return [
        head + [P("spin", SRC.lines("spin_loop") | call_middle)],
        head + [P("spin", call_middle), P("middle", SRC.own_lines("middle"))],
        head + [P("spin", call_middle), P("middle", SRC.lines("call_leaf")),
                P("leaf", SRC.lines("leaf"))],
    ]


def ext_chains(call_from):
    head = [P("<module>", SRC.lines("call_main")), P("main", SRC.lines(call_from))]
    return [head + [P("ext_spin", SRC.lines("ext_loop") | SRC.lines("call_run"))],
            head + [P("ext_spin", SRC.lines("call_run"))]]


def py_frames(frames):
    return [f for f in frames if f.kind == "py" and f.file == SPATH]


def matches(chain, frames):
    py = py_frames(frames)
    return len(py) == len(chain) and all(f.name == n and f.line in l
                                         for f, (n, l) in zip(py, chain))


def show(stacks, n=5):
    top = sorted(stacks, key=lambda s: -s[1])[:n]
    return "\n".join("  %5d  %s" % (c, ";".join(f.text for f in fr)) for fr, c in top)


def capture(pid, out, tag, opts, seconds=2, rate=200):
    txt, col = Path(out) / (tag + ".txt"), Path(out) / (tag + ".collapsed")
    r = fw("record", "-p", pid, *opts, "-d", seconds, "-r", rate, "-q", "-o", txt, "-o", col)
    assert r.returncode == 0, r
    return parse_native_collapsed(col), txt.read_text(), r


def report_line(report, label):
    m = re.search(r"^%s:\s+(.*)$" % re.escape(label), report, re.M)
    return m.group(1) if m else None


def modules_counts(report):
    line = report_line(report, "Modules")
    assert line, "no Modules line in the report:\n" + report[:2000]
    m = re.match(r"(\d+) files loaded, (\d+) reused; mappings re-read (\d+) times?", line)
    assert m, line
    return tuple(int(x) for x in m.groups())


def check_samples(samples, tid, chains, native, what, min_full=0.8, extra=None):
    """Every sample of tid is one of chains (the last the full one, most of
    them); with native stacks each is complete (outermost frame a thread
    entry) and passes extra(frames) -> None or why not."""
    mine = [(fr, c) for _, t, fr, c in samples if t == tid]
    total = sum(c for _, c in mine)
    assert total >= 50, "only %d samples of the main thread (%s)\n%s" % (total, what, show(mine))
    bad, full, without_ext = {}, 0, 0
    for frames, c in mine:
        why = None
        if not any(matches(ch, frames) for ch in chains):
            why = "Python chain %s" % [(f.name, f.line) for f in py_frames(frames)]
        elif native:
            roots = [f for f in frames if f.kind != "kernel"]
            if not roots or roots[0].name not in ENTRY_NAMES:
                why = "incomplete (outermost %s)" % (roots[0].text if roots else None)
            elif extra:
                why = extra(frames)
                if why == TRUE_WITHOUT_EXT:
                    without_ext += c
        if why:
            bad.setdefault(why, []).append((frames, c))
        elif matches(chains[-1], frames):
            full += c
    nbad = sum(c for v in bad.values() for _, c in v)
    msg = "\n".join("%s: %d\n%s" % (w, sum(c for _, c in v), show(v, 2)) for w, v in bad.items())
    assert nbad <= 0.01 * total, "%s: %d of %d samples are not the true chain\n%s" % (
        what, nbad, total, msg)
    assert full >= min_full * total, "%s: only %d of %d samples reach the innermost frame\n%s" % (
        what, full, total, show(mine))
    # (A plain build's bound: under the sanitizer on a loaded machine 8 of 150,
    # 5.3%, once, where the plain build had 0-3 of ~395.)
    assert asan_build() or without_ext <= 0.05 * total, (
        "%s: %d of %d samples without the extension's frames" % (what, without_ext, total))


def named_interpreter(frames):
    """Whole stacks of a copied pyenv build: the interpreter's frames from
    _start to the first Python frame named from its (deleted) files."""
    first_py = next(i for i, f in enumerate(frames) if f.kind == "py")
    names = [f.name for f in frames[:first_py] if f.kind == "native"]
    if "Py_BytesMain" not in names:
        return "no Py_BytesMain (libpython unnamed?): %s" % names[:6]
    if any("+0x" in n for n in names):
        return "an unnamed frame between _start and the Python frames: %s" % names
    return None


def check_replaced(pid, module_prefix, how):
    r = fw("check", "-p", pid, "-v")
    rows = r.stdout.splitlines()
    at = [i for i, l in enumerate(rows) if l.strip().startswith(module_prefix)]
    assert at, "no %s row in check:\n%s" % (module_prefix, r.stdout)
    note = rows[at[0] + 1]
    assert REPLACED in note, "check does not say %r under %s:\n%s" % (REPLACED, module_prefix,
                                                                      r.stdout)
    assert ("another file" in note) == (how == "replaced"), note
    doc = json.loads(fw("check", "-p", pid, "--json").stdout)
    m = next(m for m in doc["modules"] if m["name"].startswith(module_prefix))
    assert m["replaced_on_disk"] is True and m["on_disk"] == how, m
    assert m["error"] is None, m
    assert doc["target"]["python"], doc["target"]


# --------------------------------------------------------------------------
# 1. Deleted and replaced files
# --------------------------------------------------------------------------

@pytest.mark.parametrize("capture_kind", sorted(CAPTURES))
@pytest.mark.parametrize("how", ["deleted", "replaced"])
@pytest.mark.parametrize("what", ["executable", "libpython"])
def test_shared_interpreter_files(what, how, capture_kind, scratch, tmp_path):
    py = scratch("shared")
    t = py.start("spin")
    path, other = (py.exe, need(PY311) / "bin" / "python3.11") if what == "executable" else \
        (py.lib, need(PY311) / "lib" / "libpython3.11.so.1.0")
    change_file(path, how, other)
    assert "(deleted)" in open("/proc/%d/maps" % t.pid).read()
    native = capture_kind == "native"
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES[capture_kind])
    assert report_line(report, "Python").startswith("3.12.1"), report[:800]
    assert not report_line(report, "Unreadable"), report[:2000]
    check_samples(samples, t.tid, spin_chains("call_spin"), native,
                  "%s %s, %s" % (what, how, capture_kind),
                  extra=named_interpreter if native else None)
    if native:
        pct = float(report_line(report, "Unwinding").split("%")[0])
        assert pct >= 99.0, report[:2000]
    check_replaced(t.pid, path.name, how)
    assert t.proc.poll() is None, "the target died"


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_static_interpreter_executable(how, scratch, tmp_path):
    """The static build holds _PyRuntime in its executable: discovery itself
    must read the deleted file (this said "not a Python process")."""
    py = scratch("static")
    t = py.start("spin")
    change_file(py.exe, how, need(PY311) / "bin" / "python3.11")
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES["default"])
    assert report_line(report, "Python").startswith("3.11"), report[:800]
    check_samples(samples, t.tid, spin_chains("call_spin"), False, "static exe " + how)
    # Whole stacks: the Python chain merged, through the stripped executable's CFI.
    samples, report, r = capture(t.pid, tmp_path, "nat", CAPTURES["native"])
    pct = float(report_line(report, "Unwinding").split("%")[0])
    assert pct >= 99.0, report[:2000]
    check_samples(samples, t.tid, spin_chains("call_spin"), False, "static exe native " + how)
    check_replaced(t.pid, "python3.11", how)


TRUE_WITHOUT_EXT = ""   # ext_chain: a true stack without the extension's frames


def ext_chain(frames):
    """ext_spin -> fwext_run -> stage0 -> ... -> stageK [-> stage_end] [-> libc]."""
    py = py_frames(frames)
    at = frames.index(py[-1])
    ours = [f for f in frames[at + 1:] if f.file == "fwext.c"]
    names = [f.name for f in ours]
    if not names or names[0] != "fwext_run":
        below = frames[at + 1:]
        # Two true stacks have no fwext_run: the interpreter running
        # ext_spin's own bytecode between calls (its frames are ext_spin's),
        # and fwext_run's last line, 'return PyLong_FromLong(sum)', which
        # gcc -O2 compiles to a jump (a tail call): PyLong_FromLong and what
        # it calls then return straight to the interpreter (2-4 of ~400
        # samples in one CI run). Each is a few in a thousand, bounded below.
        if not below:
            return TRUE_WITHOUT_EXT
        if below[0].name == "PyLong_FromLong" and not any(f.file == "fwext.c" for f in below):
            return TRUE_WITHOUT_EXT
        return "no fwext_run under ext_spin: %s" % [f.text for f in below[:5]]
    stages = names[1:]
    if stages and stages[-1] == "stage_end":
        stages = stages[:-1]
    if stages != ["stage%d" % i for i in range(len(stages))]:
        return "stages out of order: %s" % names
    # Named from the deleted file; only a PLT stub (no symbol) may be innermost.
    if any(re.match(r"^fwext\..*\+0x", f.name) for f in frames[:-1]):
        return "an unnamed frame of the extension"
    first = frames.index(ours[0])
    if any(f.kind == "py" for f in frames[first:]):
        return "Python frames under the extension"
    return None


@pytest.mark.parametrize("capture_kind", sorted(CAPTURES))
@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_extension_module(how, capture_kind, scratch, tmp_path):
    py = scratch("shared")
    so = build_ext(py.include, py.ext_suffix, scratch.dir / "ext")
    other = build_ext(py.include, py.ext_suffix, scratch.dir / "ext-fp", frame_pointers=True)
    t = py.start("ext", so.parent)
    change_file(so, how, other)
    native = capture_kind == "native"
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES[capture_kind])
    check_samples(samples, t.tid, ext_chains("call_ext_spin"), native, "extension " + how,
                  extra=ext_chain if native else None)
    if native:
        pct = float(report_line(report, "Unwinding").split("%")[0])
        assert pct >= 99.0, report[:2000]
    check_replaced(t.pid, so.name, how)


def test_unprivileged_deleted_libpython_names_the_cause(scratch, tmp_path):
    """As nobody, without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, a deleted
    libpython cannot be opened: discovery says so (exit 6), with the fix."""
    py = scratch("shared", stdlib=True)
    t = py.start("spin", prefix=UNPRIVILEGED)
    os.unlink(str(py.lib))
    r = fw("record", "-p", t.pid, "-d", "1", "-q", "-o", scratch.out / "out.txt",
           prefix=UNPRIVILEGED)
    assert r.returncode == 6, r
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(err) == 1, r
    assert "not a Python process" not in err[0], r
    assert str(py.lib) in err[0] and "deleted" in err[0], r
    assert "map_files" in err[0] and "CAP_CHECKPOINT_RESTORE" in err[0], r
    assert not list(scratch.out.iterdir()), list(scratch.out.iterdir())


def test_unprivileged_deleted_executable(scratch, tmp_path):
    """/proc/PID/exe needs no privilege: a deleted static executable is read by its owner."""
    py = scratch("static")
    t = py.start("spin", prefix=UNPRIVILEGED)
    os.unlink(str(py.exe))
    out = scratch.out / "out.collapsed"
    r = fw("record", "-p", t.pid, "-d", "2", "-r", "200", "-q", "-o", out, prefix=UNPRIVILEGED)
    assert r.returncode == 0, r
    check_samples(parse_native_collapsed(out), t.tid, spin_chains("call_spin"), False,
                  "unprivileged, static exe deleted")


# --------------------------------------------------------------------------
# 2. -X perf inside a PID namespace
# --------------------------------------------------------------------------

def ns_child(pid, timeout=10.0):
    """The process unshare --fork started (its only child)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
        except FileNotFoundError:
            kids = []
        if kids:
            return int(kids[0])
        time.sleep(0.05)
    pytest.fail("unshare started no child")


def trampolines(samples, tid):
    mine = [(fr, c) for _, t, fr, c in samples if t == tid]
    total = sum(c for _, c in mine)
    named = {}
    unnamed = 0
    for fr, c in mine:
        for name in {f.name for f in fr if f.name.startswith("py::")}:
            named[name] = named.get(name, 0) + c
        if any(f.name.startswith("[anon]+0x") for f in fr):
            unnamed += c
    return total, named, unnamed


def test_perf_map_in_pid_namespace(tmp_path):
    exe = need(PY312) / "bin" / "python3.12"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    argv = [exe, "-X", "perf", "-B", SCRIPT, "spin"]
    outside = Target(argv, env)
    inside = Target(argv, env, prefix=["unshare", "--pid", "--fork", "--mount-proc"])
    pid = None
    try:
        pid = ns_child(inside.pid)
        status = open("/proc/%d/status" % pid).read()
        assert re.search(r"^NSpid:\s+%d\s+1$" % pid, status, re.M), status
        # The target's own numbers: its pid is 1 there, and so is its main thread's.
        assert inside.tid == 1, inside.lines
        assert os.path.exists("/proc/%d/root/tmp/perf-1.map" % pid)
        time.sleep(0.5)     # the trampolines of the loop are written by now
        got = {}
        for tag, target_pid, tid in (("outside", outside.pid, outside.tid),
                                     ("inside", pid, pid)):
            samples, report, r = capture(target_pid, tmp_path, tag,
                                         ("--backend", "ptrace", "--native-all"))
            got[tag] = trampolines(samples, tid)
        for tag, (total, named, unnamed) in got.items():
            assert total >= 50, "%s: %d samples of the main thread (tid as ours)" % (tag, total)
            want = "py::leaf:" + SPATH
            assert named.get(want, 0) >= 0.8 * total, (
                "%s: only %d of %d samples show the trampoline %s named (%s; %d with "
                "[anon] frames)" % (tag, named.get(want, 0), total, want, named, unnamed))
            assert unnamed <= 0.05 * total, "%s: %d of %d samples with [anon] frames" % (
                tag, unnamed, total)
    finally:
        outside.stop()
        # The namespace's init ignores what it has no handler for: SIGKILL it, then unshare.
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        inside.stop()


# --------------------------------------------------------------------------
# 3. The module layer: loads counted, files shared, descriptors flat
# --------------------------------------------------------------------------

def mapped_files(pid):
    """(device, inode) of every executable file mapping of pid."""
    out = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/") and parts[4] != "0":
                out.add((parts[3], parts[4]))
    return out


def test_dlopen_mid_capture_loads_only_that_file(scratch, tmp_path):
    py = scratch("shared")
    so = build_ext(py.include, py.ext_suffix, scratch.dir / "ext")
    t = py.start("dlopen", so.parent, "1.0")
    before = mapped_files(t.pid)
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES["native"], seconds=4)
    after = mapped_files(t.pid)
    t.wait_line("LOADED", timeout=1)
    new = after - before
    assert len(new) == 1, "the workload mapped %d new files: %s" % (len(new), new)
    loaded, reused, rereads = modules_counts(report)
    assert rereads >= 1, report[:2000]
    # Every file once: a reload of all modules would count the old ones again.
    assert loaded == len(after), "loaded %d files for %d mapped (%d before the dlopen)\n%s" % (
        loaded, len(after), len(before), report[:2000])
    mine = [(fr, c) for _, tid, fr, c in samples if tid == t.tid]
    late = [(fr, c) for fr, c in mine if matches(ext_chains("call_ext_spin_late")[-1], fr)]
    named = sum(c for fr, c in late if not ext_chain(fr))
    assert named >= 0.9 * sum(c for _, c in late) and named >= 50, (
        "%d of %d samples after the import have the extension's frames named\n%s"
        % (named, sum(c for _, c in late), show(late)))


def test_two_targets_share_one_interpreters_files(tmp_path):
    exe = need(PY312) / "bin" / "python3.12"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    a = Target([exe, "-B", SCRIPT, "spin"], env)
    b = Target([exe, "-B", SCRIPT, "spin"], env)
    try:
        fa, fb = mapped_files(a.pid), mapped_files(b.pid)
        txt = tmp_path / "two.txt"
        r = fw("record", "-p", a.pid, "-p", b.pid, "--backend", "ptrace", "--native", "-d", "1",
               "-q", "-o", txt)
        assert r.returncode == 0, r
        loaded, reused, rereads = modules_counts(txt.read_text())
        assert loaded == len(fa | fb), (loaded, len(fa), len(fb))
        assert reused >= len(fa & fb), (reused, len(fa & fb))
    finally:
        a.stop()
        b.stop()


def fw_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fw_maps(pid):
    """framewalk's mappings of files (inode not 0): a file mapped per load
    would grow them. Anonymous mappings are the allocator's (a sanitizer
    build's grow with its quarantine) and say nothing about files."""
    with open("/proc/%d/maps" % pid) as f:
        return sum(1 for line in f if len(line.split()) >= 5 and line.split()[4] != "0")


def test_descriptors_flat_while_libraries_come_and_go(scratch, tmp_path):
    churn_so = scratch.dir / "fwchurn.so"
    subprocess.run(["gcc", "-O2", "-g", "-shared", "-fPIC", str(CHURN_SRC), "-o", str(churn_so)],
                   check=True, capture_output=True, timeout=120)
    work = scratch.dir / "churn"
    work.mkdir()
    exe = need(PY312) / "bin" / "python3.12"
    t = Target([exe, "-B", SCRIPT, "churn", churn_so, work],
               dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    txt, col = tmp_path / "churn.txt", tmp_path / "churn.collapsed"
    p = subprocess.Popen([fw_binary(), "record", "-p", str(t.pid), "--backend", "ptrace",
                          "--native", "-d", "20", "-r", "100", "-q", "-o", str(txt), "-o",
                          str(col)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fds, maps = [], []
    try:
        deadline = time.monotonic() + 19
        # attached, the library loaded and dropped many times, first re-reads done
        wait_sampling(p, t.pid, cpu=1.0)
        while time.monotonic() < deadline and p.poll() is None:
            fds.append(fw_fds(p.pid))
            maps.append(fw_maps(p.pid))
            time.sleep(0.5)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        t.stop()
    assert p.returncode == 0, err.decode(errors="replace")
    loaded, reused, rereads = modules_counts(txt.read_text())
    # 10+ loads, each picked up by one of the map's re-reads: 15 re-reads
    # here unloaded, 5 once in CI (2026-12-02; each re-read then found
    # several loads): what is measured is the descriptors over them
    assert rereads >= 3 and loaded >= 10, (
        "the libraries did not come and go under the capture: %d loads, %d re-reads"
        % (loaded, rereads))
    assert len(fds) >= 20, fds
    # Flat: a descriptor (or a mapped file) kept per load would grow with rereads.
    assert max(fds) - min(fds) <= 2 and fds[-1] <= fds[0] + 1, "descriptors: %s" % fds
    assert max(maps) - min(maps) <= 4 and maps[-1] <= maps[0] + 3, "mappings: %s" % maps
    named = sum(c for _, _, fr, c in parse_native_collapsed(col)
                if any(f.name in ("fw_churn", "churn_step") for f in fr))
    assert named >= 50, "%d samples in the churned library named" % named


# --------------------------------------------------------------------------
# 4. A low open-file limit
# --------------------------------------------------------------------------

def limited(nofile):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    return set_limit


def record_limited(nofile, pid, out_dir, opts, seconds=2):
    txt, col = Path(out_dir) / "lim.txt", Path(out_dir) / "lim.collapsed"
    argv = [fw_binary(), "record", "-p", str(pid), *opts, "-d", str(seconds), "-r", "200", "-q",
            "-o", str(txt), "-o", str(col)]
    p = subprocess.run(argv, capture_output=True, timeout=90, preexec_fn=limited(nofile))
    return p, txt, col


@pytest.mark.parametrize("capture_kind", sorted(CAPTURES))
def test_ulimit_32_degrades_and_says_so(capture_kind, tmp_path):
    exe = need(PY312) / "bin" / "python3.12"
    t = Target([exe, "-B", SCRIPT, "spin"], dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    try:
        p, txt, col = record_limited(32, t.pid, tmp_path, CAPTURES[capture_kind])
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 0, err
        warnings = [l for l in err.splitlines() if l.strip()]
        assert len(warnings) == 1 and "ulimit -n 32" in warnings[0] and \
            "warning" in warnings[0], err
        check_samples(parse_native_collapsed(col), t.tid, spin_chains("call_spin"),
                      capture_kind == "native", "ulimit -n 32 " + capture_kind)
        report = txt.read_text()
        assert not report_line(report, "Unreadable"), report[:2000]
    finally:
        t.stop()


@pytest.mark.parametrize("nofile,opts", [
    (6, CAPTURES["default"]),
    (6, CAPTURES["native"]),
    (20, ("--backend", "bpf", "--native")),
], ids=["default-6", "native-6", "bpf-20"])
def test_too_low_limit_fails_with_one_line(nofile, opts, tmp_path):
    exe = need(PY312) / "bin" / "python3.12"
    t = Target([exe, "-B", SCRIPT, "spin"], dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    out = tmp_path / "out"
    out.mkdir()
    try:
        p, txt, col = record_limited(nofile, t.pid, out, opts)
    finally:
        t.stop()
    err = [l for l in p.stderr.decode(errors="replace").splitlines() if l.strip()]
    assert p.returncode == 1, (p.returncode, err)
    assert len(err) == 1, err
    assert err[0].startswith("framewalk: error: ") and "ulimit -n %d" % nofile in err[0] and \
        "raise it" in err[0], err
    assert not list(out.iterdir()), "files left behind: %s" % list(out.iterdir())


# --------------------------------------------------------------------------
# exec during a capture (issue 16, part 2)
# --------------------------------------------------------------------------

def record_exec(w, go, seconds, *args):
    """framewalk record of the exec target w for seconds: once it samples w,
    go is created and w runs 1.5 s of CPU before its exec."""
    argv = [framewalk_path(), "record", "-p", str(w.pid), "-d", str(seconds)] + [str(a) for a in args]
    t0 = time.monotonic()
    fw = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    try:
        wait_sampling(fw, w.pid, cpu=0.1)
        go.touch()
        out, err = fw.communicate(timeout=seconds + 60)
    finally:
        if fw.poll() is None:
            fw.kill()
            fw.wait()
    return Result(argv, fw.returncode, out, err, time.monotonic() - t0)


@pytest.mark.parametrize("backend", [[], ["--backend", "ptrace", "--native"], ["--backend", "vm"]],
                         ids=["default", "ptrace-native", "vm"])
def test_exec_into_python_mid_capture(tmp_path, workload, backend):
    """A process that execs into another Python program 1.5 s into a 4 s
    capture: samples of both programs, the second's threads labelled
    "(exec 1)", and the report's header states the exec and the time lost."""
    from fwtest import INTERP_BY_ID
    go = tmp_path / "go"
    w = workload(INTERP_BY_ID["py3.12"], "exec_into.py", "1.5", "python", str(go))
    txt, col, pb = tmp_path / "exec.txt", tmp_path / "exec.collapsed", tmp_path / "exec.pb.gz"
    r = record_exec(w, go, 6, "-r", "200", *backend, "-o", txt, "-o", col, "-o", pb)
    assert r.returncode == 0, r
    assert "exec'd" in r.stderr and "sampling it on" in r.stderr, r.stderr
    text, lines = txt.read_text(), col.read_text().splitlines()
    m = re.search(r"^Events: +(.*)$", text, re.M)
    assert m and "exec'd" in m.group(1) and "without samples" in m.group(1), text[:2000]
    before = sum(int(l.rpartition(" ")[2]) for l in lines
                 if ";before_exec (" in l and "(exec 1)" not in l.split(";")[0])
    after = sum(int(l.rpartition(" ")[2]) for l in lines
                if ";after_exec (" in l and "(exec 1)" in l.split(";")[0])
    # Each program's frames under its own label (the new program's start-up,
    # getpath and imports, is rightly "(exec 1)" too).
    stray = [l for l in lines if (";after_exec (" in l and "(exec 1)" not in l.split(";")[0])
             or (";before_exec (" in l and "(exec 1)" in l.split(";")[0])]
    # 1.5 s of its CPU at 200 Hz before, then the rest of the 6 s, a few ticks lost around the exec
    assert before >= 100 and after >= 200, (before, after, lines[:10])
    assert not stray, stray[:5]
    # the saved profile keeps the two programs apart, and its header
    r = run_fw("report", pb, "-f", "collapsed", timeout=30)
    assert r.returncode == 0, r
    assert sorted(r.stdout.splitlines()) == sorted(lines), r.stdout[:2000]
    r = run_fw("report", pb, timeout=30)
    assert re.search(r"^Events: .*exec'd", r.stdout, re.M), r.stdout[:2000]


def setarch_started(argv, env, what):
    """argv started under `setarch -R` (no address randomisation), READY
    read; a Workload for record_exec. Skips where setarch cannot do it."""
    from fwtest import INTERP_BY_ID, Workload, wait_ready
    if not shutil.which("setarch"):
        pytest.skip("setarch is not installed")
    proc = subprocess.Popen(["setarch", "-R"] + argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    w = Workload(INTERP_BY_ID["py3.12"], what, (), proc, WORKLOADS, str(WORKLOADS), None)
    try:
        wait_ready(proc, what=what + " under setarch -R")
        with open("/proc/%d/personality" % proc.pid) as f:
            personality = int(f.read(), 16)
    except (OSError, AssertionError) as e:
        w.stop()
        pytest.skip("setarch -R did not run here: %s" % e)
    if not personality & 0x0040000:             # ADDR_NO_RANDOMIZE
        w.stop()
        pytest.skip("setarch -R did not take")
    return w


@pytest.mark.parametrize("into", ["python", "sleep"])
def test_exec_seen_without_address_randomisation(tmp_path, into):
    """Under `setarch -R` (no address randomisation) an exec lays the new
    program out where the kernel always does; it is still seen. Into the
    same interpreter on another script, and into /bin/sleep."""
    from fwtest import INTERP_BY_ID
    py = INTERP_BY_ID["py3.12"]
    py.check()
    if py.kind != "host":
        pytest.skip("a host interpreter is needed")
    go = tmp_path / "go"
    w = setarch_started(py.argv("-B", str(WORKLOADS / "exec_into.py"), "1.5", into, str(go)),
                        py.env(), "exec_into.py")
    try:
        txt = tmp_path / "exec.txt"
        r = record_exec(w, go, 6 if into == "python" else 20, "-r", "200", "-o", txt)
        assert r.returncode == 0, r
        if into == "python":
            assert "exec'd" in r.stderr and "sampling it on" in r.stderr, r.stderr
            assert "after_exec" in txt.read_text()
        else:
            assert any("not Python" in l and "its sampling stopped" in l
                       for l in r.stderr.splitlines()), r.stderr
    finally:
        w.stop()


def test_exec_seen_when_only_the_executable_differs(tmp_path):
    """Why the exec check keeps the executable's identity (the device and
    inode /proc/PID/exe names) beside the layout /proc/PID/stat shows: under
    `setarch -R`, pyenv's python3.12 exec'ing pyenv's python3.11 through a
    path of the same length, with the same arguments and environment, has
    every layout field of stat the same before and after (code, data, heap,
    stack, arguments, environment: checked by hand; 20f58f6 compared those
    alone and missed this exec). The new program is sampled on as
    "(exec 1)"."""
    if not (PY312 / "bin" / "python3.12").exists() or not (PY311 / "bin" / "python3.11").exists():
        pytest.skip("pyenv's 3.12.1 and 3.11.7 are needed")
    links = tmp_path / "x"
    links.mkdir()
    (links / "a").symlink_to(PY312 / "bin" / "python3.12")
    (links / "b").symlink_to(PY311 / "bin" / "python3.11")
    go = tmp_path / "go"
    env = dict(os.environ, FW_EXEC_NEXT=str(links / "b"))
    w = setarch_started([str(links / "a"), "-B", str(WORKLOADS / "exec_same_layout.py"), str(go)],
                        env, "exec_same_layout.py")
    try:
        txt = tmp_path / "exec.txt"
        r = record_exec(w, go, 6, "-r", "200", "-o", txt)
        assert r.returncode == 0, r
        assert "exec'd" in r.stderr and "sampling it on" in r.stderr, r.stderr
        text = txt.read_text()
        assert "before_exec" in text and "after_exec" in text, text[:2000]
    finally:
        w.stop()


def test_exec_into_not_python_stops_with_one_line(tmp_path, workload):
    from fwtest import INTERP_BY_ID
    go = tmp_path / "go"
    w = workload(INTERP_BY_ID["py3.12"], "exec_into.py", "1.5", "sleep", str(go))
    txt = tmp_path / "exec.txt"
    r = record_exec(w, go, 20, "-r", "200", "-o", txt)
    assert r.returncode == 0, r
    said = [l for l in r.stderr.splitlines() if "not Python" in l]
    assert len(said) == 2 and "its sampling stopped" in said[0], r.stderr
    assert "after" in said[1], r.stderr        # the stop line: "... not Python after 1.6 s"
    text = txt.read_text()
    assert re.search(r"^Events: .*/bin/sleep.*not a Python program", text, re.M), text[:2000]
    assert "before_exec" in text


# --------------------------------------------------------------------------
# 5. Files mapped again as data
# --------------------------------------------------------------------------

def data_mappings_below_images(pid, paths):
    """The paths mapped at offset 0 without execute, below where the loader put them."""
    rows = [l.split() for l in open("/proc/%d/maps" % pid).read().splitlines()]
    found = []
    for path in paths:
        mine = [r for r in rows if len(r) >= 6 and r[5] == path]
        image = min(int(r[0].split("-")[0], 16) for r in mine if "x" in r[1])
        data = [r for r in mine if "x" not in r[1] and int(r[2], 16) == 0 and
                int(r[0].split("-")[0], 16) < image]
        found += [path] if data else []
    return found


@pytest.mark.parametrize("kind", ["shared", "static"])
def test_own_files_mapped_as_data(kind, scratch, tmp_path):
    """A process that maps its interpreter, libpython and libc again as data
    (as a tool reading ELF files does; framewalk's own agent is one) below
    the loaded images: each module's load address is the image beside its
    code, not the first mapping of the file, so discovery finds the runtime
    and whole stacks are named and complete (libc and libpython frames
    included) in every sample."""
    py = scratch(kind)
    t = py.start("mapown")
    mapped = [l.split(" ", 1)[1] for l in t.lines if l.startswith("MAPPED ")]
    below = data_mappings_below_images(t.pid, mapped)
    assert str(py.exe) in below and any("libc.so" in p for p in below), (mapped, below)
    assert kind == "static" or str(py.lib) in below, (mapped, below)
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES["default"])
    version = "3.12.1" if kind == "shared" else "3.11"
    assert report_line(report, "Python").startswith(version), report[:800]
    check_samples(samples, t.tid, spin_chains("call_spin_mapped"), True, "mapown " + kind,
                  extra=named_interpreter)
    pct = float(report_line(report, "Unwinding").split("%")[0])
    assert pct >= 99.0, report[:2000]
    assert t.proc.poll() is None, "the target died"


MAP_AS_DATA_C = r'''
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0 || fstat(fd, &st) || mmap(NULL, st.st_size, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE, fd, 0) == MAP_FAILED)
            return 1;
        close(fd);
    }
    printf("READY\n");
    fflush(stdout);
    pause();
    return 0;
}
'''


def test_libpython_mapped_as_data_is_not_python(tmp_path):
    """A C program that maps an interpreter and its libpython as data (as
    framewalk's agent maps its targets' files), and a file named as an old
    libpython, runs no Python: record says so (not that the version is too
    old), and does not read a runtime from the files' bytes."""
    src = tmp_path / "mapper.c"
    src.write_text(MAP_AS_DATA_C)
    helper = tmp_path / "mapper"
    subprocess.run(["gcc", "-O1", "-o", str(helper), str(src)], check=True, timeout=60)
    lib = need(PY312) / "lib" / "libpython3.12.so.1.0"
    # and a file named as a Python too old to read (no _PyRuntime): not "3.6 is not supported"
    old = tmp_path / "libpython3.6m.so.1.0"
    shutil.copy2(os.path.realpath("/lib/x86_64-linux-gnu/libz.so.1") if os.path.exists(
        "/lib/x86_64-linux-gnu/libz.so.1") else str(helper), str(old))
    proc = subprocess.Popen([str(helper), str(lib), str(need(PY312) / "bin" / "python3.12"),
                             str(old)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"READY\n"
        assert str(lib) in open("/proc/%d/maps" % proc.pid).read()
        r = fw("record", "-p", proc.pid, "-d", "1", "-o", tmp_path / "x.txt")
        assert r.returncode != 0, r
        assert "is not a Python process" in r.stderr, r.stderr
        assert not (tmp_path / "x.txt").exists()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("kind", ["shared", "static"])
def test_code_remapped_to_anonymous_memory(kind, scratch, tmp_path):
    """The interpreter's code moved to anonymous memory at the same address
    (what huge-page text remappers do): its file keeps no executable
    mapping, and discovery places it from the mappings left (elf/image.h):
    the Python chains are found as before."""
    py = scratch(kind)
    t = py.start("remapcode")
    said = [l for l in t.lines if l.startswith("REMAPPED ")]
    assert said and int(said[0].split()[-1]) >= 1, t.lines
    path = said[0].split()[1]
    rows = [l.split() for l in open("/proc/%d/maps" % t.pid).read().splitlines()]
    assert not [r for r in rows if len(r) >= 6 and r[5] == path and "x" in r[1]], path
    samples, report, r = capture(t.pid, tmp_path, "cap", ("--python-only",))
    version = "3.12.1" if kind == "shared" else "3.11"
    assert report_line(report, "Python").startswith(version), report[:800]
    check_samples(samples, t.tid, spin_chains("call_spin_remapped"), False, "remapcode " + kind)
    assert t.proc.poll() is None, "the target died"


def test_file_loaded_twice_is_two_modules(scratch, tmp_path):
    """libz loaded a second time with dlmopen (a namespace of its own): two
    images of one file, each a module, so the frames of the second copy,
    where the target spins, are named (crc32) and the stacks complete."""
    py = scratch("shared")
    t = py.start("dlmopen2")
    rows = [l.split() for l in open("/proc/%d/maps" % t.pid).read().splitlines()]
    code = [r for r in rows if len(r) >= 6 and "libz.so" in r[5] and "x" in r[1]]
    assert len(code) == 2, "libz is not mapped twice:\n%s" % "\n".join(" ".join(r) for r in code)
    samples, report, r = capture(t.pid, tmp_path, "cap", CAPTURES["default"])
    mine = [(fr, c) for _, tid, fr, c in samples if tid == t.tid]
    total = sum(c for _, c in mine)
    libz = [(fr, c) for fr, c in mine if any(f.module and "libz.so" in f.module for f in fr)]
    in_crc = sum(c for fr, c in libz if any(f.name.startswith("crc32") for f in fr
                                            if f.module and "libz.so" in f.module))
    unnamed = [(fr, c) for fr, c in libz if any("+0x" in f.name for f in fr
                                               if f.module and "libz.so" in f.module)]
    assert total >= 50 and in_crc >= 0.8 * total, "%d of %d samples in libz's crc32\n%s" % (
        in_crc, total, show(mine))
    assert not unnamed, show(unnamed)
    roots = [fr for fr, c in mine if not fr or fr[0].name not in ENTRY_NAMES]
    assert len(roots) <= 0.01 * len(mine), show([(fr, 1) for fr in roots])
    assert t.proc.poll() is None, "the target died"
