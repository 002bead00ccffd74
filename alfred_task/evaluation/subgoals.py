"""Subgoal progress tracking and dense reward (alfred.md §4 "Dense reward and subgoal tracking").

`SubgoalTracker(traj, env)` follows ``plan.high_pddl`` one subgoal at a time. After every
attempted agent action call ``update(action_name, success)``; it inspects
``env.last_event`` (and the env's cleaned/heated/cooled sets) and returns
``(reward, done)``. Rules (our implementation of the §4 table):

* At most one subgoal completes per update. The action must be in the current subgoal's
  valid set (table below); otherwise the step gets the ``invalid_action`` penalty and the
  subgoal is not checked ("invalid-action rule"). The check itself looks at the state, so
  a failed action that is valid can still complete a subgoal (as ALFRED, which inspects
  the state after every step).
* ``get_subgoal_idx()`` = number of completed subgoals - 1 (starts at -1).
* ``num_subgoals`` excludes a trailing End (``planner_action.action == "End"``); when the
  End is missing, every subgoal counts (ALFRED's rule: look at the last planner action).
  ``done`` once ``get_subgoal_idx() == num_subgoals - 1``.

Completion checks (ids resolved to scene objects, see below):

=============  ============================================================  ==========================
subgoal        done when                                                     valid actions
=============  ============================================================  ==========================
GotoLocation   grid distance from the agent pose to ``loc|X|Z|R|H`` < 3       MoveAhead Rotate* Look*
                                                                             Teleport*
PickupObject   held object == objectId (ignoring a ``|XSliced_k`` suffix)    Pickup Open Close
PutObject      objectId in receptacleObjectId's receptacleObjectIds          Put Open Close
OpenObject     objectId isOpen                                               any
CloseObject    objectId not isOpen                                           any
ToggleObject   objectId isToggled                                            ToggleOn ToggleOff
SliceObject    objectId isSliced (or slices of it exist)                     Slice Open Close
CleanObject    cleanObjectId in env.cleaned_objects                          Put Pickup ToggleOn/Off
HeatObject     object of the PutObject two subgoals later in env.heated      Open Close Pickup Put
                                                                             ToggleOn/Off
CoolObject     staged: target in env.cooled -> fridge open -> target held    Open Close Pickup Put
                (one stage per update)
=============  ============================================================  ==========================

GotoLocation distance (an approximation of ALFRED's A* over its navigation graph): BFS over
nodes (grid x, grid z, rotation index) built from the scene's ``GetReachablePositions``
(rotate left/right = 1 step; MoveAhead = 1 step to the adjacent reachable cell in the
facing direction), plus ``|horizon - H| / 15`` look steps. Grid coordinates are
``round(metres / 0.25)``. If the target cell or the agent's cell is not reachable in this
simulator, the nearest reachable cell stands in for it. The reachable positions are queried
once, at construction (right after ``env.init_episode``); the controller's ``last_event``
is put back afterwards so the agent's first observation is the init event.

Object ids: planner ids (``Type|+x.xx|+y.yy|+z.zz[|Sub]``) come from THOR 2.1.0 and need not
exist in the simulator (thor_lite names objects differently). Each planner id is resolved
once, at construction, to the scene object of the same type nearest the id's coordinates
(exact ids win; a ``|SinkBasin``-style suffix resolves by its own type; slice suffixes are
kept on the resolved parent).

Rewards (``reward_type`` "dense" as in evaluation): goal +5 once, when the last subgoal
completes; -0.01 per step beyond the expert length; dense GotoLocation shaping
0.2 * (previous distance - distance) and +4 when done; other subgoals +1 when done
[our value]; ``invalid_action`` -0.1 [our value]; +2 / -0.05 per successful / failed action
only if the reward type contains "success" / "failure".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from alfred_task.constants import (
    AGENT_HORIZON_ADJ,
    AGENT_STEP_SIZE,
    DISCRETE_TO_API,
    END_PLANNER_ACTION,
)
from alfred_task.env.environment import query
from alfred_task.env.navigation import GridNavigator, parse_location

__all__ = [
    "RewardConfig",
    "SubgoalTracker",
    "VALID_ACTIONS",
    "num_subgoals",
    "resolve_object_id",
    "NavGrid",
]

_NAV = frozenset(
    {"MoveAhead", "RotateLeft", "RotateRight", "LookUp", "LookDown", "Teleport", "TeleportFull"}
)
#: subgoal type -> API action names that may complete it (None = any action)
VALID_ACTIONS: Dict[str, Optional[frozenset]] = {
    "GotoLocation": _NAV,
    "PickupObject": frozenset({"PickupObject", "OpenObject", "CloseObject"}),
    "PutObject": frozenset({"PutObject", "OpenObject", "CloseObject"}),
    "OpenObject": None,
    "CloseObject": None,
    "ToggleObject": frozenset({"ToggleObjectOn", "ToggleObjectOff"}),
    "SliceObject": frozenset({"SliceObject", "OpenObject", "CloseObject"}),
    "CleanObject": frozenset({"PutObject", "PickupObject", "ToggleObjectOn", "ToggleObjectOff"}),
    "HeatObject": frozenset(
        {
            "OpenObject",
            "CloseObject",
            "PickupObject",
            "PutObject",
            "ToggleObjectOn",
            "ToggleObjectOff",
        }
    ),
    "CoolObject": frozenset({"OpenObject", "CloseObject", "PickupObject", "PutObject"}),
}

MIN_REACH_DISTANCE = 3


@dataclass(frozen=True)
class RewardConfig:
    goal: float = 5.0
    step_penalty: float = -0.01
    success: float = 2.0
    failure: float = -0.05
    goto_scale: float = 0.2
    goto_done: float = 4.0
    subgoal_done: float = 1.0
    invalid_action: float = -0.1
    min_reach_distance: int = MIN_REACH_DISTANCE


def num_subgoals(high_pddl: Sequence[Mapping]) -> int:
    """Number of subgoals, excluding a trailing End (kept when the End is missing)."""
    if not high_pddl:
        return 0
    last = high_pddl[-1].get("planner_action", {}).get("action")
    return len(high_pddl) - 1 if last == END_PLANNER_ACTION else len(high_pddl)


# ---------------------------------------------------------------------------
# object ids
# ---------------------------------------------------------------------------
_SLICE_RE = re.compile(r"\|[A-Za-z]+Sliced_\d+$")
_SUFFIX_NUM = re.compile(r"_\d+$")


def _base(oid: str) -> str:
    return _SLICE_RE.sub("", oid)


def _is_slice(oid: str) -> bool:
    return bool(_SLICE_RE.search(oid))


def same_object(a: Optional[str], b: Optional[str]) -> bool:
    """Equal ids, ignoring which slice (``|PotatoSliced_3`` vs ``|PotatoSliced_1``)."""
    if not a or not b:
        return False
    return a == b or (_is_slice(a) == _is_slice(b) and _base(a) == _base(b))


def _pos(o: Mapping) -> Tuple[float, float, float]:
    p = o.get("position") or {}
    return float(p.get("x", 0.0)), float(p.get("y", 0.0)), float(p.get("z", 0.0))


def resolve_object_id(planner_id: str, objects: Sequence[Mapping]) -> str:
    """Map a THOR-2.1.0 planner objectId onto this scene's objects (see module doc)."""
    if not planner_id:
        return planner_id
    ids = {o["objectId"] for o in objects}
    if planner_id in ids:
        return planner_id
    parts = planner_id.split("|")
    if len(parts) < 4:
        return planner_id
    try:
        xyz = tuple(float(v) for v in parts[1:4])
    except ValueError:
        return planner_id

    def nearest(otype: str) -> Optional[str]:
        cands = [o for o in objects if o.get("objectType") == otype]
        if not cands:
            return None
        return min(cands, key=lambda o: (math.dist(_pos(o), xyz), o["objectId"]))["objectId"]

    if len(parts) > 4:
        sub = "|".join(parts[4:])
        sub_type = _SUFFIX_NUM.sub("", parts[-1])
        if "Sliced" not in sub_type:
            hit = nearest(sub_type)
            if hit is not None:
                return hit
        parent = resolve_object_id("|".join(parts[:4]), objects)
        return f"{parent}|{sub}"
    hit = nearest(parts[0])
    return planner_id if hit is None else hit


