#!/bin/sh
# Install the Debian packages framewalk needs, when any is missing.
#   scripts/deps.sh build   what `make` needs
#   scripts/deps.sh test    what `make check` needs on top (test tools)
#   scripts/deps.sh deb     what `make deb` (dpkg-buildpackage) needs on top
#   scripts/deps.sh demo    what `make demo` needs on top (the unstable root)
#   scripts/deps.sh aarch64 what `make static ARCH=aarch64` needs on top (cross
#                           compiler, qemu-user for the cross-built unit tests,
#                           mmdebstrap for the arm64 sysroot, scripts/arm64-sysroot.sh)
#   scripts/deps.sh aarch64-guest   and what `make check-aarch64` needs on top
#                           (qemu-system-arm and cpio: scripts/aarch64-guest.sh)
# As root it runs apt-get; otherwise it prints the one command to run.
set -eu

BUILD_PKGS="gcc make meson ninja-build pkg-config libelf-dev libdw-dev zlib1g-dev"
BUILD_PKGS="$BUILD_PKGS protobuf-c-compiler libprotobuf-c-dev"
BUILD_PKGS="$BUILD_PKGS libncurses-dev"      # top's live view
BUILD_PKGS="$BUILD_PKGS libdebuginfod-dev"   # debug files from debuginfod servers (docs/SYMBOLS.md)
BUILD_PKGS="$BUILD_PKGS libiberty-dev"       # C++ and Rust names demangled (docs/SYMBOLS.md)
BUILD_PKGS="$BUILD_PKGS clang llvm bpftool libbpf-dev"   # the eBPF backend (clang -target bpf, skeleton)
# make static: libc.a (libc6-dev) and the .a of every library libdw, libelf
# and libbpf pull in (pkg-config --static)
BUILD_PKGS="$BUILD_PKGS libc6-dev libbz2-dev liblzma-dev libzstd-dev"
DEB_PKGS="dpkg-dev debhelper"
# make static ARCH=aarch64: Debian's cross compiler (no dpkg architecture is
# added: the arm64 libraries come from a sysroot, scripts/arm64-sysroot.sh)
AARCH64_PKGS="gcc-aarch64-linux-gnu qemu-user-static mmdebstrap"
# make check-aarch64 on top: the emulated arm64 machine (scripts/aarch64-guest.sh)
AARCH64_GUEST_PKGS="qemu-system-arm cpio"
# make demo: the Debian-unstable root with python3.15 (scripts/sid-root.sh)
DEMO_PKGS="mmdebstrap"   # debian/control: Rules-Requires-Root: no, so no fakeroot
TEST_PKGS="libcmocka-dev python3-pytest mmdebstrap binutils util-linux procps"
# tests/functional/test_agent.py decodes what the agent sends with the
# official schemas (protoc builds the descriptors, python3-protobuf the messages)
TEST_PKGS="$TEST_PKGS protobuf-compiler python3-protobuf"
# go tool pprof and node (tests/js) read the pprof and JSON outputs. A Node.js
# that bundles npm (nodesource's) conflicts with Debian's npm package, so the
# Debian ones are asked for only when there is no npm at all.
TEST_PKGS="$TEST_PKGS golang-go"
command -v npm >/dev/null 2>&1 || TEST_PKGS="$TEST_PKGS nodejs npm"
# the HTML views are checked in headless chromium, top in a tmux terminal
TEST_PKGS="$TEST_PKGS chromium tmux"
# tests/functional/test_symbols.py: a real debuginfod server, strace (no
# connection without DEBUGINFOD_URLS), xz (MiniDebugInfo as Fedora builds it)
TEST_PKGS="$TEST_PKGS debuginfod strace xz-utils"
# tests/functional/test_names.py: debug info shared through dwz's alternate file
TEST_PKGS="$TEST_PKGS dwz"
# tests/fuzz (libFuzzer needs clang's runtime) and tests/functional/test_load.py
TEST_PKGS="$TEST_PKGS clang libclang-rt-14-dev valgrind"
# tests/functional/test_names.py: C++, Rust and Cython built there, and
# Debian's own stripped extensions (lxml, numpy, cryptography) profiled
TEST_PKGS="$TEST_PKGS g++ rustc cython3 python3-lxml python3-numpy python3-cryptography"
TEST_PKGS="$TEST_PKGS python3-torch"   # ~70 MB over what the rest brings
# tests/functional/test_ship.py: the .deb is built, the static binary
# inspected (file) and traced (strace) inside its minimal root
TEST_PKGS="$TEST_PKGS $DEB_PKGS file strace"

case "${1:-build}" in
build) want="$BUILD_PKGS" ;;
test) want="$BUILD_PKGS $TEST_PKGS" ;;
deb) want="$BUILD_PKGS $DEB_PKGS" ;;
demo) want="$BUILD_PKGS $DEMO_PKGS" ;;
aarch64) want="$BUILD_PKGS $AARCH64_PKGS" ;;
aarch64-guest) want="$BUILD_PKGS $AARCH64_PKGS $AARCH64_GUEST_PKGS" ;;
*) echo "usage: $0 build|test|deb|demo|aarch64|aarch64-guest" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "framewalk: missing Debian packages:$missing" >&2
	echo "  install them with: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "framewalk: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
