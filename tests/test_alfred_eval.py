"""ALFRED evaluation: metrics, subgoal tracking, agents/registry/checkpoints, harness semantics
(on a tiny scripted env) and the CLI end to end on the real fixtures (skipped without ../shared)."""

from __future__ import annotations

import functools
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from alfred_task.evaluation import agents as A
from alfred_task.evaluation import cli as E
from alfred_task.evaluation.metrics import (
    aggregate,
    aggregate_by_type,
    aggregate_subgoals,
    episode_record,
    subgoal_record,
    EPISODE_KEYS,
)
from alfred_task.evaluation.subgoals import (
    NavGrid,
    SubgoalTracker,
    num_subgoals,
    resolve_object_id,
    same_object,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
ALFRED = SHARED / "data" / "alfred"
DATA = ALFRED / "json_2.1.0"
SPLITS = ALFRED / "splits_mini.json"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir() or not DATA.is_dir(), reason="../shared fixtures absent"
)


def _rec(success, completed, total, expert, path, type_="t"):
    return episode_record("trial", type_, 0, "goal", success, completed, total, expert, path)


# ---------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------
def test_episode_record_formulas_and_keys():
    r = _rec(True, 2, 2, 10, 20)
    assert set(EPISODE_KEYS) <= set(r)
    assert r["goal_condition_success"] == 1.0
    assert r["success_spl"] == pytest.approx(0.5)  # min(1, 10/20)
    assert r["path_len_weighted_success_spl"] == pytest.approx(5.0)
    assert r["path_len_weight"] == 10
    r = _rec(False, 1, 4, 10, 5)  # shorter than the expert: factor capped at 1
    assert r["success_spl"] == 0.0
    assert r["goal_condition_spl"] == pytest.approx(0.25)
    assert r["path_len_weighted_goal_condition_spl"] == pytest.approx(2.5)


def test_aggregate_gc_is_micro_average_and_plw_weights_by_expert_length():
    recs = [
        _rec(True, 1, 1, 10, 10, "a"),
        _rec(False, 0, 3, 30, 60, "b"),
        _rec(False, 2, 4, 20, 40, "b"),
    ]
    m = aggregate(recs)
    assert m["sr"] == pytest.approx(1 / 3)
    assert m["gc"] == pytest.approx(3 / 8)  # micro: (1+0+2)/(1+3+4)
    assert m["gc"] != pytest.approx(np.mean([1, 0, 0.5]))  # mean of ratios would be 0.5
    assert m["plw_sr"] == pytest.approx(10 / 60)  # only the first succeeds: 1*1*10 / (10+30+20)
    assert m["plw_gc"] == pytest.approx((1 * 10 + 0 + 0.5 * 0.5 * 20) / 60)
    assert m["success"] == {"num_successes": 1, "num_evals": 3, "success_rate": m["sr"]}
    assert m["goal_condition_success"]["completed_goal_conditions"] == 3
    by = aggregate_by_type(recs)
    assert list(by) == ["all", "a", "b"] and by["b"]["num_evals"] == 2 and by["a"]["sr"] == 1.0
    assert aggregate([])["sr"] == 0.0


def test_stop_at_t0_counts_with_full_expert_weight():
    # ALFRED's formula over all N episodes, hand-computed; B stops at t = 0 (L = 0):
    #   A: success, 2/2 conditions, L* = 10, L = 20 -> factor 1/2: PLW-SR 5,  PLW-GC 5
    #   B: failure, 1/2 conditions, L* = 10, L = 0  -> factor 1:   PLW-SR 0,  PLW-GC 5
    #   C: success, 3/3 conditions, L* = 20, L = 20 -> factor 1:   PLW-SR 20, PLW-GC 20
    #   PLW-SR = 25/40 = 0.625, PLW-GC = 30/40 = 0.75 (dropping B's weight gave 25/30 for both)
    a, b, c = _rec(True, 2, 2, 10, 20), _rec(False, 1, 2, 10, 0), _rec(True, 3, 3, 20, 20)
    assert b["path_len_weight"] == 10 and b["success_spl"] == 0 and b["goal_condition_spl"] == 0.5
    m = aggregate([a, b, c])
    assert (
        m["num_evals"] == 3 and m["sr"] == pytest.approx(2 / 3) and m["gc"] == pytest.approx(6 / 7)
    )
    assert m["plw_sr"] == pytest.approx(0.625)
    assert m["plw_gc"] == pytest.approx(0.75)
    z = _rec(False, 0, 1, 0, 0)  # L* = 0: weight 0, nothing on either side
    assert z["path_len_weight"] == 0 and aggregate([a, b, c, z])["plw_sr"] == pytest.approx(0.625)
    with pytest.raises(ValueError):
        _rec(True, 3, 2, 1, 1)


