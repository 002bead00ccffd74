"""The simulator's state as the planner's :class:`ProblemState` (alfred.md §3.2 problem generation).

ALFRED turned THOR metadata into a PDDL problem with one ``loc|X|Z|R|H`` interaction spot per
receptacle and object, and grid path lengths between spots. We do the same through the public
controller API only (``GetReachablePositions``, ``GetInteractablePoses``), so it runs on
thor_lite and on real THOR. Interaction spots are the expensive part (a visibility query per
object), so :class:`LocationIndex` caches them per object pose for a whole episode.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from backends import (
    AGENT_Y_OFFSET,
    CAMERA_STANDING_OFFSET,
    OBJECT_SPECIFIC_RECEPTACLES,
    SLICED_TYPE,
    placement_allowed,
)

from alfred_task import constants as C
from alfred_task.env.environment import query
from alfred_task.env.navigation import (
    GridNavigator,
    Node,
    agent_node,
    ideal_horizon,
    location_string,
    parse_location,
)
from alfred_task.planning import ProblemState, SceneObject, parse_task, relevant_objects

APPLIANCE = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
HORIZONS = [-30.0, -15.0, 0.0, 15.0, 30.0, 45.0, 60.0]
MIN_DISTANCE = 0.5  # metres: ALFRED steps back when closer than this (§3.2)


def _xyz(p: Mapping) -> Tuple[float, float, float]:
    return float(p["x"]), float(p["y"]), float(p["z"])


class LocationIndex:
    """Interaction spot of each object, cached by (objectId, position, openness).

    The spot is the best-ranked pose of ``GetInteractablePoses``. That query tests a few points
    of the object against boxes, so from a pose it accepts the rendered frame can still show too
    few of the object's pixels for a mask; the expert then calls :meth:`reject` and the next
    planning step gets the next-ranked pose (what a person does: step elsewhere and look again).
    """

    def __init__(self, controller, nav: GridNavigator, start: Node) -> None:
        self.controller = controller
        self.nav = nav
        self.start = start
        self._ranked: Dict[tuple, List[str]] = {}
        self._rejected: Dict[str, set] = {}
        self._abandoned: set = set()
        self._extended: set = set()  # keys whose ranking has the fallback poses appended
        self._far_first: set = (
            set()
        )  # objects whose spots are tried farthest first (see prefer_far)

    @staticmethod
    def _key(obj: Mapping) -> tuple:
        return (
            obj["objectId"],
            tuple(round(v, 2) for v in _xyz(obj["position"])),
            bool(obj.get("isOpen")),
        )

    def location(self, obj: Mapping, agent: Optional[Node] = None) -> Optional[str]:
        """The best spot not rejected; with `agent`, the best one a path from there reaches
        (cells a MoveAhead failed into are gone from the grid since the ranking)."""
        key = self._key(obj)
        if key not in self._ranked:
            self._ranked[key] = self._rank(obj)
        bad = self._rejected.get(obj["objectId"], ())
        reach = self.nav.distances_from(agent) if agent is not None else None
        for extended in (False, True):
            if extended:  # the queried poses are used up: add the fallback ones (once)
                if key in self._extended:
                    break
                self._extended.add(key)
                seen = set(self._ranked[key])
                self._ranked[key] += [loc for loc in self._near_box_poses(obj) if loc not in seen]
            ranked = self._ranked[key]
            if obj["objectId"] in self._far_first:
                ranked = self._farthest_first(obj, ranked)
            loc = next(
                (
                    loc
                    for loc in ranked
                    if loc not in bad and (reach is None or parse_location(loc)[:3] in reach)
                ),
                None,
            )
            if loc is not None:
                return loc
        return None

    def reject(self, object_id: str, loc: str) -> int:
        """Never offer `loc` for `object_id` again this episode; returns how many are rejected."""
        bad = self._rejected.setdefault(object_id, set())
        bad.add(loc)
        return len(bad)

    def abandon(self, object_id: str) -> None:
        """Leave `object_id` out of later problems (the planner then uses another instance of its
        class if the task allows)."""
        self._abandoned.add(object_id)

    def prefer_far(self, object_id: str) -> None:
        """Try the remaining spots of `object_id` farthest first, looking down the most. A held
        object hangs below the camera and hides what is near and low (a carried Box hides the
        whole coffee table from the nearest spots); from farther away the target shows above it."""
        self._far_first.add(object_id)

    def _farthest_first(self, obj: Mapping, ranked: List[str]) -> List[str]:
        ox, _, oz = _xyz(obj["position"])
        g = self.nav.grid

        def key(loc: str) -> tuple:
            i, k, _, h = parse_location(loc)
            return -round(math.hypot(i * g - ox, k * g - oz), 1), -h

        return sorted(ranked, key=key)  # stable: ties keep the query's order

    def restore(self, object_id: str) -> None:
        """Plan with `object_id` again (its rejected spots stay rejected)."""
        self._abandoned.discard(object_id)

    @property
    def abandoned(self) -> frozenset:
        return frozenset(self._abandoned)

    def _rank(self, obj: Mapping) -> List[str]:
        """Reachable queried interaction poses, best first (distance >= MIN_DISTANCE, facing, ideal tilt)."""
        ev = query(
            self.controller,
            "GetInteractablePoses",
            objectId=obj["objectId"],
            horizons=HORIZONS,
            standings=[True],
            rotations=[0.0, 90.0, 180.0, 270.0],
        )
        if not ev.metadata["lastActionSuccess"]:
            return []
        reach = self.nav.distances_from(self.start)
        ox, oy, oz = _xyz(obj["position"])
        scored = []
        for p in ev.metadata["actionReturn"] or []:
            i, k = round(p["x"] / self.nav.grid), round(p["z"] / self.nav.grid)
            r = int(round(p["rotation"] / 90.0)) % 4
            if (i, k, r) not in reach:
                continue
            d = math.hypot(p["x"] - ox, p["z"] - oz)
            facing = math.degrees(math.atan2(ox - p["x"], oz - p["z"])) % 360.0
            turn = abs((facing - 90.0 * r + 180.0) % 360.0 - 180.0)
            cam_y = float(p.get("y", AGENT_Y_OFFSET)) + CAMERA_STANDING_OFFSET
            h = float(p["horizon"])
            h_ideal = ideal_horizon(cam_y, oy, d)
            score = (
                round(d if d >= MIN_DISTANCE else 10.0 + MIN_DISTANCE - d, 2),
                round(turn / 45.0),
                abs(h - h_ideal),
                i,
                k,
                r,
                h,
            )
            scored.append((score, location_string(i, k, r, h)))
        return [loc for _, loc in sorted(scored)]

    def _near_box_poses(self, obj: Mapping) -> List[str]:
        """Fallback spots after the queried ones: reachable poses within visibility distance of
        the object's box that face it, tilted towards its centre. The query can miss an object
        the frame shows (a box whose test points are all covered, e.g. a dresser under its
        contents); the expert's pixel check at arrival decides, and PutObject runs forced."""
        box = obj.get("axisAlignedBoundingBox") or {}
        centre, size = box.get("center"), box.get("size")
        if not centre or not size:
            return []
        cx, cy, cz = _xyz(centre)
        hx, hz = float(size["x"]) / 2, float(size["z"]) / 2
        cam_y = (
            float(self.controller.last_event.metadata["agent"]["position"]["y"])
            + CAMERA_STANDING_OFFSET
        )
        g = self.nav.grid
        scored = []
        for i, k, r in self.nav.distances_from(self.start):
            x, z = i * g, k * g
            gap = math.hypot(max(abs(x - cx) - hx, 0.0), max(abs(z - cz) - hz, 0.0))
            if gap > C.VISIBILITY_DISTANCE or gap <= 0.0:
                continue
            facing = math.degrees(math.atan2(cx - x, cz - z)) % 360.0
            turn = abs((facing - 90.0 * r + 180.0) % 360.0 - 180.0)
            if turn > 45.0:
                continue
            h = ideal_horizon(cam_y, cy, max(gap, MIN_DISTANCE))
            scored.append(
                ((round(gap, 2), round(turn / 45.0), i, k, r), location_string(i, k, r, h))
            )
        return [loc for _, loc in sorted(scored)]


