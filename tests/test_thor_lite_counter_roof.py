"""An L-shaped or island counter is one box in THOR's metadata; its slab must not roof the floor
the agent walks, in rearrangement as in ALFRED's layout mode.

Real case: FloorPlan8's `CounterTop|+01.17|+00.95|-00.65` spans x -0.86..1.51, z -2.06..0.71
over the floor in front of the lower cabinets at x 0.83..1.33. Its slab at 0.9 m roofed every
standing and crouching camera there, so those cabinets and drawers, and anything on the floor
near them, had no interactable pose (official 2023 train FloorPlan8: 16 % success).
"""

from __future__ import annotations

import numpy as np
import pytest

from thor_lite.constants import LAYOUT_CELL_SIZE
from thor_lite.controller import Controller
from thor_lite.scene_data import layouts_dir

COUNTER = "CounterTop|+01.17|+00.95|-00.65"
CABINETS = (
    "Cabinet|+00.86|+00.40|-01.37",
    "Cabinet|+00.86|+00.40|-00.55",
    "Drawer|+00.86|+00.75|-00.70",
)


@pytest.fixture(scope="module")
def kitchen():
    if layouts_dir() is None:
        pytest.skip("no recorded iTHOR layouts (alfworld package) installed")
    ctrl = Controller(scene="FloorPlan8", width=96, height=96)
    yield ctrl
    ctrl.stop()


def _covers(parts, x: float, z: float) -> bool:
    return any(
        np.all(np.abs(b.rot.T @ (np.array([x, b.center[1], z]) - b.center)) <= b.half)
        for b in parts
    )


def test_counter_slab_leaves_the_walked_floor_open(kitchen):
    w = kitchen._world
    parts = w.objects[COUNTER].parts
    lo, hi = w.objects[COUNTER].aabb
    g = LAYOUT_CELL_SIZE
    under = [(i * g, k * g) for i, k in w.layout if lo[0] < i * g < hi[0] and lo[2] < k * g < hi[2]]
    assert under, "the counter's box should span layout floor (the real case)"
    assert not any(_covers(parts, x, z) for x, z in under)
    assert _covers(parts, 1.1, -1.1)  # the top over the cabinets is still drawn


@pytest.mark.parametrize("horizon", [30, 60])
def test_cabinets_under_the_counter_seen_crouching_in_front(kitchen, horizon):
    """Crouched on the floor in front of them, facing them: the slab no longer hides them."""
    kitchen.reset("FloorPlan8")
    y = kitchen.last_event.metadata["agent"]["position"]["y"]
    ev = kitchen.step(
        "TeleportFull", x=0.5, y=y, z=-1.0, rotation=90, horizon=horizon, standing=False
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    for object_id in CABINETS:
        o = ev.get_object(object_id)
        assert o["visible"] and o["isInteractable"], object_id
    ev = kitchen.step("OpenObject", objectId=CABINETS[0])
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
