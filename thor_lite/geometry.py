"""Oriented-box geometry shared by physics, visibility, navigation and rendering.

Everything is in THOR's world frame (left-handed, y up, metres). Rotations are Unity Euler
angles (degrees) applied as R = Ry @ Rx @ Rz, which scipy expresses as intrinsic "YXZ".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional, Sequence, Tuple

import numpy as np
from scipy.spatial.transform import Rotation

# OOBB corner signs in THOR's order: bottom face 0-3 counter-clockwise, then top face 4-7.
OOBB_CORNER_SIGNS = np.array(
    [
        [1, -1, 1],
        [-1, -1, 1],
        [-1, -1, -1],
        [1, -1, -1],
        [1, 1, 1],
        [-1, 1, 1],
        [-1, 1, -1],
        [1, 1, -1],
    ],
    dtype=np.float64,
)
# AABB corner order: x in {max,min}, then y in {max,min}, then z in {max,min}.
AABB_CORNER_SIGNS = np.array(
    [[sx, sy, sz] for sx in (1, -1) for sy in (1, -1) for sz in (1, -1)], dtype=np.float64
)


@lru_cache(maxsize=4096)
def _euler_matrix_cached(x: float, y: float, z: float) -> np.ndarray:
    m = Rotation.from_euler("YXZ", [y, x, z], degrees=True).as_matrix()
    m.setflags(write=False)
    return m


def euler_to_matrix(rotation: Sequence[float]) -> np.ndarray:
    """Unity Euler angles (x, y, z) in degrees -> 3x3 rotation matrix (read-only, cached)."""
    return _euler_matrix_cached(
        round(float(rotation[0]), 6), round(float(rotation[1]), 6), round(float(rotation[2]), 6)
    )


def matrix_to_euler(m: np.ndarray) -> np.ndarray:
    """3x3 rotation -> Unity Euler angles (x, y, z), each wrapped to [0, 360).

    At x = +-90 (an object laid on its side by PutObject) y and z are not unique: like Unity,
    keep z = 0 (scipy warns about that gimbal lock; the result is still the same rotation)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Gimbal lock detected")
        y, x, z = Rotation.from_matrix(m).as_euler("YXZ", degrees=True)
    return np.mod(np.array([x, y, z]), 360.0)


def camera_tan_aspect(fov_deg: float, width: float, height: float) -> Tuple[float, float]:
    """(tan(fov/2), width/height) of THOR's pinhole camera; `fov_deg` is the vertical FOV.

    A camera-frame point (x, y, z) lies in the image when |x| < z * tan * aspect and
    |y| < z * tan.
    """
    return np.tan(np.radians(fov_deg) / 2), width / height


@dataclass(frozen=True)
class Box:
    """An oriented box: centre, half extents and rotation (columns = box axes in world)."""

    center: np.ndarray
    half: np.ndarray
    rot: np.ndarray

    @staticmethod
    def axis_aligned(lo: Sequence[float], hi: Sequence[float]) -> "Box":
        lo_a, hi_a = np.asarray(lo, float), np.asarray(hi, float)
        return Box((lo_a + hi_a) / 2, np.maximum((hi_a - lo_a) / 2, 1e-4), np.eye(3))

    @staticmethod
    def from_oobb_corners(corners: Sequence[Sequence[float]]) -> "Box":
        """Rebuild a box from THOR's 8 OOBB corner points (see OOBB_CORNER_SIGNS)."""
        c = np.asarray(corners, dtype=np.float64)
        ex, ey, ez = c[0] - c[1], c[4] - c[0], c[0] - c[3]
        lengths = np.array([np.linalg.norm(ex), np.linalg.norm(ey), np.linalg.norm(ez)])
        axes = np.stack([ex, ey, ez], axis=1) / np.maximum(lengths, 1e-9)
        # Orthonormalise (the dump's corners carry float noise).
        u, _, vt = np.linalg.svd(axes)
        rot = u @ vt
        if np.linalg.det(rot) < 0:
            rot[:, 2] *= -1
        return Box(c.mean(axis=0), np.maximum(lengths / 2, 1e-4), rot)

    def corners(self, signs: np.ndarray = OOBB_CORNER_SIGNS) -> np.ndarray:
        return self.center + (signs * self.half) @ self.rot.T

    def aabb(self) -> Tuple[np.ndarray, np.ndarray]:
        ext = np.abs(self.rot) @ self.half
        return self.center - ext, self.center + ext

    def upright(self, tol: float = 0.99) -> Optional["Box"]:
        """The same box with its local axis 1 pointing up, or None if it is tilted."""
        k = int(np.argmax(np.abs(self.rot[1])))
        if abs(self.rot[1, k]) < tol:
            return None
        order = [i for i in range(3) if i != k]
        cols = [
            self.rot[:, order[0]],
            self.rot[:, k] * np.sign(self.rot[1, k]),
            self.rot[:, order[1]],
        ]
        rot = np.stack(cols, axis=1)
        if np.linalg.det(rot) < 0:
            rot[:, 2] *= -1
        return Box(self.center, self.half[[order[0], k, order[1]]], rot)

    def transform(self) -> np.ndarray:
        """4x4 world-from-unit-cube matrix for the renderer."""
        m = np.eye(4)
        m[:3, :3] = self.rot * self.half
        m[:3, 3] = self.center
        return m

    def contains(self, points: np.ndarray, margin: float = 0.0) -> np.ndarray:
        local = (np.atleast_2d(points) - self.center) @ self.rot
        return np.all(np.abs(local) <= self.half + margin, axis=-1)

    def moved(
        self,
        translation: np.ndarray,
        rotation: np.ndarray | None = None,
        pivot: np.ndarray | None = None,
    ) -> "Box":
        """The box after rotating about `pivot` by `rotation` and then translating."""
        if rotation is None:
            return Box(self.center + translation, self.half, self.rot)
        p = self.center if pivot is None else pivot
        return Box(p + rotation @ (self.center - p) + translation, self.half, rotation @ self.rot)


