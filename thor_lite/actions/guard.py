"""Post-conditions every action must leave behind; a violation fails (and rolls back) the step.

Argument checks (`registry.check_args`) stop bad numbers at the door, but an action can still
compute a bad state from good inputs (a long throw, a pose far from any support, a physics
corner case). Checking only what the action changed keeps this cheap: objects are
copy-on-write, so unchanged ones are the very same instances as before the step.
"""

from __future__ import annotations

import math
from typing import Dict, Tuple

import numpy as np

from ..objects import SimObject
from ..world import World
from .registry import ActionFailed

# Held objects hover at the hand, up to ~0.4 m beyond the agent's body, and the recorded
# furniture boxes are approximations: allow this much slack around the house box.
HOUSE_MARGIN = 0.5
FLOOR_HEADROOM = 3.0  # sceneBounds reach at least this far above the floor (see metadata)


def compute_house_bounds(w: World) -> Tuple[np.ndarray, np.ndarray]:
    """The house box: floor plus every object's authored AABB (THOR's sceneBounds analogue)."""
    lo = np.array(w.room_lo, dtype=float)
    hi = np.array(w.room_hi, dtype=float)
    hi[1] = max(hi[1], w.floor_y + FLOOR_HEADROOM)
    for o in w.objects.values():
        if o.enabled:
            a, b = o.aabb
            lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    return lo, hi


def house_bounds(w: World) -> Tuple[np.ndarray, np.ndarray]:
    """Bounds fixed when the scene was loaded (the controller stores them on the base world)."""
    hb = getattr(w, "house_bounds", None)
    if hb is None:
        hb = compute_house_bounds(w)
        w.house_bounds = hb
    return hb


def _inside(p, lo: np.ndarray, hi: np.ndarray, margin: float) -> bool:
    return bool(
        lo[0] - margin <= p[0] <= hi[0] + margin
        and lo[1] - margin <= p[1] <= hi[1] + margin
        and lo[2] - margin <= p[2] <= hi[2] + margin
    )


def _fmt(p) -> str:
    return "(" + ", ".join(f"{float(v):.4f}" for v in p) + ")"


def _check_object(o: SimObject, lo: np.ndarray, hi: np.ndarray, bounded: bool) -> None:
    vals = (*o.position, *o.rotation, o.openness)
    if not all(math.isfinite(v) for v in vals):
        raise ActionFailed(f"{o.object_id} would get a non-finite pose or openness; action undone.")
    if not 0.0 <= o.openness <= 1.0:
        raise ActionFailed("openness must be in [0:1]")
    if not o.enabled or not bounded:
        return
    a, b = o.aabb
    centre = (a + b) / 2
    if not _inside(centre, lo, hi, HOUSE_MARGIN):
        raise ActionFailed(
            f"Position coordinate {_fmt(centre)} of {o.object_id} is not within scene "
            f"bounds ({_fmt(lo)} to {_fmt(hi)}); action undone."
        )


def check_world(w: World, before: Dict[str, SimObject], agent_before, bounded: bool = True) -> None:
    """Raise ActionFailed if the step left NaN/inf, out-of-house poses or a bad hand behind.

    `bounded=False` (caller-given object poses, see `ActionSpec.bounded`) skips only the
    house-bounds check on objects; non-finite values still fail.
    """
    lo, hi = house_bounds(w)
    a = w.agent
    if a is not agent_before:
        if not all(math.isfinite(v) for v in (a.x, a.y, a.z, a.yaw, a.horizon)):
            raise ActionFailed("The agent would get a non-finite pose; action undone.")
        if not _inside((a.x, a.y, a.z), lo, hi, 0.0):
            raise ActionFailed(
                f"Agent position {_fmt((a.x, a.y, a.z))} is not within scene bounds "
                f"({_fmt(lo)} to {_fmt(hi)}); action undone."
            )
    if w.objects is not before:
        for oid, o in w.objects.items():
            if before.get(oid) is not o:
                _check_object(o, lo, hi, bounded)
    if w.held is not None:
        h = w.objects.get(w.held)
        if h is None or not h.enabled:
            raise ActionFailed(f"The held object {w.held} would leave the scene; action undone.")
