#!/usr/bin/env bash
# Create and cache the arm64 sysroot the aarch64 cross build links against
# (cross/aarch64-linux-gnu.ini, `make static ARCH=aarch64`): Debian 12's
# arm64 -dev packages of every library the static build links (libc, libelf,
# libdw, libbpf, zlib, bz2, lzma, zstd, protobuf-c, ncurses, libiberty) and
# cmocka for the cross-built unit tests, unpacked (mmdebstrap
# --variant=extract, dependencies included), not installed: no dpkg
# architecture is added to this machine. Debian 12 matches the host's cross
# compiler (gcc-aarch64-linux-gnu 12, glibc 2.36): a newer release's
# libraries want a newer glibc's symbols (__isoc23_strtol) at the static link.
#
#   scripts/arm64-sysroot.sh [DIR]
#
# DIR defaults to $FRAMEWALK_ARM64_SYSROOT, else
# /var/cache/framewalk/arm64-sysroot (the path the cross file names). A
# complete DIR (it has the stamp file written last) is left as it is;
# otherwise it is made in DIR.part.PID and renamed into place. ~70 MB, about
# 15 s with a near mirror.
#
# Exit status: 0 sysroot complete; 1 cannot make it.
set -euo pipefail

STAMP=.framewalk-arm64-sysroot
SUITE=${FRAMEWALK_ARM64_SUITE:-bookworm}
MIRROR=${FRAMEWALK_ARM64_MIRROR:-http://deb.debian.org/debian}
PKGS=libc6-dev,linux-libc-dev,libelf-dev,libdw-dev,libbpf-dev,zlib1g-dev,liblzma-dev
PKGS=$PKGS,libbz2-dev,libzstd-dev,libprotobuf-c-dev,libncurses-dev,libiberty-dev,libcmocka-dev

say() { printf 'arm64-sysroot: %s\n' "$*" >&2; }
die() { printf 'arm64-sysroot: error: %s\n' "$*" >&2; exit 1; }

case ${1:-} in
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (usage: $0 [DIR])" ;;
esac
[[ $# -le 1 ]] || die "usage: $0 [DIR]"

DIR=${1:-${FRAMEWALK_ARM64_SYSROOT:-/var/cache/framewalk/arm64-sysroot}}
[[ $DIR == /* ]] || DIR=$PWD/$DIR
DIR=${DIR%/}

ready() { [[ -f $1/$STAMP && -f $1/usr/lib/aarch64-linux-gnu/libc.a ]]; }

if ready "$DIR"; then
    echo "arm64 sysroot ready at $DIR, nothing to do"
    exit 0
fi
command -v mmdebstrap >/dev/null 2>&1 ||
    die "mmdebstrap is missing: scripts/deps.sh aarch64 (or apt-get install -y mmdebstrap)"

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
if ! flock -n 9; then
    say "another run is making $DIR, waiting for it"
    flock 9
fi
if ready "$DIR"; then
    echo "arm64 sysroot ready at $DIR, nothing to do"
    exit 0
fi

TMP=$DIR.part.$$
cleanup() {
    if [[ -n ${TMP:-} && -d $TMP ]]; then
        rm -rf --one-file-system "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say "unpacking Debian $SUITE arm64 libraries into $TMP"
mmdebstrap --arch=arm64 --variant=extract --include="$PKGS" \
    "$SUITE" "$TMP" "$MIRROR" >&2 || die "mmdebstrap failed (see its messages above)"
[[ -f $TMP/usr/lib/aarch64-linux-gnu/libdw.a ]] || die "libdw.a is not in the new sysroot"
date -u +%FT%TZ >"$TMP/$STAMP"
if [[ -e $DIR ]]; then
    mv "$DIR" "$DIR.old.$$"
    mv "$TMP" "$DIR"
    rm -rf --one-file-system "$DIR.old.$$"
else
    mv "$TMP" "$DIR"
fi
TMP=
echo "arm64 sysroot ready at $DIR (Debian $SUITE)"
