"""framewalk agent (issue 14): continuous profiling shipped to Pyroscope,
an OpenTelemetry collector and a directory.

A fake Pyroscope (/ingest and the connect push API) and a fake OTLP
collector run in this process on free 127.0.0.1 ports; every request is
decoded with the official schemas (proto/, compiled by Debian's protoc
into descriptors that python3-protobuf builds the messages from), its
labels or resource attributes checked, and the embedded pprof decoded with
profile.proto (and once read by `go tool pprof`). The workloads are
tests/workloads/agent_worker.py, whose hot function is agent_hot; each
carries a unique tag on its command line for the agent's --match, so the
other Python processes of this shared machine are never chosen.

Faults: the endpoint down (its port closed) for a few periods, answering
500, or hanging; processes starting and exiting; SIGTERM mid-period;
SIGHUP with a changed selector; --dir rotation; --once; the static build,
which has no HTTP; an exec; the unit's narrow privileges.

Scaled down so the file stays under two minutes on a 2-core machine:
periods are 1 s (the default is 15 s), the outages last 3-6 periods
instead of the issue's 30 s, and "24 hours" is 250 periods of 0.1 s. The
tests wait on conditions (files, requests, the metrics file), not on
sleeps, except where time itself must pass (a period cut short by SIGTERM).
"""
import base64
import email.parser
import fcntl
import gzip
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

import pytest

from fwtest import (INTERP_BY_ID, REPO, env_under_strace, framewalk_path, run_fw, start_workload,
                    wait_sampling, wait_until)

PY = INTERP_BY_ID["py3.12"]
PROTO = REPO / "proto"
STATIC = Path(os.environ.get("FRAMEWALK_STATIC", str(REPO / "build-static" / "framewalk")))


# --------------------------------------------------------------------------
# The official schemas
# --------------------------------------------------------------------------

class Schemas:
    """Message classes built from the .proto files by descriptor (no
    generated modules: Pyroscope's `types` package would shadow Python's)."""

    def __init__(self, tmp):
        from google.protobuf import descriptor_pb2, message_factory

        protoc = shutil.which("protoc")
        assert protoc, "protoc is missing (Debian protobuf-compiler; scripts/deps.sh test)"
        sets = [
            (PROTO / "opentelemetry", [
                "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"]),
            (PROTO / "pyroscope", ["push/v1/push.proto"]),
            (PROTO, ["profile.proto"]),
        ]
        files = []
        for i, (root, protos) in enumerate(sets):
            out = tmp / ("set%d.pb" % i)
            subprocess.run([protoc, "-I", str(root), "--include_imports",
                            "--descriptor_set_out=" + str(out)] + protos, check=True)
            fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
            files.extend(fds.file)
        classes = message_factory.GetMessages(files)
        self.ExportRequest = classes[
            "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"]
        self.PushRequest = classes["push.v1.PushRequest"]
        self.Profile = classes["perftools.profiles.Profile"]

    def pprof(self, data):
        """A gzip'd pprof -> (Profile, function names, comments dict)."""
        p = self.Profile.FromString(gzip.decompress(data))
        names = {p.string_table[f.name] for f in p.function}
        comments = {}
        for c in p.comment:
            k, _, v = p.string_table[c].partition(": ")
            comments[k] = v
        return p, names, comments


@pytest.fixture(scope="module")
def pb(tmp_path_factory):
    return Schemas(tmp_path_factory.mktemp("schemas"))


def pprof_labels(comments):
    """The agent's labels, from the pprof's "labels: k=v k=v" comment."""
    return dict(kv.split("=", 1) for kv in comments["labels"].split(" "))


# --------------------------------------------------------------------------
# Fake receivers
# --------------------------------------------------------------------------

class Receiver:
    """An HTTP server on 127.0.0.1 recording every POST. mode: "ok", "500"
    or "hang" (answers after hang_s). stop() closes the port (the endpoint
    is down); start() opens the same port again."""

    def __init__(self):
        self.requests = []
        self.lock = threading.Lock()
        self.mode = "ok"
        self.hang_s = 5.0
        self.port = 0
        self.server = None
        self.start()

    def start(self):
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                mode = rec.mode
                if mode == "hang":
                    # a server that hangs has not taken the request: the
                    # client gives up first and this one is not recorded
                    time.sleep(rec.hang_s)
                    self.close_connection = True
                    return
                if mode == "500":
                    code = 500
                else:
                    code = 200
                    with rec.lock:
                        rec.requests.append({
                            "path": urllib.parse.urlsplit(self.path).path,
                            "query": urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query),
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body, "at": time.time()})
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(http.server.ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def taken(self):
        with self.lock:
            return list(self.requests)


@pytest.fixture
def receiver():
    made = []

    def make():
        r = Receiver()
        made.append(r)
        return r

    yield make
    for r in made:
        r.stop()


def ingest_profiles(pb, requests):
    """Decode /ingest requests: [(name, labels, from, until, query, headers, pprof names, comments)]."""
    out = []
    for r in requests:
        assert r["path"] == "/ingest", r["path"]
        q = {k: v[0] for k, v in r["query"].items()}
        ctype = r["headers"]["content-type"]
        assert ctype.startswith("multipart/form-data"), ctype
        msg = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + r["body"])
        parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                 for p in msg.get_payload()}
        assert "profile" in parts, parts.keys()
        m = re.fullmatch(r"([^{]+)\.(cpu|wall)\{(.*)\}", q["name"])
        assert m, q["name"]
        labels = dict(kv.split("=", 1) for kv in m.group(3).split(","))
        prof, names, comments = pb.pprof(parts["profile"])
        out.append({"service": m.group(1), "type": m.group(2), "labels": labels,
                    "from": int(q["from"]), "until": int(q["until"]), "query": q,
                    "headers": r["headers"], "names": names, "comments": comments,
                    "samples": len(prof.sample),
                    "pprof": parts["profile"]})
    return out


# --------------------------------------------------------------------------
# Workloads and the agent
# --------------------------------------------------------------------------

@pytest.fixture
def worker():
    """Factory: worker(env={...}) starts agent_worker.py with a unique tag;
    killed at teardown. busy=True where one short period must hold samples:
    a worker busy a third of its time gave ~5 a 1 s period on the loaded CI,
    and none now and then."""
    started = []

    def start(env=None, seconds=120, busy=False):
        tag = "fwtag-" + uuid.uuid4().hex[:10]
        saved = dict(os.environ)
        try:
            os.environ.pop("OTEL_SERVICE_NAME", None)
            os.environ.pop("PYROSCOPE_APPLICATION_NAME", None)
            os.environ.update(env or {})
            w = start_workload(PY, "agent_worker.py", "--seconds", str(seconds), tag,
                               *(["--busy"] if busy else []))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        w.tag = tag
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


class Agent:
    """framewalk agent running in the background; stderr collected as it comes."""

    def __init__(self, *args, binary=None, env=None, prefix=()):
        # prefix: a command that execs the agent (same pid), e.g. into a namespace
        self.argv = list(prefix) + [binary or framewalk_path(), "agent"] + [str(a) for a in args]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE,
                                     env=dict(os.environ, **(env or {})))
        self.err = []
        self.out = b""
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self):
        for line in self.proc.stderr:
            self.err.append(line.decode("utf-8", "replace"))

    @property
    def stderr(self):
        return "".join(self.err)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=30):
        """SIGTERM, then wait for the exit; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            # not communicate(): it would take stderr from the reader thread
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("the agent did not exit within %d s of SIGTERM:\n%s" % (timeout, self.stderr))
        self.out = self.proc.stdout.read()
        self._t.join(5)
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def agents():
    made = []

    def start(*args, **kw):
        a = Agent(*args, **kw)
        made.append(a)
        return a

    yield start
    for a in made:
        a.kill()


def wait_for(cond, timeout, what, agent=None):
    """fwtest.wait_until, failing with the agent's stderr."""
    if agent is None:
        return wait_until(cond, timeout, what)
    return wait_until(cond, timeout, what, agent.proc, lambda: agent.stderr)


