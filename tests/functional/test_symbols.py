"""Names for stripped code, interpreter internals folded, JIT frames folded
(docs/SYMBOLS.md).

1. debuginfod: a real `debuginfod` server on 127.0.0.1 serves the separate
   debug file of a stripped build of tests/ext/fwext.c; with DEBUGINFOD_URLS
   set, its static functions get names and fwext.c:LINE (without it they do
   not). With a port nothing listens on, or a server that accepts and never
   answers, the capture still finishes, with exactly one warning. With the
   variable unset, or --no-debuginfod, no connection is made (strace, and a
   listening socket that must see no connection).
2. MiniDebugInfo: the same extension stripped as Fedora ships it (a
   .gnu_debugdata section holding an xz-compressed .symtab) is named.
3. Folding: Debian's stripped python3.15 (sid root) reads
   _start -> Py_BytesMain -> <module>: <module> within three frames of the
   thread's entry in every sample; --native-all restores the internals.
4. JIT: python3.15 with PYTHON_JIT=1 on a hot loop: no [anon]+0x frame
   between or below Python frames; --native-all shows it as "[jit] NAME".
5. Grouped by function: Debian's stripped libz (sid root) under zlib.compress:
   every frame in it is named by the start of an FDE of the file (as readelf
   lists them), so one function's return addresses are one frame; the
   report counts those functions.

Extensions are built for pyenv 3.12 (host) in the test's tmp_path.
"""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from fwtest import INTERP_BY_ID, REPO, env_under_strace, framewalk_path, start_workload
from test_native import Frame, parse_native_collapsed

EXT_SRC = REPO / "tests" / "ext" / "fwext.c"
PY312 = INTERP_BY_ID["py3.12"]
STAGE_RE = re.compile(r"^(stage\d+|stage_end|fwext_run)$")


def need(tool):
    path = shutil.which(tool)
    if not path:
        pytest.fail("%s missing: install it with scripts/deps.sh test" % tool)
    return path


def sh(*argv, cwd=None):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=120,
                       cwd=cwd)
    assert p.returncode == 0, "%s failed (%d): %s%s" % (" ".join(map(str, argv)), p.returncode,
                                                         p.stdout, p.stderr)
    return p.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def build_ext(d, name):
    """fwext.c as a shared object built with -g and a build-id; returns its path."""
    PY312.check()
    inc = Path(PY312.exe).parent.parent / "include" / "python3.12"
    out = d / name
    sh(need("gcc"), "-O2", "-g", "-shared", "-fPIC", "-Wl,--build-id", "-I%s" % inc,
       EXT_SRC, "-o", out)
    return out


def build_id(path):
    out = sh("readelf", "-n", path)
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, out
    return m.group(1)


def has_symtab(path):
    return ".symtab" in sh("readelf", "-S", "-W", path)


def stage_lines():
    """fwext.c's line of each STAGE(n, ...) use: where stage<n> is defined."""
    lines = {}
    for no, text in enumerate(EXT_SRC.read_text().splitlines(), 1):
        m = re.match(r"^STAGE\((\d+),", text)
        if m:
            lines["stage" + m.group(1)] = no
    assert lines
    return lines


RUN_EXT = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('fwext', sys.argv[1])\n"
    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
    "print('READY', flush=True)\n"
    "while True:\n"
    "    m.run(2000)\n")


