"""Furniture shapes the scene's boxes hide: holes cut in counter and table tops, cabinets
lowered under basins. Run once when a `World` is built (the boxes are THOR's metadata AABBs,
the recorded layout floor and THOR-placed contents show where the real meshes are not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Tuple

import numpy as np

from .constants import (
    AGENT_RADIUS,
    BOWL_BASIN_TYPES,
    COUNTER_OVERHANG,
    COUNTER_TABLE_REACH,
    LAYOUT_CELL_SIZE,
    OPEN_FURNITURE_TYPES,
    OPEN_MESH_TYPES,
    ROUND_TYPES_THOR2,
    TABLE_TOPS,
    TOILET_HALF_SIZE_THOR2,
    TOILET_MAX_HALF_WIDTH_THOR2,
    WINDOW_HANGING_GAP,
    WINDOW_PANE_MIN_DEPTH,
)
from .geometry import Box
from .objects import WALL, SimObject, aabb_corner_points

if TYPE_CHECKING:
    from .world import World


def cut_counter_holes(w: "World") -> None:
    """Cut sink basins out of the counter slabs that cover them."""
    basins = [o for o in w.objects.values() if o.object_type in ("Sink", "SinkBasin")]
    for o in list(w.objects.values()):
        if o.object_type != "CounterTop" or o.box.upright() is None:
            continue
        lo, hi = o.aabb
        holes = []
        for b in basins:
            blo, bhi = b.aabb
            if bhi[0] <= lo[0] or blo[0] >= hi[0] or bhi[2] <= lo[2] or blo[2] >= hi[2]:
                continue
            if blo[1] > hi[1] or bhi[1] < lo[1] - 0.3:
                continue
            if b.object_type == "SinkBasin" or not any(
                x.object_id.startswith(b.object_id + "|") for x in basins
            ):
                holes.append((float(blo[0]), float(bhi[0]), float(blo[2]), float(bhi[2])))
        # every mode: the agent walks the layout floor in rearrangement too (FloorPlan8's
        # L-shaped counter otherwise roofs the floor and hides every cabinet under it)
        if w.layout:
            holes += layout_holes(w, lo, hi)
            holes += overhang_holes(w, lo, hi)
        if holes:
            w.objects[o.object_id] = o.with_changes(holes=tuple(holes))


def layout_holes(
    w: "World", lo: np.ndarray, hi: np.ndarray
) -> List[Tuple[float, float, float, float]]:
    """Floor the recorded layout walks on, inside a counter's box: an L-shaped or island
    counter is one box in THOR's metadata, and its slab must not roof the floor (and the
    cabinets) the agent stands at. One xz rectangle per row run of such cells, each cell
    widened by the agent's radius (the real counter edge is at least that far away)."""
    if not w.layout:
        return []
    g, r = LAYOUT_CELL_SIZE, AGENT_RADIUS
    rows: Dict[int, List[int]] = {}
    for i, k in sorted(w.layout):
        if lo[0] < i * g < hi[0] and lo[2] < k * g < hi[2]:
            rows.setdefault(k, []).append(i)
    holes = []
    for k, cols in rows.items():
        start = prev = cols[0]
        for i in cols[1:] + [None]:
            if i is not None and i == prev + 1:
                prev = i
                continue
            holes.append((start * g - r, prev * g + r, k * g - r, k * g + r))
            if i is not None:
                start = prev = i
    return holes


