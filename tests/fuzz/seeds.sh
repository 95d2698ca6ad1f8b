#!/bin/sh
# Regenerate the committed seed corpus of every harness (tests/fuzz/corpus/):
#   fuzz_reader, fuzz_linetable  gen_seeds (coherent images, real line tables)
#   fuzz_elf                     tiny ELF files made with gcc (.o, static exe,
#                                stripped shared library), truncated copies
#   fuzz_proc                    maps lines and stat texts as the kernel
#                                writes them, hostile paths and comms
#   fuzz_load                    profiles recorded by build/framewalk from a
#                                Python workload (collapsed, pprof gz/plain)
#                                and other tools' collapsed stacks
# Run by hand (needs gcc, build/framewalk and pyenv's 3.12.1), then
# minimize with `tests/fuzz/run.sh --merge`. The fuzzers never write here.
set -eu

cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
B=${FUZZ_BUILDDIR:-build-fuzz}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

tests/fuzz/build.sh
rm -rf "$C/fuzz_reader" "$C/fuzz_linetable"
"$B/fuzz/gen_seeds" "$C"

# ---- ELF ----
rm -rf "$C/fuzz_elf"
mkdir -p "$C/fuzz_elf"
cat >"$T/py.c" <<'EOF'
__attribute__((section(".PyRuntime"), used)) char _PyRuntime[64] = "xdebugpy";
const unsigned int Py_Version = 0x030c01f0;
char PyCode_Type[32];
const char version_str[] = "3.12.1";
const char *get(void) { return version_str; }
EOF
printf 'void _start(void) { for (;;); }\n' >"$T/start.c"
SMALL="-Os -Wl,--build-id -Wl,-z,norelro -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code"
gcc -Os -c "$T/py.c" -o "$C/fuzz_elf/object.o"
# shellcheck disable=SC2086
gcc $SMALL -static -nostdlib "$T/py.c" "$T/start.c" -o "$C/fuzz_elf/static-exe"
# shellcheck disable=SC2086
gcc $SMALL -shared -fPIC "$T/py.c" -o "$C/fuzz_elf/libpython-stripped.so"
strip --strip-all "$C/fuzz_elf/libpython-stripped.so"
head -c 64 "$C/fuzz_elf/static-exe" >"$C/fuzz_elf/header-only"
head -c 700 "$C/fuzz_elf/object.o" >"$C/fuzz_elf/truncated.o"

# ---- /proc ----
rm -rf "$C/fuzz_proc"
mkdir -p "$C/fuzz_proc"
seed() { printf "$2" >"$C/fuzz_proc/$1"; }
seed lib '7f12a0000000-7f12a0021000 r-xp 00001000 08:01 393231                     /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\00001234 (python3) S 1 1234 1234 0 -1 4194560 2871 0 0 0 5 1 0 0 20 0 3 0 1234 12345678 2345 18446744073709551615'
seed anon '55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0 \000042 (a) (b) R 1'
seed heap '55d0c1a00000-55d0c1c21000 rw-p 00000000 00:00 0                          [heap]\00009 () ) ( ) Z 0'
seed deleted '7f0000001000-7f0000002000 r--s 00000000 00:05 4711                       /dev/shm/my file (deleted)\00007 (x\ny) D'
seed spaces '400000-401000 r-xp 00000000 fd:00 12 /opt/a b/python  3.12\0000100 (python3 ) t 1'
seed vsyscall 'ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\0000'

# ---- saved profiles ----
rm -rf "$C/fuzz_load"
mkdir -p "$C/fuzz_load"
PY=$(pyenv root)/versions/3.12.1/bin/python
build/framewalk record -q -d 1 -r 200 -o "$T/p.collapsed" -o "$T/p.pb.gz" -- \
	"$PY" tests/workloads/structure.py >/dev/null 2>&1 || true
head -n 12 "$T/p.collapsed" >"$C/fuzz_load/framewalk.collapsed"
cp "$T/p.pb.gz" "$C/fuzz_load/framewalk.pb.gz"
gzip -dc "$T/p.pb.gz" >"$C/fuzz_load/framewalk.pb"
printf 'main;foo;bar 10\nmain;foo;baz 5\nmain 1\n' >"$C/fuzz_load/flamegraph.collapsed"
printf 'MainThread (1);<module> (app.py:3);f (app.py:1) 7\r\n(b (x) (y:2)) (2);g (a (copy)/b.py) 3\n' \
	>"$C/fuzz_load/hostile.collapsed"
printf '\037\213\010\000\000\000\000\000\000\003' >"$C/fuzz_load/truncated.gz"
ls -la "$C"/*
du -sh "$C"
