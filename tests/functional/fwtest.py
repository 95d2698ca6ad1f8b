"""Helpers shared by framewalk's functional tests: interpreters, workloads,
source markers, output parsers and the expected call structure of
tests/workloads/structure.py."""
import ast
import os
import re
import select
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = REPO / "tests" / "workloads"
FRAMEWALK = Path(os.environ.get("FRAMEWALK") or os.environ.get("FRAMEWALK_BIN") or
                 str(REPO / "build" / "framewalk"))
SID_ROOT = Path(os.environ.get("FRAMEWALK_SID_ROOT", "/var/cache/framewalk/sid"))
CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def pyenv_root():
    env = os.environ.get("PYENV_ROOT")
    if env:
        return Path(env)
    exe = shutil.which("pyenv")
    if exe:
        try:
            out = subprocess.run([exe, "root"], capture_output=True, text=True,
                                 timeout=10)
            if out.returncode == 0 and out.stdout.strip():
                return Path(out.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    return Path("/root/.pyenv")


def pyenv_python(version):
    """The pyenv interpreter of a full version ("3.12.1"); the test fails without it."""
    exe = pyenv_root() / "versions" / version / "bin" / "python"
    if not os.access(str(exe), os.X_OK):
        pytest.fail("interpreter missing: %s (pyenv install %s)" % (exe, version))
    return str(exe)


# --------------------------------------------------------------------------
# Interpreters
# --------------------------------------------------------------------------

class Interp:
    """One interpreter under test. kind is 'host' or 'chroot'."""

    def __init__(self, ident, version, kind, exe, root=None):
        self.id = ident
        self.version = version          # (major, minor)
        self.kind = kind
        self.exe = exe                  # host path, or path inside the root
        self.root = root
        self._full_version = None

    def __repr__(self):
        return "Interp(%s)" % self.id

    def check(self):
        """Fail the test loudly if the interpreter is not there."""
        if self.kind == "host":
            if not os.access(self.exe, os.X_OK):
                pytest.fail("interpreter %s missing: %s is not an executable "
                            "(expected a pyenv or Debian install)" % (self.id, self.exe))
        else:
            inside = Path(str(self.root) + self.exe)
            if not self.root.is_dir():
                pytest.fail("sid root %s missing: create it with scripts/sid-root.sh "
                            "(needed for %s)" % (self.root, self.id))
            if not os.access(str(inside), os.X_OK):
                pytest.fail("interpreter %s missing: %s not in sid root %s "
                            "(run scripts/sid-root.sh; Debian unstable may have "
                            "dropped it)" % (self.id, self.exe, self.root))

    def argv(self, *args):
        if self.kind == "host":
            return [str(self.exe)] + list(args)
        return ["chroot", str(self.root), self.exe] + list(args)

    def env(self):
        if self.kind == "host":
            env = dict(os.environ)
        else:
            env = {"PATH": CHROOT_PATH, "LC_ALL": "C.UTF-8", "HOME": "/root"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
        return env

    @property
    def full_version(self):
        if self._full_version is None:
            self.check()
            out = subprocess.run(
                self.argv("-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"),
                capture_output=True, text=True, env=self.env(), timeout=30)
            assert out.returncode == 0, out.stderr
            self._full_version = out.stdout.strip()
            assert self._full_version.startswith("%d.%d." % self.version)
        return self._full_version

    def has_qualname(self):
        return self.version >= (3, 11)


def _interps():
    pr = pyenv_root()
    out = []
    for full in ("3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"):
        major, minor = full.split(".")[:2]
        out.append(Interp("py%s.%s" % (major, minor), (int(major), int(minor)), "host",
                          pr / "versions" / full / "bin" / "python"))
    out.append(Interp("py3.11-static", (3, 11), "host", Path("/usr/bin/python3.11")))
    for minor in (13, 14, 15):
        out.append(Interp("sid-py3.%d" % minor, (3, minor), "chroot",
                          "/usr/bin/python3.%d" % minor, root=SID_ROOT))
    return out


INTERPS = _interps()
INTERP_BY_ID = {i.id: i for i in INTERPS}


# --------------------------------------------------------------------------
# Source markers and function spans
# --------------------------------------------------------------------------

MARKER_RE = re.compile(r"#.*$")
MARKER_NAME_RE = re.compile(r"@([A-Za-z_]\w*)")


class SourceInfo:
    """Markers ('# @name' comments) and function spans of one workload file."""

    def __init__(self, path):
        self.path = Path(path)
        text = self.path.read_text(encoding="utf-8")
        self.markers = {}
        for no, line in enumerate(text.splitlines(), 1):
            m = MARKER_RE.search(line)
            if not m:
                continue
            for name in MARKER_NAME_RE.findall(m.group(0)):
                self.markers.setdefault(name, set()).add(no)
        self.functions = {}     # qualname -> (first, last, own lines)
        tree = ast.parse(text, filename=str(self.path))
        self._walk(tree, "")

    def _walk(self, node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + child.name
                self._add(qual, child)
                self._walk(child, qual + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                self._walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.Lambda):
                self._add(prefix + "<lambda>", child)
                self._walk(child, prefix + "<lambda>.<locals>.")
            elif isinstance(child, ast.GeneratorExp):
                self._add(prefix + "<genexpr>", child)
                self._walk(child, prefix + "<genexpr>.<locals>.")
            else:
                self._walk(child, prefix)

    def _add(self, qual, node):
        assert qual not in self.functions, "ambiguous qualname %s" % qual
        span = set(range(node.lineno, node.end_lineno + 1))
        own = set(span)
        for sub in ast.walk(node):
            if sub is not node and isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                # the def/class line itself runs in the enclosing function
                own -= set(range(sub.lineno + 1, sub.end_lineno + 1))
        self.functions[qual] = (node.lineno, node.end_lineno, own)

    def lines(self, *markers):
        out = set()
        for m in markers:
            assert m in self.markers, "marker @%s not in %s" % (m, self.path)
            out |= self.markers[m]
        return out

    def line(self, marker):
        lines = self.lines(marker)
        assert len(lines) == 1, "marker @%s on several lines" % marker
        return next(iter(lines))

    def own_lines(self, qual):
        assert qual in self.functions, "no function %s in %s" % (qual, self.path)
        return set(self.functions[qual][2])


def frame_name(interp, qualname):
    """The name framewalk must print: co_qualname on 3.11+, co_name before."""
    if interp.has_qualname():
        return qualname
    return qualname.rsplit(".", 1)[-1]


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------

class Workload:
    def __init__(self, interp, script, args, proc, host_dir, target_dir, cleanup_dir):
        self.interp = interp
        self.script = script
        self.args = args
        self.proc = proc
        self.pid = proc.pid
        self.host_dir = Path(host_dir)          # where the test reads the files
        self.target_dir = target_dir            # the directory as the target sees it
        self._cleanup_dir = cleanup_dir
        self._sources = {}

    def target_path(self, name):
        """A workload file's path as the interpreter has it (co_filename)."""
        return self.target_dir.rstrip("/") + "/" + name

    def source(self, name):
        if name not in self._sources:
            self._sources[name] = SourceInfo(self.host_dir / name)
        return self._sources[name]

    def tids(self):
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % self.pid))

    def pin(self, cpu):
        """Pin every thread it has now to one CPU."""
        for tid in self.tids():
            os.sched_setaffinity(tid, {cpu})

    def comm(self, tid):
        with open("/proc/%d/task/%d/comm" % (self.pid, tid), "rb") as f:
            return f.read().rstrip(b"\n").decode("utf-8", "replace")

    def thread_names(self):
        return {tid: self.comm(tid) for tid in self.tids()}

    def state(self, tid):
        """The one-letter scheduler state of thread TID (R, S, D, ...)."""
        with open("/proc/%d/task/%d/stat" % (self.pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0]

    def wait_asleep(self, tid, timeout=5.0):
        """Wait until thread TID has been asleep (S) for 0.1 s."""
        deadline = time.monotonic() + timeout
        since = None
        while time.monotonic() < deadline:
            if self.state(tid) == "S":
                since = since or time.monotonic()
                if time.monotonic() - since >= 0.1:
                    return
            else:
                since = None
            time.sleep(0.01)
        pytest.fail("thread %d of %d never settled asleep" % (tid, self.pid))

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdout, self.proc.stderr):
            if f:
                f.close()
        if self._cleanup_dir:
            shutil.rmtree(self._cleanup_dir, ignore_errors=True)
            self._cleanup_dir = None


def wait_until(cond, timeout, what, proc=None, detail=None):
    """Poll cond() until it returns something true, and return that; fail
    saying what was awaited after timeout seconds, or at once when proc (a
    Popen that must keep running meanwhile) exits. detail() adds to the
    message (default: proc's stderr once it has exited). The one way tests
    wait on a target or on framewalk: a condition with a deadline."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            if detail is None:
                err = proc.stderr.read() if proc.stderr else b""
                err = err.decode("utf-8", "replace") if isinstance(err, bytes) else err
            else:
                err = detail()
            pytest.fail("exited (%s) while waiting for %s:\n%s" % (proc.returncode, what, err))
        if time.monotonic() >= deadline:
            pytest.fail("timed out after %.0f s waiting for %s%s" % (
                timeout, what, "\n" + detail() if detail else ""))
        time.sleep(0.02)


def cpu_seconds(pid):
    """CPU time process pid has used, its exited threads included (utime +
    stime of /proc/PID/stat, in clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _reads_threads_of(fw_pid, pid):
    """Does framewalk fw_pid hold a file of /proc/PID/task/ open? Every backend's
    capture loop keeps each thread's stat or schedstat open while it samples
    (bpf opens them once its programs are attached)."""
    prefix = "/proc/%d/task/" % pid
    try:
        fds = os.listdir("/proc/%d/fd" % fw_pid)
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (fw_pid, fd)).startswith(prefix):
                return True
        except OSError:
            pass
    return False


def wait_sampling(fw, pid, cpu=0.5, timeout=30.0, detail=None):
    """Until framewalk (the Popen fw) is sampling pid and pid has since used
    cpu seconds of CPU: a cpu-mode capture has then had about rate * cpu
    ticks that found the target running, however loaded the machine."""
    wait_until(lambda: _reads_threads_of(fw.pid, pid), timeout,
               "framewalk to sample %d" % pid, fw, detail)
    start = cpu_seconds(pid)
    wait_until(lambda: cpu_seconds(pid) - start >= cpu, timeout,
               "%d to use %.1f s of CPU while sampled" % (pid, cpu), fw, detail)


def wait_ready(proc, timeout=30.0, what="workload"):
    """Read proc's stdout until a line READY; fail with its stderr if it dies."""
    deadline = time.monotonic() + timeout
    buf = b""
    fd = proc.stdout.fileno()
    while b"READY\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            pytest.fail("%s did not print READY within %.0f s" % (what, timeout))
        r, _, _ = select.select([fd], [], [], min(left, 0.5))
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
                proc.wait()
                pytest.fail("%s exited (%s) before READY: %s" % (what, proc.returncode, err))
            buf += chunk


def start_workload(interp, script, *args, ready=True):
    """Start tests/workloads/SCRIPT under INTERP. For a chroot interpreter the
    files are copied to <root>/tmp/fw-tests/<unique>/ and run from there."""
    interp.check()
    if interp.kind == "host":
        host_dir = WORKLOADS
        target_dir = str(WORKLOADS)
        cleanup = None
    else:
        unique = "%s-%s" % (interp.id, uuid.uuid4().hex[:12])
        host_dir = Path(str(interp.root)) / "tmp" / "fw-tests" / unique
        host_dir.mkdir(parents=True)
        for f in WORKLOADS.glob("*.py"):
            shutil.copy2(str(f), str(host_dir / f.name))
        # what workloads import beside them (vendor/: OpenTelemetry, for labels_app --otel)
        shutil.copytree(str(WORKLOADS / "vendor"), str(host_dir / "vendor"))
        target_dir = "/tmp/fw-tests/" + unique
        cleanup = host_dir
    argv = interp.argv("-B", target_dir + "/" + script, *args)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=interp.env())
    w = Workload(interp, script, args, proc, host_dir, target_dir, cleanup)
    if ready:
        try:
            wait_ready(proc, what="%s %s" % (interp.id, script))
        except BaseException:
            w.stop()
            raise
    return w


