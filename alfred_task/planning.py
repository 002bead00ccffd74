"""Symbolic task planning for ALFRED-style tasks (alfred.md §3, planning.md).

Pipeline (as in ALFRED's generator, §3.3):

    ProblemState --make_problem--> PDDL problem (task-relevant objects only)
                 --solve (Fast Downward, subprocess)--> [HighLevelAction]

plus :func:`template_plan`, a millisecond task-specific planner that produces the
same kind of high-level plan (the ``plan.high_pddl`` structure of the dataset),
and :func:`apply_plan`, a symbolic executor with the same semantics as
``pddl/domain.pddl`` (used to validate plans from either planner).

High-level plan structure (matches ``plan.high_pddl``): GotoLocation, PickupObject,
PutObject, Clean/Heat/CoolObject (abstract macros at the sink basin / microwave /
fridge), ToggleObject, SliceObject, OpenObject/CloseObject (only when a
receptacle starts open: pick/put are abstract and the low-level expansion does the
opening and closing, which is why the released high_pddl never contains them), and
a final NoOp (``End``).

Fast Downward comes from the GPL ``up-fast-downward`` wheel and is only ever run
as a separate program (see :func:`find_fast_downward`); none of its code is
imported.
"""
from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from alfred_task import constants as _C

__all__ = [
    "TASK_TYPES",
    "DOMAIN_PATH",
    "DEFAULT_SEARCH",
    "DEFAULT_GOAL_STYLE",
    "EXISTS_SEARCH",
    "FALLBACK_SEARCH",
    "ACTION_COSTS",
    "SceneObject",
    "ProblemState",
    "HighLevelAction",
    "PlanningError",
    "UnsolvableError",
    "PlannerTimeoutError",
    "PlannerNotFoundError",
    "PlanExecutionError",
    "load_domain",
    "make_problem",
    "find_fast_downward",
    "solve",
    "template_plan",
    "apply_action",
    "apply_plan",
    "plan_cost",
    "goal_reached",
    "distances_from_coords",
    "to_thor_metadata",
    "high_pddl",
]

# --------------------------------------------------------------------------------------
# Task vocabulary and class tables
# --------------------------------------------------------------------------------------

# One source of truth: the task types and class tables live in alfred_task.constants.
TASK_TYPES = _C.TASK_TYPES
HEATABLE_CLASSES = _C.HEATABLE
COOLABLE_CLASSES = _C.COOLABLE
CLEANABLE_CLASSES = _C.CLEANABLE
TOGGLEABLE_CLASSES = _C.TOGGLEABLE
SLICEABLE_CLASSES = _C.SLICEABLE
MOVABLE_RECEPTACLE_CLASSES = _C.MOVABLE_RECEPTACLES
KNIFE_CLASSES = ("Knife", "ButterKnife")  # ordered: the template planner prefers a Knife

# Appliance receptacle class used by each macro action (domain constants).
APPLIANCE_FOR = {"CleanObject": "SinkBasin", "HeatObject": "Microwave", "CoolObject": "Fridge"}
_STATE_TASK_ACTION = {
    "pick_clean_then_place_in_recep": "CleanObject",
    "pick_heat_then_place_in_recep": "HeatObject",
    "pick_cool_then_place_in_recep": "CoolObject",
}
_ACTION_FLAG = {"CleanObject": "cleaned", "HeatObject": "heated", "CoolObject": "cooled"}

# Action costs (alfred.md §3.2): goto = distance; open/close/pick/put = 1;
# clean/heat/cool/toggle/slice = 5.
ACTION_COSTS = {
    "OpenObject": 1, "CloseObject": 1, "PickupObject": 1, "PutObject": 1,
    "CleanObject": 5, "HeatObject": 5, "CoolObject": 5, "ToggleObject": 5,
    "SliceObject": 5, "NoOp": 0,
}

DOMAIN_PATH = Path(__file__).resolve().parent / "pddl" / "domain.pddl"

# Search configuration.  planning.md §5 recommends exact A* (hmax or blind) on
# pruned problems, which is what ALFRED-style existential goals allow: FD turns
# such a goal into an axiom, and axioms rule out lmcut and the landmark heuristics
# (exit 34).  With goal_style="action" (zero-cost ReachGoal* actions, FF's REACH-GOAL
# idea) there are no axioms, and A* with admissible landmark cost partitioning was
# the fastest exact configuration measured here (2 cores; 330 random kitchen
# problems, 14 receptacles, ~25 objects, all 7 types + 4 sliced variants): same
# optimal costs as hmax, mean 0.46 s vs 0.62 s, worst 5.5 s vs 12.4 s; lmcut worst
# 19.7 s + 1 timeout at 20 s.  The slow cases are sliced tasks (mostly pick-two) with
# several knives: on 300 such problems 10 took > 2.5 s, the worst 19.6 s, which is
# why solve() falls back to weighted A* after ``timeout_s``.
DEFAULT_GOAL_STYLE = "action"
DEFAULT_SEARCH = "astar(landmark_cost_partitioning(lm_hm(m=1)))"
EXISTS_SEARCH = "astar(hmax())"      # planning.md's config, for goal_style="exists"
FALLBACK_SEARCH = "eager_wastar([ff()],w=3)"  # planning.md §5 fallback on timeout


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------

class PlanningError(RuntimeError):
    """Base class for planning failures."""


class UnsolvableError(PlanningError):
    """The goal cannot be reached from the given state."""


class PlannerTimeoutError(PlanningError):
    """The planner hit its time limit."""


class PlannerNotFoundError(PlanningError):
    """The Fast Downward driver/binary from `up-fast-downward` is not available."""


class PlanExecutionError(PlanningError):
    """A plan step is not applicable in the symbolic state."""


# --------------------------------------------------------------------------------------
# Data classes
# --------------------------------------------------------------------------------------

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
        table = {
            "cleanable": CLEANABLE_CLASSES,
            "heatable": HEATABLE_CLASSES,
            "coolable": COOLABLE_CLASSES,
            "toggleable": TOGGLEABLE_CLASSES,
            "sliceable": SLICEABLE_CLASSES,
        }[affordance]
        return self.object_type in table


@dataclass
class ProblemState:
    """Symbolic scene: agent location, objects, and location-to-location costs.

    ``distances[(a, b)]`` is the GotoLocation cost from location a to b (ALFRED uses
    navigation-grid path length + 1, §3.2).  A missing (a, b) falls back to (b, a).
    ``placement`` optionally restricts placements: receptacle class -> set of object
    classes it accepts (classes missing from the dict accept anything; None = no
    restriction).  ``slices_per_object`` is how many ``<Class>Sliced_<k>`` pieces the
    symbolic executor creates when an object is sliced.
    """

    agent_location: str
    objects: dict[str, SceneObject]
    distances: dict[tuple[str, str], int] = field(default_factory=dict)
    held: str | None = None
    placement: dict[str, set[str]] | None = None
    slices_per_object: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.objects, dict):
            self.objects = {o.object_id: o for o in self.objects}

    # ---- helpers --------------------------------------------------------------
    def copy(self) -> "ProblemState":
        """Copy-on-write copy: the object dict is new, the SceneObjects are shared
        (mutations must go through ``_set``)."""
        return replace(self, objects=dict(self.objects))

    def _set(self, oid: str, **changes) -> None:
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
        if p.parent is not None and p.parent in self.objects and \
                self.objects[p.parent].is_fixed_receptacle:
            return p.parent
        return p.object_id

    def can_place(self, oid: str, rid: str) -> bool:
        return _can_place(self, self.objects[oid], self.objects[rid])

    def can_place_in_object(self, oid: str, mid: str) -> bool:
        return _can_place_in_object(self, self.objects[oid], self.objects[mid])

    def open_receptacles(self) -> list[str]:
        return sorted(k for k, o in self.objects.items() if o.is_fixed_receptacle and o.is_open)

    def all_closed(self) -> bool:
        return not self.open_receptacles()

    def contents(self, cid: str) -> list[str]:
        return sorted(k for k, o in self.objects.items() if o.parent == cid and k != self.held)


