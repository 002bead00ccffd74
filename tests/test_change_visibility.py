"""benchmarks/rearrange_change_visibility.py counts what a change does to the pixels: a shipped
episode's opened drawer differs inside its mask, and an object left unchanged differs nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "rearrange" / "val.pkl.gz"
SCENE, INDEX = "FloorPlan221", 1  # its one change: Drawer_3ed104a4 at openness 0.57 vs 0.80


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("rearrange_change_visibility")


@pytest.fixture(scope="module")
def setup(bench):
    from rearrange.dataset import load_dataset

    if not DATA.exists():
        pytest.skip(f"{DATA} is not shipped in this checkout")
    ep = next(e for e in load_dataset(DATA)[SCENE] if e["index"] == INDEX)
    env = bench.make_env()
    yield bench, {**ep, "scene": SCENE}, env
    env.stop()


def test_opened_drawer_is_seen(setup):
    bench, ep, env = setup
    rows = bench.measure_episode(env, ep, max_poses=16, seed=0)
    assert [(r["type"], r["kind"]) for r in rows] == [("Drawer", "opened")]
    assert rows[0]["poses"] > 0
    assert rows[0]["inside"] > bench.VISIBLE_PX and rows[0]["visible"]


def test_unchanged_object_differs_nowhere(setup):
    bench, ep, env = setup
    drawer = {"name": ep["openable_data"][0]["objectName"], "type": "Drawer", "kind": "opened"}
    assert bench.measure_episode(env, ep, 16, 0, same_start=True) == []
    (r,) = bench.measure_episode(env, ep, 16, 0, same_start=True, also=[drawer])
    assert r["poses"] > 0
    assert (r["inside"], r["outside"], r["visible_poses"]) == (0, 0, 0)
    # the same object, really changed
    (changed,) = bench.measure_episode(env, ep, 16, 0)
    assert changed["visible_poses"] > 0
