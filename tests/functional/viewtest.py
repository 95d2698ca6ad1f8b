"""Helpers of the tests of framewalk's views (test_html.py, test_diff.py,
test_top.py): the binary, a Python to profile, small workloads written into
the test's tmp dir, and the headless-Chromium driver tests/browser/view.js.

The browser is Debian's chromium (/usr/bin/chromium) driven by npm
playwright-core from tests/browser/ (`npm ci` there; the fixture runs it
when node_modules is missing). Anything missing makes the tests FAIL with
the command that fixes it, never skip.
"""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from fwtest import pyenv_root, wait_ready

REPO = Path(__file__).resolve().parents[2]
BROWSER_DIR = REPO / "tests" / "browser"
CHROMIUM = os.environ.get("FW_CHROMIUM", "/usr/bin/chromium")
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">&amp;<b>bold</b>'


def framewalk():
    path = os.environ.get("FRAMEWALK") or os.environ.get("FRAMEWALK_BIN") or \
        str(REPO / "build" / "framewalk")
    if not os.access(path, os.X_OK):
        pytest.fail("framewalk binary missing: %s (build it: make)" % path)
    return path


def python312():
    exe = pyenv_root() / "versions" / "3.12.1" / "bin" / "python"
    if not os.access(str(exe), os.X_OK):
        pytest.fail("Python 3.12.1 missing: %s (expected a pyenv install)" % exe)
    return str(exe)


def write_script(directory, name, source):
    path = Path(directory) / name
    path.write_text(source, encoding="utf-8")
    return path


def fw(*args, timeout=60, check=True):
    """Run framewalk; returns the CompletedProcess (text)."""
    argv = [framewalk()] + [str(a) for a in args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if check:
        assert p.returncode == 0, "framewalk %s -> %d\n%s\n%s" % (
            " ".join(argv[1:]), p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p


def start_target(script, *args):
    """Start python3.12 SCRIPT ARGS and wait for its READY line (so a capture
    attached with -p sees the workload, not the interpreter starting up)."""
    p = subprocess.Popen([python312(), str(script)] + [str(a) for a in args],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    wait_ready(p, what=str(script))
    return p


def stop_target(p):
    if p.poll() is None:
        p.kill()
    p.wait()
    for f in (p.stdout, p.stderr):
        if f:
            f.close()


def record_async(pid, out_files, seconds=2, rate="997", mode=None, python_only=True):
    """Start `framewalk record -p PID -d SECONDS -r RATE -q -o ...`.
    997 Hz: a prime rate, so sampling never locks onto a workload's period.
    python_only: the Python view (--python-only), whose shares the view
    tests compute from the workload's own functions; False: the default,
    whole stacks."""
    argv = [framewalk(), "record", "-p", str(pid), "-d", str(seconds), "-r", rate, "-q"]
    if python_only:
        argv.append("--python-only")
    if mode:
        argv += ["--mode", mode]
    for f in out_files:
        argv += ["-o", str(f)]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_record(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, "record failed (%d): %s %s" % (proc.returncode, out, err)


def json_block(html_text):
    """The profile data embedded in an HTML view, parsed."""
    start_tag = '<script type="application/json" id="fw-data">'
    start = html_text.index(start_tag) + len(start_tag)
    end = html_text.index("</script>", start)
    block = html_text[start:end]
    assert "<" not in block, "raw '<' inside the JSON data block"
    return json.loads(block)


@pytest.fixture(scope="session")
def browser():
    """Check chromium, node and playwright-core (npm ci when missing)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail("chromium missing at %s: apt-get install -y chromium "
                    "(scripts/deps.sh test)" % CHROMIUM)
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        pytest.fail("node/npm missing: apt-get install -y nodejs npm (scripts/deps.sh test)")
    if not (BROWSER_DIR / "node_modules" / "playwright-core").is_dir():
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=str(BROWSER_DIR),
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            pytest.fail("npm ci in tests/browser failed: %s" % (p.stderr[-2000:]))
    return node


def run_view(node, html, tmp_path, **opts):
    """Open html in headless chromium via tests/browser/view.js; returns its
    report (dict). opts: hover, search, click, thread, thread_index."""
    out = Path(tmp_path) / ("%s.report.json" % Path(html).stem)
    shots = Path(tmp_path) / ("%s-shots" % Path(html).stem)
    argv = [node, str(BROWSER_DIR / "view.js"), "--html", str(html), "--out", str(out),
            "--shots", str(shots)]
    for k, v in opts.items():
        if v is not None:
            argv += ["--" + k.replace("_", "-"), str(v)]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "view.js failed: %s\n%s" % (p.stdout[-2000:], p.stderr[-4000:])
    report = json.loads(out.read_text())
    report["elapsed"] = time.monotonic() - t0
    report["shots_dir"] = str(shots)
    keep = os.environ.get("FW_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        for f in report["screenshots"]:
            shutil.copy(f, os.path.join(keep, "%s-%s" % (Path(html).stem, os.path.basename(f))))
    return report


def assert_page_safe(report):
    """No script error, no network, no dialog, no element from a name."""
    assert report.get("ready"), report
    assert report["errors"] == [], "page errors: %s" % report["errors"]
    assert report["external"] == [], "network requests: %s" % report["external"]
    assert report["dialogs"] == [] and report["dom"]["alerts"] == [], \
        "a dialog ran: %s %s" % (report["dialogs"], report["dom"]["alerts"])
    assert report["dom"]["scripts"] == 4, "script elements: %d" % report["dom"]["scripts"]
    assert report["dom"]["active"] == 0, "img/iframe/link/... elements appeared"
    allowed = {"HTML", "HEAD", "META", "TITLE", "STYLE", "SCRIPT", "BODY", "HEADER", "DIV",
               "SPAN", "LABEL", "SELECT", "OPTION", "INPUT", "BUTTON", "MAIN", "SECTION",
               "H2", "P", "TABLE", "TBODY", "TR", "TH", "TD", "FOOTER",
               "svg", "g", "rect", "text", "foreignObject", "title"}
    unexpected = sorted(set(report["dom"]["added"]) - allowed)
    assert not unexpected, "unexpected elements inserted: %s" % unexpected
    assert report["dom"]["added"].count("SCRIPT") == 4


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 5000