class Target:
    """pyenv 3.12 running fwext's chain in a loop from SO."""

    def __init__(self, so):
        self.proc = subprocess.Popen([str(PY312.exe), "-c", RUN_EXT, str(so)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        line = self.proc.stdout.readline()
        if line != b"READY\n":
            self.proc.kill()
            pytest.fail("extension workload did not start: %r %r" % (
                line, self.proc.stderr.read()))
        self.pid = self.proc.pid

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


def fw_env(**set_vars):
    """The environment for framewalk: the test's own, no DEBUGINFOD_* unless given."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DEBUGINFOD_") and k != "FRAMEWALK_DEBUGINFOD_TIMEOUT"}
    env.update({k: str(v) for k, v in set_vars.items()})
    return env


def record(pid, out, env, *opts, seconds=1, timeout=60, prefix=()):
    # The format follows each -o's extension: .txt text, anything else collapsed.
    argv = list(prefix) + [framewalk_path(), "record", "-p", str(pid), "-d", str(seconds),
                           "--backend", "ptrace", "--native", "-o", str(out), "-q"] + \
        [str(o) for o in opts]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail("framewalk did not finish within %d s: %s" % (timeout, e.stderr))
    assert p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr)
    return p


def ext_frames(samples):
    """Every native frame of the extension's module, over all samples."""
    return [f for _, _, frames, _ in samples for f in frames
            if f.kind == "native" and ((f.module or "").startswith("fwext") or
                                       f.file == "fwext.c")]


ADDRESS_NAME = re.compile(r"^.+\+0x[0-9a-f]+$")


def names_share(samples):
    """(samples whose innermost non-kernel frame is native, of those named,
    {module: unnamed samples}) from parsed collapsed stacks."""
    native = named = 0
    unnamed = {}
    for _, _, frames, count in samples:
        inner = [f for f in frames if f.kind not in ("kernel", "wait")]
        if not inner or inner[-1].kind != "native":
            continue
        native += count
        f = inner[-1]
        if ADDRESS_NAME.match(f.name):
            mod = f.module if f.module and not f.module.startswith("[") else \
                f.name.split("+")[0]
            unnamed[mod] = unnamed.get(mod, 0) + count
        else:
            named += count
    return native, named, unnamed


# --------------------------------------------------------------------------
# debuginfod
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stripped_ext(tmp_path_factory):
    """(stripped .so, its separate debug file's directory, build-id)."""
    d = tmp_path_factory.mktemp("dbgd")
    so = build_ext(d, "fwext_dbg.so")
    serve = d / "serve"
    serve.mkdir()
    sh("objcopy", "--only-keep-debug", so, serve / "fwext_dbg.debug")
    sh("strip", "--strip-all", so)
    assert not has_symtab(so)
    bid = build_id(so)
    assert bid == build_id(serve / "fwext_dbg.debug")
    return so, serve, bid


@pytest.fixture(scope="module")
def debuginfod_server(stripped_ext, tmp_path_factory):
    """A debuginfod on 127.0.0.1 serving the debug file; yields its URL."""
    exe = need("debuginfod")
    _, serve, bid = stripped_ext
    d = tmp_path_factory.mktemp("dbgd-db")
    port = free_port()
    log = open(d / "log", "wb")
    proc = subprocess.Popen([exe, "-F", "-p", str(port), "-d", str(d / "db.sqlite"),
                             "-t", "0", "-g", "0", str(serve)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, bid), timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            pytest.fail("debuginfod did not serve %s: %s" % (bid, (d / "log").read_text()[-2000:]))
        time.sleep(0.5)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def test_debuginfod_names_and_lines(stripped_ext, debuginfod_server, tmp_path):
    so, _, bid = stripped_ext
    lines = stage_lines()
    t = Target(so)
    try:
        # Control: without a server the stripped extension's statics have no names.
        record(t.pid, tmp_path / "plain.collapsed", fw_env(), "-o", tmp_path / "plain.txt")
        plain = ext_frames(parse_native_collapsed(tmp_path / "plain.collapsed"))
        assert plain, "no extension frames at all"
        assert not [f for f in plain if f.name.startswith("stage")], plain[:10]

        cache = tmp_path / "cache"
        p = record(t.pid, tmp_path / "named.collapsed",
                   fw_env(DEBUGINFOD_URLS=debuginfod_server, DEBUGINFOD_CACHE_PATH=cache),
                   "-o", tmp_path / "named.txt")
    finally:
        t.stop()
    # The report's header counts the samples in native code that have a name:
    # the same numbers as the collapsed output of the same capture says.
    for what in ("plain", "named"):
        text = (tmp_path / ("%s.txt" % what)).read_text()
        m = re.search(r"^Names: +([\d.]+)% of (\d+) samples in native code have a function "
                      r"name(; without: (.*))?$", text, re.M)
        assert m, text[:2000]
        native, named, unnamed = names_share(parse_native_collapsed(tmp_path /
                                                                    ("%s.collapsed" % what)))
        assert int(m.group(2)) == native, (what, m.group(0), native)
        assert float(m.group(1)) == round(100.0 * named / native, 1), (what, m.group(0), named)
        top = sorted(unnamed.items(), key=lambda kv: -kv[1])[:3]
        shown = dict((mod, int(n)) for mod, n in
                     (part.rsplit(" ", 1) for part in (m.group(4) or "").rstrip(", .").split(", ")
                      if part))
        assert shown == dict(top) or sorted(shown.values()) == sorted(v for _, v in top), \
            (what, m.group(0), unnamed)
    frames = ext_frames(parse_native_collapsed(tmp_path / "named.collapsed"))
    named = [f for f in frames if STAGE_RE.match(f.name)]
    assert len(named) > len(frames) * 0.9, frames[:20]
    staged = [f for f in named if f.name in lines]
    assert staged, named[:20]
    for f in staged:
        assert f.file == "fwext.c" and f.line == lines[f.name], f
    # The progress line, and the file in libdebuginfod's cache.
    assert "fetching debug info for fwext_dbg.so (build-id %s" % bid[:12] in p.stderr, p.stderr
    assert "warning" not in p.stderr, p.stderr
    assert (cache / bid / "debuginfo").is_file()


def test_debuginfod_unreachable_finishes_with_one_warning(stripped_ext, tmp_path):
    so, _, _ = stripped_ext
    # A server that accepts connections and never answers (the kernel
    # completes the handshake for the backlog), and a port nothing listens on.
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(64)
    urls = {"hanging": "http://127.0.0.1:%d" % hang.getsockname()[1],
            "refused": "http://127.0.0.1:%d" % free_port()}
    t = Target(so)
    try:
        for what, url in urls.items():
            # Default DEBUGINFOD_TIMEOUT is 90 s: an unbounded wait fails the 40 s limit.
            p = record(t.pid, tmp_path / ("%s.collapsed" % what),
                       fw_env(DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=tmp_path / what,
                              FRAMEWALK_DEBUGINFOD_TIMEOUT=2), timeout=40)
            warnings = [l for l in p.stderr.splitlines() if "warning" in l]
            assert len(warnings) == 1, (what, p.stderr)
            assert "debuginfod" in warnings[0] and url in warnings[0], (what, warnings)
            samples = parse_native_collapsed(tmp_path / ("%s.collapsed" % what))
            assert sum(c for _, _, _, c in samples) > 0, what
    finally:
        t.stop()
        hang.close()


def test_no_connection_without_urls_or_with_no_debuginfod(stripped_ext, tmp_path):
    strace = need("strace")
    so, _, _ = stripped_ext
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.setblocking(False)
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    t = Target(so)
    try:
        trace = tmp_path / "connect.txt"
        # LeakSanitizer cannot run under ptrace (a SANITIZE=1 build): leaks off here only.
        record(t.pid, tmp_path / "unset.collapsed",
               fw_env(ASAN_OPTIONS=env_under_strace()["ASAN_OPTIONS"]),
               prefix=[strace, "-f", "-qq", "-e", "trace=connect", "-o", str(trace)])
        connects = [l for l in trace.read_text().splitlines() if "connect(" in l and
                    ("AF_INET" in l or "AF_INET6" in l)]
        assert not connects, connects
        p = record(t.pid, tmp_path / "off.collapsed",
                   fw_env(DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=tmp_path / "cache"),
                   "--no-debuginfod")
        assert "debuginfod" not in p.stderr, p.stderr
    finally:
        t.stop()
    try:
        conn, _ = listener.accept()
        conn.close()
        pytest.fail("framewalk connected to %s with --no-debuginfod" % url)
    except BlockingIOError:
        pass
    finally:
        listener.close()


# --------------------------------------------------------------------------
# MiniDebugInfo
# --------------------------------------------------------------------------

def add_minidebuginfo(so, work):
    """Strip so as Fedora does, keeping its local function symbols in an
    xz-compressed .gnu_debugdata (find-debuginfo's recipe)."""
    need("xz")
    dyn = sh("nm", "-D", "--format=posix", "--defined-only", so).split("\n")
    dynsyms = sorted({l.split()[0] for l in dyn if l.strip()})
    allsyms = sh("nm", "--format=posix", "--defined-only", so).split("\n")
    funcs = sorted({l.split()[0] for l in allsyms if len(l.split()) > 1 and
                    l.split()[1] in ("T", "t")})
    (work / "keep").write_text("\n".join(s for s in funcs if s not in dynsyms) + "\n")
    sh("objcopy", "--only-keep-debug", so, work / "debug")
    sh("objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
       "--keep-symbols=%s" % (work / "keep"), work / "debug", work / "mini")
    sh("strip", "--strip-all", "-R", ".comment", so)
    sh("xz", "-f", work / "mini")
    sh("objcopy", "--add-section", ".gnu_debugdata=%s" % (work / "mini.xz"), so)


def test_minidebuginfo_names(tmp_path):
    plain = build_ext(tmp_path, "fwext_plain.so")
    sh("strip", "--strip-all", plain)
    mini = build_ext(tmp_path, "fwext_mini.so")
    (tmp_path / "mini").mkdir()
    add_minidebuginfo(mini, tmp_path / "mini")
    assert not has_symtab(mini) and ".gnu_debugdata" in sh("readelf", "-S", "-W", mini)
    for so, want_names in ((plain, False), (mini, True)):
        t = Target(so)
        try:
            record(t.pid, tmp_path / ("%s.collapsed" % so.stem), fw_env())
        finally:
            t.stop()
        frames = ext_frames(parse_native_collapsed(tmp_path / ("%s.collapsed" % so.stem)))
        assert frames, so
        named = [f for f in frames if STAGE_RE.match(f.name)]
        if want_names:
            assert len(named) > len(frames) * 0.9, frames[:20]
            assert any(f.name == "stage7" for f in named), named[:20]
        else:
            assert not [f for f in named if f.name.startswith("stage")], named[:10]


# --------------------------------------------------------------------------
# Folding interpreter internals (Debian's stripped python3.15)
# --------------------------------------------------------------------------

FOLD_BACKENDS = {"ptrace": ("--backend", "ptrace"), "bpf": ("--backend", "bpf")}


def sid_record(w, out, *opts, env=None):
    argv = [framewalk_path(), "record", "-p", str(w.pid), "-d", "2", "--native", "-f",
            "collapsed", "-o", str(out), "-q"] + list(opts)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env or fw_env())
    assert p.returncode == 0, p.stderr
    return parse_native_collapsed(out)


def python_indexes(frames):
    return [i for i, f in enumerate(frames) if f.kind == "py"]


@pytest.mark.parametrize("backend", sorted(FOLD_BACKENDS))
def test_stripped_315_folds_to_module(backend, tmp_path):
    interp = INTERP_BY_ID["sid-py3.15"]
    w = start_workload(interp, "zlib_loop.py")
    try:
        opts = FOLD_BACKENDS[backend]
        folded = sid_record(w, tmp_path / "folded.txt", *opts)
        full = sid_record(w, tmp_path / "full.txt", *opts, "--native-all")
    finally:
        w.stop()
    assert sum(c for _, _, _, c in folded) >= 20, folded[:3]
    for _, _, frames, count in folded:
        names = [f.name for f in frames]
        assert "<module>" in names, names
        entry = 0   # the outermost frame: the thread's entry
        assert names.index("<module>") - entry <= 3, names
        assert frames[0].name == "_start", names
    # Stripped interpreter frames between _start and <module> come back.
    restored = 0
    for _, _, frames, count in full:
        names = [f.name for f in frames]
        if "<module>" in names and names.index("<module>") > 3:
            restored += count
            assert "PyEval_EvalCode" in names and "Py_RunMain" in names, names
    assert restored == sum(c for _, _, _, c in full), full[:3]


@pytest.mark.parametrize("backend", sorted(FOLD_BACKENDS))
def test_stripped_315_threads_read_like_main(backend, tmp_path):
    """Issue 21 item 12: on Debian's stripped python3.15 a `threading`
    thread's outer frames fold as the main thread's do, by position and
    module: its entry (libc's __clone3, unexported: libc.so.6+0x...) and then
    its first Python frame (structure.py starts its threads with _thread),
    as the main thread reads _start -> Py_BytesMain -> <module>. Before, the interpreter's unnamed start routine
    (python3.15+0x...) stayed between them; --native-all still shows it."""
    interp = INTERP_BY_ID["sid-py3.15"]
    w = start_workload(interp, "structure.py")
    try:
        # wall: the main thread waits, and is sampled too
        opts = FOLD_BACKENDS[backend] + ("--mode", "wall")
        folded = sid_record(w, tmp_path / "folded.txt", *opts)
        full = sid_record(w, tmp_path / "full.txt", *opts, "--native-all")
    finally:
        w.stop()
    seen = {"main": 0, "thread": 0}
    for name, tid, frames, count in folded:
        first_py = next((i for i, f in enumerate(frames) if f.kind == "py"), None)
        if first_py is None:
            continue
        outer = [f.name for f in frames[:first_py + 1]]
        if tid == w.pid:
            assert outer == ["_start", "Py_BytesMain", "<module>"], (name, outer)
            seen["main"] += count
        else:
            assert first_py == 1 and frames[0].module == "libc.so.6", (name, outer)
            assert not outer[0].startswith("python3.15+0x"), (name, outer)
            seen["thread"] += count
    assert seen["main"] > 0 and seen["thread"] >= 20, seen
    # The folded frames are still there with --native-all.
    assert any(f.name.startswith("python3.15+0x") and f.module == "python3.15"
               for _, tid, frames, _ in full if tid != w.pid for f in frames[:4]), full[:3]


def fde_starts(path):
    """The first address of every FDE of the file's .eh_frame, as readelf reads them."""
    out = sh("readelf", "--debug-dump=frames", path)
    return {int(m.group(1), 16) for m in re.finditer(r" FDE cie=\S+ pc=([0-9a-f]+)\.\.", out)}


@pytest.mark.parametrize("backend", sorted(FOLD_BACKENDS))
def test_stripped_functions_grouped_by_unwind_entry(backend, tmp_path):
    interp = INTERP_BY_ID["sid-py3.15"]
    w = start_workload(interp, "zlib_loop.py")
    try:
        # each output's format from its extension: collapsed and the text report
        r = subprocess.run([framewalk_path(), "record", "-p", str(w.pid), "-d", "2", "--native",
                            "-q", "-o", str(tmp_path / "z.collapsed"), "-o",
                            str(tmp_path / "z.txt")] + list(FOLD_BACKENDS[backend]),
                           capture_output=True, text=True, timeout=90, env=fw_env())
        assert r.returncode == 0, r.stderr
        samples = parse_native_collapsed(tmp_path / "z.collapsed")
        report = (tmp_path / "z.txt").read_text()
    finally:
        w.stop()
    libz = [f for _, _, frames, _ in samples for f in frames
            if f.kind == "native" and (f.module or "").startswith("libz.so")]
    assert len(libz) >= 20, samples[:3]
    module = libz[0].module
    paths = list(Path(str(interp.root) + "/usr/lib").rglob(module))
    assert paths, module
    starts = fde_starts(paths[0])
    assert len(starts) > 20, starts
    named_by_start = {f.name for f in libz if ADDRESS_NAME.match(f.name)}
    assert named_by_start, "libz is stripped: its static functions have no name"
    for name in named_by_start:
        offset = int(name.rsplit("+0x", 1)[1], 16)
        # each is where a function starts, not a return address inside one
        assert offset in starts, (name, sorted(starts)[:10])
    # the report counts them
    m = re.search(r"(\d+) functions? in files without a name, each known by its start",
                  report)
    assert m and int(m.group(1)) >= len(named_by_start), report[:2000]


def test_jit_frames_folded_and_named(tmp_path, monkeypatch):
    interp = INTERP_BY_ID["sid-py3.15"]
    interp.check()
    env = dict(interp.env(), PYTHON_JIT="1")
    q = subprocess.run(interp.argv("-c", "import sys; print(sys._jit.is_enabled())"),
                       capture_output=True, text=True, timeout=60, env=env)
    assert q.returncode == 0 and q.stdout.strip() == "True", \
        "python3.15 has no JIT enabled by PYTHON_JIT=1: %r %r" % (q.stdout, q.stderr)
    # start_workload runs the target with interp.env(): add PYTHON_JIT=1 to it.
    monkeypatch.setattr(interp, "env", lambda: env)
    w = start_workload(interp, "jit_loop.py")
    try:
        folded = sid_record(w, tmp_path / "folded.txt", "--backend", "ptrace")
        full = sid_record(w, tmp_path / "full.txt", "--backend", "ptrace", "--native-all")
    finally:
        w.stop()
    total = sum(c for _, _, _, c in folded)
    assert total >= 20
    for _, _, frames, _ in folded:
        py = python_indexes(frames)
        if not py:
            continue
        below = frames[py[0]:]
        anon = [f for f in below if f.name.startswith("[anon]+0x") or f.name.startswith("[jit]")]
        assert not anon, [f.text for f in frames]
    # --native-all shows the JIT frames, named after the function they run.
    jit = {}
    for _, _, frames, count in full:
        for i, f in enumerate(frames):
            if f.name.startswith("[jit]"):
                py_before = [g for g in frames[:i] if g.kind == "py"]
                assert py_before, [g.text for g in frames]
                assert f.name == "[jit] " + py_before[-1].name, [g.text for g in frames]
                jit[f.name] = jit.get(f.name, 0) + count
            assert not f.name.startswith("[anon]+0x") or not python_indexes(frames[:i]), \
                [g.text for g in frames]
    assert jit.get("[jit] hot_leaf", 0) > 0, jit

