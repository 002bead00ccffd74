"""THOR 2.1.0's furniture names in ALFRED's mode (thor_lite/thor2_types.py)."""

from __future__ import annotations

import pytest

from thor_lite.scene_data import layout_object_types
from thor_lite.thor2_types import thor2_renames


def test_rename_only_when_unambiguous():
    # the 2.1.0 scene had a Dresser and no SideTable; today's has a SideTable and no Dresser
    assert thor2_renames(frozenset({"SideTable", "Bed"}), frozenset({"Dresser", "Bed"})) == {
        "SideTable": "Dresser"
    }
    # a SideTable the 2.1.0 scene also had keeps its name
    assert thor2_renames(frozenset({"SideTable"}), frozenset({"SideTable", "Dresser"})) == {}
    # two 2.1.0 candidates missing here: no way to tell which one it was
    assert thor2_renames(frozenset({"SideTable"}), frozenset({"Dresser", "Cart"})) == {}
    assert thor2_renames(frozenset({"Desk"}), frozenset({"DiningTable"})) == {"Desk": "DiningTable"}


@pytest.mark.skipif(
    layout_object_types("FloorPlan314") is None, reason="ALFRED layouts (alfworld) absent"
)
def test_alfred_mode_names_the_dresser_and_keeps_what_is_on_it():
    from backends import make_controller

    thor2 = make_controller("thor_lite", layout_clears_moveables=True, scene="FloorPlan314")
    today = make_controller("thor_lite", scene="FloorPlan314")
    try:
        objs = {o["objectId"]: o for o in thor2.last_event.metadata["objects"]}
        assert "Dresser|+02.19|+00.00|-00.49" in objs and not any(
            o.startswith("SideTable|") for o in objs
        )
        assert objs["Book|+02.21|+00.83|-00.24"]["parentReceptacles"] == [
            "Dresser|+02.19|+00.00|-00.49"
        ]
        assert (
            "Book|+02.21|+00.83|-00.24"
            in objs["Dresser|+02.19|+00.00|-00.49"]["receptacleObjectIds"]
        )
        # the rearrangement tasks (today's THOR) keep today's names
        assert any(
            o["objectId"] == "SideTable|+02.19|+00.00|-00.49"
            for o in today.last_event.metadata["objects"]
        )
    finally:
        thor2.stop()
        today.stop()


def test_a_rolled_flat_asset_posed_without_roll_keeps_todays_roll_at_yaw_plus_90():
    """THOR 2.1.0's knife lay flat at no roll along its local x; today's lies rolled 90 degrees
    about its local z. Only that asset convention is converted: a pose that already has a roll,
    or another type that merely happens to lie rolled in one scene, stays as given."""
    from thor_lite.thor2_types import thor2_pose_rotation

    today = (0.0, 75.0, 90.0)
    assert thor2_pose_rotation("Knife", today, (0.0, 180.0, 0.0)) == (0.0, 270.0, 90.0)
    assert thor2_pose_rotation("ButterKnife", (0.0, 10.0, 270.0), (0.0, 0.0, 0.0)) == (
        0.0,
        90.0,
        270.0,
    )
    assert thor2_pose_rotation("Knife", today, (0.0, 180.0, 90.0)) == (0.0, 180.0, 90.0)
    assert thor2_pose_rotation("ToiletPaper", today, (0.0, 180.0, 0.0)) == (0.0, 180.0, 0.0)
    assert thor2_pose_rotation("Knife", (0.0, 75.0, 0.0), (0.0, 180.0, 0.0)) == (0.0, 180.0, 0.0)


