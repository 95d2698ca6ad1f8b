# framewalk: the two commands a new user runs are `make demo` and `make check`.
# Both install missing Debian packages first (scripts/deps.sh), then build
# with meson + ninja into $(BUILDDIR).
#
#   make              build build/framewalk
#   make demo         build, then profile the bundled demo workload
#   make check        build, then run every test (unit + functional)
#   make check SANITIZE=1   the same against an ASan+UBSan build
#   make install [PREFIX=/usr/local] [DESTDIR=...]
#   make static       build-static/framewalk: one static, stripped binary
#   make static ARCH=aarch64   build-static-aarch64/framewalk, cross-built (docs/AARCH64.md)
#   make unit-aarch64  the unit tests cross-built for aarch64, run under qemu-user
#   make bpf-core-aarch64   the arm64 BPF object against an arm64 kernel's BTF
#   make check-aarch64 the arm64 suite in an emulated arm64 machine (docs/AARCH64.md)
#   make deb          build-deb/framewalk_*.deb (dpkg-buildpackage -b -us -uc)
#   make deb ARCH=aarch64   build-deb-aarch64/framewalk_*_arm64.deb, the static arm64 binary
#   make bench        the side-by-side benchmarks (bench/README.md)

PREFIX ?= /usr/local
SANITIZE ?=
PYTEST ?= /usr/bin/python3 -m pytest
PYTEST_ARGS ?=

ifeq ($(SANITIZE),)
BUILDDIR ?= build
MESON_OPTS = --buildtype=debugoptimized
else
BUILDDIR ?= build-sanitize
# UndefinedBehaviorSanitizer stops at its first report (it only prints by
# default, and CI could not fail on undefined behaviour).
MESON_OPTS = --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=all
endif

FRAMEWALK = $(BUILDDIR)/framewalk

.PHONY: all deps test-deps build demo check unit functional install bench clean sid-root static-root js-deps static deb

all: build

deps:
	@scripts/deps.sh build

test-deps:
	@scripts/deps.sh test

$(BUILDDIR)/build.ninja:
	meson setup $(BUILDDIR) $(MESON_OPTS) --prefix=$(PREFIX)

build: deps $(BUILDDIR)/build.ninja
	ninja -C $(BUILDDIR)

# The same sources as one statically linked, stripped binary (meson
# -Dstatic=true): for copying into a container. README.md, "Installing".
# ARCH=aarch64 (or arm64) cross-builds it from x86-64 with Debian's cross
# compiler and an arm64 sysroot (cross/aarch64-linux-gnu.ini,
# scripts/arm64-sysroot.sh, docs/AARCH64.md); any other ARCH (the kernel's
# x86, an unset one) is this machine's.
ifneq ($(filter aarch64 arm64,$(ARCH)),)
STATIC_DIR = build-static-aarch64
STATIC_CROSS = --cross-file cross/aarch64-linux-gnu.ini
STATIC_DEPS = aarch64-deps
else
STATIC_DIR = build-static
STATIC_CROSS =
STATIC_DEPS = deps
endif

$(STATIC_DIR)/build.ninja:
	meson setup $(STATIC_DIR) $(STATIC_CROSS) --buildtype=debugoptimized -Dstatic=true

static: $(STATIC_DEPS) $(STATIC_DIR)/build.ninja
	ninja -C $(STATIC_DIR)

# the cross compiler, qemu-user and the arm64 sysroot
.PHONY: aarch64-deps unit-aarch64
aarch64-deps:
	@scripts/deps.sh aarch64
	@scripts/arm64-sysroot.sh

# The unit tests cross-built for aarch64 (an ordinary, dynamic cross build)
# and run under qemu-aarch64 with the sysroot's libraries (the cross file's
# exe_wrapper). Left out there, for what qemu-user does not emulate
# (docs/AARCH64.md): test_safe_open (no openat2) and test_taskstat
# (/proc/PID/syscall shows qemu's own x86-64 calls).
UNIT_AARCH64_DIR = build-aarch64
UNIT_AARCH64_QEMU_SKIP = test_safe_open test_taskstat

$(UNIT_AARCH64_DIR)/build.ninja:
	meson setup $(UNIT_AARCH64_DIR) --cross-file cross/aarch64-linux-gnu.ini \
		--buildtype=debugoptimized

unit-aarch64: aarch64-deps $(UNIT_AARCH64_DIR)/build.ninja
	ninja -C $(UNIT_AARCH64_DIR)
	meson test -C $(UNIT_AARCH64_DIR) --print-errorlogs $$(meson introspect --tests \
		$(UNIT_AARCH64_DIR) | python3 -c 'import json, sys; print(" ".join(t["name"] \
		for t in json.load(sys.stdin) if "framewalk:unit" in t["suite"] and t["name"] not in sys.argv[1:]))' \
		$(UNIT_AARCH64_QEMU_SKIP))

