"""Attribution accuracy: split.py spends 70% of its time in hot_a and 30% in
hot_b by construction; a 5 s capture at 1 kHz must find 70 +- 3 / 30 +- 3
(the default capture: whole stacks, whose Python frames are counted)."""
import pytest

from fwtest import parse_collapsed, run_fw


@pytest.mark.interps("py3.8", "py3.12", "sid-py3.15")
def test_split_70_30(interp, workload, tmp_path):
    w = workload(interp, "split.py", "--seconds", "40")
    out = tmp_path / "split.collapsed"
    r = run_fw("record", "-p", w.pid, "-d", "5", "-r", "1k", "--format", "collapsed",
               "-o", out, "-q", timeout=60)
    assert r.returncode == 0, r
    samples = parse_collapsed(out.read_bytes(), merged=True)
    path = w.target_path("split.py")
    src = w.source("split.py")
    counts = {"hot_a": 0, "hot_b": 0}
    total = 0
    for tname, tid, frames, count in samples:
        total += count
        if frames and frames[-1][1] == path and frames[-1][0] in counts:
            name, _, line = frames[-1]
            assert line in src.own_lines(name), frames
            counts[name] += count
    inside = counts["hot_a"] + counts["hot_b"]
    # 5 s at 1 kHz: insist on enough samples for +-3 points to be meaningful
    # (3 standard deviations at 2000 samples), leaving room for ticks lost on
    # a loaded machine.
    assert total >= 2000, "only %d samples in 5 s at 1 kHz: %s" % (total, r)
    assert inside >= 0.95 * total, "only %d of %d samples in hot_a/hot_b" % (inside, total)
    share_a = 100.0 * counts["hot_a"] / inside
    share_b = 100.0 * counts["hot_b"] / inside
    assert abs(share_a - 70) <= 3 and abs(share_b - 30) <= 3, (
        "hot_a %.1f%%, hot_b %.1f%% of %d samples (expected 70/30 +- 3)"
        % (share_a, share_b, inside))