# ---------------------------------------------------------------------------
# navigation grid
# ---------------------------------------------------------------------------


class NavGrid:
    """GotoLocation distances on ALFRED's grid (:class:`GridNavigator`), plus look steps."""

    def __init__(self, reachable: Iterable[Mapping], step: float = AGENT_STEP_SIZE) -> None:
        self.nav = GridNavigator([(p["x"], p["z"]) for p in reachable], step) if reachable else None

    def snap(self, x: int, z: int) -> Optional[Tuple[int, int]]:
        if self.nav is None:
            return None
        if (x, z) in self.nav.cells:
            return (x, z)
        return min(self.nav.cells, key=lambda c: ((c[0] - x) ** 2 + (c[1] - z) ** 2, c))

    def distance(self, src: Tuple[int, int, int, float], dst: Tuple[int, int, int, float]) -> float:
        """Action count from pose (gx, gz, rot, horizon) to pose; inf when unreachable."""
        s, d = self.snap(src[0], src[1]), self.snap(dst[0], dst[1])
        if s is None or d is None:
            return math.inf
        n = self.nav.distances_to((d[0], d[1], int(dst[2]) % 4)).get((s[0], s[1], int(src[2]) % 4))
        if n is None:
            return math.inf
        return n + round(abs(float(src[3]) - float(dst[3])) / AGENT_HORIZON_ADJ)


