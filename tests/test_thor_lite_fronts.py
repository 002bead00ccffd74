"""Drawn shapes of furniture parts: drawer fronts a furniture box would cover (thor_lite/fronts.py), desk lamps."""

from __future__ import annotations

import pytest

from thor_lite.fronts import MAX_RECESS, proud_distances


def test_dresser_drawers_are_drawn_out_past_the_dresser_face():
    """FloorPlan301's dresser box reaches 9 mm past its eight drawers' fronts (+x): each drawer
    is drawn out just past that face, so its front is what the camera sees there, and a click on
    it (or an ALFRED mask) finds the drawer, not the dresser."""
    from backends import make_controller

    c = make_controller("thor_lite", scene="FloorPlan301")
    try:
        w = c._world
        dresser = w.objects["Dresser|-01.33|+00.01|-00.75"]
        drawers = [
            o
            for o in w.objects.values()
            if o.object_type == "Drawer"
            and (o.aabb[0] >= dresser.aabb[0] - 0.02).all()
            and (o.aabb[1] <= dresser.aabb[1] + 0.02).all()
        ]
        assert len(drawers) == 8
        face = float(dresser.aabb[1][0])
        for d in drawers:
            assert d.front == (1.0, 0.0) and 0.0 < face - float(d.aabb[1][0]) <= MAX_RECESS
            drawn_hi = max(float(p.aabb()[1][0]) for p in d.parts)
            assert face < drawn_hi < face + 0.01, (d.object_id, drawn_hi, face)
        # opened, a drawer is drawn as the open tray (no longer the closed front)
        ev = c.step("OpenObject", objectId=drawers[0].object_id, forceAction=True)
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        assert len(w.objects[drawers[0].object_id].parts) > 1
    finally:
        c.stop()


def test_only_fronts_just_behind_a_furniture_face_are_drawn_out():
    """Kitchen cabinets under counter slabs are no furniture box's drawers: nothing changes."""
    from backends import make_controller

    c = make_controller("thor_lite", scene="FloorPlan1")
    try:
        assert proud_distances(c._world.objects.values()) == {}
    finally:
        c.stop()


def test_a_desk_lamp_is_drawn_as_base_stem_and_shade():
    """Not as its solid box: the space beside its stem, under the shade, is open."""
    from backends import make_controller
    from thor_lite.constants import LAMP_SHADE_BOTTOM

    c = make_controller("thor_lite", scene="FloorPlan326")
    try:
        lamp = next(o for o in c._world.objects.values() if o.object_type == "DeskLamp")
        lo, hi = lamp.aabb
        base, stem, shade = lamp.parts
        for p in lamp.parts:
            plo, phi = p.aabb()
            assert (plo >= lo - 1e-3).all() and (phi <= hi + 1e-3).all()
        assert max(stem.half[0], stem.half[2]) <= 0.012
        assert shade.aabb()[0][1] == pytest.approx(
            lo[1] + LAMP_SHADE_BOTTOM * (hi[1] - lo[1]), abs=1e-3
        )
        assert base.aabb()[1][1] < shade.aabb()[0][1]
    finally:
        c.stop()
