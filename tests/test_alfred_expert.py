"""ALFRED expert: grid navigation, low-level expansion, online replanning, generation."""

from __future__ import annotations

import json

import pytest

from alfred_task import constants as C
from alfred_task.env.environment import AlfredEnv
from alfred_task.planning.expert import AlfredExpert
from alfred_task.gen.generate import generate_one, public_view, replay, write_demo, write_splits
from alfred_task.env.goal_conditions import goal_conditions_met
from alfred_task.env.navigation import GridNavigator, look_actions, parse_location, step_pose


def params(obj, parent="", sliced=False, toggle="", mrecep=""):
    return {
        "object_target": obj,
        "object_sliced": sliced,
        "parent_target": parent,
        "toggle_target": toggle,
        "mrecep_target": mrecep,
    }


@pytest.fixture(scope="module")
def env():
    e = AlfredEnv(width=300, height=300)
    yield e
    e.stop()


def test_grid_paths_are_shortest_and_avoid_blocked_cells():
    cells = [(x * 0.25, z * 0.25) for x in range(4) for z in range(3)]
    nav = GridNavigator(cells)
    acts = nav.path_actions((0, 0, 1), (3, 0, 1))
    assert acts == ["MoveAhead_25"] * 3
    node = (0, 0, 1)
    for a in nav.path_actions((0, 0, 1), (3, 2, 0)):
        node = step_pose(node, a)
    assert node == (3, 2, 0)
    assert nav.distance((0, 0, 1), (3, 0, 1)) == 3
    nav.block_cell(1, 0)
    assert nav.distance((0, 0, 1), (3, 0, 1)) > 3
    entering = [
        (q, n)
        for n in nav.graph.nodes
        if n[:2] == (1, 0)
        for q in nav.graph.predecessors(n)
        if q[:2] != (1, 0)
    ]
    assert entering == []


def test_look_actions_and_location_strings():
    assert look_actions(30, 45) == ["LookDown_15"]
    assert look_actions(45, 0) == ["LookUp_15"] * 3
    assert look_actions(15, 15) == []
    assert parse_location("loc|-4|-12|2|45") == (-4, -12, 2, 45)
    with pytest.raises(ValueError):
        parse_location("loc|1|2|3")


def _run(env, expert, limit=300, perturb=None):
    """DAgger-style: the expert is asked at every step; at the steps in `perturb` the learner
    does something else instead (an action name, or a callable doing it)."""
    fails = 0
    for t in range(limit):
        a = expert.next_action()
        if perturb is not None and t in perturb:
            p = perturb[t]
            p(env) if callable(p) else env.va_interact(p, None)
            continue
        if a.is_stop:
            return t, fails
        ok = env.va_interact(a.action, a.mask)[0]
        fails += not ok
    raise AssertionError("expert did not stop")


def _openable_in_view(env, exclude=("Microwave",)):
    ev = env.last_event
    masks = ev.instance_masks
    for o in ev.metadata["objects"]:
        if (
            o["openable"]
            and o["receptacle"]
            and not o["pickupable"]
            and not o["isOpen"]
            and o["visible"]
            and o["objectType"] not in exclude
            and o["objectId"] in masks
            and masks[o["objectId"]].sum() > 50
            and env.mask_to_object(masks[o["objectId"]]) == o["objectId"]
        ):
            return masks[o["objectId"]]
    return None


def _restored_floorplan1(env):
    """FloorPlan1 restored from its own poses (as an episode would be), agent facing north."""
    env.reset("FloorPlan1")
    poses = [
        {"objectName": o["name"], "position": o["position"], "rotation": o["rotation"]}
        for o in env.last_event.metadata["objects"]
        if o["pickupable"]
    ]
    ag = env.last_event.metadata["agent"]["position"]
    env.init_episode(
        {
            "scene": {
                "floor_plan": "FloorPlan1",
                "object_poses": poses,
                "object_toggles": [],
                "dirty_and_empty": False,
                "init_action": {
                    "action": "TeleportFull",
                    "x": ag["x"],
                    "y": ag["y"],
                    "z": ag["z"],
                    "rotation": 0,
                    "horizon": 30,
                },
            }
        }
    )


