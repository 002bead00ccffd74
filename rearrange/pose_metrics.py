"""Object poses, pose comparison, IoU, energy and unshuffle metrics (reference §3.1–§3.6).

Everything here is a pure function of plain dicts / lists (THOR metadata or the pose
schema of §3.1), so it can be shared by the environment, the tasks, the expert and the
tests.  Only numpy and scipy are used.

Pose schema (``extract_pose``)::

    {"type", "position", "rotation", "openness", "pickupable", "broken",
     "objectId", "name", "parentReceptacles", "bounding_box"}

The comparison functions raise :class:`PoseComparisonError` (an ``AssertionError``
subclass, mirroring the reference's ``assert`` statements, but raised even under
``python -O``) when their preconditions fail: mismatched types, a broken goal pose, or a
broken current pose in :func:`are_poses_equal` without ``treat_broken_as_unequal``.
"""

from __future__ import annotations

import logging
import functools
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy.spatial.transform import Rotation

from rearrange.constants import IOU_THRESHOLD, OPENNESS_THRESHOLD, POSITION_DIFF_BARRIER

__all__ = [
    "IOU_THRESHOLD",
    "OPENNESS_THRESHOLD",
    "POSITION_DIFF_BARRIER",
    "PoseComparisonError",
    "extract_pose",
    "tracked_poses",
    "angle_between_rotations",
    "position_distance",
    "box_basis",
    "iou_box_3d",
    "compare_poses",
    "are_poses_equal",
    "pose_difference_energy",
    "unshuffle_metrics",
    "poses_list",
]

logger = logging.getLogger(__name__)

Pose = Dict[str, Any]

# §3.2 short-circuit: boxes whose centres are this close (m) and whose rotations differ by
# less than this (in angle_between_rotations' units) count as fully overlapping.
SAME_POSE_POSITION_TOL = 0.01
SAME_POSE_ROTATION_TOL = 10.0

# §3.3 lattice: 13 cell centres per axis, {1/26, 3/26, ..., 25/26}; 1e-3 containment slack.
IOU_LATTICE_SIZE = 13
IOU_INSIDE_TOL = 1e-3
DEGENERATE_EDGE_TOL = 1e-8

_LATTICE_1D = (2.0 * np.arange(IOU_LATTICE_SIZE) + 1.0) / (2.0 * IOU_LATTICE_SIZE)
# (2197, 3): every combination of the 1-D cell centres (s_0, s_1, s_2).
_LATTICE_3D = np.stack(
    np.meshgrid(_LATTICE_1D, _LATTICE_1D, _LATTICE_1D, indexing="ij"), -1
).reshape(-1, 3)
_LATTICE_3D.setflags(write=False)


class PoseComparisonError(AssertionError):
    """A precondition of a pose comparison failed (type mismatch, broken goal, ...)."""


# ---------------------------------------------------------------------------------------
# §3.1 pose extraction
# ---------------------------------------------------------------------------------------


def _xyz(d: Optional[Dict[str, Any]]) -> Optional[Dict[str, float]]:
    if d is None:
        return None
    return {"x": float(d["x"]), "y": float(d["y"]), "z": float(d["z"])}


def extract_pose(obj: Dict[str, Any]) -> Pose:
    """Build the §3.1 pose dict of one THOR metadata object.

    ``openness`` is a float only for openable objects (else None), ``parentReceptacles``
    is a list ([] when THOR reports None) and ``bounding_box`` holds a copy of the 8
    ``objectOrientedBoundingBox.cornerPoints`` (None when the object has no OOBB).
    The result shares no mutable state with ``obj``.
    """
    oobb = obj.get("objectOrientedBoundingBox")
    corners = None
    if oobb is not None and oobb.get("cornerPoints") is not None:
        corners = [[float(c) for c in p] for p in oobb["cornerPoints"]]
    parents = obj.get("parentReceptacles")
    return {
        "type": obj["objectType"],
        "position": _xyz(obj["position"]),
        "rotation": _xyz(obj["rotation"]),
        "openness": float(obj["openness"]) if obj["openable"] else None,
        "pickupable": bool(obj["pickupable"]),
        "broken": bool(obj["isBroken"]),
        "objectId": obj["objectId"],
        "name": obj["name"],
        "parentReceptacles": list(parents) if parents is not None else [],
        "bounding_box": corners,
    }