def test_subgoal_metrics():
    a = subgoal_record("x", "t", 0, 1, "PickupObject", True, 1, 1)  # pl = 2
    b = subgoal_record("x", "t", 0, 0, "GotoLocation", True, 6, 5)  # pl = 6
    c = subgoal_record("x", "t", 0, 2, "GotoLocation", False, 4, 9)
    assert a["subgoal_spl"] == 0.5 and b["subgoal_spl"] == 1.0
    res = aggregate_subgoals([a, b, c])
    assert res["GotoLocation"]["sr"] == 0.5 and res["GotoLocation"]["evals"] == 2
    assert res["GotoLocation"]["sr_plw"] == pytest.approx(6 / 10)
    assert res["all"]["successes"] == 2


# ---------------------------------------------------------------------------
# a tiny scripted environment: a 1 x 8 corridor along +z, an apple on a table, a counter
# ---------------------------------------------------------------------------
APPLE, TABLE, COUNTER = (
    "Apple|+00.00|+00.90|+01.00",
    "DiningTable|+00.00|+00.00|+01.00",
    "CounterTop|+00.00|+00.90|+00.50",
)
FRIDGE, EGG = "Fridge|+01.00|+00.00|+01.00", "Egg|+01.00|+01.00|+01.00"


class _Ev:
    def __init__(self, metadata, masks=None):
        self.metadata = metadata
        self.instance_masks = masks or {}


class _Ctrl:
    def __init__(self, env):
        self.env, self.last_event = env, None

    def step(self, action=None, **kw):
        assert action == "GetReachablePositions"
        self.last_event = _Ev(
            {"actionReturn": [{"x": 0.0, "y": 0.9, "z": 0.25 * k} for k in range(8)]}
        )
        return self.last_event


class StubEnv:
    """Corridor world with AlfredEnv's evaluation interface (init_episode, va_interact, last_event, sets)."""

    def __init__(self):
        self.controller = _Ctrl(self)

    @property
    def last_event(self):
        return self.controller.last_event

    def init_episode(self, traj):
        self.z, self.rot, self.h, self.held = 0, 0, 30.0, None
        self.contents = {TABLE: [APPLE], COUNTER: []}
        self.cleaned_objects, self.heated_objects, self.cooled_objects = set(), set(), set()
        self._emit(True, "")

    def _emit(self, ok, err):
        objs = [
            {
                "objectId": APPLE,
                "objectType": "Apple",
                "pickupable": True,
                "receptacle": False,
                "isPickedUp": self.held == APPLE,
                "position": {"x": 0.0, "y": 0.9, "z": 1.0},
            }
        ]
        for oid, t in ((TABLE, "DiningTable"), (COUNTER, "CounterTop")):
            objs.append(
                {
                    "objectId": oid,
                    "objectType": t,
                    "pickupable": False,
                    "receptacle": True,
                    "receptacleObjectIds": list(self.contents[oid]),
                    "position": {"x": 0.0, "y": 0.9, "z": 1.0},
                }
            )
        md = {
            "agent": {
                "position": {"x": 0.0, "y": 0.9, "z": 0.25 * self.z},
                "rotation": {"x": 0, "y": 90.0 * self.rot, "z": 0},
                "cameraHorizon": self.h,
            },
            "objects": objs,
            "inventoryObjects": [{"objectId": self.held, "objectType": "Apple"}]
            if self.held
            else [],
            "screenHeight": 300,
            "screenWidth": 300,
            "lastActionSuccess": ok,
            "errorMessage": err,
        }
        mask = np.zeros((300, 300), bool)
        mask[100:120, 100:120] = True
        self.controller.last_event = _Ev(md, {APPLE: mask, COUNTER: ~mask})
        return self.controller.last_event

    def va_interact(self, action, mask=None):
        ok, err, api = True, "", {}
        if action == "MoveAhead_25":
            dz = {0: 1, 2: -1}.get(self.rot)
            ok = dz is not None and 0 <= self.z + dz < 8
            self.z += dz if ok else 0
            api = {"action": "MoveAhead", "forceAction": True}
        elif action in ("RotateLeft_90", "RotateRight_90"):
            self.rot = (self.rot + (-1 if "Left" in action else 1)) % 4
            api = {"action": action.split("_")[0], "forceAction": True}
        elif action in ("LookUp_15", "LookDown_15"):
            self.h += -15 if "Up" in action else 15
            api = {"action": action.split("_")[0], "forceAction": True}
        elif action == "PickupObject" and mask is not None and mask[100:120, 100:120].any():
            ok = self.held is None and self.z == 3
            if ok:
                self.held = APPLE
                self.contents[TABLE].remove(APPLE)
            api = {"action": "PickupObject", "objectId": APPLE}
        elif action == "PutObject" and mask is not None and mask.any() and self.held:
            self.contents[COUNTER].append(self.held)
            api = {"action": "PutObject", "objectId": self.held, "receptacleObjectId": COUNTER}
            self.held = None
        else:
            ok, err = False, f"Invalid action: {action}" if "<<" in action else "cannot do that"
        return ok, self._emit(ok, err), "", err, api


