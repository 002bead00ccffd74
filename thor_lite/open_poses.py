"""Which face of an openable is its front, and which edge of a cabinet's front its door hangs
on, from where ALFRED stood to open it (THOR 2.1.0 trajectories in layout mode).

ALFRED's generator recorded for each openable the agent pose it opens it from
(`FloorPlanN-openable.json`). The agent stands out from the front: the free-space guess put
FloorPlan319's dresser drawers' fronts on their sides, and the recorded OpenObject mask of a
drawer front found the dresser. Open doors are drawn swung out about one edge of the front;
which edge is the asset's own and the metadata does not say. The low edge was always taken,
so half the open cabinet doors stood on the wrong side and a recorded CloseObject mask of
THOR 2.1.0's door found the floor beside it (FloorPlan13, FloorPlan428). An agent that stands
off the front's centre stands clear of the swinging door, so the hinge is on the other edge.
"""

from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np

from .objects import SimObject

#: the opening pose must be this far (m) off the front's centre along it to say anything
HINGE_POSE_OFFSET = 0.1
#: a recorded objectId's position this near (m) an object of its type is that object
SAME_OBJECT = 0.15
#: openables whose door swings about an edge and that this rule sets
HINGED_TYPES = frozenset({"Cabinet"})


def _match(rid: str, by_type: Mapping[str, Sequence[SimObject]]) -> Optional[SimObject]:
    t, *xyz = rid.split("|")
    try:
        p = np.array([float(v) for v in xyz[:3]])
    except ValueError:
        return None
    if p.shape != (3,):
        return None
    cands = [
        (float(np.linalg.norm(np.asarray(o.position) - p)), o.object_id, o)
        for o in by_type.get(t, ())
    ]
    best = min(cands, default=None, key=lambda c: c[:2])
    return best[2] if best is not None and best[0] <= SAME_OBJECT else None


def pose_fronts(
    objects: Iterable[SimObject], poses: Mapping[str, Tuple[float, ...]]
) -> Dict[str, Tuple[float, float]]:
    """objectId -> front (a world xz axis direction): the face of the box the recorded opening
    pose stands out from most (offset over half extent), for each non-pickupable openable a
    recorded objectId names. Not the pose's view direction: ALFRED often looked at a desk
    drawer from its side (FloorPlan307)."""
    by_type: Dict[str, list] = {}
    for o in objects:
        if o.flags.get("openable") and not o.pickupable:
            by_type.setdefault(o.object_type, []).append(o)
    out: Dict[str, Tuple[float, float]] = {}
    for rid, pose in sorted(poses.items()):
        o = _match(rid, by_type)
        if o is None or len(pose) < 2:
            continue
        lo, hi = o.aabb
        rel = (np.array([pose[0], pose[1]]) - (lo + hi)[[0, 2]] / 2) / np.maximum(
            (hi - lo)[[0, 2]] / 2, 1e-3
        )
        out[o.object_id] = (
            (float(np.sign(rel[0])), 0.0)
            if abs(rel[0]) > abs(rel[1])
            else (0.0, float(np.sign(rel[1])))
        )
    return out


def hinge_sides(
    objects: Iterable[SimObject], poses: Mapping[str, Tuple[float, ...]]
) -> Dict[str, bool]:
    """objectId -> hinge on the high edge, for each hinged openable whose recorded opening
    pose stands clearly off its front's centre (towards the low edge: hinge high)."""
    by_type: Dict[str, list] = {}
    for o in objects:
        if o.object_type in HINGED_TYPES and o.flags.get("openable"):
            by_type.setdefault(o.object_type, []).append(o)
    out: Dict[str, bool] = {}
    for rid, pose in sorted(poses.items()):
        o = _match(rid, by_type)
        if o is None or len(pose) < 2:
            continue
        lo, hi = o.aabb
        centre = (lo + hi) / 2
        axis = 2 if abs(o.front[0]) > abs(o.front[1]) else 0  # the front face runs along z or x
        offset = float((pose[0], None, pose[1])[axis] - centre[axis])
        if abs(offset) > HINGE_POSE_OFFSET:
            out[o.object_id] = offset < 0
    return out


def free_space_fronts(
    objects: Iterable[SimObject], free: Iterable[Tuple[int, int]], grid: float
) -> Dict[str, Tuple[float, float]]:
    """objectId -> the face of each openable looking into the most free space: the one whose
    probe half a metre out lies nearest a free grid cell (every mode; the THOR 2.1.0 rules
    above override it where ALFRED recorded a pose)."""
    cells = list(free)
    pts = np.array(cells, dtype=np.float64) * grid if cells else np.zeros((0, 2))
    out: Dict[str, Tuple[float, float]] = {}
    for o in objects:
        if not o.flags.get("openable"):
            continue
        lo, hi = o.aabb
        c = (lo + hi) / 2
        best, best_d = (0.0, 1.0), np.inf
        for d in ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)):
            ext = (hi - lo)[0] / 2 if d[0] else (hi - lo)[2] / 2
            probe = np.array([c[0] + d[0] * (ext + 0.5), c[2] + d[1] * (ext + 0.5)])
            dist = np.min(np.linalg.norm(pts - probe, axis=1)) if len(pts) else 0.0
            if dist < best_d - 1e-9:
                best, best_d = d, dist
        out[o.object_id] = best
    return out