def check_contiguous(periods, period=1, extended=False):
    """(from, until) pairs of one process, in arrival order: increasing,
    each starting where the previous ended, full periods but the first and
    the last (which SIGTERM cuts); extended: a middle one may be several
    periods long (the agent extends a period it reached late)."""
    for (f0, u0), (f1, u1) in zip(periods, periods[1:]):
        assert f1 == u0, "period %s does not follow %s: %s" % ((f1, u1), (f0, u0), periods)
    for f, u in periods[1:-1]:
        assert u - f == period or (extended and u > f and (u - f) % period == 0), \
            "a middle period is not %d s: %s" % (period, periods)
    for f, u in periods:
        assert u > f, periods


def sel(*workers):
    return ["--match", "|".join(w.tag for w in workers)]


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

def test_agent_help():
    r = run_fw("agent", "--help", timeout=20)
    assert r.returncode == 0, r
    for opt in ("--pid", "--all-python", "--match", "--exe", "--container", "--cgroup", "--rate",
                "--period", "--pyroscope", "--pyroscope-api", "--otlp", "--dir", "--spool",
                "--once", "--config", "--dir-max-bytes", "--dir-max-age", "--spool-max-items",
                "--timeout", "--label"):
        assert opt in r.stdout, "%s not in agent --help" % opt
    assert "static build" in r.stdout
    r = run_fw("agent", "--all-python", timeout=20)
    assert r.returncode == 2 and "nowhere to send" in r.stderr, r
    r = run_fw("agent", "--dir", "/tmp", timeout=20)
    assert r.returncode == 2 and "nothing to profile" in r.stderr, r


def test_ingest_otlp_and_dir(pb, receiver, worker, agents, tmp_path):
    """Three services, each profile to Pyroscope's /ingest (basic auth,
    tenant), to OTLP (a header) and to a directory: the right processes
    with their labels and attributes, agent_hot in every profile, periods
    that follow each other; go tool pprof reads one with agent_hot on top."""
    pyro, otlp = receiver(), receiver()
    # Busy services: every middle period must hold agent_hot, and a service
    # that sleeps 4/5 of its time got ~9 ticks a period here and ~5 on a
    # loaded CI machine, where one period of one service came out empty
    # (stop 56). Busy, three on two cores, each gets ~30 ticks a period.
    a_ = worker(env={"OTEL_SERVICE_NAME": "svc-otel"}, busy=True)
    b_ = worker(env={"PYROSCOPE_APPLICATION_NAME": "svc-pyro"}, busy=True)
    c_ = worker(busy=True)
    out = tmp_path / "profiles"
    ag = agents(*sel(a_, b_, c_), "--period", 1, "--scan", 0.3, "-r", 49, "--python-only",
                "--pyroscope", pyro.url, "--pyroscope-user", "alice", "--pyroscope-password",
                "s3cret", "--pyroscope-tenant", "team-a", "--otlp", otlp.url + "/",
                "--otlp-header", "Authorization: Bearer otlp-token", "--dir", out,
                "--label", "env=test")
    pids = {a_.pid: "svc-otel", b_.pid: "svc-pyro", c_.pid: "agent_worker"}

    def enough():
        got = ingest_profiles(pb, pyro.taken())
        per = {p: sum(1 for g in got if g["labels"]["pid"] == str(p)) for p in pids}
        return all(n >= 4 for n in per.values()) and len(otlp.taken()) >= 4
    wait_for(enough, 30, "4 periods of each process at both receivers", ag)
    assert ag.stop() == 0, ag.stderr

    got = ingest_profiles(pb, pyro.taken())
    host = socket.gethostname()
    for pid, service in pids.items():
        mine = [g for g in got if g["labels"]["pid"] == str(pid)]
        assert mine, "no profile of %d" % pid
        for g in mine:
            assert g["service"] == service, g["service"]
            assert g["type"] == "cpu"
            lab = g["labels"]
            assert lab["host"] == host and lab["mode"] == "cpu" and lab["rate"] == "49", lab
            assert lab["python_version"] == PY.full_version and lab["env"] == "test", lab
            assert re.fullmatch(r"[0-9a-f]{40}", lab["build_id"]), lab
            q = g["query"]
            assert q["format"] == "pprof" and q["sampleRate"] == "49", q
            assert q["spyName"] == "framewalk", q
            auth = g["headers"]["authorization"]
            assert auth == "Basic " + base64.b64encode(b"alice:s3cret").decode(), auth
            assert g["headers"]["x-scope-orgid"] == "team-a"
            assert pprof_labels(g["comments"])["service_name"] == service
        # the first and the last (cut by SIGTERM, maybe a few ms long) may miss it
        assert all("agent_hot" in g["names"] for g in mine[1:-1]), \
            "pid %d: %s\nevery process's (from, until, samples): %s\nagent's stderr:\n%s" % (
                pid, [g["names"] for g in mine],
                {q: [(g["from"], g["until"], g["samples"]) for g in got
                     if g["labels"]["pid"] == str(q)] for q in pids}, ag.stderr[-3000:])
        check_contiguous([(g["from"], g["until"]) for g in mine],
                         extended="is extended to" in ag.stderr)
    # only the three chosen processes
    assert {g["labels"]["pid"] for g in got} == {str(p) for p in pids}

    # go tool pprof: agent_hot is the hottest function of a full period
    go = shutil.which("go")
    assert go, "go is missing (Debian golang-go; scripts/deps.sh test)"
    sample = tmp_path / "one.pb.gz"
    sample.write_bytes([g for g in got if g["labels"]["pid"] == str(c_.pid)][1]["pprof"])
    r = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=samples", str(sample)],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, GOTOOLCHAIN="local"))
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if re.match(r"\s*\d+\s+\d", l)]
    assert rows and rows[0].split()[-1] == "agent_hot", r.stdout

    # OTLP: one request per period, a ResourceProfiles per process
    seen = {}
    reqs = otlp.taken()
    for i, req in enumerate(reqs):
        assert req["path"] == "/v1development/profiles", req["path"]
        assert req["headers"]["content-type"] == "application/x-protobuf"
        assert req["headers"]["authorization"] == "Bearer otlp-token"
        msg = pb.ExportRequest.FromString(req["body"])
        d = msg.dictionary
        assert d.string_table[0] == "" and len(d.location_table) >= 1
        fnames = {d.string_table[f.name_strindex] for f in d.function_table}
        for rp in msg.resource_profiles:
            attrs = {}
            for kv in rp.resource.attributes:
                v = kv.value
                attrs[kv.key] = v.int_value if v.WhichOneof("value") == "int_value" else v.string_value
            pid = attrs["process.pid"]
            assert pid in pids, attrs
            assert attrs["service.name"] == pids[pid], attrs
            assert attrs["host.name"] == host
            assert attrs["process.runtime.name"] == "cpython"
            assert attrs["process.runtime.version"] == PY.full_version
            assert attrs["env"] == "test"
            assert re.fullmatch(r"[0-9a-f]{40}", attrs["process.executable.build_id.gnu"])
            prof = rp.scope_profiles[0].profiles[0]
            assert rp.scope_profiles[0].scope.name == "framewalk"
            assert d.string_table[prof.sample_type.type_strindex] == "samples"
            assert d.string_table[prof.period_type.type_strindex] == "cpu"
            assert prof.period == round(1e9 / 49)
            assert len(prof.profile_id) == 16
            seen.setdefault(pid, []).append((prof.time_unix_nano, prof.duration_nano))
            for s in prof.samples:
                stack = d.stack_table[s.stack_index]
                leaf = d.location_table[stack.location_indices[0]]
                fn = d.function_table[leaf.lines[0].function_index]
                assert d.string_table[fn.name_strindex], "a nameless leaf"
                keys = {d.string_table[d.attribute_table[i].key_strindex] for i in s.attribute_indices}
                assert {"thread.id", "thread.name"} <= keys, keys
        # the first period and the last (cut by SIGTERM) may be too short to hold a sample
        if 0 < i < len(reqs) - 1:
            assert "agent_hot" in fnames, fnames
    for pid, spans in seen.items():
        for (t0, d0), (t1, d1) in zip(spans, spans[1:]):
            assert t1 == t0 + d0, "OTLP periods of %d do not follow each other: %s" % (pid, spans)

    # the directory: one file per process and period, the labels inside
    files = sorted(out.iterdir())
    assert files, "no file in --dir"
    for f in files:
        m = re.fullmatch(r"\d{8}T\d{6}\.\d{3}Z-(.+)-(\d+)\.pb\.gz", f.name)
        assert m, f.name
        assert int(m.group(2)) in pids and m.group(1) == pids[int(m.group(2))], f.name
        _, names, comments = pb.pprof(f.read_bytes())
        assert pprof_labels(comments)["pid"] == m.group(2)


