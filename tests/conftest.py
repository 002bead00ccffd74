"""Shared fixtures: one small FloorPlan1 controller per test module, and a fresh-scene view of it."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from thor_lite import Controller


def controller_fixture(scene: str, width: int = 96, height: int = 96):
    """A module-scoped fixture yielding a thor_lite Controller on `scene`, stopped afterwards."""

    @pytest.fixture(scope="module")
    def _controller():
        ctrl = Controller(scene=scene, width=width, height=height)
        yield ctrl
        ctrl.stop()

    return _controller


c = controller_fixture("FloorPlan1")


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


def load_benchmark(name: str) -> ModuleType:
    """Import benchmarks/<name>.py as its script run sees it (its folder on sys.path, for
    `_common`)."""
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    return load_script(bench / f"{name}.py")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: starts real multiprocess runs (tens of seconds each); deselect with -m 'not slow'",
    )


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread per test module: small CPU models on the 2-core CI machine run faster
    without intra-op threads fighting each other; the previous setting is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# The real ALFRED train sample in ../shared (tests that need it skip when it is absent).
ALFRED_SAMPLE = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "alfred_train_sample"
    / "json_2.1.0"
    / "train"
)


def alfred_sample_traj(task_dir: str) -> dict:
    """The first trial's traj_data.json of a task folder of the sample; skip if it is not there."""
    paths = sorted((ALFRED_SAMPLE / task_dir).glob("*/traj_data.json"))
    if not paths:
        pytest.skip(f"{task_dir} not in the sample")
    return json.loads(paths[0].read_text())


@pytest.fixture(scope="module")
def alfred_env():
    """One AlfredEnv per test module."""
    from alfred_task.env.environment import AlfredEnv

    e = AlfredEnv()
    yield e
    e.stop()