def _gc(env, task_type, p):
    md = env.last_event.metadata
    return goal_conditions_met(
        task_type,
        p,
        md["objects"],
        env.cleaned_objects,
        env.heated_objects,
        env.cooled_objects,
        md["inventoryObjects"],
    )


@pytest.mark.parametrize(
    "task_type,p",
    [
        ("pick_heat_then_place_in_recep", params("Apple", "CounterTop")),
        ("pick_cool_then_place_in_recep", params("Apple", "CounterTop")),
        ("pick_two_obj_and_place", params("Apple", "CounterTop", sliced=True)),
    ],
)
def test_expert_reaches_every_goal_condition_without_failures(env, task_type, p):
    _restored_floorplan1(env)
    expert = AlfredExpert(env, task_type, p)
    first = [h["discrete_action"]["action"] for h in expert.high_pddl()]
    steps, fails = _run(env, expert)
    s, ts = _gc(env, task_type, p)
    assert (s, ts) == (ts, ts) and fails == 0 and steps > 5
    assert first[0] == "GotoLocation" and first[-1] == "NoOp"
    assert expert.replans == 1  # followed its own plan: no replanning


def test_online_expert_reroutes_after_navigation_deviations_without_replanning(env):
    p = params("Apple", "CounterTop")
    _restored_floorplan1(env)
    expert = AlfredExpert(env, "pick_heat_then_place_in_recep", p)
    # single wrong moves while walking and while at the microwave: only the pose changed
    _run(
        env,
        expert,
        perturb={2: "RotateLeft_90", 5: "MoveAhead_25", 30: "LookUp_15", 40: "RotateRight_90"},
    )
    assert _gc(env, "pick_heat_then_place_in_recep", p) == (3, 3)
    assert expert.replans == 1


def test_online_expert_replans_when_the_learner_changes_objects(env):
    p = params("Apple", "CounterTop")
    _restored_floorplan1(env)
    expert = AlfredExpert(env, "pick_heat_then_place_in_recep", p)
    opened = False
    for _ in range(300):
        a = expert.next_action()
        mask = None if opened else _openable_in_view(env)
        if mask is not None:  # the learner opens a receptacle the plan never touches
            opened = env.va_interact("OpenObject", mask)[0]
            continue
        if a.is_stop:
            break
        env.va_interact(a.action, a.mask)
    assert opened and a.is_stop
    assert _gc(env, "pick_heat_then_place_in_recep", p) == (3, 3)
    assert expert.replans == 2  # once at the start, once after the learner's change
    assert not any(
        o["isOpen"] for o in env.last_event.metadata["objects"] if o["openable"] and o["receptacle"]
    )  # the expert closed it again


def test_generation_is_deterministic_and_replays(env, tmp_path):
    split, traj, _ = generate_one(env, seed=3, index=1)
    split2, traj2, _ = generate_one(env, seed=3, index=1)
    assert split == split2 and json.dumps(traj, sort_keys=True) == json.dumps(traj2, sort_keys=True)
    low = traj["plan"]["low_actions"]
    assert low[0]["discrete_action"]["action"] in C.NAV_ACTIONS
    assert {la["high_idx"] for la in low} == set(range(len(traj["plan"]["high_pddl"]) - 1))
    assert traj["plan"]["high_pddl"][-1]["planner_action"] == {"action": "End", "value": 1}
    inter = [la for la in low if la["discrete_action"]["action"] in C.INTERACT_ACTIONS]
    assert inter and all(la["discrete_action"]["args"]["mask"] for la in inter)
    anns = traj["turk_annotations"]["anns"]
    assert len(anns) == 3 and all(
        len(a["high_descs"]) == len(traj["plan"]["high_pddl"]) - 1 for a in anns
    )
    assert replay(env, traj)[0]
    # a broken mask makes the replay check fail
    bad = json.loads(json.dumps(traj))
    k = next(i for i, la in enumerate(bad["plan"]["low_actions"]) if la["discrete_action"]["args"])
    bad["plan"]["low_actions"][k]["discrete_action"]["args"]["mask"] = [[0, 1]]
    assert not replay(env, bad)[0]
    path = write_demo(tmp_path, split, traj, None)
    on_disk = json.loads((path / "traj_data.json").read_text())
    assert on_disk == public_view(split, traj)
    assert not any(p.name.startswith(".tmp_") for p in path.parent.iterdir())


