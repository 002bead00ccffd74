"""What an episode rests on a seat, or hangs in a window, is drawn where it is (no ../shared
needed): a sofa whose scene records nothing on it has THOR's typical seat height, not the top of
its backrest; a window holding blinds is drawn behind them. Both were measured on official 2023
val, where a laptop on a sofa and blinds in a window were invisible from every pose
(benchmarks/rearrange_change_visibility.py)."""

from __future__ import annotations

import numpy as np
import pytest

from backends import teleport_kwargs
from thor_lite import Controller, physics
from thor_lite.constants import SEAT_HEIGHT_FRACTION, SEAT_TYPES


def _pixels_from_poses(c: Controller, oid: str, max_poses: int = 10) -> int:
    """How many of the object's first interactable poses show at least one of its pixels."""
    poses = c.step("GetInteractablePoses", objectId=oid).metadata["actionReturn"] or []
    assert poses, oid
    shown = 0
    for p in poses[:max_poses]:
        ev = c.step("TeleportFull", **teleport_kwargs(p))
        m = ev.instance_masks.get(oid)
        shown += m is not None and bool(m.any())
    return shown


@pytest.fixture(scope="module")
def sofa_room():
    c = Controller(scene="FloorPlan221", width=96, height=96, renderInstanceSegmentation=True)
    yield c
    c.stop()


