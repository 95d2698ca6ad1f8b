"""Labels from the target's context (--label NAME=MODULE:VARIABLE, docs/LABELS.md).

tests/workloads/labels_app.py serves requests whose middleware sets the
ContextVars `route` and `tenant`; each route burns CPU in its own hot
function, and a client process sends a fixed mix (3 /orders, tenants acme
and globex in turn, to 1 /users, tenant initech) over 4 connections (2 to
the threaded server).
asyncio: each request in its own task, tasks of both routes interleaving
between slices; threads: a thread per connection setting its own context
anew per request.

For each interpreter and backend, from the saved pprof, read back by
`report --where` as collapsed stacks:
- accuracy: of the samples inside hot_orders, >= 99% (vm under the
  sanitizer build: 97%) carry route=/orders
  and a tenant of /orders' (acme, globex); inside hot_users >= 99% carry
  route=/users and tenant=initech (a label read at another instant than the
  stack, or from a stale or freed context, shows here);
- the split: the share of /orders among the labelled hot samples is the
  share of the requests the server says it served (each costs the same),
  within max(0.05, 4 sigma), sigma over half the requests sampled (a
  request's samples come in a run, not independently, and the shares'
  measured variance is twice n draws'); the acme/globex split
  within /orders likewise (only the split off: a second capture of a
  fresh load, which must pass everything; capture_checked says why);
- a label naming no variable gives every sample "<no variable>";
- collapsed output without --where has one line per stack (labels never
  split a line) and sums to the samples;
- the text report's --by route lists both routes, each with its own hot
  function among its top ones and not the other's.
With --async in wall mode every suspended task is sampled too, labelled
from its own context (the Task's _context: what it sees once resumed), not
the thread's: labels_app.py asyncio-wait's request tasks wait 20 ms in
their route's own coroutine (wait_orders, wait_users); of the samples in
each, >= 99% carry its route and a tenant of its route's, and every sample
carries every label.

The bpf program reads the variables in the kernel at each sample's instant
(test_bpf_requests: whole stacks, cpu mode and wall mode, the same bounds
as ptrace's); --label trace refuses bpf by name and auto does not pick it
then, where plain --label takes bpf like any capture.
Also: top --where shows one route's functions only;
`go tool pprof -tagfocus` (when Go is installed) finds the labels.
"""
import json
import math
import os
import re
import shutil
import subprocess

import pytest

from fwtest import agent_periods, asan_build, run_fw
from test_agent import Schemas, receiver  # noqa: F401 (receiver: a fixture)
from test_pyview import ASYNC_INTERPS

# The workload's load, and the capture started once it runs: 5 and 3.5 s
# (2026-12-04; 7 and 4 before: these ~70 cases were a fifth of the plain
# functional pass, which with the sanitizer pass had CI at 58 of its 60
# minutes). The bounds are unchanged; a capture of 3.5 s at 250 Hz still
# gives ~550 hot_orders and ~190 hot_users samples (>= 60 and 20 asked), and
# the split's tolerance follows the requests served while it recorded.
SECONDS = 5
CAPTURE = 3.5
# the agent test's load: four 1 s periods of both services
AGENT_SECONDS = 7
RATE = 250
ACCURACY = 0.99
# vm reads a thread without stopping it: its context is read before its
# stack and after, and a sample whose context changed in between is
# dropped. Read once after the stack it was 93.5-100% on 3.15's threads
# (6 runs, 2026-12-02) under a 97% bound; read twice, every vm case passed
# ptrace's 99% in 3 runs. The sanitizer build (several times slower)
# keeps 95%, not measured again.
ACCURACY_VM = 0.99
ACCURACY_VM_SANITIZER = 0.95
LABELS = ["--label", "route=__main__:route", "--label", "tenant=__main__:tenant",
          "--label", "missing=__main__:no_such_variable"]
EXIT_USAGE = 2
# the samples' measured variance over that of as many independent draws (tolerance())
DISPERSION = 2


def served_counts(w, timeout=30):
    """The workload's DONE line: requests served per "ROUTE TENANT"."""
    out, err = w.proc.communicate(timeout=timeout)
    for line in out.decode().splitlines():
        if line.startswith("DONE "):
            return json.loads(line[5:])
    pytest.fail("labels_app.py printed no DONE line: %r %r" % (out[-500:], err[-2000:]))


