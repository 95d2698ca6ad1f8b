#!/usr/bin/env bash
# Run a command in an emulated arm64 machine: Debian unstable's arm64
# kernel and interpreters (python3.13, 3.14, 3.15, built with frame pointers
# and pointer authentication) under qemu-system-aarch64 -M virt, for what
# qemu-user cannot do (ptrace, perf events, BPF: docs/AARCH64.md).
#
#   scripts/aarch64-guest.sh COMMAND [ARG...]
#   scripts/aarch64-guest.sh --build        make the guest only
#
# COMMAND runs as root in the guest with the current directory /share: a
# copy of the host directory $FW_GUEST_SHARE (default: the current
# directory) taken at boot. Files written there stay in the guest; what
# COMMAND prints is this script's output, and its exit status is this
# script's. The guest has no network and no disk: its root is an
# initramfs held in memory.
#
# The guest is made once and cached in $FRAMEWALK_ARM64_GUEST (default
# /var/cache/framewalk/arm64-guest): the packages unpacked with mmdebstrap
# --variant=extract (nothing runs under emulation to make it; about a
# minute with a near mirror), the kernel modules, documentation and the
# standard library's tests left out, the rest one uncompressed cpio archive.
# No initramfs generator runs: everything the guest needs from its kernel
# (virtio console is not used: the PL011 serial port; ptrace, perf events,
# BPF, BTF) is built in.
#
# Environment: FW_GUEST_CPU (default max,pauth-impdef=on: pointer
# authentication on, emulated about 75 times slower than this machine;
# max,pauth=off or neoverse-n1 about 30 times), FW_GUEST_MEM (MiB, default
# 3072), FW_GUEST_SMP (default 2), FW_GUEST_TIMEOUT (seconds for the whole
# run, default 1800).
#
# Exit status: COMMAND's; 1 the guest cannot be made or started (or no
# COMMAND was given); 124 the
# run took longer than FW_GUEST_TIMEOUT; 125 the guest stopped without
# saying how COMMAND ended (its console's end is printed to stderr).
set -euo pipefail

GUEST=${FRAMEWALK_ARM64_GUEST:-/var/cache/framewalk/arm64-guest}
SUITE=${FRAMEWALK_ARM64_GUEST_SUITE:-unstable}
MIRROR=${FRAMEWALK_SID_MIRROR:-http://deb.debian.org/debian}
STAMP=.framewalk-arm64-guest
# base-files: the /bin -> usr/bin links; busybox-static: the guest's init
PKGS=base-files,busybox-static,dash,coreutils,procps,python3.13,python3.14,python3.15
PKGS=$PKGS,linux-image-arm64,bpftool,linux-perf,zlib1g

say() { printf 'aarch64-guest: %s\n' "$*" >&2; }
die() { printf 'aarch64-guest: error: %s\n' "$*" >&2; exit 1; }

case ${1:-} in
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") die "usage: $0 COMMAND [ARG...] | --build" ;;
esac

ready() { [[ -f $GUEST/$STAMP && -f $GUEST/base.cpio && -f $GUEST/vmlinuz ]]; }

build() {
    command -v mmdebstrap >/dev/null 2>&1 ||
        die "mmdebstrap is missing: scripts/deps.sh aarch64"
    command -v cpio >/dev/null 2>&1 || die "cpio is missing: apt-get install -y cpio"
    mkdir -p "$(dirname "$GUEST")"
    exec 9>"$GUEST.lock"
    if ! flock -n 9; then
        say "another run is making $GUEST, waiting for it"
        flock 9
    fi
    ready && return 0
    local tmp=$GUEST.part.$$
    rm -rf --one-file-system "$tmp"
    mkdir -p "$tmp"
    # shellcheck disable=SC2064
    trap "rm -rf --one-file-system '$tmp'" EXIT
    say "unpacking Debian $SUITE arm64 ($PKGS) into $tmp/root"
    # a mirror's snapshot may be older than its Release file's Valid-Until
    mmdebstrap --arch=arm64 --variant=extract --include="$PKGS" \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        "$SUITE" "$tmp/root" "$MIRROR" >&2 || die "mmdebstrap failed (see its messages above)"
    local r=$tmp/root kernel
    # /boot/vmlinuz-RELEASE, or (newer packages, which leave /boot to their
    # maintainer scripts) /usr/lib/modules/RELEASE/vmlinuz
    kernel=$(find "$r"/boot "$r"/usr/lib/modules -maxdepth 2 -name 'vmlinuz*' 2>/dev/null |
             sort -V | tail -n 1 || true)
    [[ -n $kernel ]] || die "no kernel (vmlinuz) in the unpacked root"
    cp "$kernel" "$tmp/vmlinuz"
    case $kernel in
        */boot/vmlinuz-*) basename "$kernel" | sed 's/^vmlinuz-//' ;;
        *) basename "$(dirname "$kernel")" ;;
    esac >"$tmp/kernel-release"
    if [[ ! -e $r/usr/bin/busybox && -x $r/bin/busybox && ! -L $r/bin ]]; then
        ln -s /bin/busybox "$r/usr/bin/busybox"
    fi
    [[ -x $r/usr/bin/busybox ]] || die "busybox (the guest's init) is not in the unpacked root"
    for v in 3.13 3.14 3.15; do
        [[ -x $r/usr/bin/python$v ]] || die "python$v is not in the unpacked root"
    done
    # What a guest in memory does without: modules (nothing is loaded),
    # firmware, documentation, the standard library's own tests.
    rm -rf --one-file-system "$r"/usr/lib/modules "$r"/usr/lib/firmware "$r"/boot \
        "$r"/usr/share/doc "$r"/usr/share/man "$r"/usr/share/locale "$r"/usr/share/info \
        "$r"/var/cache/apt "$r"/var/lib/apt/lists
    rm -rf "$r"/usr/lib/python3.1[345]/test "$r"/usr/lib/python3.1[345]/idlelib
    # No maintainer script ran: the few files a root gets from them, and the
    # merged-/usr links if base-files did not bring them.
    for d in bin sbin lib; do
        [[ -e $r/$d || -L $r/$d ]] || ln -s "usr/$d" "$r/$d"
    done
    mkdir -p "$r"/proc "$r"/sys "$r"/dev "$r"/tmp "$r"/root "$r"/share "$r"/etc
    chmod 1777 "$r"/tmp
    [[ -f $r/etc/passwd ]] || cp "$r"/usr/share/base-passwd/passwd.master "$r"/etc/passwd 2>/dev/null ||
        echo 'root:x:0:0:root:/root:/bin/sh' >"$r"/etc/passwd
    [[ -f $r/etc/group ]] || cp "$r"/usr/share/base-passwd/group.master "$r"/etc/group 2>/dev/null ||
        echo 'root:x:0:' >"$r"/etc/group
    [[ -e $r/bin/sh ]] || ln -s dash "$r"/usr/bin/sh
    (cd "$r" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc) >"$tmp/base.cpio"
    rm -rf --one-file-system "$r"
    date -u +%FT%TZ >"$tmp/$STAMP"
    if [[ -e $GUEST ]]; then
        mv "$GUEST" "$GUEST.old.$$"
        mv "$tmp" "$GUEST"
        rm -rf --one-file-system "$GUEST.old.$$"
    else
        mv "$tmp" "$GUEST"
    fi
    trap - EXIT
    say "guest ready at $GUEST: kernel $(cat "$GUEST/kernel-release"), $(du -m "$GUEST/base.cpio" | cut -f1) MB root"
}