def _rle(mask):
    from alfred_task.data.masks import compress_mask

    return compress_mask(mask)


def stub_traj(with_end=True):
    m_apple = np.zeros((300, 300), bool)
    m_apple[100:120, 100:120] = True
    m_counter = ~m_apple
    nav = lambda a, h: {
        "high_idx": h,
        "api_action": {"action": a.split("_")[0]},
        "discrete_action": {"action": a, "args": {}},
    }
    inter = lambda a, h, m: {
        "high_idx": h,
        "api_action": {"action": a},
        "discrete_action": {"action": a, "args": {"mask": _rle(m)}},
    }
    high = [
        {
            "high_idx": 0,
            "discrete_action": {"action": "GotoLocation", "args": ["diningtable"]},
            "planner_action": {"action": "GotoLocation", "location": "loc|0|5|0|30"},
        },
        {
            "high_idx": 1,
            "discrete_action": {"action": "PickupObject", "args": ["apple"]},
            # a THOR-2.1.0 style id that is not in the scene: resolved to the nearest Apple
            "planner_action": {"action": "PickupObject", "objectId": "Apple|+00.02|+00.91|+01.03"},
        },
        {
            "high_idx": 2,
            "discrete_action": {"action": "GotoLocation", "args": ["countertop"]},
            "planner_action": {"action": "GotoLocation", "location": "loc|0|3|2|30"},
        },
        {
            "high_idx": 3,
            "discrete_action": {"action": "PutObject", "args": ["apple", "countertop"]},
            "planner_action": {
                "action": "PutObject",
                "objectId": "Apple|+00.02|+00.91|+01.03",
                "receptacleObjectId": COUNTER,
            },
        },
    ]
    if with_end:
        high.append(
            {
                "high_idx": 4,
                "discrete_action": {"action": "NoOp", "args": []},
                "planner_action": {"action": "End", "value": 1},
            }
        )
    lows = (
        [nav("MoveAhead_25", 0)] * 3
        + [inter("PickupObject", 1, m_apple)]
        + [nav("RotateLeft_90", 2), nav("RotateLeft_90", 2), inter("PutObject", 3, m_counter)]
    )
    return {
        "task_id": "trial_stub",
        "task_type": "pick_and_place_simple",
        "pddl_params": {
            "object_target": "Apple",
            "object_sliced": False,
            "parent_target": "CounterTop",
            "toggle_target": "",
            "mrecep_target": "",
        },
        "scene": {"floor_plan": "FloorPlan0"},
        "plan": {"high_pddl": high, "low_actions": lows},
        "turk_annotations": {
            "anns": [{"task_desc": "put the apple on the counter", "high_descs": []}]
        },
    }


class Scripted(A.Agent):
    """Plays a fixed list of (action, mask-or-None); exposes load_state_dict for checkpoints."""

    def __init__(self, actions=(), repeat_last=False):
        self.actions, self.repeat_last, self.i = list(actions), repeat_last, 0

    def load_state_dict(self, state):
        self.actions = list(state["actions"])

    def reset(self, traj, repeat_idx, env):
        self.i = 0

    def act(self, env):
        if self.i >= len(self.actions):
            if self.repeat_last and self.actions:
                return self.actions[-1], (
                    np.zeros((300, 300), bool) if self.actions[-1] == "PickupObject" else None
                )
            return "<<stop>>", None
        a = self.actions[self.i]
        self.i += 1
        return a, (np.zeros((300, 300), bool) if a == "PickupObject" else None)


