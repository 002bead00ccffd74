"""Recognising a trajectory recorded in THOR 2.1.0 (alfred_task/env/thor_version.py), which switches
on thor_lite's THOR 2.1.0 rules, without relying on its recorded objectIds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ALFRED_SAMPLE, alfred_sample_traj
from alfred_task.env.furniture_poses import recorded_ids
from alfred_task.env.thor_version import foreign_name_share, recorded_in_thor2

LITE = Path(__file__).resolve().parents[1] / "data" / "alfred_lite"


def _obj(oid: str, name: str) -> dict:
    return {"objectId": oid, "name": name}


def _traj(names, ids=()) -> dict:
    return {
        "scene": {"object_poses": [{"objectName": n} for n in names]},
        "plan": {
            "low_actions": [{"api_action": {"action": "PickupObject", "objectId": i}} for i in ids]
        },
    }


TODAY = [
    _obj("Plunger|-00.21|00.00|+03.54", "Plunger_1a2b3c4d"),
    _obj("Cabinet|-00.12|+00.36|+04.63", "Cabinet_9f8e7d6c"),
    _obj("SoapBar|-03.66|+00.53|+01.35", "SoapBar_0a0b0c0d"),
]


def test_posed_names_of_another_build_mark_a_thor2_trajectory_even_with_todays_ids():
    traj = _traj(["Plunger_a8e7eab7", "SoapBar_77aa11bb"], ["Plunger|-00.21|00.00|+03.54"])
    assert foreign_name_share(traj, TODAY) == 1.0
    assert recorded_in_thor2(traj, TODAY)


def test_todays_names_and_ids_are_not_thor2_even_with_a_few_duplicates():
    # generated data poses today's names, plus `_random_copy_N` duplicates named after them
    traj = _traj(
        ["Plunger_1a2b3c4d", "SoapBar_0a0b0c0d", "SoapBar_0a0b0c0d_random_copy_2"],
        ["Plunger|-00.21|00.00|+03.54", "Cabinet|-00.12|+00.36|+04.63"],
    )
    assert foreign_name_share(traj, TODAY) == pytest.approx(1 / 3)
    assert not recorded_in_thor2(traj, TODAY)
    assert not recorded_in_thor2(_traj([]), TODAY)


def test_a_recorded_id_unknown_today_still_marks_thor2():
    assert recorded_in_thor2(_traj(["Plunger_1a2b3c4d"], ["Plunger|+01.00|00.00|+01.00"]), TODAY)


@pytest.mark.skipif(not ALFRED_SAMPLE.is_dir(), reason="../shared ALFRED train sample absent")
def test_a_real_trajectory_naming_only_todays_ids_gets_the_thor2_rules(alfred_env):
    """FloorPlan402: every recorded id is today's (the plunger and cabinet never moved), but
    ALFRED's posed names are THOR 2.1.0's. With the 2.1.0 rules the held plunger hangs from the
    hand and the cabinet takes the PutObject mask (before: the floor; goal missed; the replay
    itself is one of tests/test_alfred_fidelity.py's _REPLAY_CASES)."""
    traj = alfred_sample_traj("pick_and_place_simple-Plunger-None-Cabinet-402")
    alfred_env.reset(traj["scene"]["floor_plan"])
    objs = alfred_env.last_event.metadata["objects"]
    today = {o["objectId"] for o in objs}
    assert recorded_ids(traj) and all(i in today for i in recorded_ids(traj))
    assert recorded_in_thor2(traj, objs)
    alfred_env.init_episode(traj)
    assert alfred_env.controller._world.held_hangs and alfred_env.controller._world.thor2_rules


def test_no_shipped_generated_trajectory_is_taken_for_thor2():
    """data/alfred_lite names today's objects: its trajectories keep the rules they were made with."""
    from thor_lite.controller import Controller

    c = Controller(scene="FloorPlan1", width=32, height=32)
    try:
        paths = sorted(LITE.rglob("traj_data.json"))
        assert len(paths) > 20
        for p in paths:
            traj = json.loads(p.read_text())
            objs = c.reset(traj["scene"]["floor_plan"]).metadata["objects"]
            assert not recorded_in_thor2(traj, objs), p
    finally:
        c.stop()
