"""Furniture surfaces that SetObjectPoses learns from the poses it is given (ALFRED's THOR 2.1.0
poses), and the objects that must come back down when such a surface is lowered."""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..constants import IN_RECEPTACLES
from .. import physics
from ..world import World

#: an object rests on a surface when its bottom is this close to it (m)
REST_TOLERANCE = 0.01


class Lowered(NamedTuple):
    """A furniture surface the poses lowered: its previous offset and the objects that set it."""

    previous: Optional[float]
    setters: Tuple[str, ...]


def expose_resting_surfaces(
    w: World,
    ids: List[str],
    floor_shows_none: bool = False,
    bottoms: Optional[Dict[str, float]] = None,
) -> Dict[str, Lowered]:
    """Objects posed inside a furniture box (a phone on an armchair seat, below the box's top)
    show where that furniture's surface is, as the scene's own contents do at load
    (`World._init_surfaces`): draw and rest on it there, so they are not hidden. THOR 2.1.0's
    poses win over a surface learned from today's scene when they lie lower (a sofa seat
    2.1.0 drew 7 cm lower hid the card ALFRED recorded on it). With `floor_shows_none` (a
    THOR 2.1.0 trajectory's poses) something that also rests on the Floor (a plunger beside a
    toilet, inside its oversized box) shows no furniture surface: it lowered FloorPlan428's
    toilet to a floor slab, and its PutObject mask found the wall. `bottoms` (a THOR 2.1.0
    trajectory's poses): each object's bottom as posed, before settling lifted it. Returns the
    furniture whose surface it set: its previous offset and the objects that set it."""
    found: Dict[str, List[Tuple[float, str]]] = {}
    for oid in ids:
        o = w.objects[oid]
        on_floor = any(w.objects[p].object_type == "Floor" for p in o.parents if p in w.objects)
        if o.parents and not (floor_shows_none and on_floor):
            y = bottoms[oid] if bottoms is not None and oid in bottoms else float(o.aabb[0][1])
            found.setdefault(o.parents[0], []).append((y, oid))
    lowered: Dict[str, Lowered] = {}
    for rid, posed in sorted(found.items()):
        r = w.objects.get(rid)
        if r is None or r.pickupable or r.object_type in IN_RECEPTACLES or r.object_type == "Floor":
            continue
        lo, hi = r.aabb
        posed = [(y, oid) for y, oid in posed if lo[1] - 0.01 <= y <= hi[1] - 0.03]
        if not posed:
            continue
        y = float(np.median([y for y, _ in posed]))
        if r.surface_offset is None or y < hi[1] - r.surface_offset - 0.01:
            lowered[rid] = Lowered(r.surface_offset, tuple(oid for _, oid in posed))
            w.update(r.object_id, surface_offset=float(hi[1] - y))
    return lowered


def redrop_on_lowered(
    w: World, posed: Sequence[Tuple[str, Any]], lowered: Dict[str, Lowered]
) -> List[str]:
    """Objects that settling lifted onto a furniture top which the poses then lowered go back to
    their posed height (and settle on the lowered top), as THOR 2.1.0 had them: FloorPlan16's
    dining table stood 6.6 cm below today's box and the knife posed on it, lifted 4.6 cm onto
    today's top, floated above it; FloorPlan302's phone on a shelf (1.2 cm) and FloorPlan309's
    pen on a side table lay 2-3 px above their thin pickup masks, which found the furniture.
    A lowered surface on which none of the objects that set it rests after this (they settled
    back onto another part drawn there: FloorPlan201's coffee-table objects onto the shelf board
    inside it) keeps its previous height. Returns the ids moved (lowest first)."""
    moved: List[str] = []
    for oid, pos in sorted(posed, key=lambda e: e[1][1]):
        o = w.objects[oid]
        if not o.parents or o.parents[0] not in lowered or o.is_picked_up:
            continue
        if o.position[1] - float(pos[1]) <= 1e-6:
            continue  # not lifted
        physics.move_with_contents(
            w, oid, (o.position[0], float(pos[1]), o.position[2]), o.rotation
        )
        physics.settle(w, oid)
        moved.append(oid)
    for rid, (previous, setters) in lowered.items():
        top = w.objects[rid].aabb[1][1] - w.objects[rid].surface_offset
        if not any(abs(w.objects[oid].aabb[0][1] - top) <= REST_TOLERANCE for oid in setters):
            w.update(rid, surface_offset=previous)
    return moved
