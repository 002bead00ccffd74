"""Build a `World` from a scene record: the passes that fit THOR's metadata boxes to its
meshes and settle what rests on them, run once per scene (the Controller caches the result).

`World` only holds state and answers queries; everything that reshapes a fresh scene lives
here, above physics, shapes and visibility, so none of them is imported by world.py.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from .constants import (
    CHAIR_SEAT_BAND,
    GRID_SIZE,
    IN_RECEPTACLES,
    SEAT_HEIGHT_FRACTION,
    SEAT_TYPES,
    VISIBILITY_DISTANCE,
)
from .fidelity import THOR_5, FidelityProfile
from .fronts import proud_distances
from .objects import SimObject
from .open_poses import free_space_fronts
from .physics import settle
from .scene_data import SceneRecord, layout_object_types
from .shapes import (
    cut_counter_holes,
    cut_table_holes,
    lower_basin_cabinets,
    open_enclosing_furniture,
    open_mesh_shapes,
    window_panes,
    windows_behind_hangings,
)
from .thor2_types import with_thor2_types
from .visibility import object_visibility
from .world import World


def build_world(
    scene: SceneRecord,
    grid_size: float = GRID_SIZE,
    visibility_distance: float = VISIBILITY_DISTANCE,
    fov: float = 90.0,
    width: int = 300,
    height: int = 300,
    layout_dilation: Optional[int] = None,
    profile: FidelityProfile = THOR_5,
) -> World:
    """The scene's `World`, shaped and settled, the agent at its default start.
    `layout_dilation` and `profile`: see `World`."""
    objs = [SimObject.from_record(r) for r in scene.objects]
    thor2_types = layout_object_types(scene.name) if profile.layout_clears_moveables else None
    if thor2_types:  # ALFRED's THOR 2.1.0 scenes: its names for renamed furniture
        objs = with_thor2_types(objs, thor2_types)
    w = World(
        scene.name,
        objs,
        object_visibility,
        grid_size=grid_size,
        visibility_distance=visibility_distance,
        fov=fov,
        width=width,
        height=height,
        layout_dilation=layout_dilation,
        profile=profile,
    )
    init_openable_fronts(w)
    init_fixed_ends(w)
    for oid, d in proud_distances(w.objects.values()).items():
        w.objects[oid] = w.objects[oid].with_changes(proud=d)
    init_surfaces(w)
    cut_counter_holes(w)
    lower_basin_cabinets(w)
    settle_all(w)
    cut_table_holes(w)
    open_enclosing_furniture(w)
    open_mesh_shapes(w)
    window_panes(w)
    windows_behind_hangings(w)
    w.record_scene_poses()
    w.start_agent()
    return w


def init_openable_fronts(w: World) -> None:
    """Pick the door side of each openable: the face looking into the most free space."""
    for oid, front in free_space_fronts(w.objects.values(), w.free_cells(), w.grid_size).items():
        w.objects[oid] = w.objects[oid].with_changes(front=front)


def init_fixed_ends(w: World) -> None:
    """A shower curtain is bunched, and a shower door hinged, at the end of its box nearer the
    room's boundary (the wall it hangs from): it spreads or swings towards the room (no prefab
    records the side; `articulation` reads it as `hinge_high`)."""
    for oid, o in list(w.objects.items()):
        if o.object_type not in ("ShowerCurtain", "ShowerDoor") or not o.flags.get("openable"):
            continue
        lo, hi = o.aabb
        fx, fz = o.front
        if o.object_type == "ShowerCurtain":
            k = 0 if hi[0] - lo[0] >= hi[2] - lo[2] else 2
        else:
            k = 2 if abs(fx) > abs(fz) else 0
        high = w.room_hi[k] - hi[k] < lo[k] - w.room_lo[k]
        w.objects[oid] = o.with_changes(hinge_high=bool(high))


def init_surfaces(w: World) -> None:
    """Resting height on each receptacle, learned from where THOR put its contents."""
    bottoms: Dict[str, List[float]] = {}
    for o in w.objects.values():
        if o.parents:
            bottoms.setdefault(o.parents[-1] if len(o.parents) > 1 else o.parents[0], []).append(
                float(o.aabb[0][1])
            )
    for rid, ys in bottoms.items():
        r = w.objects.get(rid)
        if (
            r is None
            or (r.object_type in IN_RECEPTACLES and r.object_type != "Fridge")
            or r.object_type == "Floor"
        ):
            continue
        lo, hi = r.aabb
        y = float(np.median(ys))
        if lo[1] - 0.01 <= y <= hi[1] - 0.03:
            w.objects[rid] = r.with_changes(surface_offset=float(hi[1] - y))
    if not w.profile.layout_clears_moveables:
        default_seats(w)


def default_seats(w: World) -> None:
    """A seat on which the scene puts nothing gets a height an episode's objects rest above:
    a sofa or armchair THOR's typical seat height (SEAT_HEIGHT_FRACTION), a chair the lower end
    of THOR's chair seats (CHAIR_SEAT_BAND[0]; drawn as a thin slab there instead of a slab
    through the whole band, which held the cards and remotes THOR rests at 0.39-0.42 of the
    chair's height). Drawn and rested on there, so a book on the seat is not inside a box
    drawn up to the backrest. Today's scenes only: in THOR 2.1.0 mode the seats are learned
    from the poses an episode sets (`actions.posed_surfaces`)."""
    for oid, o in list(w.objects.items()):
        if o.surface_offset is not None or o.box.upright() is None:
            continue
        if o.object_type in SEAT_TYPES:
            fraction = SEAT_HEIGHT_FRACTION
        elif (o.shape_type or o.object_type) == "Chair":
            fraction = CHAIR_SEAT_BAND[0]
        else:
            continue
        lo, hi = o.aabb
        w.objects[oid] = o.with_changes(surface_offset=float((1.0 - fraction) * (hi[1] - lo[1])))


def settle_all(w: World) -> None:
    """Settle every pickupable and moveable object, lowest first, so supports settle before
    their loads; the settled scene is version 0."""
    for oid, o in sorted(w.objects.items(), key=lambda kv: kv[1].aabb[0][1]):
        if o.pickupable or o.moveable:  # lowest first, so supports settle before their loads
            settle(w, oid)
    w.version = 0