def tracked_poses(objects: Sequence[Dict[str, Any]]) -> Dict[str, Pose]:
    """``name -> pose`` for every object that is openable or has an OOBB, sorted by name.

    Raises ValueError if two tracked objects share a name (poses are matched by name).
    """
    out: Dict[str, Pose] = {}
    for obj in objects:
        if obj["openable"] or obj.get("objectOrientedBoundingBox") is not None:
            if obj["name"] in out:
                raise ValueError(f"duplicate object name {obj['name']!r} in metadata")
            out[obj["name"]] = extract_pose(obj)
    return {name: out[name] for name in sorted(out)}


# ---------------------------------------------------------------------------------------
# §3.2 distances
# ---------------------------------------------------------------------------------------


def angle_between_rotations(a: Dict[str, float], b: Dict[str, float]) -> float:
    """allenact's rotation distance between two ``{x, y, z}`` Euler-degree rotations.

    Rotations are built with scipy's extrinsic ``"xyz"`` convention; the rotation vector
    (radians) of ``a * b^-1`` is scaled by 180/(2π) (half the usual degree conversion, as
    in the reference) and its components' absolute values are summed (L1 norm).
    """
    return _angle_between_cached(
        float(a["x"]), float(a["y"]), float(a["z"]), float(b["x"]), float(b["y"]), float(b["z"])
    )


@functools.lru_cache(maxsize=65536)
def _angle_between_cached(
    ax: float, ay: float, az: float, bx: float, by: float, bz: float
) -> float:
    # Memoised: the same (goal, current) rotation pairs recur on every step of an episode.
    if (ax, ay, az) == (bx, by, bz):
        return 0.0
    ra = Rotation.from_euler("xyz", [ax, ay, az], degrees=True)
    rb = Rotation.from_euler("xyz", [bx, by, bz], degrees=True)
    rotvec = (ra * rb.inv()).as_rotvec() * (180.0 / (2.0 * math.pi))
    return float(np.abs(rotvec).sum())


