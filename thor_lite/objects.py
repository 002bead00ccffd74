"""Simulated objects: immutable records whose world geometry is derived from their pose.

The world replaces an object (``dataclasses.replace``) whenever it changes, so an Event can
keep a reference to the object table of its step and compute metadata or images lazily
without ever seeing later changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .constants import (
    BASIN_WALL_HEIGHT_THOR2,
    CHAIR_SEAT_BAND,
    COFFEE_BAY_BACK,
    COFFEE_BAY_TOP,
    COFFEE_MUG_BASE,
    DRAWER_SLIDE,
    IN_RECEPTACLES,
    LAMP_BASE_TOP,
    LAMP_BASE_WIDTH,
    LAMP_BASE_WIDTH_THOR2,
    LAMP_SHADE_BOTTOM,
    LAMP_SHADE_BOTTOM_THOR2,
    LAPTOP_BASE_TOP,
    LAPTOP_SCREEN_DEPTH,
    OPEN_TOP_RECEPTACLES,
    ROUND_CORE,
    ROUND_TYPES_THOR2,
    TABLE_LIKE,
    TV_PANEL_BOTTOM,
    TV_PANEL_DEPTH,
    TV_STAND_WIDTH,
)
from .articulation import ARTICULATIONS, articulated_parts
from .geometry import AABB_CORNER_SIGNS, Box, euler_to_matrix
from .scene_data import ObjectRecord

WALL = 0.015  # thickness of the walls of hollow containers
BOX_FLOOR = 0.002  # thickness of an open Box's floor sheet (THOR 2.1.0 mode)


@dataclass(frozen=True, eq=False)
class SimObject:
    object_id: str
    name: str
    object_type: str
    asset_id: str
    position: Tuple[float, float, float]
    rotation: Tuple[float, float, float]
    local_box: Box  # the object's box in its own frame (pivot at the origin)
    has_oobb: bool
    flags: Dict[str, bool]
    # state
    is_open: bool = False
    openness: float = 0.0
    is_toggled: bool = False
    is_sliced: bool = False
    is_cooked: bool = False
    is_dirty: bool = False
    is_broken: bool = False
    is_filled: bool = False
    fill_liquid: Optional[str] = None
    is_used_up: bool = False
    temperature: str = "RoomTemp"
    is_picked_up: bool = False
    parents: Tuple[str, ...] = ()
    enabled: bool = True
    unbreakable: bool = False
    mass: float = 0.0
    salient_materials: Optional[Tuple[str, ...]] = None
    controlled_objects: Optional[Tuple[str, ...]] = None
    front: Tuple[float, float] = (0.0, 1.0)  # outward xz direction of an openable's door
    # the door's hinge is on the face's high-coordinate edge (thor_lite.hinges); default low
    hinge_high: bool = False
    surface_offset: Optional[float] = None  # how far below its top things rest on this receptacle
    holes: Tuple[
        Tuple[float, float, float, float], ...
    ] = ()  # xz rects cut out (sinks in counters)
    # the (position, rotation) the holes were cut at; None: always (static furniture)
    holes_at: Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]] = None
    # today's type of an asset that carries THOR 2.1.0's name (thor2_types): its drawn shape
    shape_type: str = ""
    # a closed drawer/cabinet is drawn this far further out along `front` (thor_lite.fronts)
    proud: float = 0.0
    # THOR 2.1.0 mode: drawn as its mesh stands (an open Box with its flaps up, an open Laptop
    # as keyboard and screen, a DeskLamp with a higher shade and narrower base), not as a
    # solid box or a shell with a side door (shapes.open_mesh_shapes); a SinkBasin as a bowl
    # with low side walls (shapes.bowl_basins)
    thor2_mesh: bool = False
    # THOR 2.1.0 mode: a window drawn as thin panes on these faces of its box ("+x", "-z", ...)
    # instead of the box: a corner window's box spans the room corner (shapes.window_panes)
    panes: Tuple[str, ...] = ()
    # today's mode: drawn only up to this face of its box, (axis k of the box, side +-1 facing
    # the room, face's offset from the centre along side * axis): a window cut back behind the
    # blinds it holds (shapes.windows_behind_hangings); its box and metadata stay THOR's
    drawn_to: Optional[Tuple[int, float, float]] = None
    # the openness the scene recorded its box at (a scaled part grows from it: articulation)
    rest_openness: float = 0.0

    # --- construction ------------------------------------------------------------------
    @staticmethod
    def from_record(rec: ObjectRecord) -> "SimObject":
        r = euler_to_matrix(rec.rotation)
        p = np.asarray(rec.position)
        local = Box(r.T @ (rec.box.center - p), rec.box.half, r.T @ rec.box.rot)
        s = rec.state
        return SimObject(
            object_id=rec.object_id,
            name=rec.name,
            object_type=rec.object_type,
            asset_id=rec.asset_id,
            position=rec.position,
            rotation=rec.rotation,
            local_box=local,
            has_oobb=rec.has_oobb,
            flags=dict(rec.flags),
            is_open=bool(s.get("isOpen")),
            openness=float(s.get("openness") or 0.0),
            rest_openness=float(s.get("openness") or 0.0),
            is_toggled=bool(s.get("isToggled")),
            is_sliced=bool(s.get("isSliced")),
            is_cooked=bool(s.get("isCooked")),
            is_dirty=bool(s.get("isDirty")),
            is_broken=bool(s.get("isBroken")),
            is_filled=bool(s.get("isFilledWithLiquid")),
            fill_liquid=s.get("fillLiquid"),
            is_used_up=bool(s.get("isUsedUp")),
            temperature=s.get("temperature") or "RoomTemp",
            parents=tuple(rec.parent_receptacles),
            mass=rec.mass,
            salient_materials=rec.salient_materials,
            controlled_objects=rec.controlled_objects,
        )

    def with_changes(self, **changes: Any) -> "SimObject":
        return replace(self, **changes)

    # --- geometry ----------------------------------------------------------------------
    @property
    def pickupable(self) -> bool:
        return self.flags.get("pickupable", False)

    @property
    def moveable(self) -> bool:
        return self.flags.get("moveable", False)

    @property
    def is_static(self) -> bool:
        return not (self.pickupable or self.moveable)

    @property
    def encloses_contents(self) -> bool:
        """A closed openable container: its solid box hides what is inside (a shut fridge)."""
        return (
            self.object_type in IN_RECEPTACLES
            and bool(self.flags.get("openable"))
            and self.openness <= 0
        )

    @property
    def rendered(self) -> bool:
        return self.enabled and not self.is_sliced and not self.is_used_up_hidden

    @property
    def is_used_up_hidden(self) -> bool:
        return False

    @cached_property
    def rot_matrix(self) -> np.ndarray:
        return euler_to_matrix(self.rotation)

    @cached_property
    def box(self) -> Box:
        """World oriented box of the object at its current pose."""
        r = self.rot_matrix
        return Box(
            np.asarray(self.position) + r @ self.local_box.center,
            self.local_box.half,
            r @ self.local_box.rot,
        )

    @cached_property
    def aabb(self) -> Tuple[np.ndarray, np.ndarray]:
        return self.box.aabb()

    @cached_property
    def parts(self) -> Tuple[Box, ...]:
        """Boxes drawn and ray-cast for this object (hollow containers, opened doors)."""
        b = self.box
        t = self.shape_type or self.object_type
        holes = self.holes if self.holes_at in (None, (self.position, self.rotation)) else ()
        if holes and t not in TABLE_LIKE:
            return _with_holes(b, holes)
        if self.drawn_to is not None:
            return (_cut_back(b, *self.drawn_to),)
        if self.panes:
            return _hollow_parts(b, open_faces=tuple(f for f in _FACES if f not in self.panes))
        if self.thor2_mesh and self.openness > 0 and b.upright() is not None:
            if self.object_type == "Laptop":
                return _laptop_parts(b.upright(), self.front)
            # four walls and a floor sheet (THOR's box floor is thin: a 1.5 cm slab buried a
            # keychain resting 5 mm above the box bottom at ALFRED's pose)
            lo = b.aabb()[0]
            sheet = Box(
                np.array([b.center[0], lo[1] + BOX_FLOOR / 2, b.center[2]]),
                np.array([b.half[0], BOX_FLOOR / 2, b.half[2]]),
                b.rot,
            )
            return _hollow_parts(b, open_faces=("top", "bottom")) + (sheet,)
        if self._articulated is not None:
            return self._articulated[0]
        if t in IN_RECEPTACLES and self.flags.get("openable"):
            if self.openness > 0:
                return self._open_container_parts(b)
            return (_drawn_out(b, self.front, self.proud),) if self.proud > 0 else (b,)
        # Sinks and bathtubs are basins even when THOR flags only their *Basin child as the
        # receptacle; a solid box would hide (and block placement into) the basin inside.
        if t in OPEN_TOP_RECEPTACLES and (self.flags.get("receptacle") or t in ("Sink", "Bathtub")):
            # a sink whose *Basin child is the receptacle leaves the floor to the basin: two
            # coincident bottoms would fight over the basin's pixels
            basin_child = t in ("Sink", "Bathtub") and not self.flags.get("receptacle")
            parts = _hollow_parts(b, open_faces=("top", "bottom") if basin_child else ("top",))
            return _low_walls(parts, b, BASIN_WALL_HEIGHT_THOR2) if self.thor2_mesh else parts
        up = b.upright()
        if t == "DeskLamp" and up is not None:
            return _lamp_parts(up, self.thor2_mesh)
        if t == "Television" and up is not None:
            return _tv_parts(up)
        if t == "CoffeeMachine" and up is not None:
            return _coffee_machine_parts(*self.aabb, self.rotation[1])
        if t == "ShelvingUnit" and up is not None:
            return _shelving_parts(up)
        if t in TABLE_LIKE and up is not None:
            return _table_parts(up, self.surface_offset, t, holes)
        if t == "Shelf" and up is not None:
            # THOR's shelf box includes the space above the board (and, under a learned
            # surface, the open space below it): draw just the board
            return (_board(up, self.surface_offset),)
        if self.surface_offset is not None and up is not None:
            return (_truncated(up, self.surface_offset),)  # sofa/bed: keep the seat, drop the back
        if self.thor2_mesh and t in ROUND_TYPES_THOR2:
            return _round_parts(b)
        return (b,)

    @cached_property
    def _articulated(self) -> Optional[Tuple[Tuple[Box, ...], Tuple[float, ...]]]:
        """Parts and colour factors of an openable whose lid, cover, screen, curtain, blind or
        glass door moves (`articulation.ARTICULATIONS`); None for every other object."""
        if not self.flags.get("openable") or self.object_type not in ARTICULATIONS:
            return None
        b = self.box
        up = b.upright()
        if self.surface_offset is not None and up is not None:
            b = _truncated(up, self.surface_offset)  # what THOR's scene rests on it
        return articulated_parts(self, b)

    @property
    def articulated(self) -> bool:
        """Drawn as a body and a moving part (not a hollow container, whatever its count)."""
        return self._articulated is not None

    def drawer_shift(self) -> np.ndarray:
        """How far an open Drawer has slid out of its closed box, as a world xz vector:
        DRAWER_SLIDE of its depth times the openness, along its front. Where it is drawn and
        where PutObject places into it (`interaction.set_openness` moves its contents by the
        same rule, multiplied in its historic order)."""
        lo, hi = self.aabb
        fx, fz = self.front
        depth = (hi - lo)[0] if abs(fx) > abs(fz) else (hi - lo)[2]
        return np.array([fx, 0.0, fz]) * depth * DRAWER_SLIDE * self.openness

    def _open_container_parts(self, b: Box) -> Tuple[Box, ...]:
        lo, hi = self.aabb
        fx, fz = self.front
        if self.object_type == "Drawer":
            return _hollow_parts(
                Box(b.center + self.drawer_shift(), b.half, b.rot), open_faces=("top",)
            )
        # A shell with the front face missing, plus the door swung open about one edge.
        aa = Box.axis_aligned(lo, hi)
        face = _front_face_name(fx, fz)
        shell = _hollow_parts(aa, open_faces=(face,))
        size = hi - lo
        angle = np.pi / 2 * self.openness
        along = -1.0 if self.hinge_high else 1.0  # the closed door runs from its hinge this way
        if face in ("+x", "-x"):
            width = size[2]
            sgn = 1.0 if face == "+x" else -1.0
            hinge = np.array(
                [hi[0] if sgn > 0 else lo[0], 0.0, hi[2] if self.hinge_high else lo[2]]
            )
            d = np.array([sgn * np.sin(angle), 0.0, along * np.cos(angle)])
        else:
            width = size[0]
            sgn = 1.0 if face == "+z" else -1.0
            hinge = np.array(
                [hi[0] if self.hinge_high else lo[0], 0.0, hi[2] if sgn > 0 else lo[2]]
            )
            d = np.array([along * np.cos(angle), 0.0, sgn * np.sin(angle)])
        centre = hinge + d * width / 2
        centre[1] = (lo[1] + hi[1]) / 2
        yaw = np.arctan2(d[0], d[2])  # door's long axis is its local +z
        c, s = np.cos(yaw), np.sin(yaw)
        rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
        door = Box(centre, np.array([WALL, size[1] / 2, width / 2]), rot)
        return shell + (door,)

    @cached_property
    def vis_points(self) -> np.ndarray:
        """Points whose line of sight decides visibility (THOR uses per-prefab points)."""
        # A lattice over the box (corners shrunk to 75%, about 0.3 m apart, at most 5 per
        # axis) so that large furniture close to the camera still has points in view.
        return self.vis_lattice(0.75)

    def vis_lattice(self, reach: float) -> np.ndarray:
        """The `vis_points` lattice with its corners at `reach` of the half-extents."""
        b = self.box
        axes = [
            np.linspace(-reach, reach, int(np.clip(np.ceil(2 * h / 0.3) + 1, 2, 5))) for h in b.half
        ]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        pts = b.center + (grid * b.half) @ b.rot.T
        return np.vstack([pts, b.center[None]])

    def visibility_points(self) -> np.ndarray:
        return self.vis_points

    @cached_property
    def color(self) -> np.ndarray:
        """Base RGB: a colour per type, a small per-instance shift, tinted by state."""
        import zlib

        from .event import class_color

        c = np.array(class_color(self.object_type), dtype=np.float64)
        h = zlib.crc32(self.object_id.encode())
        c += np.array([(h >> 16) & 31, (h >> 8) & 31, h & 31], dtype=np.float64) - 16
        if self.is_broken:
            c *= 0.55
        if self.is_cooked:
            c = c * 0.6 + np.array([90, 45, 10])
        if self.is_dirty:
            c = c * 0.7 + np.array([30, 25, 5])
        if self.is_toggled and self.object_type in (
            "DeskLamp",
            "FloorLamp",
            "Television",
            "Laptop",
            "Candle",
        ):
            c = c * 0.5 + 127
        return np.clip(c, 0, 255).astype(np.uint8)

    @cached_property
    def pattern(self) -> int:
        """Surface pattern byte (`render.pattern_code`): its kind by type, its variant by name,
        so a type is recognisable and an object looks the same in every view."""
        from .render import pattern_code

        return pattern_code(self.shape_type or self.object_type, self.name)

    @cached_property
    def part_colors(self) -> np.ndarray:
        """(parts, 3) uint8: `color` per part, a moving part in its own tone."""
        n = len(self.parts)
        if self._articulated is None:
            return np.broadcast_to(self.color, (n, 3))
        tones = np.asarray(self._articulated[1], dtype=np.float64)[:, None]
        return np.clip(self.color[None].astype(np.float64) * tones, 0, 255).astype(np.uint8)

    @cached_property
    def part_transforms(self) -> np.ndarray:
        return np.stack([p.transform() for p in self.parts]).astype(np.float32)

    @cached_property
    def geometry_meta(self) -> Tuple[tuple, tuple, tuple, tuple, Optional[tuple], tuple]:
        """Immutable numbers behind the metadata's pose and bounding-box fields."""
        lo, hi = self.aabb
        oobb = (
            tuple(map(tuple, self.box.corners().tolist()))
            if (self.pickupable or self.moveable)
            else None
        )
        corners = tuple(map(tuple, aabb_corner_points(lo, hi)))
        return (
            tuple(self.position),
            tuple(self.rotation),
            tuple(lo.tolist()),
            tuple(hi.tolist()),
            oobb,
            corners,
        )


