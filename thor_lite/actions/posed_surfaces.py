"""Furniture surfaces that SetObjectPoses learns from the poses it is given (ALFRED's THOR 2.1.0
poses), and the objects that must come back down when such a surface is lowered."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Set, Tuple

import numpy as np

from ..constants import IN_RECEPTACLES
from .. import physics
from ..world import World


def expose_resting_surfaces(w: World, ids: List[str], floor_shows_none: bool = False) -> Set[str]:
    """Objects posed inside a furniture box (a phone on an armchair seat, below the box's top)
    show where that furniture's surface is, as the scene's own contents do at load
    (`World._init_surfaces`): draw and rest on it there, so they are not hidden. THOR 2.1.0's
    poses win over a surface learned from today's scene when they lie lower (a sofa seat
    2.1.0 drew 7 cm lower hid the card ALFRED recorded on it). With `floor_shows_none` (a
    THOR 2.1.0 trajectory's poses) something that also rests on the Floor (a plunger beside a
    toilet, inside its oversized box) shows no furniture surface: it lowered FloorPlan428's
    toilet to a floor slab, and its PutObject mask found the wall. Returns the furniture whose
    surface it set."""
    bottoms: Dict[str, List[float]] = {}
    for oid in ids:
        o = w.objects[oid]
        on_floor = any(w.objects[p].object_type == "Floor" for p in o.parents if p in w.objects)
        if o.parents and not (floor_shows_none and on_floor):
            bottoms.setdefault(o.parents[0], []).append(float(o.aabb[0][1]))
    lowered: Set[str] = set()
    for rid, ys in sorted(bottoms.items()):
        r = w.objects.get(rid)
        if r is None or r.pickupable or r.object_type in IN_RECEPTACLES or r.object_type == "Floor":
            continue
        lo, hi = r.aabb
        ys = [y for y in ys if lo[1] - 0.01 <= y <= hi[1] - 0.03]
        if not ys:
            continue
        y = float(np.median(ys))
        if r.surface_offset is None or y < hi[1] - r.surface_offset - 0.01:
            w.update(r.object_id, surface_offset=float(hi[1] - y))
            lowered.add(rid)
    return lowered


def redrop_on_lowered(w: World, posed: Sequence[Tuple[str, Any]], lowered: Set[str]) -> List[str]:
    """Objects that settling lifted onto a furniture top which the poses then lowered go back to
    their posed height (and settle on the lowered top): THOR 2.1.0's dining table in FloorPlan16
    stood 6.6 cm lower than today's box, its bowl and butter knives rest there, and the knife
    posed beside them, lifted 4.6 cm onto today's top before the top came down, floated above
    it and its PickupObject mask found the table. Returns the ids moved (lowest first)."""
    moved: List[str] = []
    for oid, pos in sorted(posed, key=lambda e: e[1][1]):
        o = w.objects[oid]
        if not o.parents or o.parents[0] not in lowered or o.is_picked_up:
            continue
        if o.position[1] - float(pos[1]) <= 1e-6:
            continue  # not lifted
        physics.move_with_contents(w, oid, (o.position[0], float(pos[1]), o.position[2]), o.rotation)
        physics.settle(w, oid)
        moved.append(oid)
    return moved
