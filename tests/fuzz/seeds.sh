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
#   fuzz_bpfrec                  gen_seeds (a record of each version's image)
#   fuzz_pystate                 gen_seeds (images with exceptions raised
#                                and handled)
#   fuzz_unwind                  the harness's own stack, also in a signal
#                                handler and under qsort
#   fuzz_perfmap                 a perf map written by python3.12 -X perf,
#                                JIT names with versions, hostile lines
#   fuzz_taskstat                stat, syscall and schedstat files of
#                                threads here (a hostile comm too)
#   fuzz_http                    answers of Python's http.server to POSTs
#                                and GETs (length, chunks, until the close)
#   fuzz_spool                   requests the agent spooled for destinations
#                                that were down, damaged copies
#   fuzz_procinfo                stat and cgroup files here, cgroups of
#                                Docker, systemd, Kubernetes, Podman,
#                                environ blocks, command lines, a label
#   fuzz_sysconfig               _sysconfigdata files here cut to the keys
#                                check reads, CFLAGS, ld.so.conf files here
# SEEDS_ONLY="fuzz_a fuzz_b" regenerates only those. Run by hand (needs
# gcc, build/framewalk and pyenv's 3.12.1), then minimize with
# `tests/fuzz/run.sh --merge`. The fuzzers never write here.
set -eu

cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
B=${FUZZ_BUILDDIR:-build-fuzz}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY=$(pyenv root)/versions/3.12.1/bin/python

