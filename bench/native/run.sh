#!/bin/sh
# Whole-stack benchmark (framewalk --native, ptrace backend, vs perf).
#   bench/native/run.sh [FRAMEWALK] [--quick] [bench.py options...]
# Prints a Markdown table; raw figures go to bench/native/results/native.json.
# Run as root. Needs perf, gcc, the pyenv 3.12 build and the sid root
# (scripts/sid-root.sh). ~10 min in full, ~3 min with --quick.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fw="$repo/build/framewalk"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then fw=$1; shift; fi
quick=
if [ $# -gt 0 ] && [ "$1" = "--quick" ]; then quick="--reps 3 --unit 1 --seconds 2"; shift; fi
[ -x "$fw" ] || { echo "run.sh: no framewalk binary at $fw (make first)" >&2; exit 2; }
command -v perf >/dev/null || { echo "run.sh: perf not installed" >&2; exit 2; }
if [ ! -x "${FRAMEWALK_SID_ROOT:-/var/cache/framewalk/sid}/usr/bin/python3.15" ]; then
    "$repo/scripts/sid-root.sh"
fi
mkdir -p "$here/results"
# shellcheck disable=SC2086
exec /usr/bin/python3 "$here/bench.py" --framewalk "$fw" --json "$here/results/native.json" \
    $quick "$@"
