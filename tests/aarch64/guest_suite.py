"""framewalk's arm64 suite, run inside the emulated arm64 guest
(scripts/aarch64-guest.sh; `make check-aarch64` stages it with the static
aarch64 binary and the workloads). Plain Python, no pytest: the guest holds
Debian's interpreters and nothing else.

Each case prints "ok NAME: what was seen" or "FAIL NAME: why"; the last
line counts them, and the exit status is 1 when any failed. Times are
generous: the guest is emulated, 30 to 500 times slower than the host.

    python3.13 guest_suite.py [--interps python3.13,python3.14,python3.15]
                           [--backends bpf,ptrace,vm] [--seconds 3]
"""
import argparse
import os
import re
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FW = os.path.join(HERE, "framewalk")
WORK = os.path.join(HERE, "workloads")
RESULTS = []


def result(name, ok, detail):
    RESULTS.append((name, ok))
    print("%s %s: %s" % ("ok" if ok else "FAIL", name, detail), flush=True)


class Workload:
    def __init__(self, interp, script, ready_timeout=300):
        self.proc = subprocess.Popen([interp, os.path.join(WORK, script)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        deadline = time.monotonic() + ready_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                self.stop()
                raise RuntimeError("%s %s: no READY in %d s" % (interp, script, ready_timeout))
            line = self.proc.stdout.readline()
            if not line:
                self.stop()
                raise RuntimeError("%s %s exited before READY: %s" % (
                    interp, script, self.proc.stderr.read()[-2000:]))
            self.lines.append(line.strip())
            if line.strip() == "READY":
                return

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def fw(*args, timeout=600):
    return subprocess.run([FW] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)


def run_on(interp, script, *args):
    """framewalk ARGS -p PID on a fresh workload, stopped afterwards."""
    w = Workload(interp, script)
    try:
        return fw(*args, "-p", w.pid)
    finally:
        w.stop()


def record_failed(name, r):
    """Say so and return True when record did not exit 0."""
    if r.returncode != 0:
        result(name, False, "record exited %d: %s" % (r.returncode, r.stderr.strip()))
    return r.returncode != 0


def collapsed(path):
    """[(thread label, [frames outermost first], count)]"""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            parts = stack.split(";")
            out.append((parts[0], parts[1:], int(count)))
    return out


def report_percent(text, label):
    m = re.search(r"^%s:\s+([\d.]+)%% of (\d+)" % label, text, re.M)
    return (float(m.group(1)), int(m.group(2))) if m else (None, 0)


def python_above_zlib(frames):
    """compress_report (zlib_loop.py) with a libz frame further in."""
    for i, x in enumerate(frames):
        if x.startswith("compress_report (") and "zlib_loop.py:" in x:
            return any("(libz.so" in y for y in frames[i + 1:])
    return False


def case_whole_stacks(interp, backend, seconds, tmp):
    """Python calling zlib: the Python frames above libz's in one stack, and
    the stacks whole (down to the thread's entry)."""
    name = "whole_stacks[%s-%s]" % (interp, backend)
    out, txt = os.path.join(tmp, name + ".collapsed"), os.path.join(tmp, name + ".txt")
    if record_failed(name, run_on(interp, "zlib_loop.py", "record", "-d", seconds, "--backend",
                                  backend, "--native", "-q", "-o", out, "-o", txt)):
        return
    stacks = collapsed(out)
    total = sum(c for _, _, c in stacks)
    merged = sum(c for _, f, c in stacks if python_above_zlib(f))
    report = open(txt, encoding="utf-8").read()
    complete, nstacks = report_percent(report, "Unwinding")
    ok = total >= 10 and merged >= 0.8 * total and complete is not None and complete >= 95
    result(name, ok, "%d samples, %d with compress_report above libz; unwinding %s%% of %d "
           "complete%s" % (total, merged, complete, nstacks,
                           "" if ok else "; top stacks: %s" % sorted(
                               stacks, key=lambda s: -s[2])[:3]))


def case_python_only(interp, backend, seconds, tmp):
    name = "python_frames[%s-%s]" % (interp, backend)
    out = os.path.join(tmp, name + ".collapsed")
    if record_failed(name, run_on(interp, "zlib_loop.py", "record", "-d", seconds, "--backend",
                                  backend, "--python-only", "-q", "-o", out)):
        return
    stacks = collapsed(out)
    total = sum(c for _, _, c in stacks)
    want = re.compile(r"^<module> \(.*zlib_loop\.py:\d+\)$")
    good = sum(c for _, f, c in stacks if f and want.match(f[0]) and len(f) >= 2
               and f[1].startswith("generate_report ("))
    ok = total >= 10 and good >= 0.95 * total
    result(name, ok, "%d samples, %d from <module> through generate_report%s" % (
        total, good, "" if ok else "; top: %s" % sorted(stacks, key=lambda s: -s[2])[:3]))


def case_dump(interp):
    name = "dump[%s]" % interp
    r = run_on(interp, "zlib_loop.py", "dump", "--native")
    ok = r.returncode == 0 and "generate_report" in r.stdout and "libz" in r.stdout
    result(name, ok, "exit %d; %s" % (r.returncode, " | ".join(r.stdout.splitlines()[:12])
                                       if ok else r.stdout[-1500:] + r.stderr[-500:]))


def case_thread_names(interp, backend, seconds, tmp):
    name = "thread_names[%s-%s]" % (interp, backend)
    out = os.path.join(tmp, name + ".collapsed")
    if record_failed(name, run_on(interp, "thread_names.py", "record", "-d", seconds, "--backend",
                                  backend, "--mode", "wall", "-q", "-o", out)):
        return
    labels = {lab.rsplit(" (", 1)[0] for lab, _, _ in collapsed(out)}
    want = {"MainThread", "reports", "a-thread-name-longer-than-15-bytes", "fw-raw"}
    result(name, want <= labels, "labels %s, want %s" % (sorted(labels), sorted(want)))


def case_check(interp):
    name = "check[%s]" % interp
    r = run_on(interp, "zlib_loop.py", "check")
    ok = r.returncode == 0 and "frame pointer" in r.stdout.lower()
    result(name, ok, "exit %d; %s" % (r.returncode, " | ".join(
        l.strip() for l in r.stdout.splitlines() if "python3" in l or "default" in l)[:600]
        if ok else r.stdout[-1500:] + r.stderr[-500:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interps", default="python3.13,python3.14,python3.15")
    ap.add_argument("--backends", default="bpf,ptrace,vm")
    ap.add_argument("--seconds", default="3")
    args = ap.parse_args()
    tmp = "/tmp/fw-suite"
    os.makedirs(tmp, exist_ok=True)
    print("framewalk: %s" % fw("--version").stdout.strip(), flush=True)
    print("kernel: %s" % os.uname().release, flush=True)
    backends = args.backends.split(",")
    for interp in args.interps.split(","):
        cases = []
        for b in backends:
            if b != "vm":
                cases.append(("whole_stacks[%s-%s]" % (interp, b),
                              lambda b=b: case_whole_stacks(interp, b, args.seconds, tmp)))
            cases.append(("python_frames[%s-%s]" % (interp, b),
                          lambda b=b: case_python_only(interp, b, args.seconds, tmp)))
            cases.append(("thread_names[%s-%s]" % (interp, b),
                          lambda b=b: case_thread_names(interp, b, args.seconds, tmp)))
        cases += [("dump[%s]" % interp, lambda: case_dump(interp)),
                  ("check[%s]" % interp, lambda: case_check(interp))]
        for name, c in cases:
            try:
                c()
            except Exception as e:    # one broken case does not hide the others
                result(name, False, "%s: %s" % (type(e).__name__, e))
    failed = [n for n, ok in RESULTS if not ok]
    print("%d passed, %d failed%s" % (len(RESULTS) - len(failed), len(failed),
                                      (": " + ", ".join(failed)) if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