def _cut_back(b: Box, k: int, side: float, face: float) -> Box:
    """`b` with its face on `side` of axis `k` moved to `face` (offset from the centre)."""
    half = b.half.copy()
    half[k] = (face + b.half[k]) / 2
    return Box(b.center + b.rot[:, k] * side * (face - b.half[k]) / 2, half, b.rot)


def _round_parts(b: Box) -> Tuple[Box, ...]:
    """Round produce as three boxes crossing at its centre, each its full extent along one axis
    and ROUND_CORE of the others: a sphere in its box with the corners cut, whose outline runs
    inside the box's as THOR's apple, egg, lettuce, potato and tomato meshes do."""
    parts = []
    for axis in range(3):
        half = b.half * ROUND_CORE
        half[axis] = b.half[axis]
        parts.append(Box(b.center, half, b.rot))
    return tuple(parts)


def _lamp_parts(b: Box, thor2: bool = False) -> Tuple[Box, ...]:
    """A desk lamp as THOR's mesh stands: a low base, a thin stem and the shade on top
    (LAMP_* fractions of its box), so what lies beside its base under the shade stays in view;
    `thor2` (THOR 2.1.0 mode): the shade higher and the base narrower (LAMP_*_THOR2)."""
    lo, hi = b.aabb()
    h = hi[1] - lo[1]
    shade, base = (
        (LAMP_SHADE_BOTTOM_THOR2, LAMP_BASE_WIDTH_THOR2)
        if thor2
        else (LAMP_SHADE_BOTTOM, LAMP_BASE_WIDTH)
    )
    parts = []
    for y0, y1, frac in (
        (0.0, LAMP_BASE_TOP, base),
        (LAMP_BASE_TOP, shade, None),
        (shade, 1.0, 1.0),
    ):
        half = b.half.copy()
        if frac is None:  # the stem
            half[0], half[2] = min(0.012, b.half[0]), min(0.012, b.half[2])
        else:
            half[0], half[2] = b.half[0] * frac, b.half[2] * frac
        half[1] = max((y1 - y0) * h / 2, 1e-3)
        c = b.center.copy()
        c[1] = lo[1] + (y0 + y1) * h / 2
        parts.append(Box(c, half, b.rot))
    return tuple(parts)


