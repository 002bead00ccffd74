"""Drawer and cabinet fronts that a furniture box would hide.

THOR's furniture meshes have openings where their drawers' fronts show; its box (the AABB of
the mesh, trim included) reaches a centimetre or two past those fronts. Drawn as a solid box,
a dresser then covers its closed drawers, so a click (or an ALFRED mask) on a drawer front
resolves to the dresser. Each closed drawer/cabinet is drawn out to just past the face of the
furniture box that encloses it (its `proud` distance along its front).
"""

from __future__ import annotations

from typing import Dict, Iterable

import numpy as np

from .objects import SimObject

OPENING_TYPES = frozenset({"Drawer", "Cabinet"})
MAX_RECESS = 0.03  # fronts further behind the furniture face than this are not drawer fronts
PROUD_MARGIN = 0.005  # how far past the furniture face the front is drawn
_ENCLOSE_TOL = 0.02


def proud_distances(objects: Iterable[SimObject]) -> Dict[str, float]:
    """objectId -> how far to draw the front of each drawer/cabinet out along its front."""
    objs = list(objects)
    hosts = [
        o
        for o in objs
        if o.object_type not in OPENING_TYPES
        and not o.pickupable
        and o.object_type not in ("Floor", "CounterTop")
        and o.rendered
    ]
    out: Dict[str, float] = {}
    for d in objs:
        if d.object_type not in OPENING_TYPES or not d.flags.get("openable"):
            continue
        fx, fz = d.front
        axis, sign = (0, np.sign(fx)) if abs(fx) > abs(fz) else (2, np.sign(fz))
        if sign == 0:
            continue
        lo, hi = d.aabb
        face = hi[axis] if sign > 0 else lo[axis]
        best = 0.0
        for h in hosts:
            hlo, hhi = h.aabb
            if not ((lo >= hlo - _ENCLOSE_TOL).all() and (hi <= hhi + _ENCLOSE_TOL).all()):
                continue
            recess = sign * ((hhi[axis] if sign > 0 else hlo[axis]) - face)
            if 0.0 < recess <= MAX_RECESS:
                best = max(best, recess + PROUD_MARGIN)
        if best > 0.0:
            out[d.object_id] = float(best)
    return out
