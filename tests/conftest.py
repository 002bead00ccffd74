"""Shared fixtures: one small FloorPlan1 controller per test module, and a fresh-scene view of it."""
from __future__ import annotations

import pytest

from thor_lite import Controller


@pytest.fixture(scope="module")
def c():
    ctrl = Controller(scene="FloorPlan1", width=96, height=96)
    yield ctrl
    ctrl.stop()


@pytest.fixture
def fresh(c):
    c.reset("FloorPlan1")
    return c


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts real multiprocess runs (tens of seconds each); "
                                       "deselect with -m 'not slow'")