# Is corpus $1 to be regenerated?
want() {
	case " ${SEEDS_ONLY:-$1} " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

tests/fuzz/build.sh
"$B/fuzz/gen_seeds" "$T/gen"
for h in fuzz_reader fuzz_linetable fuzz_bpfrec fuzz_pystate; do
	if want $h; then
		rm -rf "${C:?}/$h"
		cp -r "$T/gen/$h" "$C/$h"
	fi
done

# ---- ELF ----
if want fuzz_elf; then
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
fi

# ---- /proc ----
if want fuzz_proc; then
	rm -rf "$C/fuzz_proc"
	mkdir -p "$C/fuzz_proc"
	seed() { printf "$2" >"$C/fuzz_proc/$1"; }
	seed lib '7f12a0000000-7f12a0021000 r-xp 00001000 08:01 393231                     /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\00001234 (python3) S 1 1234 1234 0 -1 4194560 2871 0 0 0 5 1 0 0 20 0 3 0 1234 12345678 2345 18446744073709551615'
	seed anon '55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0 \000042 (a) (b) R 1'
	seed heap '55d0c1a00000-55d0c1c21000 rw-p 00000000 00:00 0                          [heap]\00009 () ) ( ) Z 0'
	seed deleted '7f0000001000-7f0000002000 r--s 00000000 00:05 4711                       /dev/shm/my file (deleted)\00007 (x\ny) D'
	seed spaces '400000-401000 r-xp 00000000 fd:00 12 /opt/a b/python  3.12\0000100 (python3 ) t 1'
	seed vsyscall 'ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\0000'
fi

# ---- saved profiles ----
if want fuzz_load; then
	rm -rf "$C/fuzz_load"
	mkdir -p "$C/fuzz_load"
	build/framewalk record -q -d 1 -r 200 -o "$T/p.collapsed" -o "$T/p.pb.gz" -- \
		"$PY" tests/workloads/structure.py >/dev/null 2>&1 || true
	head -n 12 "$T/p.collapsed" >"$C/fuzz_load/framewalk.collapsed"
	cp "$T/p.pb.gz" "$C/fuzz_load/framewalk.pb.gz"
	gzip -dc "$T/p.pb.gz" >"$C/fuzz_load/framewalk.pb"
	printf 'main;foo;bar 10\nmain;foo;baz 5\nmain 1\n' >"$C/fuzz_load/flamegraph.collapsed"
	printf 'MainThread (1);<module> (app.py:3);f (app.py:1) 7\r\n(b (x) (y:2)) (2);g (a (copy)/b.py) 3\n' \
		>"$C/fuzz_load/hostile.collapsed"
	printf '\037\213\010\000\000\000\000\000\000\003' >"$C/fuzz_load/truncated.gz"
fi

# ---- perf maps ----
if want fuzz_perfmap; then
	rm -rf "$C/fuzz_perfmap"
	mkdir -p "$C/fuzz_perfmap"
	pid=$("$PY" -X perf -c 'import json, os
def f(n): return sum(i * i for i in range(n))
f(10); json.dumps([1]); print(os.getpid())')
	head -n 12 "/tmp/perf-$pid.map" >"$C/fuzz_perfmap/cpython-x-perf.map"
	grep -m 4 -E 'py::(f|<genexpr>|dumps):' "/tmp/perf-$pid.map" >>"$C/fuzz_perfmap/cpython-x-perf.map"
	rm -f "/tmp/perf-$pid.map"
	printf '%s\n' '3f2a1000 1a0 LazyCompile:*fib /app/fib.js:3' \
		'7f00deadb000 40 Interpreter@0x1234' '55d0c0a00000 10 memcpy@@GLIBC_2.14' \
		'7f0000002000 20 @plt' '7f0000003000 0 empty' >"$C/fuzz_perfmap/jit-versions.map"
	printf ' 10 20 lead\n0x10 0x20 hex\n-1 2 wraps\nffffffffffffffff 10 past-end\n10  20 two spaces\n10\t20 tab\n10 20\n10 20 \n\n10 20 crlf\r\n1 2 nul\000name\n1 2 last-no-newline' \
		>"$C/fuzz_perfmap/hostile.map"
	{
		printf '7f1000000000 10 before\n7f1000000010 '
		head -c 5000 /dev/zero | tr '\0' 'x'
		printf '\n7f1000000020 10 after\n'
	} >"$C/fuzz_perfmap/long-line.map"
fi

# ---- per-thread /proc files ----
if want fuzz_taskstat; then
	rm -rf "$C/fuzz_taskstat"
	mkdir -p "$C/fuzz_taskstat"
	# a thread in nanosleep whose comm holds ") R (", its files as the kernel writes them
	"$PY" - "$C/fuzz_taskstat" <<'EOF'
import os, sys, threading, time
def sleeper():
    with open("/proc/self/task/%d/comm" % threading.get_native_id(), "w") as f:
        f.write("a) R (b c")
    time.sleep(1)
t = threading.Thread(target=sleeper)
t.start()
time.sleep(0.3)
for name in ("stat", "syscall", "schedstat"):
    with open("/proc/self/task/%d/%s" % (t.native_id, name), "rb") as f, \
         open(os.path.join(sys.argv[1], "sleeping-" + name), "wb") as out:
        out.write(f.read())
t.join()
EOF
	cat /proc/self/stat >"$C/fuzz_taskstat/running-stat"
	cat /proc/self/syscall >"$C/fuzz_taskstat/running-syscall"   # read(2) of this file
	printf 'running\n' >"$C/fuzz_taskstat/running-word"
	printf -- '-1 0x7ffd3a9e8f18 0x55d0c0a01234\n' >"$C/fuzz_taskstat/outside-syscall"
	printf '61 0xffffffff 0x7ffe00ce0ee0 0x0 0x0 0x1 0x8 0x7ffe00ce0eb8 0x7fc1f7981bd3\n' \
		>"$C/fuzz_taskstat/wait4-syscall"
	printf '7455328 636639 2\n' >"$C/fuzz_taskstat/schedstat"
fi

# ---- HTTP answers ----
if want fuzz_http; then
	rm -rf "$C/fuzz_http"
	mkdir -p "$C/fuzz_http" "$T/www"
	echo "hello from the collector" >"$T/www/small.txt"
	# what Python's http.server sends back to the agent's POSTs (as OTLP, Pyroscope,
	# a full queue would answer) and to a GET, captured from the socket
	"$PY" - "$C/fuzz_http" "$T/www" <<'EOF'
import http.server, os, socket, sys, threading

out = os.path.abspath(sys.argv[1])
os.chdir(sys.argv[2])          # a directory with a small file for the GET


class Collector(http.server.BaseHTTPRequestHandler):
    """Answers as the agent's destinations do: OTLP, Pyroscope, a full queue."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith("/v1development/profiles"):
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/ingest"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b'{"status":', b'"ok","bytes":%d}' % len(body)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif self.path.startswith("/push"):
            self.send_response(204)
            self.end_headers()
        elif self.path.startswith("/continue"):
            self.send_response_only(100)
            self.end_headers()
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        else:
            self.protocol_version = "HTTP/1.0"
            self.send_response(413)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"queue full: request too large\n")
            self.close_connection = True


def capture(server, path, name, method="POST"):
    port = server.server_address[1]
    s = socket.create_connection(("127.0.0.1", port))
    body = b"\x0a\x03abc"
    s.sendall(b"%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
              b"Content-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n%s"
              % (method.encode(), path.encode(), port, len(body), body))
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


for handler, captures in (
    (Collector, [("/v1development/profiles", "otlp-200-empty"),
                 ("/ingest?name=app.cpu%7B%7D", "pyroscope-200-chunked"),
                 ("/push.v1.PusherService/Push", "push-204"),
                 ("/continue", "100-then-200"),
                 ("/full", "413-until-close")]),
    (http.server.SimpleHTTPRequestHandler, [("/small.txt", "simple-501-post"),
                                            ("/missing", "simple-404-get", "GET"),
                                            ("/small.txt", "simple-200-get", "GET")]),
):
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    for c in captures:
        capture(srv, *c[:2], *(c[2:] or ["POST"]))
    srv.shutdown()
    t.join()
    srv.server_close()
EOF
fi

# ---- agent spool files ----
if want fuzz_spool; then
	rm -rf "$C/fuzz_spool"
	mkdir -p "$C/fuzz_spool"
	# requests the agent queued for two destinations that are down
	mkdir -m 700 "$T/spool"
	"$PY" -c 'while True: sum(range(1000))' &
	target=$!
	sleep 0.5
	timeout -s INT 4 build/framewalk agent -p "$target" --pyroscope http://127.0.0.1:9 \
		--otlp http://127.0.0.1:9/v1development/profiles --spool "$T/spool/s" \
		--period 1 --backend vm >/dev/null 2>&1 || true
	kill "$target"
	cat "$T/spool/s/pyroscope/00000000000000000002.req" >"$C/fuzz_spool/pyroscope.req"
	cat "$T/spool/s/otlp/00000000000000000002.req" >"$C/fuzz_spool/otlp.req"
	# a --dir destination's request (its file name as meta), an empty one, damaged ones
	meta=20261202T074800.000Z-python-c-4242.pb.gz
	body=$(wc -c <"$C/fuzz_spool/pyroscope.req")
	hlen=$(head -n 1 "$C/fuzz_spool/pyroscope.req" | wc -c)
	mlen=$(head -n 1 "$C/fuzz_spool/pyroscope.req" | cut -d' ' -f3)
	blen=$((body - hlen - mlen))
	{
		printf 'framewalk-spool 1 %d %d\n%s' ${#meta} "$blen" "$meta"
		tail -c "$blen" "$C/fuzz_spool/pyroscope.req"
	} >"$C/fuzz_spool/dir.req"
	printf 'framewalk-spool 1 0 0\n' >"$C/fuzz_spool/empty.req"
	head -c 200 "$C/fuzz_spool/otlp.req" >"$C/fuzz_spool/truncated.req"
	printf 'framewalk-spool 2 4 3\nmetabody' >"$C/fuzz_spool/version2.req"
fi

# ---- the agent's /proc texts ----
if want fuzz_procinfo; then
	rm -rf "$C/fuzz_procinfo"
	mkdir -p "$C/fuzz_procinfo"
	# the first byte sets the output sizes ('G': 71, past a container id)
	seed() { { printf G; printf "$2"; } >"$C/fuzz_procinfo/$1"; }
	{ printf G; "$PY" -c 'import sys; sys.stdout.write(open("/proc/self/stat").read())'; } \
		>"$C/fuzz_procinfo/stat"
	{ printf G; cat /proc/self/cgroup; } >"$C/fuzz_procinfo/cgroup-here"
	id=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	seed cgroup-docker-v1 "12:pids:/docker/$id\n4:memory:/docker/$id\n1:name=systemd:/docker/$id\n"
	seed cgroup-systemd "0::/system.slice/docker-$id.scope\n"
	seed cgroup-k8s "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5d1e.slice/cri-containerd-$id.scope\n"
	seed cgroup-podman "0::/machine.slice/libpod-${id}a.scope/container\n"
	seed environ 'PATH=/usr/local/bin:/usr/bin\000HOME=/srv/app\000OTEL_SERVICE_NAME=checkout-api\000PYROSCOPE_APPLICATION_NAME=checkout\000LANG=C.UTF-8\000'
	seed environ-unterminated 'OTEL_SERVICE=no\000A=1\000OTEL_SERVICE_NAME=  spaced\033[31m name  '
	seed argv-module 'python3\000-m\000http.server\0008000\000'
	seed argv-gunicorn '/usr/bin/python3\000/usr/local/bin/gunicorn\000app:app\000-w\0004\000'
	seed argv-uwsgi 'uwsgi\000--ini\000/etc/uwsgi/app.ini\000'
	seed argv-main '/usr/bin/python3.12\000-X\000importtime\000-W\000error\000/srv/app/__main__.py\000'
	seed argv-c 'python3\000-c\000import app; app.main()\000'
	seed label '  caf\303\251\033[31m\302\205svc\377  '
fi

# ---- build configuration and ld.so.conf ----
if want fuzz_sysconfig; then
	rm -rf "$C/fuzz_sysconfig"
	mkdir -p "$C/fuzz_sysconfig"
	# real _sysconfigdata files cut to the keys check reads and a few more
	# (pyenv's 3.12 in pprint's layout, Debian's 3.11, the sid root's 3.15)
	"$PY" - "$C/fuzz_sysconfig" \
		"$(pyenv root)"/versions/3.12.1/lib/python3.12/_sysconfigdata__linux_x86_64-linux-gnu.py \
		/usr/lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py \
		/var/cache/framewalk/sid/usr/lib/python3.15/_sysconfigdata__x86_64-linux-gnu.py <<'EOF'
import os, re, sys
keep = {"ABIFLAGS", "AR", "CFLAGS", "PY_CFLAGS", "VERSION", "CONFIG_ARGS", "Py_DEBUG",
        "Py_GIL_DISABLED", "Py_ENABLE_SHARED", "SIZEOF_VOID_P", "LDSHARED", "BLDSHARED"}
for i, path in enumerate(sys.argv[2:]):
    if not os.path.exists(path):
        continue
    text = open(path).read()
    head, body = text.split("{", 1)
    body, tail = body.rsplit("}", 1)
    # one entry per "'KEY': value" that starts a line, continuation lines with it
    entries = re.split(r"\n(?=\s*'[A-Za-z_0-9]+': )", "\n" + body.strip("\n"))
    out = [e for e in entries if re.match(r"\s*'([A-Za-z_0-9]+)'", e)
           and re.match(r"\s*'([A-Za-z_0-9]+)'", e).group(1) in keep]
    with open(os.path.join(sys.argv[1], "sysconfigdata-%d.py" % i), "w") as f:
        f.write(head + "{" + "\n".join(out).rstrip(",\n") + "}" + tail)
EOF
	{ cat /etc/ld.so.conf; } >"$C/fuzz_sysconfig/ld.so.conf"
	cat /etc/ld.so.conf.d/*.conf >"$C/fuzz_sysconfig/ld.so.conf.d-all"
	printf '# a comment\n\tinclude\t/etc/ld.so.conf.d/libc.conf  # trailing\n/opt/app/lib \t\n  /opt/app/lib\nrelative/lib\ninclude ld.so.conf.d/x86*\n' \
		>"$C/fuzz_sysconfig/ld.so.conf-hostile"
	printf '%s' '-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer  -fno-strict-overflow -Wsign-compare -DNDEBUG -g -O2 -Wall' \
		>"$C/fuzz_sysconfig/cflags-debian"
	printf '%s' '-Wsign-compare -DNDEBUG -g -fwrapv -O3 -Wall' >"$C/fuzz_sysconfig/cflags-pyenv"
	printf '%s' '-O0 -fomit-frame-pointer -Os -fno-omit-frame-pointer -O' >"$C/fuzz_sysconfig/cflags-mixed"
fi

# ---- a native stack ----
if want fuzz_unwind; then
	rm -rf "$C/fuzz_unwind"
	mkdir -p "$C/fuzz_unwind"
	# the harness's own registers and stack (addresses relative to their module
	# or the stack), at its start, in a signal handler and in a qsort callback;
	# their pcs follow the binary's code: regenerate when the harness changes
	FUZZ_UNWIND_SEED="$C/fuzz_unwind/self" "$B/fuzz/fuzz_unwind" -runs=0 >/dev/null 2>&1
fi

ls -la "$C"/*
du -sh "$C"