def _tv_parts(b: Box) -> Tuple[Box, ...]:
    """A television as THOR's mesh stands: a thin screen panel centred in the box's depth (its
    shorter horizontal axis) over a narrow stand (TV_* fractions), so the top of the furniture
    under it shows in front of the screen (a dresser top a PutObject mask was recorded on)."""
    lo, hi = b.aabb()
    h = hi[1] - lo[1]
    d = 0 if b.half[0] < b.half[2] else 2  # the depth axis
    w = 2 - d
    panel, stand = b.half.copy(), b.half.copy()
    panel[d] *= TV_PANEL_DEPTH
    panel[1] = h * (1.0 - TV_PANEL_BOTTOM) / 2
    stand[d] *= TV_PANEL_DEPTH
    stand[w] *= TV_STAND_WIDTH
    stand[1] = max(h * TV_PANEL_BOTTOM / 2, 1e-3)
    pc, sc = b.center.copy(), b.center.copy()
    pc[1] = hi[1] - panel[1]
    sc[1] = lo[1] + stand[1]
    return Box(pc, panel, b.rot), Box(sc, stand, b.rot)


def _laptop_parts(b: Box, front: Tuple[float, float]) -> Tuple[Box, ...]:
    """An open laptop as THOR's mesh stands: a keyboard slab (LAPTOP_BASE_TOP of the height)
    and a screen panel (LAPTOP_SCREEN_DEPTH of the depth, the box's shorter horizontal axis)
    on the side away from `front`, so what lies behind it shows over the keyboard from the
    side or from behind the screen."""
    lo, hi = b.aabb()
    h = hi[1] - lo[1]
    d = 0 if b.half[0] < b.half[2] else 2  # the depth axis
    sign = -float(np.sign(np.array([front[0], 0.0, front[1]]) @ b.rot[:, d])) or -1.0
    base, screen = b.half.copy(), b.half.copy()
    base[1] = max(h * LAPTOP_BASE_TOP / 2, 1e-3)
    screen[d] *= LAPTOP_SCREEN_DEPTH
    bc = b.center.copy()
    bc[1] = lo[1] + base[1]
    sc = b.center + b.rot[:, d] * sign * (b.half[d] - screen[d])
    return Box(bc, base, b.rot), Box(sc, screen, b.rot)


