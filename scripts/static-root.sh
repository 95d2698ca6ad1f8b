#!/usr/bin/env bash
# Create and cache the minimal root that tests/functional/test_ship.py copies
# the static framewalk into: a small Debian-unstable system with a Python
# (python3.13-minimal) and none of the shared libraries the ordinary build
# of framewalk links (libelf, libdw, libbpf, libprotobuf-c, ncurses/tinfo,
# liblzma, libbz2, libzstd, libdebuginfod, libcurl) and no terminfo
# database: what a container image built FROM scratch or distroless has.
# Only zlib stays, because the interpreter itself links it.
#
#   scripts/static-root.sh [DIR]
#
# DIR defaults to $FRAMEWALK_STATIC_ROOT, else /var/cache/framewalk/static-root.
# A complete DIR (it has the stamp file this script writes last) is left as
# it is. Otherwise the root is built with mmdebstrap into DIR.part.PID and
# renamed into place, so an interrupted run never leaves a half-made root.
# Nothing is mounted here; the tests mount proc in DIR/proc and unmount it.
#
# Exit status: 0 root complete; 1 cannot build it (not root, mmdebstrap
# missing or failed, the interpreter missing from unstable).
set -euo pipefail

PYTHON=python3.13
STAMP=.framewalk-static-root
# Removed after the bootstrap: file name patterns under the library dirs.
REMOVE_LIBS=(libelf libdw libbpf libprotobuf-c libncurses libncursesw libtinfo
             libform libformw libmenu libmenuw libpanel libpanelw libtic
             liblzma libbz2 libzstd libdebuginfod libcurl)
MIRROR=${FRAMEWALK_SID_MIRROR:-http://deb.debian.org/debian}

say() { printf 'static-root: %s\n' "$*" >&2; }
die() { printf 'static-root: error: %s\n' "$*" >&2; exit 1; }

# --- inner mode: an mmdebstrap customize hook on the finished root --------
if [[ ${1:-} == --hook-strip ]]; then
    root=$2
    for lib in "${REMOVE_LIBS[@]}"; do
        find "$root/usr/lib" "$root/lib" -maxdepth 2 \( -name "$lib.so*" -o -name "$lib-*.so*" \) \
            -exec rm -f {} + 2>/dev/null || true
    done
    rm -rf "$root/usr/share/terminfo" "$root/lib/terminfo" "$root/etc/terminfo" \
           "$root/usr/lib/terminfo"
    # the interpreter must still start without what was taken away
    chroot "$root" "/usr/bin/$PYTHON" -c 'import os, sys, zlib' ||
        { say "$PYTHON no longer starts in the stripped root"; exit 1; }
    exit 0
fi

case ${1:-} in
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (usage: $0 [DIR])" ;;
esac
[[ $# -le 1 ]] || die "usage: $0 [DIR]"

DIR=${1:-${FRAMEWALK_STATIC_ROOT:-/var/cache/framewalk/static-root}}
[[ $DIR == /* ]] || DIR=$PWD/$DIR
DIR=${DIR%/}

ready() { [[ -f $1/$STAMP && -x $1/usr/bin/$PYTHON ]]; }

if ready "$DIR"; then
    echo "static root ready at $DIR, nothing to do"
    exit 0
fi
[[ $(id -u) -eq 0 ]] || die "building the root needs root (mmdebstrap, chroot); run: sudo $0 ${1:-}"
if ! command -v mmdebstrap >/dev/null 2>&1; then
    say "installing mmdebstrap"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } ||
        die "could not install mmdebstrap; install it with: apt-get install -y mmdebstrap"
fi

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
if ! flock -n 9; then
    say "another run is building $DIR, waiting for it"
    flock 9
fi
if ready "$DIR"; then
    echo "static root ready at $DIR, nothing to do"
    exit 0
fi

mounted_inside() { findmnt -rno TARGET | grep -q "^$1/"; }

for old in "$DIR".part.*; do
    [[ -d $old ]] || continue
    pid=${old##*.}
    if [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null; then
        if mounted_inside "$old"; then
            say "leaving $old: something is mounted inside it"
        else
            rm -rf --one-file-system "$old"
        fi
    fi
done

TMP=$DIR.part.$$
cleanup() {
    if [[ -n ${TMP:-} && -d $TMP ]] && ! mounted_inside "$TMP"; then
        rm -rf --one-file-system "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

self=$(readlink -f "$0")
say "building a minimal Debian unstable root with $PYTHON in $TMP"
mmdebstrap --variant=essential \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$PYTHON-minimal" \
    --customize-hook="\"$self\" --hook-strip \"\$1\"" \
    sid "$TMP" "$MIRROR" >&2 ||
    die "mmdebstrap failed (see its messages above; unstable may have dropped $PYTHON-minimal)"
[[ -x $TMP/usr/bin/$PYTHON ]] || die "$PYTHON is not in the new root"
date -u +%FT%TZ >"$TMP/$STAMP"

if [[ -e $DIR ]]; then
    mounted_inside "$DIR" && die "$DIR is incomplete but something is mounted inside it; unmount it and run again"
    mv "$DIR" "$DIR.old.$$"
    mv "$TMP" "$DIR"
    rm -rf --one-file-system "$DIR.old.$$"
else
    mv "$TMP" "$DIR"
fi
TMP=
echo "static root ready at $DIR ($PYTHON; no libelf, libdw, libbpf, ncurses or terminfo)"
