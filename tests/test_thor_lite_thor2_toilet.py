"""THOR 2.1.0 mode draws FloorPlan421-430's oversized Toilet box at bowl-and-tank size
(thor_lite/shapes.py::narrow_toilets), on a real ALFRED trajectory."""

from __future__ import annotations

import numpy as np

from test_thor_lite_thor2_types import _recorded_mask, _replay_to
from thor_lite.shapes import narrow_toilets


def test_real_toilet_paper_on_the_hanger_beside_the_toilet_is_picked(alfred_env):
    """FloorPlan429: the 1.1 m wide Toilet box covered the ToiletPaperHanger and hid the roll
    on it; ALFRED's recorded pickup mask (step 9) found the Toilet."""
    traj = _replay_to(alfred_env, "pick_and_place_simple-ToiletPaper-None-Shelf-429", 9)
    objs = alfred_env.controller._world.objects
    toilet = next(o for o in objs.values() if o.object_type == "Toilet")
    hanger = next(o for o in objs.values() if o.object_type == "ToiletPaperHanger")
    assert toilet.aabb[1][0] < hanger.aabb[0][0]  # drawn beside the hanger, not over it
    assert narrow_toilets(objs)[toilet.object_id].local_box == toilet.local_box  # once only
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 9))
    assert ok and target.startswith("ToiletPaper|"), err


def test_the_401_420_toilet_keeps_its_box(alfred_env):
    """FloorPlan420's Toilet (0.53 m wide) is already bowl-and-tank sized."""
    _replay_to(alfred_env, "pick_and_place_simple-HandTowel-None-Toilet-420", 0)
    objs = alfred_env.controller._world.objects
    toilet = next(o for o in objs.values() if o.object_type == "Toilet")
    lb = toilet.local_box
    assert np.isclose(2 * (np.abs(lb.rot) @ lb.half)[0], 0.53, atol=0.02)  # across the object's x
    assert narrow_toilets(objs)[toilet.object_id] is toilet


def test_a_turned_toilet_is_narrowed_too(alfred_env):
    """FloorPlan422's Toilet stands at yaw 180, its box turned in the object's frame; it was left
    at 1.1 x 1.2 m and covered the plunger beside it (the recorded pickup mask, step 6, found the
    Toilet once the trajectory got the THOR 2.1.0 rules)."""
    traj = _replay_to(alfred_env, "pick_and_place_simple-Plunger-None-Cabinet-422", 6)
    objs = alfred_env.controller._world.objects
    toilet = next(o for o in objs.values() if o.object_type == "Toilet")
    assert abs(toilet.rotation[1] - 180) < 1
    lo, hi = toilet.aabb
    assert hi[0] - lo[0] < 0.6 and hi[2] - lo[2] < 1.0
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 6))
    assert ok and target.startswith("Plunger|"), err