# --------------------------------------------------------------------------
# Running framewalk
# --------------------------------------------------------------------------

def framewalk_path():
    if not os.access(str(FRAMEWALK), os.X_OK):
        pytest.fail("framewalk binary missing: %s (build it first: meson setup build "
                    "&& ninja -C build)" % FRAMEWALK)
    return str(FRAMEWALK)


def asan_build():
    """Is the framewalk under test the sanitizer build (make build SANITIZE=1)?"""
    r = subprocess.run(["ldd", framewalk_path()], capture_output=True, text=True)
    return "libasan" in r.stdout


class Result:
    def __init__(self, argv, returncode, stdout, stderr, elapsed):
        self.argv = argv
        self.returncode = returncode
        self.stdout_bytes = stdout
        self.stderr_bytes = stderr
        self.stdout = stdout.decode("utf-8", "replace")
        self.stderr = stderr.decode("utf-8", "replace")
        self.elapsed = elapsed

    def __repr__(self):
        return ("framewalk %s -> exit %s in %.1fs\n--- stdout ---\n%s\n--- stderr ---\n%s"
                % (" ".join(self.argv[1:]), self.returncode, self.elapsed,
                   clip(self.stdout), clip(self.stderr)))


def clip(text, head=4000, tail=2000):
    """A long output's start (where a sanitizer names the error) and end."""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n[... %d characters ...]\n" % (len(text) - head - tail) + text[-tail:]