# ---------------------------------------------------------------------------
# subgoal tracking
# ---------------------------------------------------------------------------
def test_helpers_end_rule_resolution_and_grid():
    traj = stub_traj()
    assert num_subgoals(traj["plan"]["high_pddl"]) == 4
    assert (
        num_subgoals(stub_traj(with_end=False)["plan"]["high_pddl"]) == 4
    )  # the last real subgoal is kept
    objs = [
        {
            "objectId": "Apple|+09.00|+00.90|+01.00",
            "objectType": "Apple",
            "position": {"x": 9, "y": 0.9, "z": 1},
        },
        {"objectId": "Apple_b", "objectType": "Apple", "position": {"x": 0.0, "y": 0.9, "z": 1.0}},
        {
            "objectId": "Sink|+01.00|+00.00|+00.00|SinkBasin",
            "objectType": "SinkBasin",
            "position": {"x": 1.1, "y": 0, "z": 0},
        },
    ]
    assert resolve_object_id("Apple|+00.02|+00.91|+01.03", objs) == "Apple_b"
    assert (
        resolve_object_id("Apple|+00.02|+00.91|+01.03|AppleSliced_2", objs)
        == "Apple_b|AppleSliced_2"
    )
    assert (
        resolve_object_id("Sink|+01.05|+00.00|+00.00|SinkBasin", objs)
        == "Sink|+01.00|+00.00|+00.00|SinkBasin"
    )
    assert same_object("P|1|2|3|PotatoSliced_1", "P|1|2|3|PotatoSliced_4") and not same_object(
        "P|1|2|3", "P|1|2|3|PotatoSliced_4"
    )
    g = NavGrid([{"x": 0.0, "z": 0.25 * k} for k in range(8)])
    assert g.distance((0, 0, 0, 30), (0, 5, 0, 30)) == 5
    assert g.distance((0, 0, 1, 30), (0, 5, 0, 60)) == 1 + 5 + 2  # rotate, 5 moves, 2 looks
    assert g.distance((0, 3, 0, 30), (0, 3, 2, 30)) == 2


def test_tracker_follows_stub_replay_with_invalid_action_rule():
    env, traj = StubEnv(), stub_traj()
    env.init_episode(traj)
    tr = SubgoalTracker(traj, env)
    assert tr.get_subgoal_idx() == -1 and env.last_event.metadata.get(
        "objects"
    )  # init event restored
    seen = []
    for action, mask, _ in A.expert_steps(traj):
        ok = env.va_interact(action, mask)[0]
        tr.update(action, ok)
        seen.append(tr.get_subgoal_idx())
    # Goto done when distance 5 -> 2 (< 3) after the 3rd move; Pickup; Goto(rot) after the 1st rotation;
    # the 2nd rotation is invalid for PutObject; Put completes the last subgoal.
    assert seen == [-1, -1, 0, 1, 2, 2, 3] and tr.done

    env.init_episode(traj)
    tr = SubgoalTracker(traj, env)
    for a in ["MoveAhead_25"] * 3:
        tr.update(a, env.va_interact(a)[0])
    env.held = APPLE  # the apple is in hand, but a rotation is not a valid action for PickupObject
    env._emit(True, "")
    r, _ = tr.update("RotateLeft_90", True)
    assert tr.get_subgoal_idx() == 0 and r < 0
    tr.update("PickupObject", False)  # a valid (even failed) action lets the check see the state
    assert tr.get_subgoal_idx() == 1


class _MetaEnv:
    def __init__(self, objects):
        self.cleaned_objects, self.heated_objects, self.cooled_objects = set(), set(), set()
        self.set(objects, [])

    def set(self, objects, inventory):
        self.last_event = _Ev(
            {"objects": objects, "inventoryObjects": [{"objectId": i} for i in inventory]}
        )


def test_cool_subgoal_is_staged():
    traj = {
        "task_id": "c",
        "plan": {
            "low_actions": [],
            "high_pddl": [
                {
                    "discrete_action": {"action": "CoolObject"},
                    "planner_action": {"action": "CoolObject", "objectId": FRIDGE},
                },
                {
                    "discrete_action": {"action": "GotoLocation"},
                    "planner_action": {"action": "GotoLocation", "location": "loc|0|0|0|30"},
                },
                {
                    "discrete_action": {"action": "PutObject"},
                    "planner_action": {
                        "action": "PutObject",
                        "objectId": EGG,
                        "receptacleObjectId": COUNTER,
                    },
                },
            ],
        },
    }
    fridge = lambda is_open: {
        "objectId": FRIDGE,
        "objectType": "Fridge",
        "isOpen": is_open,
        "position": {},
    }
    env = _MetaEnv([fridge(False)])
    tr = SubgoalTracker(traj, env, reachable=[{"x": 0.0, "z": 0.0}])
    env.cooled_objects = {EGG}
    tr.update("MoveAhead_25", True)  # invalid for CoolObject: no stage change
    assert tr._cool_stage == 0
    tr.update("CloseObject", True)
    assert tr._cool_stage == 1 and tr.get_subgoal_idx() == -1
    env.set([fridge(True)], [])
    tr.update("OpenObject", True)
    assert tr._cool_stage == 2 and tr.get_subgoal_idx() == -1
    env.set([fridge(True)], [EGG])
    tr.update("PickupObject", True)
    assert tr.get_subgoal_idx() == 0