def _can_place(state: ProblemState, o: SceneObject, r: SceneObject) -> bool:
    """Static placement guard (canPlace): the placement table, if any."""
    if o.object_id == r.object_id:
        return False
    if state.placement is None or r.object_type not in state.placement:
        return True
    return o.object_type in state.placement[r.object_type]


def _can_place_in_object(state: ProblemState, o: SceneObject, m: SceneObject) -> bool:
    """Static guard (canPlaceInObject): only non-receptacle objects go into a movable
    receptacle (no nesting), subject to the placement table."""
    if o.object_id == m.object_id or not m.is_movable_receptacle or o.receptacle:
        return False
    return _can_place(state, o, m)


def distances_from_coords(coords: Mapping[str, tuple[float, float]], base: int = 1) -> dict:
    """All-pairs GotoLocation costs from 2-D grid coordinates: Manhattan distance +
    ``base`` (ALFRED: path length + 1, which discourages waypoints)."""
    out = {}
    for a, (ax, az) in coords.items():
        for b, (bx, bz) in coords.items():
            if a != b:
                out[(a, b)] = int(round(abs(ax - bx) + abs(az - bz))) + base
    return out


@dataclass
class HighLevelAction:
    """One ``plan.high_pddl`` step.

    ``action``/``args`` form ``discrete_action`` (args are lower-case class names;
    for slices the whole object's class, e.g. ``potato``, as in the dataset).
    ``object_id``: the picked/put/cleaned/heated/cooled object, the toggled lamp,
    the sliced object, or the opened/closed receptacle.  ``receptacle_id``: the put
    target, the appliance (sink basin/microwave/fridge), or the receptacle a picked
    object is taken from.  ``location``: GotoLocation target.  ``tool_id``: the knife
    of a SliceObject.  ``cost``: the action's planning cost.
    """

    action: str
    args: list[str] = field(default_factory=list)
    object_id: str | None = None
    receptacle_id: str | None = None
    location: str | None = None
    tool_id: str | None = None
    cost: int = 0
    pddl: str | None = None

    @property
    def discrete_action(self) -> dict:
        return {"action": self.action, "args": list(self.args)}

    @property
    def planner_action(self) -> dict:
        """ALFRED-style ``planner_action`` (field names as in the dataset, §2.4)."""
        a = self.action
        if a == "NoOp":
            return {"action": "End", "value": 1}
        if a == "GotoLocation":
            return {"action": a, "location": self.location}
        d: dict = {"action": a}
        if a in ("HeatObject", "CoolObject"):
            d["objectId"] = self.receptacle_id
            d["heldObjectId"] = self.object_id
        elif a == "CleanObject":
            d["objectId"] = self.receptacle_id
            d["cleanObjectId"] = self.object_id
        else:
            d["objectId"] = self.object_id
            if a == "PutObject":
                d["receptacleObjectId"] = self.receptacle_id
            elif a == "PickupObject" and self.receptacle_id is not None:
                d["coordinateReceptacleObjectId"] = self.receptacle_id
            elif a == "SliceObject" and self.tool_id is not None:
                d["knifeObjectId"] = self.tool_id
        return d

    def to_high_pddl(self, high_idx: int) -> dict:
        return {"high_idx": high_idx, "discrete_action": self.discrete_action,
                "planner_action": self.planner_action}

    def key(self) -> tuple:
        return (self.action, tuple(self.args))


def high_pddl(plan: Sequence[HighLevelAction]) -> list[dict]:
    """The plan in the dataset's ``plan.high_pddl`` list form."""
    return [a.to_high_pddl(i) for i, a in enumerate(plan)]


def _arg_name(object_type: str) -> str:
    """discrete_action argument: lower-case class, slices named after the whole."""
    t = object_type
    if t.endswith("Sliced"):
        t = t[: -len("Sliced")]
    return t.lower()


def load_domain() -> str:
    return DOMAIN_PATH.read_text()


# --------------------------------------------------------------------------------------
# Task parameters
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Task:
    task_type: str
    object_class: str       # base class (pddl_params.object_target)
    sliced: bool
    parent: str
    toggle: str
    mrecep: str

    @property
    def goal_class(self) -> str:
        return self.object_class + "Sliced" if self.sliced else self.object_class


def _parse_task(task_type: str, pddl_params: Mapping) -> _Task:
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {TASK_TYPES}")
    obj = str(pddl_params.get("object_target") or "")
    sliced = bool(pddl_params.get("object_sliced", False))
    if obj.endswith("Sliced"):  # tolerate "AppleSliced" spelling
        obj, sliced = obj[: -len("Sliced")], True
    task = _Task(task_type, obj, sliced, str(pddl_params.get("parent_target") or ""),
                 str(pddl_params.get("toggle_target") or ""),
                 str(pddl_params.get("mrecep_target") or ""))
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


def _slice_id(whole_id: str, whole_type: str, k: int) -> str:
    return f"{whole_id}|{whole_type}Sliced_{k}"


def _n_slice_placeholders(task: _Task) -> int:
    return 2 if task.task_type == "pick_two_obj_and_place" else 1


def _relevant(state: ProblemState, task: _Task) -> tuple[list[str], list[str]]:
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
        if task.sliced and t in KNIFE_CLASSES:
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
    receptacles = sorted(k for k, o in objs.items()
                         if o.is_fixed_receptacle and o.location is not None)
    return sorted(items), receptacles


# --------------------------------------------------------------------------------------
# PDDL problem generation
# --------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"[^a-z0-9_]")


class _Names:
    """Case-insensitive, collision-free PDDL names for ids (FD lower-cases input)."""

    def __init__(self) -> None:
        self.by_id: dict[tuple[str, str], str] = {}
        self.used: set[str] = set()

    def get(self, prefix: str, ident: str) -> str:
        key = (prefix, ident)
        if key in self.by_id:
            return self.by_id[key]
        s = ident.lower().replace("|", "_bar_").replace("+", "_plus_").replace(
            "-", "_minus_").replace(".", "_dot_").replace(",", "_comma_")
        s = prefix + "_" + _NAME_RE.sub("_", s)
        name, k = s, 1
        while name in self.used:
            k += 1
            name = f"{s}_{k}"
        self.used.add(name)
        self.by_id[key] = name
        return name


_DOMAIN_CONSTANTS = {"sinkbasintype", "microwavetype", "fridgetype", "knifetype",
                     "butterknifetype"}


