#!/usr/bin/env python3
"""Readable native names, before and after (issue 26): for each target of
tests/functional/test_names.py (C++, Rust legacy and v0, Cython built here;
Debian's lxml, cryptography, numpy and PyTorch as shipped), record 2 s with each
framewalk binary given and count, over the samples whose innermost frame is
native code in the target's own files:

  named     a name as its author wrote it (not mangled, not an address)
  grouped   no symbol, named by the start of its function (an FDE start)
  raw       anything else: a mangled name, or an address inside a function
  frames    distinct frames in the target's files (a function split per
            return address counts once per address)

and, for the cost, the profiler's CPU for the capture (its `Profiler:`
line) and the time libiberty takes per symbol demangled, over every C++ and
Rust symbol of libstdc++ and of a Rust toolchain's librustc_driver when one
is installed (once per symbol per file: a sample costs nothing more once
its frames' symbols have been seen).

    bench/names.py OLD_FRAMEWALK NEW_FRAMEWALK    (as root; ~1 min)
"""
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "functional"))
from test_symbols import fde_starts  # noqa: E402

EXT = REPO / "tests" / "ext"
WORKLOAD = REPO / "tests" / "workloads" / "native_names.py"
PY311 = "/root/.pyenv/versions/3.11.7/bin/python"
DEBIAN_PY = "/usr/bin/python3.11"


def sh(*argv, cwd=None):
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                       cwd=cwd)
    if r.returncode:
        raise SystemExit("%s: %s" % (argv, r.stderr))
    return r.stdout


def build(d):
    sh("g++", "-O2", "-shared", "-fPIC", "-o", d / "libfwcxx.so", EXT / "fwcxx.cpp")
    sh("/usr/bin/rustc", "-O", "--crate-type", "cdylib", "-o", d / "libfwrs.so", EXT / "fwrs.rs")
    sh("/usr/bin/rustc", "-O", "--crate-type", "cdylib", "-C", "symbol-mangling-version=v0",
       "-o", d / "libfwrs_v0.so", EXT / "fwrs.rs")
    shutil.copy(EXT / "fwcy.pyx", d / "fwcy.pyx")
    sh("cython3", "-3", "fwcy.pyx", "-o", "fwcy.c", cwd=d)
    sh("gcc", "-O1", "-fno-inline", "-shared", "-fPIC",
       "-I/root/.pyenv/versions/3.11.7/include/python3.11", "fwcy.c", "-o",
       "fwcy.cpython-311-x86_64-linux-gnu.so", cwd=d)


def targets(d):
    return [
        ("C++ (g++, symbols)", DEBIAN_PY, ["ctypes", d / "libfwcxx.so", "fwcxx_work"],
         ("libfwcxx.so",)),
        ("Rust legacy (rustc)", DEBIAN_PY, ["ctypes", d / "libfwrs.so", "fwrs_work"],
         ("libfwrs.so",)),
        ("Rust v0 (rustc)", DEBIAN_PY, ["ctypes", d / "libfwrs_v0.so", "fwrs_work"],
         ("libfwrs_v0.so",)),
        ("Cython (cython3)", PY311, ["cython", d], ("fwcy.cpython",)),
        ("lxml (Debian)", DEBIAN_PY, ["lxml"], ("etree.cpython", "libxml2.so")),
        ("cryptography (Debian)", DEBIAN_PY, ["crypto"], ("_rust.abi3.so",)),
        ("numpy sort (Debian)", DEBIAN_PY, ["numpy"], ("_multiarray_umath.cpython",)),
        ("PyTorch conv2d (Debian)", DEBIAN_PY, ["torch"],
         ("libtorch_cpu.so", "libc10.so", "libtorch_python.so")),
    ]


FRAME = re.compile(r"^(?P<name>.+) \((?P<module>[^()]+)\)$")


