"""THOR 2.1.0 mode draws round produce round (thor_lite/objects.py::_round_parts) and brings
posed objects back down onto a furniture top the poses lowered
(thor_lite/actions/posed_surfaces.py::redrop_on_lowered), on real ALFRED trajectories."""

from __future__ import annotations

import numpy as np

from test_thor_lite_thor2_types import _recorded_mask, _replay_to
from thor_lite.constants import ROUND_CORE
from thor_lite.geometry import Box, euler_to_matrix
from thor_lite.objects import _round_parts


def _inside(box: Box, p: np.ndarray) -> bool:
    return bool(np.all(np.abs(box.rot.T @ (p - box.center)) <= box.half + 1e-9))


def test_round_parts_cut_the_corners_and_keep_the_faces():
    """Each face centre is still drawn (the produce rests and is seen at its full extent), the
    box corners and edges are not (a sphere's outline runs inside them)."""
    b = Box(
        np.array([1.0, 0.9, -0.5]), np.array([0.1, 0.08, 0.09]), euler_to_matrix((0.0, 30.0, 0.0))
    )
    parts = _round_parts(b)
    assert len(parts) == 3
    for axis in range(3):
        for sign in (-1.0, 1.0):
            face = b.center + sign * b.rot[:, axis] * b.half[axis]
            assert any(_inside(p, face) for p in parts)
    corner = b.center + b.rot @ (b.half * 0.99)
    edge = b.center + b.rot @ (b.half * np.array([0.99, 0.99, 0.0]))
    assert not any(_inside(p, corner) or _inside(p, edge) for p in parts)
    assert not any(
        _inside(p, b.center + b.rot @ (b.half * np.array([0.99, ROUND_CORE + 0.02, 0.0])))
        for p in parts
    )


def test_real_put_into_a_basin_around_a_lettuce_finds_the_basin(alfred_env):
    """FloorPlan21: ALFRED's PutObject mask over the sink (step 32) runs around the round
    lettuce posed in its basin; the lettuce's solid box took 3292 of its 8238 pixels and won the
    IoU ranking over the SinkBasin ("This target object is NOT a receptacle!")."""
    from alfred_task.data.masks import decompress_mask

    traj = _replay_to(
        alfred_env, "pick_and_place_with_movable_recep-PotatoSliced-Pot-DiningTable-21", 32
    )
    lettuces = [
        o for o in alfred_env.controller._world.objects.values() if o.object_type == "Lettuce"
    ]
    assert lettuces and all(len(o.parts) == 3 for o in lettuces)
    la = traj["plan"]["low_actions"][32]
    assert la["discrete_action"]["action"] == "PutObject"
    mask = np.asarray(decompress_mask(la["discrete_action"]["args"]["mask"]), bool)
    ok, _ev, target, err, _ = alfred_env.va_interact("PutObject", mask)
    assert ok and target.endswith("|SinkBasin"), (target, err)


def test_todays_scenes_keep_solid_produce():
    """Outside THOR 2.1.0 mode (rearrangement, data generated on thor_lite) produce stays a box."""
    from thor_lite.controller import Controller

    c = Controller(scene="FloorPlan28")
    try:
        lettuce = next(o for o in c._world.objects.values() if o.object_type == "Lettuce")
        assert lettuce.parts == (lettuce.box,)
    finally:
        c.stop()


def test_real_knife_lifted_onto_a_table_comes_back_down(alfred_env):
    """FloorPlan16: THOR 2.1.0's dining table top stood 6.6 cm below today's box (the posed bowl
    and butter knives rest there). The knife posed 2 cm above that top was lifted 4.6 cm onto
    today's box before the poses lowered the table, and floated above it; it lies at its pose."""
    _replay_to(alfred_env, "pick_cool_then_place_in_recep-LettuceSliced-None-DiningTable-16", 0)
    objs = alfred_env.controller._world.objects
    knife = next(
        o
        for o in objs.values()
        if o.object_type == "Knife" and np.hypot(o.position[0] - 2.525, o.position[2] - 3.97) < 0.01
    )
    table = next(
        o
        for o in objs.values()
        if o.object_type == "DiningTable"
        and o.aabb[0][0] < 2.5 < o.aabb[1][0]
        and o.aabb[0][2] < 3.97 < o.aabb[1][2]
    )
    top = table.aabb[1][1] - table.surface_offset
    assert abs(knife.position[1] - 0.7898) < 0.005  # ALFRED's pose, not today's top
    assert 0.0 <= knife.aabb[0][1] - top < 0.03 and top < 0.77


def test_real_phone_on_a_shelf_rests_at_its_pose_and_is_picked(alfred_env):
    """FloorPlan302: the phone posed on a shelf 1.2 cm below today's board top was lifted onto
    it, and only that lifted bottom showed the shelf's surface, so the shelf kept its board;
    its 2-row pickup mask (step 17) lay 2 px below the phone and found the Shelf. The posed
    bottoms (before settling) set the surface; the phone lies at its pose on the lowered board."""
    traj = _replay_to(alfred_env, "pick_two_obj_and_place-CellPhone-None-Safe-302", 17)
    phone = next(
        o
        for o in alfred_env.controller._world.objects.values()
        if o.object_type == "CellPhone"
        and np.hypot(o.position[0] + 1.231, o.position[2] + 1.607) < 0.01
    )
    assert abs(phone.aabb[0][1] - 1.4611) < 0.002
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 17))
    assert ok and target == phone.object_id, (target, err)


def test_real_pen_on_a_side_table_is_picked(alfred_env):
    """FloorPlan309: the same lift left a pen 3 px above its 3-row pickup mask (step 18), which
    found the SideTable."""
    traj = _replay_to(alfred_env, "pick_and_place_with_movable_recep-Pen-Mug-Desk-309", 18)
    ok, _ev, target, err, _ = alfred_env.va_interact("PickupObject", _recorded_mask(traj, 18))
    assert ok and target.startswith("Pen|"), (target, err)
