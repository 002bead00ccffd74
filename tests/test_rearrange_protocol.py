"""rearrange.protocol: the heuristic's fit, the goal-blind wrapper and the paired comparisons."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest

from rearrange import protocol as P
from rearrange.constants import REARRANGE_ACTIONS


def _ep(scene, index, opened, x=0.0):
    return {
        "scene": scene,
        "index": index,
        "agent_position": {"x": x, "y": 0.9, "z": 0.0},
        "agent_rotation": 90,
        "openable_data": [
            {
                "name": f"{t}_ab",
                "objectId": f"{t}|+0|+0|+0",
                "start_openness": 0.0,
                "target_openness": 1.0 if t in opened else 0.0,
            }
            for t in ("Cabinet", "Toilet", "Drawer")
        ],
    }


def test_heuristic_choices_come_from_training_counts_only():
    train = OrderedDict(
        A=[_ep("A", 0, {"Toilet"}), _ep("A", 1, {"Toilet"}), _ep("A", 2, {"Cabinet"})],
        B=[_ep("B", 0, {"Drawer"}), _ep("B", 1, {"Cabinet"}), _ep("B", 2, {"Cabinet"})],
    )
    h = P.ScanAndOpen.fit(train)
    assert h.scene_types == {"A": "Toilet", "B": "Cabinet"}
    assert h.overall == ("Cabinet", "Toilet", "Drawer")  # 3, 2, 1 changes
    with pytest.raises(ValueError):
        P.ScanAndOpen.fit(OrderedDict(A=[_ep("A", 0, set())]))


class _Task:
    """Just what the heuristic reads: scene, the discrete actions and the visible objects."""

    discrete_actions = REARRANGE_ACTIONS

    def __init__(self, scene, views):
        self.task_info, self.views, self.step = {"scene": scene}, views, 0
        self.env = SimpleNamespace(last_event=SimpleNamespace(metadata={"objects": views[0]}))

    def advance(self):
        self.step += 1
        self.env.last_event.metadata["objects"] = self.views[min(self.step, len(self.views) - 1)]


def _obj(t, visible, openable=True):
    return {"objectType": t, "visible": visible, "openable": openable}


def _play(h, task):
    h.reset(task)
    names = []
    while not names or names[-1] != "done":
        names.append(task.discrete_actions[h.act(task, {})])
        task.advance()
    return names


def test_heuristic_scans_then_opens_the_fitted_type_then_stops():
    h = P.ScanAndOpen({"A": "Toilet"}, ("Cabinet", "Toilet"))
    seen_second = [
        [_obj("Toilet", False)],
        [_obj("Cabinet", True), _obj("Toilet", False)],
        [_obj("Toilet", True)],
    ]
    assert _play(h, _Task("A", seen_second)) == [
        "rotate_right",
        "rotate_right",
        "open_by_type_toilet",
        "done",
    ]
    never = [[_obj("Cabinet", True)]]
    assert _play(h, _Task("A", never)) == ["rotate_right"] * 3 + ["done"]
    # an unseen scene: the most often changed training type it has (no Cabinet there)
    assert _play(h, _Task("Z", [[_obj("Toilet", True)]])) == ["open_by_type_toilet", "done"]


def test_goal_blind_feeds_the_current_view_as_the_goal():
    seen = []
    blind = P.goal_blind(lambda task, obs: seen.append(dict(obs)) or 0)
    cur, goal = np.zeros((2, 2, 3)), np.ones((2, 2, 3))
    blind(None, {"rgb": cur, "unshuffled_rgb": goal, "other": 5})
    assert seen[0]["unshuffled_rgb"] is cur and seen[0]["rgb"] is cur and seen[0]["other"] == 5
    with pytest.raises(KeyError):
        blind(None, {"rgb": cur})


def _results(success_by_row, actions=None):
    return {
        name: [
            {
                "scene": "S",
                "index": i,
                "fixed_strict": float(s),
                "success": float(s),
                "steps": 3.0,
                "actions": (actions or {}).get(name, ["done"]),
            }
            for i, s in enumerate(succ)
        ]
        for name, succ in success_by_row.items()
    }


def test_compare_pairs_by_episode_and_counts_discordant_successes():
    n = 40
    agent = [1] * 20 + [0] * 20
    res = _results(
        {
            P.AGENT: agent,
            P.GOAL_BLIND: agent,
            P.HEURISTIC: [0] * 2 + [1] * 38,
            P.RANDOM: [0] * n,
            P.DONE: [0] * n,
        }
    )
    rep = P.compare(res)
    assert rep["rows"][P.AGENT]["success"]["count"] == 20
    c = rep["comparisons"]
    assert c[P.GOAL_BLIND]["verdict"] == "not distinguishable"
    assert c[P.GOAL_BLIND]["same_actions"] == n
    assert (c[P.RANDOM]["agent_only_successes"], c[P.RANDOM]["row_only_successes"]) == (20, 0)
    assert c[P.RANDOM]["verdict"] == "better" and c[P.RANDOM]["mcnemar_p"] == pytest.approx(
        2 / 2**20
    )
    # heuristic: 20 successes only it has, 2 only the agent has -> worse
    assert (c[P.HEURISTIC]["agent_only_successes"], c[P.HEURISTIC]["row_only_successes"]) == (2, 20)
    assert c[P.HEURISTIC]["verdict"] == "worse"
    assert c[P.HEURISTIC]["fixed_strict_diff_pct"] == pytest.approx(-45.0)
    words = P.verdict_words(rep)
    assert 'does NOT beat "agent, goal := current view"' in words and 'WORSE than "scan' in words
    assert "| done at step 0 | 40 |" in P.protocol_table(rep)
    # shuffling a row's episode order changes nothing: pairing is by (scene, index)
    res[P.RANDOM] = res[P.RANDOM][::-1]
    assert P.compare(res)["comparisons"][P.RANDOM] == c[P.RANDOM]
    res[P.DONE] = res[P.DONE][1:]
    with pytest.raises(ValueError, match="done at step 0"):
        P.compare(res)


def test_overlap_counts_shared_scenes_and_start_poses():
    train = OrderedDict(A=[_ep("A", 0, {"Toilet"}, x=1.0)])
    held = OrderedDict(
        A=[_ep("A", 0, {"Toilet"}, x=1.0), _ep("A", 1, {"Toilet"}, x=2.0)],
        B=[_ep("B", 0, {"Toilet"}, x=1.0)],
    )
    assert P.overlap(held, train) == {"scenes_in_training": ["A"], "start_poses_in_training": 1}


def test_slice_inputs_take_held_out_episodes_from_the_held_out_scenes():
    """A checkpoint trained with held-out scenes is evaluated on those scenes' episodes only,
    and its heuristic is fitted on the training scenes' episodes only."""

    def ep(scene, index, opened):
        return dict(_ep(scene, index, opened), open_diff_count=1)

    held_data = OrderedDict(
        A=[ep("A", 0, {"Toilet"})], C=[ep("C", i, {"Drawer"}) for i in range(3)]
    )
    train_data = OrderedDict(
        A=[ep("A", i, {"Toilet"}) for i in range(3)], B=[ep("B", 0, {"Cabinet"})]
    )
    state = {
        "slice": {
            "scenes": ("A", "B"),
            "train_per_scene": 2,
            "held_out_per_scene": 2,
            "kinds": ("open",),
            "max_steps": 30,
            "held_out_scenes": ("C",),
        }
    }
    held, train, horizon = P.slice_inputs(state, held_data, train_data)
    assert list(held) == ["C"] and [e["index"] for e in held["C"]] == [0, 1]
    assert list(train) == ["A", "B"] and len(train["A"]) == 2 and horizon == 30
    assert P.overlap(held, train)["scenes_in_training"] == []