def position_distance(a: Dict[str, float], b: Dict[str, float]) -> float:
    """Euclidean (3-D) distance between two ``{x, y, z}`` positions."""
    return math.sqrt((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2 + (a["z"] - b["z"]) ** 2)


# ---------------------------------------------------------------------------------------
# §3.3 lattice IoU of oriented boxes
# ---------------------------------------------------------------------------------------


def _as_corners(box: Any, which: str) -> np.ndarray:
    if box is None:
        raise ValueError(f"{which} is None")
    arr = np.asarray(box, dtype=np.float64)
    if arr.shape != (8, 3):
        raise ValueError(f"{which} must have 8 corners of 3 coordinates, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{which} has non-finite coordinates")
    return arr


def box_basis(rel_corners: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Edge basis of a box from its 8 corners given relative to its own corner 0.

    Returns ``(units, lengths)``: ``units`` is (3, 3) with the unit edge vectors u0, u1, u2
    as rows, ``lengths`` the edge lengths ℓ0, ℓ1, ℓ2 (§3.3 step 2):

    * e0 is the corner nearest to corner 0 (ties: lowest index);
    * the corners whose projection onto u0 is < ℓ0/2 are "orthogonal" to u0; the nearest
      of them is e1;
    * of those, the ones also orthogonal to u1 in the same sense must be exactly one: e2.

    Raises ValueError when ℓ0 < 1e-8 or the basis is ambiguous / missing.
    """
    pts = np.asarray(rel_corners, dtype=np.float64)[1:]
    mags = np.sqrt((pts * pts).sum(axis=1))

    i0 = int(np.argmin(mags))
    l0 = float(mags[i0])
    if l0 < DEGENERATE_EDGE_TOL:
        raise ValueError("degenerate box: a corner coincides with corner 0")
    u0 = pts[i0] / l0

    orth0 = pts @ u0 < l0 / 2.0
    if not np.any(orth0):
        raise ValueError("no corner orthogonal to the first edge")
    cand = np.flatnonzero(orth0)
    i1 = int(cand[np.argmin(mags[cand])])
    l1 = float(mags[i1])
    u1 = pts[i1] / l1

    orth01 = orth0 & (pts @ u1 < l1 / 2.0)
    if int(orth01.sum()) != 1:
        raise ValueError(f"ambiguous box basis: {int(orth01.sum())} candidates for the third edge")
    i2 = int(np.flatnonzero(orth01)[0])
    l2 = float(mags[i2])
    u2 = pts[i2] / l2

    return np.stack((u0, u1, u2)), np.array((l0, l1, l2))


def iou_box_3d(b1: Any, b2: Any) -> float:
    """Approximate IoU of two 8-corner oriented boxes, exactly as the reference (§3.3).

    Box 2 is sampled on a 13³ lattice of cell centres expressed in box 1's edge frame
    (origin: box 1's corner 0); a sample is inside box 1 if each coordinate lies in
    ``(-1e-3, ℓ1_k + 1e-3]``.  With p the inside fraction, ``I = V2·p`` and
    ``IoU = I / (V1 + V2 - I)``.  The result is asymmetric in (b1, b2).

    Raises ValueError for malformed, degenerate or ambiguous boxes.
    """
    c1 = _as_corners(b1, "b1")
    c2 = _as_corners(b2, "b2")

    origin = c1[0]
    units1, lens1 = box_basis(c1 - origin)

    q2 = (c2 - origin) @ units1.T  # box 2's corners in box 1's frame
    o2 = q2[0]
    units2, lens2 = box_basis(q2 - o2)

    samples = o2 + (_LATTICE_3D * lens2) @ units2
    inside = np.all((samples > -IOU_INSIDE_TOL) & (samples <= lens1 + IOU_INSIDE_TOL), axis=1)
    p = float(inside.mean())

    v1 = float(np.prod(lens1))
    v2 = float(np.prod(lens2))
    inter = v2 * p
    return inter / (v1 + v2 - inter)


# ---------------------------------------------------------------------------------------
# §3.2 comparison, §3.4 equality, §3.5 energy
# ---------------------------------------------------------------------------------------


def _check_comparable(goal: Pose, cur: Pose) -> None:
    if goal["type"] != cur["type"]:
        raise PoseComparisonError(
            f"type mismatch: goal {goal['type']!r} vs current {cur['type']!r}"
        )
    if goal["broken"]:
        raise PoseComparisonError(f"goal pose of {goal.get('name')!r} is broken")


def compare_poses(goal: Pose, cur: Pose) -> Dict[str, Any]:
    """``{broken, iou, openness_diff, position_dist, rotation_dist}`` of two poses (§3.2).

    * Types must match and the goal must not be broken (else PoseComparisonError).
    * Broken ``cur``: ``broken=True`` and every other field None.
    * Both boxes None: iou, position_dist and rotation_dist are None.
    * Otherwise: centre distance, allenact rotation distance and IoU, where IoU = 1.0 if
      position_dist < 0.01 and rotation_dist < 10, else ``iou_box_3d(goal, cur)``; if that
      raises, IoU = 0 and a warning is logged.
    * ``openness_diff = |Δopenness|`` or None when both opennesses are None.
    """
    _check_comparable(goal, cur)
    if cur["broken"]:
        return {
            "broken": True,
            "iou": None,
            "openness_diff": None,
            "position_dist": None,
            "rotation_dist": None,
        }

    iou: Optional[float]
    pos_dist: Optional[float]
    rot_dist: Optional[float]
    if goal["bounding_box"] is None and cur["bounding_box"] is None:
        iou = pos_dist = rot_dist = None
    else:
        pos_dist = position_distance(goal["position"], cur["position"])
        rot_dist = angle_between_rotations(goal["rotation"], cur["rotation"])
        if pos_dist < SAME_POSE_POSITION_TOL and rot_dist < SAME_POSE_ROTATION_TOL:
            iou = 1.0
        else:
            try:
                iou = iou_box_3d(goal["bounding_box"], cur["bounding_box"])
            except Exception as exc:  # noqa: BLE001 - reference semantics: any failure -> IoU 0
                logger.warning(
                    "iou_box_3d failed for %r (%s); using IoU = 0", goal.get("name"), exc
                )
                iou = 0.0

    g_open, c_open = goal["openness"], cur["openness"]
    if g_open is None and c_open is None:
        open_diff: Optional[float] = None
    elif g_open is None or c_open is None:
        raise PoseComparisonError(f"openness defined for only one pose of {goal.get('name')!r}")
    else:
        open_diff = abs(float(g_open) - float(c_open))

    return {
        "broken": False,
        "iou": iou,
        "openness_diff": open_diff,
        "position_dist": pos_dist,
        "rotation_dist": rot_dist,
    }


def are_poses_equal(
    goal: Pose,
    cur: Pose,
    min_iou: float = IOU_THRESHOLD,
    open_tol: float = OPENNESS_THRESHOLD,
    treat_broken_as_unequal: bool = False,
) -> bool:
    """Pose equality (§3.4): ``(iou is None or iou > min_iou) and (Δopen is None or Δopen ≤ open_tol)``.

    A broken ``cur`` gives False with ``treat_broken_as_unequal``, else PoseComparisonError.
    The openness test also applies to pickupable openables (as in the reference code).
    """
    _check_comparable(goal, cur)
    if cur["broken"]:
        if treat_broken_as_unequal:
            return False
        raise PoseComparisonError(f"current pose of {cur.get('name')!r} is broken")
    cmp = compare_poses(goal, cur)
    iou_ok = cmp["iou"] is None or cmp["iou"] > min_iou
    open_ok = cmp["openness_diff"] is None or cmp["openness_diff"] <= open_tol
    return bool(iou_ok and open_ok)


def _min_corner_distance(a: Any, b: Any) -> float:
    """Minimum Euclidean distance over all 64 (corner of a, corner of b) pairs."""
    ca = _as_corners(a, "goal bounding_box")
    cb = _as_corners(b, "current bounding_box")
    diff = ca[:, None, :] - cb[None, :, :]
    return float(np.sqrt((diff * diff).sum(-1)).min())


def pose_difference_energy(
    goal: Pose,
    cur: Pose,
    min_iou: float = IOU_THRESHOLD,
    open_tol: float = OPENNESS_THRESHOLD,
    pos_barrier: float = POSITION_DIFF_BARRIER,
) -> float:
    """Per-object energy D(goal, cur) ∈ [0, 1] (§3.5).

    * broken ``cur`` → 1;
    * not openable (Δopenness None) or pickupable goal →
      ``0.5·max(1 − IoU/min_iou, 0) + 0.5·pos_energy`` with ``pos_energy = 0`` if IoU > 0,
      else ``min(dmin/pos_barrier, 1)`` (dmin: closest of the 64 corner pairs);
    * openable non-pickupable → 1 if |Δopenness| > open_tol else 0.

    Raises PoseComparisonError on a type mismatch or a broken goal, and ValueError if the
    IoU branch is reached without an IoU (both boxes None) or a box for dmin.
    """
    _check_comparable(goal, cur)
    if cur["broken"]:
        return 1.0
    cmp = compare_poses(goal, cur)
    if cmp["openness_diff"] is None or goal["pickupable"]:
        iou = cmp["iou"]
        if iou is None:
            raise ValueError(f"object {goal.get('name')!r} has no bounding boxes to compare")
        iou_energy = max(1.0 - iou / min_iou, 0.0)
        if iou > 0:
            pos_energy = 0.0
        else:
            dmin = _min_corner_distance(goal["bounding_box"], cur["bounding_box"])
            pos_energy = min(dmin / pos_barrier, 1.0)
        return 0.5 * iou_energy + 0.5 * pos_energy
    return 1.0 if cmp["openness_diff"] > open_tol else 0.0


# ---------------------------------------------------------------------------------------
# §3.6 unshuffle metrics
# ---------------------------------------------------------------------------------------


def unshuffle_metrics(
    goal_poses: Sequence[Pose],
    start_poses: Sequence[Pose],
    cur_poses: Sequence[Pose],
) -> Dict[str, float]:
    """Energy-based unshuffle metrics of §3.6 (keys without the ``unshuffle/`` prefix).

    Inputs are parallel lists ordered by object name (walkthrough/goal, unshuffle start,
    current).  With s_i = D(goal_i, start_i), e_i = D(goal_i, cur_i), misplaced ⇔ D > 0:

    ``start_energy, end_energy, success, num_initially_misplaced, num_misplaced,
    num_fixed, num_newly_misplaced, prop_fixed, prop_fixed_strict, num_broken`` always;
    ``change_energy, num_changed`` (from D(start_i, cur_i)) unless that comparison fails
    (e.g. a broken unshuffle-start pose); ``prop_misplaced`` only if something was
    initially misplaced and ``energy_prop`` only if the start energy is positive.
    ``ep_length`` / ``reward`` belong to the task and are not computed here.
    """
    if not (len(goal_poses) == len(start_poses) == len(cur_poses)):
        raise ValueError(
            f"pose lists differ in length: {len(goal_poses)}, {len(start_poses)}, {len(cur_poses)}"
        )

    start_e = np.array(
        [pose_difference_energy(g, s) for g, s in zip(goal_poses, start_poses)], dtype=np.float64
    )
    end_e = np.array(
        [pose_difference_energy(g, c) for g, c in zip(goal_poses, cur_poses)], dtype=np.float64
    )
    m0 = start_e > 0
    m1 = end_e > 0

    start_energy = float(start_e.sum())
    end_energy = float(end_e.sum())
    n_init = int(m0.sum())
    n_mis = int(m1.sum())
    n_fixed = n_init - int((m0 & m1).sum())
    n_new = int((m1 & ~m0).sum())
    prop_fixed = 1.0 if n_init == 0 else n_fixed / n_init

    metrics: Dict[str, float] = {
        "start_energy": start_energy,
        "end_energy": end_energy,
        "success": 1.0 if end_energy == 0 else 0.0,
        "num_initially_misplaced": n_init,
        "num_misplaced": n_mis,
        "num_fixed": n_fixed,
        "num_newly_misplaced": n_new,
        "prop_fixed": float(prop_fixed),
        "prop_fixed_strict": float(prop_fixed) if n_new == 0 else 0.0,
        "num_broken": int(sum(bool(c["broken"]) for c in cur_poses)),
    }

    try:
        change_e = [pose_difference_energy(s, c) for s, c in zip(start_poses, cur_poses)]
    except AssertionError as exc:
        logger.debug("change_energy skipped: %s", exc)
    else:
        metrics["change_energy"] = float(sum(change_e))
        metrics["num_changed"] = int(sum(e > 0 for e in change_e))

    if n_init > 0:
        metrics["prop_misplaced"] = n_mis / n_init
    if start_energy > 0:
        metrics["energy_prop"] = end_energy / start_energy
    return metrics


def poses_list(poses: Dict[str, Pose]) -> List[Pose]:
    """The values of a ``name -> pose`` dict in name order (for :func:`unshuffle_metrics`)."""
    return [poses[name] for name in sorted(poses)]
