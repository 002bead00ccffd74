"""TeleportObject back to a pose that SetObjectPoses set (THOR's data) ignores our boxes' overlaps
with objects that still stand as they stood then; anything moved since still collides (issue 11).

The official-train cases need ../shared (skipped without it).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List

import pytest

SHARED_TRAIN = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "rearrangement"
    / "2023_train.pkl.gz"
)
needs_train = pytest.mark.skipif(
    not SHARED_TRAIN.is_file(), reason="official 2023 train split not available (../shared)"
)


def _snap_args(o: Dict[str, Any]) -> Dict[str, Any]:
    """The official snap's TeleportObject call for putting `o` back where it is now."""
    p = o["position"]
    positions = [
        {"x": p["x"] + 0.001 * dx, "y": p["y"] + 0.001 * dy, "z": p["z"] + 0.001 * dz}
        for dx in (0, -1, 1)
        for dz in (0, -1, 1)
        for dy in (0, 1, 2)
    ]
    return dict(
        objectId=o["objectId"],
        rotation=dict(o["rotation"]),
        positions=positions,
        forceKinematic=True,
        allowTeleportOutOfHand=True,
        makeUnbreakable=True,
    )


def _all_poses(c) -> List[Dict[str, Any]]:
    return [
        {"objectName": o["name"], "position": dict(o["position"]), "rotation": dict(o["rotation"])}
        for o in c.last_event.metadata["objects"]
        if o["pickupable"] or o["moveable"]
    ]


def _by_name(c, name: str) -> Dict[str, Any]:
    return next(o for o in c.last_event.metadata["objects"] if o["name"] == name)


def _pose_two_overlapping(c):
    """SetObjectPoses puts a Potato 2 cm beside an Apple's centre (boxes overlap); returns both."""
    apple = c.last_event.objects_by_type("Apple")[0]
    potato = c.last_event.objects_by_type("Potato")[0]
    poses = _all_poses(c)
    for p in poses:
        if p["objectName"] == potato["name"]:
            a = apple["position"]
            p["position"] = {"x": a["x"] + 0.02, "y": a["y"], "z": a["z"]}
    assert c.step("SetObjectPoses", objectPoses=poses).metadata["lastActionSuccess"]
    return _by_name(c, apple["name"]), _by_name(c, potato["name"])


def test_teleport_back_to_a_posed_configuration_is_no_collision(fresh):
    c = fresh
    apple, potato = _pose_two_overlapping(c)
    assert c.step("PickupObject", objectId=apple["objectId"], forceAction=True).metadata[
        "lastActionSuccess"
    ]
    ev = c.step("TeleportObject", **_snap_args(apple))
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert not ev.metadata["inventoryObjects"]


def test_an_object_moved_since_still_collides(fresh):
    c = fresh
    apple, potato = _pose_two_overlapping(c)
    assert c.step("PickupObject", objectId=apple["objectId"], forceAction=True).metadata[
        "lastActionSuccess"
    ]
    m = potato["position"]
    assert c.step(
        "TeleportObject",
        objectId=potato["objectId"],
        position={"x": m["x"] + 0.01, "y": m["y"], "z": m["z"]},
        rotation=dict(potato["rotation"]),
        forceAction=True,
        forceKinematic=True,
    ).metadata["lastActionSuccess"]
    ev = c.step("TeleportObject", **_snap_args(apple))
    assert not ev.metadata["lastActionSuccess"]
    assert (
        ev.metadata["errorMessage"]
        == f"{apple['objectId']} is colliding with {potato['objectId']} after teleport."
    )
    assert ev.metadata["inventoryObjects"]


@pytest.mark.parametrize("rot_deg, lift, collides", [(3.0, 0.02, False), (10.0, 0.0, True)])
def test_neighbours_match_up_to_jitter_and_settling(fresh, rot_deg, lift, collides):
    """A neighbour turned by THOR's physics jitter (a few degrees) and lifted by our settle (a few
    cm) still stands as recorded; turned 10 degrees it does not (moved 1 cm sideways: above)."""
    c = fresh
    apple, potato = _pose_two_overlapping(c)
    assert c.step("PickupObject", objectId=apple["objectId"], forceAction=True).metadata[
        "lastActionSuccess"
    ]
    p, r = potato["position"], potato["rotation"]
    assert c.step(
        "TeleportObject",
        objectId=potato["objectId"],
        position={"x": p["x"], "y": p["y"] + lift, "z": p["z"]},
        rotation={"x": r["x"], "y": r["y"] + rot_deg, "z": r["z"]},
        forceAction=True,
        forceKinematic=True,
    ).metadata["lastActionSuccess"]
    ev = c.step("TeleportObject", **_snap_args(apple))
    assert ev.metadata["lastActionSuccess"] is not collides, ev.metadata["errorMessage"]


