#!/usr/bin/env python3
"""The counting callback's own cost in process (docs/CALLCOUNTS.md, "Cost,
measured"): three shapes of the per-code-object counter that
src/python/callcount_script.py could use, each registered as a
sys.monitoring PY_START/PY_RESUME callback over 10**6 calls of an empty
function and 10**6 resumes of a generator, median of 5 rounds against the
same loops uncounted. Shapes: next() of an itertools.count (a call after
the count: the interpreter can take a request there), `d[code] += 1` (no
call; allocates an int), the count advanced by `for _ in c: break` in a
dict (a code's first event still calls setdefault), and the same in a C
defaultdict(itertools.count) (no call at all: what the script uses).
Run with a 3.14+ interpreter: python3.14 bench/callback_shapes.py
"""
import sys, time, itertools
M = sys.monitoring; E = M.events
def f(): pass
def g(k):
    for i in range(k):
        yield i
def run(label, on_start, on_resume):
    M.use_tool_id(3, 'x'); M.register_callback(3, E.PY_START, on_start); M.register_callback(3, E.PY_RESUME, on_resume)
    M.set_events(3, E.PY_START | E.PY_RESUME)
    t = time.perf_counter()
    for _ in range(1_000_000): f()
    t1 = time.perf_counter() - t
    t = time.perf_counter()
    for _ in g(1_000_000): pass
    t2 = time.perf_counter() - t
    M.set_events(3, 0); M.free_tool_id(3)
    return t1, t2
def base():
    t = time.perf_counter()
    for _ in range(1_000_000): f()
    t1 = time.perf_counter() - t
    t = time.perf_counter()
    for _ in g(1_000_000): pass
    return t1, time.perf_counter() - t
def mk_next():
    s, r = {}, {}
    ss, rs, count = s.setdefault, r.setdefault, itertools.count
    def on_start(code, off):
        try: next(s[code])
        except KeyError: next(ss(code, count()))
    def on_resume(code, off):
        try: next(r[code])
        except KeyError: next(rs(code, count()))
    return on_start, on_resume
def mk_add():
    s, r = {}, {}
    def on_start(code, off):
        try: s[code] += 1
        except KeyError: s[code] = 1
    def on_resume(code, off):
        try: r[code] += 1
        except KeyError: r[code] = 1
    return on_start, on_resume
def mk_for():
    s, r = {}, {}
    ss, rs, count = s.setdefault, r.setdefault, itertools.count
    def on_start(code, off):
        try:
            for _ in s[code]:
                break
        except KeyError:
            for _ in ss(code, count()):
                break
    def on_resume(code, off):
        try:
            for _ in r[code]:
                break
        except KeyError:
            for _ in rs(code, count()):
                break
    return on_start, on_resume
def mk_dd():
    import _collections
    s, r = _collections.defaultdict(itertools.count), _collections.defaultdict(itertools.count)
    def on_start(code, off):
        for _ in s[code]:
            break
    def on_resume(code, off):
        for _ in r[code]:
            break
    return on_start, on_resume
res = {'base': [], 'next': [], 'add': [], 'for': [], 'dd': []}
for rep in range(5):
    res['base'].append(base())
    res['next'].append(run('next', *mk_next()))
    res['add'].append(run('add', *mk_add()))
    res['for'].append(run('for', *mk_for()))
    res['dd'].append(run('dd', *mk_dd()))
import statistics
b = [statistics.median(x[i] for x in res['base']) for i in (0, 1)]
for k in ('next', 'add', 'for', 'dd'):
    m = [statistics.median(x[i] for x in res[k]) for i in (0, 1)]
    print(sys.version.split()[0], k, "f: +%.0f ns/call  gen: +%.0f ns/resume" % ((m[0]-b[0])*1e3, (m[1]-b[1])*1e3))
