"""Rigid placement and state-change rules (THOR's physics, reduced to what tasks observe).

No dynamics are simulated: objects are placed at rest on surfaces, fall straight down when
dropped, and appliances change their contents' state as soon as they are switched on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .constants import (
    ALWAYS_PLACE_UPRIGHT,
    BREAK_DROP_HEIGHT,
    CHAIR_SEAT_BAND,
    COFFEE_MUG_BASE,
    COFFEE_MUG_FRONT,
    COLD_SOURCES,
    FRIDGE_LEVEL_MERGE,
    FRIDGE_SHELF_HEIGHT,
    HEAT_SOURCES,
    IN_RECEPTACLES,
    MICROWAVE_CAVITY_X,
    MICROWAVE_FLOOR,
    OBJECT_SPECIFIC_RECEPTACLES,
    OPEN_TOP_RECEPTACLES,
    SOFT_TYPES,
    TABLE_LIKE,
    THOR_SPAWN_GRID,
)
from .geometry import Box, euler_to_matrix
from .objects import WALL, SimObject, yaw_front
from .world import World

REST_GAP = 0.002  # objects rest this far above the surface they are placed on


def pose_box(obj: SimObject, position: Sequence[float], rotation: Sequence[float]) -> Box:
    r = euler_to_matrix(rotation)
    return Box(
        np.asarray(position, float) + r @ obj.local_box.center,
        obj.local_box.half,
        r @ obj.local_box.rot,
    )


def move_with_contents(
    w: World, oid: str, position: Sequence[float], rotation: Sequence[float], **changes
) -> None:
    """Move an object and carry everything resting in/on it rigidly along."""
    obj = w.objects[oid]
    old_r = obj.rot_matrix
    new_r = euler_to_matrix(rotation)
    delta_r = new_r @ old_r.T
    old_p = np.asarray(obj.position)
    new_p = np.asarray(position, float)
    for cid in w.descendants(oid):
        c = w.objects[cid]
        cp = new_p + delta_r @ (np.asarray(c.position) - old_p)
        from .geometry import matrix_to_euler

        crot = (
            matrix_to_euler(delta_r @ c.rot_matrix)
            if not np.allclose(delta_r, np.eye(3))
            else c.rotation
        )
        w.update(cid, position=tuple(float(v) for v in cp), rotation=tuple(float(v) for v in crot))
    w.update(
        oid,
        position=tuple(float(v) for v in new_p),
        rotation=tuple(float(v) for v in rotation),
        **changes,
    )


def surface_height(w: World, rec: SimObject, spawn: bool = False) -> float:
    """Where things put on/in `rec` rest (the bottom of their box). `spawn`: InitialRandomSpawn's
    older rule for table-likes without a learned height (the hollow-container fall-through: the
    floor between the legs), kept so the shipped generated data (data/alfred_lite) regenerates
    byte for byte; PutObject uses the top."""
    lo, hi = rec.aabb
    shape = rec.shape_type or rec.object_type
    if rec.object_type == "Fridge":  # its shelf (see FRIDGE_SHELF_HEIGHT)
        if rec.surface_offset is not None:
            return float(hi[1] - rec.surface_offset)
        return float(min(lo[1] + FRIDGE_SHELF_HEIGHT, hi[1] - 0.3))
    if rec.object_type in IN_RECEPTACLES or rec.object_type == "Floor":
        return float(lo[1] + 0.02) if rec.object_type != "Floor" else float(hi[1])
    if rec.surface_offset is not None:
        if rec.object_type in OPEN_TOP_RECEPTACLES:  # never inside the drawn bottom wall
            return float(max(hi[1] - rec.surface_offset, lo[1] + WALL))
        return float(hi[1] - rec.surface_offset)
    if shape == "Shelf":  # only the board at the bottom of its box is drawn
        return float(lo[1] + min(0.02, hi[1] - lo[1]))
    if shape == "Chair":  # seat drawn in CHAIR_SEAT_BAND when THOR recorded nothing on it
        return float(lo[1] + CHAIR_SEAT_BAND[1] * (hi[1] - lo[1]))
    if (
        shape in TABLE_LIKE and not spawn
    ):  # a top slab on legs (not hollow): its top, not the floor between the legs
        return float(hi[1])
    if len(rec.parts) > 1 and not rec.articulated:  # hollow: rest on the inner bottom
        return float(lo[1] + min(0.02, (hi[1] - lo[1]) * 0.25))
    return float(hi[1])


def microwave_cavity(rec: SimObject) -> SimObject:
    """`rec` (a Microwave) reduced to its cavity for placement: the raised floor and the side
    away from the control panel (MICROWAVE_FLOOR, MICROWAVE_CAVITY_X), full depth. The result
    only stands in for `rec` in find_placement; it is never put into the world."""
    b = rec.box
    front = np.array([rec.front[0], 0.0, rec.front[1]])
    k = 0 if abs(front @ b.rot[:, 0]) > abs(front @ b.rot[:, 2]) else 2
    sf = 1.0 if front @ b.rot[:, k] >= 0 else -1.0
    # the lateral axis that is +x when the door faces +z (a yaw of 90 deg maps x to -z)
    lateral = sf * b.rot[:, 0] if k == 2 else -sf * b.rot[:, 2]
    lat_half = b.half[0] if k == 2 else b.half[2]
    a0, a1 = MICROWAVE_CAVITY_X
    shift = lateral * lat_half * (a0 + a1) / 2
    half = b.half.copy()
    half[0 if k == 2 else 2] = lat_half * (a1 - a0) / 2
    lo_y = b.center[1] - b.half[1]
    floor = lo_y + MICROWAVE_FLOOR * 2 * b.half[1] - 0.02  # surface_height adds 2 cm back
    half[1] = (b.center[1] + b.half[1] - floor) / 2
    centre = b.center + shift
    centre[1] = floor + half[1]
    r = rec.rot_matrix
    local = Box(r.T @ (centre - np.asarray(rec.position)), half, r.T @ b.rot)
    return rec.with_changes(local_box=local)


def open_drawer_region(rec: SimObject) -> SimObject:
    """An open Drawer where it is drawn, slid out of its furniture: PutObject places inside
    that box (the closed box lies inside the dresser or desk that holds the drawer, whose solid
    box left no free spot: "No valid positions" for a card or a newspaper in an open dresser
    drawer). Stands in for `rec` in find_placement only; never put into the world."""
    if rec.object_type != "Drawer" or rec.openness <= 0:
        return rec
    b = rec.box
    r = rec.rot_matrix
    centre = b.center + rec.drawer_shift()
    return rec.with_changes(
        local_box=Box(r.T @ (centre - np.asarray(rec.position)), b.half, r.T @ b.rot)
    )


@dataclass(frozen=True)
class PlacementSearch:
    """How `find_placement` searches: PutObject sets the agent-side options (`tilt`, `seen`,
    `upright_first`, `held_yaw_first`, `thor_grid_fallback`, `shelves`), InitialRandomSpawn
    the spawn ones (`rng`, `attempts`, `spawn`); the defaults change nothing."""

    agent_xz: Optional[np.ndarray] = None
    max_dist: Optional[float] = None
    rng: Optional[np.random.Generator] = None
    yaws: Optional[Sequence[float]] = None
    ignore: Iterable[str] = ()
    attempts: Optional[int] = None
    tilt: bool = False
    seen: Optional[Callable[[Box], bool]] = None
    max_unseen: int = 60
    spawn: bool = False
    upright_first: bool = False
    held_yaw_first: bool = False
    thor_grid_fallback: bool = False
    shelves: Optional[Tuple[Sequence[float], np.ndarray, Callable[[np.ndarray], bool]]] = None


def find_placement(
    w: World,
    obj: SimObject,
    rec: SimObject,
    search: PlacementSearch,
) -> Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]]:
    """A collision-free resting pose for `obj` in/on `rec`, nearest to the agent first.
    The options are `search`'s fields: `tilt` adds PutObject's sideways orientations
    (InitialRandomSpawn stays upright).
    With `seen`, the first free pose the camera sees wins; the first free one if none of
    `max_unseen` spots (one orientation each) is seen. `upright_first`: every spot is tried
    upright before any spot is tried on its side. THOR tries the tilts per spot too, but its
    real meshes let an upright pose fit at the nearest spot; our boxes (a basin's rim walls)
    reject it there, and a knife or sponge stood on end won the next spot (PutObject into a
    basin in THOR 2.1.0 mode). `held_yaw_first` (with `upright_first`): each upright yaw in
    turn at every spot before the next yaw, so the first yaw (the agent's, as held) wins
    wherever it fits (`_passes`). `thor_grid_fallback`: where no spot of our grid holds the
    object, THOR's own spawn grid is tried (`_spots`; PutObject in THOR 2.1.0 mode).
    `shelves` = (levels, eye, sees): spots on every level, those `sees` keeps first, each group
    nearest to `eye` in 3D (`_shelf_spots`; replaces `seen` and the agent order).

    THOR's corner rule: for enclosing receptacles all 8 corners must lie inside the
    receptacle, elsewhere at least 4 must lie over its footprint.
    """
    rb = rec.box
    rlo, rhi = rec.aabb
    base_y = surface_height(w, rec, search.spawn)
    rx, rz = rb.rot[:, 0], rb.rot[:, 2]
    hx, hz = rb.half[0], rb.half[2]
    if abs(rb.rot[1, 1]) < 0.99:  # tilted receptacle: use its AABB footprint
        rx, rz = np.array([1.0, 0, 0]), np.array([0, 0, 1.0])
        hx, hz = (rhi - rlo)[0] / 2, (rhi - rlo)[2] / 2
    centre = (rlo + rhi) / 2
    rotations = _candidate_rotations(obj, search.yaws, search.tilt)
    # The receptacle itself is NOT ignored: resting on it must not intersect its walls.
    ignore_set = set(search.ignore) | {obj.object_id} | set(w.descendants(obj.object_id))
    passes = _passes(
        rotations,
        len(_candidate_rotations(obj, search.yaws, False)),
        search.upright_first,
        search.held_yaw_first,
    )
    seen = search.seen
    for thor_grid in (False, True) if search.thor_grid_fallback else (False,):
        grid = _spots(centre, rx, rz, hx, hz, thor_grid)
        if search.shelves is not None:
            grid, seen = _shelf_spots(grid, *search.shelves), None
        else:
            grid = _order_spots(grid, search.agent_xz, search.max_dist, search.rng, search.attempts)
            grid[:, 1] = base_y
        for rots in passes:
            pose = (
                _first_pose(w, obj, rec, grid, rots, ignore_set, seen, search.max_unseen)
                if rots
                else None
            )
            if pose is not None:
                return pose
    return None


def _passes(
    rotations: List[Tuple[float, float, float]],
    n_up: int,
    upright_first: bool,
    held_yaw_first: bool,
) -> List[List[Tuple[float, float, float]]]:
    """The orientation groups find_placement scans the spots with, one group after another.
    THOR 2.1.0 left a knife or ladle put into a basin along the agent's view wherever that
    fitted (all 5 knife and 3 ladle pickup masks after a basin put in the 316 ALFRED
    trajectories ran along the view); the nearest spot taking it across the view won here."""
    if upright_first and held_yaw_first:
        return [[r] for r in rotations[:n_up]] + [rotations[n_up:]]
    if upright_first:
        return [rotations[:n_up], rotations[n_up:]]
    return [rotations]


def _spots(
    centre: np.ndarray, rx: np.ndarray, rz: np.ndarray, hx: float, hz: float, thor_grid: bool
) -> np.ndarray:
    """Candidate spots over a receptacle's footprint: a 5 cm grid (10 cm on large ones) from
    one corner, or THOR's spawn grid (`thor_grid`): 9 x 9 points from edge to edge
    (`Contains.GetValidSpawnPoints`), symmetric about the centre. A pencil fits a 17 cm bowl
    only stood up at its centre, which the 5 cm grid from its corner misses by 1.5 cm."""
    if thor_grid:
        us, vs = np.linspace(-hx, hx, THOR_SPAWN_GRID), np.linspace(-hz, hz, THOR_SPAWN_GRID)
    else:
        step = 0.05 if max(hx, hz) < 1.5 else 0.1
        us = np.arange(-hx, hx + 1e-9, step)
        vs = np.arange(-hz, hz + 1e-9, step)
    uu, vv = np.meshgrid(us, vs, indexing="ij")
    grid = centre + uu.reshape(-1, 1) * rx + vv.reshape(-1, 1) * rz
    return grid if len(grid) else centre[None]


def _order_spots(
    grid: np.ndarray,
    agent_xz: Optional[np.ndarray],
    max_dist: Optional[float],
    rng: Optional[np.random.Generator],
    attempts: Optional[int],
) -> np.ndarray:
    """Nearest to the agent first (within `max_dist`), else in `rng`'s order; the first
    `attempts` of them."""
    if agent_xz is not None:
        d = np.hypot(grid[:, 0] - agent_xz[0], grid[:, 2] - agent_xz[1])
        if max_dist is not None:
            grid = grid[d <= max_dist]
            d = d[d <= max_dist]
        order = np.lexsort((grid[:, 2], grid[:, 0], np.round(d, 6)))
        grid = grid[order]
    elif rng is not None:
        grid = grid[rng.permutation(len(grid))]
    if attempts is not None:
        grid = grid[:attempts]
    return grid


def _shelf_spots(
    flat: np.ndarray, levels: Sequence[float], eye: np.ndarray, sees: Callable[[np.ndarray], bool]
) -> np.ndarray:
    """THOR's spawn points of a receptacle with several levels (a fridge's shelves): the spots
    of every level (their y), those `sees` keeps first, each group nearest to `eye` in 3D."""
    grid = np.concatenate(
        [np.column_stack([flat[:, 0], np.full(len(flat), y), flat[:, 2]]) for y in levels]
    )
    d = np.linalg.norm(grid - eye, axis=1)
    grid = grid[np.lexsort((grid[:, 1], grid[:, 2], grid[:, 0], np.round(d, 6)))]
    vis = np.array([sees(p) for p in grid], dtype=bool)
    return np.concatenate([grid[vis], grid[~vis]])


def fridge_levels(w: World, rec: SimObject, holding: str) -> List[float]:
    """A Fridge's shelf levels: its default shelf (`surface_height`) and every height its
    contents rest at now (bottoms within FRIDGE_LEVEL_MERGE are one level). THOR 2.1.0's fridge
    has a trigger box on each shelf, and PutObject takes spawn points on all of them; ours is
    one box, so the levels are read off what THOR's scene keeps in it."""
    lo, hi = rec.aabb
    ys = [surface_height(w, rec)]
    for o in w.objects.values():
        if o.enabled and o.pickupable and o.object_id != holding and not o.is_picked_up:
            if np.all(o.box.center >= lo) and np.all(o.box.center <= hi):
                ys.append(float(o.aabb[0][1]))
    out: List[float] = []
    for y in sorted(ys):
        if not out or y - out[-1] > FRIDGE_LEVEL_MERGE:
            out.append(y)
    inside = [y for y in out if lo[1] + 0.05 <= y <= hi[1] - 0.1]
    return inside or [ys[0]]


def _first_pose(
    w: World,
    obj: SimObject,
    rec: SimObject,
    grid: np.ndarray,
    rotations: List[Tuple[float, float, float]],
    ignore_set: set,
    seen: Optional[Callable[[Box], bool]],
    max_unseen: int,
):
    """find_placement's scan: spots in order (each at the height things rest there: its y),
    orientations in order at each spot."""
    rb = rec.box
    inside = rec.object_type in IN_RECEPTACLES
    first = None
    tried = 0
    for p in grid:
        for rot in rotations:
            b0 = pose_box(obj, (0.0, 0.0, 0.0), rot)
            lo0, _ = b0.aabb()
            pos = np.array([p[0] - b0.center[0], p[1] - lo0[1] + REST_GAP, p[2] - b0.center[2]])
            b = pose_box(obj, pos, rot)
            corners = b.corners()
            if inside:
                if not rb.contains(corners, margin=0.01).all():
                    continue
            else:
                local = (corners - rb.center) @ rb.rot
                over = (np.abs(local[:, 0]) <= rb.half[0] + 1e-3) & (
                    np.abs(local[:, 2]) <= rb.half[2] + 1e-3
                )
                if over.sum() < 4:
                    continue
            if w.overlapping(b, ignore=ignore_set) is not None:
                continue
            pose = (tuple(float(v) for v in pos), rot)
            if seen is None or seen(b):
                return pose
            first = first or pose
            tried += 1
            if tried >= max_unseen:
                return first
            break  # one valid orientation per point is enough to judge what the camera sees there
    return first


def _candidate_rotations(
    obj: SimObject, yaws: Optional[Sequence[float]], tilt: bool
) -> List[Tuple[float, float, float]]:
    """THOR's PutObject orientations: 4 yaws upright first, then (unless the type must stay
    upright) the same yaws laid on their side about either horizontal axis."""
    base = obj.rotation
    cand_yaws = list(yaws) if yaws is not None else [base[1] + k * 90.0 for k in range(4)]
    out = [(base[0], float(y) % 360.0, base[2]) for y in cand_yaws]
    if tilt and obj.object_type not in ALWAYS_PLACE_UPRIGHT:
        out += [
            r
            for y in cand_yaws
            for r in ((90.0, float(y) % 360.0, 0.0), (0.0, float(y) % 360.0, 90.0))
        ]
    return out


def snap_to_attach_point(w: World, obj: SimObject, rec: SimObject):
    """Object-specific receptacles hold one object, centred on top of them."""
    if obj.object_type not in OBJECT_SPECIFIC_RECEPTACLES.get(rec.object_type, ()):
        return None
    # only an object of a type it accepts sits at the attach point (THOR's one child); a knife
    # lying in front of a coffee machine, inside its box, does not fill it
    accepted = OBJECT_SPECIFIC_RECEPTACLES[rec.object_type]
    if any(
        w.objects[c].enabled and w.objects[c].object_type in accepted
        for c in w.contents(rec.object_id)
    ):
        return "full"
    if rec.object_type == "CoffeeMachine":
        return _coffee_attach(rec, obj)
    rot = (0.0, obj.rotation[1], 0.0)
    b0 = pose_box(obj, (0.0, 0.0, 0.0), rot)
    lo0, _ = b0.aabb()
    rlo, rhi = rec.aabb
    c = rec.box.center
    top = surface_height(w, rec)
    pos = (float(c[0] - b0.center[0]), float(top - lo0[1] + REST_GAP), float(c[2] - b0.center[2]))
    return pos, rot


def _coffee_attach(rec: SimObject, obj: SimObject):
    """The mug bay of a coffee machine (constants COFFEE_MUG_*), facing as the machine does."""
    rlo, rhi = rec.aabb
    d = yaw_front(rec.rotation[1])
    half = (rhi - rlo) / 2
    reach = abs(d[0]) * half[0] + abs(d[1]) * half[2]
    target = (rlo + rhi)[[0, 2]] / 2 + d * COFFEE_MUG_FRONT * reach
    rot = (0.0, float(rec.rotation[1]) % 360.0, 0.0)
    b0 = pose_box(obj, (0.0, 0.0, 0.0), rot)
    lo0, _ = b0.aabb()
    pos = (
        float(target[0] - b0.center[0]),
        float(rlo[1] + COFFEE_MUG_BASE - lo0[1] + REST_GAP),
        float(target[1] - b0.center[2]),
    )
    return pos, rot


def drop_height(
    w: World, box: Box, ignore: Iterable[str], reach: float = 1e-3
) -> Tuple[float, Optional[str]]:
    """Highest surface under a box's footprint (straight-down fall), and whose it is.

    Surfaces up to `reach` above the box's bottom count (to resolve small penetrations).
    The box centre must lie over the supporting part (else it would tip off). Vectorised
    over every drawn part.
    """
    lo, hi = box.aabb()
    occ = w.occluders()
    if len(occ.centers) == 0:
        return w.floor_y, None
    ign = set(ignore)
    keep = np.array([oid not in ign for oid in occ.ids], dtype=bool)[occ.owners]
    top = occ.centers[:, 1] + occ.extents[:, 1]
    plo, phi = occ.centers - occ.extents, occ.centers + occ.extents
    cand = keep & (top <= lo[1] + reach) & (top >= w.floor_y)
    cand &= (
        (plo[:, 0] <= hi[0]) & (phi[:, 0] >= lo[0]) & (plo[:, 2] <= hi[2]) & (phi[:, 2] >= lo[2])
    )
    idx = np.flatnonzero(cand)
    if len(idx) == 0:
        return w.floor_y, None
    rots, halves = occ.rots[idx], occ.halves[idx]
    local = np.einsum("nij,ni->nj", rots, box.center - occ.centers[idx])  # centre in part frame
    vert = np.argmax(np.abs(rots[:, 1, :]), axis=1)
    upright = np.abs(rots[np.arange(len(idx)), 1, vert]) >= 0.99
    inside = np.ones(len(idx), dtype=bool)
    for axis in range(3):
        horiz = vert != axis
        inside &= ~horiz | (np.abs(local[:, axis]) <= halves[:, axis] + 0.02)
    aabb_inside = (
        (plo[idx, 0] - 0.02 <= box.center[0])
        & (box.center[0] <= phi[idx, 0] + 0.02)
        & (plo[idx, 2] - 0.02 <= box.center[2])
        & (box.center[2] <= phi[idx, 2] + 0.02)
    )
    ok = np.where(upright, inside, aabb_inside)
    if not ok.any():
        return w.floor_y, None
    best = idx[ok][int(np.argmax(top[idx][ok]))]
    return float(max(top[best], w.floor_y)), occ.ids[int(occ.owners[best])]


MAX_SETTLE_LIFT = 0.05


def settle(w: World, oid: str) -> None:
    """Lift an object that sank a little into the surface under it (our boxes are coarser
    than THOR's meshes), so that what is drawn, what is visible and what rests agree."""
    obj = w.objects[oid]
    if not obj.enabled or obj.is_picked_up or not (obj.pickupable or obj.moveable):
        return
    box = obj.box
    lo, hi = box.aabb()
    if any(
        p in w.objects
        and w.objects[p].object_type in IN_RECEPTACLES
        and hi[1] < w.objects[p].aabb[1][1] - 0.005
        for p in obj.parents
    ):
        return  # things stored in drawers/cabinets/fridges stay exactly where THOR put them
    # (one flush with a drawer's top lies on the furniture above it, sunk into today's mesh)
    reach = MAX_SETTLE_LIFT
    ignore = [oid] + w.descendants(oid)
    y, _ = drop_height(w, box, ignore, reach=reach)
    lift = y - lo[1]
    if 0.0 < lift <= reach:
        p = obj.position
        move_with_contents(w, oid, (p[0], p[1] + lift + REST_GAP / 2, p[2]), obj.rotation)


def breaks_on_drop(obj: SimObject, fall: float) -> bool:
    """Impulse model: mass * impact speed above THOR's 3.6 threshold breaks fragile things."""
    if not obj.flags.get("breakable") or obj.unbreakable or obj.is_broken:
        return False
    if obj.object_type in SOFT_TYPES or fall < 0.05:
        return False
    speed = float(np.sqrt(2 * 9.81 * max(fall, 0.0)))
    return max(obj.mass, 0.2) * speed > 3.6 or fall > BREAK_DROP_HEIGHT * 2.5


# --- appliance / environment rules -----------------------------------------------------
def heat_sources_on(w: World) -> List[SimObject]:
    out = []
    for o in w.active():
        t = o.object_type
        if t not in HEAT_SOURCES or not o.is_toggled:
            continue
        working = (not o.is_open) if t == "Microwave" else (not o.is_broken)
        if working:
            out.append(o)
    return out


def apply_state_rules(w: World) -> None:
    """Heat, cold, water and coffee effects on whatever currently sits in those zones."""
    for src in heat_sources_on(w):
        for cid in w.descendants(src.object_id):
            c = w.objects[cid]
            changes = {}
            if c.temperature != "Hot":
                changes["temperature"] = "Hot"
            toastable = not (src.object_type == "Microwave" and c.object_type == "BreadSliced")
            if c.flags.get("cookable") and not c.is_cooked and toastable:
                changes["is_cooked"] = True
            if src.object_type == "CoffeeMachine" and c.object_type == "Mug" and not c.is_filled:
                changes.update(is_filled=True, fill_liquid="coffee")
            if changes:
                w.update(cid, **changes)
    for o in list(w.active()):
        if o.object_type in COLD_SOURCES:
            for cid in w.descendants(o.object_id):
                if w.objects[cid].temperature != "Cold":
                    w.update(cid, temperature="Cold")
    for f in [o for o in w.active() if o.object_type in ("Faucet", "ShowerHead") and o.is_toggled]:
        basin = nearest_basin(w, f)
        if basin is None:
            continue
        for cid in w.descendants(basin.object_id):
            c = w.objects[cid]
            changes = {}
            if c.flags.get("dirtyable") and c.is_dirty:
                changes["is_dirty"] = False
            if c.flags.get("canFillWithLiquid") and not c.is_filled:
                changes.update(is_filled=True, fill_liquid="water")
            if changes:
                w.update(cid, **changes)


def nearest_basin(w: World, src: SimObject) -> Optional[SimObject]:
    types = ("SinkBasin", "BathtubBasin", "Bathtub", "Sink")
    p = np.asarray(src.position)
    cands = [o for o in w.active() if o.object_type in types and o.flags.get("receptacle")]
    if not cands:
        return None
    best = min(cands, key=lambda o: (float(np.linalg.norm(o.box.center - p)), o.object_id))
    return best if float(np.linalg.norm(best.box.center - p)) < 1.5 else None