def hot_samples(collapsed, fns=("hot_orders", "hot_users")):
    """Samples whose stack runs (or, a task's, awaits in) each of fns, from
    collapsed text."""
    n = {fn: 0 for fn in fns}
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        names = [f.split(" (")[0] for f in stack.split(";")[1:]]
        for fn in n:
            if fn in names:
                n[fn] += int(count)
    return n, total


def report(pb, *args):
    r = run_fw("report", pb, *args, timeout=60)
    assert r.returncode == 0, r
    return r.stdout


def tolerance(p, n, requests):
    """max(0.05, 4 sigma) of a share p measured over n samples of at most
    `requests` requests. The samples are not n independent draws: a
    request's samples come in a run (a request lasts several sampling
    periods, and its slices are read one after another), so the share varies
    at least as one over the requests sampled; and measured, the shares
    spread wider than n draws would. 18 runs of test_thread_requests'
    ptrace cases (py3.8, py3.12, sid-py3.15; 2026-12-04, ~530 hot samples
    each): the /orders share's standard deviation 0.026 for a binomial
    0.019, acme's within /orders 0.034 for 0.025: a variance 1.9 times n
    draws', on both splits and every interpreter. n's effective size is
    therefore half the smaller of the two (DISPERSION). Counted as if n were
    independent, a clean-clone run of e1a6226 failed py3.12's threads (acme
    0.410 of /orders' samples for 0.500 of its requests) and stop 44's CI
    sid-py3.15's (/orders 0.667 of 519 hot samples for 0.750 of the
    requests: 4.4 binomial sigmas, 3.2 of the measured)."""
    n_eff = max(min(n, requests) / DISPERSION, 1)
    return max(0.05, 4 * math.sqrt(p * (1 - p) / n_eff))


class SplitOff(AssertionError):
    """The split between routes or tenants is outside its bound (every other
    check of the capture passed): capture_checked takes a second capture."""


def check_capture(pb, served, what, need=ACCURACY):
    whole = report(pb, "-f", "collapsed")
    lines = [l.rpartition(" ")[0] for l in whole.splitlines()]
    assert len(lines) == len(set(lines)), "%s: a stack on two collapsed lines" % what
    hot, total = hot_samples(whole)
    assert hot["hot_orders"] >= 60 and hot["hot_users"] >= 20, \
        "%s: too few samples in the hot functions: %s of %d" % (what, hot, total)
    by = {}
    for key, value in [("route", "/orders"), ("route", "/users"), ("tenant", "acme"),
                       ("tenant", "globex"), ("tenant", "initech"),
                       ("missing", "<no variable>")]:
        by[(key, value)] = hot_samples(report(pb, "--where", "%s=%s" % (key, value),
                                              "-f", "collapsed"))
    # every sample carries every label: an unknown variable's placeholder too
    assert by[("missing", "<no variable>")][1] == total, what
    # accuracy: the samples of each hot function carry its route and tenants
    right = {"hot_orders": by[("route", "/orders")][0]["hot_orders"],
             "hot_users": by[("route", "/users")][0]["hot_users"]}
    tenants_right = {
        "hot_orders": by[("tenant", "acme")][0]["hot_orders"] +
        by[("tenant", "globex")][0]["hot_orders"],
        "hot_users": by[("tenant", "initech")][0]["hot_users"]}
    acc = {fn: right[fn] / hot[fn] for fn in hot}
    tacc = {fn: tenants_right[fn] / hot[fn] for fn in hot}
    # the split: samples per route against the requests served (equal cost each)
    orders = sum(v for k, v in served.items() if k.startswith("/orders "))
    users = sum(v for k, v in served.items() if k.startswith("/users "))
    want = orders / (orders + users)
    got = right["hot_orders"] / (right["hot_orders"] + right["hot_users"])
    acme_want = served.get("/orders acme", 0) / max(orders, 1)
    acme_got = by[("tenant", "acme")][0]["hot_orders"] / max(tenants_right["hot_orders"], 1)
    text = report(pb, "--by", "route")
    m = re.search(r"read for (\d+) samples, mean ([0-9.]+) us each; values: (\d+) from the "
                  r"variable's cache, (\d+) by walking the context, (\d+) unreadable", text)
    assert m, "%s: the header says nothing of the labels read:\n%s" % (what, text[:1500])
    print("%s: %d samples, %s in hot functions; route right %.4f/%.4f, tenant right "
          "%.4f/%.4f; /orders share %.3f (served %.3f, %d:%d requests); acme %.3f (served "
          "%.3f); label read mean %s us over %s samples (cache %s, walked %s, unreadable %s)"
          % (what, total, hot, acc["hot_orders"], acc["hot_users"], tacc["hot_orders"],
             tacc["hot_users"], got, want, orders, users, acme_got, acme_want, m.group(2),
             m.group(1), m.group(3), m.group(4), m.group(5)))
    for fn in hot:
        assert acc[fn] >= need, "%s: %s samples with its route: %.4f" % (what, fn, acc[fn])
        assert tacc[fn] >= need, "%s: %s samples with its tenants: %.4f" % (what, fn, tacc[fn])
    n = right["hot_orders"] + right["hot_users"]
    # the requests served while it recorded: the load's share of them
    in_capture = (orders + users) * CAPTURE / SECONDS
    split_off = None
    if abs(got - want) > tolerance(want, n, in_capture):
        split_off = "%s: /orders has %.3f of the hot samples (%d), %.3f of the requests (%d)" % (
            what, got, n, want, orders + users)
    elif abs(acme_got - acme_want) > tolerance(acme_want, tenants_right["hot_orders"],
                                               orders * CAPTURE / SECONDS):
        split_off = "%s: acme has %.3f of /orders' samples (%d), %.3f of its requests (%d)" % (
            what, acme_got, tenants_right["hot_orders"], acme_want, orders)
    # the breakdown by route: both routes, each with its own hot function, not the other's
    section = text.split("\nBy route")[1].split("\n\n")[0]
    for r, fn, other in (("/orders", "hot_orders", "hot_users"),
                         ("/users", "hot_users", "hot_orders")):
        rows = re.search(r"^ +[0-9.]+%% +\d+  %s\n((?: +[0-9.]+%% of it .*\n?)+)" % re.escape(r),
                         section, re.M)
        assert rows, "%s: no row for %s in --by route:\n%s" % (what, r, section)
        assert fn in rows.group(1) and other not in rows.group(1), section
    if split_off:
        raise SplitOff(split_off)
    return float(m.group(2))


