"""Symbolic executor with the semantics of ``pddl/domain.pddl``.

It validates plans from either planner, drives the template planner's search, and gives
plan costs. Each high-level action has one handler that checks the domain's preconditions
on a copy of the state and applies the effects.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from alfred_task import constants as _C

from .actions import ACTION_COSTS, HighLevelAction
from .errors import PlanExecutionError
from .state import (
    ACTION_FLAG,
    APPLIANCE_FOR,
    STATE_TASK_ACTION,
    ProblemState,
    SceneObject,
    parse_task,
    sliced_type,
    slice_id,
)

__all__ = ["apply_action", "apply_plan", "plan_cost", "goal_reached"]


def apply_action(state: ProblemState, action: HighLevelAction) -> tuple[ProblemState, int]:
    """Apply one high-level action to a copy of ``state``; returns (state, cost).
    Raises :class:`PlanExecutionError` if a precondition fails."""
    s = state.copy()
    handler = _HANDLERS.get(action.action)
    if handler is None:
        raise PlanExecutionError(f"unknown high-level action {action.action!r}")
    return s, handler(s, action)


def _need(s: ProblemState, action: HighLevelAction, oid: str | None, what: str) -> SceneObject:
    if oid is None or oid not in s.objects:
        raise PlanExecutionError(f"{action.action}: unknown {what} {oid!r}")
    return s.objects[oid]


def _noop(s: ProblemState, action: HighLevelAction) -> int:
    return ACTION_COSTS["NoOp"]


def _goto(s: ProblemState, action: HighLevelAction) -> int:
    if action.location is None:
        raise PlanExecutionError("GotoLocation without a location")
    if not s.all_closed():
        raise PlanExecutionError(f"GotoLocation while {s.open_receptacles()} open")
    if action.location == s.agent_location:
        raise PlanExecutionError("GotoLocation to the current location")
    cost = s.distance(s.agent_location, action.location)
    s.agent_location = action.location
    return cost


def _open_close(s: ProblemState, action: HighLevelAction) -> int:
    a = action.action
    r = _need(s, action, action.object_id, "receptacle")
    if not r.is_fixed_receptacle or not r.openable:
        raise PlanExecutionError(f"{a}: {r.object_id} is not an openable receptacle")
    if r.location != s.agent_location:
        raise PlanExecutionError(f"{a}: agent not at {r.object_id}")
    if a == "OpenObject":
        if not s.all_closed():
            raise PlanExecutionError("OpenObject while another receptacle is open")
        s.update_object(r.object_id, is_open=True)
    else:
        if not r.is_open:
            raise PlanExecutionError(f"CloseObject: {r.object_id} is not open")
        s.update_object(r.object_id, is_open=False)
    return ACTION_COSTS[a]


def _pickup(s: ProblemState, action: HighLevelAction) -> int:
    o = _need(s, action, action.object_id, "object")
    if s.held is not None:
        raise PlanExecutionError(f"PickupObject with full hands ({s.held})")
    if not o.pickupable:
        raise PlanExecutionError(f"PickupObject: {o.object_id} not pickupable")
    loc = s.reach_location(o.object_id)
    if loc is None or loc != s.agent_location:
        raise PlanExecutionError(
            f"PickupObject: {o.object_id} not reachable from {s.agent_location}"
        )
    s.update_object(o.object_id, parent=None, location=None)
    s.held = o.object_id
    return ACTION_COSTS["PickupObject"]


def _put(s: ProblemState, action: HighLevelAction) -> int:
    o = _need(s, action, action.object_id, "object")
    r = _need(s, action, action.receptacle_id, "receptacle")
    if s.held != o.object_id:
        raise PlanExecutionError(f"PutObject: not holding {o.object_id}")
    if r.is_fixed_receptacle:
        if r.location != s.agent_location:
            raise PlanExecutionError(f"PutObject: agent not at {r.object_id}")
        if not s.can_place(o.object_id, r.object_id):
            raise PlanExecutionError(f"PutObject: {o.object_type} cannot go in {r.object_type}")
        if s.is_full(r.object_id):
            raise PlanExecutionError(f"PutObject: {r.object_id} is full")
        s.update_object(o.object_id, parent=r.object_id, location=r.location)
    else:
        if not s.can_place_in_object(o.object_id, r.object_id):
            raise PlanExecutionError(f"PutObject: {o.object_type} cannot go in {r.object_type}")
        if s.object_location(r.object_id) != s.agent_location:
            raise PlanExecutionError(f"PutObject: {r.object_id} not at the agent's location")
        s.update_object(o.object_id, parent=r.object_id, location=None)
    s.held = None
    return ACTION_COSTS["PutObject"]


def _use_appliance(s: ProblemState, action: HighLevelAction) -> int:
    """CleanObject / HeatObject / CoolObject: the held object at the matching appliance."""
    a = action.action
    o = _need(s, action, action.object_id, "object")
    r = _need(s, action, action.receptacle_id, "appliance")
    if r.object_type != APPLIANCE_FOR[a] or not r.is_fixed_receptacle:
        raise PlanExecutionError(f"{a} needs a {APPLIANCE_FOR[a]}, got {r.object_type}")
    if r.location != s.agent_location:
        raise PlanExecutionError(f"{a}: agent not at {r.object_id}")
    if s.held != o.object_id:
        raise PlanExecutionError(f"{a}: not holding {o.object_id}")
    aff = {"CleanObject": "cleanable", "HeatObject": "heatable", "CoolObject": "coolable"}[a]
    if not o.can(aff):
        raise PlanExecutionError(f"{a}: {o.object_type} is not {aff}")
    s.update_object(o.object_id, **{ACTION_FLAG[a]: True})
    return ACTION_COSTS[a]


def _toggle(s: ProblemState, action: HighLevelAction) -> int:
    o = _need(s, action, action.object_id, "object")
    if not o.can("toggleable"):
        raise PlanExecutionError(f"ToggleObject: {o.object_id} not toggleable")
    if s.object_location(o.object_id) != s.agent_location:
        raise PlanExecutionError(f"ToggleObject: {o.object_id} not at the agent's location")
    s.update_object(o.object_id, is_toggled=not o.is_toggled)
    return ACTION_COSTS["ToggleObject"]


def _slice(s: ProblemState, action: HighLevelAction) -> int:
    o = _need(s, action, action.object_id, "object")
    if s.held is None or s.objects[s.held].object_type not in _C.KNIVES:
        raise PlanExecutionError("SliceObject without a knife in hand")
    if action.tool_id is not None and action.tool_id != s.held:
        raise PlanExecutionError(f"SliceObject: holding {s.held}, plan says {action.tool_id}")
    if not o.can("sliceable") or o.is_sliced:
        raise PlanExecutionError(f"SliceObject: {o.object_id} not sliceable")
    if s.object_location(o.object_id) != s.agent_location:
        raise PlanExecutionError(f"SliceObject: {o.object_id} not at the agent's location")
    s.update_object(o.object_id, is_sliced=True, pickupable=False)
    for k in range(s.slices_per_object):
        sid = slice_id(o.object_id, o.object_type, k)
        s.objects[sid] = SceneObject(
            sid,
            sliced_type(o.object_type),
            location=o.location,
            parent=o.parent,
            pickupable=True,
            slice_of=o.object_id,
        )
    return ACTION_COSTS["SliceObject"]


_HANDLERS: dict[str, Callable[[ProblemState, HighLevelAction], int]] = {
    "NoOp": _noop,
    "GotoLocation": _goto,
    "OpenObject": _open_close,
    "CloseObject": _open_close,
    "PickupObject": _pickup,
    "PutObject": _put,
    **{a: _use_appliance for a in APPLIANCE_FOR},
    "ToggleObject": _toggle,
    "SliceObject": _slice,
}


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
    """Total cost of a plan as the executor charges it (the planners' optimisation target)."""
    s, total = state, 0
    for a in plan:
        s, c = apply_action(s, a)
        total += c
    return total


def goal_reached(state: ProblemState, task_type: str, pddl_params: Mapping) -> bool:
    """The PDDL goal of :func:`make_problem`, evaluated on a symbolic state."""
    task = parse_task(task_type, pddl_params)
    objs = state.objects
    targets = [
        k for k, o in objs.items() if o.object_type == task.goal_class and not o.is_fixed_receptacle
    ]

    def in_parent(oid: str) -> bool:
        p = objs[oid].parent
        return (
            p is not None
            and state.held != oid
            and p in objs
            and objs[p].is_fixed_receptacle
            and objs[p].object_type == task.parent
        )

    tt = task.task_type
    if tt == "look_at_obj_in_light":
        if state.held not in targets:
            return False
        return any(
            o.object_type == task.toggle
            and o.can("toggleable")
            and o.is_toggled
            and state.object_location(k) == state.agent_location
            for k, o in objs.items()
        )
    if not state.all_closed():
        return False
    if tt == "pick_and_place_simple":
        return any(in_parent(o) for o in targets)
    if tt in STATE_TASK_ACTION:
        flag = ACTION_FLAG[STATE_TASK_ACTION[tt]]
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
            if (
                mo.object_type == task.mrecep
                and mo.is_movable_receptacle
                and state.held != m
                and mo.parent in objs
                and objs[mo.parent].is_fixed_receptacle
                and objs[mo.parent].object_type == task.parent
            ):
                return True
        return False
    raise ValueError(tt)  # pragma: no cover