def env_under_strace():
    """The environment for framewalk run under strace: LeakSanitizer cannot
    run under ptrace (a SANITIZE=1 build), so leaks are off there only."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(o for o in (env.get("ASAN_OPTIONS"), "detect_leaks=0") if o)
    return env


def run_fw(*args, timeout=60, prefix=(), binary=None, input_=None):
    argv = list(prefix) + [binary or framewalk_path()] + [str(a) for a in args]
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL if input_ is None else None,
                           input=input_)
    except subprocess.TimeoutExpired as e:
        pytest.fail("framewalk %s did not finish within %s s; stderr: %s"
                    % (" ".join(argv), timeout,
                       (e.stderr or b"").decode("utf-8", "replace")[-2000:]))
    return Result(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)


# --------------------------------------------------------------------------
# Output parsers
# --------------------------------------------------------------------------

THREAD_RE = re.compile(r"^(?P<name>.*) \((?P<tid>\d+)\)$")
FRAME_RE = re.compile(r"^(?P<name>.+) \((?P<file>.+):(?P<line>\d+)\)$")


def parse_frame(text):
    m = FRAME_RE.match(text)
    if not m:
        raise ValueError("malformed frame %r" % text)
    return (m.group("name"), m.group("file"), int(m.group("line")))


def is_python_frame(text):
    """A Python frame of a merged (whole-stack) collapsed line: name (file:line)
    with a .py file or one of Python's own (<frozen ...>, <string>)."""
    m = FRAME_RE.match(text)
    return bool(m) and (m.group("file").endswith(".py") or m.group("file").startswith("<"))