def capture_checked(workload, interp, kind, backend, pb, extra, what, need=ACCURACY):
    """record_labels and check_capture; when only the split is off, a second
    capture of a fresh load, which must pass everything. The split of one
    capture has a tail that its statistics do not explain: 0.631 of 800
    hot samples for 0.750 of the requests once (py3.8 asyncio ptrace, a
    clean-clone CI rehearsal, 2026-12-05), every sample's route and tenant
    right, where ten runs on a quiet machine read 0.711-0.763; a bias of the
    profiler's, being systematic, fails both captures. Returns the
    capture's file that passed."""
    served = record_labels(workload, interp, kind, backend, pb, extra)
    try:
        check_capture(pb, served, what, need)
        return pb
    except SplitOff as first:
        print("%s; a second capture" % first)
    pb2 = pb.with_name("second-" + pb.name)
    served = record_labels(workload, interp, kind, backend, pb2, extra)
    check_capture(pb2, served, what + " (second capture)", need)
    return pb2


def accuracy(backend):
    if backend == "vm":
        return ACCURACY_VM_SANITIZER if asan_build() else ACCURACY_VM
    return ACCURACY


def record_labels(workload, interp, kind, backend, pb, extra=()):
    w = workload(interp, "labels_app.py", kind, str(SECONDS))
    r = run_fw("record", "-p", w.pid, "-d", CAPTURE, "-r", RATE, "--backend", backend,
               *extra, *LABELS, "-q", "-o", pb, timeout=60)
    assert r.returncode == 0, r
    return served_counts(w)


@pytest.mark.interps("py3.8", "py3.11-static", "py3.12", "sid-py3.15")
@pytest.mark.parametrize("backend", ["ptrace", "vm"])
@pytest.mark.backend_interps(vm=("py3.12", "sid-py3.15"))
def test_asyncio_requests(interp, workload, tmp_path, backend):
    pb = tmp_path / "labels.pb.gz"
    capture_checked(workload, interp, "asyncio", backend, pb, ("--python-only",),
                    "%s asyncio %s" % (interp.id, backend), accuracy(backend))


