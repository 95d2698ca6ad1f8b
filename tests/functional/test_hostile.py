"""Hostile names: a target whose function names, file names and thread names
carry HTML/JS, terminal escapes, newlines, ';', NUL, lone surrogates and
100k-character lengths is recorded in every output format framewalk has and
dumped; no output may be broken or hijacked by them.

  - collapsed: UTF-8, one "STACK COUNT" line per stack, every frame
    "name (file:line)", names escaped as README says (';' -> ':', control
    characters -> '?', invalid text -> U+FFFD);
  - text, dump (and stderr): no ESC, no other C0/C1 control but '\\n';
  - speedscope / gecko JSON: json.loads parses them;
  - HTML: no '<script>alert' or event-handler injection outside the JSON data
    block, and nothing in the block can close it ('</script', '<!--').

Saved profiles written by hostile hands are covered too: `report` renders a
collapsed file full of hostile names safely, and refuses corrupt files with
a one-line error and the bad-input exit code. (The browser-level check of
the HTML view is tests/browser.)

Target: pyenv's CPython 3.12.1 (3.11+ has co_qualname, so names are whole).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from fwtest import framewalk_path, pyenv_python

REPO = Path(__file__).resolve().parents[2]
EXIT_BAD_INPUT = 8
NAME_MAX = 1024          # code points of a function name framewalk keeps
FILE_MAX = 4096          # ... of a file name

# (function name, file name) of each hostile thread's innermost frame
FUNCS = [
    ("<script>alert(1)</script>", "<script>alert(1)</script>.py"),
    ("\x1b[31mred\x1b[0m\x07bell", "/tmp/\x1b]0;title\x07evil.py"),
    ("multi\nline\r\nname", "/tmp/new\nline.py"),
    ("semi;colon;name", "/tmp/semi;colon.py"),
    ("nul\x00byte", "/tmp/nul\x00file.py"),
    ("surrogate\udcff\udc80end", "/tmp/\udcff\udcfe.py"),
    ("x" * 100000, "/" + "d" * 100000 + ".py"),
    ("tab\there\x7fdel\x85nel\u2028ls", "/tmp/c1\x9b31m.py"),
    ("</script><script>alert(2)</script>", "/tmp/<img src=x onerror=alert(3)>.py"),
    ("paren (fake.py:1) 99", "/tmp/a (copy)/b.py"),
]
# thread names (comm, at most 15 bytes) of the first threads
COMMS = [b"<script>alert(", b"\x1b[31mRED\x1b[0m", b"semi;co\nnl",
         b"\xff\xfe\xc0\x80bad", b"a b(c) ) (9)"]
# Python's names (threading) of the same threads: what the views label them with
PYNAMES = ["<img src=x onerror=alert(4)>", "\x1b]0;pwn\x07\x1b[2Jwiped", "semi;colon\nnew line",
           "lone\udcffsurrogate", "\u202eevil\u2028" + "z" * 1000]
PYNAME_MAX = 256         # code points of a Python thread name framewalk keeps

TARGET = r'''
import ctypes, sys, threading, time

FUNCS = %r
COMMS = %r
PYNAMES = %r
SRC = ("def hostile(comm):\n"
       "    set_comm(comm)\n"
       "    while True:\n"
       "        sum(range(200))\n"
       "        time.sleep(0.002)\n")
libc = ctypes.CDLL(None, use_errno=True)


def set_comm(comm):
    if comm is not None:
        libc.prctl(15, ctypes.c_char_p(comm), 0, 0, 0)      # PR_SET_NAME


def make(name, filename):
    """The function named name, compiled with filename when compile()
    takes it (NUL does not: then co_filename is replaced)."""
    replace = {"co_name": name, "co_qualname": name}
    try:
        code = compile(SRC, filename, "exec")
    except (ValueError, UnicodeError):
        code = compile(SRC, "placeholder.py", "exec")
        replace["co_filename"] = filename
    ns = {"set_comm": set_comm, "time": time}
    exec(code, ns)
    f = ns["hostile"]
    f.__code__ = f.__code__.replace(**replace)
    return f


for i, (name, filename) in enumerate(FUNCS):
    comm = COMMS[i] if i < len(COMMS) else None
    started = threading.Event()

    def run(f=make(name, filename), comm=comm, started=started, i=i):
        print("THREAD %%d %%d" %% (i, threading.get_native_id()), flush=True)
        started.set()
        f(comm)

    threading.Thread(target=run, daemon=True,
                     name=PYNAMES[i] if i < len(PYNAMES) else None).start()
    started.wait()
time.sleep(0.2)
print("READY", flush=True)
while True:
    time.sleep(1)
''' % (FUNCS, COMMS, PYNAMES)

FORMAT_EXT = {
    "text": ".txt",
    "collapsed": ".collapsed",
    "html": ".html",
    "pprof": ".pb.gz",
    "speedscope": ".speedscope.json",
    "gecko": ".gecko.json",
}

THREAD_RE = re.compile(r"^(?P<name>.*) \((?P<tid>\d+)\)$", re.S)
FRAME_RE = re.compile(r"^(?P<name>.*) \((?P<file>.*):(?P<line>\d+)\)$", re.S)
# the bidirectional formatting controls, which reorder what a line shows
BIDI_CONTROLS = {0x061c, 0x200e, 0x200f} | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
# C0 controls but '\n', DEL, C1 controls (U+0080-U+009F, as decoded text) and the
# bidirectional formatting controls
BAD_CONTROL_RE = re.compile("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e"
                             "\u2066-\u2069]")


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def framewalk_bin():
    return framewalk_path()


def fw(*args, timeout=60):
    p = subprocess.run([framewalk_bin()] + [str(a) for a in args], capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    return p


def expected(s, cap, collapsed):
    """How framewalk must print a target string: cut at cap code points (and
    at a NUL, which ends a C string), lone surrogates as U+FFFD, control
    characters and the bidirectional formatting controls as '?', and in
    collapsed output ';' as ':'."""
    s = s[:cap].split("\x00")[0]
    out = []
    for ch in s:
        o = ord(ch)
        if 0xd800 <= o <= 0xdfff:
            out.append("\ufffd")
        elif o < 0x20 or o == 0x7f or 0x80 <= o <= 0x9f or o in BIDI_CONTROLS:
            out.append("?")
        elif collapsed and ch == ";":
            out.append(":")
        else:
            out.append(ch)
    return "".join(out)


def expected_comm(comm, collapsed):
    return expected(comm.decode("utf-8", "replace"), 64, collapsed)


def assert_terminal_safe(data, what):
    """Valid UTF-8 without ESC or any other control character but '\\n'."""
    assert b"\x1b" not in data, "%s contains ESC" % what
    text = data.decode("utf-8")         # strict
    m = BAD_CONTROL_RE.search(text)
    assert not m, "%s contains control character %r at %d: %r" % (
        what, m.group(0), m.start(), text[max(0, m.start() - 60):m.start() + 20])


def parse_collapsed(data, python_frames=True):
    """[(thread_name, tid, [frame text "name (file:line)"...outermost first],
    count)]. A frame's text is checked for that shape (python_frames: a
    profile of Python code; other tools' files have bare names) but not
    split: with hostile names "name (file:line)" is ambiguous."""
    assert_terminal_safe(data, "collapsed output")
    text = data.decode("utf-8")
    assert text.endswith("\n"), "collapsed output does not end with a newline"
    out = []
    for no, line in enumerate(text.split("\n")[:-1], 1):
        stack, sep, count = line.rpartition(" ")
        assert sep and count.isdigit() and int(count) > 0, \
            "collapsed line %d has no trailing count: %r" % (no, line[:300])
        assert not re.search(r" \d+ \d+$", line), \
            "collapsed line %d has two trailing counts: %r" % (no, line[-100:])
        parts = stack.split(";")
        m = THREAD_RE.match(parts[0])
        assert m, "collapsed line %d: bad thread %r" % (no, parts[0][:200])
        for p in parts[1:]:
            assert p, "collapsed line %d: an empty frame" % no
            # framewalk's own markers ([wait] ..., <GC>) carry no file:line
            marker = p.startswith("[wait] ") or p == "<GC>"
            assert not python_frames or marker or FRAME_RE.match(p), \
                "collapsed line %d: frame %r is not " \
                "'name (file:line)' (a raw ';' or newline inside a name?)" % (no, p[:200])
        out.append((m.group("name"), int(m.group("tid")), parts[1:], int(count)))
    return out


def check_collapsed(data, tids):
    """The format holds, and every hostile thread shows its escaped names."""
    stacks = parse_collapsed(data)
    for i, (name, filename) in enumerate(FUNCS):
        tid = tids[i]
        mine = [s for s in stacks if s[1] == tid]
        assert mine, "no sample of hostile thread %d (tid %d)" % (i, tid)
        # The innermost Python frame: in wall mode a sleeping thread's stack
        # ends in its [wait] marker, below the frame under test.
        leaves = {[f for f in s[2] if not f.startswith("[wait] ") and f != "<GC>"][-1]
                  for s in mine if any(not f.startswith("[wait] ") for f in s[2])}
        want = "%s (%s:" % (expected(name, NAME_MAX, True), expected(filename, FILE_MAX, True))
        if "\x00" in filename:
            # compile() refuses NUL in a file name: co_filename was replaced,
            # and where a NUL cuts it is the reader's business
            want = "%s (/tmp/nul" % expected(name, NAME_MAX, True)
        assert any(leaf.startswith(want) for leaf in leaves), \
            "thread %d: want %r..., got %r" % (i, want[:100], [x[:100] for x in leaves])
        if i < len(PYNAMES):
            # Python's name, not the kernel's (COMMS): escaped like any target text
            assert {s[0] for s in mine} == {expected(PYNAMES[i], PYNAME_MAX, True)}, \
                "thread %d named %r" % (i, {s[0][:80] for s in mine})
    return stacks


def check_json(data, what):
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as e:
        pytest.fail("%s is not valid JSON: %s" % (what, e))


HTML_DATA_RE = re.compile(
    rb'(<script\b[^>]*type="application/json"[^>]*>)(.*?)(</script\s*>)', re.S | re.I)
INJECTION_RE = re.compile(rb"<script>alert\(|onerror=alert|<img src=x", re.I)


def check_html(data, what):
    blocks = list(HTML_DATA_RE.finditer(data))
    assert blocks, "%s: no <script type=\"application/json\"> data block" % what
    outside = data
    for m in reversed(blocks):
        inner = m.group(2)
        assert not re.search(rb"</script|<!--", inner, re.I), \
            "%s: the data block holds a '</script' or '<!--'" % what
        check_json(inner, what + " data block")
        outside = outside[:m.start(2)] + outside[m.end(2):]
    m = INJECTION_RE.search(outside)
    assert not m, "%s: unescaped injection outside the data block: %r" % (
        what, outside[max(0, m.start() - 80):m.end() + 80])


def check_output(fmt, data, tids, what):
    if fmt == "text":
        assert_terminal_safe(data, what)
        assert b"Errors:" in data or data, what
    elif fmt == "collapsed":
        check_collapsed(data, tids)
    elif fmt in ("speedscope", "gecko"):
        check_json(data, what)
    elif fmt == "html":
        check_html(data, what)
    elif fmt == "pprof":
        assert data[:2] == b"\x1f\x8b", "%s is not gzip'd" % what


# --------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def formats():
    """The formats `record` has: named by its --help, each accepted by --format
    (probed against a pid that does not exist; an unknown format is a usage
    error, exit 2). Every one of them is tested below, so the list must match
    FORMAT_EXT exactly: a format lost or added fails here instead of skipping."""
    def accepted(name):
        p = fw("record", "-q", "--format", name, "-d", "1", "-p", "999999999")
        return not (p.returncode == 2 and b"format" in p.stderr)

    assert not accepted("no-such-format"), "the format probe does not work"
    usage = fw("record", "--help").stdout.decode()
    m = re.search(r"--format FMT\s+(.*?),\s+for\b", usage, re.S)
    assert m, "record --help names no formats:\n" + usage
    named = re.split(r",\s*|\s+or\s+", m.group(1))
    assert sorted(named) == sorted(FORMAT_EXT), "record --help: %r" % named
    refused = [f for f in FORMAT_EXT if not accepted(f)]
    assert not refused, "record refuses --format %s" % ", ".join(refused)
    return list(FORMAT_EXT)


@pytest.fixture(scope="module")
def hostile():
    """The hostile target (3.12), READY; .pid and .tids (index -> tid)."""
    tmp = tempfile.mkdtemp(prefix="fw-hostile-")
    script = os.path.join(tmp, "hostile_target.py")
    with open(script, "w") as f:
        f.write(TARGET)
    proc = subprocess.Popen([pyenv_python("3.12.1"), "-B", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tids = {}
    deadline = time.monotonic() + 30
    try:
        while True:
            line = proc.stdout.readline().decode()
            if not line:
                pytest.fail("hostile target died: %s" % proc.stderr.read().decode()[-2000:])
            if line.startswith("THREAD "):
                _, i, tid = line.split()
                tids[int(i)] = int(tid)
            if line.strip() == "READY":
                break
            if time.monotonic() > deadline:
                pytest.fail("hostile target never READY")
        assert len(tids) == len(FUNCS)

        class T:
            pass
        t = T()
        t.pid, t.tids, t.dir = proc.pid, tids, tmp
        yield t
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def recorded(hostile, formats):
    """One 3-second capture written in every format at once: {fmt: bytes}."""
    outs = {f: os.path.join(hostile.dir, "rec" + FORMAT_EXT[f]) for f in formats}
    # the Python view: the hostile names are the target's Python names
    args = ["record", "--mode", "wall", "-q", "-p", hostile.pid, "-d", "3", "-r", "100",
            "--python-only"]
    for f in formats:
        args += ["-o", outs[f]]
    p = fw(*args, timeout=60)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    assert_terminal_safe(p.stderr, "record's stderr")
    data = {}
    for f in formats:
        with open(outs[f], "rb") as fh:
            data[f] = fh.read()
        assert data[f], "empty %s output" % f
    data["_paths"] = outs
    return data


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", list(FORMAT_EXT))
def test_record_output_is_safe(fmt, recorded, hostile):
    check_output(fmt, recorded[fmt], hostile.tids, "record %s output" % fmt)


def test_collapsed_counts_add_up(recorded, hostile):
    """One line per distinct stack: no stack appears twice."""
    stacks = parse_collapsed(recorded["collapsed"])
    keys = [(s[1], tuple(s[2])) for s in stacks]
    assert len(keys) == len(set(keys)), "a stack is written on two lines"


def test_text_report_on_stdout(hostile):
    """Without -o the text report goes to stdout: still no control characters."""
    p = fw("record", "--mode", "wall", "-q", "-p", hostile.pid, "-d", "1", "--python-only")
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    assert_terminal_safe(p.stdout, "record's text report")
    assert_terminal_safe(p.stderr, "record's stderr")
    assert expected(FUNCS[0][0], NAME_MAX, False).encode() in p.stdout


def test_hostile_executable_path_on_stderr(tmp_path):
    """A process's executable path is target text too: the error naming a
    process that is not Python prints it terminal-safe (an escape sequence
    in a directory name reached the terminal raw before)."""
    d = tmp_path / "fw\x1b[31mred\x07dir"
    d.mkdir()
    exe = d / "sleep"
    shutil.copy("/bin/sleep", exe)
    p = subprocess.Popen([str(exe), "30"])
    try:
        for cmd in (["record", "-p", str(p.pid), "-d", "1", "-o", str(tmp_path / "o.txt")],
                    ["dump", "-p", str(p.pid)]):
            r = fw(*cmd)
            assert r.returncode != 0, r
            assert b"is not a Python process" in r.stderr, r.stderr
            assert_terminal_safe(r.stderr, "%s's stderr" % cmd[0])
            assert b"fw?[31mred?dir" in r.stderr, r.stderr
    finally:
        p.kill()
        p.wait()


def test_dump_is_safe(hostile):
    p = fw("dump", "-p", hostile.pid)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    assert_terminal_safe(p.stdout, "dump output")
    assert_terminal_safe(p.stderr, "dump's stderr")
    out = p.stdout.decode("utf-8")
    for i in (0, 1, 2, 3, 7, 8, 9):
        name, filename = FUNCS[i]
        want = "  %s (%s:" % (expected(name, NAME_MAX, False), expected(filename, FILE_MAX, False))
        assert want in out, "dump lacks %r" % want[:120]
    # threads are named as threading names them (as record labels them),
    # made terminal-safe like every target string
    for i in range(len(COMMS)):
        want = 'Thread %d "%s" ' % (hostile.tids[i], expected(PYNAMES[i], PYNAME_MAX, False))
        assert want in out, "dump lacks %r" % want
    # the huge name is there, capped
    assert "  " + "x" * NAME_MAX + " (/" + "d" * (FILE_MAX - 1) + ":" in out


@pytest.mark.parametrize("src", ["pprof", "collapsed"])
def test_report_rerenders_safely(src, formats, recorded, hostile):
    """A saved profile with hostile names rendered again by `report`."""
    path = recorded["_paths"][src]
    for fmt in formats:
        out = os.path.join(hostile.dir, "report-%s%s" % (src, FORMAT_EXT[fmt]))
        p = fw("report", "--format", fmt, "-o", out, path)
        assert p.returncode == 0, "report %s -> %s: %s" % (
            src, fmt, p.stderr.decode("utf-8", "replace"))
        with open(out, "rb") as fh:
            check_output(fmt, fh.read(), hostile.tids, "report %s -> %s" % (src, fmt))


# Collapsed files crafted by someone else. Without C0 controls a file is
# text and must be rendered; with them (ESC...) the loader may take it for
# binary and refuse it, which is safe too.
HOSTILE_TEXT = (
    b"MainThread (1);<module> (app.py:1);<script>alert(1)</script> (x.py:2) 5\n"
    b"\xff\xfe (3);f (</script><!--.py:9);\xc2\x9b1m\x7f (c1.py:4) 2\n"
    b"<img src=x onerror=alert(3)> (4);a;b (\xed\xa0\x80.py:1) 7\n"
    b"x;y;z 3\r\n"
)
HOSTILE_ESCAPES = (
    b"evil\x1b[2J (2);\x1b]0;owned\x07 (\x1b[31m.py:3);tab\there (t.py:1) 7\n"
    b"MainThread (1);f (x.py:2) 1\n"
)


@pytest.mark.parametrize("content,must_load", [(HOSTILE_TEXT, True), (HOSTILE_ESCAPES, False)],
                         ids=["markup-invalid-utf8", "terminal-escapes"])
def test_report_hostile_collapsed_file(tmp_path, formats, content, must_load):
    """Every format renders a hostile collapsed file safely (or, for one
    with control bytes, refuses it with the bad-input exit code)."""
    src = tmp_path / "evil.collapsed"
    src.write_bytes(content)
    for fmt in formats:
        out = tmp_path / ("out" + FORMAT_EXT[fmt])
        p = fw("report", "--format", fmt, "-o", out, src)
        assert_terminal_safe(p.stderr, "report's stderr")
        if p.returncode == EXIT_BAD_INPUT and not must_load:
            continue
        assert p.returncode == 0, "%s: %s" % (fmt, p.stderr.decode("utf-8", "replace"))
        data = out.read_bytes()
        if fmt == "text":
            assert_terminal_safe(data, "report text")
        elif fmt == "collapsed":
            parse_collapsed(data, python_frames=False)
        elif fmt in ("speedscope", "gecko"):
            check_json(data, "report " + fmt)
        elif fmt == "html":
            check_html(data, "report html")


@pytest.mark.parametrize("content", [
    b"",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",            # truncated gzip
    b"\x1f\x8b" + bytes(range(256)) * 4,                     # gzip magic, garbage
    bytes(range(256)) * 8,                                   # binary, not protobuf
    b"\x0a\xff\xff\xff\xff\x0f",                             # protobuf field, huge length
    b"no count here\n",
    b"a;b 99999999999999999999999999\n",                     # count overflows
], ids=["empty", "truncated-gzip", "gzip-garbage", "binary", "proto-huge-len",
        "no-count", "count-overflow"])
def test_report_corrupt_file(tmp_path, content):
    """A corrupt or empty saved profile is refused with the bad-input exit
    code and a short message, never a crash."""
    src = tmp_path / "bad.prof"
    src.write_bytes(content)
    p = fw("report", "--format", "text", src)
    assert p.returncode == EXIT_BAD_INPUT, "exit %d: %s" % (
        p.returncode, p.stderr.decode("utf-8", "replace"))
    assert_terminal_safe(p.stderr, "report's error")
    assert len(p.stderr.splitlines()) <= 3, p.stderr