def agent_pose(metadata: Mapping) -> Tuple[int, int, int, float]:
    a = metadata["agent"]
    return (
        round(a["position"]["x"] / AGENT_STEP_SIZE),
        round(a["position"]["z"] / AGENT_STEP_SIZE),
        round(a["rotation"]["y"] / 90.0) % 4,
        float(a["cameraHorizon"]),
    )


# ---------------------------------------------------------------------------
# tracker
# ---------------------------------------------------------------------------
class SubgoalTracker:
    """Follows ``plan.high_pddl`` of a train/valid trajectory; see the module doc."""

    def __init__(
        self,
        traj: Mapping,
        env: Any,
        reward_type: str = "dense",
        reward_config: RewardConfig = RewardConfig(),
        reachable: Optional[Sequence[Mapping]] = None,
    ):
        plan = traj.get("plan")
        if not plan or "high_pddl" not in plan:
            raise ValueError(
                f"trajectory {traj.get('task_id', '?')!r} has no plan.high_pddl (test split?)"
            )
        self.env = env
        self.high: List[Mapping] = list(plan["high_pddl"])
        self.num_subgoals = num_subgoals(self.high)
        self.expert_len = len(plan.get("low_actions") or [])
        self.reward_type = reward_type
        self.cfg = reward_config
        self.finished = -1  # index of the last completed subgoal
        self.steps = 0
        self.total_reward = 0.0
        self._cool_stage = 0
        self._prev_dist: Optional[float] = None
        objects = env.last_event.metadata["objects"]
        self._ids: Dict[str, str] = {}
        for h in self.high:
            pa = h.get("planner_action", {})
            for k in ("objectId", "receptacleObjectId", "cleanObjectId"):
                if pa.get(k):
                    self._ids[pa[k]] = resolve_object_id(pa[k], objects)
        self.grid: Optional[NavGrid] = None
        if any(h.get("planner_action", {}).get("action") == "GotoLocation" for h in self.high):
            if reachable is None:
                reachable = self._query_reachable()
            self.grid = NavGrid(reachable)

    def _query_reachable(self) -> List[Mapping]:
        ev = query(self.env.controller, "GetReachablePositions")  # keeps the agent's observation
        return list(ev.metadata["actionReturn"] or [])

    # -- state ------------------------------------------------------------------------
    @property
    def subgoal_idx(self) -> int:
        """Index of the subgoal being worked on (== num_subgoals when all are done)."""
        return self.finished + 1

    def get_subgoal_idx(self) -> int:
        """Number of completed subgoals - 1 (starts at -1)."""
        return self.finished

    @property
    def done(self) -> bool:
        return self.finished >= self.num_subgoals - 1

    def current(self) -> Optional[Mapping]:
        i = self.subgoal_idx
        return self.high[i]["planner_action"] if i < self.num_subgoals else None

    def rid(self, planner_id: Optional[str]) -> Optional[str]:
        if not planner_id:
            return planner_id
        return self._ids.get(planner_id, planner_id)

    def goto_distance(self, location: str) -> float:
        if self.grid is None:
            return math.inf
        return self.grid.distance(
            agent_pose(self.env.last_event.metadata), parse_location(location)
        )

    # -- update -----------------------------------------------------------------------
    def update(self, action_name: str, success: bool) -> Tuple[float, bool]:
        """Advance after one attempted action; returns (reward, all subgoals done)."""
        self.steps += 1
        r = 0.0
        if self.steps > self.expert_len:
            r += self.cfg.step_penalty
        if "success" in self.reward_type and success:
            r += self.cfg.success
        if "failure" in self.reward_type and not success:
            r += self.cfg.failure
        if not self.done:
            sg_r, sg_done = self._check(DISCRETE_TO_API.get(action_name, action_name))
            if "dense" in self.reward_type:
                r += sg_r
            if sg_done:
                self.finished += 1
                self._cool_stage = 0
                self._prev_dist = None
                if self.done:
                    r += self.cfg.goal
        self.total_reward += r
        return r, self.done

    def _objects(self) -> Dict[str, Mapping]:
        return {o["objectId"]: o for o in self.env.last_event.metadata["objects"]}

    def _held(self) -> Optional[str]:
        inv = self.env.last_event.metadata.get("inventoryObjects") or []
        return inv[0]["objectId"] if inv else None

    def _treated_target(self) -> Optional[str]:
        """Heat/Cool target: the object of the PutObject two subgoals later (else the next Put)."""
        i = self.subgoal_idx
        cands = ([i + 2] if i + 2 < len(self.high) else []) + list(range(i + 1, len(self.high)))
        for j in cands:
            pa = self.high[j].get("planner_action", {})
            if pa.get("action") == "PutObject" and pa.get("objectId"):
                return self.rid(pa["objectId"])
        return None

    def _check(self, api_action: str) -> Tuple[float, bool]:
        pa = self.current()
        if pa is None:
            return 0.0, False
        kind = pa.get("action")
        if kind == END_PLANNER_ACTION:
            return 0.0, True
        valid = VALID_ACTIONS.get(kind)
        if valid is not None and api_action not in valid:
            return self.cfg.invalid_action, False
        objs = self._objects()
        oid = self.rid(pa.get("objectId"))
        done_r = self.cfg.subgoal_done

        def any_match(target: Optional[str], ids: Iterable[str]) -> bool:
            return any(same_object(x, target) for x in ids)

        if kind == "GotoLocation":
            d = self.goto_distance(pa["location"])
            r = 0.0
            if self._prev_dist is not None and math.isfinite(d) and math.isfinite(self._prev_dist):
                r = self.cfg.goto_scale * (self._prev_dist - d)
            self._prev_dist = d
            if d < self.cfg.min_reach_distance:
                return r + self.cfg.goto_done, True
            return r, False
        if kind == "PickupObject":
            return (done_r, True) if same_object(self._held(), oid) else (0.0, False)
        if kind == "PutObject":
            rec = objs.get(self.rid(pa.get("receptacleObjectId")) or "")
            ok = rec is not None and any_match(oid, rec.get("receptacleObjectIds") or [])
            return (done_r, True) if ok else (0.0, False)
        if kind in ("OpenObject", "CloseObject"):
            o = objs.get(oid or "")
            ok = o is not None and bool(o.get("isOpen")) == (kind == "OpenObject")
            return (done_r, True) if ok else (0.0, False)
        if kind == "ToggleObject":
            o = objs.get(oid or "")
            return (done_r, True) if o is not None and o.get("isToggled") else (0.0, False)
        if kind == "SliceObject":
            o = objs.get(oid or "")
            ok = (o is not None and bool(o.get("isSliced"))) or any(
                _is_slice(x) and _base(x) == oid for x in objs
            )
            return (done_r, True) if ok else (0.0, False)
        if kind == "CleanObject":
            target = self.rid(pa.get("cleanObjectId"))
            return (done_r, True) if any_match(target, self.env.cleaned_objects) else (0.0, False)
        if kind == "HeatObject":
            target = self._treated_target() or self._held()
            return (done_r, True) if any_match(target, self.env.heated_objects) else (0.0, False)
        if kind == "CoolObject":
            target = self._treated_target() or self._held()
            if self._cool_stage == 0:
                if any_match(target, self.env.cooled_objects):
                    self._cool_stage = 1
                return 0.0, False
            if self._cool_stage == 1:
                o = objs.get(oid or "")
                if o is not None and o.get("isOpen"):
                    self._cool_stage = 2
                return 0.0, False
            return (done_r, True) if same_object(self._held(), target) else (0.0, False)
        return 0.0, False  # unknown subgoal type: never completes