def test_push_api_and_sigterm_flush(pb, receiver, worker, agents):
    """The connect push API with a bearer token; a 60 s period cut by
    SIGTERM after ~3 s still arrives, with its true length."""
    pyro = receiver()
    w = worker()
    # Periods are aligned to the clock: start where no period ends in the
    # next 15 s (a CI run once started 2.6 s before a boundary, and the
    # period that ended there arrived too, rightly).
    left = 60 - time.time() % 60
    if left < 15:
        time.sleep(left + 0.2)
    t_launch = time.time()
    ag = agents(*sel(w), "--period", 60, "--scan", 0.3, "-r", 49, "--pyroscope", pyro.url,
                "--pyroscope-api", "push", "--pyroscope-token", "tok-123",
                "--pyroscope-tenant", "team-b")
    wait_for(lambda: "profiling process %d" % w.pid in ag.stderr, 15, "the agent to start", ag)
    t_seen = time.time()
    # ~25 ticks at 49 Hz that find agent_hot running
    wait_sampling(ag.proc, w.pid, cpu=0.5, detail=lambda: ag.stderr)
    # With nothing queued before the period ends, the sender thread sleeps
    # until told: it blocked once (twice if it met the lock held), where it
    # woke every second before (issue 25, goal 7: a wake-up costs ~0.1 ms).
    time.sleep(max(0, t_launch + 4 - time.time()))
    sender = [t for t in os.listdir("/proc/%d/task" % ag.proc.pid)
              if open("/proc/%d/task/%s/comm" % (ag.proc.pid, t)).read().strip() == "fw-sender"]
    assert len(sender) == 1, "no thread named fw-sender"
    with open("/proc/%d/task/%s/status" % (ag.proc.pid, sender[0])) as f:
        switches = int(re.search(r"^voluntary_ctxt_switches:\s*(\d+)", f.read(), re.M).group(1))
    assert switches <= 2, "the idle sender thread blocked %d times in %.1f s" % (
        switches, time.time() - t_launch)
    t_stop = time.time()
    assert ag.stop() == 0, ag.stderr
    reqs = pyro.taken()
    assert len(reqs) == 1, "%d requests for one period cut short: %s\n%s" % (len(reqs), [(q["at"], q["path"], len(q["body"])) for q in reqs], ag.stderr)
    r = reqs[0]
    assert r["path"] == "/push.v1.PusherService/Push"
    assert r["headers"]["content-type"] == "application/proto"
    assert r["headers"]["connect-protocol-version"] == "1"
    assert r["headers"]["authorization"] == "Bearer tok-123"
    assert r["headers"]["x-scope-orgid"] == "team-b"
    msg = pb.PushRequest.FromString(r["body"])
    assert len(msg.series) == 1
    s = msg.series[0]
    labels = {l.name: l.value for l in s.labels}
    assert labels["__name__"] == "process_cpu" and labels["service_name"] == "agent_worker", labels
    assert labels["pid"] == str(w.pid) and labels["python_version"] == PY.full_version, labels
    assert len(s.samples) == 1 and re.fullmatch(r"[0-9a-f-]{36}", s.samples[0].ID)
    p, names, _ = pb.pprof(s.samples[0].raw_profile)
    assert "agent_hot" in names, names
    # the period began between the agent's launch and its "profiling" line,
    # and ended at SIGTERM: its stated length is that, within 0.5 s
    length = p.duration_nanos / 1e9
    assert t_stop - t_seen - 0.5 <= length <= t_stop - t_launch + 0.5, (
        "the flushed period lasted %.1f s; launched %.1f s and seen %.1f s before SIGTERM" % (
            length, t_stop - t_launch, t_stop - t_seen))
    assert p.time_nanos / 1e9 + length <= t_stop + 1


def test_outage_replayed_in_order(pb, receiver, worker, agents, tmp_path):
    """The endpoint's port closed for ~4 periods, then open again: what
    was spooled on disk arrives, in order, nothing missing or doubled."""
    pyro = receiver()
    w = worker()
    spool = tmp_path / "spool"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--pyroscope", pyro.url, "--spool", spool,
                "--timeout", 1)
    wait_for(lambda: len(pyro.taken()) >= 2, 20, "two periods before the outage", ag)
    pyro.stop()
    down = wait_for(lambda: list((spool / "pyroscope").glob("*.req")) if len(
        list((spool / "pyroscope").glob("*.req"))) >= 3 else None, 15,
        "3 requests spooled during the outage", ag)
    assert down
    pyro.start()
    n_before = len(pyro.taken())
    wait_for(lambda: len(pyro.taken()) >= n_before + 5, 20, "the spooled periods after the outage", ag)
    assert ag.stop() == 0, ag.stderr
    assert "delivery failed" in ag.stderr and "delivering again" in ag.stderr, ag.stderr
    got = ingest_profiles(pb, pyro.taken())
    check_contiguous([(g["from"], g["until"]) for g in got],
                     extended="is extended to" in ag.stderr)
    assert not list((spool / "pyroscope").glob("*.req")), "requests left in the spool"


def test_spool_bound_drops_oldest(pb, receiver, worker, agents, tmp_path):
    """Answering 500 for ~6 periods with room for 3 requests: the spool
    never holds more than 3, the oldest are dropped and counted, the 3
    newest arrive in order once the endpoint answers again."""
    pyro = receiver()
    w = worker()
    spool = tmp_path / "spool"
    metrics = tmp_path / "metrics.prom"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--pyroscope", pyro.url, "--spool", spool,
                "--spool-max-items", 3, "--metrics-file", metrics)
    wait_for(lambda: len(pyro.taken()) >= 2, 20, "two periods delivered", ag)
    pyro.mode = "500"
    t0 = time.monotonic()
    most = 0
    while time.monotonic() - t0 < 6.5:
        most = max(most, len(list((spool / "pyroscope").glob("*.req"))))
        time.sleep(0.05)
    assert most == 3, "the spool held %d requests (bound 3)" % most
    ok_before = len(pyro.taken())
    pyro.mode = "ok"
    wait_for(lambda: len(pyro.taken()) >= ok_before + 5, 20, "deliveries after the 500s", ag)
    text = metrics.read_text()
    assert ag.stop() == 0, ag.stderr
    dropped = int(re.search(r'framewalk_agent_dropped_total\{sink="pyroscope"\} (\d+)', text).group(1))
    assert dropped >= 2, text
    assert "queue full" in ag.stderr and "dropped" in ag.stderr, ag.stderr
    got = ingest_profiles(pb, pyro.taken())
    spans = [(g["from"], g["until"]) for g in got]
    before, after = spans[:ok_before], spans[ok_before:]
    check_contiguous(before)
    check_contiguous(after)
    # the periods between were lost: at least as many as were dropped
    assert after[0][0] - before[-1][1] >= dropped, (before, after, dropped)
    final = re.findall(r"pyroscope: (\d+) sent, (\d+) queued, (\d+) dropped", ag.stderr)
    assert final and int(final[-1][2]) >= dropped, ag.stderr


