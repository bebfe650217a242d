"""v22sdk._startup.loading: the collector is off inside, what was made is frozen, the caller's state is back after."""

from __future__ import annotations

import gc

import pytest

from v22sdk._startup import loading


@pytest.fixture(autouse=True)
def _restore_gc():
    was = gc.isenabled()
    yield
    gc.unfreeze()  # the test process must not keep its objects out of the collector's reach
    (gc.enable if was else gc.disable)()


def test_collector_is_off_inside_and_back_on_after():
    gc.enable()
    gc.unfreeze()
    with loading():
        assert not gc.isenabled()
        made = [[] for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)  # moved to the permanent generation


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with loading():
        pass
    assert not gc.isenabled()


def test_the_collector_comes_back_when_the_body_raises():
    gc.enable()
    with pytest.raises(RuntimeError):
        with loading():
            raise RuntimeError("boom")
    assert gc.isenabled()
