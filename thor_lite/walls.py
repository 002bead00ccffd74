"""The room's walls and ceiling as the renderer draws them.

The walls stand at the room's recorded bounds, which in a few floor plans lie in front of the
windows THOR sets into them (FloorPlan302's blinds hang 3-6 cm behind its -z bound). THOR's walls
have the window cut out, so in today's scenes each wall is drawn with an opening wherever a window
or its blinds reach behind it: what hangs there shows, as it does in THOR. ALFRED's THOR 2.1.0 mode
keeps solid walls (its recorded masks were checked on them). Walls are drawn only: visibility and
collision never used them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence, Tuple

from .geometry import Box

if TYPE_CHECKING:
    from .world import World

#: instance names of the four walls and the ceiling (ai2thor's), in the order `room_boxes` uses
WALL_NAMES = (
    "StandardWallSize|+x",
    "StandardWallSize|-x",
    "StandardWallSize|+z",
    "StandardWallSize|-z",
    "Ceiling|0|0|0",
)
#: the walls' thickness and the ceiling's height above the floor (m)
WALL_THICKNESS = 0.05
CEILING_HEIGHT = 3.0
#: what stands in a wall and is cut out of it
WALL_OPENING_TYPES = frozenset({"Window", "Blinds"})
#: an object counts as set in a wall when it reaches behind the wall's face by more than this
#: and its room-side face is at most `OPENING_DEPTH` in front of it (m)
OPENING_MARGIN = 0.001
OPENING_DEPTH = 0.3

Rect = Tuple[float, float, float, float]  # u0, u1, v0, v1


def room_boxes(w: "World") -> List[Tuple[int, Box]]:
    """(index into `WALL_NAMES`, box) of every drawn piece of the walls and the ceiling."""
    lo, hi = w.room_lo, w.room_hi
    y0, y1 = w.floor_y, w.floor_y + CEILING_HEIGHT
    t = WALL_THICKNESS
    # per wall: the axis across it, its face, which way is out, and the axis along it
    walls = ((0, hi[0], 1.0), (0, lo[0], -1.0), (2, hi[2], 1.0), (2, lo[2], -1.0))
    cut = not w.profile.layout_clears_moveables  # today's scenes (see the module docstring)
    out: List[Tuple[int, Box]] = []
    for i, (j, face, sign) in enumerate(walls):
        k = 2 - j  # along the wall
        span = (lo[k] - t, hi[k] + t)
        holes = _openings(w, j, face, sign, k) if cut else []
        for u0, u1, v0, v1 in subtract_rects((span[0], span[1], y0, y1), holes):
            a, b = [0.0] * 3, [0.0] * 3
            a[k], b[k], a[1], b[1] = u0, u1, v0, v1
            a[j], b[j] = sorted((face, face + sign * t))
            out.append((i, Box.axis_aligned(tuple(a), tuple(b))))
    ceiling = Box.axis_aligned((lo[0] - t, y1, lo[2] - t), (hi[0] + t, y1 + t, hi[2] + t))
    out.append((len(WALL_NAMES) - 1, ceiling))
    return out


def _openings(w: "World", j: int, face: float, sign: float, k: int) -> List[Rect]:
    """The (along, up) extents of the windows and blinds set into the wall whose face is at
    `face` on axis `j`, outward `sign`."""
    holes = []
    for o in w.objects.values():
        if o.object_type not in WALL_OPENING_TYPES or not o.rendered:
            continue
        lo, hi = o.aabb
        far, near = (hi[j], lo[j]) if sign > 0 else (lo[j], hi[j])
        behind = sign * (far - face)
        in_front = sign * (face - near)
        if behind > OPENING_MARGIN and in_front <= OPENING_DEPTH:
            holes.append((float(lo[k]), float(hi[k]), float(lo[1]), float(hi[1])))
    return holes


def subtract_rects(rect: Rect, holes: Sequence[Rect]) -> List[Rect]:
    """`rect` minus the union of `holes`, as rectangles: vertical strips between every hole's
    edges, each cut where the holes spanning it are."""
    u0, u1, v0, v1 = rect
    clipped = [
        (max(a, u0), min(b, u1), max(c, v0), min(d, v1))
        for a, b, c, d in holes
        if min(b, u1) > max(a, u0) and min(d, v1) > max(c, v0)
    ]
    if not clipped:
        return [rect]
    cuts = sorted({u0, u1, *(h[0] for h in clipped), *(h[1] for h in clipped)})
    pieces: List[Rect] = []
    for a, b in zip(cuts, cuts[1:]):
        spans = sorted((c, d) for ha, hb, c, d in clipped if ha <= a and hb >= b)
        v = v0
        for c, d in spans:
            if c > v:
                pieces.append((a, b, v, c))
            v = max(v, d)
        if v < v1:
            pieces.append((a, b, v, v1))
    return pieces