def test_force_kinematic_teleport_does_not_settle(fresh):
    """THOR leaves a kinematic object exactly where it was put, even sunk 2 cm into the counter."""
    c = fresh
    apple = c.last_event.objects_by_type("Apple")[0]
    a = apple["position"]
    target = {"x": a["x"], "y": a["y"] - 0.02, "z": a["z"]}
    ev = c.step(
        "TeleportObject",
        objectId=apple["objectId"],
        position=target,
        rotation=dict(apple["rotation"]),
        forceAction=True,
        forceKinematic=True,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert _by_name(c, apple["name"])["position"]["y"] == pytest.approx(target["y"], abs=1e-6)


def test_a_reset_forgets_posed_configurations(fresh):
    """Episode order must not matter: a configuration posed before reset() tolerates nothing after."""
    c = fresh
    apple, potato = _pose_two_overlapping(c)
    c.reset("FloorPlan1")
    names = {o["name"]: o for o in c.last_event.metadata["objects"]}
    p2 = names[potato["name"]]
    assert c.step(
        "TeleportObject",
        objectId=p2["objectId"],
        position=potato["position"],
        rotation=dict(potato["rotation"]),
        forceAction=True,
        forceKinematic=True,
    ).metadata["lastActionSuccess"]
    ev = c.step("TeleportObject", **_snap_args(apple))
    assert not ev.metadata["lastActionSuccess"]
    assert "is colliding with" in ev.metadata["errorMessage"]


# --- official 2023 train episodes -------------------------------------------------------
def _task(scene: str, index: int):
    from allenact.base_abstractions.sensor import SensorSuite

    from rearrange.dataset import load_dataset
    from rearrange.tasks import RearrangeTaskSampler

    eps = [e for e in load_dataset(SHARED_TRAIN)[scene] if e["index"] == index]
    sampler = RearrangeTaskSampler(
        run_walkthrough_phase=False,
        run_unshuffle_phase=True,
        stage="train",
        scenes_to_task_spec_dicts=OrderedDict({scene: eps}),
        rearrange_env_kwargs={},
        sensors=SensorSuite([]),
        max_steps=500,
        epochs=1,
        seed=0,
    )
    return sampler, sampler.next_task()


def _hold_at_snap_pose(env, name: str) -> Dict[str, Any]:
    """Pick `name` up and stand at the first pose from which its goal can be interacted with."""
    goal = env.obj_name_to_walkthrough_start_pose[name]
    obj = _by_name(env.controller, name)
    assert env.controller.step("PickupObject", objectId=obj["objectId"], forceAction=True).metadata[
        "lastActionSuccess"
    ]
    pose = env.interactable_cache.get(env.scene, goal, env.controller)[0]
    ev = env.controller.step(
        "TeleportFull",
        x=pose["x"],
        y=pose["y"],
        z=pose["z"],
        rotation={"x": 0, "y": pose["rotation"], "z": 0},
        horizon=pose["horizon"],
        standing=pose["standing"],
        forceAction=True,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    return goal


@needs_train
def test_official_snap_next_to_a_television_succeeds():
    """Train FloorPlan217 #34: the RemoteControl's goal touches the Television's box by 1 cm; the
    snap used to be refused ("colliding with Television") at every interaction pose."""
    sampler, task = _task("FloorPlan217", 34)
    try:
        env = task.unshuffle_env
        _hold_at_snap_pose(env, "RemoteControl_0fb7c39a")
        assert env.drop_held_object_with_snap() is True
    finally:
        sampler.close()


def _expert_success(scene: str, index: int) -> Dict[str, Any]:
    sampler, task = _task(scene, index)
    try:
        while not task.is_done():
            action, _ = task.query_expert()
            task.step(action)
        m = task.metrics()
        return {
            "success": m["unshuffle/success"],
            "reasons": dict(task.greedy_expert.failure_reasons),
        }
    finally:
        sampler.close()


@needs_train
@pytest.mark.parametrize("scene, index", [("FloorPlan205", 48), ("FloorPlan212", 12)])
def test_official_snaps_the_expert_used_to_miss(scene, index):
    """FloorPlan205 #48: the CreditCard snapped into its Box was lifted 1.5 cm by our settle (IoU 0).
    FloorPlan212 #12: the Pen's goal lies in the Boots, which our settle lifted 1.2 cm higher in
    the goal state than in the start state (the data gives both the same pose)."""
    m = _expert_success(scene, index)
    assert m["success"] == 1.0, m["reasons"]


@needs_train
def test_official_snap_onto_an_occupied_goal_still_fails():
    """Same episode, but another object now lies on the remote's goal: THOR refuses that too."""
    sampler, task = _task("FloorPlan217", 34)
    try:
        env = task.unshuffle_env
        goal = _hold_at_snap_pose(env, "RemoteControl_0fb7c39a")
        other = next(
            o
            for o in env.last_event.metadata["objects"]
            if o["pickupable"] and not o["isPickedUp"] and not o["receptacle"]
        )
        ev = env.controller.step(
            "TeleportObject",
            objectId=other["objectId"],
            position=goal["position"],
            rotation=goal["rotation"],
            forceAction=True,
            forceKinematic=True,
        )
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        assert env.drop_held_object_with_snap() is False
    finally:
        sampler.close()
