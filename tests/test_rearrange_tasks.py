"""Rearrangement environment, tasks, sampler and expert on thor_lite (shipped val split)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from allenact.base_abstractions.sensor import SensorSuite

from rearrange.constants import REARRANGE_ACTIONS, scenes_for_stage, snake_case
from rearrange.dataset import DatasetError, dataset_path, load_dataset, load_stage, save_dataset
from rearrange.environment import RearrangeTaskSpec, RearrangeTHOREnvironment
from rearrange.pose_metrics import pose_difference_energy
from rearrange.tasks import RearrangeTaskSampler, RearrangeTaskSpecIterable, UnshuffleTask

VAL = dataset_path("val")
SHARED_VAL = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "rearrangement" / "2023_val.pkl.gz"
)


@pytest.fixture(scope="module")
def val():
    if not VAL.is_file():
        pytest.fail(f"shipped dataset {VAL} is missing (python -m rearrange.gen --stage val)")
    return load_dataset(VAL)


def make_sampler(episodes, sensors=(), run_walkthrough=False):
    return RearrangeTaskSampler(
        run_walkthrough_phase=run_walkthrough,
        run_unshuffle_phase=True,
        stage="val",
        scenes_to_task_spec_dicts=episodes,
        rearrange_env_kwargs={},
        sensors=SensorSuite(list(sensors)),
        max_steps={"walkthrough": 20, "unshuffle": 200},
        epochs=1,
        seed=0,
    )


def test_action_list_matches_official_indices():
    assert len(REARRANGE_ACTIONS) == 84
    assert REARRANGE_ACTIONS[:12] == (
        "done",
        "move_ahead",
        "move_left",
        "move_right",
        "move_back",
        "rotate_right",
        "rotate_left",
        "stand",
        "crouch",
        "look_up",
        "look_down",
        "drop_held_object_with_snap",
    )
    assert (
        REARRANGE_ACTIONS[12] == "open_by_type_blinds"
        and REARRANGE_ACTIONS[21] == "open_by_type_toilet"
    )
    assert REARRANGE_ACTIONS[33:36] == ("pickup_butter_knife", "pickup_c_d", "pickup_candle")
    assert REARRANGE_ACTIONS[83] == "pickup_wine_bottle"
    assert snake_case("CD") == "c_d" and snake_case("BasketBall") == "basket_ball"


def test_shipped_val_split_structure(val):
    assert list(val) == list(scenes_for_stage("val"))
    for scene, eps in val.items():
        assert len(eps) == 50
        for i, ep in enumerate(eps):
            assert ep["object_rearrangement_count"] == 1 + i // 10
            assert ep["open_diff_count"] in (0, 1) and ep["position_diff_count"] <= 5
            assert (
                ep["position_diff_count"] + ep["open_diff_count"]
                == ep["object_rearrangement_count"]
            )
            assert ep["pose_diff_energy"] > 0


def test_loader_rejects_malformed_files(tmp_path, val):
    bad = {"FloorPlan21": [copy.deepcopy(val["FloorPlan21"][0])]}
    del bad["FloorPlan21"][0]["target_poses"]
    p = tmp_path / "bad.pkl.gz"
    save_dataset(bad, p)
    with pytest.raises(
        DatasetError, match=r"FloorPlan21 episode 0: field 'target_poses' is missing"
    ):
        load_dataset(p)
    bad = {"FloorPlan21": [copy.deepcopy(val["FloorPlan21"][1])]}
    bad["FloorPlan21"][0]["openable_data"][0]["start_openness"] = 1.7
    save_dataset(bad, p)
    with pytest.raises(DatasetError, match=r"start_openness"):
        load_dataset(p)
    (tmp_path / "junk.pkl.gz").write_bytes(b"not gzip")
    with pytest.raises(DatasetError, match="not a gzip-compressed pickle"):
        load_dataset(tmp_path / "junk.pkl.gz")


def test_missing_split_is_an_error_naming_the_generation_command(tmp_path, monkeypatch):
    """Loading never starts the hour-long generation; it says how to run it instead."""
    import rearrange.gen

    def forbidden(*args, **kwargs):
        raise AssertionError("load_stage must not generate data")

    monkeypatch.setattr(rearrange.gen, "generate_stage", forbidden)
    with pytest.raises(
        DatasetError,
        match=r"train\.pkl\.gz: no such dataset file.*"
        r"`python -m rearrange\.gen --stage train --out ",
    ):
        load_stage("train", tmp_path)
    assert not (tmp_path / "train.pkl.gz").exists()


def test_dataset_module_does_not_import_gen():
    import subprocess
    import sys

    code = "import sys, rearrange.dataset; print('rearrange.gen' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_reset_and_shuffle_reproduce_dataset_energy(val):
    env = RearrangeTHOREnvironment()
    try:
        for scene in ("FloorPlan21", "FloorPlan321"):
            for ep in val[scene][:3]:
                spec = RearrangeTaskSpec(**copy.deepcopy(ep))
                env.reset(spec, force_axis_aligned_start=True)
                env.shuffle()
                ips, gps, cps = env.poses
                energy = sum(pose_difference_energy(g, i) for g, i in zip(gps, ips))
                assert energy == pytest.approx(ep["pose_diff_energy"], abs=1e-6)
                loc = env.get_agent_location()
                assert loc["rotation"] % 90 == 0 and loc["horizon"] == 0
    finally:
        env.stop()


def test_eval_iteration_order_is_descending():
    data = OrderedDict(
        (s, [{"scene": s, "index": i} for i in range(3)])
        for s in ("FloorPlan2", "FloorPlan10", "FloorPlan1")
    )
    it = RearrangeTaskSpecIterable(data, seed=0, epochs=1, shuffle=False)
    order = [(sp.scene, sp.metrics["index"]) for sp in it]
    assert order[0] == ("FloorPlan10", 2) and order[-1] == ("FloorPlan1", 0)
    assert len(order) == 9
    a = [
        s.scene
        for _, s in zip(range(12), RearrangeTaskSpecIterable(data, seed=3, epochs=float("inf")))
    ]
    b = [
        s.scene
        for _, s in zip(range(12), RearrangeTaskSpecIterable(data, seed=3, epochs=float("inf")))
    ]
    assert a == b  # seeded training order


def test_expert_solves_easy_episodes_and_metrics_are_consistent(val):
    eps = OrderedDict(
        {"FloorPlan21": val["FloorPlan21"][:4], "FloorPlan421": val["FloorPlan421"][:2]}
    )
    sampler = make_sampler(eps)
    solved = 0
    try:
        while (task := sampler.next_task()) is not None:
            while not task.is_done():
                action, ok = task.query_expert()
                assert ok
                task.step(action)
            m = task.metrics()
            info = m["task_info"]
            assert info["unshuffle_actions"][-1] == "done"
            assert len(info["unshuffle_actions"]) == m["unshuffle/ep_length"]
            assert m["unshuffle/start_energy"] == pytest.approx(
                val[info["scene"]][info["index"]]["pose_diff_energy"], abs=1e-6
            )
            # reward telescopes: S - 2 * E_final when the episode ends with done
            assert m["unshuffle/reward"] == pytest.approx(
                m["unshuffle/start_energy"] - 2 * m["unshuffle/end_energy"], abs=1e-5
            )
            solved += m["unshuffle/success"]
    finally:
        sampler.close()
    assert solved >= 5


def test_open_toggle_is_seeded_and_alternates(val):
    ep = next(e for e in val["FloorPlan21"] if e["openable_data"])
    values = []
    for _ in range(2):
        sampler = make_sampler(OrderedDict({"FloorPlan21": [copy.deepcopy(ep)]}))
        task = sampler.next_task()
        values.append(dict(task.open_toggle_values))
        name = ep["openable_data"][0]["objectName"]
        goal, start = task.open_toggle_values[name]
        assert goal == pytest.approx(ep["openable_data"][0]["target_openness"])
        assert start == pytest.approx(ep["openable_data"][0]["start_openness"])
        for o, s in task.open_toggle_values.values():
            assert abs(o - s) >= 0.2 - 1e-9
        sampler.close()
    assert values[0] == values[1]


def test_pickup_targets_nearest_visible_of_type_and_fails_without_candidates(val):
    sampler = make_sampler(OrderedDict({"FloorPlan21": [copy.deepcopy(val["FloorPlan21"][0])]}))
    try:
        task = sampler.next_task()
        visible_types = {
            o["objectType"] for o in task.env.last_event.metadata["objects"] if o["visible"]
        }
        absent = next(t for t in ("Boots", "BasketBall", "TeddyBear") if t not in visible_types)
        r = task.step(REARRANGE_ACTIONS.index(f"pickup_{snake_case(absent)}"))
        assert r.info["action_success"] is False
        assert task.env.held_object is None
        r = task.step(REARRANGE_ACTIONS.index("drop_held_object_with_snap"))
        assert r.info["action_success"] is False  # nothing held
    finally:
        sampler.close()


def test_two_phase_chains_walkthrough_then_unshuffle(val):
    from rearrange.sensors import InWalkthroughPhaseSensor

    eps = OrderedDict({"FloorPlan221": [copy.deepcopy(val["FloorPlan221"][0])]})
    sampler = make_sampler(eps, sensors=[InWalkthroughPhaseSensor()], run_walkthrough=True)
    try:
        w = sampler.next_task()
        assert w.get_observations()["in_walkthrough_phase"].dtype == np.bool_
        assert bool(w.get_observations()["in_walkthrough_phase"][0])
        while not w.is_done():
            w.step(REARRANGE_ACTIONS.index("rotate_right"))
        assert w.metrics() == {}  # disabled: reported with the unshuffle task
        u = sampler.next_task()
        assert isinstance(u, UnshuffleTask)
        assert not bool(u.get_observations()["in_walkthrough_phase"][0])
        u.step(0)
        m = u.metrics()
        assert m["ep_length"] == 20 + 1
        assert m["walkthrough/ep_length"] == 20 and "walkthrough_actions" in m["task_info"]
        assert sampler.next_task() is None
    finally:
        sampler.close()


@pytest.mark.skipif(
    not SHARED_VAL.is_file(), reason="official 2023 val split not available (../shared)"
)
def test_official_val_split_resets_and_shuffles():
    data = load_dataset(SHARED_VAL, stage="val")
    env = RearrangeTHOREnvironment()
    try:
        for scene, eps in data.items():
            spec = RearrangeTaskSpec(**copy.deepcopy(eps[1]))
            env.reset(spec, force_axis_aligned_start=True)
            env.shuffle()
            ips, gps, cps = env.poses
            assert len(gps) == len(ips) and gps
            names = {p["name"] for p in eps[1]["starting_poses"]}
            current = {o["name"] for o in env.last_event.metadata["objects"] if o["pickupable"]}
            assert names == current, scene
    finally:
        env.stop()