@pytest.mark.skipif(
    layout_object_types("FloorPlan314") is None, reason="ALFRED layouts (alfworld) absent"
)
def test_a_renamed_dresser_keeps_todays_table_shape_and_top():
    """FloorPlan314's SideTable is a Dresser in ALFRED's mode, but it is still today's asset: drawn
    as a top on legs (the drawers under it stay in view) and things put on it rest on its top."""
    from backends import make_controller
    from thor_lite import physics

    c = make_controller("thor_lite", layout_clears_moveables=True, scene="FloorPlan314")
    try:
        w = c._world
        dresser = w.objects["Dresser|+02.19|+00.00|-00.49"]
        assert dresser.shape_type == "SideTable" and len(dresser.parts) == 5
        assert physics.surface_height(w, dresser) == pytest.approx(
            float(dresser.aabb[1][1]), abs=0.05
        )
    finally:
        c.stop()


def test_a_ladle_posed_level_lies_along_yaw_plus_90():
    """THOR 2.1.0's ladle ran along its local x, today's along local z (no roll either way): a
    level pose turns it by 90 degrees; a tilted pose and other types stay as given."""
    from thor_lite.thor2_types import thor2_pose_rotation

    assert thor2_pose_rotation("Ladle", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), thor2=True) == (
        0.0,
        90.0,
        0.0,
    )
    assert thor2_pose_rotation("Fork", (0.0, 30.0, 0.0), (0.0, 270.0, 0.0), thor2=True) == (
        0.0,
        360.0,
        0.0,
    )
    assert thor2_pose_rotation("Spatula", (0.0, 0.0, 0.0), (90.0, 0.0, 0.0), thor2=True) == (
        90.0,
        0.0,
        0.0,
    )
    assert thor2_pose_rotation("CellPhone", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), thor2=True) == (
        0.0,
        0.0,
        0.0,
    )
    # data generated on thor_lite (no thor2Poses) poses today's asset as given
    assert thor2_pose_rotation("Ladle", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == (0.0, 0.0, 0.0)


def _replay_to(env, task_dir: str, stop: int) -> dict:
    """Replay a real trajectory's first `stop` low-level actions (each must succeed)."""
    from alfred_task.constants import INTERACT_ACTIONS
    from alfred_task.data.masks import decompress_mask

    from conftest import alfred_sample_traj

    traj = alfred_sample_traj(task_dir)
    env.init_episode(traj)
    for la in traj["plan"]["low_actions"][:stop]:
        act = la["discrete_action"]["action"]
        if act in INTERACT_ACTIONS:
            ok, _ev, _t, err, _ = env.va_interact(
                act, decompress_mask(la["discrete_action"]["args"]["mask"])
            )
        else:
            ev = env.step(dict(la["api_action"]))
            ok, err = bool(ev.metadata["lastActionSuccess"]), ev.metadata["errorMessage"]
        assert ok, (act, err)
    return traj


def _recorded_mask(traj: dict, step: int):
    import numpy as np

    from alfred_task.data.masks import decompress_mask

    la = traj["plan"]["low_actions"][step]
    assert la["discrete_action"]["action"] == "PickupObject"
    return np.asarray(decompress_mask(la["discrete_action"]["args"]["mask"]), bool)


def test_real_ladle_on_a_counter_is_picked_where_its_mask_runs(alfred_env):
    """FloorPlan8: ALFRED's mask of the posed ladle runs across the view; ours ran along it and
    the mask found the counter beside it (step 12)."""
    traj = _replay_to(alfred_env, "pick_clean_then_place_in_recep-Ladle-None-CounterTop-8", 12)
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 12))
    assert ok and target.startswith("Ladle|"), err


def test_real_fork_on_a_counter_lies_along_its_mask(alfred_env):
    """FloorPlan13: the posed fork's recorded mask runs across the view; ours ran along it and
    held 20 of the mask's 174 pixels (the pickup then took the fork by a sliver). Turned, most
    of the mask falls on it."""
    traj = _replay_to(alfred_env, "pick_and_place_with_movable_recep-Fork-Cup-CounterTop-13", 10)
    mask = _recorded_mask(traj, 10)
    masks = alfred_env.last_event.instance_masks
    on_fork = max(int((v & mask).sum()) for k, v in masks.items() if k.startswith("Fork|"))
    assert on_fork > 0.5 * mask.sum()
