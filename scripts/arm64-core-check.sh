#!/usr/bin/env bash
# Check the aarch64 build's BPF object against a real arm64 kernel's types,
# without an arm64 machine: every CO-RE relocation of the object (the
# hand-written kernel types of src/bpf/fwprof.bpf.c and arch_arm64.h) must
# resolve in the BTF of Debian's arm64 kernel, and the kernel's pt_regs must
# begin as arch_arm64.h writes it out (orig_x0 at byte 272, syscallno at
# 280). The kernel package is unpacked once (mmdebstrap --variant=extract,
# ~70 s, 33 MB kept) into /var/cache/framewalk/arm64-kernel; its BTF is cut out of the
# uncompressed Image (the .BTF section, found by its header).
#
#   scripts/arm64-core-check.sh [build-static-aarch64/fwprof.bpf.o]
#
# Exit status: 0 everything resolves; 1 a relocation or the layout does not;
# 2 the kernel could not be fetched or its BTF not found.
set -euo pipefail

OBJ=${1:-build-static-aarch64/fwprof.bpf.o}
DIR=${FRAMEWALK_ARM64_KERNEL:-/var/cache/framewalk/arm64-kernel}
SUITE=${FRAMEWALK_ARM64_SUITE:-bookworm}
MIRROR=${FRAMEWALK_ARM64_MIRROR:-http://deb.debian.org/debian}

die() { printf 'arm64-core-check: %s\n' "$*" >&2; exit "${2:-1}"; }

[[ -f $OBJ ]] || die "$OBJ is missing: make static ARCH=aarch64" 2
command -v bpftool >/dev/null || [[ -x /usr/sbin/bpftool ]] || die "bpftool is missing" 2
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

if ! compgen -G "$DIR/boot/vmlinuz-*" >/dev/null; then
    rm -rf "$DIR.part"
    mmdebstrap --arch=arm64 --variant=extract --include=linux-image-arm64 \
        --dpkgopt='path-exclude=/lib/modules/*' --dpkgopt='path-exclude=/usr/lib/modules/*' \
        "$SUITE" "$DIR.part" "$MIRROR" >&2 || die "could not unpack linux-image-arm64" 2
    # the kernel image is all that is read: its dependencies go
    find "$DIR.part" -mindepth 1 -maxdepth 1 ! -name boot -exec rm -rf {} +
    mv "$DIR.part" "$DIR"
fi
IMAGE=$(ls "$DIR"/boot/vmlinuz-* | head -1)
BTF=$DIR/vmlinux.btf
if [[ ! -s $BTF ]]; then
    python3 - "$IMAGE" "$BTF" <<'PY' || die "no BTF found in $IMAGE" 2
import gzip, struct, sys
data = open(sys.argv[1], 'rb').read()
if data[:2] == b'\x1f\x8b':
    data = gzip.decompress(data)
best, at = None, 0
while True:
    at = data.find(b'\x9f\xeb\x01\x00', at)
    if at < 0:
        break
    hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from('<IIIII', data, at + 4)
    if hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 4096 and str_len > 4096:
        size = hdr_len + str_off + str_len
        if at + size <= len(data) and (not best or size > best[1]):
            best = (at, size)
    at += 1
if not best:
    sys.exit(1)
open(sys.argv[2], 'wb').write(data[best[0]:best[0] + best[1]])
PY
fi
echo "kernel: $(basename "$IMAGE"), BTF $(stat -c %s "$BTF") bytes"
# min_core_btf keeps the kernel types and members the object's relocations
# resolved to; one that does not resolve is left out silently, so the
# members the program reads are looked for in what it kept (a new kernel
# field read by fwprof.bpf.c or arch_arm64.h belongs in this list; the
# iterator's context is checked by the verifier, not relocated)
NEEDED="task_struct.on_cpu task_struct.pid task_struct.tgid task_struct.nvcsw
        task_struct.nivcsw task_struct.thread thread_struct.uw (anon).tp_value"
"$BPFTOOL" gen min_core_btf "$BTF" "$BTF.min" "$OBJ" ||
    die "$OBJ: bpftool gen min_core_btf failed against $(basename "$IMAGE")"
kept=$("$BPFTOOL" btf dump file "$BTF.min" format raw |
    awk "/^\[/{split(\$0, a, \"'\"); s=a[2]; next} /^\t'/{split(\$0, a, \"'\"); print s \".\" a[2]}")
missing=""
for f in $NEEDED; do
    grep -qxF "$f" <<<"$kept" || missing="$missing $f"
done
[[ -z $missing ]] || die "$OBJ: not resolved against $(basename "$IMAGE"):$missing"
echo "CO-RE: the kernel fields the program reads resolve ($(wc -w <<<"$NEEDED") checked)"
layout=$("$BPFTOOL" btf dump file "$BTF" format raw |
    awk "/^\[[0-9]+\] STRUCT 'pt_regs' /{on=1; next} on && /^\[/{on=0} on" |
    grep -E "'(orig_x0|syscallno)'" | sed -E "s/.*'([a-z_0-9]+)'.*bits_offset=([0-9]+).*/\1=\2/" | tr '\n' ' ')
[[ $layout == "orig_x0=2176 syscallno=2240 " ]] ||
    die "the kernel's pt_regs differs from src/bpf/arch_arm64.h's: $layout (bit offsets)"
echo "pt_regs: orig_x0 at byte 272, syscallno at 280, as arch_arm64.h has them"
