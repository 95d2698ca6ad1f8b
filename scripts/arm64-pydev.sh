#!/usr/bin/env bash
# Create and cache Debian unstable's arm64 Python 3.15 headers
# (libpython3.15-dev:arm64, unpacked with mmdebstrap --variant=extract,
# not installed) for `make check-aarch64`, which cross-builds the test
# extension tests/ext/fwext.c without frame pointers for the arm64 guest's
# python3.15 (its root has no compiler). Prints the include directory to
# pass as -I: it holds python3.15/ and aarch64-linux-gnu/python3.15/ (the
# multiarch pyconfig.h that python3.15/pyconfig.h includes), only those, so
# the cross compiler's own libc headers are not shadowed.
#
#   scripts/arm64-pydev.sh [DIR]
#
# DIR defaults to /var/cache/framewalk/arm64-pydev. A complete DIR (its
# stamp file written last) is left as it is. ~130 MB unpacked while it is
# made, ~2 MB kept; about 15 s with a near mirror.
#
# Exit status: 0 headers ready (the include directory on stdout); 1 cannot
# make them.
set -euo pipefail
STAMP=.framewalk-arm64-pydev
MIRROR=${FRAMEWALK_ARM64_MIRROR:-http://deb.debian.org/debian}
die() { printf 'arm64-pydev: error: %s\n' "$*" >&2; exit 1; }
DIR=${1:-/var/cache/framewalk/arm64-pydev}
DIR=${DIR%/}
ready() { [[ -f $1/$STAMP && -f $1/include/aarch64-linux-gnu/python3.15/pyconfig.h ]]; }
if ready "$DIR"; then
    echo "$DIR/include"
    exit 0
fi
command -v mmdebstrap >/dev/null 2>&1 ||
    die "mmdebstrap is missing: scripts/deps.sh aarch64 (or apt-get install -y mmdebstrap)"
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if ready "$DIR"; then
    echo "$DIR/include"
    exit 0
fi
TMP=$DIR.part.$$
trap 'rm -rf --one-file-system "$TMP"' EXIT
rm -rf --one-file-system "$DIR"
mkdir -p "$TMP"
# a mirror's snapshot may be older than its Release file's Valid-Until
mmdebstrap --arch=arm64 --variant=extract --include=libpython3.15-dev \
    --aptopt='Acquire::Check-Valid-Until "false"' unstable "$TMP/root" "$MIRROR" >&2 ||
    die "mmdebstrap failed (see its messages above)"
mkdir -p "$TMP/include/aarch64-linux-gnu"
cp -r "$TMP/root/usr/include/python3.15" "$TMP/include/" ||
    die "no usr/include/python3.15 in libpython3.15-dev:arm64"
cp -r "$TMP/root/usr/include/aarch64-linux-gnu/python3.15" "$TMP/include/aarch64-linux-gnu/" ||
    die "no usr/include/aarch64-linux-gnu/python3.15 in libpython3.15-dev:arm64"
rm -rf --one-file-system "$TMP/root"
touch "$TMP/$STAMP"
mv "$TMP" "$DIR"
echo "$DIR/include"