def check_waiting(pb, served, what):
    """The suspended request tasks' samples (in wait_orders / wait_users) carry
    their own task's route and tenant; every sample every label."""
    fns = ("wait_orders", "wait_users")
    whole = report(pb, "-f", "collapsed")
    waiting, total = hot_samples(whole, fns)
    by = {}
    for key, value in [("route", "/orders"), ("route", "/users"), ("tenant", "acme"),
                       ("tenant", "globex"), ("tenant", "initech"),
                       ("missing", "<no variable>")]:
        by[(key, value)] = hot_samples(report(pb, "--where", "%s=%s" % (key, value),
                                              "-f", "collapsed"), fns)
    right = {"wait_orders": by[("route", "/orders")][0]["wait_orders"],
             "wait_users": by[("route", "/users")][0]["wait_users"]}
    tenants_right = {
        "wait_orders": by[("tenant", "acme")][0]["wait_orders"] +
        by[("tenant", "globex")][0]["wait_orders"],
        "wait_users": by[("tenant", "initech")][0]["wait_users"]}
    acc = {fn: right[fn] / max(waiting[fn], 1) for fn in fns}
    tacc = {fn: tenants_right[fn] / max(waiting[fn], 1) for fn in fns}
    orders = sum(v for k, v in served.items() if k.startswith("/orders "))
    users = sum(v for k, v in served.items() if k.startswith("/users "))
    want = orders / max(orders + users, 1)
    got = right["wait_orders"] / max(right["wait_orders"] + right["wait_users"], 1)
    m = re.search(r"read for (\d+) samples, mean ([0-9.]+) us each", report(pb))
    print("%s: %d samples, %s waiting; route right %.4f/%.4f, tenant right %.4f/%.4f; "
          "/orders share %.3f (served %.3f, %d:%d requests); <no variable> on %d; "
          "label reads %s, mean %s us"
          % (what, total, waiting, acc["wait_orders"], acc["wait_users"],
             tacc["wait_orders"], tacc["wait_users"], got, want, orders, users,
             by[("missing", "<no variable>")][1], m and m.group(1), m and m.group(2)))
    assert waiting["wait_orders"] >= 100 and waiting["wait_users"] >= 30, \
        "%s: too few samples of waiting tasks: %s of %d" % (what, waiting, total)
    # every sample carries every label, a suspended task's too
    assert by[("missing", "<no variable>")][1] == total, what
    for fn in fns:
        assert acc[fn] >= ACCURACY, "%s: %s samples with its route: %.4f" % (what, fn, acc[fn])
        assert tacc[fn] >= ACCURACY, "%s: %s samples with its tenants: %.4f" % (what, fn, tacc[fn])
    # The split between the routes is printed, not checked: the suspended
    # tasks are read once every 20 times a read's cost (docs/ASYNC.md), each
    # read's stacks counting at every tick until the next, so the waiting
    # samples follow a few dozen reads, not the requests (0.67-0.81 of them
    # /orders for 0.75 of the requests in one run over every interpreter).


@pytest.mark.interps(*ASYNC_INTERPS)
@pytest.mark.parametrize("backend", ["ptrace", "vm"])
@pytest.mark.backend_interps(vm=("py3.12", "sid-py3.15"))
def test_asyncio_waiting_tasks(interp, workload, tmp_path, backend):
    """--async --mode wall: a suspended task's labels are its own context's.
    The same bound on both backends: a suspended task's context does not
    change until it runs again. Every interpreter's layout of tasks and
    contexts on ptrace, vm on two (the same reader: vm differs in how it
    reads, not what; conftest.py's backend_interps)."""
    pb = tmp_path / "labels.pb.gz"
    served = record_labels(workload, interp, "asyncio-wait", backend, pb,
                           ("--python-only", "--async", "--mode", "wall"))
    check_waiting(pb, served, "%s asyncio waiting %s" % (interp.id, backend))


@pytest.mark.interps("py3.11", "py3.12", "py3.13")
def test_asyncio_waiting_python_tasks(interp, workload, tmp_path):
    """The same with asyncio's pure-Python Task (its context the _context
    attribute). 3.11-3.13 only: on 3.14+ --async lists a loop's tasks from
    the interpreter's own per-thread lists, which hold C tasks alone."""
    pb = tmp_path / "labels.pb.gz"
    served = record_labels(workload, interp, "asyncio-wait-pytask", "ptrace", pb,
                           ("--python-only", "--async", "--mode", "wall"))
    check_waiting(pb, served, "%s asyncio waiting Python tasks ptrace" % interp.id)


