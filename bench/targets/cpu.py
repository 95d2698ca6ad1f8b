"""Single-threaded CPU-bound benchmark target (Python 3.8+; the benchmarks
run it under python3.15 in the Debian-unstable root).

The work is pure Python arithmetic at the bottom of a call chain 14 frames
deep (<module> -> main -> spin|serve -> work -> level x 9 -> leaf_a|leaf_b),
so a profiler has a realistic, bounded stack to walk and the profile has a
handful of distinct stacks.

Modes:
  spin [--seconds S]      burn CPU until killed (or for S seconds).
                          Prints "READY" once the loop runs.
  units [--unit-ms M] [--seconds S] [--zlib]
                          ~M ms units of fixed work back to back, each
                          timestamped ("START END" lines, monotonic); --zlib:
                          a zlib.compress beside each call chain.
  serve [--round S]       calibrate one fixed unit of work lasting ~S
                          seconds (default 1.0) unprofiled, print
                          "READY <iterations>", then for every line "go" on
                          stdin run exactly that work and print
                          "<wall seconds> <thread cpu seconds>"; "quit" exits.
                          The orchestrator attaches or detaches profilers
                          between rounds, so every condition is measured on
                          the same process, interleaved.
"""
import sys
import time
import zlib

DEPTH = 8


def leaf_a(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def leaf_b(n):
    s = 1
    for i in range(n):
        s = (s * 31 + i) & 0xFFFF
    return s


def level(d, n):
    if d:
        return level(d - 1, n)
    return leaf_a(n) + leaf_b(n // 2)


ZDATA = bytes(range(256)) * 64


def work(iterations, chunk=2000):
    t = 0
    for _ in range(iterations):
        t += level(DEPTH, chunk)
    return t


def work_zlib(iterations, chunk=2000):
    """work, with a zlib.compress (C, libz) beside each call chain."""
    t = 0
    for _ in range(iterations):
        t += level(DEPTH, chunk) + len(zlib.compress(ZDATA, 6))
    return t


def spin(seconds):
    deadline = time.monotonic() + seconds if seconds else None
    print("READY", flush=True)
    while deadline is None or time.monotonic() < deadline:
        work(50)


def calibrate(n, min_seconds, fn=work):
    """Double n until fn(n) takes at least min_seconds; (n, seconds it took)."""
    while True:
        t0 = time.perf_counter()
        fn(n)
        dt = time.perf_counter() - t0
        if dt >= min_seconds:
            return n, dt
        n *= 2


def serve(round_seconds):
    # Calibrate: grow until one batch takes >= 0.2 s, then scale.
    n, dt = calibrate(10, 0.2)
    iterations = max(1, int(n * round_seconds / dt))
    print("READY %d" % iterations, flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "quit":
            break
        if cmd != "go":
            continue
        c0 = time.thread_time()
        t0 = time.perf_counter()
        work(iterations)
        t1 = time.perf_counter()
        c1 = time.thread_time()
        print("%.6f %.6f" % (t1 - t0, c1 - c0), flush=True)


def units(unit_ms, seconds, fn=work):
    n, dt = calibrate(1, 0.1, fn)
    iterations = max(1, int(round(n * unit_ms / 1000.0 / dt)))
    print("READY %d" % iterations, flush=True)
    deadline = time.monotonic() + seconds
    out = []
    mono = time.monotonic
    while True:
        t0 = mono()
        if t0 >= deadline:
            break
        fn(iterations)
        out.append("%.6f %.6f" % (t0, mono()))
        if len(out) >= 50:
            sys.stdout.write("\n".join(out) + "\n")
            sys.stdout.flush()
            out = []
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.write("END\n")
    sys.stdout.flush()


def main():
    args = sys.argv[1:]
    mode = args[0] if args else "spin"

    def opt(name, default):
        return float(args[args.index(name) + 1]) if name in args else default

    if mode == "spin":
        spin(opt("--seconds", 0.0))
    elif mode == "serve":
        serve(opt("--round", 1.0))
    elif mode == "units":
        units(opt("--unit-ms", 20.0), opt("--seconds", 60.0),
              work_zlib if "--zlib" in args else work)
    else:
        sys.exit("usage: cpu.py spin [--seconds S] | serve [--round S] | "
                 "units [--unit-ms M] [--seconds S] [--zlib]")


if __name__ == "__main__":
    main()
