"""Fixtures of framewalk's functional tests.

Interpreters: pyenv 3.8-3.13, Debian's static /usr/bin/python3.11, and
python3.13/3.14/3.15 in the Debian-unstable root made by scripts/sid-root.sh
(FRAMEWALK_SID_ROOT, default /var/cache/framewalk/sid). A missing interpreter
or root makes its tests FAIL, never skip.

A test taking an `interp` argument runs once per interpreter; restrict it
with @pytest.mark.interps("py3.12", "sid-py3.15"). FRAMEWALK_TEST_INTERPS
(comma-separated ids) narrows every such test to those interpreters (a test
marked for none of them runs on its first one): the sanitizer pass of
.ci/run uses it.

A test crossing interpreters with backends where only one of the two
varies the C path under test (a version's layouts are read by one reader
whatever stops the thread) runs a backend on fewer interpreters with
@pytest.mark.backend_interps(vm=("py3.12", "sid-py3.15")): its vm cases
on those interpreters only, the other backends on every one. A backend
none of whose chosen interpreters is listed keeps all its cases.
"""
import os

import pytest

from fwtest import INTERPS, INTERP_BY_ID, start_workload

# No test may reach a debuginfod server by accident (a login shell's
# DEBUGINFOD_URLS): framewalk would ask it while every capture starts.
# test_symbols.py sets the variable itself, for its local server only.
for _var in [v for v in os.environ if v.startswith("DEBUGINFOD_")]:
    del os.environ[_var]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "interps(*ids): run an interp-parametrized test only on these interpreters")
    config.addinivalue_line(
        "markers", "backend_interps(**{backend: ids}): run that backend's cases only on these "
        "interpreters")


def _interp_id(item):
    params = item.callspec.params
    if "interp" in params:
        return params["interp"].id
    return params.get("interp_id")


def pytest_collection_modifyitems(config, items):
    """@pytest.mark.backend_interps: the cases of a listed backend on other
    interpreters are deselected (said in pytest's count of deselected)."""
    listed_present = set()     # (test, backend) with a case on a listed interpreter
    marked = []
    for item in items:
        marker = item.get_closest_marker("backend_interps")
        if not marker or not hasattr(item, "callspec"):
            continue
        backend = item.callspec.params.get("backend")
        wanted = marker.kwargs.get(backend)
        if wanted is None:
            continue
        unknown = [i for i in wanted if i not in INTERP_BY_ID]
        assert not unknown, "unknown interpreter ids %s" % unknown
        marked.append((item, backend, wanted))
        if _interp_id(item) in wanted:
            listed_present.add((item.originalname, backend))
    dropped = [item for item, backend, wanted in marked
               if _interp_id(item) not in wanted and
               (item.originalname, backend) in listed_present]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [i for i in items if id(i) not in gone]


def pytest_generate_tests(metafunc):
    if "interp" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("interps")
    if marker:
        unknown = [i for i in marker.args if i not in INTERP_BY_ID]
        assert not unknown, "unknown interpreter ids %s" % unknown
        chosen = [INTERP_BY_ID[i] for i in marker.args]
    else:
        chosen = INTERPS
    only = [i for i in os.environ.get("FRAMEWALK_TEST_INTERPS", "").split(",") if i]
    if only:
        unknown = [i for i in only if i not in INTERP_BY_ID]
        assert not unknown, "unknown interpreter ids in FRAMEWALK_TEST_INTERPS: %s" % unknown
        # a test written for other interpreters still runs, on its first one
        chosen = [i for i in chosen if i.id in only] or chosen[:1]
    metafunc.parametrize("interp", chosen, ids=[i.id for i in chosen])


@pytest.fixture
def workload():
    """Factory: workload(interp, 'structure.py', *args, ready=True) starts a
    workload (waiting for its READY line); every one started is killed at
    teardown."""
    started = []

    def start(interp, script, *args, ready=True):
        w = start_workload(interp, script, *args, ready=ready)
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


@pytest.fixture
def structure(interp, workload):
    """structure.py running under `interp`, READY."""
    return workload(interp, "structure.py")