def metrics(path):
    """The --metrics-file counters: {(name, sink or None): value}."""
    out = {}
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return out
    for m in re.finditer(r'^(framewalk_agent_\w+)(?:\{sink="([^"]+)"\})? (\S+)$', text, re.M):
        out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


def test_hanging_endpoint_bounded(pb, receiver, worker, agents, tmp_path):
    """An endpoint that takes requests and never answers in time: each
    request gives up after --timeout, the in-memory queue never holds more
    than its bound (3), the oldest are dropped and counted, and what is
    left arrives in order once it answers."""
    pyro = receiver()
    pyro.mode = "hang"
    pyro.hang_s = 3
    w = worker()
    prom = tmp_path / "metrics.prom"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--pyroscope", pyro.url, "--timeout", 0.5,
                "--spool-max-items", 3, "--metrics-file", prom)
    most = [0]

    def dropped_twice():
        m = metrics(prom)
        most[0] = max(most[0], m.get(("framewalk_agent_queued", "pyroscope"), 0))
        return m.get(("framewalk_agent_dropped_total", "pyroscope"), 0) >= 2
    wait_for(dropped_twice, 30, "two requests dropped from the full queue", ag)
    assert "timed out" in ag.stderr, ag.stderr
    assert 1 <= most[0] <= 3, "the queue held %d requests (bound 3)" % most[0]
    pyro.mode = "ok"
    wait_for(lambda: len(pyro.taken()) >= 5, 20, "deliveries once it answers", ag)
    assert ag.stop() == 0, ag.stderr
    got = ingest_profiles(pb, pyro.taken())
    check_contiguous([(g["from"], g["until"]) for g in got],
                     extended="is extended to" in ag.stderr)


# Run as: unshare -n -m python3 -c HANG_DNS RESOLV_CONF COMMAND...: in a new
# network and mount namespace, bring lo up, put RESOLV_CONF over
# /etc/resolv.conf, bind a UDP socket on 127.0.0.1:53 that nobody reads
# (kept open in COMMAND, so queries are taken and never answered, not
# refused), and exec COMMAND under the same pid.
HANG_DNS = r"""
import os, socket, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
subprocess.run(["mount", "--bind", sys.argv[1], "/etc/resolv.conf"], check=True)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
os.set_inheritable(s.fileno(), True)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def hanging_resolver(tmp_path):
    """The prefix for Agent(): a resolver that takes every query and never
    answers (glibc would wait 30 s x 5 attempts)."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip for a network namespace with a hanging resolver")
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 127.0.0.1\noptions timeout:30 attempts:5\n")
    return ["unshare", "-n", "-m", sys.executable, "-c", HANG_DNS, str(conf)]


def test_hanging_resolver_bounded(worker, agents, tmp_path):
    """Issue 22: a destination whose name never resolves. Each attempt
    gives up within --timeout (the lookup included), and SIGTERM ends the
    agent within --flush-timeout plus the 1 s the sender gets to give up,
    the periods kept in the spool for the next start."""
    prefix = hanging_resolver(tmp_path)
    w = worker()
    spool = tmp_path / "spool"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--pyroscope", "http://hang.example.com:4040",
                "--spool", spool, "--timeout", 1, "--flush-timeout", 1, prefix=prefix)
    wait_for(lambda: "cannot resolve hang.example.com" in ag.stderr, 10,
             "the lookup to give up within --timeout (1 s)", ag)
    wait_for(lambda: len(list((spool / "pyroscope").glob("*.req"))) >= 2, 15,
             "2 periods spooled", ag)
    n_before = len(list((spool / "pyroscope").glob("*.req")))
    t0 = time.monotonic()
    code = ag.stop(timeout=10)
    took = time.monotonic() - t0
    # stated bound 1 + 1 s; 1.5 s more for a loaded machine
    assert took <= 3.5, "the agent took %.1f s to exit after SIGTERM\n%s" % (took, ag.stderr)
    assert code == 0, ag.stderr
    assert "stay in the spool" in ag.stderr, ag.stderr
    assert len(list((spool / "pyroscope").glob("*.req"))) >= n_before, ag.stderr


def test_spool_one_agent(worker, agents, tmp_path):
    """Issue 22: a second agent on the same spool is refused at once, with
    the reason and exit code 7, and the first goes on."""
    w = worker()
    spool = tmp_path / "spool"
    url = "http://127.0.0.1:9"   # the discard port: nothing listens, requests stay spooled
    first = agents(*sel(w), "--period", 1, "--scan", 0.3, "--pyroscope", url, "--spool", spool)
    wait_for(lambda: "profiling process %d" % w.pid in first.stderr, 15, "the first agent", first)
    second = run_fw("agent", *sel(w), "--period", 1, "--pyroscope", url, "--spool", str(spool),
                    timeout=20)
    assert second.returncode == 7, (second.returncode, second.stderr)
    assert "in use by another agent" in second.stderr, second.stderr
    assert first.proc.poll() is None, first.stderr
    assert first.stop() == 0, first.stderr


@pytest.mark.parametrize("creds", [["--pyroscope-token", "tok-1"],
                                   ["--pyroscope-user", "u", "--pyroscope-password", "p"]])
def test_credentials_over_plain_http_warned(worker, agents, creds):
    """Issue 22: credentials over http:// to a host beyond loopback get a
    warning naming the host; to 127.0.0.1 or localhost none."""
    w = worker()
    # 192.0.2.1 (TEST-NET-1) is never reached: the warning is given at start
    far = agents(*sel(w), "--period", 1, "--pyroscope", "http://192.0.2.1:4040", *creds)
    near = agents(*sel(w), "--period", 1, "--pyroscope", "http://localhost:9", *creds)
    for ag in (far, near):
        wait_for(lambda: "profiling process %d" % w.pid in ag.stderr, 15, "the agent to start", ag)
    assert re.search(r"warning: .*credentials.*plain http.*192\.0\.2\.1", far.stderr), far.stderr
    assert "credentials" not in near.stderr, near.stderr
    far.kill()
    near.kill()


def test_otlp_auth_header_over_plain_http_warned(worker, agents):
    w = worker()
    ag = agents(*sel(w), "--period", 1, "--otlp", "http://192.0.2.1:4318", "--otlp-header",
                "Authorization: Bearer x")
    wait_for(lambda: "profiling process %d" % w.pid in ag.stderr, 15, "the agent to start", ag)
    assert re.search(r"warning: .*credentials.*plain http.*192\.0\.2\.1", ag.stderr), ag.stderr
    ag.kill()


def dir_pids(d):
    out = {}
    for f in sorted(Path(d).glob("*.pb.gz")):
        m = re.fullmatch(r"(\d{8}T\d{6}\.\d{3}Z)-(.+)-(\d+)\.pb\.gz", f.name)
        if m:
            out.setdefault(int(m.group(3)), []).append(f)
    return out