# The arm64 suite (tests/aarch64/guest_suite.py) in the emulated arm64
# machine (scripts/aarch64-guest.sh, made once): the static aarch64 binary
# on Debian unstable's arm64 python3.13-3.15, every backend, and a C
# extension built without frame pointers (scripts/arm64-pydev.sh: its
# headers). GUEST_SUITE_ARGS narrows it (--interps python3.15 --backends bpf).
AARCH64_SHARE = build-aarch64-share
.PHONY: check-aarch64
check-aarch64: aarch64-deps
	@scripts/deps.sh aarch64-guest
	$(MAKE) static ARCH=aarch64
	rm -rf $(AARCH64_SHARE) && mkdir -p $(AARCH64_SHARE)/workloads
	cp build-static-aarch64/framewalk tests/aarch64/guest_suite.py $(AARCH64_SHARE)/
	cp tests/workloads/zlib_loop.py tests/workloads/thread_names.py tests/workloads/asyncio_tasks.py \
		tests/workloads/gil_contention.py tests/workloads/exceptions.py \
		tests/workloads/callshapes.py tests/workloads/busy_sleep.py \
		tests/aarch64/nofp_ext.py $(AARCH64_SHARE)/workloads/
	# the test extension without frame pointers, for the guest's python3.15
	inc=$$(scripts/arm64-pydev.sh) && aarch64-linux-gnu-gcc -O2 -fomit-frame-pointer -fPIC \
		-shared -I$$inc/python3.15 -I$$inc tests/ext/fwext.c -o $(AARCH64_SHARE)/workloads/fwext.so
	FW_GUEST_SHARE=$(abspath $(AARCH64_SHARE)) scripts/aarch64-guest.sh \
		python3.13 guest_suite.py $(GUEST_SUITE_ARGS)

# The aarch64 BPF object's CO-RE relocations and pt_regs layout against the
# BTF of Debian's arm64 kernel (no arm64 machine needed; scripts/arm64-core-check.sh)
.PHONY: bpf-core-aarch64
bpf-core-aarch64:
	$(MAKE) static ARCH=aarch64
	scripts/arm64-core-check.sh build-static-aarch64/fwprof.bpf.o

# The Debian package of the committed tree (HEAD), built with Debian's own
# tools (debian/) in a `git archive` copy under build-deb/, so the .deb lands
# in build-deb/ rather than in the parent directory and records its commit.
# (`dpkg-buildpackage -b -us -uc` in the source tree works too: ../*.deb.)
DEB_DIR = build-deb

# ARCH=aarch64: the package of the static arm64 binary (no library
# dependencies), assembled and checked by scripts/deb-static.sh in
# build-deb-aarch64/ (docs/AARCH64.md).
ifneq ($(filter aarch64 arm64,$(ARCH)),)
deb: static
	@scripts/deps.sh deb
	scripts/deb-static.sh arm64 $(STATIC_DIR) build-deb-aarch64
else
deb:
	@scripts/deps.sh deb
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/framewalk
	git archive HEAD | tar -x -C $(DEB_DIR)/framewalk
	cd $(DEB_DIR)/framewalk && dpkg-buildpackage -b -us -uc
	@ls $(DEB_DIR)/*.deb
endif

demo: build
	@scripts/deps.sh demo
	@scripts/demo.sh $(FRAMEWALK)

sid-root: test-deps
	@scripts/sid-root.sh

# the minimal root (no shared libraries, no terminfo) that
# tests/functional/test_ship.py runs the static binary in
static-root: test-deps
	@scripts/static-root.sh

# A build configured before cmocka was installed (make demo on a fresh
# machine) has no unit tests yet: reconfigure it once.
unit: test-deps build
	@meson introspect --tests $(BUILDDIR) | grep -q '"test_audit"' || \
		{ meson setup --reconfigure $(BUILDDIR) >/dev/null && ninja -C $(BUILDDIR); }
	UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		meson test -C $(BUILDDIR) --print-errorlogs

# tests/js: the npm validators of the output formats (speedscope schema, pprof-format)
JS_STAMP = tests/js/node_modules/.package-lock.json
js-deps: test-deps $(JS_STAMP)

$(JS_STAMP): tests/js/package.json tests/js/package-lock.json | test-deps
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error

# tests/browser: playwright-core driving Debian's chromium over the HTML views
BROWSER_STAMP = tests/browser/node_modules/.package-lock.json
.PHONY: browser-deps vendor
browser-deps: test-deps $(BROWSER_STAMP)

$(BROWSER_STAMP): tests/browser/package.json tests/browser/package-lock.json | test-deps
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error

# Regenerate src/output/assets/vendor/ (d3, d3-flame-graph) from npm; the
# copies are checked in, so building never needs npm or the network.
vendor:
	tools/embed/vendor.sh

# test_ship.py also needs the static binary and its root (and builds the
# .deb itself, with make deb).
functional: test-deps build static sid-root static-root js-deps browser-deps
	UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	FRAMEWALK=$(abspath $(FRAMEWALK)) FRAMEWALK_STATIC=$(abspath $(STATIC_DIR))/framewalk \
		$(PYTEST) tests/functional $(PYTEST_ARGS)

check: unit functional

# tests/fuzz: libFuzzer harnesses (clang, ASan+UBSan, build-fuzz/) of every
# parser of untrusted input; docs/RELIABILITY.md. `make fuzz` runs each for
# FUZZ_SECONDS; `check` runs a short round (FUZZ_CHECK_SECONDS each).
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 20
.PHONY: fuzz fuzz-check
fuzz: test-deps
	tests/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-check: test-deps
	tests/fuzz/run.sh $(FUZZ_CHECK_SECONDS)

check: fuzz-check

install: build
	meson configure $(BUILDDIR) --prefix=$(PREFIX) >/dev/null
	ninja -C $(BUILDDIR) >/dev/null
	meson install -C $(BUILDDIR) --no-rebuild $(if $(DESTDIR),--destdir $(DESTDIR))

bench: build
	@bench/run-all.sh $(FRAMEWALK)

clean:
	rm -rf build build-sanitize build-fuzz build-static build-deb build-deb-aarch64 build-static-aarch64 build-aarch64 build-aarch64-share
