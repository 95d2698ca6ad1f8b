"""The saved and exchange formats: pprof (read back by go tool pprof, the npm
pprof-format decoder and `framewalk report`), speedscope JSON (validated
against speedscope's own schema), Firefox Profiler (Gecko) JSON, and
`framewalk report`'s handling of corrupt input (exit code 8, one line, no
crash; run under ASan with `make check SANITIZE=1`).

One 2-second capture of a small threaded workload with a hostile function
name feeds most tests; the node validators live in tests/js (`make js-deps`).
"""
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fwtest import wait_until

REPO = Path(__file__).resolve().parents[2]
FRAMEWALK = os.environ.get("FRAMEWALK") or os.environ.get("FRAMEWALK_BIN") or \
    str(REPO / "build" / "framewalk")
JS = REPO / "tests" / "js"
EXIT_USAGE = 2
EXIT_BAD_INPUT = 8

# The worker names its native thread and runs a function whose name tries
# every escape: quote, </script>, <!--, newline, ';', backslash, a control
# character, a lone surrogate (invalid once in UTF-8) and U+2028.
HOSTILE = 'evil"</script><!--\n;\\\x01\udcff\u2028'
WORKLOAD = r'''
import ctypes, threading, time
libc = ctypes.CDLL(None)
def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
def evil():
    return spin(3000)
evil.__code__ = evil.__code__.replace(co_name=NAME, co_qualname=NAME)
def worker():
    libc.prctl(15, b"fw-worker", 0, 0, 0)
    while True:
        evil()
threading.Thread(target=worker, daemon=True, name="fw-worker").start()
print("READY", flush=True)
while True:
    spin(5000)
    time.sleep(0.001)
'''.replace("NAME", repr(HOSTILE))

OUTPUTS = {
    "pprof": "prof.pb.gz",
    "collapsed": "prof.collapsed",
    "speedscope": "prof.json",
    "gecko": "prof.gecko.json",
    "text": "prof.txt",
}


def python312():
    root = os.environ.get("PYENV_ROOT")
    if not root:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True)
        root = out.stdout.strip() or "/root/.pyenv"
    exe = Path(root) / "versions" / "3.12.1" / "bin" / "python"
    assert exe.exists(), "pyenv Python 3.12.1 is missing: %s" % exe
    return str(exe)


def run(*args, input=None, check=False, timeout=60):
    r = subprocess.run([FRAMEWALK, *map(str, args)], capture_output=True,
                       input=input, timeout=timeout)
    if check:
        assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r