@pytest.mark.interps("py3.8", "py3.12", "sid-py3.15")
@pytest.mark.parametrize("backend", ["ptrace", "vm"])
@pytest.mark.backend_interps(vm=("py3.12", "sid-py3.15"))
def test_thread_requests(interp, workload, tmp_path, backend):
    pb = tmp_path / "labels.pb.gz"
    capture_checked(workload, interp, "threads", backend, pb, ("--python-only",),
                    "%s threads %s" % (interp.id, backend), accuracy(backend))


@pytest.mark.interps("py3.8", "py3.12", "sid-py3.15")
@pytest.mark.parametrize("kind,mode", [("asyncio", "cpu"), ("threads", "wall")])
def test_bpf_requests(interp, workload, tmp_path, kind, mode):
    """The bpf program reads each variable in the kernel at the sample's
    instant (the variable's cache or a walk of the thread's context's
    HAMT) and copies the value's head: whole stacks (the default), cpu
    mode; wall mode, whose waiting threads the task iterator reads. The
    same bounds as ptrace's, which stops the thread."""
    if os.geteuid() != 0:
        pytest.skip("the bpf backend needs root here")
    pb = tmp_path / "labels.pb.gz"
    capture_checked(workload, interp, kind, "bpf", pb, ("--mode", mode),
                    "%s %s bpf %s" % (interp.id, kind, mode))


@pytest.fixture(scope="module")
def schemas(tmp_path_factory):
    """The OTLP schema's message classes (test_agent.py's)."""
    return Schemas(tmp_path_factory.mktemp("schemas"))


@pytest.mark.interps("py3.12")
def test_agent_context_labels(interp, workload, tmp_path, schemas, receiver):
    """agent --context-label: each period's pprof (--dir, as Pyroscope gets
    it) carries the labels per sample, read back by report --where; OTLP
    carries them as sample attributes (the official schema). The agent's
    automatic backend is bpf where it loads, as without labels. Of the
    samples inside hot_orders >= 99% carry route=/orders, inside hot_users
    route=/users, in the files and in OTLP. A second service beside it (the
    threaded one): each period's file counts the labels read for its own
    process's samples (the header's "read for N samples"), not the
    capture's, and --metrics-file counts them all. On py3.12 alone (3.15
    too until 2026-12-06, 9 s a case): the agent's labels are record's
    readers, which run on 3.15 in test_bpf_requests and test_trace_spans."""
    w = workload(interp, "labels_app.py", "asyncio", str(AGENT_SECONDS))
    w2 = workload(interp, "labels_app.py", "threads", str(AGENT_SECONDS))
    d = tmp_path / "dir"
    prom = tmp_path / "agent.prom"
    otlp = receiver()
    code, err = agent_periods(w.pid, d, "-p", w2.pid, "-r", RATE,
                              "--context-label", "route=__main__:route",
                              "--context-label", "tenant=__main__:tenant", "--period", 1,
                              "--otlp", otlp.url + "/", "--metrics-file", prom)
    assert code == 0, err
    assert "bpf" in err or os.geteuid() != 0, err
    served_counts(w)
    served_counts(w2)
    files = sorted(d.glob("*-%d.pb.gz" % w.pid))
    assert len(files) >= 4, err
    reads_total = 0
    for f in sorted(d.glob("*.pb.gz")):
        text = report(f)
        assert "Labels:    route=__main__:route tenant=__main__:tenant" in text, f
        samples = int(re.search(r"^Samples: +(\d+)", text, re.M).group(1))
        m = re.search(r"read for (\d+) samples", text)
        reads = int(m.group(1)) if m else 0
        reads_total += reads
        # every sample of the process read its labels (a few more read for
        # samples dropped after); the capture's reads would be both services'
        assert samples <= reads <= 1.05 * samples + 5, (f.name, samples, reads, text[:800])
    metric = re.search(r"^framewalk_agent_label_reads_total (\d+)$", prom.read_text(), re.M)
    assert metric and int(metric.group(1)) >= reads_total, prom.read_text()
    hot = {"hot_orders": 0, "hot_users": 0}
    right = dict(hot)
    for f in files:
        h, _ = hot_samples(report(f, "-f", "collapsed"))
        ro, _ = hot_samples(report(f, "--where", "route=/orders", "-f", "collapsed"))
        ru, _ = hot_samples(report(f, "--where", "route=/users", "-f", "collapsed"))
        for fn in hot:
            hot[fn] += h[fn]
        right["hot_orders"] += ro["hot_orders"]
        right["hot_users"] += ru["hot_users"]
    assert hot["hot_orders"] >= 60 and hot["hot_users"] >= 20, hot
    for fn in hot:
        assert right[fn] >= ACCURACY * hot[fn], (fn, right, hot)
    # OTLP: the same, from the samples' attributes
    got = {"hot_orders": [0, 0], "hot_users": [0, 0]}
    want = {"hot_orders": "/orders", "hot_users": "/users"}
    for req in otlp.taken():
        msg = schemas.ExportRequest.FromString(req["body"])
        dic = msg.dictionary
        st = dic.string_table
        for rp in msg.resource_profiles:
            for prof in rp.scope_profiles[0].profiles:
                for smp in prof.samples:
                    names = set()
                    for li in dic.stack_table[smp.stack_index].location_indices:
                        for line in dic.location_table[li].lines:
                            names.add(st[dic.function_table[line.function_index].name_strindex])
                    attrs = {}
                    for a in smp.attribute_indices:
                        kv = dic.attribute_table[a]
                        attrs[st[kv.key_strindex]] = kv.value.string_value
                    for fn in got:
                        if fn in names:
                            got[fn][0] += smp.values[0]
                            got[fn][1] += smp.values[0] if attrs.get("route") == want[fn] else 0
    assert got["hot_orders"][0] >= 60 and got["hot_users"][0] >= 20, got
    for fn in got:
        assert got[fn][1] >= ACCURACY * got[fn][0], (fn, got)