def is_state_marker(text):
    """An interpreter-state leaf: <GC>, <exception TYPE>, <waiting for GIL>, ..."""
    return text in ("<GC>", "<waiting for GIL>", "<running without GIL>") or \
        (text.startswith("<exception ") and text.endswith(">"))


def is_marker(text):
    """A marker frame of a collapsed line: [wait] ... (wall mode) or a state one."""
    return text.startswith("[wait] ") or is_state_marker(text)


def collapsed_lines(text):
    """Collapsed text as it is: [(thread label, [frame strings outermost first], count)]."""
    out = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        parts = stack.split(";")
        out.append((parts[0], parts[1:], int(count)))
    return out


def parse_collapsed(data, merged=False):
    """Parse collapsed output (bytes, UTF-8) into a list of
    (thread_name, tid, [(name, file, line), ...outermost first], count).
    merged: the capture has whole stacks; its Python frames are returned, in
    their order (native and kernel frames are left out). Otherwise every
    frame must be a Python frame (or a [wait]/<GC> marker)."""
    text = data.decode("utf-8")         # strict: the output must be UTF-8
    assert text == "" or text.endswith("\n"), "collapsed output does not end with a newline"
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            raise AssertionError("collapsed line %d is empty" % no)
        stack, sep, count = line.rpartition(" ")
        if not sep or not count.isdigit() or int(count) <= 0:
            raise AssertionError("collapsed line %d has no positive count: %r" % (no, line))
        parts = stack.split(";")
        m = THREAD_RE.match(parts[0])
        if not m:
            raise AssertionError("collapsed line %d: bad thread %r" % (no, parts[0]))
        try:
            # framewalk's own markers ([wait] ..., <GC>, <exception T>, the
            # GIL's) are not Python frames
            frames = [parse_frame(p) for p in parts[1:]
                      if not is_marker(p) and (not merged or is_python_frame(p))]
        except ValueError as e:
            raise AssertionError("collapsed line %d: %s in %r" % (no, e, line))
        out.append((m.group("name"), int(m.group("tid")), frames, int(count)))
    return out


