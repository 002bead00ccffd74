"""THOR 2.1.0's type for a table that ALFRED's receptacle list names under another type
(thor_lite/thor2_renames.py), in THOR 2.1.0 mode only."""

from __future__ import annotations

import numpy as np
import pytest

from thor_lite.geometry import Box
from thor_lite.objects import SimObject
from thor_lite.scene_data import layout_open_poses
from thor_lite.thor2_renames import RENAME_SPOT, positional_renames, renamed


def _table(t: str, x: float, z: float, parents=()) -> SimObject:
    oid = f"{t}|{x:+06.2f}|+00.00|{z:+06.2f}"
    box = Box(np.array([0.0, 0.4, 0.0]), np.array([0.4, 0.4, 0.3]), np.eye(3))
    return SimObject(
        object_id=oid,
        name=f"{t}_1",
        object_type=t,
        asset_id=t,
        position=(x, 0.0, z),
        rotation=(0.0, 0.0, 0.0),
        local_box=box,
        has_oobb=True,
        flags={"receptacle": True},
        parents=tuple(parents),
    )


def test_a_table_named_by_a_2_1_0_id_of_another_type_takes_that_type():
    desk, other = _table("Desk", 0.24, -2.36), _table("SideTable", 1.48, -1.48)
    assert positional_renames([desk, other], ["SideTable|+00.25|00.00|-02.38"]) == {
        desk.object_id: "SideTable"
    }


def test_nothing_is_renamed_where_the_2_1_0_type_still_stands():
    desk, side = (
        _table("Desk", 0.24, -2.36),
        _table("SideTable", 0.30, -2.40),
    )  # a side table 7 cm away
    assert positional_renames([desk, side], ["SideTable|+00.25|00.00|-02.38"]) == {}


def test_far_ids_non_tables_and_ambiguous_spots_rename_nothing():
    desk = _table("Desk", 0.24, -2.36)
    assert (
        positional_renames([desk], [f"SideTable|+00.24|00.00|{-2.36 + 2 * RENAME_SPOT:+06.2f}"])
        == {}
    )
    assert positional_renames([desk], ["Drawer|+00.24|+00.00|-02.36"]) == {}
    twin = _table("DiningTable", 0.25, -2.37)
    assert positional_renames([desk, twin], ["SideTable|+00.24|00.00|-02.36"]) == {}


def test_renamed_objects_keep_their_shape_and_their_contents_follow():
    desk = _table("Desk", 0.24, -2.36)
    bowl = desk.with_changes(
        object_id="Bowl|+00.20|+00.80|-02.30",
        name="Bowl_1",
        object_type="Bowl",
        parents=(desk.object_id,),
    )
    out = renamed({desk.object_id: desk, bowl.object_id: bowl}, {desk.object_id: "SideTable"})
    new = out["SideTable|+00.24|+00.00|-02.36"]
    assert new.object_type == "SideTable" and new.shape_type == "Desk"
    assert out[bowl.object_id].parents == (new.object_id,)


@pytest.mark.skipif(
    not layout_open_poses("FloorPlan307"), reason="ALFRED layouts (alfworld) absent"
)
def test_floorplan307_desk_is_a_side_table_in_thor2_mode_only():
    """2.1.0's `SideTable|+00.25|00.00|-02.38` stands where today's `Desk|+00.24|+00.00|-02.36`
    does (the scene holds both types, so no type-level rename applies)."""
    from backends import make_controller

    c = make_controller(
        "thor_lite", layout_clears_moveables=True, scene="FloorPlan307", width=64, height=64
    )
    try:
        ids = {o["objectId"] for o in c.last_event.metadata["objects"]}
        assert "Desk|+00.24|+00.00|-02.36" in ids
        c.step("SetObjectPoses", objectPoses=[], skipMoveable=True, thor2Poses=True)
        ids = {o["objectId"] for o in c.last_event.metadata["objects"]}
        assert "SideTable|+00.24|+00.00|-02.36" in ids and "Desk|+00.24|+00.00|-02.36" not in ids
        assert any(i.startswith("Desk|") for i in ids)  # the other desk keeps its name
    finally:
        c.stop()
