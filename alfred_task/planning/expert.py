"""ALFRED's expert: a high-level plan expanded into low-level actions with interaction masks.

One class serves both uses of the expert:

* generation (``alfred_task.gen.generate``) runs it from the start state to the end and records the
  demonstration, as ALFRED's planner agent did (plan once, expand, execute; §3.4);
* the online expert (DAgger, ``--agent expert``) asks it for the next action from whatever
  state the learner reached. It keeps following its expansion while the agent does what it
  said and that succeeds, and replans from the simulator state otherwise (a different
  action, a failure, a changed object state). A failed MoveAhead only blocks that cell and
  re-runs A*, as in ALFRED. Replans are rare along expert-like rollouts, so queries are
  cheap on average (``benchmarks/alfred_expert.py`` measures it).

Low-level expansion (alfred.md §3.4): GotoLocation tilts to 45°, follows an A* path of
MoveAhead/Rotate actions on the 0.25 m grid and looks to the spot's horizon; interactions are
ALFRED's sequences (open/close parents, Put→ToggleOn→ToggleOff→Pickup at the sink,
Open→Put→Close→On→Off→Open→Pickup→Close at the microwave, ... ). Masks are the target's
instance mask in the current frame, which ``AlfredEnv.mask_to_object`` maps back to it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, List, Mapping, Optional, Tuple

import numpy as np

from alfred_task import constants as C
from alfred_task.agent_api import Agent
from alfred_task.env.environment import AlfredEnv
from alfred_task.env.navigation import (
    FORWARD,
    NAV_HORIZON,
    GridNavigator,
    Node,
    agent_node,
    location_string,
    look_actions,
    parse_location,
)
from alfred_task.planning import (
    HighLevelAction,
    PlanningError,
    ProblemState,
    arg_name,
    template_plan,
)
from alfred_task.planning.scene_state import LocationIndex, build_problem_state


MAX_SPOT_TRIES = 8  # interaction spots tried per object before the expert gives up on seeing it
MAX_FAILED_TRIES = 3  # failed interactions per object before it is given up (ALFRED's budget is 10)
HELD_FAR_AFTER = 2  # spots rejected while holding something before farther spots are tried first
MAX_SPOT_TRIES_NO_ALTERNATIVE = (
    24  # spots tried when no plan avoids the object (nothing else to do)
)


class ExpertError(RuntimeError):
    """The expert cannot continue (no plan, target not visible, unreachable spot, ...)."""


class _NoPath(ExpertError):
    """The grid has no path to a spot of the current plan (a MoveAhead failed on the way)."""


@dataclass(frozen=True)
class LowStep:
    """One low-level action of an expansion: ALFRED action name, target object, subgoal."""

    action: str
    object_id: Optional[str] = None
    high_idx: int = 0


@dataclass(frozen=True)
class ExpertAction:
    """What the expert tells the agent to do next (``action`` is ``<<stop>>`` at the end)."""

    action: str
    mask: Optional[np.ndarray] = None
    object_id: Optional[str] = None
    high_idx: int = 0

    @property
    def is_stop(self) -> bool:
        return self.action == C.STOP


class AlfredExpert:
    """Plans with the template planner (or Fast Downward) and expands the plan online."""

    def __init__(
        self,
        env: AlfredEnv,
        task_type: str,
        pddl_params: Mapping,
        planner: str = "template",
        min_visible_pixels: int = C.MIN_VISIBLE_PIXELS,
    ) -> None:
        if planner not in ("template", "fast_downward"):
            raise ValueError(f"planner must be 'template' or 'fast_downward', not {planner!r}")
        self.env = env
        self.task_type = task_type
        self.pddl_params = dict(pddl_params)
        self.planner = planner
        self.min_visible_pixels = int(min_visible_pixels)
        self.nav = GridNavigator.from_controller(env.controller)
        self.index = LocationIndex(env.controller, self.nav, self._node())
        self.plan: List[HighLevelAction] = []
        self.queue: Deque[LowStep] = deque()
        self.next_high = 0
        self.replans = 0
        self._emitted: Optional[Tuple[int, LowStep]] = None  # (env.num_actions at emission, step)
        self._plan_start: Optional[str] = None
        self._unseen: Optional[str] = None  # why an object was given up (see _drop_pose)
        self._failed: Dict[str, int] = {}  # failed interactions per target object
        self._last_dropped: Optional[Tuple[str, int]] = (
            None  # (object, spots rejected) of the last drop
        )
        self._replan()

    # --- public -----------------------------------------------------------------------------
    def next_action(self) -> ExpertAction:
        """The next expert action from the env's current state."""
        try:
            return self._next_action()
        except _NoPath:  # a failed MoveAhead cut the way to the spot: plan with what is reachable
            self._emitted = None
            self._replan()
            return self._next_action()

    def _next_action(self) -> ExpertAction:
        if not self._on_track():
            self._replan()
        for _ in range(4):
            step = self._next_step()
            if step is None:
                self._emitted = None
                return ExpertAction(C.STOP, high_idx=max(len(self.plan) - 1, 0))
            if step.object_id is None:
                self._emitted = (self.env.num_actions, step)
                return ExpertAction(step.action, high_idx=step.high_idx)
            mask = self._mask(step.object_id, step.action)
            if mask is not None:
                self._emitted = (self.env.num_actions, step)
                return ExpertAction(step.action, mask, step.object_id, step.high_idx)
            self._look_elsewhere(step.action, step.object_id)
        raise ExpertError(
            f"{step.action}: {step.object_id} is not visible with >= "
            f"{self.min_visible_pixels} pixels from the interaction spot"
        )

    def high_pddl(self) -> List[dict]:
        return [a.to_high_pddl(i) for i, a in enumerate(self.plan)]

    # --- tracking -----------------------------------------------------------------------------
    def _node(self) -> Node:
        return agent_node(self.env.last_event.metadata["agent"])

    def _on_track(self) -> bool:
        """Can the expert keep its expansion? Replan only when objects changed.

        The agent followed the last suggestion and it worked: continue. The suggested
        interaction failed: it fails from this pose (THOR's checks differ from what the frame
        shows), so drop the pose and replan from another spot. Otherwise, if only the pose
        changed (a different navigation action, or any failed action), re-route to where the
        expansion expects the agent and continue; a failed expert MoveAhead also marks that
        cell impossible (ALFRED). An interaction that succeeded against the plan means the
        symbolic state changed: replan.
        """
        if self._emitted is None:
            return True
        n, step = self._emitted
        name, target, ok = self.env.last_interaction
        if self.env.num_actions != n + 1:
            return False
        followed = name == step.action and (step.object_id is None or target == step.object_id)
        if followed and ok:
            return True
        if followed and step.object_id is not None:  # the interaction failed from this pose
            self._failed[step.object_id] = self._failed.get(step.object_id, 0) + 1
            self._drop_pose(step.action, step.object_id)
            return False
        if followed and step.action == "MoveAhead_25":
            i, k, r = self._node()
            di, dk = FORWARD[r]
            self.nav.block_cell(i + di, k + dk)
        if followed or name in C.NAV_ACTION_SET or not ok:
            self._reroute(step)
            return True
        return False

    def _look_elsewhere(self, action: str, object_id: str) -> None:
        """The target shows too few pixels from this pose: drop the pose and plan again."""
        self._drop_pose(action, object_id)
        self._replan()

    def _drop_pose(self, action: str, object_id: str) -> None:
        """`action` on the target cannot work from this pose (too few pixels, or it failed): drop
        the pose for the target and for every object whose spot it is, so the next plan uses
        the next-ranked spots; after MAX_SPOT_TRIES the target is given up."""
        here = location_string(
            *self._node(), self.env.last_event.metadata["agent"]["cameraHorizon"]
        )
        owners = {object_id} | {k for k, o in self._state.objects.items() if o.location == here}
        tried = self.index.reject(object_id, here)
        self._last_dropped = (object_id, tried)
        if tried >= HELD_FAR_AFTER and self.env.last_event.metadata["inventoryObjects"]:
            self.index.prefer_far(object_id)  # what the agent holds may hide it from near spots
        if tried >= MAX_SPOT_TRIES or self._failed.get(object_id, 0) >= MAX_FAILED_TRIES:
            # seen from nowhere: plan without it (another instance of its class, if any)
            self.index.abandon(object_id)
            self._unseen = (
                f"{action}: {object_id} is not visible with >= {self.min_visible_pixels} "
                f"pixels, or {action} fails, from each of {tried} interaction spots"
            )
        for oid in sorted(owners - {object_id}):
            self.index.reject(oid, here)

    def _spot(self, high_idx: int) -> Optional[str]:
        """Where the expansion expects the agent during subgoal `high_idx`."""
        for j in range(min(high_idx, len(self.plan) - 1), -1, -1):
            if self.plan[j].action == "GotoLocation":
                return self.plan[j].location
        return self._plan_start

    def _reroute(self, step: LowStep) -> None:
        hi = step.high_idx
        if step.action in C.NAV_ACTION_SET:
            while (
                self.queue
                and self.queue[0].action in C.NAV_ACTION_SET
                and self.queue[0].high_idx == hi
            ):
                self.queue.popleft()
        else:
            self.queue.appendleft(step)  # not done yet: do it once back at the spot
        loc = self._spot(hi)
        if loc is not None:
            goto = HighLevelAction("GotoLocation", [], location=loc)
            self.queue.extendleft(reversed(self._expand_goto(goto, hi)))

    def _replan(self) -> None:
        ev = self.env.last_event
        state = build_problem_state(
            ev.metadata,
            self.index,
            self.task_type,
            self.pddl_params,
            self.env.cleaned_objects,
            self.env.heated_objects,
            self.env.cooled_objects,
        )
        self._state = state
        start = state.agent_location
        prefix = self._close_open_receptacles(state)
        try:
            plan = self._plan(state)
        except PlanningError as e:
            if self._keep_trying():  # no plan avoids the object: look for it from more spots
                return self._replan()
            if self._unseen is not None:  # the reason there is no plan any more
                raise ExpertError(f"{self._unseen}; no plan without it") from e
            raise ExpertError(f"no plan from the current state: {e}") from e
        self.plan = prefix + list(plan)
        self._plan_start = start
        self.queue.clear()
        self.next_high = 0
        self.replans += 1
        self._emitted = None

    def _plan(self, state: ProblemState) -> List[HighLevelAction]:
        if self.planner == "template":
            return template_plan(state, self.task_type, self.pddl_params)
        from alfred_task.planning import load_domain, make_problem, solve

        return solve(load_domain(), make_problem(state, self.task_type, self.pddl_params))

    def _keep_trying(self) -> bool:
        """The object just given up for being unseen is the only way to the goal: take it back
        and try further spots (up to MAX_SPOT_TRIES_NO_ALTERNATIVE; the harness's failure and
        step budgets still bound the episode). Objects given up for failed interactions stay
        given up (more tries would only spend the episode's failures)."""
        oid, tried = self._last_dropped or (None, 0)
        self._last_dropped = None
        if (
            oid is None
            or oid not in self.index.abandoned
            or tried >= MAX_SPOT_TRIES_NO_ALTERNATIVE
            or self._failed.get(oid, 0) >= MAX_FAILED_TRIES
        ):
            return False
        self.index.restore(oid)
        self._unseen = None
        return True

    def _close_open_receptacles(self, state: ProblemState) -> List[HighLevelAction]:
        """ALFRED's domain moves only with every receptacle closed: go and close open ones."""
        prefix: List[HighLevelAction] = []
        for rid in state.open_receptacles():
            r = state.objects[rid]
            if r.location is None:
                raise ExpertError(f"{rid} is open and has no reachable spot to close it from")
            if r.location != state.agent_location:
                prefix.append(
                    HighLevelAction("GotoLocation", [arg_name(r.object_type)], location=r.location)
                )
                state.agent_location = r.location
            prefix.append(HighLevelAction("CloseObject", [arg_name(r.object_type)], object_id=rid))
            state.update_object(rid, is_open=False)
        return prefix

    # --- expansion ----------------------------------------------------------------------------
    def _next_step(self) -> Optional[LowStep]:
        while not self.queue:
            if self.next_high >= len(self.plan):
                return None
            i = self.next_high
            self.next_high += 1
            self.queue.extend(self._expand(i))
            if self.plan[i].action == "NoOp" and not self.queue:
                return None
        return self.queue.popleft()

    def _expand(self, i: int) -> List[LowStep]:
        a = self.plan[i]
        nxt = self.plan[i + 1].action if i + 1 < len(self.plan) else "NoOp"
        close_after = nxt in ("GotoLocation", "NoOp")
        meta = {o["objectId"]: o for o in self.env.last_event.metadata["objects"]}
        held = next((o["objectId"] for o in self.env.last_event.metadata["inventoryObjects"]), None)

        def s(action: str, oid: Optional[str]) -> LowStep:
            return LowStep(action, oid, i)

        def closed_openable(oid: Optional[str]) -> bool:
            o = meta.get(oid) if oid else None
            return bool(o and o.get("openable") and not o.get("isOpen"))

        if a.action == "GotoLocation":
            return self._expand_goto(a, i)
        if a.action == "NoOp":
            return []
        if a.action == "OpenObject":
            return [s("OpenObject", a.object_id)]
        if a.action == "CloseObject":
            return [s("CloseObject", a.object_id)]
        if a.action == "PickupObject":
            target = self._pick_target(a.object_id, meta)
            parent = self._openable_parent(target, meta)
            out = [s("OpenObject", parent)] if closed_openable(parent) else []
            out.append(s("PickupObject", target))
            if out[0].action == "OpenObject" and close_after:
                out.append(s("CloseObject", parent))
            return out
        if a.action == "PutObject":
            rec = a.receptacle_id
            opener = rec if closed_openable(rec) else None
            if opener is None and meta.get(rec, {}).get("pickupable"):
                p = self._openable_parent(rec, meta)
                opener = p if closed_openable(p) else None
            out = [s("OpenObject", opener)] if opener else []
            out.append(s("PutObject", rec))
            if opener and close_after:
                out.append(s("CloseObject", opener))
            return out
        if a.action == "CleanObject":
            faucet = self._faucet_for(a.receptacle_id, meta)
            return [
                s("PutObject", a.receptacle_id),
                s("ToggleObjectOn", faucet),
                s("ToggleObjectOff", faucet),
                s("PickupObject", held or a.object_id),
            ]
        if a.action == "HeatObject":
            mw = a.receptacle_id
            return [
                s("OpenObject", mw),
                s("PutObject", mw),
                s("CloseObject", mw),
                s("ToggleObjectOn", mw),
                s("ToggleObjectOff", mw),
                s("OpenObject", mw),
                s("PickupObject", held or a.object_id),
                s("CloseObject", mw),
            ]
        if a.action == "CoolObject":
            fr = a.receptacle_id
            return [
                s("OpenObject", fr),
                s("PutObject", fr),
                s("CloseObject", fr),
                s("OpenObject", fr),
                s("PickupObject", held or a.object_id),
                s("CloseObject", fr),
            ]
        if a.action == "ToggleObject":
            on = bool(meta.get(a.object_id, {}).get("isToggled"))
            return [s("ToggleObjectOff" if on else "ToggleObjectOn", a.object_id)]
        if a.action == "SliceObject":
            parent = self._openable_parent(a.object_id, meta)
            out = [s("OpenObject", parent)] if closed_openable(parent) else []
            out.append(s("SliceObject", a.object_id))
            if out[0].action == "OpenObject" and close_after:
                out.append(s("CloseObject", parent))
            return out
        raise ExpertError(f"cannot expand high-level action {a.action!r}")

    def _expand_goto(self, a: HighLevelAction, i: int) -> List[LowStep]:
        if a.location is None:
            raise ExpertError("GotoLocation without a location")
        gi, gk, gr, gh = parse_location(a.location)
        ag = self.env.last_event.metadata["agent"]
        start = self._node()
        horizon = float(ag["cameraHorizon"])
        out: List[str] = []
        if start != (gi, gk, gr):
            out += look_actions(horizon, NAV_HORIZON)
            horizon = NAV_HORIZON
            try:
                out += self.nav.path_actions(start, (gi, gk, gr))
            except Exception as e:  # networkx: no path / node not found
                raise _NoPath(f"no path from {start} to {a.location}: {e}") from e
        out += look_actions(horizon, gh)
        return [LowStep(x, None, i) for x in out]

    @staticmethod
    def _openable_parent(oid: Optional[str], meta: Mapping[str, Mapping]) -> Optional[str]:
        o = meta.get(oid) if oid else None
        for pid in (o or {}).get("parentReceptacles") or []:
            p = meta.get(pid)
            if p is not None and p.get("openable"):
                return pid
        return None

    def _pick_target(self, oid: Optional[str], meta: Mapping[str, Mapping]) -> Optional[str]:
        """Slices of the plan are placeholders: take the visible slice nearest the agent."""
        if oid in meta or oid is None or "Sliced" not in oid.rsplit("|", 1)[-1]:
            return oid
        whole, piece = oid.rsplit("|", 1)
        stype = piece.split("_")[0]
        ag = self.env.last_event.metadata["agent"]["position"]
        masks = self.env.last_event.instance_masks
        cands = [
            o
            for o in meta.values()
            if o["objectType"] == stype
            and o["objectId"].startswith(whole + "|")
            and o["objectId"] in masks
            and int(masks[o["objectId"]].sum()) >= self.min_visible_pixels
        ]
        if not cands:
            raise ExpertError(f"no visible slice of {whole}")
        best = min(
            cands,
            key=lambda o: (
                (o["position"]["x"] - ag["x"]) ** 2 + (o["position"]["z"] - ag["z"]) ** 2,
                o["objectId"],
            ),
        )
        return best["objectId"]

    @staticmethod
    def _faucet_for(basin: Optional[str], meta: Mapping[str, Mapping]) -> str:
        b = meta.get(basin) if basin else None
        faucets = [o for o in meta.values() if o["objectType"] == "Faucet"]
        if b is None or not faucets:
            raise ExpertError(f"no faucet for {basin}")
        bp = b["position"]
        return min(
            faucets,
            key=lambda f: (
                (f["position"]["x"] - bp["x"]) ** 2 + (f["position"]["z"] - bp["z"]) ** 2,
                f["objectId"],
            ),
        )["objectId"]

    def _mask(self, oid: str, action: str = "") -> Optional[np.ndarray]:
        """The target's mask, or None when this pose cannot work: too few pixels, or (for an
        interaction the env does not force) the simulator's own ``visible`` flag is False, so
        the action would fail ("not found within the specified visibility") and spend one of
        the episode's failures; the expert looks from the next spot instead."""
        m = self.env.last_event.instance_masks.get(oid)
        if m is None or int(m.sum()) < self.min_visible_pixels:
            return None
        if action and not self._forced(action, oid):
            o = next(
                (o for o in self.env.last_event.metadata["objects"] if o["objectId"] == oid), None
            )
            if o is not None and not o.get("visible", True):
                return None
        return m

    def _forced(self, action: str, oid: str) -> bool:
        """Does the env run `action` with forceAction (no visibility check)? Asked of the env's
        own ALFRED-to-THOR mapping, so the two never disagree."""
        try:
            return bool(self.env.to_thor_api(action, oid).get("forceAction"))
        except Exception:  # e.g. PutObject with empty hands: the env reports it when acting
            return True


