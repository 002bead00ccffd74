"""Batch visibility of one object from many agent poses (GetInteractablePoses), and whether
the camera would see a box placed somewhere (PutObject in THOR 2.1.0 mode).

Occlusion depends only on the camera position, so rays are cast once per (position,
stance) and the per-(yaw, horizon) viewport test is vectorised on top.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from ..constants import AGENT_HEIGHT, AGENT_Y_OFFSET, CAMERA_CROUCH_OFFSET, CAMERA_STANDING_OFFSET
from ..geometry import Box, camera_tan_aspect, euler_to_matrix, ray_box_hits, segments_box_hits
from ..objects import SimObject
from ..world import World


def interactable_poses(
    w: World,
    obj: SimObject,
    positions: np.ndarray,
    rotations: Sequence[float],
    horizons: Sequence[float],
    standings: Sequence[bool],
    max_distance: float,
    max_poses: Optional[int],
) -> List[Dict[str, Any]]:
    pts = obj.visibility_points()
    radius = float(np.linalg.norm(obj.box.half))
    piv = np.asarray(obj.position)
    near = (
        np.hypot(positions[:, 0] - piv[0], positions[:, 1] - piv[2])
        <= max_distance + radius + w.grid_size
    )
    positions = positions[near]
    if len(positions) == 0 or not obj.rendered:
        return []
    occ = w.occluders()
    keep = occ.occludes.copy()
    idx = {oid: i for i, oid in enumerate(occ.ids)}
    for hidden in (obj.object_id, w.held):
        if hidden in idx:
            keep &= occ.owners != idx[hidden]
    c, h, r, porous = occ.centers[keep], occ.halves[keep], occ.rots[keep], occ.porous[keep]
    if obj.is_static:  # static parts are nobody's contents: no box hides them from inside
        porous = np.ones_like(porous)
    agent_y = w.floor_y + AGENT_Y_OFFSET
    # horizontal distance from the agent body to each visibility point: (P, 9)
    dxz = np.hypot(positions[:, None, 0] - pts[None, :, 0], positions[:, None, 1] - pts[None, :, 2])
    in_range = (dxz <= max_distance) & (
        pts[None, :, 1] <= agent_y + AGENT_HEIGHT / 2 + max_distance
    )
    tan_v, aspect = camera_tan_aspect(w.fov, w.width, w.height)
    unocc: Dict[bool, np.ndarray] = {}
    for st in standings:
        cam_y = agent_y + (CAMERA_STANDING_OFFSET if st else CAMERA_CROUCH_OFFSET)
        cams = np.column_stack([positions[:, 0], np.full(len(positions), cam_y), positions[:, 1]])
        clear = np.zeros((len(positions), len(pts)), dtype=bool)
        rows, cols = np.nonzero(in_range)  # only segments that could count are cast
        if len(rows):
            t = segments_box_hits(cams[rows], pts[cols], c, h, r, porous)
            occ.clear_over_rim(t, cams[rows], pts[cols], np.flatnonzero(keep))
            clear[rows, cols] = ~(t < 0.999).any(1)
        unocc[st] = clear & in_range
    out: List[Dict[str, Any]] = []
    for hor in horizons:
        for st in standings:
            cam_y = agent_y + (CAMERA_STANDING_OFFSET if st else CAMERA_CROUCH_OFFSET)
            for rot in rotations:
                rm = euler_to_matrix((hor, rot, 0.0))
                rel = (
                    pts[None, :, :]
                    - np.column_stack(
                        [positions[:, 0], np.full(len(positions), cam_y), positions[:, 1]]
                    )[:, None, :]
                )
                local = rel @ rm
                z = local[..., 2]
                with np.errstate(divide="ignore", invalid="ignore"):
                    u = local[..., 0] / (z * tan_v * aspect)
                    v = local[..., 1] / (z * tan_v)
                vis = (z > 0.1) & (np.abs(u) < 1) & (np.abs(v) < 1) & unocc[st]
                ok = vis.any(1)
                for i in np.flatnonzero(ok):
                    out.append(
                        {
                            "x": float(positions[i, 0]),
                            "y": float(agent_y),
                            "z": float(positions[i, 1]),
                            "rotation": float(rot),
                            "standing": bool(st),
                            "horizon": float(hor),
                        }
                    )
                    if max_poses is not None and len(out) >= max_poses:
                        return out
    return out


def camera_sees(w: World, moving: str) -> Callable[[Box], bool]:
    """A test of whether the agent's camera would see `moving` placed as a given box: its top
    centre or centre is in the viewport and no other object's part hides it (the object and
    its contents, held at the hand now, are left out of the occluders). Every drawn part
    counts, basin walls too (`Occluders.over_rim` is not applied): ALFRED's next action finds
    the object by its pixels in the frame."""
    occ = w.occluders()
    gone = {moving, *w.descendants(moving)}
    keep = np.array([occ.ids[k] not in gone for k in occ.owners], dtype=bool)
    centers, halves, rots, porous = (
        occ.centers[keep],
        occ.halves[keep],
        occ.rots[keep],
        occ.porous[keep],
    )
    cam = w.camera_position()

    def sees(box: Box) -> bool:
        lo, hi = box.aabb()
        pts = np.array([[box.center[0], hi[1] - 1e-3, box.center[2]], box.center])
        pts = pts[w.in_viewport(pts)]
        if len(pts) == 0:
            return False
        t = ray_box_hits(cam, pts, centers, halves, rots, porous[None, :])
        return bool((t >= 0.999).all(axis=1).any())

    return sees


def camera_sees_spot(
    w: World, moving: str, receptacle: str, shelves: Sequence[float] = ()
) -> Callable[[np.ndarray], bool]:
    """THOR 2.1.0's test of a receptacle spawn point (`Contains.NarrowDownValidSpawnPoints`):
    the surface point itself within the visibility distance of the camera (horizontally), in
    the viewport (raised 5 cm when not below the camera), and no drawn part on the segment
    from the camera to 1 cm short of it. `moving` and its contents (at the hand) are left
    out; a segment ending inside the receptacle's own part is not hidden by it; `shelves`:
    heights of boards across the receptacle's box (a fridge's shelves, not drawn) that hide
    points below them."""
    occ = w.occluders()
    rec = w.objects[receptacle]
    gone = {moving, *w.descendants(moving)}
    keep = np.array([occ.ids[k] not in gone for k in occ.owners], dtype=bool)
    centers, halves, rots = occ.centers[keep], occ.halves[keep], occ.rots[keep]
    own = np.array([occ.ids[k] == receptacle for k in occ.owners], dtype=bool)[keep][None, :]
    cam = w.camera_position()

    def under_shelf(p: np.ndarray, seg: np.ndarray) -> bool:
        for y in shelves:
            if p[1] + 0.01 < y < cam[1]:
                q = cam + seg * (y - cam[1]) / seg[1]
                if rec.box.contains(np.array([q[0], rec.box.center[1], q[2]]), margin=-0.03).all():
                    return True
        return False

    def sees(point: np.ndarray) -> bool:
        p = np.asarray(point, float).copy()
        if np.hypot(p[0] - cam[0], p[2] - cam[2]) >= w.visibility_distance:
            return False
        if p[1] >= cam[1] - 0.05:
            p[1] += 0.05
        if not bool(w.in_viewport(p[None])[0]):
            return False
        seg = p - cam
        length = float(np.linalg.norm(seg))
        end = cam + seg * (length - 0.01) / length
        if not bool((ray_box_hits(cam, end[None], centers, halves, rots, own) >= 0.999).all()):
            return False
        return not under_shelf(p, seg)

    return sees