def make_problem(state: ProblemState, task_type: str, pddl_params: Mapping,
                 problem_name: str = "alfred_task", goal_style: str = DEFAULT_GOAL_STYLE) -> str:
    """PDDL problem for ``domain.pddl`` with only task-relevant objects.

    The goal is the ALFRED goal template for ``task_type`` (§3.1: existential over
    class tags, plus "all receptacles closed" for every type but look_at_obj_in_light).
    ``goal_style="exists"`` writes it literally as ALFRED did (needs an axiom-capable
    search such as ``EXISTS_SEARCH``); ``goal_style="action"`` (default) sets the
    task flag and target class tags and asks for ``(goalReached)``, which the domain's
    matching zero-cost ReachGoal* action (same conditions) achieves.
    A comment line ``;; @alfred-map {json}`` maps PDDL names back to ids/classes so
    :func:`solve` can rebuild high-level actions.
    """
    task = _parse_task(task_type, pddl_params)
    opened = state.open_receptacles()
    if len(opened) > 1:
        raise ValueError(
            f"{len(opened)} receptacles are open ({opened}); ALFRED's domain lets at most "
            "one be open at a time (GotoLocation/OpenObject require all closed)")
    items, receptacles = _relevant(state, task)
    objs = state.objects
    names = _Names()
    mapping: dict[str, list] = {}

    def item_name(oid: str) -> str:
        n = names.get("i", oid)
        o = objs.get(oid)
        if o is not None:
            mapping[n] = ["item", o.object_type, oid, o.parent]
        return n

    def rec_name(rid: str) -> str:
        n = names.get("r", rid)
        mapping[n] = ["receptacle", objs[rid].object_type, rid, None]
        return n

    def loc_name(lid: str) -> str:
        n = names.get("l", lid)
        mapping[n] = ["location", None, lid, None]
        return n

    init: list[str] = []
    agent = "agent1"
    item_names = {oid: item_name(oid) for oid in items}
    rec_names = {rid: rec_name(rid) for rid in receptacles}
    otypes: set[str] = set()
    rtypes: set[str] = set()
    locs: set[str] = {state.agent_location}

    init.append(f"(atLocation {agent} {loc_name(state.agent_location)})")
    if state.held is None:
        init.append(f"(handEmpty {agent})")
    else:
        init.append(f"(holds {agent} {item_names[state.held]})")
    if not opened:
        init.append("(allClosed)")

    for rid in receptacles:
        r = objs[rid]
        rn = rec_names[rid]
        rtypes.add(r.object_type)
        locs.add(r.location)
        init.append(f"(receptacleType {rn} {r.object_type}Type)")
        init.append(f"(receptacleAtLocation {rn} {loc_name(r.location)})")
        if r.openable:
            init.append(f"(openable {rn})")
        if r.is_open:
            init.append(f"(opened {rn})")

    def item_facts(oid: str, name: str, otype: str, o: SceneObject) -> None:
        otypes.add(otype)
        init.append(f"(objectType {name} {otype}Type)")
        for aff, pred in (("cleanable", "cleanable"), ("heatable", "heatable"),
                          ("coolable", "coolable")):
            if o.can(aff):
                init.append(f"({pred} {name})")
        if o.is_movable_receptacle:
            init.append(f"(isReceptacleObject {name})")
        for rid in receptacles:
            if _can_place(state, o, objs[rid]):
                init.append(f"(canPlace {name} {rec_names[rid]})")
        for mid in items:
            if mid != oid and _can_place_in_object(state, o, objs[mid]):
                init.append(f"(canPlaceInObject {name} {item_names[mid]})")

    n_ph = _n_slice_placeholders(task) if task.sliced else 0
    for oid in items:
        o = objs[oid]
        n = item_names[oid]
        item_facts(oid, n, o.object_type, o)
        if o.pickupable:
            init.append(f"(pickupable {n})")
        if o.cleaned:
            init.append(f"(isClean {n})")
        if o.heated:
            init.append(f"(isHot {n})")
        if o.cooled:
            init.append(f"(isCool {n})")
        if o.can("toggleable"):
            init.append(f"(toggleable {n})")
            if o.is_toggled:
                init.append(f"(isOn {n})")
        if o.can("sliceable"):
            init.append(f"(sliceable {n})")
        if o.is_sliced:
            init.append(f"(isSliced {n})")
        if state.held == oid:
            continue
        loc = state.object_location(oid)
        if loc is not None:
            locs.add(loc)
            init.append(f"(objectAtLocation {n} {loc_name(loc)})")
        if o.parent is None:
            init.append(f"(isLoose {n})")
        elif o.parent in rec_names:
            init.append(f"(inReceptacle {n} {rec_names[o.parent]})")
        elif o.parent in item_names and objs[o.parent].is_movable_receptacle:
            init.append(f"(inReceptacleObject {n} {item_names[o.parent]})")
        # Slice placeholders of a whole target object that is not sliced yet.
        if n_ph and o.object_type == task.object_class and o.can("sliceable") and not o.is_sliced:
            for k in range(n_ph):
                sid = _slice_id(oid, o.object_type, k)
                sn = names.get("i", sid)
                mapping[sn] = ["item", o.object_type + "Sliced", sid, o.parent]
                sl = SceneObject(sid, o.object_type + "Sliced", pickupable=True, slice_of=oid)
                item_facts(sid, sn, sl.object_type, sl)
                init.append(f"(sliceOf {sn} {n})")
                init.append(f"(pickupable {sn})")

    # Classes referenced by the goal must exist as constants.
    otypes.add(task.goal_class)
    if task.mrecep:
        otypes.add(task.mrecep)
    if task.toggle:
        otypes.add(task.toggle)
    if task.parent:
        rtypes.add(task.parent)
    clash = {t.lower() for t in otypes} & {t.lower() for t in rtypes}
    if clash:
        raise ValueError(f"classes used both as item and fixed receptacle: {sorted(clash)}")

    loc_list = sorted(locs)
    for a in loc_list:
        for b in loc_list:
            if a != b:
                init.append(f"(= (distance {loc_name(a)} {loc_name(b)}) {state.distance(a, b)})")
    init.append("(= (total-cost) 0)")

    if goal_style == "exists":
        goal = _goal_pddl(task, agent)
    elif goal_style == "action":
        flag = {"pick_and_place_simple": "taskPlace", "pick_clean_then_place_in_recep": "taskClean",
                "pick_heat_then_place_in_recep": "taskHeat",
                "pick_cool_then_place_in_recep": "taskCool", "pick_two_obj_and_place": "taskTwo",
                "pick_and_place_with_movable_recep": "taskMovable",
                "look_at_obj_in_light": "taskLook"}[task.task_type]
        init.append(f"({flag})")
        init.append(f"(targetObjectType {task.goal_class}Type)")
        if task.parent and task.task_type != "look_at_obj_in_light":
            init.append(f"(targetParentType {task.parent}Type)")
        if task.mrecep:
            init.append(f"(targetMrecepType {task.mrecep}Type)")
        if task.toggle and task.task_type == "look_at_obj_in_light":
            init.append(f"(targetToggleType {task.toggle}Type)")
        goal = "(goalReached)"
    else:
        raise ValueError(f"goal_style must be 'exists' or 'action', not {goal_style!r}")

    def const_list(types: Iterable[str], kind: str) -> str:
        consts = [f"{t}Type" for t in sorted(types) if f"{t}Type".lower() not in _DOMAIN_CONSTANTS]
        return (" ".join(consts) + f" - {kind}") if consts else ""

    obj_lines = [f"    {agent} - agent",
                 "    " + " ".join(loc_name(l) for l in loc_list) + " - location"]
    if rec_names:
        obj_lines.append("    " + " ".join(rec_names[r] for r in receptacles) + " - receptacle")
    all_items = [n for n, v in mapping.items() if v[0] == "item"]
    if all_items:
        obj_lines.append("    " + " ".join(all_items) + " - item")
    for line in (const_list(otypes, "otype"), const_list(rtypes, "rtype")):
        if line:
            obj_lines.append("    " + line)

    header = (f";; ALFRED task {task.task_type} {json.dumps(dict(pddl_params), sort_keys=True)}\n"
              f";; @alfred-map {json.dumps(mapping, sort_keys=True)}\n")
    return (header
            + f"(define (problem {problem_name})\n  (:domain alfred_task)\n"
            + "  (:objects\n" + "\n".join(obj_lines) + ")\n"
            + "  (:init\n    " + "\n    ".join(init) + ")\n"
            + f"  (:goal {goal})\n"
            + "  (:metric minimize (total-cost)))\n")