def _drawn_out(b: Box, front: Tuple[float, float], dist: float) -> Box:
    """`b` extended by `dist` along the world xz direction `front` (its box axis nearest it)."""
    f = np.array([front[0], 0.0, front[1]])
    k = int(np.argmax(np.abs(f @ b.rot)))
    sign = float(np.sign(f @ b.rot[:, k])) or 1.0
    half = b.half.copy()
    half[k] += dist / 2
    return Box(b.center + b.rot[:, k] * sign * dist / 2, half, b.rot)


def _with_holes(b: Box, holes) -> Tuple[Box, ...]:
    """An axis-aligned slab with rectangular xz holes, as strips around each hole."""
    lo, hi = b.aabb()
    pieces = [(lo[0], hi[0], lo[2], hi[2])]
    for hx0, hx1, hz0, hz1 in holes:
        nxt = []
        for x0, x1, z0, z1 in pieces:
            if hx1 <= x0 or hx0 >= x1 or hz1 <= z0 or hz0 >= z1:
                nxt.append((x0, x1, z0, z1))
                continue
            if hx0 > x0:
                nxt.append((x0, hx0, z0, z1))
            if hx1 < x1:
                nxt.append((hx1, x1, z0, z1))
            cx0, cx1 = max(x0, hx0), min(x1, hx1)
            if hz0 > z0:
                nxt.append((cx0, cx1, z0, hz0))
            if hz1 < z1:
                nxt.append((cx0, cx1, hz1, z1))
        pieces = nxt
    return tuple(
        Box.axis_aligned((x0, lo[1], z0), (x1, hi[1], z1))
        for x0, x1, z0, z1 in pieces
        if x1 - x0 > 1e-3 and z1 - z0 > 1e-3
    )


