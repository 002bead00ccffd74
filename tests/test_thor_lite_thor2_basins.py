"""THOR 2.1.0 mode: forced PutObject into a basin keeps the held yaw (physics._passes) and a
SinkBasin's side walls are low (shapes.bowl_basins), on real ALFRED trajectories."""

from __future__ import annotations

import numpy as np

from test_thor_lite_thor2_types import _recorded_mask, _replay_to
from thor_lite.constants import BASIN_WALL_HEIGHT_THOR2


def _drawn_top(obj) -> float:
    """The top of the highest part drawn for `obj` (a basin's walls)."""
    return max(float(q.aabb()[1][1]) for q in obj.parts)


def test_soap_bar_put_into_a_sink_basin_lies_where_its_pickup_mask_is(alfred_env):
    """FloorPlan428: ALFRED's soap bar lay 4 cm from the basin box's near side; our walls up to
    the rim hid that spot, the camera-seen rule laid it 6 cm further in, and the recorded
    pickup mask (step 18) found the SinkBasin."""
    traj = _replay_to(alfred_env, "pick_clean_then_place_in_recep-SoapBar-None-CounterTop-428", 18)
    w = alfred_env.controller._world
    basin = next(o for o in w.objects.values() if o.object_type == "SinkBasin")
    lo, hi = basin.aabb
    expected = lo[1] + BASIN_WALL_HEIGHT_THOR2 * (hi[1] - lo[1])
    assert np.isclose(_drawn_top(basin), expected, atol=2e-3)
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 18))
    assert ok and target.startswith("SoapBar|"), err


def test_bathtub_basin_keeps_walls_to_its_rim(alfred_env):
    """FloorPlan407's bathtub: its cloth and soap puts need the full walls (lowering them lost
    both trajectories), so only SinkBasins are bowls."""
    _replay_to(alfred_env, "pick_and_place_simple-Cloth-None-BathtubBasin-407", 0)
    tub = next(
        o for o in alfred_env.controller._world.objects.values() if o.object_type == "BathtubBasin"
    )
    assert np.isclose(_drawn_top(tub), tub.aabb[1][1], atol=2e-3)


def test_knife_put_into_a_sink_basin_lies_along_the_view(alfred_env):
    """FloorPlan23: THOR 2.1.0 kept the held (agent's) yaw wherever the knife fitted; at the
    nearest spot only the yaw across the view fitted, and the recorded pickup mask (step 34)
    found the SinkBasin."""
    traj = _replay_to(alfred_env, "pick_clean_then_place_in_recep-Knife-None-DiningTable-23", 34)
    w = alfred_env.controller._world
    knife = next(
        o
        for o in w.objects.values()
        if o.object_type == "Knife" and any(p.endswith("|SinkBasin") for p in o.parents)
    )
    yaw = np.radians(w.agent.yaw)
    view = np.array([np.sin(yaw), 0.0, np.cos(yaw)])
    box = knife.box
    assert abs(float(box.rot[:, int(np.argmax(box.half))] @ view)) > 0.9  # lies along the view
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 34))
    assert ok and target == knife.object_id, err
