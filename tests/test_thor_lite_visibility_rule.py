"""THOR's "Collider" visibility scheme: range is judged on the object's boxes, not its points.

ai2thor finds candidates with Physics.OverlapCapsule(radius = visibilityDistance) around the
agent's axis (raised by that distance), then casts rays to each candidate's visibility points
with no further distance limit. So a long counter is visible from its near end, and an object
with every box out of range is not, however much of it is on screen.
"""
from __future__ import annotations

import numpy as np


def _at(c, x, z, rot, horizon=0.0):
    return c.step("TeleportFull", x=x, y=0.9009992, z=z, rotation=rot, horizon=horizon, standing=True)


def test_long_counter_visible_from_its_near_end(fresh):
    w = fresh._world
    ev = _at(fresh, -0.75, 1.75, 180)
    assert ev.metadata["lastActionSuccess"]
    oid = "CounterTop|-01.87|+00.95|-01.21"
    o = w.objects[oid]
    a = w.agent
    assert np.hypot(o.vis_points[:, 0] - a.x, o.vis_points[:, 2] - a.z).min() > 1.5  # every point out of range
    meta = next(m for m in ev.metadata["objects"] if m["objectId"] == oid)
    assert meta["visible"]


def test_nothing_beyond_range_is_visible(fresh):
    w = fresh._world
    ev = _at(fresh, -0.75, 1.75, 180)
    occ = w.occluders()
    near = w._parts_near_axis(occ, w.agent, w.visibility_distance)
    in_range = {occ.ids[k] for k in np.unique(occ.owners[near])}
    visible = {m["objectId"] for m in ev.metadata["objects"] if m["visible"]}
    assert visible and visible <= in_range
    assert len(in_range - visible) > 0  # range alone does not make an object visible
