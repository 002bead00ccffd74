"""Shared fixtures: one small FloorPlan1 controller per test module, and a fresh-scene view of it."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

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


def load_script(path: Path, name: str = "") -> ModuleType:
    """Import a script that is not part of a package (scripts/, benchmarks/) by its path."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts real multiprocess runs (tens of seconds each); "
                                       "deselect with -m 'not slow'")