def test_held_up_loop_leaves_no_empty_period(pb, worker, agents, tmp_path):
    """The agent stopped (SIGSTOP) for 2.5 s, as a loop held up or a wall
    clock stepping forward leaves it: the period it was in is extended to
    the next end after it resumes (said), and no period of a busy worker is
    empty. The previous build cut the late period and then one or two more
    under their own labels, with no time left in them: empty (the symptom
    test_ingest_otlp_and_dir showed in clean-clone runs)."""
    w = worker(busy=True)
    out = tmp_path / "out"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--dir", out)
    wait_for(lambda: len(dir_pids(out).get(w.pid, [])) >= 2, 20, "two periods", ag)
    ag.signal(signal.SIGSTOP)
    time.sleep(2.5)                 # the stall under test, not a synchronisation
    ag.signal(signal.SIGCONT)
    n = len(dir_pids(out)[w.pid])
    wait_for(lambda: len(dir_pids(out)[w.pid]) >= n + 3, 20, "three periods more", ag)
    assert ag.stop() == 0, ag.stderr
    files = dir_pids(out)[w.pid]
    periods = []
    for f in files:
        prof, _, comments = pb.pprof(f.read_bytes())
        periods.append((prof.time_nanos, prof.time_nanos + prof.duration_nanos,
                        sum(smp.value[0] for smp in prof.sample), f.name))
    # the first may be short (aligned to the clock), the last is cut by SIGTERM
    for p in periods[1:-1]:
        assert p[2] > 0, "an empty period: %s\n%s" % (p, periods)
    assert "is extended to" in ag.stderr, ag.stderr
    # contiguous, each a whole number of periods (the extended one more than one)
    check_contiguous([(p[0], p[1]) for p in periods], period=10**9, extended=True)


@pytest.mark.parametrize("redact", [False, True])
def test_redact_cmdline(pb, worker, agents, tmp_path, redact):
    """Issue 22: the target's command line (here its tag, standing for a
    secret given as an argument) is in the profile, unless --redact-cmdline:
    then only its executable's name is, and the tag appears nowhere."""
    w = worker()
    out = tmp_path / "out"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--dir", out,
                *(["--redact-cmdline"] if redact else []))
    files = wait_for(lambda: dir_pids(out).get(w.pid), 20, "a profile of the worker", ag)
    ag.stop()
    raw = gzip.decompress(files[0].read_bytes())
    _, _, comments = pb.pprof(files[0].read_bytes())
    if redact:
        assert comments["target"] == os.path.basename(os.readlink("/proc/%d/exe" % w.pid)), comments
        assert w.tag.encode() not in raw, comments
    else:
        assert w.tag in comments["target"], comments


def test_sighup_reloads_selector(pb, worker, agents, tmp_path):
    """SIGHUP reads the configuration file again: a changed --match moves
    the agent from one process to the other; a broken file is refused
    with its line and changes nothing."""
    a_, b_ = worker(), worker()
    out = tmp_path / "out"
    conf = tmp_path / "agent.conf"
    conf.write_text("# first selector\nmatch = %s\nperiod = 1\nscan = 0.3\ndir = %s\n" % (a_.tag, out))
    ag = agents("--config", conf)
    wait_for(lambda: len(dir_pids(out).get(a_.pid, [])) >= 2, 20, "two periods of A", ag)
    assert b_.pid not in dir_pids(out)
    conf.write_text("match = %s\nperiod = 1\nscan = 0.3\ndir = %s\n" % (b_.tag, out))
    t_hup = time.time()
    ag.signal(signal.SIGHUP)
    wait_for(lambda: len(dir_pids(out).get(b_.pid, [])) >= 2, 20, "two periods of B", ag)
    wait_for(lambda: "configuration reloaded" in ag.stderr, 5, "the reload's line", ag)
    # a broken file on SIGHUP: the message, and the previous configuration stays
    conf.write_text("match = %s\nno-such-option = 1\n" % a_.tag)
    ag.signal(signal.SIGHUP)
    wait_for(lambda: "not reloaded" in ag.stderr, 10, "the refused reload", ag)
    assert "no-such-option" in ag.stderr, ag.stderr
    n_b = len(dir_pids(out)[b_.pid])
    wait_for(lambda: len(dir_pids(out)[b_.pid]) >= n_b + 2, 20, "B still profiled", ag)
    assert ag.stop() == 0, ag.stderr
    files = dir_pids(out)
    assert "stopped profiling process %d" % a_.pid in ag.stderr, ag.stderr
    last_a = max(pb.pprof(f.read_bytes())[0].time_nanos for f in files[a_.pid]) / 1e9
    first_b = min(pb.pprof(f.read_bytes())[0].time_nanos for f in files[b_.pid]) / 1e9
    assert last_a <= t_hup + 0.5, "A profiled after the reload"
    assert first_b >= t_hup - 1.5, "B profiled before the reload"


def test_processes_come_and_go(pb, worker, agents, tmp_path):
    """A process that starts is picked up at the next scan, one that exits
    is dropped after its last period."""
    w1 = worker()
    out = tmp_path / "out"
    tags = "fwchurn-" + uuid.uuid4().hex[:8]
    ag = agents("--match", w1.tag + "|" + tags, "--period", 1, "--scan", 0.3, "--dir", out)
    wait_for(lambda: len(dir_pids(out).get(w1.pid, [])) >= 1, 20, "W1's first period", ag)
    saved = dict(os.environ)
    w2 = start_workload(PY, "agent_worker.py", "--seconds", "60", tags)
    try:
        wait_for(lambda: len(dir_pids(out).get(w2.pid, [])) >= 2, 20, "W2 picked up", ag)
        w1.stop()
        t_exit = time.time()
        wait_for(lambda: "stopped profiling process %d" % w1.pid in ag.stderr, 10, "W1 dropped", ag)
        n2 = len(dir_pids(out)[w2.pid])
        wait_for(lambda: len(dir_pids(out)[w2.pid]) >= n2 + 2, 10, "W2 going on", ag)
        assert ag.stop() == 0, ag.stderr
    finally:
        w2.stop()
        os.environ.clear()
        os.environ.update(saved)
    last_w1 = max(pb.pprof(f.read_bytes())[0].time_nanos for f in dir_pids(out)[w1.pid]) / 1e9
    assert last_w1 <= t_exit + 0.5, "a period of W1 started after it exited"


# Run as: unshare --pid --fork --mount-proc python3 -c REUSE_PID FRAMEWALK OUT TAG WORKER_ARGV_JSON
# (a new pid namespace: its init): a process the agent passes over lives
# past the agent's young window, exits, and a chosen Python process is
# started under its pid (ns_last_pid); prints what happened as JSON.
REUSE_PID = r"""
import json, os, subprocess, sys, time
fw, out, tag, worker_argv = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
old = subprocess.Popen(["sleep", "120"])
agent = subprocess.Popen([fw, "agent", "--match", tag, "--scan", "0.2", "--period", "1",
                          "--dir", out], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(out + ".log", "w"))
time.sleep(11.5)             # the agent's young window (10 s) passed: old is passed over as old
pid = old.pid
old.kill()
old.wait()
w = None
for attempt in range(5):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    w = subprocess.Popen(worker_argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    if w.pid == pid:
        break
    w.kill()
    w.wait()
w.stdout.readline()          # READY
found = False
end = time.time() + 10
while time.time() < end and not found:
    time.sleep(0.2)
    found = ("profiling process %d " % pid) in open(out + ".log").read()
agent.terminate()
agent.wait(30)
w.kill()
w.wait()
print(json.dumps({"pid": pid, "reused": w.pid == pid, "found": found,
                  "log": open(out + ".log").read()[-2000:]}))
"""