def test_a_bare_sofa_is_drawn_and_rested_on_at_the_seat(sofa_room):
    c = sofa_room
    sofa = next(o for o in c._world.objects.values() if o.object_type == "Sofa")
    lo, hi = sofa.aabb
    seat = lo[1] + SEAT_HEIGHT_FRACTION * (hi[1] - lo[1])
    assert max(p.aabb()[1][1] for p in sofa.parts) == pytest.approx(seat, abs=1e-4)
    assert hi[1] - seat > 0.3  # the backrest the solid box was drawn up to
    laptop = next(o for o in c._world.objects.values() if o.object_type == "Laptop")
    x, _, z = sofa.box.center
    ev = c.step(
        "PlaceObjectAtPoint",
        objectId=laptop.object_id,
        position={"x": float(x), "y": float(seat), "z": float(z)},
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    meta = next(o for o in ev.metadata["objects"] if o["objectId"] == laptop.object_id)
    assert sofa.object_id in meta["parentReceptacles"]
    bottom = meta["axisAlignedBoundingBox"]["center"]["y"] - (
        meta["axisAlignedBoundingBox"]["size"]["y"] / 2
    )
    assert bottom == pytest.approx(seat, abs=0.02)
    assert _pixels_from_poses(c, laptop.object_id) > 0


def test_seats_learned_from_the_scene_are_kept():
    """A seat the scene's own contents show (FloorPlan204's sofa, 0.40 of its height) is not
    replaced by the default."""
    c = Controller(scene="FloorPlan204", width=64, height=64)
    try:
        seats = [o for o in c._world.objects.values() if o.object_type in SEAT_TYPES]
        fractions = [1 - o.surface_offset / (o.aabb[1][1] - o.aabb[0][1]) for o in seats]
        assert seats and all(o.surface_offset is not None for o in seats)
        assert any(abs(f - SEAT_HEIGHT_FRACTION) > 0.01 for f in fractions)
    finally:
        c.stop()


def test_blinds_in_a_window_show_and_the_window_keeps_its_box():
    c = Controller(scene="FloorPlan325", width=96, height=96, renderInstanceSegmentation=True)
    try:
        w = c._world
        blinds = [o for o in w.objects.values() if o.object_type == "Blinds"]
        windows = [o for o in w.objects.values() if o.drawn_to is not None]
        assert blinds and windows
        for win in windows:
            (part,) = win.parts
            k, side, _ = win.drawn_to
            axis = win.box.rot[:, k] * side
            # the drawn pane's room-side face lies behind every blind it holds
            face = float((part.center - win.box.center) @ axis) + part.half[k]
            for b in blinds:
                if np.all(b.aabb[0] >= win.aabb[0] - 0.01) and np.all(
                    b.aabb[1] <= win.aabb[1] + 0.01
                ):
                    corners = np.array([b.aabb[0], b.aabb[1]])
                    assert face <= float(np.min((corners - win.box.center) @ axis)) + 1e-6
        meta = {o["objectId"]: o for o in c.last_event.metadata["objects"]}
        for win in windows:  # metadata is THOR's box, not the drawn pane
            size = meta[win.object_id]["axisAlignedBoundingBox"]["size"]
            lo, hi = win.aabb
            assert [size["x"], size["y"], size["z"]] == pytest.approx(list(hi - lo), abs=1e-3)
        for b in blinds:
            assert _pixels_from_poses(c, b.object_id) > 0
    finally:
        c.stop()


def test_a_bare_chair_has_a_thin_seat_at_the_band_bottom_in_todays_scenes_only():
    """Today's scenes: a chair with nothing recorded on it is a thin seat whose top is the lower
    end of CHAIR_SEAT_BAND (an official episode's card at 0.40 of the chair's height lay inside
    the slab drawn through the whole band); things put on it rest there. ALFRED's THOR 2.1.0
    mode keeps the band slab its recorded masks were checked on."""
    from thor_lite.constants import CHAIR_SEAT_BAND

    for alfred_mode, top_fraction in ((False, CHAIR_SEAT_BAND[0]), (True, CHAIR_SEAT_BAND[1])):
        c = Controller(scene="FloorPlan205", width=64, height=64, layoutClearsMoveables=alfred_mode)
        try:
            chairs = [o for o in c._world.objects.values() if o.object_type == "Chair"]
            assert chairs
            for chair in chairs:
                lo, hi = chair.aabb
                seat = max(chair.parts, key=lambda p: p.aabb()[1][1])
                s_lo, s_hi = seat.aabb()
                # (a chair turned a little off the axes: its box's top and its AABB's differ by < 1 mm)
                assert s_hi[1] == pytest.approx(lo[1] + top_fraction * (hi[1] - lo[1]), abs=2e-3)
                if not alfred_mode:
                    assert (
                        s_hi[1] - s_lo[1] <= 0.045
                    )  # a 4 cm slab, its AABB on a slightly turned chair
                    rest = physics.surface_height(c._world, chair)
                    assert rest == pytest.approx(s_hi[1], abs=2e-3)
        finally:
            c.stop()


def test_a_tv_stand_holding_shelves_is_drawn_open_so_their_contents_show():
    """FloorPlan212's TV stands hold two shelves each inside their boxes (the official train
    episodes rest remotes, pens and statues on them): each stand is drawn as a top on legs, so
    the point just above a lower shelf's board is in the stand's box but in none of its drawn
    parts, and that shelf shows from its interactable poses."""
    c = Controller(scene="FloorPlan212", width=96, height=96, renderInstanceSegmentation=True)
    try:
        w = c._world
        stands = [o for o in w.objects.values() if o.object_type == "TVStand"]
        assert stands and all(o.shape_type == "SideTable" for o in stands)
        for stand in stands:
            lo, hi = stand.aabb
            shelf = min(
                (
                    o
                    for o in w.objects.values()
                    if o.object_type == "Shelf"
                    and np.all(o.aabb[0][[0, 2]] >= lo[[0, 2]] - 0.02)
                    and np.all(o.aabb[1][[0, 2]] <= hi[[0, 2]] + 0.02)
                ),
                key=lambda o: o.aabb[0][1],
            )
            above_board = shelf.box.center.copy()
            above_board[1] = physics.surface_height(w, shelf) + 0.01
            inside = lambda parts: any(  # noqa: E731
                b.contains(above_board[None], margin=0.0).all() for b in parts
            )
            assert inside([stand.box]) and not inside(stand.parts)
            assert _pixels_from_poses(c, shelf.object_id) > 0
    finally:
        c.stop()


def test_a_wall_in_front_of_a_window_has_the_window_cut_out_in_todays_scenes_only():
    """FloorPlan302's recorded -z bound lies 3-6 cm in front of its blinds: a solid wall hid them
    from all 39 interactable poses (7 official train episodes change them). Today's walls have
    the window cut out, so the blinds show and their openness changes pixels; ALFRED's THOR
    2.1.0 mode keeps the solid walls its recorded masks were checked on."""
    from thor_lite.walls import WALL_NAMES, room_boxes

    for alfred_mode in (False, True):
        c = Controller(
            scene="FloorPlan302",
            width=96,
            height=96,
            renderInstanceSegmentation=True,
            layoutClearsMoveables=alfred_mode,
        )
        try:
            w = c._world
            blinds = next(o for o in w.objects.values() if o.object_type == "Blinds")
            assert blinds.aabb[1][2] < w.room_lo[2]  # wholly behind the -z wall's face
            pieces = [i for i, _ in room_boxes(w)]
            assert (pieces.count(WALL_NAMES.index("StandardWallSize|-z")) > 1) != alfred_mode
            poses = c.step("GetInteractablePoses", objectId=blinds.object_id).metadata[
                "actionReturn"
            ]
            changed = 0
            for p in poses[:12]:
                c.step("TeleportFull", **teleport_kwargs(p))
                shut = c.step("OpenObject", objectId=blinds.object_id, openness=0.0)
                drawn = c.step("OpenObject", objectId=blinds.object_id, openness=1.0)
                mask = drawn.instance_masks.get(blinds.object_id)
                if mask is not None:
                    changed += int(((shut.frame != drawn.frame).any(-1) & mask).sum() >= 20)
            assert (changed > 0) != alfred_mode
        finally:
            c.stop()


def test_wall_openings_cover_the_wall_minus_the_holes():
    from thor_lite.walls import subtract_rects

    wall = (0.0, 4.0, 0.0, 3.0)
    holes = [(1.0, 2.0, 0.8, 2.2), (1.5, 3.0, 1.9, 2.5), (3.5, 5.0, -1.0, 1.0), (9, 10, 0, 1)]
    pieces = subtract_rects(wall, holes)
    area = sum((b - a) * (d - c) for a, b, c, d in pieces)
    # the holes' union inside the wall: 1.4 + 0.9 - 0.15 (their overlap) + 0.5
    assert area == pytest.approx(12.0 - 2.65)
    grid = np.stack(np.meshgrid(np.linspace(0.01, 3.99, 120), np.linspace(0.01, 2.99, 90)), -1)
    grid = grid.reshape(-1, 2)

    def inside(rects):
        return np.any(
            [
                (grid[:, 0] > a) & (grid[:, 0] < b) & (grid[:, 1] > c) & (grid[:, 1] < d)
                for a, b, c, d in rects
            ],
            axis=0,
        )

    assert not (inside(pieces) & inside(holes)).any()
    assert (inside(pieces) | inside(holes)).all()
    assert subtract_rects(wall, []) == [wall]