@pytest.mark.interps("py3.12")
def test_top_where(interp, workload):
    """top --where: only one route's functions, and the status line says so."""
    w = workload(interp, "labels_app.py", "asyncio", "5")
    r = run_fw("top", "-p", w.pid, "-d", 3, "-i", 1, "--backend", "ptrace", "--python-only",
               "--label", "route=__main__:route", "--where", "route=/users", timeout=60)
    assert r.returncode == 0, r
    assert "where route=/users" in r.stdout, r
    assert "hot_users" in r.stdout and "hot_orders" not in r.stdout, r
    served_counts(w)


@pytest.mark.interps("py3.12")
def test_whole_stacks(interp, workload, tmp_path):
    """ptrace's default in cpu mode: native frames merged, the labels the same."""
    pb = tmp_path / "labels.pb.gz"
    capture_checked(workload, interp, "asyncio", "ptrace", pb, ("--native",),
                    "%s asyncio ptrace --native" % interp.id)


@pytest.mark.interps("py3.12")
def test_trace_refuses_bpf_and_auto_does_not_pick_it(interp, workload, tmp_path):
    """--label trace needs the span's objects read at the instant, which the
    bpf program does not: --backend bpf is refused by name, auto takes
    ptrace and says why. Plain --label takes bpf as any capture does."""
    if os.geteuid() != 0:
        pytest.skip("the bpf backend needs root here")
    w = workload(interp, "labels_app.py", "asyncio", "5")
    r = run_fw("record", "-p", w.pid, "-d", 1, "--backend", "bpf", "--label", "trace", "-o",
               tmp_path / "x.pb.gz")
    assert r.returncode == EXIT_USAGE, r
    assert "--label trace" in r.stderr and "--backend ptrace" in r.stderr, r
    r = run_fw("record", "-p", w.pid, "-d", 1, "--label", "trace", "-o", tmp_path / "y.pb.gz")
    assert r.returncode == 0, r
    assert "backend bpf" not in r.stderr and "(--label trace)" in r.stderr, r
    r = run_fw("record", "-p", w.pid, "-d", 1, *LABELS, "-o", tmp_path / "z.pb.gz")
    assert r.returncode == 0, r
    assert "backend bpf" in r.stderr, r
    assert "Labels:" in report(tmp_path / "z.pb.gz"), r


