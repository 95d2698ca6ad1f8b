#!/usr/bin/env python3
"""Compile vendored .proto files with protoc-c into one flat directory.

    protoc-flat.py PROTOC_C PROTO_PATH OUTDIR FILE.proto...

protoc-c writes each file's code under the file's import path
(opentelemetry/proto/common/v1/common.pb-c.c) and the generated code
includes its imports by that path; meson wants a custom target's outputs in
one directory. So the files are generated into a temporary tree, then
copied to OUTDIR/NAME.pb-c.{c,h} with every '#include ".../NAME.pb-c.h"'
made '#include "NAME.pb-c.h"'. The vendored .proto files stay as upstream
wrote them; two of them with the same file name would collide, which is an
error here.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^#include "(?:[^"]*/)?([^"/]+\.pb-c\.h)"', re.M)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    protoc, proto_path, outdir = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    files = [os.path.abspath(f) for f in sys.argv[4:]]
    rels = [os.path.relpath(f, proto_path) for f in files]
    bases = [os.path.basename(r)[:-len(".proto")] for r in rels]
    if len(set(bases)) != len(bases):
        sys.exit("protoc-flat: two .proto files share a name: %s" % " ".join(rels))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([protoc, "--proto_path=" + proto_path, "--c_out=" + tmp] + list(files),
                       check=True)
        for rel, base in zip(rels, bases):
            for ext in (".pb-c.c", ".pb-c.h"):
                src = os.path.join(tmp, os.path.dirname(rel), base + ext)
                with open(src, encoding="utf-8") as f:
                    text = INCLUDE.sub(r'#include "\1"', f.read())
                dst = os.path.join(outdir, base + ext)
                with open(dst + ".tmp", "w", encoding="utf-8") as f:
                    f.write(text)
                shutil.move(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
