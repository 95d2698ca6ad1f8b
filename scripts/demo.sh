#!/bin/sh
# `make demo`: profile the bundled workload (demo/app.py: threads, zlib, a C
# extension, pure Python) for a few seconds, print the report and say where
# the saved outputs are.
set -eu
FRAMEWALK=${1:-build/framewalk}
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
	# The real interpreter, not a wrapper script such as a pyenv shim.
	for c in python3.12 python3.11 python3 /usr/bin/python3; do
		if real=$("$c" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$real" ]; then
			PY=$real; break
		fi
	done
fi
[ -n "$PY" ] || { echo "framewalk demo: no python3 found; set PYTHON=/path/to/python" >&2; exit 1; }
mkdir -p out
echo "framewalk demo: profiling $PY demo/app.py for 5 s at 200 Hz" >&2
"$FRAMEWALK" record -r 200 -d 5 -q -o out/demo.txt -o out/demo.collapsed -- "$PY" demo/app.py --seconds 6
cat out/demo.txt
echo
echo "framewalk demo: report saved to $(pwd)/out/demo.txt"
echo "framewalk demo: collapsed stacks saved to $(pwd)/out/demo.collapsed (flamegraph.pl, speedscope)"