def test_reused_pid_is_looked_at_again(tmp_path):
    """A scan passes over a process it looked at before without reading it
    again while its /proc directory keeps its inode number (an idle host's
    thousands of processes cost an agent choosing none 0.63% of a core when
    each was read at every scan). A process started under a reused pid
    gets a new directory: it is looked at, and profiled when chosen, at the
    next scan, not after the minute the old one's next look would wait."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a pid namespace")
    tag = "fwreuse-" + uuid.uuid4().hex[:8]
    argv = PY.argv("-B", str(REPO / "tests" / "workloads" / "agent_worker.py"),
                   "--seconds", "60", tag)
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                        REUSE_PID, framewalk_path(), str(tmp_path / "out"), tag, json.dumps(argv)],
                       capture_output=True, text=True, timeout=90, env=PY.env())
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["reused"], got
    assert got["found"], got["log"]


def test_dir_rotation(pb, worker, agents, tmp_path):
    """--dir-max-bytes and --dir-max-age remove the oldest of the agent's
    files, and only its files."""
    a_, b_ = worker(), worker()
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("not the agent's")
    (out / "mine.pb.gz").write_bytes(b"not the agent's either")
    prom = tmp_path / "m1.prom"
    ag = agents(*sel(a_, b_), "--period", 1, "--scan", 0.3, "--dir", out, "--dir-max-bytes", "4k",
                "--metrics-file", prom)
    wait_for(lambda: metrics(prom).get(("framewalk_agent_sent_total", "dir"), 0) >= 12, 30,
             "12 files written", ag)
    assert ag.stop() == 0, ag.stderr
    ours = [f for f in out.iterdir() if f.name not in ("notes.txt", "mine.pb.gz")]
    total = sum(f.stat().st_size for f in ours)
    biggest = max(f.stat().st_size for f in ours)
    # rotation runs after writes: at most the files of one period past the bound
    assert total <= 4 * 1024 + 2 * biggest, "%d bytes kept, bound 4k" % total
    assert len(ours) < 12, "nothing was removed: %d files" % len(ours)
    assert (out / "notes.txt").exists() and (out / "mine.pb.gz").exists()
    # age: files older than 2 s go
    out2 = tmp_path / "out2"
    prom2 = tmp_path / "m2.prom"
    ag = agents(*sel(a_), "--period", 1, "--scan", 0.3, "--dir", out2, "--dir-max-age", 2,
                "--metrics-file", prom2)
    wait_for(lambda: metrics(prom2).get(("framewalk_agent_sent_total", "dir"), 0) >= 6, 30,
             "6 files written", ag)
    assert ag.stop() == 0, ag.stderr
    now = time.time()
    ages = [now - f.stat().st_mtime for f in out2.iterdir()]
    assert ages and max(ages) <= 2 + 2.5, ages
    assert len(ages) <= 5, "%d files kept with a 2 s age limit" % len(ages)


def test_dir_rotation_lists_the_directory_rarely(worker, agents, tmp_path):
    """Rotation works from the agent's own ledger of its files: the
    directory is listed when the agent starts (a previous run's files count
    against the bound) and then once a minute, not after every write. Before
    (fed8d27) it listed the directory and stat'ed every file once a second
    after a write: 13% of the agent's CPU with ~1000 files (perf, stop 49).
    Here strace counts the getdents64 calls on the directory over 8 written
    periods: 2 a listing, so at most one listing (the first may fall before
    strace attaches). A killed run's temporary (an hour old) is removed by
    that listing; one a live writer holds (its flock) is kept."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed")
    w = worker()
    out = tmp_path / "out"
    out.mkdir()
    old = [out / ("20200101T00000%d.000Z-old-run.pb.gz" % i) for i in range(3)]
    for f in old:
        f.write_bytes(b"x" * 3000)
    stale = out / ".20200101T000003.000Z-old-run.pb.gz.framewalk-Ab3dEf"
    stale.write_bytes(b"half a profile")
    # an hour old: one written in the last minute may be another agent's, not yet locked
    os.utime(str(stale), (time.time() - 3600, time.time() - 3600))
    held = out / ".20200101T000004.000Z-writing.pb.gz.framewalk-Gh5jKl"
    held_fd = os.open(str(held), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(held_fd, fcntl.LOCK_EX)
    prom = tmp_path / "m.prom"
    ag = agents(*sel(w), "--period", 1, "--scan", 0.3, "--dir", out, "--dir-max-bytes", "4k",
                "--metrics-file", prom, env=env_under_strace())
    sent = lambda: metrics(prom).get(("framewalk_agent_sent_total", "dir"), 0)
    wait_for(lambda: sent() >= 1, 30, "a first file written", ag)
    trace = tmp_path / "strace.txt"
    st = subprocess.Popen(["strace", "-f", "-y", "-e", "trace=getdents64,rename", "-o", str(trace),
                           "-p", str(ag.proc.pid)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        first = sent()
        wait_for(lambda: sent() >= first + 8, 40, "8 more files written", ag)
        assert ag.stop() == 0, ag.stderr
        st.wait(timeout=20)
    finally:
        if st.poll() is None:
            st.kill()
            st.wait()
    lines = trace.read_text().splitlines()
    # strace saw the sender thread write (renames into the directory), so a
    # count of 0 listings is a count, not a trace that missed the thread
    renames = [l for l in lines if "rename(" in l and '"%s/' % out in l]
    assert len(renames) >= 8, "strace saw %d renames into the directory" % len(renames)
    listings = [l for l in lines if "getdents64(" in l and "<%s>" % out in l]
    assert len(listings) <= 2, "%d getdents64 calls on the directory:\n%s" % (
        len(listings), "\n".join(listings[:6]))
    assert not any(f.exists() for f in old), "a previous run's files were kept"
    assert not stale.exists(), "a killed run's temporary was kept"
    assert held.exists(), "a live writer's temporary was removed"
    os.close(held_fd)
    ours = [f for f in out.iterdir() if f != held]
    total = sum(f.stat().st_size for f in ours)
    assert ours and total <= 4 * 1024 + 2 * max(f.stat().st_size for f in ours), total


def test_once_prints_and_exits(worker):
    """--once: one period, each profile's labels and report on stdout."""
    w = worker(env={"OTEL_SERVICE_NAME": "once-svc"}, busy=True)
    r = run_fw("agent", "--once", "-p", w.pid, "--period", 1, "-r", 49, timeout=30)
    assert r.returncode == 0, r
    head = [l for l in r.stdout.splitlines() if l.startswith("== ")]
    assert len(head) == 1, r.stdout
    assert "service_name=once-svc" in head[0] and "pid=%d" % w.pid in head[0], head
    assert "agent_hot" in r.stdout, r.stdout
    r = run_fw("agent", "--once", "--match", "no-such-process-" + uuid.uuid4().hex, "--period", 1,
               timeout=30)
    assert r.returncode == 4 and "no Python process matches" in r.stderr, r



def test_more_processes_than_the_program_had_room_for(tmp_path):
    """An agent choosing 70 Python processes samples every one: the BPF
    program's table of targets held 64, and the 65th process on was
    profiled with no sample and nothing said (its update refused). Wall
    mode reads each sleeping process at every tick, so each period has
    ~20 samples of each (10 Hz, 2 s)."""
    tag = "fwmany-" + uuid.uuid4().hex[:8]
    procs = []
    try:
        for _ in range(70):
            procs.append(subprocess.Popen(
                [str(PY.exe), "-c", "import time, sys; sys.stdout.write('R\\n'); "
                 "sys.stdout.flush(); time.sleep(120)", tag],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE))
        for p in procs:
            assert p.stdout.readline() == b"R\n"
        r = run_fw("agent", "--once", "--match", tag, "--mode", "wall", "--period", 2,
                   "-r", 10, timeout=120)
        assert r.returncode == 0, r
        counts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
            r"^== .*\bpid=(\d+) .*\n(?:.*\n)*?period: [0-9.]+ s, (\d+) samples", r.stdout, re.M)}
        missing = sorted(p.pid for p in procs if counts.get(p.pid, 0) < 5)
        assert not missing, "%d of 70 processes with fewer than 5 samples: %s\n%s" % (
            len(missing), [(pid, counts.get(pid)) for pid in missing][:10], r.stderr[-2000:])
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()

def cpu_ns(pid):
    """CPU time of pid's main thread, in ns (schedstat)."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def test_once_period_starts_with_the_sampling(worker):
    """--once's one period begins when sampling does: finding the process,
    attaching and loading the program (a third of a 1 s period, measured)
    are not taken out of it. A busy target at 99 Hz for 1 s gives 99
    samples times its CPU share over the run: at least 93% of that
    (measured: 99 of 99; 89 when the period began before the setup, on a
    quiet machine, fewer under load)."""
    w = worker(busy=True)
    c0, t0 = cpu_ns(w.pid), time.monotonic()
    r = run_fw("agent", "--once", "-p", w.pid, "--period", 1, "-r", 99, timeout=30)
    c1, t1 = cpu_ns(w.pid), time.monotonic()
    assert r.returncode == 0, r
    m = re.search(r"^period: ([0-9.]+) s, (\d+) samples", r.stdout, re.M)
    assert m and float(m.group(1)) == pytest.approx(1.0, abs=0.01), r.stdout
    share = (c1 - c0) / ((t1 - t0) * 1e9)
    assert int(m.group(2)) >= 0.93 * 99 * share, (m.group(0), share)


def once_comments(pb, w, out, *args):
    """agent --once on worker w, writing to the new directory out: the
    comments (metadata) of its one pprof."""
    out.mkdir()
    r = run_fw("agent", "--once", "-p", w.pid, *args, "--dir", out, timeout=30)
    assert r.returncode == 0, r
    files = list(out.glob("*-%d.pb.gz" % w.pid))
    assert len(files) == 1, list(out.iterdir())
    return pb.pprof(files[0].read_bytes())[2]


def test_per_process_profile_says_how_it_was_sampled(pb, worker, tmp_path):
    """A process's pprof carries the capture's facts of its period: the
    per-CPU clock's restarts (rephases, a periodic target not read in step:
    at least once in a 1 s period, at the first pass, then at the loop's
    passes ~1 s apart) and,
    were there any, samples lost to a full ring buffer. They were dropped:
    each process's metadata was built afresh."""
    w = worker(busy=True)
    comments = once_comments(pb, w, tmp_path / "out", "--period", 1, "-r", 49)
    if comments.get("backend") != "bpf":
        pytest.skip("the agent chose %s: no per-CPU clock" % comments.get("backend"))
    assert int(comments.get("rephases", 0)) >= 1, comments