def _shelving_parts(b: Box) -> Tuple[Box, ...]:
    """Open shelving: two end panels and a top; the boards are their own Shelf objects."""
    axis = 0 if b.half[0] >= b.half[2] else 2
    parts = []
    for sign in (-1.0, 1.0):
        half = b.half.copy()
        half[axis] = min(0.01, b.half[axis] * 0.1)
        off = np.zeros(3)
        off[axis] = sign * (b.half[axis] - half[axis])
        parts.append(Box(b.center + b.rot @ off, half, b.rot))
    top = b.half.copy()
    top[1] = min(0.01, b.half[1] * 0.1)
    parts.append(Box(b.center + b.rot @ np.array([0.0, b.half[1] - top[1], 0.0]), top, b.rot))
    return tuple(parts)


def _board(b: Box, offset: Optional[float]) -> Box:
    """A 2 cm board under the surface `offset` below an upright box's top (its bottom if None)."""
    lo, hi = b.aabb()
    top = lo[1] + min(0.02, hi[1] - lo[1]) if offset is None else hi[1] - offset
    half = b.half.copy()
    half[1] = max(min(0.01, (top - lo[1]) / 2), 0.005)
    c = b.center.copy()
    c[1] = top - half[1]
    return Box(c, half, b.rot)


def _truncated(b: Box, offset: float) -> Box:
    """The part of an upright box below `offset` from its top, at least 2 cm thick. Its top
    stays at `offset` below the box top even when thinner than that: a surface learned from
    contents resting at the box bottom (a shelf's board) must not poke 1 cm above where they
    rest, or nothing can be put there ("No valid positions")."""
    lo, hi = b.aabb()
    top = hi[1] - offset
    half = b.half.copy()
    half[1] = max((top - lo[1]) / 2, 0.01)
    c = b.center.copy()
    c[1] = top - half[1]
    return Box(c, half, b.rot)


