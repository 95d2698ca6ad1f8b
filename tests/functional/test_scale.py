"""Scale cliffs (issue 22): a process with more Python threads than the
reader's cap (PY_MAX_THREADS, 4096) is sampled as far as the cap goes and
the report says the cap was hit, never silently nothing."""
import re

import pytest

from fwtest import INTERP_BY_ID, collapsed_lines, run_fw, start_workload, wait_ready

THREADS = 5000
CAP = 4096


@pytest.mark.parametrize("interp_id", ["py3.12", "py3.8"])
def test_threads_beyond_the_cap_are_sampled_up_to_it(interp_id, tmp_path):
    w = start_workload(INTERP_BY_ID[interp_id], "many_threads.py", "--threads", str(THREADS),
                       "--nap", "30", ready=False)
    try:
        wait_ready(w.proc, timeout=120, what="%d threads" % THREADS)
        txt, col = tmp_path / "out.txt", tmp_path / "out.collapsed"
        r = run_fw("record", "-p", w.pid, "-d", 1, "-r", 5, "-q", "--mode", "wall",
                   "--python-only", "-o", txt, "-o", col, timeout=300)
        assert r.returncode == 0, r
        threads = {t for t, frames, _ in collapsed_lines(col.read_text())
                   if any(f.split(" (")[0] == "parked" for f in frames)}
        # every thread the cap lets in, less a few whose read failed once
        assert len(threads) >= 4000, len(threads)
        text = txt.read_text()
        m = re.search(r"^Threads: .*?(\d+) of (\d+) Python threads read \(cap\)", text, re.M)
        assert m, text[:3000]
        assert int(m.group(1)) == CAP, m.group(0)
        # the workload's threads, its main thread, maybe a helper
        assert THREADS + 1 <= int(m.group(2)) <= THREADS + 3, m.group(0)
    finally:
        w.stop()
