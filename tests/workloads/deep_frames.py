"""A deep Python stack laid out to cross what the bpf backend reads at once
(issue 25): frames with many locals (each over a kilobyte in 3.11+'s data
stack) nested past one data-stack chunk and past the program's 4 KiB window,
then a cycle of five functions calling one another (more distinct code
objects than the program remembers per sample), then a generator's frame
(outside the data stack), then the CPU-bound leaf.

  deep_frames.py      prints READY, runs until killed

The expected chain, outermost first, is chain(): <module>, main, wide x
WIDE_DEPTH, (ring_a .. ring_e) x RING_LAPS, gen_body, spin.
"""
import sys

WIDE_DEPTH = 24
RING_LAPS = 4


def wide(depth):
    # 150 locals: a frame of ~1.3 KB in 3.11+'s data stack
    (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9,
     c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9,
     e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9,
     g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9,
     i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, j0, j1, j2, j3, j4, j5, j6, j7, j8, j9,
     k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, l0, l1, l2, l3, l4, l5, l6, l7, l8, l9,
     m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, n0, n1, n2, n3, n4, n5, n6, n7, n8, n9,
     o0, o1, o2, o3, o4, o5, o6, o7, o8, o9) = range(150)
    if depth > 1:
        return wide(depth - 1) + a0
    return ring_a(RING_LAPS) + o9


def ring_a(laps):
    return ring_b(laps)


def ring_b(laps):
    return ring_c(laps)


def ring_c(laps):
    return ring_d(laps)


def ring_d(laps):
    return ring_e(laps)


def ring_e(laps):
    if laps > 1:
        return ring_a(laps - 1)
    return sum(gen_body())


def gen_body():
    while True:
        yield spin()


def spin():
    s = 0
    for i in range(20000):
        s += i * i % 7
    return s


def main():
    wide(WIDE_DEPTH)


def chain():
    return (["<module>", "main"] + ["wide"] * WIDE_DEPTH +
            ["ring_a", "ring_b", "ring_c", "ring_d", "ring_e"] * RING_LAPS +
            ["gen_body", "spin"])


if __name__ == "__main__":
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    main()
