"""Template planner: a millisecond task-specific planner (alfred.md §3.1 scripts, planning.md §4).

It produces the same kind of high-level plan as Fast Downward by enumerating, per task
type, the instance choices and orders ALFRED's scripts used, simulating each candidate
with the symbolic executor and keeping the cheapest one that reaches the goal.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Callable, Iterable, Iterator, Mapping

from alfred_task import constants as _C

from .actions import HighLevelAction, arg_name, fill_goto_args
from .errors import PlanExecutionError, UnsolvableError
from .executor import apply_action, goal_reached
from .state import (
    ACTION_FLAG,
    APPLIANCE_FOR,
    STATE_TASK_ACTION,
    PlanningTask,
    ProblemState,
    parse_task,
    relevant_objects,
    slice_id,
)

__all__ = ["template_plan"]


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
            raise PlanExecutionError("goto: unknown location")
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
        return self.do(HighLevelAction("PickupObject", [arg_name(t)], object_id=oid))

    def put(self, rid: str) -> "_Sim":
        s = self.state
        r = s.objects[rid]
        self.goto(r.location if r.is_fixed_receptacle else s.object_location(rid))
        o = s.objects[s.held]
        return self.do(
            HighLevelAction(
                "PutObject",
                [arg_name(o.object_type), arg_name(r.object_type)],
                object_id=o.object_id,
                receptacle_id=rid,
            )
        )

    def use(self, action: str, rid: str) -> "_Sim":
        s = self.state
        self.goto(s.objects[rid].location)
        o = s.objects[s.held]
        return self.do(
            HighLevelAction(
                action, [arg_name(o.object_type)], object_id=o.object_id, receptacle_id=rid
            )
        )

    def toggle(self, tid: str) -> "_Sim":
        self.goto(self.state.object_location(tid))
        t = self.state.objects[tid].object_type
        return self.do(HighLevelAction("ToggleObject", [arg_name(t)], object_id=tid))

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
            raise PlanExecutionError("nowhere to put the held object")
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
        return self.do(
            HighLevelAction("SliceObject", [arg_name(wt)], object_id=whole, tool_id=knife)
        )

    def slice_and_take(self, whole: str, knife: str) -> "_Sim":
        """Fetch the knife, slice ``whole``, put the knife down, take a slice."""
        self.slice(whole, knife)
        self.free_hands(prefer=self.state.objects[whole].parent)
        return self.take_slice(whole)

    def take_slice(self, whole: str) -> "_Sim":
        s = self.state
        for k in range(s.slices_per_object):
            sid = slice_id(whole, s.objects[whole].object_type, k)
            o = s.objects.get(sid)
            if (
                o is not None
                and s.reach_location(sid) == s.object_location(whole)
                and sid != s.held
            ):
                if o.parent == s.objects[whole].parent and o.location == s.objects[whole].location:
                    return self.pickup(sid)
        raise PlanExecutionError(f"no slice of {whole} left")


def _knives(s: ProblemState) -> list[str]:
    """Knives the agent holds or can reach, by id (so Knife/ButterKnife choice is stable)."""
    return [
        k
        for k, o in sorted(s.objects.items())
        if o.object_type in _C.KNIVES
        and o.pickupable
        and (s.held == k or s.reach_location(k) is not None)
    ]


def _wholes(s: ProblemState, task: PlanningTask) -> list[str]:
    """Unsliced, reachable whole objects of the target class (for sliced tasks)."""
    return [
        w
        for w, o in sorted(s.objects.items())
        if o.object_type == task.object_class
        and o.can("sliceable")
        and not o.is_sliced
        and (s.held == w or s.reach_location(w) is not None)
    ]


def _slice_in_place(root: _Sim, task: PlanningTask, r: str) -> list[list[Callable]]:
    """Sliced simple/pick-two tasks: slices stay in the whole's receptacle, so slicing
    a whole that lies in (or is first carried to) ``r`` satisfies the goal.  Variants:
    carry the whole first and fetch the knife afterwards, or stage the knife at ``r``
    first and then carry the whole."""
    out = []
    s = root.state
    for w in _wholes(s, task):
        for kn in _knives(s):
            slice_it = lambda sm, w=w, kn=kn: sm.slice(w, kn)
            if s.objects[w].parent == r and s.held != w:
                out.append([slice_it])
                continue
            move_w = [lambda sm, w=w: sm.pickup(w), lambda sm, r=r: sm.put(r)]
            out.append(move_w + [slice_it])
            if s.can_place(kn, r) and s.held != kn:
                out.append(
                    [lambda sm, kn=kn: sm.pickup(kn), lambda sm, r=r: sm.put(r)]
                    + move_w
                    + [slice_it]
                )
    return out


def _acquisitions(
    sim: _Sim, task: PlanningTask, exclude: Iterable[str] = ()
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
                if (
                    kp is not None
                    and kp in s.objects
                    and s.objects[kp].is_fixed_receptacle
                    and s.objects[w].pickupable
                    and s.can_place(w, kp)
                    and s.objects[kp].location != wl
                ):
                    out.append(
                        (
                            s.objects[kp].location,
                            lambda sm, w=w, kn=kn, kp=kp: (
                                sm.pickup(w),
                                sm.put(kp),
                                sm.slice_and_take(w, kn),
                            ),
                        )
                    )
    return out


def _load_and_carry(root: _Sim, task: PlanningTask, r: str, run: Callable) -> Iterator[_Sim]:
    """pick_two: gather two targets in one movable receptacle (at the container's
    spot, or after staging the container at a target's spot), carry it into ``r``
    and unload both."""
    s = root.state
    targets = [
        k
        for k, o in sorted(s.objects.items())
        if o.object_type == task.goal_class and o.pickupable and s.reach_location(k) is not None
    ]
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
                    stage = [
                        k
                        for k, o in sorted(s.objects.items())
                        if o.is_fixed_receptacle and o.location == x and s.can_place(m, k)
                    ]
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


class _CandidateSearch:
    """Candidate plans for one task (goal not checked here; the caller checks).

    ``bound[0]`` is the cost of the best plan found so far, updated by the caller between
    candidates: partial plans reaching it are dropped. The strategies are generators, so
    they see the bound as it is when they get there; their order fixes which of several
    equally cheap plans is found first.
    """

    def __init__(self, root: _Sim, task: PlanningTask, bound: list) -> None:
        self.root, self.task, self.bound = root, task, bound
        self.s0 = root.state
        self.objs = self.s0.objects
        self.parents = [
            k
            for k, o in sorted(self.objs.items())
            if o.is_fixed_receptacle and o.object_type == task.parent and o.location is not None
        ]

    def candidates(self) -> Iterator[_Sim]:
        tt = self.task.task_type
        if tt in ("pick_and_place_simple", "pick_two_obj_and_place") and self.task.sliced:
            yield from self._sliced_in_place()
        if tt == "pick_and_place_simple":
            yield from self._simple()
        elif tt in STATE_TASK_ACTION:
            yield from self._state_change()
        elif tt == "pick_two_obj_and_place":
            yield from self._pick_two()
        elif tt == "look_at_obj_in_light":
            yield from self._look()
        elif tt == "pick_and_place_with_movable_recep":
            yield from self._movable()

    def run(self, sim: _Sim, *steps: Callable) -> _Sim | None:
        """``steps`` on a fork of ``sim``; None if one fails or the bound is reached."""
        sim = sim.fork()
        try:
            for st in steps:
                st(sim)
                if sim.cost >= self.bound[0]:
                    return None
        except (PlanExecutionError, KeyError):
            return None
        return sim

    def carried_roots(self, r: str) -> list[_Sim]:
        """The root, plus: first carry a movable receptacle that holds targets into r (also the
        one in hand: a replan after picking up a loaded container must carry it on)."""
        root, objs = self.root, self.objs
        out = [root]
        for m, mo in sorted(objs.items()):
            reachable = self.s0.held == m or self.s0.reach_location(m) is not None
            if (
                mo.is_movable_receptacle
                and mo.parent != r
                and reachable
                and any(
                    o.parent == m and o.object_type == self.task.goal_class for o in objs.values()
                )
            ):
                c = self.run(root, lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r))
                if c:
                    out.append(c)
        return out

    # ---- one strategy family per task type -------------------------------------
    def _sliced_in_place(self) -> Iterator[_Sim]:
        for r in self.parents:
            for steps in _slice_in_place(self.root, self.task, r):
                c = self.run(self.root, *steps)
                if c:
                    yield c

    def _simple(self) -> Iterator[_Sim]:
        for r in self.parents:
            for base in self.carried_roots(r):
                for _, acq in _acquisitions(base, self.task):
                    c = self.run(base, acq, lambda sm, r=r: sm.put(r))
                    if c:
                        yield c

    def _state_change(self) -> Iterator[_Sim]:
        """Clean/heat/cool: get a target, treat it at an appliance (if not yet), put it."""
        root = self.root
        act = STATE_TASK_ACTION[self.task.task_type]
        flag = ACTION_FLAG[act]
        apps = [
            k
            for k, o in sorted(self.objs.items())
            if o.is_fixed_receptacle and o.object_type == APPLIANCE_FOR[act] and o.location
        ]
        for r in self.parents:
            for _, acq in _acquisitions(root, self.task):
                for ap in apps:

                    def treat(sm, ap=ap):
                        if not getattr(sm.state.objects[sm.state.held], flag):
                            sm.use(act, ap)

                    c = self.run(root, acq, treat, lambda sm, r=r: sm.put(r))
                    if c:
                        yield c

    def _pick_two(self) -> Iterator[_Sim]:
        task = self.task
        for r in self.parents:
            for base in self.carried_roots(r):
                bobjs = base.state.objects
                placed = [
                    k
                    for k, o in bobjs.items()
                    if o.parent == r and o.object_type == task.goal_class
                ]
                first = _acquisitions(base, task, exclude=placed)
                if placed:
                    for _, acq in first:
                        c = self.run(base, acq, lambda sm, r=r: sm.put(r))
                        if c:
                            yield c
                    continue
                if base is self.root:
                    yield from _load_and_carry(self.root, task, r, self.run)
                for _, acq1 in first:
                    mid = self.run(base, acq1, lambda sm, r=r: sm.put(r))
                    if mid is None:
                        continue
                    done = [k for k, o in mid.state.objects.items() if o.parent == r]
                    for _, acq2 in _acquisitions(mid, task, exclude=done):
                        c = self.run(mid, acq2, lambda sm, r=r: sm.put(r))
                        if c:
                            yield c

    def _look(self) -> Iterator[_Sim]:
        root, task = self.root, self.task
        lamps = [
            k
            for k, o in sorted(self.objs.items())
            if o.object_type == task.toggle
            and o.can("toggleable")
            and self.s0.object_location(k) is not None
        ]
        for t in lamps:

            def light(sm, t=t):
                if not sm.state.objects[t].is_toggled:
                    sm.toggle(t)
                else:
                    sm.goto(sm.state.object_location(t))

            for _, acq in _acquisitions(root, task):
                # lamp first (ALFRED's order when object and lamp share a spot) ...
                c = self.run(root, light, acq, lambda sm, t=t: sm.goto(sm.state.object_location(t)))
                if c:
                    yield c
                # ... or object first
                c = self.run(root, acq, light)
                if c:
                    yield c

    def _movable(self) -> Iterator[_Sim]:
        root, task, objs = self.root, self.task, self.objs
        mreceps = [
            k
            for k, o in sorted(objs.items())
            if o.object_type == task.mrecep and o.is_movable_receptacle
        ]
        for r in self.parents:
            for m in mreceps:
                inside = [
                    k for k, o in objs.items() if o.parent == m and o.object_type == task.goal_class
                ]
                if inside:  # container already holds a target: carry it
                    c = self.run(root, lambda sm, m=m: sm.pickup(m), lambda sm, r=r: sm.put(r))
                    if c:
                        yield c
                for spot, acq in _acquisitions(root, task):
                    yield from self._movable_orders(r, m, spot, acq)

    def _movable_orders(self, r: str, m: str, spot: str | None, acq: Callable) -> Iterator[_Sim]:
        """Three orders of getting object ``acq`` into container ``m`` inside ``r``."""
        root, objs = self.root, self.objs
        # A: object into container, then container to the receptacle
        c = self.run(
            root,
            acq,
            lambda sm, m=m: sm.put(m),
            lambda sm, m=m: sm.pickup(m),
            lambda sm, r=r: sm.put(r),
        )
        if c:
            yield c
        # B: container to the receptacle, then object into it
        if objs[m].parent == r:
            c = self.run(root, acq, lambda sm, m=m: sm.put(m))
        else:
            c = self.run(
                root,
                lambda sm, m=m: sm.pickup(m),
                lambda sm, r=r: sm.put(r),
                acq,
                lambda sm, m=m: sm.put(m),
            )
        if c:
            yield c
        # C: stage the container where the object is picked up
        if spot is None or self.s0.reach_location(m) == spot:
            return
        stage = [
            k
            for k, o in sorted(objs.items())
            if o.is_fixed_receptacle and o.location == spot and self.s0.can_place(m, k)
        ]
        if stage:
            c = self.run(
                root,
                lambda sm, m=m: sm.pickup(m),
                lambda sm, k=stage[0]: sm.put(k),
                acq,
                lambda sm, m=m: sm.put(m),
                lambda sm, m=m: sm.pickup(m),
                lambda sm, r=r: sm.put(r),
            )
            if c:
                yield c


def template_plan(
    state: ProblemState, task_type: str, pddl_params: Mapping
) -> list[HighLevelAction]:
    """Fast task-specific planner (alfred.md §3.1 scripts, planning.md §4).

    Enumerates instance choices (which object / knife / appliance / receptacle /
    container / lamp) and strategies (object-first or container-first for movable
    receptacles; lamp-first or object-first for look), simulates each with the
    symbolic executor and returns the cheapest valid plan (first found on ties),
    ending in NoOp.  Same world model as the PDDL problem: only the task-relevant
    objects of :func:`make_problem` are considered.
    """
    task = parse_task(task_type, pddl_params)
    if len(state.open_receptacles()) > 1:
        raise ValueError("more than one receptacle is open; ALFRED's domain allows one")
    items, receptacles = relevant_objects(state, task)
    keep = set(items) | set(receptacles)
    pruned = replace(state, objects={k: v for k, v in state.objects.items() if k in keep})
    root = _Sim(pruned)
    # An open receptacle must be closed before moving (GotoLocation needs allClosed).
    for rid in pruned.open_receptacles():
        r = pruned.objects[rid]
        if r.location != pruned.agent_location:
            raise UnsolvableError(f"{rid} is open and the agent cannot reach it without moving")
        root.do(HighLevelAction("CloseObject", [arg_name(r.object_type)], object_id=rid))
    if goal_reached(root.state, task_type, pddl_params):
        best: _Sim | None = root
    else:
        best = None
        bound = [math.inf]
        for c in _CandidateSearch(root, task, bound).candidates():
            if (best is None or c.cost < best.cost) and goal_reached(
                c.state, task_type, pddl_params
            ):
                best = c
                bound[0] = c.cost
    if best is None:
        raise UnsolvableError(f"template planner found no plan for {task_type} {dict(pddl_params)}")
    plan = list(best.plan) + [HighLevelAction("NoOp", [])]
    types = {k: o.object_type for k, o in best.state.objects.items()}
    fill_goto_args(plan, types)
    return plan