def overhang_holes(
    w: "World", lo: np.ndarray, hi: np.ndarray
) -> List[Tuple[float, float, float, float]]:
    """A counter overhangs the cabinets and drawers under it by COUNTER_OVERHANG only: the
    strip from there to the layout floor in front of them (at most LAYOUT_CELL_SIZE + the
    agent radius away, where `_layout_holes` starts) is open, so their fronts show."""
    if not w.layout:
        return []
    g, r, reach = LAYOUT_CELL_SIZE, AGENT_RADIUS, LAYOUT_CELL_SIZE + AGENT_RADIUS
    holes = []
    for o in w.objects.values():
        if o.object_type not in ("Cabinet", "Drawer") or not o.is_static:
            continue
        clo, chi = o.aabb
        if (
            not (lo[1] - 0.3 <= chi[1] <= lo[1] + 0.01)
            or chi[0] <= lo[0]
            or clo[0] >= hi[0]
            or chi[2] <= lo[2]
            or clo[2] >= hi[2]
        ):
            continue  # not a cabinet right under this counter
        fx, fz = o.front
        k, s = (0, fx) if abs(fx) > abs(fz) else (2, fz)
        face = (chi if s > 0 else clo)[k] + s * COUNTER_OVERHANG
        lat = 2 - k
        cells = [
            c
            for c in w.layout
            if clo[lat] <= c[lat // 2] * g <= chi[lat] and 0 < s * (c[k // 2] * g - face) <= reach
        ]
        if not cells:
            continue
        edge = min(s * (c[k // 2] * g) for c in cells) * s - s * r
        a, b = sorted((face, edge))
        holes.append((a, b, clo[2], chi[2]) if k == 0 else (clo[0], chi[0], a, b))
    return holes


def cut_table_holes(w: "World") -> None:
    """Open a table's or desk's top where the scene shows it has none. THOR's box of an
    L-shaped desk is the AABB of its whole mesh and covers the floor inside the L, so
    objects on a chair there were hidden under a phantom top. The top is cut over recorded
    layout floor inside the box and over furniture standing wholly inside its footprint
    and rising through the top (that chair). Axis-aligned tables only; the holes hold
    while the table stays where it was cut (see `SimObject.holes_at`)."""
    for o in list(w.objects.values()):
        if o.object_type not in TABLE_TOPS or o.pickupable or o.box.upright() is None:
            continue
        if min(abs(o.box.rot[0, 0]), abs(o.box.rot[0, 2])) > 0.02:
            continue  # yawed off the axes: holes are axis-aligned rectangles
        lo, hi = o.aabb
        holes = layout_holes(w, lo, hi) + risen_through(w, o, lo, hi)
        if holes:
            w.objects[o.object_id] = o.with_changes(
                holes=tuple(holes), holes_at=None if o.is_static else (o.position, o.rotation)
            )


def risen_through(
    w: "World", table: SimObject, lo: np.ndarray, hi: np.ndarray
) -> List[Tuple[float, float, float, float]]:
    """xz footprints of furniture standing wholly inside `table`'s footprint, from below
    its top to above it: a solid top could not be there."""
    top = hi[1] - (table.surface_offset or 0.0)
    out = []
    for o in w.objects.values():
        if (
            o.pickupable
            or o.object_id == table.object_id
            or o.object_type == "Floor"
            or not o.rendered
        ):
            continue
        olo, ohi = o.aabb
        if olo[1] >= top - 0.05 or ohi[1] <= hi[1] + 0.05:
            continue
        if np.all(olo[[0, 2]] >= lo[[0, 2]] + 0.02) and np.all(ohi[[0, 2]] <= hi[[0, 2]] - 0.02):
            out.append((float(olo[0]), float(ohi[0]), float(olo[2]), float(ohi[2])))
    return out


def lower_basin_cabinets(w: "World") -> None:
    """Lower the tops of cabinets that a sink basin dips into (THOR's are hollow there)."""
    basins = [o for o in w.objects.values() if o.object_type in ("SinkBasin", "BathtubBasin")]
    for o in list(w.objects.values()):
        if o.object_type not in ("Cabinet", "Drawer") or not o.is_static:
            continue
        lo, hi = o.aabb
        top = hi[1]
        for b in basins:
            blo, bhi = b.aabb
            if bhi[0] <= lo[0] or blo[0] >= hi[0] or bhi[2] <= lo[2] or blo[2] >= hi[2]:
                continue
            if lo[1] < blo[1] < top:
                top = blo[1] - 0.005
        if top < hi[1]:
            world = Box.axis_aligned(lo, (hi[0], top, hi[2]))
            r = o.rot_matrix
            local = Box(r.T @ (world.center - np.asarray(o.position)), world.half, r.T @ world.rot)
            w.objects[o.object_id] = o.with_changes(local_box=local)


def window_panes(w: "World") -> None:
    """A Window whose box is deep along both horizontal axes (a corner window: its box spans
    the corner of the room, down over the counter and sink below it) is drawn as two panes,
    the box faces on the walls' side (away from the free floor), so what stands in that
    corner shows (a sink basin ALFRED's PutObject mask was recorded on). THOR 2.1.0 mode."""
    if not w.profile.layout_clears_moveables:
        return
    free = w.free_cells()
    if not free:
        return
    room = np.mean(np.array(list(free), dtype=float), axis=0) * w.grid_size
    for o in list(w.objects.values()):
        b = o.box
        if (
            o.object_type != "Window"
            or min(b.half[0], b.half[2]) < WINDOW_PANE_MIN_DEPTH
            or b.upright() is None
        ):
            continue
        away = (np.array([room[0], b.center[1], room[1]]) - b.center) @ b.rot
        panes = tuple(("-" if away[k] > 0 else "+") + "xz"[k // 2] for k in (0, 2))
        w.objects[o.object_id] = o.with_changes(panes=panes)


def windows_behind_hangings(w: "World") -> None:
    """A Window whose box holds another object (blinds hang inside the window's box, which
    spans the wall's thickness) is cut back to just behind what hangs in it, on the side
    facing the free floor: THOR's window is glass behind its blinds, so the blinds show and
    their openness is seen, and the window still shows where they leave it bare. Today's
    scenes only (ALFRED's THOR 2.1.0 mode keeps the box its recorded masks were checked on)."""
    if w.profile.layout_clears_moveables:
        return
    others = [o for o in w.objects.values() if o.object_type != "Window"]
    for o in list(w.objects.values()):
        b = o.box
        if o.object_type != "Window" or b.upright() is None:
            continue
        lo, hi = o.aabb
        held = [
            x for x in others if np.all(x.aabb[0] >= lo - 0.01) and np.all(x.aabb[1] <= hi + 0.01)
        ]
        if not held:
            continue
        k = 0 if b.half[0] <= b.half[2] else 2  # the thin axis: across the wall
        axis = b.rot[:, k]
        # the room lies away from the nearer of the floor's faces the window's wall stands on
        # (the build's free cells are not asked here: they are cached before the scene's
        # poses are recorded)
        j = int(np.argmax(np.abs(axis)))
        inward = 1.0 if b.center[j] - w.room_lo[j] < w.room_hi[j] - b.center[j] else -1.0
        side = inward * float(np.sign(axis[j]))
        # the wall-most point of what it holds, along the axis towards the room
        back = min(
            float(np.min(side * ((np.array(aabb_corner_points(*x.aabb)) - b.center) @ axis)))
            for x in held
        )
        face = max(back - WINDOW_HANGING_GAP, -b.half[k] + WALL)
        w.objects[o.object_id] = o.with_changes(drawn_to=(k, side, float(face)))


def open_mesh_shapes(w: "World") -> None:
    """Boxes, Laptops and DeskLamps are drawn as THOR's meshes stand (`SimObject.thor2_mesh`):
    an open Box with its flaps up shows what lies in it from above (as a shell with a side
    door it hid a keychain that ALFRED's recorded pickup mask found through its top), an open
    Laptop is a keyboard and a screen (as a solid box it hid a book behind it), a DeskLamp's
    shade is higher and its base narrower (a mug behind a shade, a pencil beside a base).
    THOR 2.1.0 mode only (today's mode keeps its shapes)."""
    if not w.profile.layout_clears_moveables:
        return
    for o in list(w.objects.values()):
        if o.object_type in OPEN_MESH_TYPES:
            w.objects[o.object_id] = o.with_changes(thor2_mesh=True)


def open_enclosing_furniture(w: "World") -> None:
    """A TV stand, dresser or bed whose box wholly holds another piece of furniture below its
    top (a shelf or lower table level THOR's scene keeps as its own object; the desk and
    dresser under a loft bed) is open there: drawn as a top on legs (`shape_type`), so what
    rests on that inner furniture is not hidden in a solid box (ALFRED's poses and the official
    rearrangement episodes put things on those levels)."""
    inner = [
        o
        for o in w.objects.values()
        if not o.pickupable
        and o.flags.get("receptacle")
        and not o.flags.get("openable")
        and o.box.upright() is not None
    ]
    for o in list(w.objects.values()):
        if (
            (o.shape_type or o.object_type) not in OPEN_FURNITURE_TYPES
            or o.pickupable
            or o.box.upright() is None
        ):
            continue
        lo, hi = o.aabb
        for s in inner:
            slo, shi = s.aabb
            if (
                s.object_id != o.object_id
                and np.all(slo[[0, 2]] >= lo[[0, 2]] - 0.02)
                and np.all(shi[[0, 2]] <= hi[[0, 2]] + 0.02)
                and slo[1] >= lo[1] - 0.02
                and shi[1] <= hi[1] - 0.05
            ):
                w.objects[o.object_id] = o.with_changes(shape_type="SideTable")
                break


def narrow_toilets(objs: Dict[str, SimObject]) -> Dict[str, SimObject]:
    """A Toilet box wider than TOILET_MAX_HALF_WIDTH_THOR2 (FloorPlan421-430's asset box is
    1.1 x 1.2 m, reaching through the wall and over the toilet-paper hanger and garbage can
    beside it) is drawn as the 401-420 asset's bowl and tank (TOILET_HALF_SIZE_THOR2), its
    front kept (the object's +z); so what THOR's scene places beside the toilet shows and takes
    ALFRED's recorded masks. THOR 2.1.0 mode (`thor2_rules.use_thor2_rules`)."""
    out = dict(objs)
    for oid, o in objs.items():
        lb = o.local_box
        turn = np.abs(lb.rot)
        # the box may be turned by a multiple of 90 degrees about y in the object's frame (a
        # toilet stood at yaw 90/180/270 keeps a world-aligned box): its extents along the
        # object's own axes are then the permuted half sizes
        if (
            o.object_type != "Toilet"
            or not np.allclose(turn, np.round(turn), atol=1e-3)
            or abs(lb.rot[1, 1]) < 0.5
        ):
            continue
        half = np.round(turn) @ lb.half
        if half[0] <= TOILET_MAX_HALF_WIDTH_THOR2:
            continue
        hx, hz = min(half[0], TOILET_HALF_SIZE_THOR2[0]), min(half[2], TOILET_HALF_SIZE_THOR2[1])
        center = np.array([lb.center[0], lb.center[1], lb.center[2] + half[2] - hz])
        out[oid] = o.with_changes(local_box=Box(center, np.array([hx, half[1], hz]), np.eye(3)))
    return out


def open_counters_over_tables(objs: Dict[str, SimObject]) -> Dict[str, SimObject]:
    """A table (TABLE_TOPS) standing wholly inside a counter's box with its top less than
    COUNTER_TABLE_REACH below the slab is a piece of its own at counter height (FloorPlan3's
    side table inside the L-shaped counter's AABB): the slab is open over its footprint, so the
    table's top takes ALFRED's recorded PutObject masks, not the counter over it. THOR 2.1.0
    mode (`thor2_rules.use_thor2_rules`)."""
    out = dict(objs)
    tables = [t for t in objs.values() if t.object_type in TABLE_TOPS and not t.pickupable]
    for oid, o in objs.items():
        if o.object_type != "CounterTop" or o.box.upright() is None:
            continue
        lo, hi = o.aabb
        holes = [
            (float(tlo[0]), float(thi[0]), float(tlo[2]), float(thi[2]))
            for tlo, thi in (t.aabb for t in tables)
            if lo[0] <= tlo[0]
            and thi[0] <= hi[0]
            and lo[2] <= tlo[2]
            and thi[2] <= hi[2]
            and lo[1] - COUNTER_TABLE_REACH < thi[1] <= hi[1]
        ]
        if holes:
            out[oid] = o.with_changes(holes=tuple(o.holes) + tuple(holes))
    return out


def bowl_basins(objs: Dict[str, SimObject]) -> Dict[str, SimObject]:
    """SinkBasins (BOWL_BASIN_TYPES) drawn with low side walls (BASIN_WALL_HEIGHT_THOR2, via
    `SimObject.thor2_mesh`): THOR's bowl hides less of its floor near the rim. THOR 2.1.0 mode
    (`thor2_rules.use_thor2_rules`)."""
    return _drawn_as_mesh(objs, BOWL_BASIN_TYPES)


def round_produce(objs: Dict[str, SimObject]) -> Dict[str, SimObject]:
    """Apples, eggs, lettuces, potatoes and tomatoes drawn round (`objects._round_parts`), not
    as their solid boxes, whose corners took a sink's PutObject mask around a lettuce in its
    basin (FloorPlan21) and a first lettuce's in a pick-two task (FloorPlan26). THOR 2.1.0 mode
    (`thor2_rules.use_thor2_rules`); copies posed later inherit the flag."""
    return _drawn_as_mesh(objs, ROUND_TYPES_THOR2)


def _drawn_as_mesh(objs: Dict[str, SimObject], types) -> Dict[str, SimObject]:
    """The objects with `thor2_mesh` set on those of `types` (objects already flagged kept as they are)."""
    return {
        oid: o.with_changes(thor2_mesh=True) if o.object_type in types and not o.thor2_mesh else o
        for oid, o in objs.items()
    }