# ---------------------------------------------------------------------------
# harness semantics (stub env)
# ---------------------------------------------------------------------------
def test_replay_agent_on_stub_succeeds_with_full_credit():
    rec = E.run_task_episode(StubEnv(), A.ReplayAgent(), stub_traj(), 0)
    assert rec["success"] and rec["completed_goal_conditions"] == rec["total_goal_conditions"] == 1
    assert rec["path_len"] == rec["expert_path_len"] == 7 and rec["success_spl"] == 1.0
    assert rec["end_reason"] == "stop" and rec["num_fails"] == 0
    assert rec["subgoals_completed"] == rec["num_subgoals"] == 4 and rec["reward"] > 5
    assert rec["goal_instr"] == "put the apple on the counter"
    rec = E.run_task_episode(StubEnv(), A.ReplayAgent(), stub_traj(with_end=False), 0)
    assert rec["subgoals_completed"] == rec["num_subgoals"] == 4  # missing End handled


def test_step_and_fail_accounting():
    env, traj = StubEnv(), stub_traj()
    # failed actions count as steps; the action that reaches max_fails ends the episode uncounted
    rec = E.run_task_episode(
        env, Scripted(["PickupObject"], repeat_last=True), traj, 0, max_fails=3, record_actions=True
    )
    assert (rec["num_fails"], rec["path_len"], rec["end_reason"]) == (3, 2, "max_fails")
    assert rec["fails_by_action"] == {"PickupObject": 3}
    assert not rec["success"] and rec["path_len_weight"] == 7
    # <<stop>> is not a step; <<seg>> is sent to the env and fails as an invalid action
    rec = E.run_task_episode(env, Scripted(["RotateLeft_90", "<<seg>>", "<<stop>>"]), traj, 0)
    assert (rec["path_len"], rec["num_fails"], rec["end_reason"]) == (2, 1, "stop")
    assert rec["fails_by_action"] == {"<<seg>>": 1}
    rec = E.run_task_episode(
        env, Scripted(["RotateLeft_90"], repeat_last=True), traj, 0, max_steps=5
    )
    assert (rec["path_len"], rec["end_reason"]) == (5, "max_steps")
    rec = E.run_task_episode(env, Scripted([]), traj, 0)  # stop at t = 0: kept, weight L*
    assert rec["path_len"] == 0 and rec["path_len_weight"] == 7 and rec["end_reason"] == "stop"

    class BadMask(Scripted):
        def act(self, env):
            return "PickupObject", np.ones((10, 10), bool)

    with pytest.raises(ValueError, match="mask of shape"):
        E.run_task_episode(env, BadMask(), traj, 0)


def test_subgoal_episode_replays_prefix_then_agent():
    env, traj = StubEnv(), stub_traj()
    assert E.subgoal_indices(traj, ["PutObject", "GotoLocation"]) == [0, 2, 3]
    rec = E.run_subgoal_episode(env, A.ReplayAgent(), traj, 0, 3)
    assert rec["success"] and rec["subgoal_type"] == "PutObject" and rec["path_len"] == 2
    assert rec["subgoal_spl"] == 0.5 and rec["prefix_subgoal_idx"] == 2 and not rec["init_failed"]
    rec = E.run_subgoal_episode(env, A.ReplayAgent(), traj, 0, 0)
    assert rec["success"] and rec["path_len"] == 4 and rec["expert_path_len"] == 3
    rec = E.run_subgoal_episode(env, Scripted(["RotateRight_90", "<<stop>>"]), traj, 0, 1)
    assert not rec["success"] and rec["end_reason"] == "stop"


class NoSnapshot(A.RandomAgent):
    supports_snapshot = False