def boxes_overlap_many(
    a: Box, centers: np.ndarray, halves: np.ndarray, rots: np.ndarray, eps: float = 1e-3
) -> np.ndarray:
    """Vectorised separating-axis test of one box against N boxes -> bool[N]."""
    n = len(centers)
    if n == 0:
        return np.zeros(0, dtype=bool)
    a_axes = np.broadcast_to(a.rot.T, (n, 3, 3))  # rows = a's axes
    b_axes = np.transpose(rots, (0, 2, 1))  # rows = b's axes
    cross = np.cross(a_axes[:, :, None, :], b_axes[:, None, :, :]).reshape(n, 9, 3)
    axes = np.concatenate([a_axes, b_axes, cross], axis=1)  # (n, 15, 3)
    norm = np.linalg.norm(axes, axis=-1, keepdims=True)
    valid = norm[..., 0] > 1e-6
    axes = axes / np.where(norm > 1e-6, norm, 1.0)
    ra = np.abs(axes @ a.rot) @ a.half  # (n, 15)
    rb = np.einsum("nkj,nj->nk", np.abs(np.einsum("nki,nij->nkj", axes, rots)), halves)
    d = np.abs(np.einsum("nki,ni->nk", axes, centers - a.center))
    separated = (d > ra + rb - eps) & valid
    return ~separated.any(axis=1)


def pack_boxes(boxes: Iterable[Box]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    boxes = list(boxes)
    if not boxes:
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3, 3))
    return (
        np.stack([b.center for b in boxes]),
        np.stack([b.half for b in boxes]),
        np.stack([b.rot for b in boxes]),
    )


def ray_box_hits(
    origin: np.ndarray,
    targets: np.ndarray,
    centers: np.ndarray,
    halves: np.ndarray,
    rots: np.ndarray,
    pass_end_inside: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Entry parameters t in (0, 1] of segments origin->target against every box.

    Returns an (n_targets, n_boxes) array, +inf where a segment misses a box. Segments that
    start inside a box report t = 0 for it. Used for occlusion tests (slab method in each
    box's local frame). `pass_end_inside` (per box, or per (target, box)) marks boxes that do
    not block a segment ending inside them: a box that only approximates an open mesh (a dresser around its
    drawers, a TV stand around its shelves) cannot hide what sits within it.
    """
    if len(centers) == 0:
        return np.full((len(targets), 0), np.inf)
    d = targets - origin  # (T,3)
    o_local = np.einsum("bij,bi->bj", rots, origin[None, :] - centers)  # (B,3)
    d_local = np.einsum("bij,ti->tbj", rots, d)  # (T,B,3)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d_local
        t1 = (-halves[None] - o_local[None]) * inv
        t2 = (halves[None] - o_local[None]) * inv
    tmin = np.nanmax(np.minimum(t1, t2), axis=-1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=-1)
    # Parallel components: inside the slab means no constraint, outside means a miss.
    parallel = np.abs(d_local) < 1e-12
    outside = parallel & (np.abs(o_local[None]) > halves[None])
    miss = outside.any(-1) | (tmax < np.maximum(tmin, 0.0)) | (tmin > 1.0)
    if pass_end_inside is not None:
        miss |= np.broadcast_to(pass_end_inside, tmax.shape) & (tmax > 1.0)
    t = np.maximum(tmin, 0.0)
    t[miss] = np.inf
    return t


def segments_box_hits(
    origins: np.ndarray,
    targets: np.ndarray,
    centers: np.ndarray,
    halves: np.ndarray,
    rots: np.ndarray,
    pass_end_inside: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Like `ray_box_hits`, but every segment has its own origin: (S, 3) each -> (S, B)."""
    if len(centers) == 0:
        return np.full((len(targets), 0), np.inf)
    d_local = np.einsum("bij,si->sbj", rots, targets - origins)  # (S,B,3)
    o_local = np.einsum("bij,sbi->sbj", rots, origins[:, None, :] - centers[None])  # (S,B,3)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d_local
        t1 = (-halves[None] - o_local) * inv
        t2 = (halves[None] - o_local) * inv
    tmin = np.nanmax(np.minimum(t1, t2), axis=-1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=-1)
    parallel = np.abs(d_local) < 1e-12
    outside = parallel & (np.abs(o_local) > halves[None])
    miss = outside.any(-1) | (tmax < np.maximum(tmin, 0.0)) | (tmin > 1.0)
    if pass_end_inside is not None:
        miss |= pass_end_inside[None] & (tmax > 1.0)
    t = np.maximum(tmin, 0.0)
    t[miss] = np.inf
    return t