def _goal_pddl(task: _Task, agent: str) -> str:
    O = f"{task.goal_class}Type"
    closed = "(allClosed)"
    tt = task.task_type

    def inside(o: str, c: str, pred: str = "inReceptacle") -> str:
        return f"({pred} {o} {c})"

    if tt == "pick_and_place_simple":
        body = (f"(exists (?o - item ?r - receptacle) (and (objectType ?o {O}) "
                f"(receptacleType ?r {task.parent}Type) {inside('?o', '?r')}))")
    elif tt in _STATE_TASK_ACTION:
        flag = {"CleanObject": "isClean", "HeatObject": "isHot",
                "CoolObject": "isCool"}[_STATE_TASK_ACTION[tt]]
        body = (f"(exists (?o - item ?r - receptacle) (and (objectType ?o {O}) "
                f"(receptacleType ?r {task.parent}Type) ({flag} ?o) (inReceptacle ?o ?r)))")
    elif tt == "pick_two_obj_and_place":
        body = (f"(exists (?o1 - item ?o2 - item ?r - receptacle) (and (objectType ?o1 {O}) "
                f"(objectType ?o2 {O}) (not (= ?o1 ?o2)) (receptacleType ?r {task.parent}Type) "
                f"{inside('?o1', '?r')} {inside('?o2', '?r')}))")
    elif tt == "pick_and_place_with_movable_recep":
        body = (f"(exists (?o - item ?m - item ?r - receptacle) (and (objectType ?o {O}) "
                f"(objectType ?m {task.mrecep}Type) (isReceptacleObject ?m) "
                f"{inside('?o', '?m', 'inReceptacleObject')} (receptacleType ?r {task.parent}Type) "
                f"(inReceptacle ?m ?r)))")
    elif tt == "look_at_obj_in_light":
        return (f"(exists (?o - item ?t - item ?l - location) (and (objectType ?o {O}) "
                f"(holds {agent} ?o) (objectType ?t {task.toggle}Type) (toggleable ?t) "
                f"(isOn ?t) (objectAtLocation ?t ?l) (atLocation {agent} ?l)))")
    else:  # pragma: no cover
        raise ValueError(tt)
    return f"(and {closed} {body})"


# --------------------------------------------------------------------------------------
# Fast Downward (subprocess)
# --------------------------------------------------------------------------------------

def find_fast_downward() -> tuple[Path, Path]:
    """Locate the Fast Downward driver script and search binary in ``up-fast-downward``.

    Path logic: ``$ALFRED_FD_DRIVER`` (a ``fast-downward.py``) if set; otherwise the
    ``up_fast_downward`` package directory is found with ``importlib.util.find_spec``
    (which does not execute the package) and the wheel layout is
    ``up_fast_downward/downward/fast-downward.py`` (driver) and
    ``up_fast_downward/downward/builds/release/bin/downward`` (search binary).  The
    driver runs the translator as ``sys.executable -m fast_downward.translate`` (the
    ``fast-downward.translate`` wheel), so it must be run with this interpreter.
    Returns ``(driver, search_binary)``.
    """
    env = os.environ.get("ALFRED_FD_DRIVER")
    if env:
        driver = Path(env)
        binary = driver.parent / "builds" / "release" / "bin" / "downward"
    else:
        spec = importlib.util.find_spec("up_fast_downward")
        if spec is None or not spec.submodule_search_locations:
            raise PlannerNotFoundError(
                "Fast Downward not found: install the 'up-fast-downward' package "
                "(pip install up-fast-downward==1.0.0) into this Python environment")
        root = Path(list(spec.submodule_search_locations)[0]) / "downward"
        driver = root / "fast-downward.py"
        binary = root / "builds" / "release" / "bin" / "downward"
    if not driver.is_file() or not binary.is_file():
        raise PlannerNotFoundError(
            f"Fast Downward driver/binary missing ({driver}, {binary}); reinstall the "
            "'up-fast-downward' package (it ships the 'downward' binary)")
    return driver, binary


_FD_UNSOLVABLE = {10, 11, 12, 13}
_FD_TIMEOUT = {21, 23, 24}
_FD_MEMORY = {20, 22}


def _run_fd(domain_str: str, problem_str: str, search: str, timeout_s: float) -> tuple[list[str], str]:
    driver, _ = find_fast_downward()
    with tempfile.TemporaryDirectory(prefix="alfred_fd_") as tmp:
        d = Path(tmp)
        (d / "domain.pddl").write_text(domain_str)
        (d / "problem.pddl").write_text(problem_str)
        limit = max(1, int(math.ceil(timeout_s)))
        cmd = [sys.executable, str(driver), "--plan-file", str(d / "plan"),
               "--overall-time-limit", f"{limit}s",
               str(d / "domain.pddl"), str(d / "problem.pddl"), "--search", search]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout_s + 5.0)
        except subprocess.TimeoutExpired as e:
            raise PlannerTimeoutError(f"Fast Downward ({search}) exceeded {timeout_s:.1f} s") from e
        log = proc.stdout + proc.stderr
        rc = proc.returncode
        if rc == 0:
            plan_path = d / "plan"
            if not plan_path.exists():
                raise PlanningError(f"Fast Downward exited 0 without a plan file:\n{log[-2000:]}")
            lines = [ln.strip() for ln in plan_path.read_text().splitlines()]
            return [ln for ln in lines if ln and not ln.startswith(";")], log
        if rc in _FD_UNSOLVABLE:
            raise UnsolvableError(f"Fast Downward proved the problem unsolvable (exit {rc}, {search})")
        if rc in _FD_TIMEOUT:
            raise PlannerTimeoutError(f"Fast Downward ({search}) exceeded {timeout_s:.1f} s (exit {rc})")
        if rc in _FD_MEMORY:
            raise PlanningError(f"Fast Downward ran out of memory (exit {rc})")
        if rc == 34:
            raise PlanningError(
                f"Fast Downward: search '{search}' does not support this task (exit 34; "
                "lmcut/landmark heuristics reject the axiom FD builds for a goal_style="
                f"'exists' goal: use goal_style='action', or search '{EXISTS_SEARCH}'):"
                f"\n{log[-1500:]}")
        raise PlanningError(f"Fast Downward failed (exit {rc}):\n{log[-3000:]}")


_MAP_RE = re.compile(r"^;; @alfred-map (.*)$", re.M)
_DIST_RE = re.compile(r"\(= \(distance (\S+) (\S+)\) (\d+)\)")


def solve(domain_str: str, problem_str: str, search: str = DEFAULT_SEARCH,
          timeout_s: float = 10.0, fallback_search: str | None = FALLBACK_SEARCH
          ) -> list[HighLevelAction]:
    """Plan with Fast Downward and return the high-level plan (ending in NoOp).

    Runs the wheel's driver as a subprocess in a temporary directory (removed
    afterwards) with ``--overall-time-limit`` and a wall-clock timeout.  If
    ``search`` times out and ``fallback_search`` is given, it is run once with the
    same limit (planning.md §5: ``eager_wastar([ff()],w=3)``).  Raises
    :class:`UnsolvableError` when FD proves the goal unreachable,
    :class:`PlannerTimeoutError` on timeout, :class:`PlannerNotFoundError` if the
    ``up-fast-downward`` package is missing.  Consecutive GotoLocations are merged
    (ALFRED's post-processing, §3.3).
    """
    try:
        lines, _ = _run_fd(domain_str, problem_str, search, timeout_s)
    except PlannerTimeoutError:
        if not fallback_search or fallback_search == search:
            raise
        lines, _ = _run_fd(domain_str, problem_str, fallback_search, timeout_s)
    m = _MAP_RE.search(problem_str)
    mapping = json.loads(m.group(1)) if m else {}
    dist = {(a, b): int(c) for a, b, c in _DIST_RE.findall(problem_str)}
    return _plan_from_pddl(lines, mapping, dist)