def test_one_pass_subgoal_evaluation_equals_one_episode_per_subgoal():
    """run_subgoal_episodes teacher-forces the prefix once and restores agent snapshots; its
    records must equal ALFRED's reset-and-replay per subgoal (random agents consume their RNG)."""
    env, traj = StubEnv(), stub_traj()
    idxs = E.subgoal_indices(traj, ["GotoLocation", "PickupObject", "PutObject"])
    assert idxs == [0, 1, 2, 3]
    for make in (
        lambda: A.RandomAgent(seed=3),
        lambda: A.RandomAgent(seed=4),
        A.ReplayAgent,
        lambda: NoSnapshot(seed=3),
    ):
        one = [E.run_subgoal_episode(env, make(), traj, 0, i, max_steps=6) for i in idxs]
        assert E.run_subgoal_episodes(env, make(), traj, 0, idxs, max_steps=6) == one
        assert E.run_subgoal_episodes(env, make(), traj, 0, idxs[::-1], max_steps=6) == one[::-1]
    assert [r["success"] for r in E.run_subgoal_episodes(env, A.ReplayAgent(), traj, 0, idxs)] == [
        True
    ] * 4
    # a failing expert prefix step: that subgoal and every later one are init failures
    bad = stub_traj()
    bad["plan"]["low_actions"][4] = dict(
        bad["plan"]["low_actions"][4], discrete_action={"action": "LookUp_15<<bad>>", "args": {}}
    )
    one = [E.run_subgoal_episode(env, A.RandomAgent(seed=1), bad, 0, i, max_steps=5) for i in idxs]
    assert [r["init_failed"] for r in one] == [False, False, False, True]
    assert E.run_subgoal_episodes(env, A.RandomAgent(seed=1), bad, 0, idxs, max_steps=5) == one


# ---------------------------------------------------------------------------
# agents, registry, checkpoints
# ---------------------------------------------------------------------------
def _random_actions(agent, env, traj, n=40):
    agent.reset(traj, 0, env)
    out = []
    for _ in range(n):
        a, m = agent.act(env)
        out.append((a, None if m is None else m.tobytes()))
    return out


def test_random_agent_is_deterministic_and_leaves_global_rng_alone():
    env, traj = StubEnv(), stub_traj()
    env.init_episode(traj)
    state = np.random.get_state()[1].copy()
    a = _random_actions(A.RandomAgent(seed=7), env, traj)
    assert a == _random_actions(A.RandomAgent(seed=7), env, traj)
    ag = A.RandomAgent(seed=7)
    assert _random_actions(ag, env, traj) == _random_actions(
        ag, env, traj
    )  # reset re-seeds per episode
    assert a != _random_actions(A.RandomAgent(seed=8), env, traj)
    assert {x for x, _ in a} <= set(A.LOW_ACTIONS) and any(m is not None for _, m in a)
    assert all(m is None for x, m in a if x.endswith(("_25", "_90", "_15")))
    assert (np.random.get_state()[1] == state).all()


def test_failure_reason_in_task_records(monkeypatch):
    env, traj = StubEnv(), stub_traj()
    rec = E.run_task_episode(env, A.ReplayAgent(), traj, 0)
    assert rec["success"] and rec["failure"] is None
    rec = E.run_task_episode(env, Scripted(["RotateLeft_90"]), traj, 0)
    assert rec["failure"] == "stopped without success"
    rec = E.run_task_episode(
        env, Scripted(["PickupObject"], repeat_last=True), traj, 0, max_fails=3
    )
    assert rec["failure"] == "max fails reached (3 failed actions)"
    rec = E.run_task_episode(
        env, Scripted(["RotateLeft_90"], repeat_last=True), traj, 0, max_steps=5
    )
    assert rec["failure"] == "step budget reached (5 steps)"

    from alfred_task.planning import expert as X

    class NoPlan:
        def __init__(self, *args, **kwargs):
            raise X.ExpertError("no plan reaches the goal from here")

    monkeypatch.setattr(X, "AlfredExpert", NoPlan)
    agent = X.ExpertAgent()
    rec = E.run_task_episode(env, agent, traj, 0)
    assert rec["failure"] == "expert error: ExpertError: no plan reaches the goal from here"
    assert rec["path_len"] == 0 and rec["path_len_weight"] == 7 and agent.failures == 1
    res = json.loads(json.dumps(E.task_results([rec])))  # what task_results_*.json holds
    assert res["failures"][0]["failure"] == rec["failure"]
    assert res["results"]["all"]["plw_sr"] == 0.0 and res["results"]["all"]["num_evals"] == 1
    agent.reset(traj, 0, env)  # the error belongs to its episode only
    assert agent.episode_error() is None


def test_registry():
    assert {"random", "replay", "checkpoint", "expert"} <= set(A.registered_agents())
    from alfred_task.planning.expert import ExpertAgent

    assert isinstance(A.make_agent("expert"), ExpertAgent)
    with pytest.raises(A.UnknownAgentError, match="not registered"):
        A.make_agent("no_such_agent")
    A.register_agent("scripted_test", Scripted)
    try:
        assert isinstance(A.make_agent("scripted_test", actions=["RotateLeft_90"]), Scripted)
        with pytest.raises(ValueError, match="already registered"):
            A.register_agent("scripted_test", A.RandomAgent)
        A.register_agent("lazy_test", "alfred_task.evaluation.agents:ReplayAgent")
        assert isinstance(A.agent_factory("lazy_test")(), A.ReplayAgent)
    finally:
        A.unregister_agent("scripted_test")
        A.unregister_agent("lazy_test")
    f = pickle.loads(pickle.dumps(A.agent_factory("random", seed=3)))
    assert isinstance(f(), A.RandomAgent) and f().seed == 3