def test_test_splits_release_only_task_scene_and_language():
    traj = {
        "task_id": "trial_T1",
        "task_type": "x",
        "pddl_params": {},
        "scene": {"a": 1},
        "plan": {},
        "images": [],
        "_task_dir": "d",
        "turk_annotations": {
            "anns": [{"task_desc": "g", "high_descs": ["h"], "votes": [1], "assignment_id": "s"}]
        },
    }
    pub = public_view("tests_seen", traj)
    assert set(pub) == {"task_id", "scene", "turk_annotations"}
    assert pub["turk_annotations"]["anns"] == [{"task_desc": "g", "high_descs": ["h"]}]
    assert set(public_view("train", traj)) == {
        "task_id",
        "task_type",
        "pddl_params",
        "scene",
        "plan",
        "images",
        "turk_annotations",
    }


def test_split_file_lists_one_entry_per_annotation(tmp_path):
    prog = tmp_path / ".progress" / "any"
    prog.mkdir(parents=True)
    (prog / "000000.json").write_text(
        json.dumps({"index": 0, "split": "train", "task": "t/trial_a", "n_anns": 3})
    )
    (prog / "000001.json").write_text(json.dumps({"index": 1, "error": "no task"}))
    (prog / "000002.json").write_text(
        json.dumps({"index": 2, "split": "tests_seen", "task": "trial_b", "n_anns": 2})
    )
    summary = write_splits(tmp_path)
    splits = json.loads((tmp_path / "splits.json").read_text())
    assert list(splits) == list(C.SPLITS)
    assert splits["train"] == [{"repeat_idx": k, "task": "t/trial_a"} for k in range(3)]
    assert [e["repeat_idx"] for e in splits["tests_seen"]] == [0, 1]
    assert summary["failed"] == 1


def test_generate_writes_frames_features_and_resumes(tmp_path):
    import torch
    import torchvision

    from alfred_task.gen.generate import generate

    torch.manual_seed(0)
    weights = tmp_path / "resnet18.pt"
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), weights)
    out = tmp_path / "data"
    summary = generate(
        out,
        1,
        seed=5,
        workers=1,
        save_frames=True,
        features=str(weights),
        planner="template",
        split="valid_seen",
    )
    assert summary["splits"]["valid_seen"] == 3 and summary["failed"] == 0
    (traj_file,) = list((out / "valid_seen").glob("*/*/traj_data.json"))
    traj = json.loads(traj_file.read_text())
    n = len(traj["plan"]["low_actions"])
    feats = torch.load(traj_file.parent / "feat_conv.pt")
    assert tuple(feats.shape) == (n + 1, 512, 7, 7)  # one per low action plus the stop frame
    assert len(list((traj_file.parent / "raw_images").glob("*.png"))) == n + 1
    assert [im["low_idx"] for im in traj["images"]] == list(
        range(n)
    )  # the stop frame is not listed
    mtime = traj_file.stat().st_mtime_ns
    generate(
        out, 1, seed=5, workers=1, features=str(weights), planner="template", split="valid_seen"
    )  # already done: skipped (same encoder; another one is refused)
    assert traj_file.stat().st_mtime_ns == mtime


def test_feature_weights_must_exist(tmp_path):
    from alfred_task.data.features import ResnetFeatures

    with pytest.raises(FileNotFoundError, match="neither 'imagenet' nor"):
        ResnetFeatures(str(tmp_path / "missing.pt"))
    (tmp_path / "bad.pt").write_bytes(b"")
    import torch

    torch.save({"not": torch.zeros(1)}, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="not a resnet18 state_dict"):
        ResnetFeatures(str(tmp_path / "bad.pt"))