@pytest.mark.interps("py3.12")
def test_bad_label_options(interp):
    for bad in ["route", "route=app", "=app:route", "route=app:", "route=:x", "route=1app:x",
                "thread_id=app:x", "thread.id=app:x", "framewalk.x=app:x", "__name__=app:x",
                "service_name=app:x", "route=app.:x", "ro ute=app:x", "route=app:x.y",
                "route=" + "m" * 40 + ":x"]:
        r = run_fw("record", "--label", bad, "-d", 1, "--", "true")
        assert r.returncode == EXIT_USAGE and "--label" in r.stderr, (bad, r)
    r = run_fw("record", "--label", "a=m:x", "--label", "a=m:y", "-d", 1, "--", "true")
    assert r.returncode == EXIT_USAGE and "twice" in r.stderr, r
    # trace is a word of its own: no other spelling, once
    for bad in ["Trace", "trace=", "traces", "span_id=m:x", "span_name=m:x"]:
        r = run_fw("record", "--label", bad, "-d", 1, "--", "true")
        assert r.returncode == EXIT_USAGE and "--label" in r.stderr, (bad, r)
    r = run_fw("record", "--label", "trace", "--label", "trace", "-d", 1, "--", "true")
    assert r.returncode == EXIT_USAGE and "twice" in r.stderr, r
    # a label of the user's named trace is no --label trace: both may be given
    r = run_fw("record", "--label", "trace=m:x", "--label", "trace", "-d", 1, "--", "true")
    assert "--label" not in r.stderr, r
    r = run_fw("report", "--where", "route", "/dev/null")
    assert r.returncode == EXIT_USAGE and "--where" in r.stderr, r