def test_records_taken_once_a_second_or_when_the_ring_fills(pb, worker, tmp_path):
    """The agent takes its samples' records from the ring buffer at its
    loop's passes, which come at least once a second (batch_s; its refresh
    is 1 s too, and housekeeping due within half a second joins a pass made
    anyway) and when the program says a quarter of the ring is waiting
    (every half second or so for this worker: a quarter of 512 KiB holds
    ~28 of its ~4.5 KiB records): not at ~8 passes a second, a handful of
    records each, and no pass of their own for the clocks' restarts (issue
    25, goal 7's CPU: a wake-up cost more than what it did). A 3 s period
    at 49 Hz: at most 8 takes (measured 6-7: three passes of the loop's
    own, two or three wake-ups, the cut; the loop made 20 or more), and the
    clocks restarted at no more moments than that, nor more than 7 (the
    first pass, then a moment drawn at least 0.5 s on; they woke the loop
    every 100 to 300 ms: 14 or so). At 999 Hz the program's wake-ups take
    them sooner (9 takes): more than the 4 the clock alone gives, and
    nothing lost to a full ring."""
    w = worker(busy=True)
    for rate, ok in ((49, lambda n: n <= 8), (999, lambda n: n > 4)):
        comments = once_comments(pb, w, tmp_path / str(rate), "--period", 3, "-r", rate)
        if comments.get("backend") != "bpf":
            pytest.skip("the agent chose %s: no ring buffer" % comments.get("backend"))
        drains, samples = int(comments.get("drains", 0)), int(comments["samples"])
        assert ok(drains) and samples >= rate, (rate, drains, samples, comments)
        assert int(comments.get("lost", 0)) == 0, (rate, comments)
        if rate == 49:
            assert 0 < int(comments.get("rephases", 0)) <= min(drains, 7), comments


def test_mode_labels_follow_the_mode(pb, worker, tmp_path):
    """Each mode the agent takes is named as itself (the mode label, the
    start line) and its profile typed by the one mode rule: cpu time only
    in cpu mode, wall time otherwise (exception mode was labelled cpu)."""
    w = worker(busy=True)
    for mode, clock in (("cpu", "cpu"), ("wall", "wall"), ("exception", "wall")):
        out = tmp_path / mode
        out.mkdir()
        r = run_fw("agent", "--once", "-p", w.pid, "--period", 1, "-r", 49, "--mode", mode,
                   "--dir", out, timeout=30)
        assert r.returncode == 0, r
        assert "(%s mode)" % mode in r.stderr, r
        files = list(out.glob("*-agent_worker-%d.pb.gz" % w.pid))
        assert len(files) == 1, list(out.iterdir())
        p, _, comments = pb.pprof(files[0].read_bytes())
        assert pprof_labels(comments)["mode"] == mode, comments
        types = [p.string_table[t.type] for t in p.sample_type]
        assert types[-1] == clock, (mode, types)


def test_static_build_writes_directories_only(worker, tmp_path):
    """The static build has no HTTP: it refuses --pyroscope and --otlp with
    the reason, and writes --dir."""
    assert STATIC.is_file(), "the static build is missing: make static (%s)" % STATIC
    w = worker(busy=True)
    for dest in ("--pyroscope", "--otlp"):
        r = run_fw("agent", "-p", w.pid, dest, "http://127.0.0.1:9", timeout=20, binary=str(STATIC))
        assert r.returncode == 2 and "static build" in r.stderr, r
    r = run_fw("agent", "--once", "-p", w.pid, "--period", 1, "--dir", tmp_path, timeout=30,
               binary=str(STATIC))
    assert r.returncode == 0, r
    assert list(tmp_path.glob("*-agent_worker-%d.pb.gz" % w.pid)), list(tmp_path.iterdir())


def rss_kb(pid):
    """The anonymous part of pid's RSS: its own memory. (The file-backed
    part is the debug files and libraries it maps, which the kernel pages
    in and out as native frames of other code are symbolized.)"""
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise AssertionError("no RssAnon for %d" % pid)


