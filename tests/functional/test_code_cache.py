"""The reader's code-object cache under code objects freed and made again
at the same addresses (tests/workloads/code_churn.py): no sample may carry
a name, file or line read from a code object that no longer lives where the
frame points. Every frame of every sample must be one the workload has, at
a line inside that function, and each gen_K must be under its own caller_K.
"""
import re

import pytest

from fwtest import parse_collapsed, run_fw

N = 24
SPAN = 50
GEN_RE = re.compile(r"^gen_(\d+)$")
CALLER_RE = re.compile(r"^caller_(\d+)$")


def stack_errors(frames, minor):
    """What is wrong with one sample's frames (outermost first) on Python
    3.minor: [] when it is a stack the workload can have."""
    if len(frames) < 2 or [f[0] for f in frames[:2]] != ["<module>", "run"] or \
            not all(f[1].endswith("code_churn.py") for f in frames[:2]):
        return ["does not start <module>;run in code_churn.py"]
    rest = frames[2:]
    if not rest:
        return []
    name, file, line = rest[0]
    if name == "<module>" and file == "<code-churn>" and len(rest) == 1:
        # a def statement being run: the first line of one of the slots; or,
        # on 3.11+, line 0, the module's RESUME before it (a module's first
        # instruction has line 0 there: co_lines() starts (0, 2, 0)); before
        # 3.11 no instruction has line 0
        ok = (line == 0 and minor >= 11) or (line % SPAN == 1 and line // SPAN < N)
        return [] if ok else ["module line %d" % line]
    m = CALLER_RE.match(name)
    if not m or file != "<callers>":
        return ["unknown frame %r" % (rest[0],)]
    k = int(m.group(1))
    errors = []
    if not SPAN * k + 1 <= line <= SPAN * k + 2:
        errors.append("caller_%d at line %d" % (k, line))
    if len(rest) == 1:
        return errors
    name, file, line = rest[1]
    m = GEN_RE.match(name)
    if len(rest) > 2 or not m or file != "<code-churn>":
        return errors + ["unknown frames %r" % (rest[1:],)]
    j = int(m.group(1))
    if j != k:
        errors.append("gen_%d under caller_%d" % (j, k))
    # line 0 is framewalk's "unknown" (an instruction no line covers), not another's line
    if line and not SPAN * j + 1 <= line <= SPAN * j + 5:
        errors.append("gen_%d at line %d" % (j, line))
    return errors


@pytest.mark.interps("py3.8", "py3.9", "py3.10", "py3.12", "sid-py3.15")
@pytest.mark.parametrize("backend", ["bpf", "ptrace", "vm"])
@pytest.mark.backend_interps(vm=("py3.12", "sid-py3.15"))
def test_code_objects_reused(interp, workload, tmp_path, backend):
    # bpf on 3.8-3.10 named 3-16 of ~190 samples wrongly until a freed code
    # object (its header intact, its strings reused) was told from a live
    # one by its reference count (python/reader_codes.c obj_state); 3.13+
    # by the same count since 2026-12-06 (a 3.15 sample named by a str made
    # at its freed name's address, CI): bpf keeps 177-194 of ~200 samples
    # here, those of a freed code whose file (a live str) is not its own
    # proof being dropped
    w = workload(interp, "code_churn.py")
    out = tmp_path / "c.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", "2", "--python-only", "--backend", backend,
               "-f", "collapsed", "-o", out, "-q")
    assert r.returncode == 0, r
    total = bad = in_gen = 0
    examples = {}
    for name, tid, frames, count in parse_collapsed(out.read_bytes()):
        total += count
        errors = stack_errors(frames, interp.version[1])
        in_gen += count if any(GEN_RE.match(f[0]) for f in frames) else 0
        if errors:
            bad += count
            examples.setdefault("; ".join(errors), ";".join("%s:%s" % (f[0], f[2]) for f in frames))
    print("\n%s %s: %d of %d samples right (%d in a gen_K)"
          % (interp.id, backend, total - bad, total, in_gen))
    # a run has 30-200 samples here (bpf the fewest), most in gen_K; every one must be true
    assert total >= 20 and in_gen >= total // 2, (total, in_gen)
    # vm copies a stack without stopping the thread and keeps a copy that
    # mixes two moments rather than re-read it (src/sampler/vm.c: re-reading
    # biases against short callees), so a chain may tear on any build: a
    # gen_K copied after its caller_K frame was replaced (CI's plain build,
    # py3.9, 1 of 200, 2026-12-02). Every other case must be exact. (ptrace
    # on 3.15 had "1 of ~200 wrong" twice: the plain build's, 2026-12-03,
    # was `<module>:0`, the module's RESUME, whose line CPython itself says
    # is 0, which stack_errors now takes as right; the sanitizer build's
    # stack was not kept, and its allowance is gone with the same cause.)
    allowed = 0.02 * total if backend == "vm" else 0
    assert bad <= allowed, "%d of %d samples wrong: %s" % (bad, total, examples)
