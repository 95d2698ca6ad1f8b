"""Every sampling mode on every backend, with and without --async, on one
thread that each of them counts (tests/workloads/mode_matrix.py): each
pair either samples it with the same true chain, or is refused before
sampling with one message and the usage exit code. A rule written once
per backend (the bpf tick's own copy of the per-mode policy left --async
empty in cpu mode) fails here."""
import pytest

from fwtest import (INTERP_BY_ID, collapsed_lines, is_python_frame, parse_frame, run_fw,
                    start_workload)

MODES = ["cpu", "wall", "gil", "exception"]
BACKENDS = ["vm", "ptrace", "bpf"]
CHAIN = ["task_body", "handler", "burn"]
EXIT_USAGE = 2
# the one combination refused by design: the bpf program does not read a
# thread's exception state at its instant (the mode table, sampler/choose.c)
REFUSED = {("exception", "bpf"): "--mode exception cannot be sampled with --backend bpf"}


@pytest.fixture(scope="module", params=["py3.12", "sid-py3.15"])
def target(request):
    interp = INTERP_BY_ID[request.param]
    interp.check()
    w = start_workload(interp, "mode_matrix.py")
    yield w
    w.stop()


@pytest.mark.parametrize("asyncio_view", [False, True], ids=["plain", "async"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", MODES)
def test_mode_and_backend(target, mode, backend, asyncio_view, tmp_path):
    out = tmp_path / "m.collapsed"
    args = ["record", "-p", target.pid, "-d", "1", "-q", "--python-only", "--mode", mode,
            "--backend", backend, "-f", "collapsed", "-o", out]
    if asyncio_view:
        args.append("--async")
    r = run_fw(*args)
    refused = REFUSED.get((mode, backend))
    if refused:
        assert r.returncode == EXIT_USAGE, r
        assert refused in r.stderr and r.stderr.count("error:") == 1, r
        assert not out.exists()
        return
    assert r.returncode == 0, r
    total = right = tasked = 0
    bad = {}
    for _, frames, count in collapsed_lines(out.read_text()):
        total += count
        names = [parse_frame(f)[0] for f in frames if is_python_frame(f)]
        if names[-3:] == CHAIN:
            right += count
        else:
            bad.setdefault(";".join(frames[-6:]), count)
        if any(f == "[task] Task-1" for f in frames):
            tasked += count
    print("\n%s %s%s: %d of %d samples end in %s, %d under [task] Task-1" % (
        mode, backend, " --async" if asyncio_view else "", right, total, ";".join(CHAIN),
        tasked))
    # 1 s at 100 Hz of a thread always on a CPU: every mode takes most ticks
    assert total >= 50, (total, r)
    # a copy without stopping (vm) may tear a chain now and then (vm.c)
    assert right >= 0.95 * total, (right, total, sorted(bad.items(), key=lambda x: -x[1])[:5])
    if asyncio_view:
        assert tasked >= 0.95 * total, (tasked, total)
    else:
        assert tasked == 0, tasked