def test_problem_state_survives_parent_cycles():
    """THOR lists overlapping furniture as each other's parents; that must not hang."""
    from alfred_task.planning.scene_state import build_problem_state

    nav = GridNavigator([(x * 0.25, z * 0.25) for x in range(4) for z in range(4)])

    class Spots:
        abandoned = frozenset()

        def __init__(self):
            self.nav = nav

        def location(self, obj, agent=None):
            return {"CounterTop|1": "loc|1|1|0|30", "DiningTable|1": "loc|2|2|1|30"}.get(
                obj["objectId"]
            )

    def obj(oid, t, parents, receptacle=False, pickupable=False):
        return {
            "objectId": oid,
            "objectType": t,
            "parentReceptacles": parents,
            "receptacle": receptacle,
            "pickupable": pickupable,
            "openable": False,
            "isOpen": False,
            "toggleable": False,
            "isToggled": False,
            "sliceable": False,
            "isSliced": False,
            "isDirty": False,
            "position": {"x": 0.0, "y": 1.0, "z": 0.0},
        }

    md = {
        "agent": {
            "position": {"x": 0.0, "y": 0.9, "z": 0.0},
            "rotation": {"x": 0, "y": 0, "z": 0},
            "cameraHorizon": 30,
        },
        "inventoryObjects": [],
        "objects": [
            obj("CounterTop|1", "CounterTop", ["DiningTable|1"], receptacle=True),
            obj("DiningTable|1", "DiningTable", ["CounterTop|1"], receptacle=True),
            obj("Apple|1", "Apple", ["CounterTop|1", "DiningTable|1"], pickupable=True),
        ],
    }
    state = build_problem_state(
        md, Spots(), "pick_and_place_simple", params("Apple", "DiningTable")
    )
    assert state.objects["Apple|1"].parent == "CounterTop|1"
    assert state.objects["CounterTop|1"].location == "loc|1|1|0|30"
    assert state.objects["DiningTable|1"].location == "loc|2|2|1|30"


def test_gen_cli_fails_fast_and_writes_nothing_on_bad_setup(tmp_path, capsys):
    from alfred_task.gen.generate import main

    out = tmp_path / "out"
    assert (
        main(
            [
                "--out",
                str(out),
                "--num",
                "1",
                "--features",
                str(tmp_path / "none.pt"),
                "--workers",
                "2",
            ]
        )
        == 2
    )
    assert "neither 'imagenet' nor a state_dict file" in capsys.readouterr().err
    assert not out.exists()
    from backends import ThorUnavailableError, check_thor

    try:
        check_thor({})
        return  # a machine with real AI2-THOR: nothing to refuse
    except ThorUnavailableError:
        pass
    # no Unity build here: the real-THOR backend is refused with its reason, nothing written
    assert main(["--out", str(out), "--num", "1", "--backend", "thor", "--workers", "2"]) == 2
    assert "AI2-THOR" in capsys.readouterr().err and not out.exists()


def test_placement_table_counts_slices_of_present_sliceables():
    from alfred_task.planning.scene_state import placement_table

    table = placement_table(["Potato", "Knife"], ["SinkBasin", "Microwave"])
    assert "PotatoSliced" in table["SinkBasin"] and "PotatoSliced" in table["Microwave"]
    assert "AppleSliced" not in table["SinkBasin"]  # no apple, no apple slices


def test_online_expert_plans_a_real_sliced_task_from_its_initial_state(env):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfred" / "json_2.1.0"
    files = sorted(root.glob("*/*Sliced*/*/traj_data.json"))
    if not files:
        pytest.skip("ALFRED fixtures not available (../shared)")
    traj = json.loads(files[0].read_text())
    env.init_episode(traj)
    expert = AlfredExpert(env, traj["task_type"], traj["pddl_params"])
    assert not expert.next_action().is_stop
    assert any(h["discrete_action"]["action"] == "SliceObject" for h in expert.high_pddl())
