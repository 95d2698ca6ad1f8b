#!/usr/bin/env bash
# Create and cache the Debian-unstable root that provides Python 3.13, 3.14
# and 3.15 (with headers) for framewalk's tests, without touching the host.
#
#   scripts/sid-root.sh [DIR]
#
# DIR defaults to $FRAMEWALK_SID_ROOT, else /var/cache/framewalk/sid.
# If DIR already holds every required interpreter this prints one line and
# does nothing. Otherwise it builds a fresh root with mmdebstrap into a
# private temporary directory next to DIR and renames it into place, so an
# interrupted run never leaves a half-made root at DIR.
#
# Exit status: 0 root complete; 1 cannot run (mmdebstrap missing and not
# root, bad arguments, build failed); 3 root built but a required package
# could not be installed from unstable (named in the message).
set -euo pipefail

REQUIRED_PKGS=(python3.13 python3.14 python3.15
               python3.13-dev python3.14-dev python3.15-dev
               gcc libc6-dev)
# Installed when unstable has them; their absence is not an error.
OPTIONAL_PKGS=(python3.13-nogil python3.14-nogil python3.15-nogil)
PY_VERSIONS=(3.13 3.14 3.15)
MIRROR=${FRAMEWALK_SID_MIRROR:-http://deb.debian.org/debian}

say() { printf 'sid-root: %s\n' "$*" >&2; }
die() { printf 'sid-root: error: %s\n' "$*" >&2; exit 1; }

# --- inner mode: runs as an mmdebstrap customize hook ----------------------
# Installs every package of the list that unstable offers, one apt
# transaction if possible, else one by one, so that one missing or broken
# package does not keep the others out. Never fails the hook.
if [[ ${1:-} == --hook-install ]]; then
    root=$2; shift 2
    avail=()
    for p in "$@"; do
        cand=$(chroot "$root" apt-cache policy "$p" 2>/dev/null |
               awk '/Candidate:/ {print $2}')
        if [[ -n $cand && $cand != "(none)" ]]; then
            avail+=("$p")
        else
            say "unstable has no package $p"
        fi
    done
    ((${#avail[@]})) || exit 0
    if ! chroot "$root" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${avail[@]}"; then
        for p in "${avail[@]}"; do
            chroot "$root" env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y --no-install-recommends "$p" ||
                say "could not install $p"
        done
    fi
    exit 0
fi

case ${1:-} in
    -h|--help)
        sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
        exit 0 ;;
    -*) die "unknown option $1 (usage: $0 [DIR])" ;;
esac
[[ $# -le 1 ]] || die "usage: $0 [DIR]"

DIR=${1:-${FRAMEWALK_SID_ROOT:-/var/cache/framewalk/sid}}
[[ $DIR == /* ]] || DIR=$PWD/$DIR
DIR=${DIR%/}

# Lists what DIR lacks, one item per line; empty output = complete.
missing_in() {
    local d=$1 v
    for v in "${PY_VERSIONS[@]}"; do
        [[ -x $d/usr/bin/python$v ]] || echo "python$v (package python$v)"
        [[ -f $d/usr/include/python$v/Python.h ]] ||
            echo "Python $v headers (package python$v-dev)"
    done
    [[ -x $d/usr/bin/gcc ]] || echo "gcc (package gcc)"
    [[ -f $d/usr/include/stdio.h ]] || echo "C headers (package libc6-dev)"
}

# Optional interpreters present in DIR, for the summary line.
extras_in() {
    local d=$1 v out=""
    for v in "${PY_VERSIONS[@]}"; do
        [[ -x $d/usr/bin/python${v}t ]] && out+=" python${v}t"
    done
    echo "${out# }"
}

summary() {
    local d=$1 extras
    extras=$(extras_in "$d")
    echo "sid root ready at $d (${PY_VERSIONS[*]/#/python}${extras:+; also $extras})"
}

if [[ -d $DIR ]] && [[ -z $(missing_in "$DIR") ]]; then
    echo "sid root ready at $DIR, nothing to do"
    exit 0
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "sid-root: mmdebstrap is missing; install it with: sudo apt-get install -y mmdebstrap" >&2
        exit 1
    fi
    say "installing mmdebstrap"
    apt-get update -qq || die "apt-get update failed; install mmdebstrap with: apt-get install -y mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null ||
        die "could not install mmdebstrap; install it with: apt-get install -y mmdebstrap"
fi

if [[ $(id -u) -ne 0 ]]; then
    die "building the root needs root (mmdebstrap root mode, chroot); run: sudo $0 ${1:-}"
fi

parent=$(dirname "$DIR")
mkdir -p "$parent"

# One builder at a time per DIR.
exec 9>"$DIR.lock"
if ! flock -n 9; then
    say "another run is building $DIR, waiting for it"
    flock 9
fi
# The other run may have finished the job meanwhile.
if [[ -d $DIR ]] && [[ -z $(missing_in "$DIR") ]]; then
    echo "sid root ready at $DIR, nothing to do"
    exit 0
fi

# Leftovers of interrupted runs (their pid is in the name and is gone).
# Uses a name of its own, not DIR.tmp, which may be a root made by hand.
for old in "$DIR".part.*; do
    [[ -d $old ]] || continue
    pid=${old##*.}
    if [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null; then
        if findmnt -rno TARGET | grep -q "^$old/"; then
            say "leaving $old: something is mounted inside it"
        else
            say "removing leftover $old"
            rm -rf --one-file-system "$old"
        fi
    fi
done

TMP=$DIR.part.$$
cleanup() {
    if [[ -n ${TMP:-} && -d $TMP ]]; then
        if findmnt -rno TARGET | grep -q "^$TMP/"; then
            say "not removing $TMP: something is still mounted inside it"
        else
            rm -rf --one-file-system "$TMP"
        fi
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

self=$(readlink -f "$0")
say "building Debian unstable root in $TMP (about 30 s and 800 MB)"
# gcc and libc6-dev go in through --include (they always exist); the
# interpreters go in through the hook so one renamed or dropped package
# is reported by name instead of failing the whole bootstrap.
if ! mmdebstrap --variant=apt \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --include=gcc,libc6-dev \
        --customize-hook="\"$self\" --hook-install \"\$1\" ${REQUIRED_PKGS[*]} ${OPTIONAL_PKGS[*]}" \
        sid "$TMP" "$MIRROR" >&2; then
    die "mmdebstrap failed (see its messages above)"
fi

missing=$(missing_in "$TMP")

# Swap the new root in. A previous incomplete DIR is moved aside first.
if [[ -e $DIR ]]; then
    if findmnt -rno TARGET | grep -q "^$DIR/"; then
        die "$DIR is incomplete but something is mounted inside it; unmount it and run again"
    fi
    mv "$DIR" "$DIR.old.$$"
    mv "$TMP" "$DIR"
    rm -rf --one-file-system "$DIR.old.$$"
else
    mv "$TMP" "$DIR"
fi
TMP=

if [[ -n $missing ]]; then
    {
        echo "sid-root: error: root built at $DIR, but Debian unstable did not provide:"
        sed 's/^/  - /' <<<"$missing"
        echo "  (a package may have been renamed or dropped from unstable; tests needing it will fail)"
    } >&2
    exit 3
fi
summary "$DIR"
