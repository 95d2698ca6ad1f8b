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
import math
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
    def __init__(self, interp, script, *args, ready_timeout=300):
        self.proc = subprocess.Popen([interp, os.path.join(WORK, script)] + [str(a) for a in args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        # the pipe's bytes, read as they come: a buffered readline would take
        # two lines written at once (asyncio_tasks.py's) and leave select
        # waiting for the second
        fd, pending = self.proc.stdout.fileno(), b""
        deadline = time.monotonic() + ready_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.stop()
                raise RuntimeError("%s %s: no READY in %d s" % (interp, script, ready_timeout))
            data = os.read(fd, 65536)
            if not data:
                self.stop()
                raise RuntimeError("%s %s exited before READY: %s" % (
                    interp, script, self.proc.stderr.read()[-2000:].decode("utf-8", "replace")))
            pending += data
            *done, pending = pending.split(b"\n")
            self.lines += [l.decode("utf-8", "replace").strip() for l in done]
            if "READY" in self.lines:
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


def run_on(interp, script, *args, ready_timeout=300):
    """framewalk ARGS -p PID on a fresh workload, stopped afterwards."""
    w = Workload(interp, script, ready_timeout=ready_timeout)
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


def record_stacks(name, interp, script, tmp, backend, seconds, *args, report=False):
    """record --backend BACKEND -d SECONDS ARGS of a fresh workload to
    collapsed stacks: [(thread, frames, count)], or None when record failed
    (the case's result already given). report: (stacks, the text report)."""
    out, txt = os.path.join(tmp, name + ".collapsed"), os.path.join(tmp, name + ".txt")
    if record_failed(name, run_on(interp, script, "record", "-d", seconds, "--backend", backend,
                                  *args, "-q", "-o", out, *(("-o", txt) if report else ()))):
        return None
    if report:
        return collapsed(out), open(txt, encoding="utf-8").read()
    return collapsed(out)


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
    got = record_stacks(name, interp, "zlib_loop.py", tmp, backend, seconds, "--native",
                        report=True)
    if got is None:
        return
    stacks, report = got
    total = sum(c for _, _, c in stacks)
    merged = sum(c for _, f, c in stacks if python_above_zlib(f))
    complete, nstacks = report_percent(report, "Unwinding")
    ok = total >= 10 and merged >= 0.8 * total and complete is not None and complete >= 95
    result(name, ok, "%d samples, %d with compress_report above libz; unwinding %s%% of %d "
           "complete%s" % (total, merged, complete, nstacks,
                           "" if ok else "; top stacks: %s" % sorted(
                               stacks, key=lambda s: -s[2])[:3]))


STAGE = re.compile(r"^stage(\d+) \(fwext\.so")


def ext_stages(frames):
    """The stage numbers of fwext's frames below ext_loop (nofp_ext.py),
    outermost first; None when ext_loop is not above them."""
    for i, x in enumerate(frames):
        if x.startswith("ext_loop (") and "nofp_ext.py:" in x:
            return [int(m.group(1)) for m in map(STAGE.match, frames[i + 1:]) if m]
    return None


def case_nofp_ext(interp, backend, seconds, tmp):
    """Python over a C extension built without frame pointers (fwext.so,
    make check-aarch64): its frames keep no record, so only their CFI
    (libdw's aarch64 backend; the bpf backend's copied stack) leads from
    them to Python's. ext_loop above stage0, 1, ... k in order, and the
    stacks whole."""
    name = "nofp_ext[%s-%s]" % (interp, backend)
    got = record_stacks(name, interp, "nofp_ext.py", tmp, backend, seconds, "--native",
                        report=True)
    if got is None:
        return
    stacks, report = got
    total = sum(c for _, _, c in stacks)
    in_ext = [(f, c) for _, f, c in stacks if any(STAGE.match(y) for y in f)]
    n_ext = sum(c for _, c in in_ext)
    under = [(ext_stages(f), c) for f, c in in_ext]
    merged = sum(c for st, c in under if st)
    ordered = sum(c for st, c in under if st and st == list(range(len(st))))
    complete, nstacks = report_percent(report, "Unwinding")
    breaks = re.search(r"^Breaks:\s+(.*)$", report, re.M)
    ok = (total >= 10 and n_ext >= 0.8 * total and merged >= 0.95 * n_ext and
          ordered >= 0.95 * n_ext and complete is not None and complete >= 95)
    result(name, ok, "%d samples, %d in fwext's stages, %d of them under ext_loop, %d with "
           "stage0..k all there in order; unwinding %s%% of %d complete%s%s" % (
               total, n_ext, merged, ordered, complete, nstacks,
               " (breaks: %s)" % breaks.group(1)[:300] if breaks else "",
               "" if ok else "; top stacks: %s" % sorted(stacks, key=lambda s: -s[2])[:3]))


def case_python_only(interp, backend, seconds, tmp):
    name = "python_frames[%s-%s]" % (interp, backend)
    stacks = record_stacks(name, interp, "zlib_loop.py", tmp, backend, seconds, "--python-only")
    if stacks is None:
        return
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
    stacks = record_stacks(name, interp, "thread_names.py", tmp, backend, seconds, "--mode", "wall")
    if stacks is None:
        return
    labels = {lab.rsplit(" (", 1)[0] for lab, _, _ in stacks}
    want = {"MainThread", "reports", "a-thread-name-longer-than-15-bytes", "fw-raw"}
    result(name, want <= labels, "labels %s, want %s" % (sorted(labels), sorted(want)))


def case_check(interp):
    name = "check[%s]" % interp
    r = run_on(interp, "zlib_loop.py", "check")
    ok = r.returncode == 0 and "frame pointer" in r.stdout.lower()
    result(name, ok, "exit %d; %s" % (r.returncode, " | ".join(
        l.strip() for l in r.stdout.splitlines() if "python3" in l or "default" in l)[:600]
        if ok else r.stdout[-1500:] + r.stderr[-500:]))


def case_async(interp, backend, seconds, tmp):
    """--async in wall mode: the tasks of asyncio_tasks.py as [task] frames,
    the spinning ones with their coroutine chain, the parked ones too."""
    name = "async[%s-%s]" % (interp, backend)
    stacks = record_stacks(name, interp, "asyncio_tasks.py", tmp, backend, seconds, "--async",
                           "--mode", "wall", "--python-only")
    if stacks is None:
        return
    tasks = {}
    for _, f, c in stacks:
        for x in f:
            if x.startswith("[task] "):
                tasks[x[7:]] = tasks.get(x[7:], 0) + c
    spin = sum(c for _, f, c in stacks
               if "[task] cpu-1" in f and any(x.startswith("cpu_inner (") for x in f))
    want = {"cpu-1", "cpu-2", "sleepy", "queue-eater"}
    ok = want <= set(tasks) and spin > 0
    result(name, ok, "tasks %s; cpu-1 through cpu_inner in %d samples" % (
        sorted(tasks.items()), spin))


def case_gil(interp, backend, seconds, tmp):
    """--mode gil: two threads spinning for the GIL, each holding it about
    half its ticks (the report's per-thread GIL line)."""
    name = "gil[%s-%s]" % (interp, backend)
    txt = os.path.join(tmp, name + ".txt")
    if record_failed(name, run_on(interp, "gil_contention.py", "record", "-d", seconds,
                                  "--backend", backend, "--mode", "gil", "--python-only",
                                  "-q", "-o", txt)):
        return
    text = open(txt, encoding="utf-8").read()
    rows = re.findall(r"^      GIL: held (\d+)%, waiting (\d+)% of (\d+) ticks", text, re.M)
    busy = [(int(h), int(w)) for h, w, _ in rows if int(h) > 10]
    ok = len(busy) == 2 and all(abs(h - 50) <= 20 and abs(w - 50) <= 20 for h, w in busy)
    result(name, ok, "held/waiting per spinning thread: %s" % busy)


def case_exception(interp, backend, seconds, tmp):
    """--mode exception: only the threads handling an exception, each sample
    ending in <exception TYPE>; the thread working outside a handler never."""
    name = "exception[%s-%s]" % (interp, backend)
    stacks = record_stacks(name, interp, "exceptions.py", tmp, backend, seconds, "--mode",
                           "exception", "--python-only")
    if stacks is None:
        return
    total = sum(c for _, _, c in stacks)
    marked = sum(c for _, f, c in stacks if any(x.startswith("<exception ") for x in f))
    calm = sum(c for t, _, c in stacks if t.startswith("calm "))
    types = sorted({x for _, f, _ in stacks for x in f if x.startswith("<exception ")})
    ok = total >= 10 and marked == total and calm == 0 and "<exception Retry>" in types
    result(name, ok, "%d samples, %d ending in an exception (%s), %d of the calm thread" % (
        total, marked, ", ".join(types), calm))


def case_kernel(interp, backend, seconds, tmp):
    """--native --kernel in wall mode: the sleeping thread of busy_sleep.py
    waits in the kernel's nanosleep, named from /proc/kallsyms (frames that
    end in " [k]")."""
    name = "kernel[%s-%s]" % (interp, backend)
    stacks = record_stacks(name, interp, "busy_sleep.py", tmp, backend, seconds, "--native",
                           "--kernel", "--mode", "wall")
    if stacks is None:
        return
    sleeping = [(f, c) for _, f, c in stacks if any(x.startswith("sleeper (") for x in f)]
    total = sum(c for _, c in sleeping)
    named = sum(c for f, c in sleeping
                if any(x.endswith(" [k]") and ("sleep" in x or "schedule" in x) for x in f))
    ok = total >= 5 and named >= 0.8 * total
    result(name, ok, "%d samples of the sleeper, %d with a named kernel sleep%s" % (
        total, named, "" if ok else "; top: %s" % sorted(sleeping, key=lambda s: -s[1])[:2]))


def leaf_shares(stacks):
    leaves = {}
    for _, f, c in stacks:
        py = [x for x in f if re.search(r"\.py:\d+\)$", x)]
        if py:
            leaf = py[-1].split(" (")[0]
            leaves[leaf] = leaves.get(leaf, 0) + c
    total = sum(leaves.values())
    return {k: v / total for k, v in leaves.items()} if total else {}, total


def noise_floor(a, na, b, nb):
    """The points two independent samples of na and nb draws from one
    distribution (a and b pooled) are expected apart: half the expected L1
    distance, each share's difference ~ normal, E|X| = sqrt(2/pi) sd."""
    keys = set(a) | set(b)
    pooled = {k: (a.get(k, 0) * na + b.get(k, 0) * nb) / (na + nb) for k in keys}
    return 50 * sum(math.sqrt(2 / math.pi) * math.sqrt(p * (1 - p) * (1 / na + 1 / nb))
                    for p in pooled.values())


def case_accuracy(interp, seconds, tmp):
    """The default (bpf) against a stopped read (ptrace) of the same process
    at the same time, at coprime rates (../shared/notes/accuracy.md): the
    distribution of the innermost Python function within 5 points.

    With samples enough for 5 points to mean something: two independent
    samples of ~800 each (20 s at ~90 Hz) are ~6 points apart by chance
    alone (two bpf captures of one target at once: 8.3 points in the guest),
    so the rates are 397 and 199 Hz and the case fails if the noise floor
    of the counts it got is above 3 points. The workload runs longer than
    the capture (callshapes.py stops after its SECONDS, 10 by default: the
    20 s captures had sampled it for 8 s)."""
    name = "accuracy[%s]" % interp
    w = Workload(interp, "callshapes.py", float(seconds) + 120)
    try:
        outs = {k: os.path.join(tmp, "%s-%s.collapsed" % (name, k)) for k in ("bpf", "ref")}
        procs = {
            "bpf": subprocess.Popen([FW, "record", "-p", str(w.pid), "-d", str(seconds),
                                     "-r", "397", "--backend", "bpf", "--python-only", "-q",
                                     "-o", outs["bpf"]], stderr=subprocess.PIPE, text=True),
            "ref": subprocess.Popen([FW, "record", "-p", str(w.pid), "-d", str(seconds),
                                     "-r", "199", "--backend", "ptrace", "--python-only", "-q",
                                     "-o", outs["ref"]], stderr=subprocess.PIPE, text=True),
        }
        errs = {k: p.communicate(timeout=600)[1] for k, p in procs.items()}
    finally:
        w.stop()
    for k, p in procs.items():
        if p.returncode != 0:
            result(name, False, "%s exited %d: %s" % (k, p.returncode, errs[k].strip()))
            return
    (a, na), (b, nb) = leaf_shares(collapsed(outs["bpf"])), leaf_shares(collapsed(outs["ref"]))
    points = 50 * sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))
    floor = noise_floor(a, na, b, nb) if na and nb else float("inf")
    top = sorted(b, key=lambda k: -b[k])[:5]
    ok = floor <= 3.0 and points <= 5.0
    result(name, ok, "leaf distributions %.1f points apart (bpf %d, ptrace %d samples; "
           "%.1f points expected by chance alone); ptrace's top: %s; bpf's: %s" % (
               points, na, nb, floor, ", ".join("%s %.1f%%" % (k, 100 * b[k]) for k in top),
               ", ".join("%s %.1f%%" % (k, 100 * a.get(k, 0)) for k in top)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interps", default="python3.13,python3.14,python3.15")
    ap.add_argument("--backends", default="bpf,ptrace,vm")
    ap.add_argument("--seconds", default="3")
    ap.add_argument("--accuracy-seconds", default="30")
    ap.add_argument("--cases", default="",
                    help="only the cases whose name starts with one of these (comma-separated)")
    args = ap.parse_args()
    tmp = "/tmp/fw-suite"
    os.makedirs(tmp, exist_ok=True)
    print("framewalk: %s" % fw("--version").stdout.strip(), flush=True)
    print("kernel: %s" % os.uname().release, flush=True)
    backends = args.backends.split(",")
    for interp in args.interps.split(","):
        # The guest's root is unpacked, not installed: no .pyc files. An
        # import compiles its modules (and writes them to the RAM root) at
        # the emulated speed (7 s for these with pauth=off): done once here,
        # so no case's first capture waits on it.
        t0 = time.monotonic()
        warm = subprocess.run([interp, "-c", "import asyncio, concurrent.futures, functools, "
                               "socket, threading, zlib"], capture_output=True, text=True,
                              timeout=1800)
        print("%s: the standard library's modules compiled in %.0f s%s" % (
            interp, time.monotonic() - t0, "" if warm.returncode == 0 else
            " (failed: %s)" % warm.stderr.strip()[-300:]), flush=True)
        cases = []
        for b in backends:
            if b != "vm":
                cases.append(("whole_stacks[%s-%s]" % (interp, b),
                              lambda b=b: case_whole_stacks(interp, b, args.seconds, tmp)))
            cases.append(("python_frames[%s-%s]" % (interp, b),
                          lambda b=b: case_python_only(interp, b, args.seconds, tmp)))
            cases.append(("thread_names[%s-%s]" % (interp, b),
                          lambda b=b: case_thread_names(interp, b, args.seconds, tmp)))
            cases.append(("async[%s-%s]" % (interp, b),
                          lambda b=b: case_async(interp, b, args.seconds, tmp)))
            cases.append(("gil[%s-%s]" % (interp, b),
                          lambda b=b: case_gil(interp, b, args.seconds, tmp)))
            if b != "vm" and interp == "python3.15" and os.path.exists(
                    os.path.join(WORK, "fwext.so")):     # built for 3.15's headers
                cases.append(("nofp_ext[%s-%s]" % (interp, b),
                              lambda b=b: case_nofp_ext(interp, b, args.seconds, tmp)))
            if b != "vm":
                cases.append(("kernel[%s-%s]" % (interp, b),
                              lambda b=b: case_kernel(interp, b, args.seconds, tmp)))
            if b != "bpf":      # exception mode: vm and ptrace (README)
                cases.append(("exception[%s-%s]" % (interp, b),
                              lambda b=b: case_exception(interp, b, args.seconds, tmp)))
        if "bpf" in backends and "ptrace" in backends:
            cases.append(("accuracy[%s]" % interp,
                          lambda: case_accuracy(interp, args.accuracy_seconds, tmp)))
        cases += [("dump[%s]" % interp, lambda: case_dump(interp)),
                  ("check[%s]" % interp, lambda: case_check(interp))]
        only = [x for x in args.cases.split(",") if x]
        for name, c in cases:
            if only and not any(name.startswith(x) for x in only):
                continue
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
