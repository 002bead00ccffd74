"""Scene state and the geometric queries every action needs.

`World` owns the agent pose and a copy-on-write table of `SimObject`s. Queries that are
costly (navigation grid, occluder arrays) are cached against a version counter that bumps
whenever an object changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import networkx as nx
import numpy as np

from .constants import (
    AGENT_RADIUS,
    AGENT_Y_OFFSET,
    BASIN_FIXTURES,
    CAMERA_CROUCH_OFFSET,
    CAMERA_STANDING_OFFSET,
    FLOOR_EXTENDED_TYPES,
    GRID_SIZE,
    HAND_LOCAL_POSITION,
    HELD_TOP_ABOVE_HAND,
    IN_RECEPTACLES,
    LAYOUT_CELL_SIZE,
    NON_BLOCKING_TYPES,
    OPEN_TOP_RECEPTACLES,
    SEE_THROUGH_TYPES,
    START_BRIDGE_CELLS,
    VISIBILITY_DISTANCE,
    WALL_GLASS_TYPES,
)
from .fidelity import THOR_5, FidelityProfile
from .geometry import Box, camera_tan_aspect, euler_to_matrix, pack_boxes
from .objects import SimObject
from .scene_data import layout_cells, layout_dilation as scene_layout_dilation

#: `visibility.object_visibility`'s signature: (world, object_ids, agent, max_distance) ->
#: object_id -> (visible, interactable); the build hands it in (it reads the world)
VisibilityRule = Callable[
    ["World", Optional[Sequence[str]], Optional["AgentState"], Optional[float]],
    Dict[str, Tuple[bool, bool]],
]


def _dilate(cells: Optional[frozenset], k: int) -> Optional[frozenset]:
    """Grow a cell set by k cells (Chebyshev); the recorded layouts are from an older build."""
    if cells is None or k <= 0:
        return cells
    return frozenset(
        (i + di, j + dj) for i, j in cells for di in range(-k, k + 1) for dj in range(-k, k + 1)
    )


PENETRATION_TOLERANCE = 0.03


def _bridge(
    start: Tuple[int, int], goal: frozenset, max_len: int, allowed
) -> Optional[List[Tuple[int, int]]]:
    """Shortest 4-connected run of cells from `start` to a cell next to `goal` (`start`
    included, at most `max_len` + 1 cells), through cells `allowed` accepts; None if longer."""
    prev: Dict[Tuple[int, int], Optional[Tuple[int, int]]] = {start: None}
    frontier = [start]
    for _ in range(max_len + 1):
        nxt = []
        for c in frontier:
            for n in ((c[0] + 1, c[1]), (c[0] - 1, c[1]), (c[0], c[1] + 1), (c[0], c[1] - 1)):
                if n in goal:
                    path = [c]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path
                if n not in prev and allowed(n):
                    prev[n] = c
                    nxt.append(n)
        frontier = nxt
    return None


@dataclass(frozen=True)
class AgentState:
    x: float
    y: float
    z: float
    yaw: float
    horizon: float
    standing: bool = True

    @property
    def position(self) -> np.ndarray:
        return np.array([self.x, self.y, self.z])


@dataclass(frozen=True)
class Occluders:
    """Packed part boxes of every rendered object, for vectorised ray casts."""

    centers: np.ndarray
    halves: np.ndarray
    rots: np.ndarray
    owners: np.ndarray  # index into `ids`
    ids: Tuple[str, ...]
    see_through: np.ndarray  # per box
    extents: np.ndarray  # per box AABB half extents
    porous: (
        np.ndarray
    )  # per box: does not hide points inside it (see `ray_box_hits`); shut containers do
    occludes: np.ndarray  # per box: can stand in a sight line inside the room (wall glass cannot)
    basin_lo: np.ndarray  # per box: the AABB of its owner's basin fixture (the fixture and its
    basin_hi: np.ndarray  # *Basin child together, see BASIN_FIXTURES), else empty (lo > hi)

    def over_rim(self, cams: np.ndarray, points: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """(segments, len(idx)) mask: boxes `idx` are walls of a basin fixture that holds the
        point, and the sight line comes down into it over the rim (crosses the fixture's top
        within its footprint), so they cannot hide it. `cams`: one camera or one per point."""
        lo, hi = self.basin_lo[idx][None], self.basin_hi[idx][None]
        p = np.asarray(points, dtype=float)[:, None, :]
        cam = np.broadcast_to(np.asarray(cams, dtype=float), np.asarray(points).shape)[:, None, :]
        inside = np.all((p >= lo) & (p <= hi), axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (cam[..., 1] - hi[..., 1]) / (cam[..., 1] - p[..., 1])
        cross = cam + t[..., None] * (p - cam)
        over = (t >= 0) & np.all(
            (cross[..., [0, 2]] >= lo[..., [0, 2]]) & (cross[..., [0, 2]] <= hi[..., [0, 2]]),
            axis=-1,
        )
        return inside & over

    def clear_over_rim(
        self, t: np.ndarray, cams: np.ndarray, points: np.ndarray, idx: np.ndarray
    ) -> None:
        """Set to +inf (in place) the hits `t` (segments x boxes `idx`) on basin walls that
        `over_rim` says cannot hide the point."""
        walls = np.flatnonzero(np.isfinite(self.basin_lo[idx][:, 0]))
        if len(walls) and len(t):
            sub = t[:, walls]
            sub[self.over_rim(cams, points, idx[walls])] = np.inf
            t[:, walls] = sub


def _profile_field(name: str) -> property:
    """One rule of `World.profile`, read and set as an attribute (a caller toggling one rule)."""

    def get(self: "World"):
        return getattr(self.profile, name)

    def set_(self: "World", value) -> None:
        self.profile = replace(self.profile, **{name: value})

    return property(get, set_, doc=f"`FidelityProfile.{name}` of this world's profile.")


class World:
    """Scene state and the queries on it; `scene_build.build_world` makes a ready one."""

    def __init__(
        self,
        scene_name: str,
        objs: Sequence[SimObject],
        visibility_rule: VisibilityRule,
        grid_size: float = GRID_SIZE,
        visibility_distance: float = VISIBILITY_DISTANCE,
        fov: float = 90.0,
        width: int = 300,
        height: int = 300,
        layout_dilation: Optional[int] = None,
        profile: FidelityProfile = THOR_5,
    ) -> None:
        """`layout_dilation`: cells the room may extend beyond the recorded layout (None: the
        THOR_LITE_LAYOUT_DILATION setting, see `scene_data.layout_dilation`).
        `profile`: the THOR build's rules (`fidelity`); with `layout_clears_moveables`, recorded
        layout cells ignore moveable furniture too (the layout's own build placed it
        elsewhere); by default only static furniture. The agent stands nowhere until
        `start_agent`."""
        self.scene_name = scene_name
        self.grid_size = grid_size
        self.visibility_distance = visibility_distance
        self.fov = fov
        self.width, self.height = width, height
        self.visibility_rule = visibility_rule
        objs = list(objs)
        # where the scene puts each object (again after settling): the recorded layouts were
        # made with the furniture there
        self._scene_poses = {o.object_id: (o.position, o.rotation) for o in objs}
        self.objects: Dict[str, SimObject] = {o.object_id: o for o in objs}
        self.held: Optional[str] = None
        self.version = 0
        self.start_cells: frozenset = frozenset()  # grid cells a forced teleport made walkable
        self._cache: Dict[str, Tuple[int, object]] = {}
        floor = next((o for o in objs if o.object_type == "Floor"), None)
        if floor is None:
            raise ValueError(f"{scene_name}: scene has no Floor object")
        lo, hi = floor.aabb
        self.floor_y = float(hi[1])
        self.room_lo, self.room_hi = lo, hi
        # Walls come from the real reachable grid of an older THOR build (ALFRED's layouts):
        # its cells are trusted as free of static furniture; cells up to `dilation` away
        # (rooms grew a little in later builds) must also pass the full geometric test.
        self.layout = layout_cells(scene_name)
        self.layout_dilation = (
            scene_layout_dilation() if layout_dilation is None else int(layout_dilation)
        )
        self.room_cells = _dilate(self.layout, self.layout_dilation)
        self.profile = profile
        self._layout_xz: Optional[np.ndarray] = None  # layout cell centres, built when first needed
        self.name_aliases: Dict[str, str] = {}  # objectId -> dataset name adopted by it
        self.posed_configs: Tuple = ()  # poses SetObjectPoses put objects in (see posed_configs)

    # the profile's rules, as attributes (per episode: `thor2_rules.use_thor2_rules`)
    layout_clears_moveables = _profile_field("layout_clears_moveables")
    thor2_rules = _profile_field("thor2_rules")
    held_hangs = _profile_field("held_hangs")
    first_hit_visibility = _profile_field("first_hit_visibility")
    moveable_layout_reach = _profile_field("moveable_layout_reach")
    box_overlap = _profile_field("box_overlap")

    def start_agent(self) -> None:
        """Stand the agent on the reachable cell nearest the room's centre, looking ahead."""
        start = self._default_start()
        self.agent = AgentState(start[0], self.floor_y + AGENT_Y_OFFSET, start[1], 0.0, 0.0, True)

    def record_scene_poses(self) -> None:
        """Take every object's pose now as where the scene puts it (`obstacle_footprints`)."""
        self._scene_poses = {o.object_id: (o.position, o.rotation) for o in self.objects.values()}

    def rename_scene_poses(self, new_ids: Dict[str, str]) -> None:
        """Objects renamed (`thor2_renames`) keep their scene poses under the new ids."""
        self._scene_poses = {new_ids.get(k, k): v for k, v in self._scene_poses.items()}

    def clear_cache(self) -> None:
        """Forget every cached query (the rules they were computed under changed)."""
        self._cache.clear()

    # --- mutation ----------------------------------------------------------------------
    def update(self, object_id: str, **changes) -> SimObject:
        new = self.objects[object_id].with_changes(**changes)
        self.objects = {**self.objects, object_id: new}
        self.version += 1
        return new

    def add(self, obj: SimObject) -> None:
        self.objects = {**self.objects, obj.object_id: obj}
        self.version += 1

    def remove(self, object_id: str) -> None:
        objs = dict(self.objects)
        del objs[object_id]
        self.objects = objs
        self.version += 1

    def snapshot(self):
        return (
            self.objects,
            self.held,
            self.agent,
            self.version,
            dict(self.name_aliases),
            self.posed_configs,
        )

    def restore(self, snap) -> None:
        untouched = self.version == snap[3] and self.objects is snap[0] and self.held == snap[1]
        self.objects, self.held, self.agent, _, self.name_aliases, self.posed_configs = snap
        if not untouched:  # caches keyed on the old version must not be reused
            self.version += 1

    def cached(self, key: str, fn, version: Optional[int] = None):
        """`fn()`, computed once per world version (or the given `version`) under `key`."""
        v = self.version if version is None else version
        hit = self._cache.get(key)
        if hit is not None and hit[0] == v:
            return hit[1]
        val = fn()
        self._cache[key] = (v, val)
        return val

    # --- lookups -----------------------------------------------------------------------
    def get(self, object_id: str) -> Optional[SimObject]:
        return self.objects.get(object_id)

    def by_name(self, name: str) -> Optional[SimObject]:
        for o in self.objects.values():
            if o.name == name:
                return o
        return None

    def active(self) -> Iterable[SimObject]:
        return (o for o in self.objects.values() if o.enabled)

    def contents(self, receptacle_id: str) -> List[str]:
        return [
            o.object_id for o in self.objects.values() if o.enabled and receptacle_id in o.parents
        ]

    def descendants(self, object_id: str) -> List[str]:
        """Everything that moves along when `object_id` moves.

        THOR lists overlapping furniture as each other's parents (a table "in" a chair), so
        only things that can be carried are carried: a pickupable never drags furniture.
        """
        out, frontier = [], [object_id]
        while frontier:
            cur = frontier.pop()
            carrier = self.objects[cur]
            for c in self.contents(cur):
                if c in out or c == object_id:
                    continue
                child = self.objects[c]
                if child.is_static or (carrier.pickupable and not child.pickupable):
                    continue
                out.append(c)
                frontier.append(c)
        return out

    # --- camera ------------------------------------------------------------------------
    def camera_position(self, agent: Optional[AgentState] = None) -> np.ndarray:
        a = agent or self.agent
        off = CAMERA_STANDING_OFFSET if a.standing else CAMERA_CROUCH_OFFSET
        return np.array([a.x, a.y + off, a.z])

    def camera_rotation(self, agent: Optional[AgentState] = None) -> np.ndarray:
        a = agent or self.agent
        return euler_to_matrix((a.horizon, a.yaw, 0.0))

    def hand_position(self, agent: Optional[AgentState] = None) -> np.ndarray:
        return self.camera_position(agent) + self.camera_rotation(agent) @ np.array(
            HAND_LOCAL_POSITION
        )

    # --- navigation --------------------------------------------------------------------
    def obstacle_footprints(self) -> List[Tuple[np.ndarray, np.ndarray, np.ndarray, bool]]:
        """(centre_xz, half_xz, rot2, in_layout) of everything the agent's body can bump into.

        `in_layout`: static furniture, or moveable furniture still where the scene puts it, is
        already carved out of the recorded reachable layout, which knows its real shape (an
        L-shaped desk's box covers the free floor inside the L; chair boxes reach past the legs).
        """

        def build():
            out = self.box_footprints()
            if self.profile.layout_clears_moveables and self.layout:
                out = [
                    f
                    for f in out
                    if not self._layout_contradicts(
                        *f[:3], 0.0 if f[4] else self.profile.moveable_layout_reach
                    )
                ]
            return [f[:4] for f in out]

        return self.cached("footprints", build, self._obstacle_version())

    def box_footprints(self) -> List[Tuple[np.ndarray, np.ndarray, np.ndarray, bool, bool]]:
        """`obstacle_footprints` before the layout drops any box it contradicts, each with
        whether its object is static furniture last."""

        def build():
            out = []
            for o in self.active():
                if o.pickupable or o.object_type in NON_BLOCKING_TYPES or o.is_picked_up:
                    continue
                lo, hi = o.aabb
                bottom = self.floor_y if o.object_type in FLOOR_EXTENDED_TYPES else lo[1]
                if bottom > self.floor_y + 1.5 or hi[1] < self.floor_y + 0.05:
                    continue
                b = o.box
                if abs(b.rot[1, 1]) > 0.999:  # upright box: keep its yaw
                    ax = b.rot[[0, 2]][:, [0, 2]]
                    out.append((b.center[[0, 2]], b.half[[0, 2]], ax))
                else:
                    out.append(((lo + hi)[[0, 2]] / 2, (hi - lo)[[0, 2]] / 2, np.eye(2)))
                out[-1] = out[-1] + (
                    o.is_static or self._scene_poses.get(o.object_id) == (o.position, o.rotation),
                    o.is_static,
                )
            return out

        return self.cached("box_footprints", build, self._obstacle_version())

    def _layout_contradicts(
        self, centre: np.ndarray, half: np.ndarray, rot: np.ndarray, reach: float = 0.0
    ) -> bool:
        """Does the recorded layout hold a cell whose centre lies inside this footprint (or
        within `reach` of it: moveable furniture, see MOVEABLE_LAYOUT_REACH)?

        THOR's agent could not stand there if the box were solid, so the box is not the
        object's shape (an L-shaped or island counter as one box): in THOR 2.1.0 layout mode
        such a box blocks nothing and the layout alone says where the agent may go."""
        if self._layout_xz is None:
            self._layout_xz = np.array(sorted(self.layout), dtype=np.float64) * LAYOUT_CELL_SIZE
        local = (self._layout_xz - centre) @ rot
        if reach > 0:
            q = np.maximum(np.abs(local) - half, 0.0)
            return bool(np.any(np.einsum("ij,ij->i", q, q) < reach * reach))
        return bool(np.any(np.all(np.abs(local) < half - 1e-3, axis=1)))

    def _obstacle_version(self) -> int:
        # Only non-pickupable objects block; hash their poses so pickups don't invalidate.
        key = tuple(
            (o.object_id, o.position, o.rotation, o.enabled)
            for o in self.objects.values()
            if not o.pickupable
        ) + (self.start_cells,)
        h = hash(key)
        if getattr(self, "_obst_key", None) != h:
            self._obst_key = h
            self._obst_ver = getattr(self, "_obst_ver", 0) + 1
        return self._obst_ver

    def position_free(self, x: float, z: float) -> bool:
        if self.start_cells and self._near_start_cell(x, z):
            return True
        r = AGENT_RADIUS
        if not (
            self.room_lo[0] + r - 1e-6 <= x <= self.room_hi[0] - r + 1e-6
            and self.room_lo[2] + r - 1e-6 <= z <= self.room_hi[2] - r + 1e-6
        ):
            return False
        cell = (round(x / LAYOUT_CELL_SIZE), round(z / LAYOUT_CELL_SIZE))
        if self.room_cells is not None and cell not in self.room_cells:
            return False
        trusted = self.layout is not None and cell in self.layout
        p = np.array([x, z])
        clear = r - (self.profile.box_overlap if self.profile.layout_clears_moveables else 1e-3)
        for c, h, rot, in_layout in self.obstacle_footprints():
            if trusted and (in_layout or self.profile.layout_clears_moveables):
                continue  # furniture where the scene puts it is already carved out of the layout
            local = rot.T @ (p - c)
            q = np.maximum(np.abs(local) - h, 0.0)
            if q @ q < clear**2:
                return False
        return True

    def free_cells(self) -> frozenset:
        """Grid cells (integer multiples of gridSize) where the agent's body fits."""

        def build():
            g = self.grid_size
            xs = np.arange(np.ceil(self.room_lo[0] / g), np.floor(self.room_hi[0] / g) + 1)
            zs = np.arange(np.ceil(self.room_lo[2] / g), np.floor(self.room_hi[2] / g) + 1)
            return frozenset(
                (int(i), int(k)) for i in xs for k in zs if self.position_free(i * g, k * g)
            )

        return self.cached("free_cells", build, self._obstacle_version())

    def reachable_cells(self) -> frozenset:
        """The connected free region THOR's BFS would find (largest component)."""

        def build():
            free = self.free_cells()
            graph = nx.Graph()
            graph.add_nodes_from(free)
            for i, k in free:
                for n in ((i + 1, k), (i, k + 1)):
                    if n in free:
                        graph.add_edge((i, k), n)
            if not free:
                return frozenset()
            comps = sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c)))
            agent_cell = None
            if hasattr(self, "agent"):
                agent_cell = (
                    round(self.agent.x / self.grid_size),
                    round(self.agent.z / self.grid_size),
                )
            for comp in comps:
                if agent_cell in comp:
                    return frozenset(comp)
            return frozenset(comps[0])

        return self.cached("reachable", build, self._obstacle_version())

    def _near_start_cell(self, x: float, z: float) -> bool:
        """Within half a cell of a cell a forced teleport made walkable (so the moves between
        it and its neighbours pass too)."""
        g = self.grid_size
        i, k = x / g, z / g
        return any(
            (a, b) in self.start_cells and abs(i - a) <= 0.5 + 1e-6 and abs(k - b) <= 0.5 + 1e-6
            for a in (math.floor(i), math.ceil(i))
            for b in (math.floor(k), math.ceil(k))
        )

    def admit_agent_cell(self) -> None:
        """The agent was put here by force (an episode's start, which THOR can reach): if our
        boxes cut its grid cell off the largest reachable region, its cell and the shortest
        run of blocked cells (at most START_BRIDGE_CELLS) to that region become walkable."""
        g = self.grid_size
        cell = (round(self.agent.x / g), round(self.agent.z / g))
        if abs(self.agent.x / g - cell[0]) > 1e-3 or abs(self.agent.z / g - cell[1]) > 1e-3:
            return  # off the grid: nothing to join
        free = self.free_cells()
        main = self._largest_region(free)
        if not main or cell in main:
            return
        bridge = _bridge(cell, main, START_BRIDGE_CELLS, self._in_room_bounds)
        if bridge:
            self.start_cells = self.start_cells | frozenset(c for c in bridge if c not in free)

    def _in_room_bounds(self, c: Tuple[int, int]) -> bool:
        g, r = self.grid_size, AGENT_RADIUS
        return bool(
            self.room_lo[0] + r <= c[0] * g <= self.room_hi[0] - r
            and self.room_lo[2] + r <= c[1] * g <= self.room_hi[2] - r
        )

    @staticmethod
    def _largest_region(free: frozenset) -> frozenset:
        graph = nx.Graph()
        graph.add_nodes_from(free)
        graph.add_edges_from(
            (c, n) for c in free for n in ((c[0] + 1, c[1]), (c[0], c[1] + 1)) if n in free
        )
        comps = (
            sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c))) if free else []
        )
        return frozenset(comps[0]) if comps else frozenset()

    def _default_start(self) -> Tuple[float, float]:
        cells = self.reachable_cells()
        if not cells:
            c = (self.room_lo + self.room_hi) / 2
            return float(c[0]), float(c[2])
        centre = (self.room_lo + self.room_hi)[[0, 2]] / 2 / self.grid_size
        best = min(cells, key=lambda c: ((c[0] - centre[0]) ** 2 + (c[1] - centre[1]) ** 2, c))
        return best[0] * self.grid_size, best[1] * self.grid_size

    # --- occlusion and visibility ------------------------------------------------------
    def occluders(self) -> Occluders:
        def build():
            boxes, owners, ids, see, porous, occludes, basin = [], [], [], [], [], [], []
            none = (np.full(3, np.inf), np.full(3, -np.inf))
            for o in self.objects.values():
                if not o.rendered:
                    continue
                ids.append(o.object_id)
                rim = self.basin_box(o) if o.object_type in BASIN_FIXTURES else none
                for p in self.render_parts(o):
                    boxes.append(p)
                    owners.append(len(ids) - 1)
                    see.append(o.object_type in SEE_THROUGH_TYPES)
                    porous.append(not o.encloses_contents)
                    occludes.append(o.object_type not in WALL_GLASS_TYPES)
                    basin.append(rim)
            c, h, r = pack_boxes(boxes)
            ext = np.einsum("bij,bj->bi", np.abs(r), h) if len(h) else np.zeros((0, 3))
            blo = np.array([b[0] for b in basin]).reshape(-1, 3)
            bhi = np.array([b[1] for b in basin]).reshape(-1, 3)
            return Occluders(
                c,
                h,
                r,
                np.asarray(owners, dtype=np.int64),
                tuple(ids),
                np.asarray(see, dtype=bool),
                ext,
                np.asarray(porous, dtype=bool),
                np.asarray(occludes, dtype=bool),
                blo,
                bhi,
            )

        return self.cached("occluders", build, self.version * 1000003 + self._agent_key())

    def basin_box(self, o: SimObject) -> Tuple[np.ndarray, np.ndarray]:
        """AABB of a basin fixture together with its *Basin child or parent (one bowl), 1 cm
        larger (cached: fixtures do not move)."""

        def build():
            root = o.object_id.split("|")[:4]
            group = [
                x
                for x in self.objects.values()
                if x.object_type in BASIN_FIXTURES and x.object_id.split("|")[:4] == root
            ]
            lo = np.min([x.aabb[0] for x in group], axis=0)
            hi = np.max([x.aabb[1] for x in group], axis=0)
            return lo - 0.01, hi + 0.01

        return self.cached("basin:" + o.object_id, build, 0)

    def _agent_key(self) -> int:
        # Held objects move with the agent, so occluders depend on the pose while holding.
        return hash(self.agent) if self.held else 0

    def render_parts(self, o: SimObject) -> Tuple[Box, ...]:
        if o.object_id == self.held:
            return (drawn_held_box(self, o),)
        return o.parts

    def held_box(self, o: SimObject, agent: Optional[AgentState] = None) -> Box:
        """Held objects hover at the hand point, centred, keeping their own orientation."""
        b = o.box
        return Box(self.hand_position(agent), b.half, b.rot)

    def in_viewport(self, points: np.ndarray, agent: Optional[AgentState] = None) -> np.ndarray:
        cam = self.camera_position(agent)
        rot = self.camera_rotation(agent)
        local = (points - cam) @ rot
        z = local[..., 2]
        tan_v, aspect = camera_tan_aspect(self.fov, self.width, self.height)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = local[..., 0] / (z * tan_v * aspect)
            v = local[..., 1] / (z * tan_v)
        return (z > 0.1) & (np.abs(u) < 1) & (np.abs(v) < 1)

    def visibility(
        self,
        object_ids: Optional[Sequence[str]] = None,
        agent: Optional[AgentState] = None,
        max_distance: Optional[float] = None,
    ) -> Dict[str, Tuple[bool, bool]]:
        """object_id -> (visible, interactable) from the agent's (or a given) pose
        (`visibility_rule`: `visibility.object_visibility`)."""
        return self.visibility_rule(self, object_ids, agent, max_distance)

    # --- placement helpers -------------------------------------------------------------
    def infer_parents(self, obj: SimObject, box: Optional[Box] = None) -> Tuple[str, ...]:
        """Receptacles an object rests in or on, judged from geometry (innermost first)."""
        b = box or obj.box
        lo, hi = b.aabb()
        c = b.center
        found = []
        for r in self.active():
            if not r.flags.get("receptacle") or r.object_id == obj.object_id or r.is_picked_up:
                continue
            if (
                r.object_id in self.descendants(obj.object_id)
                if obj.flags.get("receptacle")
                else False
            ):
                continue
            rb = r.box
            rlo, rhi = r.aabb
            local = rb.rot.T @ (c - rb.center)
            if np.any(np.abs(local[[0, 2]]) > rb.half[[0, 2]] + 0.02):
                continue
            if r.object_type == "Floor":
                if lo[1] <= rhi[1] + 0.08:
                    found.append((10.0, r.object_id))
                continue
            if r.object_type in IN_RECEPTACLES and lo[1] >= rhi[1] - 0.005:
                continue  # resting on or above an enclosing receptacle is not being in it
            if rlo[1] - 0.05 <= lo[1] <= rhi[1] + 0.05:
                found.append((float(rhi[1] - rlo[1]), r.object_id))
        found.sort()
        return tuple(
            oid for oid in (o for _, o in found) if not self._below_furniture_top(oid, found, lo[1])
        )

    def _below_furniture_top(self, rid: str, found: List[Tuple[float, str]], bottom: float) -> bool:
        """THOR's receptacle volume of a table, dresser or desk lies on its top: an object in
        one of its drawers or on a lower shelf (a fixed receptacle inside its footprint, also
        found) is in that drawer or shelf only."""
        r = self.objects[rid]
        if r.object_type in IN_RECEPTACLES or r.object_type == "Floor" or r.pickupable:
            return False
        rlo, rhi = r.aabb
        top = rhi[1] - (r.surface_offset or 0.0)
        if bottom >= top - 0.03:
            return False
        for _, oid in found:
            o = self.objects[oid]
            if oid == rid or o.pickupable or o.aabb[1][1] > rhi[1] + 0.01:
                continue
            c = o.box.center
            if rlo[0] <= c[0] <= rhi[0] and rlo[2] <= c[2] <= rhi[2]:
                return True
        return False

    def _holds(self, occ: Occluders, idx: np.ndarray, point: np.ndarray) -> np.ndarray:
        """Which parts `idx` hold `point` in the empty space of the real mesh, where only a
        THOR-made pose can be: a furniture part (not pickupable) containing it (a card on a
        table under a TV's box, foil in a shut microwave), or any part of a hollow container
        whose whole box contains it (a soap bottle in a pan touching its walls). Other
        pickupables' boxes are tight: overlapping them is a collision."""
        local = np.einsum("nij,ni->nj", occ.rots[idx], point - occ.centers[idx])
        in_part = np.all(np.abs(local) <= occ.halves[idx], axis=1)
        out = np.zeros(len(idx), dtype=bool)
        for n, k in enumerate(occ.owners[idx]):
            o = self.objects[occ.ids[k]]
            if not o.pickupable:
                out[n] = in_part[n]
            elif o.object_type in OPEN_TOP_RECEPTACLES or o.object_type in IN_RECEPTACLES:
                out[n] = bool(o.box.contains(point[None], margin=0.0).all())
        return out

    def overlapping(
        self, box: Box, ignore: Iterable[str] = (), pass_containing: bool = False
    ) -> Optional[SimObject]:
        """First rendered object whose parts overlap `box` (vectorised AABB + SAT).

        Our furniture is a few boxes standing in for THOR's meshes, so contacts shallower
        than PENETRATION_TOLERANCE are not collisions (objects rest slightly inside seats).
        With `pass_containing`, parts that hold the box's centre or the middle of its bottom
        (see `_holds`) are no collision either.
        """
        from .geometry import boxes_overlap_many

        shrink = np.minimum(PENETRATION_TOLERANCE, box.half * 0.3)
        box = Box(box.center, box.half - shrink, box.rot)
        occ = self.occluders()
        if len(occ.centers) == 0:
            return None
        ign = set(ignore)
        ign.update(oid for oid in occ.ids if self.objects[oid].object_type == "Floor")
        keep_owner = np.array([oid not in ign for oid in occ.ids], dtype=bool)
        lo, hi = box.aabb()
        ext = occ.extents
        cand = keep_owner[occ.owners]
        cand &= np.all(occ.centers - ext < hi - 1e-3, axis=1) & np.all(
            occ.centers + ext > lo + 1e-3, axis=1
        )
        idx = np.flatnonzero(cand)
        if pass_containing and len(idx):
            foot = np.array([box.center[0], lo[1] + 1e-3, box.center[2]])  # where it rests
            idx = idx[~(self._holds(occ, idx, box.center) | self._holds(occ, idx, foot))]
        if len(idx) == 0:
            return None
        hit = boxes_overlap_many(box, occ.centers[idx], occ.halves[idx], occ.rots[idx], eps=2e-3)
        if not hit.any():
            return None
        return self.objects[occ.ids[int(occ.owners[idx[int(np.argmax(hit))]])]]


def drawn_held_box(w: World, o: SimObject) -> Box:
    """Where the held object is drawn (and occludes). With `w.held_hangs` (every AlfredEnv
    episode: `Controller.set_held_objects_hang`) it hangs from the hand, its box top at most
    HELD_TOP_ABOVE_HAND above the hand point, since THOR 2.1.0 held an object near its top, not
    its centre (ALFRED's recorded masks run where a centred plunger, box or laptop would stand:
    38 of 591 interactions while holding had over 20 % of their mask on such a centred box)."""
    b = w.held_box(o)
    if not w.profile.held_hangs:
        return b
    drop = float(b.aabb()[1][1] - b.center[1]) - HELD_TOP_ABOVE_HAND
    return b if drop <= 0 else Box(b.center - np.array([0.0, drop, 0.0]), b.half, b.rot)
