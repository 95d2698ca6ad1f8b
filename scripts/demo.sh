#!/bin/sh
# `make demo`: profile the bundled service (demo/app.py: threads, zlib,
# OpenSSL's hashing, the demo's own C extension built without frame pointers,
# pure Python) for 5 s with whole stacks, print the text report and write the
# HTML flame graph. It runs on Debian unstable's python3.15 (frame pointers
# on, PEP 831), in the root scripts/sid-root.sh makes; when that root cannot
# be made it says so in one line and profiles the best local interpreter.
#
#   scripts/demo.sh [FRAMEWALK]      PYTHON=/path/to/python skips the root
set -eu
FRAMEWALK=$(realpath "${1:-build/framewalk}")
cd "$(dirname "$0")/.."
ROOT=${FRAMEWALK_SID_ROOT:-/var/cache/framewalk/sid}
mkdir -p out
rm -f out/demo.txt out/demo.html out/demo.collapsed

say() { echo "framewalk demo: $*" >&2; }

# Build demo/fastpath.c without frame pointers; $1 runs a command (in the
# root or not), $2 the include directory, $3 the output directory as that
# command sees it, $4 the extension suffix. Failure only loses the thread.
build_ext() {
	$1 gcc -O2 -g -fomit-frame-pointer -shared -fPIC -I"$2" "$3/fastpath.c" -lz \
		-o "$3/fastpath$4" 2>out/demo-ext.log ||
		say "the C extension did not build (out/demo-ext.log); its thread is left out"
}

PY=${PYTHON:-}
if [ -z "$PY" ]; then
	if scripts/sid-root.sh "$ROOT" >out/sid-root.log 2>&1 && [ -x "$ROOT/usr/bin/python3.15" ]; then
		PY=/usr/bin/python3.15
	else
		say "the Debian-unstable root with python3.15 could not be made (out/sid-root.log says why); profiling a local interpreter instead"
		ROOT=
	fi
else
	ROOT=
fi

if [ -n "$ROOT" ]; then
	# The demo runs inside the root, as a service in a container would.
	inside=/tmp/framewalk-demo
	mkdir -p "$ROOT$inside"
	cp demo/app.py demo/fastpath.c "$ROOT$inside/"
	run_in_root() { chroot "$ROOT" env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
	suffix=$(run_in_root "$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	build_ext run_in_root /usr/include/python3.15 "$inside" "$suffix"
	set -- chroot "$ROOT" env PATH=/usr/bin:/bin LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
		"$PY" "$inside/app.py" --seconds 6
	what="Debian unstable's python3.15 (in $ROOT)"
else
	if [ -z "$PY" ]; then
		# The real interpreter, not a wrapper script such as a pyenv shim.
		for c in python3.15 python3.14 python3.13 python3.12 python3.11 python3 /usr/bin/python3; do
			if real=$("$c" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$real" ]; then
				PY=$real; break
			fi
		done
	fi
	[ -n "$PY" ] || { say "no python3 found; set PYTHON=/path/to/python"; exit 1; }
	mkdir -p out/demo-ext
	cp demo/fastpath.c out/demo-ext/
	inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	build_ext "" "$inc" out/demo-ext "$suffix"
	set -- env PYTHONPATH="$(pwd)/out/demo-ext" PYTHONDONTWRITEBYTECODE=1 "$PY" demo/app.py --seconds 6
	what=$PY
fi

say "profiling demo/app.py on $what for 5 s at 200 Hz, whole stacks"
"$FRAMEWALK" record -r 200 -d 5 -q -o out/demo.txt -o out/demo.html -o out/demo.collapsed -- "$@"
cat out/demo.txt
echo
say "report: $(pwd)/out/demo.txt"
say "flame graph: $(pwd)/out/demo.html (open it in a browser)"
say "collapsed stacks: $(pwd)/out/demo.collapsed (flamegraph.pl, speedscope)"
if grep -q '^Names: .*without' out/demo.txt; then
	say "frames shown as library+0xOFFSET come from stripped libraries without debug info here: install their -dbgsym packages or set DEBUGINFOD_URLS (docs/SYMBOLS.md)"
fi