def parse_collapsed_waiting(data, merged=False):
    """parse_collapsed, with a fifth field: whether the stack ends in a
    [wait] marker (wall mode: the thread was off a CPU)."""
    out = []
    lines = data.decode("utf-8").splitlines()
    parsed = parse_collapsed(data, merged)
    for line, (name, tid, frames, count) in zip(lines, parsed):
        stack = line.rpartition(" ")[0]
        out.append((name, tid, frames, count, stack.split(";")[-1].startswith("[wait] ")))
    return out


DUMP_HEAD_RE = re.compile(r"^Process (?P<pid>\d+) \((?P<name>.*)\), Python (?P<ver>\d+\.\d+\.\d+\S*)$")
DUMP_THREAD_RE = re.compile(r'^Thread (?P<tid>\d+) "(?P<name>.*)" (?P<state>on-cpu|off-cpu)$')


def parse_dump(text):
    """Parse `framewalk dump` output into (head, {tid: (name, state, frames)}),
    frames outermost first (the dump prints innermost last)."""
    lines = text.splitlines()
    assert lines, "empty dump"
    m = DUMP_HEAD_RE.match(lines[0])
    assert m, "bad dump header %r" % lines[0]
    head = {"pid": int(m.group("pid")), "name": m.group("name"), "version": m.group("ver")}
    threads = {}
    cur = None
    for line in lines[1:]:
        if not line.strip():
            continue
        t = DUMP_THREAD_RE.match(line)
        if t:
            tid = int(t.group("tid"))
            assert tid not in threads, "thread %d listed twice" % tid
            cur = (t.group("name"), t.group("state"), [])
            threads[tid] = cur
            continue
        assert cur is not None, "frame line before any thread: %r" % line
        assert line.startswith("  ") and not line.startswith("   "), \
            "frame line not indented by two spaces: %r" % line
        cur[2].append(parse_frame(line[2:]))
    return head, threads


# --------------------------------------------------------------------------
# Expected call structure of structure.py
# --------------------------------------------------------------------------

class Pattern:
    """A frame pattern: exact name and file, line in a set."""

    def __init__(self, name, file, lines):
        self.name, self.file, self.lines = name, file, frozenset(lines)
        assert self.lines, "empty line set for %s" % name

    def matches(self, frame):
        return frame[0] == self.name and frame[1] == self.file and frame[2] in self.lines

    def __repr__(self):
        return "%s (%s:%s)" % (self.name, os.path.basename(self.file),
                               ",".join(str(x) for x in sorted(self.lines)))


def chain_matches(chain, frames):
    return len(chain) == len(frames) and all(p.matches(f) for p, f in zip(chain, frames))


def fmt_frames(frames):
    return ";".join("%s (%s:%d)" % (n, os.path.basename(f), l) for n, f, l in frames)