def _table_parts(
    b: Box,
    offset: Optional[float],
    object_type: str,
    holes: Tuple[Tuple[float, float, float, float], ...] = (),
) -> Tuple[Box, ...]:
    """A top (or seat) slab and four legs, so things under tables stay visible; `holes`
    (world xz rectangles, only on axis-aligned tables) are cut out of the slab and drop the
    legs standing in them."""
    lo, hi = b.aabb()
    height = hi[1] - lo[1]
    slab = min(0.04, height * 0.2)
    if offset is None and object_type == "Chair":
        offset = height * (1.0 - CHAIR_SEAT_BAND[1])
        slab = height * (CHAIR_SEAT_BAND[1] - CHAIR_SEAT_BAND[0])
    top = hi[1] - (offset or 0.0)
    seat_half = b.half.copy()
    seat_half[1] = slab / 2
    seat_c = b.center.copy()
    seat_c[1] = top - slab / 2
    parts = (
        list(_with_holes(Box(seat_c, seat_half, b.rot), holes))
        if holes
        else [Box(seat_c, seat_half, b.rot)]
    )
    leg_h = max(top - slab - lo[1], 0.0)
    if leg_h > 0.05:
        leg = np.array([min(0.03, b.half[0] * 0.2), leg_h / 2, min(0.03, b.half[2] * 0.2)])
        for sx in (-1, 1):
            for sz in (-1, 1):
                local = np.array([sx * (b.half[0] - leg[0]), 0.0, sz * (b.half[2] - leg[2])])
                c = b.center + b.rot @ local
                c[1] = lo[1] + leg_h / 2
                if not any(x0 <= c[0] <= x1 and z0 <= c[2] <= z1 for x0, x1, z0, z1 in holes):
                    parts.append(Box(c, leg, b.rot))
    return tuple(parts)


