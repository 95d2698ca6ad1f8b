"""Fixtures of the peers' suites (issue 21); the helpers are in peertest.py.
tests/functional/conftest.py parametrizes `interp` for these tests too."""
import pytest

from peertest import Listener, start_peer


@pytest.fixture
def peer():
    """Factory: peer(interp, 'pyspy/longsleep.py', *args) starts a peer's
    script; every one started is killed (with its process group) at teardown."""
    started = []

    def start(interp, rel, *args, **kw):
        p = start_peer(interp, rel, *args, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture
def listener():
    """A socket the CPython scripts connect to (its port is their argv[1])."""
    ls = Listener()
    yield ls
    ls.close()