class ExpertAgent(Agent):
    """The online expert as an evaluation agent (``python -m alfred_task.evaluation --agent expert``).

    Test trajectories carry no task, so the expert can only run on train/valid splits. An
    ExpertError or PlanningError (no plan from a state) ends the episode with ``<<stop>>``;
    ``failures`` counts them and `episode_error` tells the harness the message, which the
    episode's result record keeps as its ``failure``.
    """

    def __init__(self, planner: str = "template") -> None:
        self.planner = planner
        self.expert: Optional[AlfredExpert] = None
        self.failures = 0
        self._error: Optional[str] = None

    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        if "task_type" not in traj or "pddl_params" not in traj:
            raise ValueError(
                f"{traj.get('task_id', '?')}: the expert needs task_type and pddl_params "
                "(test splits do not have them)"
            )
        self.expert = None
        self._error = None
        self._traj = traj
        self._env = env

    def act(self, env) -> Tuple[str, Optional[np.ndarray]]:
        try:
            if self.expert is None:
                self.expert = AlfredExpert(
                    env, self._traj["task_type"], self._traj["pddl_params"], self.planner
                )
            a = self.expert.next_action()
        except (ExpertError, PlanningError) as e:
            self.failures += 1
            self._error = f"expert error: {type(e).__name__}: {e}"
            return C.STOP, None
        return a.action, a.mask

    def episode_error(self) -> Optional[str]:
        return self._error

    def teacher_force(self, env, action: str, mask, success: bool) -> None:
        """Someone else acted: the expert notices it on its next query and replans."""


__all__ = ["AlfredExpert", "ExpertAction", "ExpertAgent", "ExpertError", "LowStep"]
