"""THOR 2.1.0's names for furniture that later builds renamed (ALFRED ran on 2.1.0).

ALFRED's goals name receptacles by type substring of their objectId ("Dresser", "Cart",
"DiningTable"), while today's scene metadata calls the same pieces SideTable or Desk. Which
types a 2.1.0 scene held is recorded beside ALFRED's layouts (`FloorPlanN-objects.json`):
where today's type is absent from that list and exactly one 2.1.0 type it may have been is
present there and absent here, the objects take the 2.1.0 type (and objectId prefix).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Tuple

from .objects import SimObject

#: today's type -> the THOR 2.1.0 types it replaced (seen in ALFRED's recorded objectIds at
#: the same positions: Cart/Dresser/Shelf -> SideTable, DiningTable -> Desk)
RENAMED_FROM: Dict[str, Tuple[str, ...]] = {
    "SideTable": ("Dresser", "Cart", "Shelf", "CoffeeTable"),
    "Desk": ("DiningTable",),
}


def thor2_renames(present: FrozenSet[str], thor2_types: FrozenSet[str]) -> Dict[str, str]:
    """today's type -> 2.1.0 type, for the unambiguous renames of one scene."""
    out: Dict[str, str] = {}
    for new, olds in RENAMED_FROM.items():
        if new not in present or new in thor2_types:
            continue
        cands = [o for o in olds if o in thor2_types and o not in present]
        if len(cands) == 1:
            out[new] = cands[0]
    return out


def with_thor2_types(objs: List[SimObject], thor2_types: FrozenSet[str]) -> List[SimObject]:
    """The objects with renamed types and ids (drawn as today's asset: `shape_type`); parent
    links follow the new ids."""
    renames = thor2_renames(frozenset(o.object_type for o in objs), thor2_types)
    if not renames:
        return objs
    ids = {
        o.object_id: renames[o.object_type] + o.object_id[len(o.object_type) :]
        for o in objs
        if o.object_type in renames and o.object_id.startswith(o.object_type)
    }
    out = []
    for o in objs:
        changes = {"parents": tuple(ids.get(p, p) for p in o.parents)}
        if o.object_id in ids:
            changes.update(
                object_id=ids[o.object_id],
                object_type=renames[o.object_type],
                shape_type=o.object_type,
            )
        out.append(o.with_changes(**changes))
    return out


#: assets that today lie flat rolled 90 degrees about their length (local z) in every iTHOR
#: scene, where THOR 2.1.0 laid them flat at no roll with their length along local x (a real
#: ALFRED mask of the knife under a loaf in FloorPlan15 runs along x at yaw 180)
ROLLED_FLAT_TYPES: FrozenSet[str] = frozenset({"Knife", "ButterKnife"})


#: assets whose length today runs along local z where THOR 2.1.0's ran along local x (no roll
#: either way): posed level, they lie along yaw + 90. Measured on the real ALFRED masks of
#: their pickups (the mask's long axis against ours): 3 of 3 fork, 2 of 2 elongated ladle, 1
#: spatula and all 14 pen masks of posed objects ran along the turned object, across ours
#: (FloorPlan8's ladle: the mask found the counter beside it). Turning pens gains two
#: trajectories; FloorPlan309's, whose 3-row mask then lay 3 px below the pen, came back when
#: posed objects stopped being lifted onto furniture tops (actions/posed_surfaces.py).
#: Pencils (9 of 11 masks across) are left as posed: turning them loses two shelf pickups whose
#: masks are 1-pixel slivers.
LENGTH_ALONG_X_TYPES: FrozenSet[str] = frozenset({"Fork", "Ladle", "Spatula", "Pen"})


def _level(angle: float) -> bool:
    return abs((angle + 180.0) % 360.0 - 180.0) < 5.0


def thor2_pose_rotation(
    object_type: str,
    current: Tuple[float, float, float],
    pose: Tuple[float, float, float],
    thor2: bool = False,
) -> Tuple[float, float, float]:
    """The rotation today's asset needs to lie as a THOR 2.1.0 pose left it: for a rolled-flat
    type posed with no roll or pitch, today's roll and the pose's yaw + 90; for a type whose
    length turned from local x to z, the pose's yaw + 90 (only for a trajectory recorded in
    THOR 2.1.0, `thor2`: data generated here poses today's asset); else the pose."""
    rolled = _level(current[2] - 90.0) or _level(current[2] + 90.0)
    if (
        object_type in ROLLED_FLAT_TYPES
        and _level(current[0])
        and rolled
        and _level(pose[0])
        and _level(pose[2])
    ):
        return (float(pose[0]), float(pose[1]) + 90.0, float(current[2]))
    if thor2 and object_type in LENGTH_ALONG_X_TYPES and _level(pose[0]) and _level(pose[2]):
        return (float(pose[0]), float(pose[1]) + 90.0, float(pose[2]))
    return pose
