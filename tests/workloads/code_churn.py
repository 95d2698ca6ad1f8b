"""Code objects made and freed continuously, for the reader's code-object
cache: each pass compiles the source of one of N functions gen_K (all the
same size, each at its own lines of the file "<code-churn>"), runs it for
about a millisecond under its own long-lived caller caller_K (file
"<callers>"), and drops it, so the allocator hands the next gen_J the
address gen_K had. A sample naming gen_J under caller_K, or a line outside
gen_J's lines, is a name read from a freed code object. Prints READY.
"""
import sys

N = 24
SPAN = 50             # lines per slot: gen_K's lines are SPAN*K+1 .. SPAN*K+5
CHURN_FILE = "<code-churn>"
CALLERS_FILE = "<callers>"
ITERATIONS = 20000


def gen_source(k):
    return "\n" * (SPAN * k) + (
        "def gen_%d(n):\n"
        "    t = 0\n"
        "    for i in range(n):\n"
        "        t += i * %d\n"
        "    return t\n" % (k, k + 1))


def make_callers():
    """caller_K at lines SPAN*K+1 .. SPAN*K+2 of "<callers>", kept for the run."""
    lines = []
    for k in range(N):
        while len(lines) < SPAN * k:
            lines.append("")
        lines.append("def caller_%d(f, n):" % k)
        lines.append("    return f(n)")
    src = "\n".join(lines) + "\n"
    ns = {}
    exec(compile(src, CALLERS_FILE, "exec"), ns)
    return [ns["caller_%d" % k] for k in range(N)]


def run(callers, sources):
    while True:
        for k in range(N):
            ns = {}
            exec(compile(sources[k], CHURN_FILE, "exec"), ns)
            callers[k](ns["gen_%d" % k], ITERATIONS)
            del ns


callers = make_callers()
sources = [gen_source(k) for k in range(N)]
sys.stdout.write("READY\n")
sys.stdout.flush()
run(callers, sources)
