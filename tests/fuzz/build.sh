#!/bin/sh
# Build the libFuzzer harnesses of tests/fuzz/ into $FUZZ_BUILDDIR (default
# build-fuzz): the project's core library from a meson build dir configured
# with clang, ASan+UBSan and coverage instrumentation (-fsanitize=fuzzer-no-link),
# then each fuzz_*.c linked against it with -fsanitize=fuzzer. Incremental:
# ninja rebuilds the library, a harness is relinked when it or the library
# changed. Also builds gen_seeds (the structured seed generator).
set -eu

cd "$(dirname "$0")/../.."
B=${FUZZ_BUILDDIR:-build-fuzz}
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz: $CC not found (install clang and libclang-rt-14-dev: scripts/deps.sh test)" >&2
	exit 1
fi
if [ ! -f "$B/build.ninja" ]; then
	CC="$CC" meson setup "$B" --buildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false \
		"-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
		>"$B.setup.log" 2>&1 || { cat "$B.setup.log" >&2; exit 1; }
	rm -f "$B.setup.log"
fi
# the tools meson runs at build time must not fail on a leak report
ASAN_OPTIONS=detect_leaks=0 ninja -C "$B" libframewalk-core.a >"$B/fuzz-ninja.log" 2>&1 ||
	{ cat "$B/fuzz-ninja.log" >&2; exit 1; }

# libbpf where the library has the BPF backend: the backends' table
# (sampler/choose.c, which the text report reads since 2026-12-03) names it
LIBS="$(pkg-config --libs libelf libdw libprotobuf-c zlib) $(pkg-config --libs libbpf 2>/dev/null) -liberty -lpthread"
# what meson.build passes every compile for this architecture (the BPF
# record's register count, src/bpf/fwprof.h); the fuzz build is x86-64's
ARCH_DEFS="-DFW_NREGS=17"
LIB="$B/libframewalk-core.a"
mkdir -p "$B/fuzz"
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	out="$B/fuzz/$name"
	if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$LIB" ] &&
		[ "$out" -nt tests/fuzz/reader_image.h ] && [ "$out" -nt tests/fuzz/scratch.h ] && [ "$out" -nt tests/fuzz/oracle.h ]; then
		continue
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE $ARCH_DEFS -g -O1 -fno-omit-frame-pointer -Wall -Wextra \
		-fsanitize=fuzzer $SAN -Isrc -I"$B" -Itests/fuzz \
		-o "$out" "$src" "$LIB" $LIBS
done
# the seed generator: over the offsets tables, and the core library's own
# functions where a seed must match what the code asks (py_code_id_span);
# the library is instrumented, so the sanitizers' runtime comes along
if [ ! -x "$B/fuzz/gen_seeds" ] || [ "$B/fuzz/gen_seeds" -ot tests/fuzz/gen_seeds.c ] ||
	[ "$B/fuzz/gen_seeds" -ot "$LIB" ] || [ "$B/fuzz/gen_seeds" -ot tests/fuzz/reader_image.h ]; then
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE $ARCH_DEFS -g -O1 -Wall -Wextra $SAN -Isrc -Itests/fuzz \
		-o "$B/fuzz/gen_seeds" tests/fuzz/gen_seeds.c "$LIB" $LIBS
fi
