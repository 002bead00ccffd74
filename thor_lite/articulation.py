"""How the moving part of an openable that is not a container door or drawer takes its pose.

THOR moves one part of each openable (a lid, a cover, a screen, a curtain, the slats of a blind,
a glass door) by rotation, slide or scale, linear in `openness` ([0, 1]); its metadata box stays
the box recorded for the scene. Here each such type is one row of `ARTICULATIONS`: the part is
cut out of (or grown from) the object's recorded box, so the object draws as several boxes that
all carry its instance id, occlude as geometry and cover the recorded box when closed. Facts
come from the prefabs gathered in the openable-articulation reference; the rows marked
"rule" are choices where THOR's motion is unknown, made from the recorded open/closed boxes.

Angles are linear in openness (THOR 5's normalised quaternion lerp differs by at most 1.5 deg
for a 90 deg door). Collision and the metadata box keep the recorded box, as Cabinet and Drawer
fronts do: an agent's pose or a placement never depends on a part's current angle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .geometry import Box


@dataclass(frozen=True)
class Articulation:
    """One openable type's moving part.

    `kind`: "lid" (a top slab hinged at its back edge that tips up by `angle`), "cover" (the top
    `thick` of the box turned over its -x edge by `angle`, a book), "screen" (a laptop's lid
    standing up from its keyboard by `angle`), "scale" (the part grows `factor` times along
    `axis` from its fixed end: "lateral" for a curtain, "down" for blinds), "door" (the whole
    thin box swings `angle` about its hinge edge towards its front). Fractions are of the box.
    `tone`: colour factor of the moving part (its underside, the pages under a cover) so the
    part that moves shows as a part."""

    kind: str
    angle: float = 90.0
    thick: float = 0.1
    span: Tuple[float, float] = (0.0, 1.0)  # depth fractions, back (0) to front (1)
    lateral: float = 1.0  # lateral fraction the lid covers, centred
    factor: float = 1.0
    axis: str = ""
    tone: float = 0.8


ARTICULATIONS: Dict[str, Articulation] = {
    # ToiletLid: local-x hinge at the back of the bowl, -87 deg; the tank behind stays
    "Toilet": Articulation("lid", angle=87.0, thick=0.06, span=(0.35, 1.0), tone=0.8),
    # rule: THOR's kettle lid is unknown (its open box is 1.3 cm deeper): a lid over the middle
    # of the top, hinged at the back, tipping up 60 deg
    "Kettle": Articulation("lid", angle=60.0, thick=0.12, span=(0.25, 0.75), lateral=0.5),
    # book_front_1: +180 deg about the spine (local -x edge); the pages show lighter under it
    "Book": Articulation("cover", angle=180.0, thick=0.5, tone=1.35),
    # rule: the screen stands up 90 deg from the keyboard at the back (footprint unchanged)
    "Laptop": Articulation("screen", angle=90.0, thick=0.1, tone=0.45),
    # Shingles: scale y 1 -> 7.5 from the top
    "Blinds": Articulation("scale", factor=7.5, axis="down", tone=0.9),
    # Shower_Curtain_1: scale x 1 -> 5 from its fixed edge
    "ShowerCurtain": Articulation("scale", factor=5.0, axis="lateral", tone=0.9),
    # rule: a glass panel of the scene (5 cm thick, no prefab): swings 90 deg out about the
    # vertical edge on its hinge side, as a cabinet door does
    "ShowerDoor": Articulation("door", angle=90.0, tone=0.8),
}


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about the unit `axis` by `angle` radians (Rodrigues)."""
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def _turned(b: Box, pivot: np.ndarray, rot: np.ndarray) -> Box:
    return Box(pivot + rot @ (b.center - pivot), b.half, rot @ b.rot)


def _sub(u: Box, lo: np.ndarray, hi: np.ndarray) -> Box:
    """The part of upright box `u` between local offsets `lo` and `hi` (metres from its centre)."""
    return Box(u.center + u.rot @ ((lo + hi) / 2), np.maximum((hi - lo) / 2, 1e-4), u.rot)


def _depth_axis(u: Box, front: np.ndarray) -> Tuple[int, float]:
    """The horizontal axis of `u` nearest the world direction `front`, and its sign."""
    d = 0 if abs(front @ u.rot[:, 0]) >= abs(front @ u.rot[:, 2]) else 2
    return d, float(np.sign(front @ u.rot[:, d])) or 1.0


def articulated_parts(o: Any, b: Box) -> Optional[Tuple[Tuple[Box, ...], Tuple[float, ...]]]:
    """(boxes, colour factors) drawing `o` (a SimObject, untyped here: objects imports this
    module) with its box `b` at its openness, or None when its type has no row or the box is
    tilted (a knocked-over book keeps its box)."""
    art = ARTICULATIONS.get(o.object_type)
    u = b.upright()
    if art is None or u is None:
        return None
    t = float(np.clip(o.openness, 0.0, 1.0))
    if art.kind == "lid":
        fwd = o.rot_matrix[:, 2]  # the toilet's (kettle's spout's) side: the object's +z
        return _lid(u, art, t, fwd)
    if art.kind == "screen":
        return _screen(u, art, t, np.array([o.front[0], 0.0, o.front[1]]))
    if art.kind == "cover":
        return _cover(u, art, t)
    if art.kind == "scale":
        return _scaled(u, art, t, o.rest_openness, o.hinge_high)
    return _door(u, art, t, np.array([o.front[0], 0.0, o.front[1]]), o.hinge_high)