def measure(fw, py, args, prefixes, tmp):
    p = subprocess.Popen([py, str(WORKLOAD)] + [str(a) for a in args], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        assert p.stdout.readline() == b"READY\n"
        paths = {}
        for line in Path("/proc/%d/maps" % p.pid).read_text().splitlines():
            path = line.split()[-1]
            if path.startswith("/") and Path(path).name.startswith(prefixes):
                paths[Path(path).name] = path
        out, txt = tmp / "n.collapsed", tmp / "n.txt"
        sh(fw, "record", "-p", p.pid, "-d", 2, "-q", "-o", out, "-o", txt)
    finally:
        p.kill()
        p.wait()
    starts = {name: fde_starts(path) for name, path in paths.items()}
    named = grouped = raw = 0
    frames = set()
    for line in out.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        parts = stack.split(";")[1:]
        for part in parts:
            m = FRAME.match(part)
            if m and m.group("module").startswith(prefixes):
                frames.add(part)
        m = FRAME.match(parts[-1]) if parts else None
        if not m or not m.group("module").startswith(prefixes):
            continue
        name, module = m.group("name"), m.group("module")
        if "+0x" in name:
            off = int(name.rsplit("+0x", 1)[1], 16)
            if off in starts.get(module, ()):
                grouped += int(count)
            else:
                raw += int(count)
        elif name.startswith(("_Z", "_R", "__pyx_")):
            raw += int(count)
        else:
            named += int(count)
    cpu = re.search(r"Profiler:\s+([\d.]+) s CPU", txt.read_text())
    return named, grouped, raw, len(frames), float(cpu.group(1)) if cpu else None


def demangle_cost():
    """µs per symbol demangled by libiberty, over real C++ and Rust symbols."""
    syms = []
    for lib in ["/usr/lib/x86_64-linux-gnu/libstdc++.so.6"] + \
            [str(p) for p in Path("/root/.rustup/toolchains").glob("*/lib/librustc_driver-*.so")]:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                             text=True).stdout
        syms += [l.split()[-1].split("@")[0] for l in out.splitlines()
                 if l.split()[-1].startswith(("_Z", "_R"))]
    src = r'''
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int main(void) {
    static char buf[1 << 16]; char **v = NULL; size_t n = 0, cap = 0, ok = 0;
    while (fgets(buf, sizeof buf, stdin)) {
        buf[strcspn(buf, "\n")] = 0;
        if (n == cap) v = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*v));
        v[n++] = strdup(buf);
    }
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i++) { char *d = cplus_demangle(v[i], DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO); ok += d != NULL; free(d); }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%zu %zu %.3f\n", n, ok, ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
    return 0;
}'''
    with tempfile.TemporaryDirectory() as d:
        Path(d, "c.c").write_text(src)
        sh("gcc", "-O2", Path(d, "c.c"), "-liberty", "-o", Path(d, "c"))
        out = subprocess.run([str(Path(d, "c"))], input="\n".join(syms), capture_output=True,
                             text=True).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    old, new = sys.argv[1:]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        build(d)
        print("| target | before: named / grouped / raw, frames | after: named / grouped / raw,"
              " frames | profiler CPU before / after |")
        print("| --- | --- | --- | --- |")
        for label, py, args, prefixes in targets(d):
            rows = [measure(fw, py, args, prefixes, d) for fw in (old, new)]

            def share(r):
                total = max(1, r[0] + r[1] + r[2])
                return "%.0f%% / %.0f%% / %.0f%% of %d, %d" % (
                    100 * r[0] / total, 100 * r[1] / total, 100 * r[2] / total, total, r[3])
            print("| %s | %s | %s | %s s / %s s |" % (label, share(rows[0]), share(rows[1]),
                                                      rows[0][4], rows[1][4]))
    n, ok, us = demangle_cost()
    print("\nlibiberty: %d symbols (%d demangled), %.2f us each" % (n, ok, us))


if __name__ == "__main__":
    main()
