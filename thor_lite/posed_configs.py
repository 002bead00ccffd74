"""Configurations a caller's data put objects in (SetObjectPoses), remembered per world.

Poses in a dataset (e.g. a rearrangement episode's goal poses) were recorded in AI2-THOR, where
those objects rested together without colliding. Our furniture and objects are a few boxes
standing in for THOR's meshes, so two such objects can overlap here by centimetres (a remote
lying against a TV stand's screen, a soap bar beside a faucet). `TeleportObject` without
`forceAction` must not call that a collision when an object returns to a recorded pose while
the objects it overlaps still stand as recorded with it (up to THOR's physics jitter and our own
settling): in THOR that very configuration existed. Anything else (an object moved since, e.g.
a shuffled one now lying on the spot) still collides.
"""

from __future__ import annotations

from typing import FrozenSet, Sequence, Tuple

import numpy as np

from .geometry import euler_to_matrix
from .physics import MAX_SETTLE_LIFT

# The teleported object matches its recorded pose within these: TeleportObject's callers nudge
# by a few millimetres (the rearrangement snap tries the goal offset by up to 2 mm per axis).
POSITION_TOLERANCE = 0.005
ROTATION_TOLERANCE_DEG = 1.0
OPENNESS_TOLERANCE = 0.01
# The objects around it still stand as recorded within these. An object the data leaves in place
# differs between two of its THOR recordings by physics jitter only (official 2023 train: 99.5 %
# within 2 mm and 3.6 degrees), and our settle may lift a resting object by up to
# physics.MAX_SETTLE_LIFT differently in each configuration (it depends on the neighbours).
NEIGHBOUR_ROTATION_TOLERANCE_DEG = 5.0
NEIGHBOUR_LIFT_TOLERANCE = MAX_SETTLE_LIFT + 0.005
# SetObjectPoses calls remembered per world (a rearrangement episode makes two: goal, start).
MAX_CONFIGS = 4

PoseSig = Tuple[Tuple[float, float, float], Tuple[float, float, float], float]


def record(w, object_ids: Sequence[str]) -> None:
    """Remember every enabled object's pose now; `object_ids` are the ones the data placed."""
    sig = {
        oid: _sig(o.position, o.rotation, o.openness) for oid, o in w.objects.items() if o.enabled
    }
    placed = frozenset(oid for oid in object_ids if oid in sig)
    w.posed_configs = (tuple(w.posed_configs) + ((placed, sig),))[-MAX_CONFIGS:]


def co_posed(
    w, object_id: str, position: Sequence[float], rotation: Sequence[float]
) -> FrozenSet[str]:
    """Objects standing now as they stood in a recorded configuration in which `object_id`
    (placed by that data) stood at (position, rotation)."""
    out = set()
    for placed, sig in w.posed_configs:
        if object_id not in placed or not _same(
            sig[object_id], position, rotation, None, POSITION_TOLERANCE, ROTATION_TOLERANCE_DEG
        ):
            continue
        for oid, s in sig.items():
            o = w.objects.get(oid)
            if (
                oid != object_id
                and o is not None
                and o.enabled
                and _same(
                    s,
                    o.position,
                    o.rotation,
                    o.openness,
                    NEIGHBOUR_LIFT_TOLERANCE,
                    NEIGHBOUR_ROTATION_TOLERANCE_DEG,
                )
            ):
                out.add(oid)
    return frozenset(out)


def _sig(position, rotation, openness) -> PoseSig:
    return (
        tuple(float(v) for v in position),
        tuple(float(v) for v in rotation),
        float(openness or 0.0),
    )


def _same(sig: PoseSig, position, rotation, openness, lift_tol: float, rot_tol_deg: float) -> bool:
    """Within POSITION_TOLERANCE horizontally, `lift_tol` vertically, `rot_tol_deg` and (when
    given) OPENNESS_TOLERANCE of the recorded pose."""
    d = np.abs(np.asarray(sig[0]) - np.asarray(position, float))
    if max(d[0], d[2]) > POSITION_TOLERANCE or d[1] > max(lift_tol, POSITION_TOLERANCE):
        return False
    if openness is not None and abs(sig[2] - float(openness or 0.0)) > OPENNESS_TOLERANCE:
        return False
    if tuple(sig[1]) == tuple(float(v) for v in rotation):
        return True
    r = euler_to_matrix(sig[1]).T @ euler_to_matrix(rotation)
    angle = np.degrees(np.arccos(np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)))
    return bool(angle <= rot_tol_deg)