def _plan_from_pddl(lines: list[str], mapping: dict, dist: dict) -> list[HighLevelAction]:
    def ident(name: str) -> str:
        return mapping[name][2] if name in mapping else name

    def otype(name: str) -> str:
        return mapping[name][1] if name in mapping and mapping[name][1] else name

    parents = {v[2]: v[3] for v in mapping.values() if v[0] == "item"}
    types = {v[2]: v[1] for v in mapping.values() if v[1]}
    kinds = {v[2]: v[0] for v in mapping.values()}
    plan: list[HighLevelAction] = []
    for line in lines:
        toks = line.strip("()").split()
        op, p = toks[0].lower(), toks[1:]
        if op == "gotolocation":
            a = HighLevelAction("GotoLocation", location=ident(p[2]),
                                cost=dist.get((p[1], p[2]), 0), pddl=line)
            a._from = ident(p[1])  # type: ignore[attr-defined]
        elif op in ("openobject", "closeobject"):
            name = "OpenObject" if op == "openobject" else "CloseObject"
            a = HighLevelAction(name, [_arg_name(otype(p[2]))], object_id=ident(p[2]),
                                cost=1, pddl=line)
        elif op.startswith("pickupobject"):
            o = ident(p[2])
            rec = None
            if op == "pickupobjectinreceptacle":
                rec = ident(p[3])
            elif op == "pickupobjectinreceptacleobject":
                m = ident(p[3])
                mp = parents.get(m)
                rec = mp if (mp is not None and kinds.get(mp) == "receptacle") else m
            parents[o] = None
            a = HighLevelAction("PickupObject", [_arg_name(otype(p[2]))], object_id=o,
                                receptacle_id=rec, cost=1, pddl=line)
        elif op.startswith("putobject"):
            o, r = ident(p[2]), ident(p[3])
            parents[o] = r
            a = HighLevelAction("PutObject", [_arg_name(otype(p[2])), _arg_name(otype(p[3]))],
                                object_id=o, receptacle_id=r, cost=1, pddl=line)
        elif op in ("cleanobject", "heatobject", "coolobject"):
            name = {"cleanobject": "CleanObject", "heatobject": "HeatObject",
                    "coolobject": "CoolObject"}[op]
            a = HighLevelAction(name, [_arg_name(otype(p[3]))], object_id=ident(p[3]),
                                receptacle_id=ident(p[2]), cost=5, pddl=line)
        elif op in ("toggleobjecton", "toggleobjectoff"):
            a = HighLevelAction("ToggleObject", [_arg_name(otype(p[2]))], object_id=ident(p[2]),
                                cost=5, pddl=line)
        elif op in ("sliceobjectinreceptacle", "sliceobjectnoreceptacle"):
            co = ident(p[2])
            rec = ident(p[4]) if op == "sliceobjectinreceptacle" else None
            for sid in parents:
                if sid.startswith(co + "|"):
                    parents[sid] = rec
            a = HighLevelAction("SliceObject", [_arg_name(otype(p[2]))], object_id=co,
                                tool_id=ident(p[3]), cost=5, pddl=line)
        elif op.startswith("reachgoal"):
            continue  # FF's REACH-GOAL: becomes the final NoOp/End
        else:
            raise PlanningError(f"unknown planner action in plan: {line}")
        plan.append(a)
    # ALFRED drops a GotoLocation that is immediately followed by another one.
    merged: list[HighLevelAction] = []
    for a in plan:
        if merged and a.action == "GotoLocation" and merged[-1].action == "GotoLocation":
            prev = merged.pop()
            start = prev._from  # type: ignore[attr-defined]
            a.cost = _dist_lookup(dist, mapping, start, a.location, a.cost)
            a._from = start  # type: ignore[attr-defined]
        merged.append(a)
    merged.append(HighLevelAction("NoOp", []))
    _fill_goto_args(merged, types)
    return merged


def _dist_lookup(dist: dict, mapping: dict, a: str, b: str, default: int) -> int:
    rev = {v[2]: k for k, v in mapping.items() if v[0] == "location"}
    if a == b:
        return 0
    return dist.get((rev.get(a, a), rev.get(b, b)), default)


def _fill_goto_args(plan: list[HighLevelAction], types: Mapping[str, str]) -> None:
    """GotoLocation args = [the receptacle of the next action, or else its object]
    (dataset convention, §2.4)."""
    for i, a in enumerate(plan):
        if a.action != "GotoLocation":
            continue
        nxt = plan[i + 1] if i + 1 < len(plan) else None
        target = None
        if nxt is not None:
            if nxt.action in ("PickupObject", "PutObject", "CleanObject", "HeatObject", "CoolObject"):
                target = nxt.receptacle_id or nxt.object_id
            elif nxt.action in ("ToggleObject", "SliceObject", "OpenObject", "CloseObject"):
                target = nxt.object_id
        a.args = [_arg_name(types[target])] if target is not None and target in types else []


# --------------------------------------------------------------------------------------
# Symbolic executor (same semantics as domain.pddl)
# --------------------------------------------------------------------------------------

def _fail(msg: str) -> None:
    raise PlanExecutionError(msg)


