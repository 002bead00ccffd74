"""Wall glass never hides anything inside the room (thor_lite.constants.WALL_GLASS_TYPES).

Real case: FloorPlan320's two windows carry THOR metadata AABBs of 2.7 m x 2.7 m (no oriented
box) that span the whole window corner of the bedroom from 0.82 m to 2 m high. Drawn as glass,
they made the Footstool in the middle of the floor, and the Pen, CellPhone and CreditCard on the
furniture, impossible to interact with from any pose; the official 2023 train episodes of that
room lost a third of their objects to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from thor_lite.constants import SEE_THROUGH_TYPES, WALL_GLASS_TYPES
from thor_lite.controller import Controller

from conftest import controller_fixture


bedroom = controller_fixture("FloorPlan320")


def _ids(c, object_type):
    return [o["objectId"] for o in c.last_event.objects_by_type(object_type)]


def test_floorplan320_windows_are_room_sized_boxes(bedroom):
    """The precondition that makes this a real case: the window boxes cover the room's corner."""
    w = bedroom._world
    for wid in _ids(bedroom, "Window"):
        size = 2 * np.abs(w.objects[wid].box.rot) @ w.objects[wid].box.half
        assert size[0] > 2.5 and size[2] > 2.5, (wid, size)


@pytest.mark.parametrize("object_type", ["Footstool", "Pen", "CellPhone", "CreditCard"])
def test_objects_behind_window_boxes_can_be_picked_up(bedroom, object_type):
    c = bedroom
    c.reset("FloorPlan320")
    target = _ids(c, object_type)[-1]
    poses = c.step("GetInteractablePoses", objectId=target).metadata["actionReturn"]
    assert poses, f"no interactable pose for {target}"
    pose = sorted(
        poses,
        key=lambda p: (abs(p["horizon"] - 30), not p["standing"], p["x"], p["z"], p["rotation"]),
    )[0]
    ev = c.step("TeleportFull", **pose)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    seen = ev.get_object(target)
    assert seen["visible"] and seen["isInteractable"]
    ev = c.step("PickupObject", objectId=target)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]


def test_only_wall_glass_stops_occluding():
    """Shower glass stands inside the room: it must still block interaction through it."""
    assert WALL_GLASS_TYPES <= SEE_THROUGH_TYPES
    c = Controller(scene="FloorPlan402", width=96, height=96)
    try:
        occ = c._world.occluders()
        types = np.array([c._world.objects[occ.ids[k]].object_type for k in occ.owners])
        glass = np.isin(types, sorted(SEE_THROUGH_TYPES - WALL_GLASS_TYPES))
        assert glass.any(), "FloorPlan402 should have shower glass"
        assert occ.occludes[glass].all()
        assert not occ.occludes[np.isin(types, sorted(WALL_GLASS_TYPES))].any()
        assert occ.occludes[~np.isin(types, sorted(SEE_THROUGH_TYPES))].all()
    finally:
        c.stop()
