"""PDDL problems for ``alfred_task/pddl/domain.pddl`` (alfred.md §3.3, planning.md).

:func:`make_problem` writes a problem with only the task-relevant objects (ALFRED's pruning)
and a ``;; @alfred-map`` comment that lets :func:`alfred_task.planning.solve` map the
planner's names back to object ids.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Mapping

from .state import (
    STATE_TASK_ACTION,
    PlanningTask,
    ProblemState,
    SceneObject,
    can_place_in_object_static,
    can_place_static,
    parse_task,
    relevant_objects,
    sliced_type,
    slice_id,
)

__all__ = ["DOMAIN_PATH", "DEFAULT_GOAL_STYLE", "load_domain", "make_problem"]

DOMAIN_PATH = Path(__file__).resolve().parent.parent / "pddl" / "domain.pddl"
# "action": zero-cost ReachGoal* actions instead of an existential goal; no axioms, so the
# fastest exact search can be used (see alfred_task.planning.fast_downward).
DEFAULT_GOAL_STYLE = "action"

_AGENT = "agent1"
# Task flag set in the init state for goal_style="action" (selects the ReachGoal* action).
_TASK_FLAG = {
    "pick_and_place_simple": "taskPlace",
    "pick_clean_then_place_in_recep": "taskClean",
    "pick_heat_then_place_in_recep": "taskHeat",
    "pick_cool_then_place_in_recep": "taskCool",
    "pick_two_obj_and_place": "taskTwo",
    "pick_and_place_with_movable_recep": "taskMovable",
    "look_at_obj_in_light": "taskLook",
}


def load_domain() -> str:
    """The domain text, read when asked (never at import)."""
    return DOMAIN_PATH.read_text()


def _n_slice_placeholders(task: PlanningTask) -> int:
    """Slice objects the problem must offer: pick-two needs two slices, other tasks one."""
    return 2 if task.task_type == "pick_two_obj_and_place" else 1


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
        s = (
            ident.lower()
            .replace("|", "_bar_")
            .replace("+", "_plus_")
            .replace("-", "_minus_")
            .replace(".", "_dot_")
            .replace(",", "_comma_")
        )
        s = prefix + "_" + _NAME_RE.sub("_", s)
        name, k = s, 1
        while name in self.used:
            k += 1
            name = f"{s}_{k}"
        self.used.add(name)
        self.by_id[key] = name
        return name


_DOMAIN_CONSTANTS = {"sinkbasintype", "microwavetype", "fridgetype", "knifetype", "butterknifetype"}


def make_problem(
    state: ProblemState,
    task_type: str,
    pddl_params: Mapping,
    problem_name: str = "alfred_task",
    goal_style: str = DEFAULT_GOAL_STYLE,
) -> str:
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
    task = parse_task(task_type, pddl_params)
    opened = state.open_receptacles()
    if len(opened) > 1:
        raise ValueError(
            f"{len(opened)} receptacles are open ({opened}); ALFRED's domain lets at most "
            "one be open at a time (GotoLocation/OpenObject require all closed)"
        )
    b = _ProblemBuilder(state, task)
    b.add_agent_facts(all_closed=not opened)
    b.add_receptacle_facts()
    b.add_item_facts()
    b.add_goal_classes()
    loc_list = b.add_distance_facts()
    goal = b.goal(goal_style)
    header = (
        f";; ALFRED task {task.task_type} {json.dumps(dict(pddl_params), sort_keys=True)}\n"
        f";; @alfred-map {json.dumps(b.mapping, sort_keys=True)}\n"
    )
    return (
        header
        + f"(define (problem {problem_name})\n  (:domain alfred_task)\n"
        + "  (:objects\n"
        + "\n".join(b.object_lines(loc_list))
        + ")\n"
        + "  (:init\n    "
        + "\n    ".join(b.init)
        + ")\n"
        + f"  (:goal {goal})\n"
        + "  (:metric minimize (total-cost)))\n"
    )


class _ProblemBuilder:
    """The objects, init facts and name map of one problem.

    Facts and names are produced in a fixed order: PDDL names are numbered on collision in
    the order they are asked for and the item list follows the map's order, so the problem
    text (and with it the plans Fast Downward finds) depends on that order.
    """

    def __init__(self, state: ProblemState, task: PlanningTask) -> None:
        self.state, self.task, self.objs = state, task, state.objects
        self.items, self.receptacles = relevant_objects(state, task)
        self.names = _Names()
        self.mapping: dict[str, list] = {}
        self.init: list[str] = []
        self.otypes: set[str] = set()
        self.rtypes: set[str] = set()
        self.locs: set[str] = {state.agent_location}
        self.item_names = {oid: self.item_name(oid) for oid in self.items}
        self.rec_names = {rid: self.rec_name(rid) for rid in self.receptacles}

    # ---- names ------------------------------------------------------------------
    def item_name(self, oid: str) -> str:
        n = self.names.get("i", oid)
        o = self.objs.get(oid)
        if o is not None:
            self.mapping[n] = ["item", o.object_type, oid, o.parent]
        return n

    def rec_name(self, rid: str) -> str:
        n = self.names.get("r", rid)
        self.mapping[n] = ["receptacle", self.objs[rid].object_type, rid, None]
        return n

    def loc_name(self, lid: str) -> str:
        n = self.names.get("l", lid)
        self.mapping[n] = ["location", None, lid, None]
        return n

    # ---- init facts -------------------------------------------------------------
    def add_agent_facts(self, all_closed: bool) -> None:
        state, init = self.state, self.init
        init.append(f"(atLocation {_AGENT} {self.loc_name(state.agent_location)})")
        if state.held is None:
            init.append(f"(handEmpty {_AGENT})")
        else:
            init.append(f"(holds {_AGENT} {self.item_names[state.held]})")
        if all_closed:
            init.append("(allClosed)")

    def add_receptacle_facts(self) -> None:
        for rid in self.receptacles:
            r = self.objs[rid]
            rn = self.rec_names[rid]
            self.rtypes.add(r.object_type)
            self.locs.add(r.location)
            self.init.append(f"(receptacleType {rn} {r.object_type}Type)")
            self.init.append(f"(receptacleAtLocation {rn} {self.loc_name(r.location)})")
            if r.openable:
                self.init.append(f"(openable {rn})")
            if r.is_open:
                self.init.append(f"(opened {rn})")

    def add_item_facts(self) -> None:
        task, state = self.task, self.state
        n_ph = _n_slice_placeholders(task) if task.sliced else 0
        for oid in self.items:
            o = self.objs[oid]
            n = self.item_names[oid]
            self._type_and_placement_facts(oid, n, o.object_type, o)
            self._object_state_facts(o, n)
            if state.held == oid:
                continue
            self._position_facts(oid, o, n)
            # Slice placeholders of a whole target object that is not sliced yet.
            if (
                n_ph
                and o.object_type == task.object_class
                and o.can("sliceable")
                and not o.is_sliced
            ):
                self._slice_placeholders(oid, o, n, n_ph)

    def _type_and_placement_facts(self, oid: str, name: str, otype: str, o: SceneObject) -> None:
        init = self.init
        self.otypes.add(otype)
        init.append(f"(objectType {name} {otype}Type)")
        for aff, pred in (
            ("cleanable", "cleanable"),
            ("heatable", "heatable"),
            ("coolable", "coolable"),
        ):
            if o.can(aff):
                init.append(f"({pred} {name})")
        if o.is_movable_receptacle:
            init.append(f"(isReceptacleObject {name})")
        for rid in self.receptacles:
            if can_place_static(self.state, o, self.objs[rid]):
                init.append(f"(canPlace {name} {self.rec_names[rid]})")
        for mid in self.items:
            if mid != oid and can_place_in_object_static(self.state, o, self.objs[mid]):
                init.append(f"(canPlaceInObject {name} {self.item_names[mid]})")

    def _object_state_facts(self, o: SceneObject, n: str) -> None:
        init = self.init
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

    def _position_facts(self, oid: str, o: SceneObject, n: str) -> None:
        init, objs = self.init, self.objs
        loc = self.state.object_location(oid)
        if loc is not None:
            self.locs.add(loc)
            init.append(f"(objectAtLocation {n} {self.loc_name(loc)})")
        if o.parent is None:
            init.append(f"(isLoose {n})")
        elif o.parent in self.rec_names:
            init.append(f"(inReceptacle {n} {self.rec_names[o.parent]})")
        elif o.parent in self.item_names and objs[o.parent].is_movable_receptacle:
            init.append(f"(inReceptacleObject {n} {self.item_names[o.parent]})")

    def _slice_placeholders(self, oid: str, o: SceneObject, n: str, count: int) -> None:
        for k in range(count):
            sid = slice_id(oid, o.object_type, k)
            sn = self.names.get("i", sid)
            self.mapping[sn] = ["item", sliced_type(o.object_type), sid, o.parent]
            sl = SceneObject(sid, sliced_type(o.object_type), pickupable=True, slice_of=oid)
            self._type_and_placement_facts(sid, sn, sl.object_type, sl)
            self.init.append(f"(sliceOf {sn} {n})")
            self.init.append(f"(pickupable {sn})")

    def add_goal_classes(self) -> None:
        """Classes referenced by the goal must exist as constants."""
        task = self.task
        self.otypes.add(task.goal_class)
        if task.mrecep:
            self.otypes.add(task.mrecep)
        if task.toggle:
            self.otypes.add(task.toggle)
        if task.parent:
            self.rtypes.add(task.parent)
        clash = {t.lower() for t in self.otypes} & {t.lower() for t in self.rtypes}
        if clash:
            raise ValueError(f"classes used both as item and fixed receptacle: {sorted(clash)}")

    def add_distance_facts(self) -> list[str]:
        """All-pairs ``distance`` facts and the zero total cost; returns the sorted locations."""
        loc_list = sorted(self.locs)
        for a in loc_list:
            for b in loc_list:
                if a != b:
                    self.init.append(
                        f"(= (distance {self.loc_name(a)} {self.loc_name(b)}) "
                        f"{self.state.distance(a, b)})"
                    )
        self.init.append("(= (total-cost) 0)")
        return loc_list

    def goal(self, goal_style: str) -> str:
        task = self.task
        if goal_style == "exists":
            return _goal_pddl(task, _AGENT)
        if goal_style != "action":
            raise ValueError(f"goal_style must be 'exists' or 'action', not {goal_style!r}")
        self.init.append(f"({_TASK_FLAG[task.task_type]})")
        self.init.append(f"(targetObjectType {task.goal_class}Type)")
        if task.parent and task.task_type != "look_at_obj_in_light":
            self.init.append(f"(targetParentType {task.parent}Type)")
        if task.mrecep:
            self.init.append(f"(targetMrecepType {task.mrecep}Type)")
        if task.toggle and task.task_type == "look_at_obj_in_light":
            self.init.append(f"(targetToggleType {task.toggle}Type)")
        return "(goalReached)"

    # ---- objects ----------------------------------------------------------------
    def object_lines(self, loc_list: list[str]) -> list[str]:
        lines = [
            f"    {_AGENT} - agent",
            "    " + " ".join(self.loc_name(l) for l in loc_list) + " - location",
        ]
        if self.rec_names:
            lines.append(
                "    " + " ".join(self.rec_names[r] for r in self.receptacles) + " - receptacle"
            )
        all_items = [n for n, v in self.mapping.items() if v[0] == "item"]
        if all_items:
            lines.append("    " + " ".join(all_items) + " - item")
        for line in (_const_list(self.otypes, "otype"), _const_list(self.rtypes, "rtype")):
            if line:
                lines.append("    " + line)
        return lines


def _const_list(types: Iterable[str], kind: str) -> str:
    """``:objects`` line for class constants the domain does not already declare."""
    consts = [f"{t}Type" for t in sorted(types) if f"{t}Type".lower() not in _DOMAIN_CONSTANTS]
    return (" ".join(consts) + f" - {kind}") if consts else ""


def _goal_pddl(task: PlanningTask, agent: str) -> str:
    """ALFRED's literal existential goal (goal_style="exists"; needs an axiom-capable search)."""
    O = f"{task.goal_class}Type"
    closed = "(allClosed)"
    tt = task.task_type

    def inside(o: str, c: str, pred: str = "inReceptacle") -> str:
        return f"({pred} {o} {c})"

    if tt == "pick_and_place_simple":
        body = (
            f"(exists (?o - item ?r - receptacle) (and (objectType ?o {O}) "
            f"(receptacleType ?r {task.parent}Type) {inside('?o', '?r')}))"
        )
    elif tt in STATE_TASK_ACTION:
        flag = {"CleanObject": "isClean", "HeatObject": "isHot", "CoolObject": "isCool"}[
            STATE_TASK_ACTION[tt]
        ]
        body = (
            f"(exists (?o - item ?r - receptacle) (and (objectType ?o {O}) "
            f"(receptacleType ?r {task.parent}Type) ({flag} ?o) (inReceptacle ?o ?r)))"
        )
    elif tt == "pick_two_obj_and_place":
        body = (
            f"(exists (?o1 - item ?o2 - item ?r - receptacle) (and (objectType ?o1 {O}) "
            f"(objectType ?o2 {O}) (not (= ?o1 ?o2)) (receptacleType ?r {task.parent}Type) "
            f"{inside('?o1', '?r')} {inside('?o2', '?r')}))"
        )
    elif tt == "pick_and_place_with_movable_recep":
        body = (
            f"(exists (?o - item ?m - item ?r - receptacle) (and (objectType ?o {O}) "
            f"(objectType ?m {task.mrecep}Type) (isReceptacleObject ?m) "
            f"{inside('?o', '?m', 'inReceptacleObject')} (receptacleType ?r {task.parent}Type) "
            f"(inReceptacle ?m ?r)))"
        )
    elif tt == "look_at_obj_in_light":
        return (
            f"(exists (?o - item ?t - item ?l - location) (and (objectType ?o {O}) "
            f"(holds {agent} ?o) (objectType ?t {task.toggle}Type) (toggleable ?t) "
            f"(isOn ?t) (objectAtLocation ?t ?l) (atLocation {agent} ?l)))"
        )
    else:  # pragma: no cover
        raise ValueError(tt)
    return f"(and {closed} {body})"