@pytest.mark.interps("py3.12")
def test_go_pprof_tagfocus(interp, workload, tmp_path):
    go = shutil.which("go")
    if not go:
        pytest.skip("Go is not installed: `go tool pprof` cannot be asked")
    pb = tmp_path / "labels.pb.gz"
    record_labels(workload, interp, "asyncio", "ptrace", pb, ("--python-only",))
    env = dict(os.environ, HOME=str(tmp_path), GOCACHE=str(tmp_path / "gocache"))
    r = subprocess.run([go, "tool", "pprof", "-tags", str(pb)], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert re.search(r"route: Total", r.stdout) and "/orders" in r.stdout and \
        "/users" in r.stdout, r.stdout
    r = subprocess.run([go, "tool", "pprof", "-top", "-tagfocus=route=/users", str(pb)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "hot_users" in r.stdout and "hot_orders" not in r.stdout, r.stdout


# ---- --label trace: OpenTelemetry's current span ------------------------------------

# OpenTelemetry Python 1.45 (vendored: tests/workloads/vendor/README.md) runs on 3.10+.
OTEL_INTERPS = ("py3.10", "py3.12", "sid-py3.15")
SPAN_LABELS = ("trace_id", "span_id", "span_name")


def served_spans(w, timeout=30):
    """labels_app.py --otel's SPANS line: {(trace_id, span_id): name}, and its DONE."""
    out, err = w.proc.communicate(timeout=timeout)
    spans = done = None
    for line in out.decode().splitlines():
        if line.startswith("SPANS "):
            spans = {(t, s): n for t, s, n in json.loads(line[6:])}
        elif line.startswith("DONE "):
            done = json.loads(line[5:])
    if spans is None or done is None:
        pytest.fail("labels_app.py --otel printed no SPANS/DONE line: %r %r"
                    % (out[-500:], err[-2000:]))
    return spans, done


def pprof_samples(schemas, pb):
    """Each sample of a saved pprof: (its count, its function names, its labels)."""
    import gzip
    p = schemas.Profile.FromString(gzip.decompress(pb.read_bytes()))
    st = p.string_table
    fn = {f.id: st[f.name] for f in p.function}
    loc = {l.id: [fn[line.function_id] for line in l.line] for l in p.location}
    out = []
    for s in p.sample:
        names = {n for lid in s.location_id for n in loc[lid]}
        labels = {st[l.key]: st[l.str] for l in s.label if l.str}
        if s.value[0]:          # a thread's zero-count sample carries its name alone
            out.append((s.value[0], names, labels))
    return out


@pytest.mark.interps(*OTEL_INTERPS)
@pytest.mark.parametrize("kind,backend", [("asyncio", "ptrace"), ("asyncio", "vm"),
                                          ("threads", "ptrace")])
@pytest.mark.backend_interps(vm=("py3.12",))
def test_trace_spans(interp, workload, tmp_path, schemas, kind, backend):
    """--label trace: labels_app.py --otel makes a span current around each
    request: an /orders request opens an OpenTelemetry SDK span "GET
    /orders", a /users request runs in its caller's propagated span (a
    NonRecordingSpan: ids, no name). Of the samples inside hot_orders >= 99%
    (vm: its bound) carry span_name "GET /orders" and the trace and span ids
    of a span the service opened for /orders; inside hot_users, span_name
    <unset> and the ids of a caller's span it ran in: a label from another
    request's span, a stale or freed context, or ids read wrong (128 bits,
    W3C hex) shows here. Every sample carries the three labels; a sample
    outside any span carries <unset> in all three at once; none is
    <unreadable>. route=__main__:route read beside it agrees. vm drops
    a sample whose labels changed while its stack was read: at most 5% of
    them (a read that often differs would keep few samples, and only
    those)."""
    pb = tmp_path / "trace.pb.gz"
    w = workload(interp, "labels_app.py", kind, str(SECONDS), "--otel")
    r = run_fw("record", "-p", w.pid, "-d", CAPTURE, "-r", RATE, "--backend", backend,
               "--python-only", "--label", "trace", "--label", "route=__main__:route",
               "-q", "-o", pb, timeout=60)
    assert r.returncode == 0, r
    spans, _ = served_spans(w)
    what = "%s %s %s" % (interp.id, kind, backend)
    samples = pprof_samples(schemas, pb)
    total = sum(c for c, _, _ in samples)
    hot = {"hot_orders": [0, 0], "hot_users": [0, 0]}
    want = {"hot_orders": "GET /orders", "hot_users": None}
    route = {"hot_orders": "/orders", "hot_users": "/users"}
    unset = 0
    bare = [(c, sorted(names)) for c, names, labels in samples
            if not all(k in labels for k in SPAN_LABELS)]
    assert not bare, (what, bare)
    for c, names, labels in samples:
        assert "<unreadable>" not in labels.values(), (what, labels)
        if labels["trace_id"] == "<unset>":
            assert labels["span_id"] == labels["span_name"] == "<unset>", (what, labels)
            unset += c
            continue
        assert re.fullmatch(r"[0-9a-f]{32}", labels["trace_id"]) and \
            re.fullmatch(r"[0-9a-f]{16}", labels["span_id"]), (what, labels)
        for fn in hot:
            if fn in names:
                hot[fn][0] += c
                key = (labels["trace_id"], labels["span_id"])
                name = want[fn] or "<unset>"
                if labels["span_name"] == name and key in spans and spans[key] == want[fn] \
                        and labels["route"] == route[fn]:
                    hot[fn][1] += c
    # a hot function's samples outside any span count against it
    for c, names, labels in samples:
        if labels["trace_id"] == "<unset>":
            for fn in hot:
                hot[fn][0] += c if fn in names else 0
    print("%s: %d samples, %d outside spans; right of hot: %s; %d spans opened"
          % (what, total, unset, hot, len(spans)))
    assert hot["hot_orders"][0] >= 60 and hot["hot_users"][0] >= 20, (what, hot)
    for fn, (n, right) in hot.items():
        assert right >= accuracy(backend) * n, "%s: %s: %d of %d samples with its span" % (
            what, fn, right, n)
    text = report(pb)
    assert "Labels:    trace route=__main__:route" in text, text[:1500]
    m = re.search(r"(\d+) unreadable", text)
    assert m and m.group(1) == "0", text[:1500]
    m = re.search(r"(\d+) samples dropped: their labels changed", text)
    changed = int(m.group(1)) if m else 0
    print("%s: %d samples dropped, their labels changed while the stack was read"
          % (what, changed))
    assert changed <= 0.05 * (total + changed), (what, changed, total)


@pytest.mark.interps("py3.12")
def test_trace_without_opentelemetry(interp, workload, tmp_path, schemas):
    """--label trace on a service that never imported OpenTelemetry: every
    sample carries the three labels as <no variable>, and the capture is
    otherwise the same (its route labels right)."""
    pb = tmp_path / "labels.pb.gz"
    pb = capture_checked(workload, interp, "asyncio", "ptrace", pb,
                         ("--python-only", "--label", "trace"),
                         "%s asyncio ptrace, --label trace" % interp.id)
    for c, _, labels in pprof_samples(schemas, pb):
        assert [labels[k] for k in SPAN_LABELS] == ["<no variable>"] * 3, labels