def test_checkpoint_agent_and_errors(tmp_path):
    torch = pytest.importorskip("torch")
    ref = f"{__name__}:Scripted"
    good = tmp_path / "good.pt"
    torch.save(
        {
            "agent": ref,
            "kwargs": {"repeat_last": False},
            "state_dict": {"actions": ["LookDown_15"]},
        },
        good,
    )
    ag = A.make_agent("checkpoint", path=good)
    ag.reset(stub_traj(), 0, None)
    assert ag.act(None) == ("LookDown_15", None) and ag.act(None)[0] == "<<stop>>"

    def err(obj, name):
        p = tmp_path / name
        if obj is not None:
            torch.save(obj, p)
        with pytest.raises(A.CheckpointError) as ei:
            A.CheckpointAgent(p)
        return str(ei.value)

    assert "missing.pt" in err(None, "missing.pt") and "not found" in err(None, "missing.pt")
    m = err({"kwargs": {}, "state_dict": {}}, "noagent.pt")
    assert "noagent.pt" in m and "agent: required field is missing" in m
    assert "state_dict: required field is missing" in err({"agent": ref}, "nostate.pt")
    assert "not a subclass" in err(
        {"agent": "collections:OrderedDict", "state_dict": {}}, "notagent.pt"
    )
    assert "has no load_state_dict" in err(
        {"agent": "alfred_task.evaluation.agents:ReplayAgent", "state_dict": {}}, "noload.pt"
    )
    assert "cannot import module" in err(
        {"agent": "no_such_pkg.mod:X", "state_dict": {}}, "noimport.pt"
    )
    assert "kwargs" in err({"agent": ref, "kwargs": {"bogus": 1}, "state_dict": {}}, "badkw.pt")


