"""The rules thor_lite applies to a trajectory recorded in THOR 2.1.0 (ALFRED's).

SetObjectPoses' `thor2Poses` flag (set by `AlfredEnv.init_episode` through
`backends.thor2_pose_kwargs` when a recorded objectId is not one of today's) calls
`use_thor2_rules` before posing. Data generated on thor_lite names today's ids, so it keeps the
rules it was made with and `data/alfred_lite` regenerates byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .constants import AGENT_RADIUS, LAYOUT_CELL_SIZE
from .fidelity import THOR_2_1_0
from .shapes import bowl_basins, narrow_toilets, open_counters_over_tables, round_produce
from .fronts import proud_distances
from .furniture_sides import with_furniture_sides
from .open_poses import hinge_sides, pose_fronts
from .scene_data import layout_open_poses
from .thor2_renames import positional_renames, renamed

if TYPE_CHECKING:
    from .world import World


def use_thor2_rules(w: "World") -> None:
    """The world takes the `fidelity.THOR_2_1_0` profile and its shapes. In layout mode:
    cells beside furniture join the room (`furniture_sides`), moveable furniture a layout cell
    comes within MOVEABLE_LAYOUT_REACH of blocks nothing and the body may overlap a box by
    THOR2_BOX_OVERLAP off the layout; openables
    take fronts and door hinges from ALFRED's recorded opening poses (`open_poses`); held
    objects are drawn hanging from the hand as THOR 2.1.0 gripped them (`world.drawn_held_box`);
    PutObject on a Sink/Bathtub fixture puts into its *Basin child (`basin_child_for_put`); a
    visibility ray stops at the first box it enters (`World.visibility`), as THOR's raycast;
    an oversized Toilet box is drawn at the bowl-and-tank size (`shapes.narrow_toilets`); a
    counter slab is open over a table standing inside its box (`open_counters_over_tables`); a
    table that a 2.1.0 receptacle id names under another type takes it (`thor2_renames`); sink
    basins have low side walls (`shapes.bowl_basins`); round produce is drawn round
    (`shapes.round_produce`)."""
    if w.profile.layout_clears_moveables:
        w.profile = THOR_2_1_0
        w.clear_cache()
        _add_furniture_sides(w)
    else:
        w.profile = replace(w.profile, held_hangs=True, thor2_rules=True, first_hit_visibility=True)
    poses = layout_open_poses(w.scene_name)
    _rename_tables(w, poses)
    objs = dict(w.objects)
    for oid, front in pose_fronts(objs.values(), poses).items():
        objs[oid] = objs[oid].with_changes(front=front, proud=0.0)
    for oid, high in hinge_sides(objs.values(), poses).items():
        objs[oid] = objs[oid].with_changes(hinge_high=high)
    for oid, d in proud_distances(objs.values()).items():
        objs[oid] = objs[oid].with_changes(proud=d)
    w.objects = round_produce(bowl_basins(open_counters_over_tables(narrow_toilets(objs))))
    w.version += 1
    w.clear_cache()


def _add_furniture_sides(w: "World") -> None:
    """Cells beside furniture where the scene stands it join the room (a box the layout cuts,
    an L-shaped counter, stands in the room too)."""
    if w.room_cells is None:
        return
    feet = [f[:3] for f in w.box_footprints() if f[3]]
    w.room_cells = with_furniture_sides(
        w.room_cells,
        feet,
        LAYOUT_CELL_SIZE,
        AGENT_RADIUS,
        max(w.layout_dilation, 0),
        w.room_lo[[0, 2]],
        w.room_hi[[0, 2]],
    )
    w.clear_cache()


def _rename_tables(w: "World", thor2_ids) -> None:
    """Tables that 2.1.0's receptacle ids name under another type take it (`thor2_renames`)."""
    renames = positional_renames(w.objects.values(), thor2_ids)
    if not renames:
        return
    w.objects = renamed(w.objects, renames)
    new = {oid: renames[oid] + oid[len(oid.split("|")[0]) :] for oid in renames}
    w.rename_scene_poses(new)