def test_many_periods_rss_flat(pb, receiver, worker, agents, tmp_path):
    """A day is 5760 periods of 15 s; here 0.1 s periods (the shortest
    allowed) stand in for them: 450 periods in about 45 s, each encoded
    for an OTLP receiver and a rotated directory. Past a warm-up of 250
    periods the agent's anonymous RSS does not grow with the periods: at
    most 2 MiB more after 200 more periods, at most 1 MiB over the last 100
    (a leak of one profile per period would be several MiB in each). The
    warm-up covers the symbol caches' filling to their bounds: one run grew
    992 kB between periods 150 and 200, 192 kB to period 350, then nothing
    to 550; a CI run with a 50-period warm-up saw 1120 kB. What comes after
    comes in one-off steps (a table's growth, not a period's leak): on
    another VM +280 kB at period 304 and +704 kB at 325, then nothing to
    450; two whole-suite runs there +1064 and +1068 kB over the 200 (the
    bound was 1 MiB over the 200).
    Under ASan its quarantine is turned off so freed memory is reused.
    Whole stacks (the default): the native symbol caches are bounded (per
    file and per process, emptied when full: src/elf/addrinfo.h,
    src/symbols/symbolize.h), so naming native frames adds nothing that
    grows with time either. A file's debug info is kept open here
    (FRAMEWALK_LOOKUP_IDLE_S of a day): let go after 30 s unused, it is
    opened again at the next new function in it, a one-off step of up to
    13.5 MB (libc6-dbg's sections, decompressed) that says nothing about
    periods; test_names::test_debug_info_let_go_and_opened_again has that."""
    otlp = receiver()
    a_, b_ = worker(), worker()
    prom = tmp_path / "m.prom"
    ag = agents(*sel(a_, b_), "--period", 0.1, "--scan", 0.3, "-r", 49,
                "--otlp", otlp.url,
                "--dir", tmp_path / "out", "--dir-max-bytes", "256k", "--metrics-file", prom,
                "--status", 0, env={"ASAN_OPTIONS": "quarantine_size_mb=0:detect_leaks=1",
                                    "FRAMEWALK_LOOKUP_IDLE_S": "86400"})
    periods = lambda: metrics(prom).get(("framewalk_agent_periods_total", None), 0)
    wait_for(lambda: periods() >= 250, 90, "250 periods", ag)
    base = rss_kb(ag.proc.pid)
    top = [base]

    at_350 = []

    def done():
        rss, n = rss_kb(ag.proc.pid), periods()
        top[0] = max(top[0], rss)
        if n >= 350 and not at_350:
            at_350.append(rss)
        return n >= 450
    wait_for(done, 90, "450 periods", ag)
    sent = metrics(prom).get(("framewalk_agent_sent_total", "otlp"), 0)
    assert ag.stop() == 0, ag.stderr
    assert "whole stacks" in ag.stderr, ag.stderr
    assert sent >= 270, "only %d OTLP requests for 450 periods" % sent
    print("RssAnon: %d kB at period 250, %s at 350, %d kB at most to 450"
          % (base, at_350 and "%d kB" % at_350[0], top[0]))
    assert top[0] - base <= 2048, "RSS grew from %d kB to %d kB over 200 periods" % (base, top[0])
    assert at_350 and top[0] - at_350[0] <= 1024, \
        "RSS grew from %d kB to %d kB over the last 100 periods" % (at_350[0], top[0])


def test_narrow_privileges(worker, tmp_path):
    """The unit's privileges (deploy/framewalk-agent.service): an
    unprivileged user with CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and
    CAP_DAC_READ_SEARCH profiles another user's process with the bpf
    backend; without CAP_DAC_READ_SEARCH the interpreter under /root
    cannot be opened, and the message says so. The worker is busy: one
    period of 1 s of a worker busy a third of its time held no sample on
    the loaded CI (2026-12-06; ~16 expected here, ~5 there, as
    test_ingest_otlp_and_dir's services)."""
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv is missing (util-linux)"
    w = worker(busy=True)
    binary = framewalk_path()
    for d in [Path(binary).resolve().parent] + list(Path(binary).resolve().parents):
        if not os.access(str(d), os.X_OK):
            pytest.skip("the build directory is not reachable by an unprivileged user: %s" % d)

    def run_as_nobody(caps):
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                "--inh-caps=" + caps, "--ambient-caps=" + caps, binary, "agent", "--once",
                "-p", str(w.pid), "--period", 1, "-r", 49]
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60)
    r = run_as_nobody("+bpf,+perfmon,+sys_ptrace,+dac_read_search")
    assert r.returncode == 0, r
    assert "with the bpf backend" in r.stderr, r.stderr
    assert "pid=%d" % w.pid in r.stdout and "agent_hot" in r.stdout, (r.stdout, r.stderr)
    if str(PY.exe).startswith("/root/"):
        r = run_as_nobody("+bpf,+perfmon,+sys_ptrace")
        assert r.returncode != 0 and "cannot open" in r.stderr, r


def test_exec_relabels(pb, agents, tmp_path):
    """A process that execs another Python program (the same interpreter on
    exec_after.py) is followed, and its profiles are labelled with the new
    program's service name from the period it exec'd in."""
    w = start_workload(PY, "exec_into.py", "1.5", "python")
    try:
        out = tmp_path / "out"
        ag = agents("-p", w.pid, "--period", 1, "--scan", 0.3, "--dir", out)
        wait_for(lambda: "its labels are read again" in ag.stderr, 20, "the exec noticed", ag)
        wait_for(lambda: any("-exec_after-" in f.name for f in out.glob("*.pb.gz")), 10,
                 "a profile labelled exec_after", ag)
        assert ag.stop() == 0, ag.stderr
    finally:
        w.stop()
    names = sorted(f.name for f in out.glob("*.pb.gz"))
    before = [n for n in names if "-exec_into-" in n]
    after = [n for n in names if "-exec_after-" in n]
    assert before and after, names
    assert max(before) < min(after), names
    _, fnames, comments = pb.pprof((out / after[-1]).read_bytes())
    assert pprof_labels(comments)["service_name"] == "exec_after"


def test_otlp_and_pyroscope_keep_the_mangled_name(pb, receiver, tmp_path):
    """A C++ function is named as written in both receivers' profiles, and
    its name in the file is kept as the function's system name (OTLP's
    system_name_strindex, pprof's system_name), for tools that demangle."""
    from test_names import DEBIAN_PY, EXT
    so = tmp_path / "libfwcxx.so"
    subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-o", str(so), str(EXT / "fwcxx.cpp")],
                   check=True, timeout=120)
    w = start_workload(DEBIAN_PY, "native_names.py", "ctypes", so, "fwcxx_work")
    pyro, otlp = receiver(), receiver()
    try:
        r = run_fw("agent", "--once", "-p", w.pid, "--period", 2, "--native",
                   "--pyroscope", pyro.url, "--otlp", otlp.url + "/", timeout=60)
    finally:
        w.stop()
    assert r.returncode == 0, r
    want = "(anonymous namespace)::Accumulator<unsigned long>::run("
    # one period's request; another may only be the same one sent again
    # (delivery is at least once: a reply the agent waited too long for is
    # retried). Two arrived once in 5 runs of test_agent.py on 2026-12-06.
    reqs = otlp.taken()
    assert reqs and all(q["body"] == reqs[0]["body"] for q in reqs), \
        ([len(q["body"]) for q in reqs], r)
    d = pb.ExportRequest.FromString(reqs[0]["body"]).dictionary
    fns = {d.string_table[f.name_strindex]: d.string_table[f.system_name_strindex]
           for f in d.function_table}
    run = [n for n in fns if n.startswith(want)]
    assert run and fns[run[0]].startswith("_ZNK12_GLOBAL__N_111AccumulatorImE3run"), \
        sorted(fns)[:30]
    # one period's profile; a second request may only be the same one sent
    # again (a retry: delivery is at least once), never another period. The
    # sanitizer pass of a clean-clone rehearsal saw two requests once
    # (2026-12-06; not reproduced in 5 runs, their cause not captured)
    gots = ingest_profiles(pb, pyro.taken())
    assert gots and all((g["from"], g["until"], g["pprof"]) ==
                        (gots[0]["from"], gots[0]["until"], gots[0]["pprof"]) for g in gots), \
        ([(g["from"], g["until"], len(g["pprof"])) for g in gots], r)
    got = gots[0]
    p = pb.Profile.FromString(gzip.decompress(got["pprof"]))
    s = p.string_table
    fns = {s[f.name]: s[f.system_name] for f in p.function}
    run = [n for n in fns if n.startswith(want)]
    assert run and fns[run[0]].startswith("_ZNK12_GLOBAL__N_111AccumulatorImE3run"), \
        sorted(fns)[:30]
