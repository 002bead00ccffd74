"""benchmarks/rearrange_change_visibility.py counts what a change does to the pixels: a shipped
episode's opened drawer differs inside its mask, and an object left unchanged differs nowhere."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "rearrange" / "val.pkl.gz"
SCENE, INDEX = "FloorPlan221", 1  # its one change: Drawer_3ed104a4 at openness 0.57 vs 0.80


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return load_script(ROOT / "benchmarks" / "rearrange_change_visibility.py")


@pytest.fixture(scope="module")
def setup(bench):
    from rearrange.dataset import load_dataset

    if not DATA.exists():
        pytest.skip(f"{DATA} is not shipped in this checkout")
    ep = next(e for e in load_dataset(DATA)[SCENE] if e["index"] == INDEX)
    envs = bench.make_envs()
    yield bench, {**ep, "scene": SCENE}, envs
    for e in envs:
        e.stop()


def test_opened_drawer_is_seen(setup):
    bench, ep, (goal_env, start_env) = setup
    rows = bench.measure_episode(goal_env, start_env, ep, max_poses=16, seed=0)
    assert [(r["type"], r["kind"]) for r in rows] == [("Drawer", "opened")]
    assert rows[0]["poses"] > 0
    assert rows[0]["inside"] > bench.VISIBLE_PX and rows[0]["visible"]


def test_unchanged_object_differs_nowhere(setup):
    bench, ep, (goal_env, start_env) = setup
    same = dict(ep, starting_poses=ep["target_poses"])
    same["openable_data"] = [
        dict(o, start_openness=o["target_openness"]) for o in ep["openable_data"]
    ]
    assert bench.measure_episode(goal_env, start_env, same, max_poses=16, seed=0) == []
    drawer = {"name": ep["openable_data"][0]["objectName"], "type": "Drawer", "kind": "opened"}
    r = bench.measure_change(goal_env, start_env, drawer, 16, random.Random(0))
    assert r["poses"] > 0
    assert (r["inside"], r["outside"], r["visible_poses"]) == (0, 0, 0)