# ---------------------------------------------------------------------------
# real fixtures
# ---------------------------------------------------------------------------
def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "alfred_task.evaluation", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_shared
def test_cli_random_valid_seen(tmp_path):
    out = tmp_path / "out"
    p = _cli(
        "--agent",
        "random",
        "--data",
        str(DATA),
        "--splits",
        str(SPLITS),
        "--split",
        "valid_seen",
        "--max-steps",
        "20",
        "--out",
        str(out),
        "--seed",
        "1",
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    files = list(out.glob("task_results_valid_seen_*.json"))
    assert len(files) == 1 and not list(out.glob(".*tmp"))
    res = json.loads(files[0].read_text())
    assert set(res) == {"successes", "failures", "results", "agent"}
    assert res["agent"] == {"agent": "random", "checkpoint": None, "visual_encoder": None}
    recs = res["successes"] + res["failures"]
    assert len(recs) == 3 and all(set(EPISODE_KEYS) <= set(r) for r in recs)
    assert all(r["path_len"] <= 20 and r["type"] == "pick_and_place_simple" for r in recs)
    assert set(res["results"]) == {"all", "pick_and_place_simple"}
    assert res["results"]["all"]["success"]["num_evals"] == 3
    assert all(r["failure"] is None for r in res["successes"])
    assert all(isinstance(r["failure"], str) and r["failure"] for r in res["failures"])
    assert "PLW-SR" in p.stdout and "pick_and_place_simple" in p.stdout


@needs_shared
def test_cli_leaderboard_dump_tests_seen(tmp_path):
    assert (
        E.main(
            [
                "--agent",
                "random",
                "--data",
                str(DATA),
                "--splits",
                str(SPLITS),
                "--split",
                "tests_seen",
                "--max-steps",
                "8",
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
        == 0
    )
    assert not list(tmp_path.glob("task_results_*"))
    (f,) = tmp_path.glob("tests_actseqs_dump_*.json")
    dump = json.loads(f.read_text())
    assert set(dump) == {"tests_seen", "tests_unseen"} and dump["tests_unseen"] == []
    assert len(dump["tests_seen"]) == 3
    for item in dump["tests_seen"]:
        ((task_id, actions),) = item.items()
        assert task_id == "trial_T20190906_212015_252242"
        assert len(actions) <= 8 and all(isinstance(a, dict) and "action" in a for a in actions)


@pytest.fixture(scope="module")
def real_env():
    if not DATA.is_dir():
        pytest.skip("../shared fixtures absent")
    from alfred_task.env.environment import AlfredEnv

    env = AlfredEnv(width=300, height=300)
    yield env
    env.stop()


@needs_shared
def test_replay_agent_on_fixture_produces_records(real_env):
    entries = E.resolve_entries(DATA, SPLITS, ["valid_seen", "train"], limit=1)
    recs = E.evaluate_tasks(A.ReplayAgent, entries, DATA, env=real_env)
    assert [(r["split"], r["repeat_idx"]) for r in recs] == [("valid_seen", 0), ("train", 0)]
    for r in recs:  # thor_lite replays the real fixtures only partly: no success asserted
        assert set(EPISODE_KEYS) <= set(r) and r["scored"]
        assert r["expert_path_len"] > 0 and r["path_len"] <= r["expert_path_len"]
        if r["end_reason"] == "stop":
            assert r["path_len"] == r["expert_path_len"]
    sg = E.evaluate_subgoals(
        A.ReplayAgent, entries[:1], DATA, "GotoLocation,PickupObject", env=real_env, max_steps=30
    )
    assert [r["subgoal_type"] for r in sg] == ["GotoLocation", "PickupObject", "GotoLocation"]
    assert all(r["path_len"] >= 1 for r in sg)


@needs_shared
def test_cli_subgoals_writes_results(tmp_path):
    assert (
        E.main(
            [
                "--agent",
                "replay",
                "--data",
                str(DATA),
                "--splits",
                str(SPLITS),
                "--split",
                "valid_seen",
                "--subgoals",
                "PutObject",
                "--limit",
                "1",
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
        == 0
    )
    (f,) = tmp_path.glob("subgoal_results_*.json")
    res = json.loads(f.read_text())
    assert res["split"] == "valid_seen" and res["results"]["PutObject"]["evals"] == 1


@needs_shared
def test_workers_give_same_records_in_same_order():
    entries = E.resolve_entries(DATA, SPLITS, "valid_seen")[:2]
    fac = functools.partial(A.RandomAgent, seed=5)
    one = E.evaluate_tasks(fac, entries, DATA, max_steps=6)
    two = E.evaluate_tasks(fac, entries, DATA, max_steps=6, num_workers=2)
    assert one == two and [r["repeat_idx"] for r in two] == [0, 1]


def _bad(tmp_path, capsys, split_doc, data, *extra):
    sp = tmp_path / "splits.json"
    sp.write_text(json.dumps(split_doc))
    out = tmp_path / "out"
    rc = E.main(
        [
            "--agent",
            "random",
            "--data",
            str(data),
            "--splits",
            str(sp),
            "--split",
            "valid_seen",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )
    assert rc == 2 and not out.exists()
    return capsys.readouterr().err


def test_bad_inputs(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    err = _bad(tmp_path, capsys, {"train": []}, tmp_path / "data")
    assert "split 'valid_seen' not in the split file" in err and "splits.json" in err
    err = _bad(
        tmp_path,
        capsys,
        {"valid_seen": [{"task": "nope/trial_X", "repeat_idx": 0}]},
        tmp_path / "data",
    )
    assert "valid_seen[0]" in err and "nope/trial_X" in err and "traj_data.json not found" in err
    err = _bad(
        tmp_path, capsys, {"valid_seen": [{"task": "t", "repeat_idx": -1}]}, tmp_path / "data"
    )
    assert "valid_seen[0].repeat_idx" in err
    err = _bad(tmp_path, capsys, {"valid_seen": []}, tmp_path / "data", "--subgoals", "Jump")
    assert "--subgoals: invalid value 'Jump'" in err
    err = _bad(tmp_path, capsys, {"valid_seen": []}, tmp_path / "data", "--max-fails", "0")
    assert "max_fails" in err
    sp = tmp_path / "splits.json"
    rc = E.main(
        [
            "--agent",
            "no_such_agent",
            "--data",
            str(tmp_path),
            "--splits",
            str(sp),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2 and "agent 'no_such_agent' is not registered" in capsys.readouterr().err
    rc = E.main(
        [
            "--agent",
            "checkpoint",
            "--checkpoint",
            str(tmp_path / "x.pt"),
            "--data",
            str(tmp_path),
            "--splits",
            str(sp),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2 and "x.pt: <file>: checkpoint file not found" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@needs_shared
def test_repeat_idx_out_of_range_names_file(tmp_path, capsys):
    task = json.loads(SPLITS.read_text())["valid_seen"][0]["task"]
    err = _bad(
        tmp_path,
        capsys,
        {"valid_seen": [{"task": task, "repeat_idx": 0}, {"task": task, "repeat_idx": 99}]},
        DATA,
    )
    assert (
        "valid_seen[1]" in err and "repeat_idx 99 out of range" in err and "traj_data.json" in err
    )