def _lid(u: Box, art: Articulation, t: float, fwd: np.ndarray):
    d, s = _depth_axis(u, fwd)
    lat = 2 - d
    h = u.half
    th = 2 * h[1] * art.thick
    a0, a1 = (-h[d] + 2 * h[d] * f for f in art.span)  # along +s * axis d
    lo_d, hi_d = (a0, a1) if s > 0 else (-a1, -a0)
    wl = h[lat] * art.lateral

    def box(dr, latr, yr) -> Box:
        lo, hi = np.zeros(3), np.zeros(3)
        lo[d], hi[d] = dr
        lo[lat], hi[lat] = latr
        lo[1], hi[1] = yr
        return _sub(u, lo, hi)

    top, mid = h[1], h[1] - th
    body = [box((-h[d], h[d]), (-h[lat], h[lat]), (-h[1], mid))]
    if lo_d > -h[d] + 1e-4:
        body.append(box((-h[d], lo_d), (-h[lat], h[lat]), (mid, top)))
    if hi_d < h[d] - 1e-4:
        body.append(box((hi_d, h[d]), (-h[lat], h[lat]), (mid, top)))
    if wl < h[lat] - 1e-4:
        body.append(box((lo_d, hi_d), (-h[lat], -wl), (mid, top)))
        body.append(box((lo_d, hi_d), (wl, h[lat]), (mid, top)))
    lid = box((lo_d, hi_d), (-wl, wl), (mid, top))
    if t > 0:
        front = u.rot[:, d] * s
        back = a0 if s > 0 else -a0  # the lid's back edge, in local d
        pivot = u.center + u.rot[:, d] * back + u.rot[:, 1] * top
        lid = _turned(
            lid, pivot, _rotation(np.cross(front, u.rot[:, 1]), np.radians(art.angle * t))
        )
    return tuple(body) + (lid,), (1.0,) * len(body) + (art.tone,)


def _screen(u: Box, art: Articulation, t: float, front: np.ndarray):
    d, s = _depth_axis(u, front)
    h = u.half
    tall = h[1] > 0.5 * h[d]  # recorded open (THOR's laptops start open) or closed
    base_top = -h[1] + 2 * h[1] * (art.thick if tall else 0.5)
    th = min(0.01, (h[1] - base_top) / 2) if tall else h[1] - base_top
    length = min(h[1] - base_top, 2 * h[d]) if tall else 2 * h[d]
    lo, hi = -h.copy(), h.copy()
    hi[1] = base_top
    base = _sub(u, lo, hi)
    # closed: the screen lies on the keyboard from the back edge forwards
    lo, hi = -h.copy(), h.copy()
    lo[1], hi[1] = base_top, base_top + th
    back = -s * h[d]
    lo[d], hi[d] = sorted((back, back + s * length))
    screen = _sub(u, lo, hi)
    if t > 0:
        fwd = u.rot[:, d] * s
        pivot = u.center + u.rot[:, d] * back + u.rot[:, 1] * (base_top + th)
        screen = _turned(
            screen, pivot, _rotation(np.cross(fwd, u.rot[:, 1]), np.radians(art.angle * t))
        )
    return (base, screen), (1.0, art.tone)


def _cover(u: Box, art: Articulation, t: float):
    h = u.half
    mid = h[1] - 2 * h[1] * art.thick
    lo, hi = -h.copy(), h.copy()
    hi[1] = mid
    pages = _sub(u, lo, hi)
    lo[1], hi[1] = mid, h[1]
    cover = _sub(u, lo, hi)
    if t > 0:
        pivot = u.center - u.rot[:, 0] * h[0] + u.rot[:, 1] * mid
        # turning +x towards up carries the cover over the spine to lie beside the book
        axis = np.cross(u.rot[:, 0], u.rot[:, 1])
        cover = _turned(cover, pivot, _rotation(axis, np.radians(art.angle * t)))
    return (pages, cover), (art.tone, 1.0)


def _scaled(u: Box, art: Articulation, t: float, rest: float, high: bool):
    """Grown from the fixed end: the recorded box is the part at the scene's openness `rest`."""
    k = 1 if art.axis == "down" else (0 if u.half[0] >= u.half[2] else 2)
    full = 2 * u.half[k] / (1 + (art.factor - 1) * np.clip(rest, 0.0, 1.0))
    size = full * (1 + (art.factor - 1) * t)
    # blinds hang from their top; a curtain from the end its hinge side names
    sign = 1.0 if (art.axis == "down" or high) else -1.0
    fixed = u.center + u.rot[:, k] * sign * u.half[k]
    if art.axis == "down":
        size = min(size, max(fixed[1] - 0.01, 1e-3))  # never through the floor (y = 0)
    half = u.half.copy()
    half[k] = size / 2
    part = Box(fixed - u.rot[:, k] * sign * half[k], half, u.rot)
    return (part,), (art.tone if t > 0 else 1.0,)


def _door(u: Box, art: Articulation, t: float, front: np.ndarray, high: bool):
    d, s = _depth_axis(u, front)
    lat = 2 - d
    if t <= 0:
        return (u,), (1.0,)
    hs = 1.0 if high else -1.0
    pivot = u.center + u.rot[:, lat] * hs * u.half[lat] + u.rot[:, d] * s * u.half[d]
    to_free = -hs * u.rot[:, lat]
    axis = np.cross(to_free, u.rot[:, d] * s)  # turns the free edge towards the front
    return (_turned(u, pivot, _rotation(axis, np.radians(art.angle * t))),), (art.tone,)