def apply_action(state: ProblemState, action: HighLevelAction) -> tuple[ProblemState, int]:
    """Apply one high-level action to a copy of ``state``; returns (state, cost).
    Raises :class:`PlanExecutionError` if a precondition fails."""
    s = state.copy()
    objs = s.objects
    a = action.action

    def need(oid: str | None, what: str) -> SceneObject:
        if oid is None or oid not in objs:
            _fail(f"{a}: unknown {what} {oid!r}")
        return objs[oid]

    if a == "NoOp":
        return s, 0
    if a == "GotoLocation":
        if action.location is None:
            _fail("GotoLocation without a location")
        if not s.all_closed():
            _fail(f"GotoLocation while {s.open_receptacles()} open")
        if action.location == s.agent_location:
            _fail("GotoLocation to the current location")
        cost = s.distance(s.agent_location, action.location)
        s.agent_location = action.location
        return s, cost
    if a in ("OpenObject", "CloseObject"):
        r = need(action.object_id, "receptacle")
        if not r.is_fixed_receptacle or not r.openable:
            _fail(f"{a}: {r.object_id} is not an openable receptacle")
        if r.location != s.agent_location:
            _fail(f"{a}: agent not at {r.object_id}")
        if a == "OpenObject":
            if not s.all_closed():
                _fail("OpenObject while another receptacle is open")
            s._set(r.object_id, is_open=True)
        else:
            if not r.is_open:
                _fail(f"CloseObject: {r.object_id} is not open")
            s._set(r.object_id, is_open=False)
        return s, 1
    if a == "PickupObject":
        o = need(action.object_id, "object")
        if s.held is not None:
            _fail(f"PickupObject with full hands ({s.held})")
        if not o.pickupable:
            _fail(f"PickupObject: {o.object_id} not pickupable")
        loc = s.reach_location(o.object_id)
        if loc is None or loc != s.agent_location:
            _fail(f"PickupObject: {o.object_id} not reachable from {s.agent_location}")
        s._set(o.object_id, parent=None, location=None)
        s.held = o.object_id
        return s, 1
    if a == "PutObject":
        o = need(action.object_id, "object")
        r = need(action.receptacle_id, "receptacle")
        if s.held != o.object_id:
            _fail(f"PutObject: not holding {o.object_id}")
        if r.is_fixed_receptacle:
            if r.location != s.agent_location:
                _fail(f"PutObject: agent not at {r.object_id}")
            if not s.can_place(o.object_id, r.object_id):
                _fail(f"PutObject: {o.object_type} cannot go in {r.object_type}")
            s._set(o.object_id, parent=r.object_id, location=r.location)
        else:
            if not s.can_place_in_object(o.object_id, r.object_id):
                _fail(f"PutObject: {o.object_type} cannot go in {r.object_type}")
            if s.object_location(r.object_id) != s.agent_location:
                _fail(f"PutObject: {r.object_id} not at the agent's location")
            s._set(o.object_id, parent=r.object_id, location=None)
        s.held = None
        return s, 1
    if a in APPLIANCE_FOR:
        o = need(action.object_id, "object")
        r = need(action.receptacle_id, "appliance")
        if r.object_type != APPLIANCE_FOR[a] or not r.is_fixed_receptacle:
            _fail(f"{a} needs a {APPLIANCE_FOR[a]}, got {r.object_type}")
        if r.location != s.agent_location:
            _fail(f"{a}: agent not at {r.object_id}")
        if s.held != o.object_id:
            _fail(f"{a}: not holding {o.object_id}")
        aff = {"CleanObject": "cleanable", "HeatObject": "heatable", "CoolObject": "coolable"}[a]
        if not o.can(aff):
            _fail(f"{a}: {o.object_type} is not {aff}")
        s._set(o.object_id, **{_ACTION_FLAG[a]: True})
        return s, 5
    if a == "ToggleObject":
        o = need(action.object_id, "object")
        if not o.can("toggleable"):
            _fail(f"ToggleObject: {o.object_id} not toggleable")
        if s.object_location(o.object_id) != s.agent_location:
            _fail(f"ToggleObject: {o.object_id} not at the agent's location")
        s._set(o.object_id, is_toggled=not o.is_toggled)
        return s, 5
    if a == "SliceObject":
        o = need(action.object_id, "object")
        if s.held is None or objs[s.held].object_type not in KNIFE_CLASSES:
            _fail("SliceObject without a knife in hand")
        if action.tool_id is not None and action.tool_id != s.held:
            _fail(f"SliceObject: holding {s.held}, plan says {action.tool_id}")
        if not o.can("sliceable") or o.is_sliced:
            _fail(f"SliceObject: {o.object_id} not sliceable")
        if s.object_location(o.object_id) != s.agent_location:
            _fail(f"SliceObject: {o.object_id} not at the agent's location")
        s._set(o.object_id, is_sliced=True, pickupable=False)
        for k in range(s.slices_per_object):
            sid = _slice_id(o.object_id, o.object_type, k)
            s.objects[sid] = SceneObject(sid, o.object_type + "Sliced", location=o.location,
                                         parent=o.parent, pickupable=True, slice_of=o.object_id)
        return s, 5
    _fail(f"unknown high-level action {a!r}")
    raise AssertionError  # unreachable


def apply_plan(state: ProblemState, plan: Iterable[HighLevelAction]) -> ProblemState:
    """Execute a plan symbolically; returns the end state (input is not modified)."""
    s = state
    for i, a in enumerate(plan):
        try:
            s, _ = apply_action(s, a)
        except PlanExecutionError as e:
            raise PlanExecutionError(f"step {i} ({a.action} {a.args}): {e}") from None
    return s


def plan_cost(state: ProblemState, plan: Iterable[HighLevelAction]) -> int:
    s, total = state, 0
    for a in plan:
        s, c = apply_action(s, a)
        total += c
    return total


def goal_reached(state: ProblemState, task_type: str, pddl_params: Mapping) -> bool:
    """The PDDL goal of :func:`make_problem`, evaluated on a symbolic state."""
    task = _parse_task(task_type, pddl_params)
    objs = state.objects
    targets = [k for k, o in objs.items() if o.object_type == task.goal_class
               and not o.is_fixed_receptacle]

    def in_parent(oid: str) -> bool:
        p = objs[oid].parent
        return (p is not None and state.held != oid and p in objs
                and objs[p].is_fixed_receptacle and objs[p].object_type == task.parent)

    tt = task.task_type
    if tt == "look_at_obj_in_light":
        if state.held not in targets:
            return False
        return any(o.object_type == task.toggle and o.can("toggleable") and o.is_toggled
                   and state.object_location(k) == state.agent_location
                   for k, o in objs.items())
    if not state.all_closed():
        return False
    if tt == "pick_and_place_simple":
        return any(in_parent(o) for o in targets)
    if tt in _STATE_TASK_ACTION:
        flag = _ACTION_FLAG[_STATE_TASK_ACTION[tt]]
        return any(in_parent(o) and getattr(objs[o], flag) for o in targets)
    if tt == "pick_two_obj_and_place":
        by_parent: dict[str, int] = {}
        for o in targets:
            if in_parent(o):
                by_parent[objs[o].parent] = by_parent.get(objs[o].parent, 0) + 1
        return any(n >= 2 for n in by_parent.values())
    if tt == "pick_and_place_with_movable_recep":
        for o in targets:
            m = objs[o].parent
            if m is None or m not in objs or state.held == o:
                continue
            mo = objs[m]
            if (mo.object_type == task.mrecep and mo.is_movable_receptacle and state.held != m
                    and mo.parent in objs and objs[mo.parent].is_fixed_receptacle
                    and objs[mo.parent].object_type == task.parent):
                return True
        return False
    raise ValueError(tt)  # pragma: no cover


# --------------------------------------------------------------------------------------
# Template planner
# --------------------------------------------------------------------------------------