[[ ${1:-} == --build ]] || command -v qemu-system-aarch64 >/dev/null 2>&1 ||
    die "qemu-system-aarch64 is missing: scripts/deps.sh aarch64-guest"
ready || build
[[ ${1:-} == --build ]] && exit 0

SHARE=${FW_GUEST_SHARE:-$PWD}
[[ -d $SHARE ]] || die "FW_GUEST_SHARE=$SHARE is not a directory"
run=$(mktemp -d /tmp/fw-guest.XXXXXX)
trap 'rm -rf --one-file-system "$run"' EXIT
mkdir -p "$run/extra/share"
cp -a "$SHARE"/. "$run/extra/share/"
# The command, each argument single-quoted for the guest's shell (dash).
for a in "$@"; do
    printf "'%s' " "${a//\'/\'\\\'\'}"
done >"$run/extra/fw-command"
cat >"$run/extra/fw-init" <<'EOF'
#!/usr/bin/busybox sh
/usr/bin/busybox mount -t proc proc /proc
/usr/bin/busybox mount -t sysfs sysfs /sys
/usr/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/usr/bin/busybox mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
/usr/bin/busybox mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
/usr/bin/busybox mount -t bpf bpf /sys/fs/bpf 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
cd /share
echo FW_GUEST_BEGIN
/bin/sh /fw-command </dev/null 2>&1
echo "FW_GUEST_EXIT $?"
# init's end: the kernel panics, panic=-1 restarts it, -no-reboot ends qemu
EOF
chmod 755 "$run/extra/fw-init"
(cd "$run/extra" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc) >"$run/extra.cpio"
cat "$GUEST/base.cpio" "$run/extra.cpio" >"$run/initrd.cpio"
rm -rf --one-file-system "$run/extra" "$run/extra.cpio"

set +e
timeout -s KILL "${FW_GUEST_TIMEOUT:-1800}" qemu-system-aarch64 -M virt \
    -cpu "${FW_GUEST_CPU:-max,pauth-impdef=on}" -smp "${FW_GUEST_SMP:-2}" \
    -m "${FW_GUEST_MEM:-3072}" -nographic -no-reboot -nic none \
    -kernel "$GUEST/vmlinuz" -initrd "$run/initrd.cpio" \
    -append "console=ttyAMA0 rdinit=/fw-init panic=-1 quiet loglevel=1" \
    </dev/null >"$run/console" 2>&1
qrc=$?
set -e
tr -d '\r' <"$run/console" >"$run/console.txt"
status=$(sed -n 's/^FW_GUEST_EXIT \([0-9]*\)$/\1/p' "$run/console.txt" | tail -n 1)
sed -n '/^FW_GUEST_BEGIN$/,/^FW_GUEST_EXIT [0-9]*$/p' "$run/console.txt" | sed '1d;$d'
if [[ -z $status ]]; then
    [[ $qrc == 137 ]] && { say "the guest ran longer than ${FW_GUEST_TIMEOUT:-1800} s"; tail -n 40 "$run/console.txt" >&2; exit 124; }
    say "the guest stopped without saying how the command ended (qemu exit $qrc); its console's end:"
    tail -n 40 "$run/console.txt" >&2
    exit 125
fi
exit "$status"