def node(script, *args, check=True):
    assert shutil.which("node"), "node is missing (scripts/deps.sh test installs it)"
    assert (JS / "node_modules").is_dir(), "run `make js-deps` (npm ci in tests/js)"
    r = subprocess.run(["node", str(JS / script), *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def go_pprof(*args):
    go = shutil.which("go")
    assert go, "go is missing (Debian golang-go; scripts/deps.sh test installs it)"
    env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local",
               HOME=os.environ.get("HOME", "/root"))
    return subprocess.run([go, "tool", "pprof", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env)


def lines(text):
    """Lines split on newlines only: str.splitlines() would also split on the
    U+2028 the hostile name carries."""
    if isinstance(text, bytes):
        text = text.decode()
    return [line for line in text.split("\n") if line]


def parse_collapsed(text):
    out = {}
    for line in lines(text):
        stack, count = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(count)
    return out


def thread_comms(pid):
    """The comm of each thread of pid, one a line."""
    task = "/proc/%d/task" % pid
    return "".join(Path(task, t, "comm").read_text() for t in os.listdir(task))


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    """One record run writing every format, chosen by each file's extension."""
    d = tmp_path_factory.mktemp("formats")
    script = d / "workload.py"
    script.write_text(WORKLOAD)
    proc = subprocess.Popen([python312(), str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        # the worker has named itself (its prctl may follow READY)
        wait_until(lambda: "fw-worker\n" in thread_comms(proc.pid), 10,
                   "the worker thread to be named fw-worker", proc)
        # wall mode: every thread, with [wait] marker frames; the Python view,
        # whose synthetic mappings the pprof checks know (whole stacks in
        # every format: test_native.py's test_whole_stacks_in_every_format)
        args = ["record", "-p", proc.pid, "-d", "2", "-r", "200", "-q", "--mode", "wall",
                "--python-only"]
        for name in OUTPUTS.values():
            args += ["-o", d / name]
        run(*args, check=True, timeout=60)
        run("record", "-p", proc.pid, "-d", "0.5", "-q", "--mode", "cpu", "--python-only",
            "-o", d / "cpu.pb.gz",
            check=True, timeout=60)
    finally:
        proc.kill()
        proc.wait()
    paths = {fmt: d / name for fmt, name in OUTPUTS.items()}
    paths["cpu"] = d / "cpu.pb.gz"
    paths["dir"] = d
    paths["pid"] = proc.pid
    return paths


# --------------------------------------------------------------------------
# pprof
# --------------------------------------------------------------------------

def test_record_picks_pprof_from_extension(capture):
    data = capture["pprof"].read_bytes()
    assert data[:2] == b"\x1f\x8b", "prof.pb.gz is not gzip"
    assert len(gzip.decompress(data)) > 0


def test_pprof_round_trip_collapsed_is_exact(capture):
    original = capture["collapsed"].read_bytes()
    r = run("report", capture["pprof"], "--format", "collapsed", check=True)
    assert r.stdout == original
    # thread names and tids survive: the named worker and the main thread
    threads = {line.split(";", 1)[0] for line in lines(original)}
    assert any(t.startswith("fw-worker (") for t in threads), threads
    assert any(t == "MainThread (%d)" % capture["pid"] for t in threads), threads


def test_pprof_round_trip_text_report(capture):
    r = run("report", capture["pprof"], check=True)
    assert r.stdout == capture["text"].read_bytes()
    head = r.stdout.decode()
    assert re.search(r"Python: +3\.12\.1", head)
    assert re.search(r"Samples: +[1-9]", head)


def test_go_tool_pprof_reads_it(capture):
    r = go_pprof("-top", capture["pprof"])
    assert r.returncode == 0, r.stderr
    assert "Type: wall" in r.stdout
    assert re.search(r"\bspin\b", r.stdout), r.stdout
    # Python names are not taken for demangled C++ (pprof strips "<...>" then)
    assert re.search(r"\s<module>$", r.stdout, re.M), r.stdout
    assert "python: 3.12.1" in r.stdout          # metadata comments
    assert "mode: wall" in r.stdout
    r = go_pprof("-traces", capture["pprof"])
    assert r.returncode == 0, r.stderr
    assert "thread_name:  fw-worker" in r.stdout
    assert re.search(r"thread_id:\s+\d+", r.stdout)
    assert "process_id:  %d" % capture["pid"] in r.stdout


def test_pprof_cpu_mode_sample_type(capture):
    p = json.loads(node("pprof-decode.js", capture["cpu"]).stdout)
    assert p["sampleTypes"] == [["samples", "count"], ["cpu", "nanoseconds"]]
    assert p["periodType"] == ["cpu", "nanoseconds"]
    assert "mode: cpu" in p["comments"]
    r = go_pprof("-top", capture["cpu"])
    assert r.returncode == 0 and "Type: cpu" in r.stdout, r.stdout + r.stderr


def test_pprof_format_decoder_reads_it(capture):
    p = json.loads(node("pprof-decode.js", capture["pprof"]).stdout)
    assert p["sampleTypes"] == [["samples", "count"], ["wall", "nanoseconds"]]
    assert p["periodType"] == ["wall", "nanoseconds"]
    assert p["period"] == 5000000                   # 200 Hz
    assert p["durationNanos"] > 1.5e9
    assert abs(p["timeNanos"] / 1e9 - time.time()) < 600
    assert "python: 3.12.1" in p["comments"]
    assert any(c.startswith("backend: ") for c in p["comments"])
    assert any(re.fullmatch(r"errors: \d+", c) for c in p["comments"])
    # Python frames, and the [wait] markers of wall mode
    assert {m["filename"] for m in p["mappings"]} == {"[python]", "[other]"}

    # thread records first: no stack, no weight, the kernel accounting
    records = [s for s in p["samples"] if not s["stack"]]
    assert p["samples"][:len(records)] == records
    assert all(s["values"] == [0, 0] for s in records)
    # Python's names (threading), the kernel's beside them
    assert {s["labels"]["thread_name"] for s in records} == {"MainThread", "fw-worker"}
    assert {s["labels"]["thread_comm"] for s in records} == {"python", "fw-worker"}
    assert all(s["labels"]["thread_wall_ns"] > 1e9 for s in records)
    worker = [s for s in records if s["labels"]["thread_name"] == "fw-worker"][0]
    assert worker["labels"]["thread_cpu_ns"] > 1e8            # it spins

    samples = p["samples"][len(records):]
    collapsed = parse_collapsed(capture["collapsed"].read_text())
    assert sum(s["values"][0] for s in samples) == sum(collapsed.values())
    for s in samples:
        count, wall = s["values"]
        assert wall == count * p["period"]
        assert set(s["labels"]) >= {"thread_id", "process_id"}
        assert s["labels"]["process_id"] == capture["pid"]
        assert s["stack"]
        assert all(f["mapping"] == ("[other]" if f["name"].startswith("[wait]") else "[python]")
                   for f in s["stack"])
    names = {f["name"] for s in samples for f in s["stack"]}
    assert {"spin", "worker", "<module>"} <= names
    assert any(n.startswith("[wait] ") for n in names)
    lines = {f["line"] for s in samples for f in s["stack"] if f["name"] == "spin"}
    assert lines and all(line > 0 for line in lines)
    workers = [s for s in samples if s["labels"].get("thread_name") == "fw-worker"]
    assert workers and all(s["stack"][-1]["name"] == "Thread._bootstrap" for s in workers)


def test_foreign_pprof_is_read(tmp_path):
    """A profile as another tool writes it: cpu/nanoseconds, no thread labels,
    an inlined frame, a real mapping with a build id."""
    f = tmp_path / "foreign.pb.gz"
    node("pprof-make.js", f)
    r = run("report", f, "--format", "collapsed", check=True)
    assert lines(r.stdout) == [
        "all (0);main (app.c:10) 1",
        "all (0);main (app.c:10);work (app.c:20);inlined_helper (helper.h:3) 3",
    ]
    # and survives our own pprof round trip, module and build id included
    out = tmp_path / "again.pb.gz"
    run("report", f, "-o", out, check=True)
    p = json.loads(node("pprof-decode.js", out).stdout)
    assert [(m["filename"], m["buildId"]) for m in p["mappings"]] == [("/usr/bin/app", "abc123")]
    assert run("report", out, "-f", "collapsed", check=True).stdout == r.stdout


# --------------------------------------------------------------------------
# speedscope and Gecko JSON
# --------------------------------------------------------------------------

def check_json_safe(path):
    raw = path.read_bytes()
    raw.decode("utf-8")                               # strict: valid UTF-8 only
    assert b"<" not in raw and b">" not in raw and b"\xe2\x80\xa8" not in raw
    return json.loads(raw)


def test_speedscope_matches_schema(capture):
    r = node("validate-speedscope.js", capture["speedscope"])
    assert r.stdout.strip() == "valid"
    doc = check_json_safe(capture["speedscope"])
    collapsed = parse_collapsed(capture["collapsed"].read_text())
    threads = {stack.split(";", 1)[0] for stack in collapsed}
    assert {p["name"] for p in doc["profiles"]} == threads
    assert all(p["type"] == "sampled" and p["unit"] == "nanoseconds" for p in doc["profiles"])
    total = sum(sum(p["weights"]) for p in doc["profiles"])
    assert total == sum(collapsed.values()) * 5000000
    frames = doc["shared"]["frames"]
    for p in doc["profiles"]:
        assert len(p["samples"]) == len(p["weights"])
        assert all(0 <= i < len(frames) for s in p["samples"] for i in s)


def test_hostile_name_survives_json_escaping(capture):
    expected = HOSTILE.replace("\udcff", "\ufffd")
    doc = check_json_safe(capture["speedscope"])
    assert expected in {f["name"] for f in doc["shared"]["frames"]}
    gecko = check_json_safe(capture["gecko"])
    strings = {s for t in gecko["threads"] for s in t["stringTable"]}
    assert any(s.startswith(expected + " (") for s in strings), strings
    # collapsed: ';', newline and control characters cannot break the line
    assert any('evil"</script><!--?:\\?' in line
               for line in lines(capture["collapsed"].read_text()))


def test_gecko_profile_structure(capture):
    doc = check_json_safe(capture["gecko"])
    meta = doc["meta"]
    assert meta["version"] == 24
    assert meta["interval"] == 5.0
    assert meta["startTime"] > 1e12                  # ms since the epoch
    assert {c["name"] for c in meta["categories"]} >= {"Python", "Other"}
    assert doc["libs"] == [] and doc["processes"] == [] and doc["pausedRanges"] == []
    collapsed = parse_collapsed(capture["collapsed"].read_text())
    per_thread = {}
    for stack, n in collapsed.items():
        per_thread[stack.split(";", 1)[0]] = per_thread.get(stack.split(";", 1)[0], 0) + n
    # a track's title: Python's name, the kernel's after it when they differ
    titles = {"MainThread": "MainThread (python)", "fw-worker": "fw-worker"}
    label = {"%s (%d)" % (titles[k.rsplit(" (", 1)[0]], int(k.rsplit(" (", 1)[1][:-1])): k
             for k in per_thread}
    assert len(doc["threads"]) == len(per_thread)
    for t in doc["threads"]:
        for key in ("name", "pid", "tid", "processType", "registerTime", "samples",
                    "stackTable", "frameTable", "stringTable", "markers"):
            assert key in t, key
        assert t["pid"] == capture["pid"]
        assert per_thread[label["%s (%d)" % (t["name"], t["tid"])]] == len(t["samples"]["data"])
        ss, st, ft = (t[k]["schema"] for k in ("samples", "stackTable", "frameTable"))
        stacks, frames, strings = t["stackTable"]["data"], t["frameTable"]["data"], t["stringTable"]
        for i, s in enumerate(stacks):
            prefix = s[st["prefix"]]
            assert prefix is None or 0 <= prefix < i
            assert 0 <= s[st["frame"]] < len(frames)
        for f in frames:
            assert 0 <= f[ft["location"]] < len(strings)
            assert 0 <= f[ft["category"]] < len(meta["categories"])
        times = [s[ss["time"]] for s in t["samples"]["data"]]
        assert times == sorted(times)
        assert all(s[ss["stack"]] is None or 0 <= s[ss["stack"]] < len(stacks)
                   for s in t["samples"]["data"])


# --------------------------------------------------------------------------
# report: every format from every input
# --------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["pprof", "collapsed"])
def test_report_renders_every_format(capture, source, tmp_path):
    src = capture[source]
    coll = run("report", src, "-f", "collapsed", check=True).stdout
    assert coll == capture["collapsed"].read_bytes()
    outs = {fmt: tmp_path / name for fmt, name in OUTPUTS.items()}
    args = ["report", src]
    for f in outs.values():
        args += ["-o", f]
    run(*args, check=True)
    assert outs["pprof"].read_bytes()[:2] == b"\x1f\x8b"
    assert run("report", outs["pprof"], "-f", "collapsed", check=True).stdout == coll
    assert node("validate-speedscope.js", outs["speedscope"]).stdout.strip() == "valid"
    assert len(check_json_safe(outs["gecko"])["threads"]) >= 2
    text = outs["text"].read_text()
    assert "Python:" in text and "Top functions" in text
    assert outs["collapsed"].read_bytes() == coll
    r = go_pprof("-top", outs["pprof"])
    assert r.returncode == 0, r.stderr


def test_report_thread_filter_and_limits(capture):
    r = run("report", capture["pprof"], "-f", "collapsed", "--thread", "fw-worker", check=True)
    got = lines(r.stdout)
    assert got and all(line.startswith("fw-worker (") for line in got)
    r = run("report", capture["pprof"], "--limit", "1", "--min-percent", "5", check=True)
    assert b"Top functions" in r.stdout
    r = run("report", capture["pprof"], "-f", "speedscope", "--thread", str(capture["pid"]),
            check=True)
    assert [p["name"] for p in json.loads(r.stdout)["profiles"]] == \
        ["MainThread (%d)" % capture["pid"]]
    # the kernel's name filters too
    r = run("report", capture["pprof"], "-f", "collapsed", "--thread", "python", check=True)
    got = lines(r.stdout)
    assert got and all(line.startswith("MainThread (") for line in got)


def test_report_reads_standard_input(capture):
    r = run("report", "-", "-f", "collapsed", input=capture["pprof"].read_bytes(), check=True)
    assert r.stdout == capture["collapsed"].read_bytes()


def test_report_usage_errors(capture):
    assert run("report").returncode == EXIT_USAGE
    assert run("report", capture["pprof"], "-f", "nope").returncode == EXIT_USAGE
    assert run("report", capture["pprof"], capture["pprof"]).returncode == EXIT_USAGE
    r = run("report", "--help")
    assert r.returncode == 0 and b"usage: framewalk report" in r.stdout
    assert b"report" in run("--help").stdout


# --------------------------------------------------------------------------
# corrupt input: exit 8, one line, never a crash
# --------------------------------------------------------------------------

def assert_bad_input(path, what=""):
    r = run("report", path, "-f", "collapsed")
    err = r.stderr.decode(errors="replace")
    assert r.returncode == EXIT_BAD_INPUT, "%s: rc %d\n%s" % (what, r.returncode, err)
    assert err.count("\n") == 1 and err.startswith("framewalk: error: cannot read "), err
    assert r.stdout == b""
    return err


def test_bad_inputs(capture, tmp_path):
    pb = capture["pprof"].read_bytes()
    raw = gzip.decompress(pb)
    cases = {
        "empty": b"",
        "gzip-magic-only": b"\x1f\x8b",
        "truncated-gzip-header": pb[:10],
        "truncated-gzip-middle": pb[:len(pb) // 2],
        "truncated-gzip-trailer": pb[:-4],
        "gzip-of-nothing": gzip.compress(b""),
        "gzip-of-garbage": gzip.compress(bytes(range(256)) * 4),
        "truncated-protobuf": raw[:len(raw) // 2],
        "gzip-truncated-protobuf": gzip.compress(raw[:len(raw) // 3]),
        "random-bytes": random.Random(1).randbytes(4096),
        "text": b"just some text\nthat is not a profile\n",
        "collapsed-bad-count": b"a;b;c x\n",
        "collapsed-no-count": b"a;b;c\n",
        "collapsed-huge-count": b"a;b 99999999999999999999999\n",
        "only-comments": b"# nothing\n\n",
        "nul-in-text": b"a;b 1\nx\x00y 2\n",
    }
    for name, data in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        assert_bad_input(f, name)
    assert "No such file" in assert_bad_input(tmp_path / "missing.pb.gz")
    assert_bad_input(tmp_path)                     # a directory


def test_mutated_pprof_never_crashes(capture, tmp_path):
    """Bit flips, byte splices and truncations of a real profile (un-gzipped
    and re-gzipped, so they reach the protobuf decoder and our checks)."""
    raw = gzip.decompress(capture["pprof"].read_bytes())
    rng = random.Random(1234)
    results = {0: 0, EXIT_BAD_INPUT: 0}
    for i in range(120):
        data = bytearray(raw)
        kind = i % 3
        if kind == 0:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            pos = rng.randrange(len(data))
            data[pos:pos + rng.randint(1, 16)] = rng.randbytes(rng.randint(1, 16))
        else:
            del data[rng.randrange(1, len(data)):]
        f = tmp_path / ("m%d.pb.gz" % i)
        f.write_bytes(gzip.compress(bytes(data)) if i % 2 else bytes(data))
        r = run("report", f, "-f", "collapsed")
        err = r.stderr.decode(errors="replace")
        assert r.returncode in results, "mutation %d: rc %d\n%s" % (i, r.returncode, err)
        assert "Sanitizer" not in err and "runtime error" not in err, err
        if r.returncode:
            assert err.count("\n") == 1, err
        results[r.returncode] += 1
    assert results[EXIT_BAD_INPUT] > 0


def test_collapsed_edge_cases(tmp_path):
    f = tmp_path / "edge.collapsed"
    f.write_bytes(b"# a comment\r\n"
                  b" (7);f (/a (copy)/b.py:3) 2\r\n"     # empty thread name, parens in path
                  b"main;leaf 5\n"                       # no thread: py-spy / perf style
                  b"t (9) 4\n"                           # a thread with an empty stack
                  b"t (9);g (<frozen x>) 0\n")           # zero counts are dropped
    r = run("report", f, "-f", "collapsed", check=True)
    assert lines(r.stdout) == [
        " (7);f (/a (copy)/b.py:3) 2",
        "all (0);main;leaf 5",
        "t (9) 4",
    ]


def test_gecko_sample_expansion_is_bounded(tmp_path):
    """Gecko samples carry no weight, so counts expand into samples; a huge
    count is scaled down to at most a million, every stack keeping one."""
    f = tmp_path / "huge.collapsed"
    f.write_bytes(b"t (1);big 5000000000000\nt (1);small 1\n")
    out = tmp_path / "huge.gecko.json"
    run("report", f, "-o", out, check=True)
    doc = check_json_safe(out)
    (thread,) = doc["threads"]
    stacks = [s[0] for s in thread["samples"]["data"]]
    assert 999000 <= len(stacks) <= 1000001
    assert len(set(stacks)) == 2                     # "small" is still there
    assert "scaled" in doc["meta"]["misc"]


def test_collapsed_several_processes(tmp_path):
    """A profile of several processes labels threads "name (tid) [pid N]";
    the pid survives collapsed -> pprof -> collapsed."""
    f = tmp_path / "multi.collapsed"
    text = b"a (11) [pid 10];f (x.py:1) 3\nb (21) [pid 20];g (y.py:2) 4\n"
    f.write_bytes(text)
    assert run("report", f, "-f", "collapsed", check=True).stdout == text
    pb = tmp_path / "multi.pb.gz"
    run("report", f, "-o", pb, check=True)
    assert run("report", pb, "-f", "collapsed", check=True).stdout == text