class _Sim:
    """A partial plan plus the symbolic state it leads to."""

    __slots__ = ("state", "plan", "cost")

    def __init__(self, state: ProblemState, plan: list | None = None, cost: int = 0):
        self.state, self.plan, self.cost = state, plan or [], cost

    def fork(self) -> "_Sim":
        return _Sim(self.state, list(self.plan), self.cost)

    def do(self, action: HighLevelAction) -> "_Sim":
        if action.action == "PickupObject" and action.receptacle_id is None:
            action.receptacle_id = self.state.coordinate_receptacle(action.object_id)
        self.state, c = apply_action(self.state, action)
        action.cost = c
        self.plan.append(action)
        self.cost += c
        return self

    # ---- macros ----------------------------------------------------------------
    def goto(self, loc: str | None) -> "_Sim":
        if loc is None:
            _fail("goto: unknown location")
        if loc != self.state.agent_location:
            self.do(HighLevelAction("GotoLocation", location=loc))
        return self

    def pickup(self, oid: str) -> "_Sim":
        s = self.state
        if s.held == oid:
            return self
        if s.held is not None:
            self.free_hands(next_loc=s.reach_location(oid))
        self.goto(self.state.reach_location(oid))
        t = self.state.objects[oid].object_type
        return self.do(HighLevelAction("PickupObject", [_arg_name(t)], object_id=oid))

    def put(self, rid: str) -> "_Sim":
        s = self.state
        r = s.objects[rid]
        self.goto(r.location if r.is_fixed_receptacle else s.object_location(rid))
        o = s.objects[s.held]
        return self.do(HighLevelAction("PutObject", [_arg_name(o.object_type), _arg_name(r.object_type)],
                                       object_id=o.object_id, receptacle_id=rid))

    def use(self, action: str, rid: str) -> "_Sim":
        s = self.state
        self.goto(s.objects[rid].location)
        o = s.objects[s.held]
        return self.do(HighLevelAction(action, [_arg_name(o.object_type)], object_id=o.object_id,
                                       receptacle_id=rid))

    def toggle(self, tid: str) -> "_Sim":
        self.goto(self.state.object_location(tid))
        t = self.state.objects[tid].object_type
        return self.do(HighLevelAction("ToggleObject", [_arg_name(t)], object_id=tid))

    def drop_spots(self, next_loc: str | None = None) -> list[tuple[int, int, str]]:
        """Places for the held object, as (detour cost, kind, id): fixed receptacles
        and loose/placed movable receptacles, costed as here -> spot -> next_loc."""
        s = self.state
        here = s.agent_location
        nxt = next_loc or here
        out = []
        for k, o in s.objects.items():
            if o.is_fixed_receptacle and o.location is not None and s.can_place(s.held, k):
                out.append((s.distance(here, o.location) + s.distance(o.location, nxt), 0, k))
            elif o.is_movable_receptacle and k != s.held and s.can_place_in_object(s.held, k):
                loc = s.object_location(k)
                if loc is not None:
                    out.append((s.distance(here, loc) + s.distance(loc, nxt), 1, k))
        return sorted(out)

    def free_hands(self, next_loc: str | None = None, prefer: str | None = None) -> "_Sim":
        """Put the held object down where the detour to ``next_loc`` (default: here)
        is cheapest (``prefer`` wins ties)."""
        spots = self.drop_spots(next_loc)
        if not spots:
            _fail("nowhere to put the held object")
        best = spots[0]
        if prefer is not None:
            for sp in spots:
                if sp[2] == prefer and sp[0] == best[0]:
                    best = sp
                    break
        return self.put(best[2])

    def slice(self, whole: str, knife: str) -> "_Sim":
        """Fetch the knife and slice ``whole`` where it lies."""
        self.pickup(knife)
        s = self.state
        self.goto(s.object_location(whole))
        wt = s.objects[whole].object_type
        return self.do(HighLevelAction("SliceObject", [_arg_name(wt)], object_id=whole,
                                       tool_id=knife))

    def slice_and_take(self, whole: str, knife: str) -> "_Sim":
        """Fetch the knife, slice ``whole``, put the knife down, take a slice."""
        self.slice(whole, knife)
        self.free_hands(prefer=self.state.objects[whole].parent)
        return self.take_slice(whole)

    def take_slice(self, whole: str) -> "_Sim":
        s = self.state
        for k in range(s.slices_per_object):
            sid = _slice_id(whole, s.objects[whole].object_type, k)
            o = s.objects.get(sid)
            if o is not None and s.reach_location(sid) == s.object_location(whole) and sid != s.held:
                if o.parent == s.objects[whole].parent and o.location == s.objects[whole].location:
                    return self.pickup(sid)
        _fail(f"no slice of {whole} left")
        raise AssertionError


def _knives(s: ProblemState) -> list[str]:
    return [k for k, o in sorted(s.objects.items()) if o.object_type in KNIFE_CLASSES
            and o.pickupable and (s.held == k or s.reach_location(k) is not None)]


def _wholes(s: ProblemState, task: _Task) -> list[str]:
    return [w for w, o in sorted(s.objects.items())
            if o.object_type == task.object_class and o.can("sliceable") and not o.is_sliced
            and (s.held == w or s.reach_location(w) is not None)]


def _slice_in_place(root: _Sim, task: _Task, r: str) -> list[list[Callable]]:
    """Sliced simple/pick-two tasks: slices stay in the whole's receptacle, so slicing
    a whole that lies in (or is first carried to) ``r`` satisfies the goal.  Variants:
    carry the whole first and fetch the knife afterwards, or stage the knife at ``r``
    first and then carry the whole."""
    out = []
    s = root.state
    for w in _wholes(s, task):
        for kn in _knives(s):
            slice_it = (lambda sm, w=w, kn=kn: sm.slice(w, kn))
            if s.objects[w].parent == r and s.held != w:
                out.append([slice_it])
                continue
            move_w = [lambda sm, w=w: sm.pickup(w), lambda sm, r=r: sm.put(r)]
            out.append(move_w + [slice_it])
            if s.can_place(kn, r) and s.held != kn:
                out.append([lambda sm, kn=kn: sm.pickup(kn), lambda sm, r=r: sm.put(r)]
                           + move_w + [slice_it])
    return out


def _acquisitions(sim: _Sim, task: _Task, exclude: Iterable[str] = ()
                  ) -> list[tuple[str | None, Callable]]:
    """Ways to end up holding a target object: pick an existing one, or slice a whole
    one with one of the knives (where it lies, or after carrying it to the knife's
    receptacle) and take a slice.  Returns (spot where the target is picked up, fn)."""
    s = sim.state
    ex = set(exclude)
    out: list[tuple[str | None, Callable]] = []
    for k, o in sorted(s.objects.items()):
        if o.object_type == task.goal_class and o.pickupable and k not in ex:
            if s.held == k or s.reach_location(k) is not None:
                out.append((s.reach_location(k), lambda sm, k=k: sm.pickup(k)))
    if task.sliced:
        for w in _wholes(s, task):
            wl = s.object_location(w)
            if wl is None:
                continue
            for kn in _knives(s):
                out.append((wl, lambda sm, w=w, kn=kn: sm.slice_and_take(w, kn)))
                kp = s.objects[kn].parent
                if (kp is not None and kp in s.objects and s.objects[kp].is_fixed_receptacle
                        and s.objects[w].pickupable and s.can_place(w, kp)
                        and s.objects[kp].location != wl):
                    out.append((s.objects[kp].location, lambda sm, w=w, kn=kn, kp=kp: (
                        sm.pickup(w), sm.put(kp), sm.slice_and_take(w, kn))))
    return out


def _load_and_carry(root: _Sim, task: _Task, r: str, run: Callable) -> Iterator[_Sim]:
    """pick_two: gather two targets in one movable receptacle (at the container's
    spot, or after staging the container at a target's spot), carry it into ``r``
    and unload both."""
    s = root.state
    targets = [k for k, o in sorted(s.objects.items()) if o.object_type == task.goal_class
               and o.pickupable and s.reach_location(k) is not None]
    for m, mo in sorted(s.objects.items()):
        mspot = s.reach_location(m)
        if not mo.is_movable_receptacle or mspot is None or mo.parent == r:
            continue
        for pair in itertools.combinations(targets, 2):
            loose = [k for k in pair if s.objects[k].parent != m]
            if any(not s.can_place_in_object(k, m) for k in loose):
                continue
            spots = [mspot] + [s.reach_location(k) for k in loose]
            for x in dict.fromkeys(spots):
                steps: list[Callable] = []
                if x != mspot:
                    stage = [k for k, o in sorted(s.objects.items()) if o.is_fixed_receptacle
                             and o.location == x and s.can_place(m, k)]
                    if not stage:
                        continue
                    steps += [lambda sm, m=m: sm.pickup(m), lambda sm, k=stage[0]: sm.put(k)]
                for k in loose:
                    steps += [lambda sm, k=k: sm.pickup(k), lambda sm, m=m: sm.put(m)]
                steps += [lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r)]
                for k in pair:
                    steps += [lambda sm, k=k: sm.pickup(k), lambda sm, r=r: sm.put(r)]
                c = run(root, *steps)
                if c:
                    yield c