class StructureSpec:
    """For each thread of structure.py (by comm; 'main' for the main thread):
    `valid`: every chain a sample of that thread may have;
    `valid_waiting`: and, for a sample of the thread waiting (for the GIL),
    the chains where a caller is innermost on its call line (a thread drops
    the GIL between two calls);
    `exact`: the chain whose leaf is on the marked hot line(s)."""

    def __init__(self, workload):
        interp = workload.interp
        S = workload.source("structure.py")
        H = workload.source("structure_helper.py")
        spath = workload.target_path("structure.py")
        hpath = workload.target_path("structure_helper.py")

        def P(qual, lines, path=spath):
            return Pattern(frame_name(interp, qual), path, lines)

        self.valid = {}
        self.valid_waiting = {}
        self.exact = {}

        # comm, entry function, loop marker, call marker, list of callee levels:
        # (qualname, source, path, marker of the call it makes or None, leaf marker)
        simple = [
            ("fw-method", "thread_method", "method",
             [("Worker.spin", S, spath, None, "leaf_method")]),
            ("fw-lambda", "thread_lambda", "lambda",
             [("<lambda>", S, spath, None, "leaf_lambda")]),
            ("fw-gen", "thread_gen", "consume",
             [("consume_squares", S, spath, "call_gen", None),
              ("squares", S, spath, None, "leaf_gen")]),
            ("fw-genexpr", "thread_genexpr", "spin_genexpr",
             [("spin_genexpr", S, spath, "call_genexpr", None),
              ("spin_genexpr.<locals>.<genexpr>", S, spath, None, "leaf_genexpr")]),
            ("fw-nested", "thread_nested", "outer",
             [("outer", S, spath, "call_inner", None),
              ("outer.<locals>.inner", S, spath, None, "leaf_inner")]),
            ("fw-helper", "thread_helper", "helper",
             [("helper_spin", H, hpath, None, "leaf_helper")]),
            ("fw-unicode", "計算", "unicode",
             [("calcul_énergie", S, spath, None, "leaf_unicode")]),
            ("fw-worker", "thread_named", "named",
             [("named_spin", S, spath, None, "leaf_named")]),
        ]
        loop_marker = {"method": "loop_method", "lambda": "loop_lambda",
                       "consume": "loop_gen", "spin_genexpr": "loop_genexpr",
                       "outer": "loop_nested", "helper": "loop_helper",
                       "unicode": "loop_unicode", "named": "loop_named"}
        call_marker = {"method": "call_method", "lambda": "call_lambda",
                       "consume": "call_consume", "spin_genexpr": "call_spin_genexpr",
                       "outer": "call_outer", "helper": "call_helper",
                       "unicode": "call_unicode", "named": "call_named"}
        # A sample is valid only with the whole true chain, innermost frame
        # included: a caller is innermost on its call line only for the few
        # instructions around a call to a callee that spins for a
        # millisecond, so there it counts as a chain missing its leaf. A
        # generator's consumer is innermost on its `for` line for real
        # (FOR_ITER runs there between two yields), and so is a caller whose
        # callee is C code (sum()).
        consumers = {"fw-gen", "fw-genexpr"}
        for comm, entry, key, levels in simple:
            call = S.lines(call_marker[key])
            # Between two calls the entry function is innermost, on its loop.
            chains = [[P(entry, S.lines(loop_marker[key]))]]
            waiting = [[P(entry, S.lines(loop_marker[key]) | call)]]
            prefix = [P(entry, call)]
            exact = None
            for qual, src, path, calls, leaf in levels:
                own = src.own_lines(qual)
                waiting.append(prefix + [P(qual, own, path)])
                if calls and comm not in consumers:
                    own = own - src.lines(calls)
                chains.append(prefix + [P(qual, own, path)])
                if calls:
                    prefix = prefix + [P(qual, src.lines(calls), path)]
                else:
                    exact = prefix + [P(qual, src.lines(leaf), path)]
            self.valid[comm] = chains
            self.valid_waiting[comm] = chains + waiting
            self.exact[comm] = exact

        self.valid["main"] = [[P("<module>", S.lines("call_main")),
                               P("main", S.lines("main_ready", "main_wait"))]]
        self.valid_waiting["main"] = self.valid["main"]
        self.exact["main"] = [P("<module>", S.lines("call_main")),
                              P("main", S.lines("main_wait"))]

    def key_for(self, workload, tid, comm):
        return "main" if tid == workload.pid else comm

    def matches_any(self, key, frames, waiting=False):
        valid = self.valid_waiting[key] if waiting else self.valid[key]
        return any(chain_matches(c, frames) for c in valid)


def agent_periods(pid, out_dir, *args, periods=4, timeout=30):
    """framewalk agent -p PID --dir OUT_DIR ARGS until OUT_DIR holds PERIODS
    of pid's profiles (the first may be short: aligned to the clock), then
    SIGTERM; its exit status and standard error."""
    ag = subprocess.Popen([framewalk_path(), "agent", "-p", str(pid), "--dir", str(out_dir)] +
                          [str(a) for a in args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(
                list(Path(out_dir).glob("*-%d.pb.gz" % pid)) if Path(out_dir).is_dir() else []
        ) < periods:
            time.sleep(0.2)
        ag.send_signal(signal.SIGTERM)
        err = ag.communicate(timeout=30)[1].decode()
        return ag.returncode, err
    finally:
        ag.kill()
        ag.wait(timeout=10)
        ag.stderr.close()


def elf_sections(path):
    """{name: (file offset, address, size)} of path's sections, from readelf."""
    out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and re.fullmatch(r"\[\d+\]", f[0]):
            found[f[1]] = (int(f[4], 16), int(f[3], 16), int(f[5], 16))
    return found
