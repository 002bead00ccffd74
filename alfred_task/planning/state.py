"""The symbolic world the planners work on: scene objects, the problem state and the task.

:class:`ProblemState` is what :mod:`alfred_task.planning.scene_state` builds from simulator metadata
and what both planners and the symbolic executor read; :func:`parse_task` turns a dataset's
``task_type`` + ``pddl_params`` into a :class:`PlanningTask`, and :func:`relevant_objects`
is ALFRED's pruning of the scene to the objects a task can involve (§3.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

from alfred_task import constants as _C
from backends import SLICED_TYPE

__all__ = [
    "TASK_TYPES",
    "APPLIANCE_FOR",
    "STATE_TASK_ACTION",
    "ACTION_FLAG",
    "SceneObject",
    "ProblemState",
    "PlanningTask",
    "can_place_static",
    "can_place_in_object_static",
    "distances_from_coords",
    "parse_task",
    "slice_id",
    "sliced_type",
    "relevant_objects",
    "to_thor_metadata",
]

# One source of truth: the task types and class tables live in alfred_task.constants.
TASK_TYPES = _C.TASK_TYPES

# Appliance receptacle class used by each macro action (domain constants).
APPLIANCE_FOR = {"CleanObject": "SinkBasin", "HeatObject": "Microwave", "CoolObject": "Fridge"}
STATE_TASK_ACTION = {
    "pick_clean_then_place_in_recep": "CleanObject",
    "pick_heat_then_place_in_recep": "HeatObject",
    "pick_cool_then_place_in_recep": "CoolObject",
}
ACTION_FLAG = {"CleanObject": "cleaned", "HeatObject": "heated", "CoolObject": "cooled"}
# Class tables behind SceneObject.can() when an affordance flag is left as None.
_AFFORDANCE_CLASSES = {
    "cleanable": _C.CLEANABLE,
    "heatable": _C.HEATABLE,
    "coolable": _C.COOLABLE,
    "toggleable": _C.TOGGLEABLE,
    "sliceable": _C.SLICEABLE,
}


@dataclass
class SceneObject:
    """One object of the symbolic scene (a small subset of THOR metadata).

    ``parent`` is the *immediate* container: a fixed receptacle (CounterTop, Fridge,
    SinkBasin, ...) or a movable receptacle object (Bowl, Cup, ...), or None for an
    object lying in no receptacle.  ``location`` is the abstract interaction spot
    (e.g. ``loc|x|z|rot|hor``) from which the agent interacts with the object; for an
    object inside a fixed receptacle it defaults to the receptacle's location, for an
    object inside a movable receptacle it is ignored (the container's spot is used).

    Fixed receptacle = ``receptacle and not pickupable``; movable receptacle =
    ``receptacle and pickupable``.  ``cleaned``/``heated``/``cooled`` mean membership
    of the env-side sets (ThorEnv.cleaned_objects, ...), which is what evaluation
    checks (alfred.md §3.6); THOR's own ``isDirty`` is kept in ``dirty`` for
    information only.  Affordance flags left as None fall back to the class tables.
    ``slice_of`` is set for ``<Class>Sliced`` pieces (id of the whole object).
    """

    object_id: str
    object_type: str
    location: str | None = None
    parent: str | None = None
    receptacle: bool = False
    pickupable: bool = False
    openable: bool = False
    is_open: bool = False
    toggleable: bool | None = None
    is_toggled: bool = False
    sliceable: bool | None = None
    is_sliced: bool = False
    slice_of: str | None = None
    dirty: bool = False
    cleanable: bool | None = None
    heatable: bool | None = None
    coolable: bool | None = None
    cleaned: bool = False
    heated: bool = False
    cooled: bool = False

    @property
    def is_fixed_receptacle(self) -> bool:
        return self.receptacle and not self.pickupable

    @property
    def is_movable_receptacle(self) -> bool:
        return self.receptacle and self.pickupable

    def can(self, affordance: str) -> bool:
        """Affordance lookup: explicit flag, else the class table."""
        value = getattr(self, affordance)
        if value is not None:
            return bool(value)
        return self.object_type in _AFFORDANCE_CLASSES[affordance]


@dataclass
class ProblemState:
    """Symbolic scene: agent location, objects, and location-to-location costs.

    ``distances[(a, b)]`` is the GotoLocation cost from location a to b (ALFRED uses
    navigation-grid path length + 1, §3.2).  A missing (a, b) falls back to (b, a).
    ``placement`` optionally restricts placements: receptacle class -> set of object
    classes it accepts (classes missing from the dict accept anything; None = no
    restriction).  ``slices_per_object`` is how many ``<Class>Sliced_<k>`` pieces the
    symbolic executor creates when an object is sliced.  ``capacity`` is receptacle class ->
    how many objects it holds at most (THOR's object-specific receptacles hold one: a
    CoffeeMachine with a Mug in it takes no other), so a plan takes the Mug already there.
    """

    agent_location: str
    objects: dict[str, SceneObject]
    distances: dict[tuple[str, str], int] = field(default_factory=dict)
    held: str | None = None
    placement: dict[str, set[str]] | None = None
    slices_per_object: int = 3
    capacity: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.objects, dict):
            self.objects = {o.object_id: o for o in self.objects}

    # ---- helpers --------------------------------------------------------------
    def copy(self) -> "ProblemState":
        """Copy-on-write copy: the object dict is new, the SceneObjects are shared
        (mutations must go through :meth:`update_object`)."""
        return replace(self, objects=dict(self.objects))

    def update_object(self, oid: str, **changes) -> None:
        """Replace one object by a changed copy, so states sharing it (see :meth:`copy`) keep theirs."""
        self.objects[oid] = replace(self.objects[oid], **changes)

    def distance(self, a: str, b: str) -> int:
        if a == b:
            return 0
        d = self.distances.get((a, b))
        if d is None:
            d = self.distances.get((b, a))
        if d is None:
            raise KeyError(f"no distance between locations {a!r} and {b!r}")
        return int(d)

    def locations(self) -> list[str]:
        locs = {self.agent_location}
        for a, b in self.distances:
            locs.add(a)
            locs.add(b)
        for o in self.objects.values():
            if o.location is not None:
                locs.add(o.location)
        return sorted(locs)

    def object_location(self, oid: str) -> str | None:
        """The PDDL ``objectAtLocation`` of an object: None when held or inside a
        movable receptacle (or when it has no known spot)."""
        o = self.objects[oid]
        if self.held == oid:
            return None
        if o.is_fixed_receptacle:
            return o.location
        if o.parent is None:
            return o.location
        p = self.objects.get(o.parent)
        if p is None:
            return o.location
        if p.is_fixed_receptacle:
            return o.location if o.location is not None else p.location
        return None  # inside a movable receptacle

    def reach_location(self, oid: str) -> str | None:
        """Where the agent must stand to pick ``oid`` up."""
        o = self.objects[oid]
        if self.held == oid:
            return None
        if o.parent is not None and o.parent in self.objects:
            p = self.objects[o.parent]
            if not p.is_fixed_receptacle:
                return self.object_location(p.object_id)
        return self.object_location(oid)

    def coordinate_receptacle(self, oid: str) -> str | None:
        """The fixed receptacle an object is taken from (ALFRED's
        coordinateReceptacleObjectId); for an object in a movable receptacle, the
        container's fixed receptacle (or the container itself if it is loose)."""
        o = self.objects[oid]
        if o.parent is None or o.parent not in self.objects:
            return None
        p = self.objects[o.parent]
        if p.is_fixed_receptacle:
            return p.object_id
        if (
            p.parent is not None
            and p.parent in self.objects
            and self.objects[p.parent].is_fixed_receptacle
        ):
            return p.parent
        return p.object_id

    def can_place(self, oid: str, rid: str) -> bool:
        return can_place_static(self, self.objects[oid], self.objects[rid])

    def can_place_in_object(self, oid: str, mid: str) -> bool:
        return can_place_in_object_static(self, self.objects[oid], self.objects[mid])

    def is_full(self, rid: str) -> bool:
        """Does receptacle `rid` hold as many objects as its class can (see ``capacity``)?"""
        cap = self.capacity.get(self.objects[rid].object_type)
        return cap is not None and len(self.contents(rid)) >= cap

    def open_receptacles(self) -> list[str]:
        return sorted(k for k, o in self.objects.items() if o.is_fixed_receptacle and o.is_open)

    def all_closed(self) -> bool:
        return not self.open_receptacles()

    def contents(self, cid: str) -> list[str]:
        return sorted(k for k, o in self.objects.items() if o.parent == cid and k != self.held)


def can_place_static(state: ProblemState, o: SceneObject, r: SceneObject) -> bool:
    """Static placement guard (canPlace): the placement table, if any."""
    if o.object_id == r.object_id:
        return False
    if state.placement is None or r.object_type not in state.placement:
        return True
    return o.object_type in state.placement[r.object_type]


def can_place_in_object_static(state: ProblemState, o: SceneObject, m: SceneObject) -> bool:
    """Static guard (canPlaceInObject): only non-receptacle objects go into a movable
    receptacle (no nesting), subject to the placement table."""
    if o.object_id == m.object_id or not m.is_movable_receptacle or o.receptacle:
        return False
    return can_place_static(state, o, m)


def distances_from_coords(coords: Mapping[str, tuple[float, float]], base: int = 1) -> dict:
    """All-pairs GotoLocation costs from 2-D grid coordinates: Manhattan distance +
    ``base`` (ALFRED: path length + 1, which discourages waypoints)."""
    out = {}
    for a, (ax, az) in coords.items():
        for b, (bx, bz) in coords.items():
            if a != b:
                out[(a, b)] = int(round(abs(ax - bx) + abs(az - bz))) + base
    return out


@dataclass(frozen=True)
class PlanningTask:
    """A dataset task (``task_type`` + ``pddl_params``) in the form the planners use."""

    task_type: str
    object_class: str  # base class (pddl_params.object_target)
    sliced: bool
    parent: str
    toggle: str
    mrecep: str

    @property
    def goal_class(self) -> str:
        return self.object_class + "Sliced" if self.sliced else self.object_class


def parse_task(task_type: str, pddl_params: Mapping) -> PlanningTask:
    """Check ``pddl_params`` against what ``task_type`` needs, so planners fail early and clearly."""
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {TASK_TYPES}")
    obj = str(pddl_params.get("object_target") or "")
    sliced = bool(pddl_params.get("object_sliced", False))
    if obj.endswith("Sliced"):  # tolerate "AppleSliced" spelling
        obj, sliced = obj[: -len("Sliced")], True
    task = PlanningTask(
        task_type,
        obj,
        sliced,
        str(pddl_params.get("parent_target") or ""),
        str(pddl_params.get("toggle_target") or ""),
        str(pddl_params.get("mrecep_target") or ""),
    )
    if not task.object_class:
        raise ValueError("pddl_params.object_target is required")
    if task_type == "look_at_obj_in_light":
        if not task.toggle:
            raise ValueError("look_at_obj_in_light needs pddl_params.toggle_target")
    elif not task.parent:
        raise ValueError(f"{task_type} needs pddl_params.parent_target")
    if task_type == "pick_and_place_with_movable_recep" and not task.mrecep:
        raise ValueError("pick_and_place_with_movable_recep needs pddl_params.mrecep_target")
    return task


def slice_id(whole_id: str, whole_type: str, k: int) -> str:
    """Id of the k-th slice of a whole object (shared by the PDDL problem and the executor)."""
    return f"{whole_id}|{sliced_type(whole_type)}_{k}"


def sliced_type(whole_type: str) -> str:
    """The type a sliceable becomes when sliced (EggCracked for eggs): backends' one table."""
    return SLICED_TYPE.get(whole_type, whole_type + "Sliced")


def relevant_objects(state: ProblemState, task: PlanningTask) -> tuple[list[str], list[str]]:
    """Task-relevant items and all fixed receptacles (ALFRED §3.3 pruning): target
    class instances (whole sliceable objects and existing slices for sliced tasks),
    knives when slicing, movable receptacles of the mrecep class and any movable
    receptacle holding a target, toggle-class objects, and the held object."""
    objs = state.objects
    items: set[str] = set()
    for oid, o in objs.items():
        if o.is_fixed_receptacle:
            continue
        t = o.object_type
        if t == task.goal_class:
            items.add(oid)
        if task.sliced and t == task.object_class and o.can("sliceable"):
            items.add(oid)
        if task.sliced and t in _C.KNIVES:
            items.add(oid)
        if task.mrecep and t == task.mrecep and o.is_movable_receptacle:
            items.add(oid)
        if task.task_type == "look_at_obj_in_light" and t == task.toggle:
            items.add(oid)
    for oid in list(items):  # containers of relevant items
        p = objs[oid].parent
        if p is not None and p in objs and objs[p].is_movable_receptacle:
            items.add(p)
    if state.held is not None:
        items.add(state.held)
    receptacles = sorted(
        k for k, o in objs.items() if o.is_fixed_receptacle and o.location is not None
    )
    return sorted(items), receptacles


def to_thor_metadata(state: ProblemState) -> dict:
    """THOR-like view of a symbolic state for :mod:`alfred_task.env.goal_conditions`:
    ``{"objects": [...], "inventory": [...], "cleaned": set, "heated": set,
    "cooled": set}``.  ``receptacleObjectIds`` lists direct contents;
    ``parentReceptacles`` lists all enclosing receptacles; objects at the agent's
    location (or held) are ``visible``."""
    objs = state.objects
    children: dict[str, list[str]] = {}
    for k, o in objs.items():
        if o.parent is not None and k != state.held:
            children.setdefault(o.parent, []).append(k)
    out = []
    for k, o in objs.items():
        chain, p = [], (o.parent if k != state.held else None)
        while p is not None and p in objs and p not in chain:
            chain.append(p)
            p = objs[p].parent
        loc = state.reach_location(k) if not o.is_fixed_receptacle else o.location
        out.append(
            {
                "objectId": k,
                "objectType": o.object_type,
                "pickupable": o.pickupable or (o.slice_of is not None),
                "receptacle": o.receptacle,
                "receptacleObjectIds": sorted(children.get(k, [])) if o.receptacle else None,
                "parentReceptacles": chain or None,
                "openable": o.openable,
                "isOpen": o.is_open,
                "toggleable": o.can("toggleable"),
                "isToggled": o.is_toggled,
                "sliceable": o.can("sliceable"),
                "isSliced": o.is_sliced,
                "isDirty": o.dirty,
                "isPickedUp": state.held == k,
                "visible": state.held == k or loc == state.agent_location,
            }
        )
    return {
        "objects": out,
        "inventory": [{"objectId": state.held, "objectType": objs[state.held].object_type}]
        if state.held
        else [],
        "cleaned": {k for k, o in objs.items() if o.cleaned},
        "heated": {k for k, o in objs.items() if o.heated},
        "cooled": {k for k, o in objs.items() if o.cooled},
    }
