"""Native code of several languages called from one Python function, for
tests/functional/test_names.py. argv[1] picks it:

  ctypes PATH SYMBOL   SYMBOL(rounds) of the library at PATH (C++ or Rust)
  phases PATH FIRST SECONDS QUIET SECOND
                       FIRST for SECONDS from the first call after READY,
                       then QUIET seconds of Python alone, then SECOND
  cython DIR           fwcy.hot and fwcy.Clock().tick, built into DIR
  lxml                 lxml.etree parsing a document (Cython over libxml2)
  crypto               cryptography parsing an X.509 certificate (Rust)
  numpy                numpy sorting an array (C++ kernels)
  torch                PyTorch (Debian's python3-torch): a small convolution
                       and elementwise operations, one thread (C++ ATen)

Prints READY; runs until killed."""
import sys


def setup(kind, args):
    if kind == "ctypes":
        import ctypes
        lib = ctypes.CDLL(args[0])
        fn = getattr(lib, args[1])
        fn.restype = ctypes.c_uint64
        return lambda: fn(40)
    if kind == "phases":
        import ctypes
        import time
        lib = ctypes.CDLL(args[0])
        first, second = getattr(lib, args[1]), getattr(lib, args[4])
        first.restype = second.restype = ctypes.c_uint64
        until_quiet, until_second = float(args[2]), float(args[2]) + float(args[3])
        start = []

        def phase():
            if len(start) < 2:              # the call before READY, then the first after
                start.append(time.monotonic())
                return first(40)
            t = time.monotonic() - start[1]
            if t < until_quiet:
                return first(40)
            if t < until_second:
                return sum(i * i for i in range(2000))
            return second(40)
        return phase
    if kind == "cython":
        sys.path.insert(0, args[0])
        import fwcy
        clock = fwcy.Clock()
        return lambda: (fwcy.hot(200000), clock.tick(200000))
    if kind == "lxml":
        from lxml import etree
        doc = b"<root>" + b"".join(b'<item id="%d" kind="k%d">text %d &amp; more</item>'
                                   % (i, i % 7, i) for i in range(2000)) + b"</root>"
        return lambda: len(etree.fromstring(doc).findall("item"))
    if kind == "crypto":
        import datetime
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "framewalk.test"),
                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, "framewalk")])
        now = datetime.datetime(2026, 1, 1)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(key.public_key()).serial_number(12345)
                .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=365))
                .add_extension(x509.SubjectAlternativeName(
                    [x509.DNSName("h%d.framewalk.test" % i) for i in range(50)]), False)
                .sign(key, hashes.SHA256()))
        der = cert.public_bytes(serialization.Encoding.DER)

        def parse():
            for _ in range(50):
                c = x509.load_der_x509_certificate(der)
                c.subject.rfc4514_string()
                c.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        return parse
    if kind == "torch":
        import torch
        torch.set_num_threads(1)               # the work on this thread, under caller
        x, w = torch.randn(1, 8, 32, 32), torch.randn(16, 8, 3, 3)

        def step():
            for _ in range(20):
                y = torch.nn.functional.conv2d(x, w, padding=1)
                y = torch.relu(y * 0.5 + 1.0).sum(dim=1)
            return y
        return step
    if kind == "numpy":
        import numpy
        data = numpy.random.default_rng(1).random(200000)
        return lambda: numpy.sort(data, kind="quicksort")
    raise SystemExit("unknown kind %r" % kind)


def caller(work):
    while True:
        work()                                   # @caller


work = setup(sys.argv[1], sys.argv[2:])
work()
sys.stdout.write("READY\n")
sys.stdout.flush()
caller(work)