def yaw_front(yaw_deg: float) -> np.ndarray:
    """An object's local +z (its front) in world xz for a yaw in degrees (Unity's convention)."""
    th = np.radians(yaw_deg)
    return np.array([np.sin(th), np.cos(th)])


def _coffee_machine_parts(lo: np.ndarray, hi: np.ndarray, yaw: float) -> Tuple[Box, ...]:
    """A coffee machine with its mug bay open at the front (see COFFEE_MUG_* constants):
    the back block, the head over the bay and the base under it."""
    d = yaw_front(yaw)
    k, s = (0, np.sign(d[0]) or 1.0) if abs(d[0]) >= abs(d[1]) else (2, np.sign(d[1]) or 1.0)
    c, h = (lo[k] + hi[k]) / 2, (hi[k] - lo[k]) / 2
    split = c + s * COFFEE_BAY_BACK * h
    back_lo, back_hi, bay_lo, bay_hi = lo.copy(), hi.copy(), lo.copy(), hi.copy()
    if s > 0:
        back_hi[k], bay_lo[k] = split, split
    else:
        back_lo[k], bay_hi[k] = split, split
    head_lo, base_hi = bay_lo.copy(), bay_hi.copy()
    head_lo[1] = lo[1] + COFFEE_BAY_TOP * (hi[1] - lo[1])
    base_hi[1] = lo[1] + COFFEE_MUG_BASE
    return (
        Box.axis_aligned(back_lo, back_hi),
        Box.axis_aligned(head_lo, bay_hi),
        Box.axis_aligned(bay_lo, base_hi),
    )


def _front_face_name(fx: float, fz: float) -> str:
    if abs(fx) >= abs(fz):
        return "+x" if fx > 0 else "-x"
    return "+z" if fz > 0 else "-z"


_FACES = ("bottom", "top", "+x", "-x", "+z", "-z")


def _low_walls(parts: Tuple[Box, ...], b: Box, fraction: float) -> Tuple[Box, ...]:
    """`_hollow_parts` of `b` with the side walls cut to `fraction` of their height from the
    bottom (a bowl's sloped sides hide less of its floor than walls up to the rim)."""
    out = []
    for q in parts:
        if abs(float((q.center - b.center) @ b.rot[:, 1])) < 1e-6:  # a side wall (full height)
            half = q.half.copy()
            half[1] = q.half[1] * fraction
            q = Box(q.center - b.rot[:, 1] * (q.half[1] - half[1]), half, q.rot)
        out.append(q)
    return tuple(out)


def _hollow_parts(b: Box, open_faces: Tuple[str, ...]) -> Tuple[Box, ...]:
    """Five (or fewer) thin walls of a box, in its own frame; 'top' is local +y."""
    parts: List[Box] = []
    h = b.half
    w = np.minimum(np.full(3, WALL / 2), h * 0.1)  # half-thickness of each wall
    faces = {
        "bottom": (1, -1),
        "top": (1, 1),
        "+x": (0, 1),
        "-x": (0, -1),
        "+z": (2, 1),
        "-z": (2, -1),
    }
    for name, (axis, sign) in faces.items():
        if name in open_faces:
            continue
        half = h.copy()
        half[axis] = w[axis]
        offset = np.zeros(3)
        offset[axis] = sign * (h[axis] - w[axis])
        parts.append(Box(b.center + b.rot @ offset, half, b.rot))
    return tuple(parts)


def aabb_corner_points(lo: np.ndarray, hi: np.ndarray) -> List[List[float]]:
    c, e = (lo + hi) / 2, (hi - lo) / 2
    return (c + AABB_CORNER_SIGNS * e).tolist()