def _candidates(root: _Sim, task: _Task, bound: list | None = None) -> Iterator[_Sim]:
    """Candidate plans (goal not checked here; the caller checks).  ``bound[0]`` is
    the cost of the best plan found so far: partial plans reaching it are dropped."""
    bound = bound if bound is not None else [math.inf]
    s0 = root.state
    objs = s0.objects
    parents = [k for k, o in sorted(objs.items())
               if o.is_fixed_receptacle and o.object_type == task.parent and o.location is not None]
    tt = task.task_type

    def run(sim: _Sim, *steps: Callable) -> _Sim | None:
        sim = sim.fork()
        try:
            for st in steps:
                st(sim)
                if sim.cost >= bound[0]:
                    return None
        except (PlanExecutionError, KeyError):
            return None
        return sim

    def carried_roots(r: str) -> list[_Sim]:
        """The root, plus: first carry a movable receptacle that holds targets into r."""
        out = [root]
        for m, mo in sorted(objs.items()):
            if (mo.is_movable_receptacle and mo.parent != r and s0.reach_location(m) is not None
                    and any(o.parent == m and o.object_type == task.goal_class
                            for o in objs.values())):
                c = run(root, lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r))
                if c:
                    out.append(c)
        return out

    if tt in ("pick_and_place_simple", "pick_two_obj_and_place") and task.sliced:
        for r in parents:
            for steps in _slice_in_place(root, task, r):
                c = run(root, *steps)
                if c:
                    yield c
    if tt == "pick_and_place_simple":
        for r in parents:
            for base in carried_roots(r):
                for _, acq in _acquisitions(base, task):
                    c = run(base, acq, lambda sm, r=r: sm.put(r))
                    if c:
                        yield c
    elif tt in _STATE_TASK_ACTION:
        act = _STATE_TASK_ACTION[tt]
        flag = _ACTION_FLAG[act]
        apps = [k for k, o in sorted(objs.items())
                if o.is_fixed_receptacle and o.object_type == APPLIANCE_FOR[act] and o.location]
        for r in parents:
            for _, acq in _acquisitions(root, task):
                for ap in apps:
                    def treat(sm, ap=ap):
                        if not getattr(sm.state.objects[sm.state.held], flag):
                            sm.use(act, ap)
                    c = run(root, acq, treat, lambda sm, r=r: sm.put(r))
                    if c:
                        yield c
    elif tt == "pick_two_obj_and_place":
        for r in parents:
            for base in carried_roots(r):
                bobjs = base.state.objects
                placed = [k for k, o in bobjs.items()
                          if o.parent == r and o.object_type == task.goal_class]
                first = _acquisitions(base, task, exclude=placed)
                if placed:
                    for _, acq in first:
                        c = run(base, acq, lambda sm, r=r: sm.put(r))
                        if c:
                            yield c
                    continue
                if base is root:
                    yield from _load_and_carry(root, task, r, run)
                for _, acq1 in first:
                    mid = run(base, acq1, lambda sm, r=r: sm.put(r))
                    if mid is None:
                        continue
                    done = [k for k, o in mid.state.objects.items() if o.parent == r]
                    for _, acq2 in _acquisitions(mid, task, exclude=done):
                        c = run(mid, acq2, lambda sm, r=r: sm.put(r))
                        if c:
                            yield c
    elif tt == "look_at_obj_in_light":
        lamps = [k for k, o in sorted(objs.items()) if o.object_type == task.toggle
                 and o.can("toggleable") and s0.object_location(k) is not None]
        for t in lamps:
            def light(sm, t=t):
                if not sm.state.objects[t].is_toggled:
                    sm.toggle(t)
                else:
                    sm.goto(sm.state.object_location(t))
            for _, acq in _acquisitions(root, task):
                # lamp first (ALFRED's order when object and lamp share a spot) ...
                c = run(root, light, acq, lambda sm, t=t: sm.goto(sm.state.object_location(t)))
                if c:
                    yield c
                # ... or object first
                c = run(root, acq, light)
                if c:
                    yield c
    elif tt == "pick_and_place_with_movable_recep":
        mreceps = [k for k, o in sorted(objs.items())
                   if o.object_type == task.mrecep and o.is_movable_receptacle]
        for r in parents:
            for m in mreceps:
                inside = [k for k, o in objs.items()
                          if o.parent == m and o.object_type == task.goal_class]
                if inside:  # container already holds a target: carry it
                    c = run(root, lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r))
                    if c:
                        yield c
                for spot, acq in _acquisitions(root, task):
                    # A: object into container, then container to the receptacle
                    c = run(root, acq, lambda sm, m=m: sm.put(m), lambda sm, m=m: sm.pickup(m),
                            lambda sm, r=r: sm.put(r))
                    if c:
                        yield c
                    # B: container to the receptacle, then object into it
                    if objs[m].parent == r:
                        c = run(root, acq, lambda sm, m=m: sm.put(m))
                    else:
                        c = run(root, lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r),
                                acq, lambda sm, m=m: sm.put(m))
                    if c:
                        yield c
                    # C: stage the container where the object is picked up
                    if spot is None or s0.reach_location(m) == spot:
                        continue
                    stage = [k for k, o in sorted(objs.items()) if o.is_fixed_receptacle
                             and o.location == spot and s0.can_place(m, k)]
                    if stage:
                        c = run(root, lambda sm, m=m: sm.pickup(m),
                                lambda sm, k=stage[0]: sm.put(k), acq,
                                lambda sm, m=m: sm.put(m), lambda sm, m=m: sm.pickup(m),
                                lambda sm, r=r: sm.put(r))
                        if c:
                            yield c


def template_plan(state: ProblemState, task_type: str, pddl_params: Mapping) -> list[HighLevelAction]:
    """Fast task-specific planner (alfred.md §3.1 scripts, planning.md §4).

    Enumerates instance choices (which object / knife / appliance / receptacle /
    container / lamp) and strategies (object-first or container-first for movable
    receptacles; lamp-first or object-first for look), simulates each with the
    symbolic executor and returns the cheapest valid plan (first found on ties),
    ending in NoOp.  Same world model as the PDDL problem: only the task-relevant
    objects of :func:`make_problem` are considered.
    """
    task = _parse_task(task_type, pddl_params)
    if len(state.open_receptacles()) > 1:
        raise ValueError("more than one receptacle is open; ALFRED's domain allows one")
    items, receptacles = _relevant(state, task)
    keep = set(items) | set(receptacles)
    pruned = replace(state, objects={k: v for k, v in state.objects.items() if k in keep})
    root = _Sim(pruned)
    # An open receptacle must be closed before moving (GotoLocation needs allClosed).
    for rid in pruned.open_receptacles():
        r = pruned.objects[rid]
        if r.location != pruned.agent_location:
            raise UnsolvableError(f"{rid} is open and the agent cannot reach it without moving")
        root.do(HighLevelAction("CloseObject", [_arg_name(r.object_type)], object_id=rid))
    if goal_reached(root.state, task_type, pddl_params):
        best: _Sim | None = root
    else:
        best = None
        bound = [math.inf]
        for c in _candidates(root, task, bound):
            if (best is None or c.cost < best.cost) and goal_reached(c.state, task_type, pddl_params):
                best = c
                bound[0] = c.cost
    if best is None:
        raise UnsolvableError(f"template planner found no plan for {task_type} {dict(pddl_params)}")
    plan = list(best.plan) + [HighLevelAction("NoOp", [])]
    types = {k: o.object_type for k, o in best.state.objects.items()}
    _fill_goto_args(plan, types)
    return plan


# --------------------------------------------------------------------------------------
# THOR-metadata view (for goal_conditions)
# --------------------------------------------------------------------------------------

def to_thor_metadata(state: ProblemState) -> dict:
    """THOR-like view of a symbolic state for :mod:`alfred_task.goal_conditions`:
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
        out.append({
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
        })
    return {
        "objects": out,
        "inventory": [{"objectId": state.held, "objectType": objs[state.held].object_type}]
        if state.held else [],
        "cleaned": {k for k, o in objs.items() if o.cleaned},
        "heated": {k for k, o in objs.items() if o.heated},
        "cooled": {k for k, o in objs.items() if o.cooled},
    }
