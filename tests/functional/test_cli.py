"""Command line: --help of every subcommand, -r parsing (checked through the
number of samples taken), output format selection and the text report."""
import re
import time

import pytest

from fwtest import INTERP_BY_ID, cpu_seconds, parse_collapsed, run_fw

HOST = "py3.12"
SUBCOMMANDS = ["record", "dump"]


def _usage_ok(r):
    assert r.returncode == 0, r
    text = r.stdout + r.stderr
    assert re.search(r"^usage:", text, re.I | re.M), r
    assert "%%" not in text, "printf escape left in the help text:\n%s" % text
    return text


def test_top_level_help():
    text = _usage_ok(run_fw("--help", timeout=20))
    for sub in SUBCOMMANDS:
        assert re.search(r"\b%s\b" % sub, text), "%s not in --help:\n%s" % (sub, text)


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_subcommand_help(sub):
    text = _usage_ok(run_fw(sub, "--help", timeout=20))
    assert sub in text
    if sub == "record":
        for opt in ("-p", "-d", "-r", "-o", "--format"):
            assert opt in text, "%s not in record --help" % opt


def test_all_listed_subcommands_have_help():
    """Any further subcommand the top-level help lists also answers --help."""
    text = run_fw("--help", timeout=20).stdout
    subs = set(SUBCOMMANDS)
    for m in re.finditer(r"^\s{2,}([a-z][a-z-]+)\s{2,}\S", text, re.M):
        subs.add(m.group(1))
    for sub in sorted(subs):
        _usage_ok(run_fw(sub, "--help", timeout=20))


def test_unknown_subcommand():
    r = run_fw("no-such-subcommand", timeout=20)
    assert r.returncode == 2, r
    assert r.stderr.startswith("framewalk: error: "), r


@pytest.mark.parametrize("rate,hz", [
    ("1k", 1000), ("1000", 1000), ("10khz", 10000), ("250hz", 250), ("100hz", 100),
    (None, 100),
], ids=["1k", "1000", "10khz", "250hz", "100hz", "default"])
def test_rate_parsing(workload, rate, hz):
    """The text report's header states the rate asked for, and the number of
    samples is that rate times the CPU time split.py (one thread, always
    runnable) had in the capture, within 15% + 3 samples: a cpu-mode sample is
    a tick that finds the thread on a CPU, however loaded the machine.

    The CPU time in the capture is bracketed from outside: the process's CPU
    time over framewalk's whole run (wall seconds W) is C; the capture
    lasted D (the header's Duration); one thread uses at most one CPU
    second per second, so it had between C - (W - D) and min(C, D) in it.
    On a machine so loaded that C < W - D the lower bound says nothing;
    the upper one still holds."""
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "30")
    args = ["record", "-p", w.pid, "-d", "2", "-q"]
    if rate is not None:
        args += ["-r", rate]
    cpu0, wall0 = cpu_seconds(w.pid), time.monotonic()
    r = run_fw(*args, timeout=30)
    cpu, wall = cpu_seconds(w.pid) - cpu0, time.monotonic() - wall0
    assert r.returncode == 0, r
    header = r.stdout.split("\n\n", 1)[0]
    assert re.search(r"\b%d Hz\b" % hz, header), "rate %d Hz not in the header:\n%s" % (
        hz, header)
    m = re.search(r"^Samples:\s+(\d+)", header, re.M)
    d = re.search(r"^Duration:\s+([0-9.]+) s", header, re.M)
    assert m and d, r
    n, dur = int(m.group(1)), float(d.group(1))
    low = 0.85 * hz * (cpu - (wall - dur)) - 3
    high = 1.15 * hz * min(cpu, dur) + 3
    assert low <= n <= high, (
        "%d samples at -r %s (%d Hz): the thread had %.2f CPU s in %.2f s of framewalk, "
        "%.2f s captured: expected %.0f..%.0f" % (n, rate, hz, cpu, wall, dur, low, high))


def test_text_report_stdout(workload):
    interp = INTERP_BY_ID[HOST]
    w = workload(interp, "split.py", "--seconds", "30")
    r = run_fw("record", "-p", w.pid, "-d", "1", "-r", "200", timeout=30)
    assert r.returncode == 0, r
    text = r.stdout
    assert re.search(r"^Target:\s+(PID\s+)?%d\b" % w.pid, text, re.M), r
    assert re.search(r"^Python:\s+%s\b" % re.escape(interp.full_version), text, re.M), r
    for field in ("Duration:", "Samples:", "Errors:"):
        assert re.search(r"^%s" % field, text, re.M), "%s missing\n%r" % (field, r)
    sections = ["Top functions (self)", "Top functions (total)", "Call tree"]
    pos = [text.find(s) for s in sections]
    assert all(p >= 0 for p in pos) and pos == sorted(pos), "sections %s\n%r" % (pos, r)
    # The hot functions are in the report: in the total section, as whole
    # stacks (the default) give their self time to what they call, the
    # clock read of their loops (a sanitizer CI pass saw 80% self in
    # [vdso] and no self sample of hot_b in 200).
    total_part = text[pos[1]:pos[2]]
    assert "hot_a" in total_part and "hot_b" in total_part, r
    m = re.search(r"^Samples:\s+(\d+)", text, re.M)
    assert m and int(m.group(1)) >= 20, r


def test_output_format_from_extension(workload, tmp_path):
    w = workload(INTERP_BY_ID[HOST], "split.py", "--seconds", "30")
    txt = tmp_path / "report.txt"
    r = run_fw("record", "-p", w.pid, "-d", "1", "-o", txt, timeout=30)
    assert r.returncode == 0, r
    assert "Top functions (self)" in txt.read_text(encoding="utf-8")
    folded = tmp_path / "report.folded"
    r = run_fw("record", "-p", w.pid, "-d", "1", "-o", folded, timeout=30)
    assert r.returncode == 0, r
    samples = parse_collapsed(folded.read_bytes(), merged=True)
    assert any(f and f[-1][0] in ("hot_a", "hot_b") for _, _, f, _ in samples)
    # --format wins over the extension.
    forced = tmp_path / "forced.txt"
    r = run_fw("record", "-p", w.pid, "-d", "1", "--format", "collapsed", "-o", forced,
               timeout=30)
    assert r.returncode == 0, r
    assert parse_collapsed(forced.read_bytes(), merged=True)