def _immediate_parent(obj: Mapping, known: Mapping[str, Mapping]) -> Optional[str]:
    for pid in obj.get("parentReceptacles") or []:
        p = known.get(pid)
        if p is not None and p["objectType"] != "Floor":
            return pid
    return None


def placement_table(types: Iterable[str], receptacle_types: Iterable[str]) -> Dict[str, set]:
    """receptacle type -> placeable types among those present, counting the pieces a present
    sliceable type becomes (the plan may slice it before any piece exists)."""
    types = set(types)
    types = sorted(types | {SLICED_TYPE[t] for t in types if t in SLICED_TYPE})
    return {r: {t for t in types if placement_allowed(t, r)} for r in set(receptacle_types)}


def build_problem_state(
    metadata: Mapping,
    index: LocationIndex,
    task_type: str,
    pddl_params: Mapping,
    cleaned: Iterable[str] = (),
    heated: Iterable[str] = (),
    cooled: Iterable[str] = (),
    agent_location: Optional[str] = None,
) -> ProblemState:
    """ProblemState of the current scene with spots for the task-relevant objects only."""
    objs = {o["objectId"]: o for o in metadata["objects"]}
    held = next((o["objectId"] for o in metadata.get("inventoryObjects") or []), None)
    cleaned, heated, cooled = set(cleaned), set(heated), set(cooled)
    scene: Dict[str, SceneObject] = {}
    for oid, o in objs.items():
        t = o["objectType"]
        if t == "Floor" or (oid in index.abandoned and oid != held):
            continue
        fixed = bool(o.get("receptacle")) and not o.get("pickupable")
        if fixed and t not in C.RECEPTACLE_CLASS_SET:
            continue
        if not fixed and not o.get("pickupable") and t not in C.TOGGLEABLE:
            continue
        scene[oid] = SceneObject(
            object_id=oid,
            object_type=t,
            parent=None if oid == held else _immediate_parent(o, objs),
            receptacle=bool(o.get("receptacle")),
            pickupable=bool(o.get("pickupable")),
            openable=bool(o.get("openable")),
            is_open=bool(o.get("isOpen")),
            toggleable=bool(o.get("toggleable")),
            is_toggled=bool(o.get("isToggled")),
            sliceable=bool(o.get("sliceable")),
            is_sliced=bool(o.get("isSliced")),
            slice_of=oid.rsplit("|", 1)[0] if t.endswith("Sliced") else None,
            dirty=bool(o.get("isDirty")),
            cleaned=oid in cleaned,
            heated=oid in heated,
            cooled=oid in cooled,
        )
    # parents outside the symbolic scene (e.g. non-ALFRED furniture) count as "no receptacle"
    for oid, so in list(scene.items()):
        if so.parent is not None and so.parent not in scene:
            scene[oid] = SceneObject(**{**so.__dict__, "parent": None})
    agent = agent_location or location_string(
        *agent_node(metadata["agent"]), metadata["agent"]["cameraHorizon"]
    )
    state = ProblemState(
        agent_location=agent,
        objects=scene,
        held=held,
        capacity={t: 1 for t in OBJECT_SPECIFIC_RECEPTACLES},
    )
    here = parse_location(agent)[:3]
    task = parse_task(task_type, pddl_params)
    items, _ = relevant_objects(state, task)
    # spots (a visibility query each) only for the receptacles the task can involve: the goal
    # class, the appliance, and those holding task items (ALFRED's pruning, §3.2)
    wanted = {task.parent, APPLIANCE.get(task_type, "")}
    for oid in items:
        p, seen = scene[oid].parent, {oid}
        while p is not None and p in scene and p not in seen:  # THOR's parent links can loop
            seen.add(p)
            if scene[p].is_fixed_receptacle:
                wanted.add(p)
            p = scene[p].parent
    for oid, so in scene.items():  # open ones too: the plan must go and close them
        if so.is_fixed_receptacle and (so.object_type in wanted or oid in wanted or so.is_open):
            scene[oid] = SceneObject(**{**so.__dict__, "location": index.location(objs[oid], here)})
    for oid in items:
        so = scene[oid]
        if oid == held:
            continue
        parent = scene.get(so.parent) if so.parent else None
        if parent is not None and parent.is_movable_receptacle:
            continue  # reached through its container
        if parent is not None and parent.openable and not parent.is_open:
            continue  # reached by opening the parent at the parent's spot
        loc = index.location(objs[oid], here)
        if loc is None and parent is None:
            continue
        scene[oid] = SceneObject(**{**so.__dict__, "location": loc})
    # movable receptacles holding task items need their own spot too
    for oid in items:
        so = scene[oid]
        if so.is_movable_receptacle and so.location is None and oid != held:
            parent = scene.get(so.parent) if so.parent else None
            if parent is None or not (parent.openable and not parent.is_open):
                scene[oid] = SceneObject(
                    **{**so.__dict__, "location": index.location(objs[oid], here)}
                )
    state.distances = _distances(
        index.nav, [agent] + sorted({o.location for o in scene.values() if o.location})
    )
    reach = {b for a, b in state.distances if a == agent} | {agent}  # reachable from the agent
    for oid, so in scene.items():  # unreachable spots are unknown spots
        if so.location is not None and so.location not in reach:
            scene[oid] = SceneObject(**{**so.__dict__, "location": None})
    state.placement = placement_table(
        [o.object_type for o in scene.values()],
        [o.object_type for o in scene.values() if o.receptacle],
    )
    _allow_task_placements(state.placement, task)
    return state


def _allow_task_placements(table: Dict[str, set], task) -> None:
    """ALFRED drew every task from its own placement table (VAL_RECEPTACLE_OBJECTS), so the
    placements the task needs are valid even where THOR 5's restrictions forbid them (e.g. a
    Pencil in a Mug); its PutObject runs with forceAction, which skips those restrictions."""
    pairs = [
        (task.parent, task.goal_class),
        (task.mrecep, task.goal_class),
        (task.parent, task.mrecep),
        (APPLIANCE.get(task.task_type, ""), task.goal_class),
    ]
    for rec, obj in pairs:
        if rec and obj and rec in table:
            table[rec].add(obj)


def _distances(nav: GridNavigator, locations: Sequence[str]) -> Dict[Tuple[str, str], int]:
    """ALFRED's distance facts: grid path length + 1, both directions, reachable pairs only."""
    nodes = {loc: parse_location(loc)[:3] for loc in locations}
    out: Dict[Tuple[str, str], int] = {}
    for a, na in nodes.items():
        d = nav.distances_from(na)
        for b, nb in nodes.items():
            if a != b and nb in d:
                out[(a, b)] = d[nb] + 1
    return out


__all__: List[str] = ["LocationIndex", "build_problem_state", "HORIZONS"]
