"""Tests for alfred_task.gen.language: templated goal/step text for synthetic demos."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from alfred_task.constants import NAV_ACTION_SET, TASK_TYPES
from alfred_task.gen.language import SubgoalContext, describe_path, humanize, make_annotations

ALFRED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfred"
DIRECTION_WORDS = re.compile(
    r"\b(left|right|around|forward|ahead|meters?|steps?|walk|behind)\b", re.I
)


def _sub(i: int, action: str, *args: str) -> dict:
    return {
        "high_idx": i,
        "discrete_action": {"action": action, "args": list(args)},
        "planner_action": {"action": action},
    }


SIMPLE_PARAMS = {
    "object_target": "SprayBottle",
    "object_sliced": False,
    "parent_target": "GarbageCan",
    "toggle_target": "",
    "mrecep_target": "",
}
SIMPLE_PLAN = [
    _sub(0, "GotoLocation", "countertop"),
    _sub(1, "PickupObject", "spraybottle"),
    _sub(2, "GotoLocation", "garbagecan"),
    _sub(3, "PutObject", "spraybottle", "garbagecan"),
    _sub(4, "NoOp"),
]
SIMPLE_CTX = [
    SubgoalContext(
        0, ("LookDown_15", "RotateLeft_90") + ("MoveAhead_25",) * 8, ("CounterTop", "Sink")
    ),
    SubgoalContext(1, (), (), "CounterTop"),
    SubgoalContext(2, ("RotateRight_90", "RotateRight_90", "MoveAhead_25"), ("Toilet",)),
    SubgoalContext(3),
]

PARAMS_BY_TYPE = {
    "pick_and_place_simple": SIMPLE_PARAMS,
    "look_at_obj_in_light": {
        "object_target": "Pencil",
        "object_sliced": False,
        "parent_target": "",
        "toggle_target": "DeskLamp",
        "mrecep_target": "",
    },
    "pick_clean_then_place_in_recep": {
        **SIMPLE_PARAMS,
        "object_target": "Mug",
        "parent_target": "Shelf",
    },
    "pick_heat_then_place_in_recep": {
        **SIMPLE_PARAMS,
        "object_target": "Potato",
        "object_sliced": True,
        "parent_target": "SinkBasin",
    },
    "pick_cool_then_place_in_recep": {
        **SIMPLE_PARAMS,
        "object_target": "Egg",
        "parent_target": "CounterTop",
    },
    "pick_two_obj_and_place": {
        **SIMPLE_PARAMS,
        "object_target": "Knife",
        "parent_target": "Drawer",
    },
    "pick_and_place_with_movable_recep": {
        **SIMPLE_PARAMS,
        "object_target": "Fork",
        "mrecep_target": "Cup",
        "parent_target": "SinkBasin",
    },
}
GOAL_WORDS = {  # words each task type's goal must contain
    "pick_and_place_simple": ("spray bottle", "trash can"),
    "look_at_obj_in_light": ("pencil", "desk lamp"),
    "pick_clean_then_place_in_recep": ("mug", "shelf"),
    "pick_heat_then_place_in_recep": ("potato", "sink"),
    "pick_cool_then_place_in_recep": ("egg", "counter"),
    "pick_two_obj_and_place": ("knives", "drawer"),
    "pick_and_place_with_movable_recep": ("fork", "cup", "sink"),
}


def _well_formed(text: str) -> None:
    assert text and text[0].isupper(), text
    assert text.endswith(".") and not text.endswith(".."), text
    assert "  " not in text and " ," not in text, text


# --------------------------------------------------------------------------- humanize
@pytest.mark.parametrize(
    "camel, words",
    [
        ("CounterTop", "counter"),
        ("SinkBasin", "sink"),
        ("AppleSliced", "apple slice"),
        ("DeskLamp", "desk lamp"),
        ("ToiletPaperHanger", "toilet paper holder"),
        ("StoveBurner", "stove"),
        ("ButterKnife", "butter knife"),
        ("TVStand", "tv stand"),
        ("CD", "cd"),
        ("Fridge", "fridge"),
    ],
)
def test_humanize(camel, words):
    assert humanize(camel) == words


# --------------------------------------------------------------------------- describe_path
def test_describe_path_eight_moves_is_two_meters():
    text = describe_path(["MoveAhead_25"] * 8)
    assert "two meters" in text and "turn" not in text


def test_describe_path_two_left_turns_is_turn_around():
    assert describe_path(["RotateLeft_90", "RotateLeft_90"]) == "turn around"
    assert (
        describe_path(["RotateRight_90", "RotateRight_90", "MoveAhead_25"])
        == "turn around and take a step forward"
    )


def test_describe_path_only_look_is_empty():
    assert describe_path(["LookDown_15", "LookUp_15", "LookDown_15"]) == ""
    assert describe_path([]) == ""
    assert describe_path(["RotateLeft_90", "RotateRight_90"]) == ""  # net zero turn


def test_describe_path_sequence_and_looks_do_not_split_runs():
    acts = [
        "LookDown_15",
        "RotateLeft_90",
        "MoveAhead_25",
        "MoveAhead_25",
        "LookUp_15",
        "MoveAhead_25",
        "MoveAhead_25",
        "MoveAhead_25",
        "MoveAhead_25",
        "MoveAhead_25",
        "MoveAhead_25",
        "RotateRight_90",
    ]
    assert describe_path(acts) == "turn left, walk forward about two meters, then turn right"
    assert describe_path(["MoveAhead_25"] * 2) == "take a few steps forward"
    assert describe_path(["MoveAhead_25"] * 6) == "walk forward about one and a half meters"
    assert describe_path(["RotateLeft_90"] * 3) == "turn right"


def test_describe_path_rejects_unknown_action():
    with pytest.raises(ValueError, match="Jump_50"):
        describe_path(["MoveAhead_25", "Jump_50"])


# --------------------------------------------------------------------------- make_annotations
def test_deterministic_and_shape():
    a = make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX, seed=11)
    b = make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX, seed=11)
    assert a == b
    assert [x["assignment_id"] for x in a] == [f"synthetic_11_{k}" for k in range(3)]
    for ann in a:
        assert set(ann) == {"task_desc", "high_descs", "votes", "assignment_id"}
        assert ann["votes"] == [1, 1, 1]
        assert len(ann["high_descs"]) == 4
        for text in [ann["task_desc"], *ann["high_descs"]]:
            _well_formed(text)
    c = make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX, seed=12)
    assert c != a


def test_annotations_distinct_for_every_task_type():
    for task_type in TASK_TYPES:
        for seed in range(5):
            anns = make_annotations(
                task_type, PARAMS_BY_TYPE[task_type], SIMPLE_PLAN, [], seed=seed, n=4
            )
            assert len({a["task_desc"] for a in anns}) == 4, (task_type, seed)


def test_global_random_untouched():
    import random

    random.seed(3)
    expected = random.random()
    random.seed(3)
    make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX, seed=1)
    assert random.random() == expected


def test_high_descs_count_with_and_without_noop():
    with_end = make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, [], seed=0)
    without_end = make_annotations(
        "pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN[:-1], [], seed=0
    )
    assert all(len(a["high_descs"]) == 4 for a in with_end + without_end)
    short = make_annotations(
        "pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN[:2], SIMPLE_CTX[:2], seed=0
    )
    assert all(len(a["high_descs"]) == 2 for a in short)
    assert (
        make_annotations("pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, [], seed=0, n=1)[0][
            "assignment_id"
        ]
        == "synthetic_0_0"
    )


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_goal_names_objects_and_has_no_directions(task_type):
    for seed in range(8):
        for ann in make_annotations(
            task_type, PARAMS_BY_TYPE[task_type], SIMPLE_PLAN, SIMPLE_CTX, seed=seed
        ):
            goal = ann["task_desc"].lower()
            for word in GOAL_WORDS[task_type]:
                assert word in goal, (word, goal)
            assert not DIRECTION_WORDS.search(goal), goal


def test_sliced_goal_wording():
    params = PARAMS_BY_TYPE["pick_heat_then_place_in_recep"]
    goals = {
        a["task_desc"]
        for s in range(10)
        for a in make_annotations("pick_heat_then_place_in_recep", params, SIMPLE_PLAN, [], seed=s)
    }
    assert all("slice of potato" in g or "sliced potato" in g for g in goals), goals
    assert any("slice of" in g for g in goals) and any("sliced" in g for g in goals)


def test_steps_carry_path_destination_landmark_and_location():
    for seed in range(6):
        ann = make_annotations(
            "pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX, seed=seed
        )[0]
        goto, pick, goto2, put = ann["high_descs"]
        assert "turn left" in goto.lower() and "two meters" in goto and "counter" in goto
        assert "sink" in goto and "counter" not in goto.replace(
            "counter", "", 1
        )  # landmark != destination
        assert "spray bottle" in pick and "counter" in pick
        assert "turn around" in goto2.lower() and "trash can" in goto2 and "toilet" in goto2
        assert "spray bottle" in put and "trash can" in put


def test_sliced_steps_refer_to_slices_after_slicing():
    plan = [
        _sub(0, "GotoLocation", "diningtable"),
        _sub(1, "PickupObject", "knife"),
        _sub(2, "GotoLocation", "potato"),
        _sub(3, "SliceObject", "potato"),
        _sub(4, "PutObject", "knife", "countertop"),
        _sub(5, "PickupObject", "potato"),
        _sub(6, "GotoLocation", "microwave"),
        _sub(7, "HeatObject", "potato"),
        _sub(8, "NoOp"),
    ]
    params = PARAMS_BY_TYPE["pick_heat_then_place_in_recep"]
    for ann in make_annotations("pick_heat_then_place_in_recep", params, plan, [], seed=4):
        descs = ann["high_descs"]
        assert len(descs) == 8
        assert "slice" not in descs[2].replace("slice the", "") and "potato" in descs[3]
        assert "slice" in descs[5] and "slice" in descs[7] and "microwave" in descs[7]


def test_errors():
    with pytest.raises(ValueError, match="pick_and_juggle"):
        make_annotations("pick_and_juggle", SIMPLE_PARAMS, SIMPLE_PLAN, [], seed=0)
    bad = SIMPLE_PLAN[:1] + [_sub(1, "TeleportObject", "apple")]
    with pytest.raises(ValueError, match="TeleportObject"):
        make_annotations("pick_and_place_simple", SIMPLE_PARAMS, bad, [], seed=0)
    with pytest.raises(ValueError, match="contexts"):
        make_annotations(
            "pick_and_place_simple", SIMPLE_PARAMS, SIMPLE_PLAN, SIMPLE_CTX[:3], seed=0
        )
    with pytest.raises(
        ValueError, match="contexts"
    ):  # a context for the End subgoal is one too many
        make_annotations(
            "pick_and_place_simple",
            SIMPLE_PARAMS,
            SIMPLE_PLAN,
            SIMPLE_CTX + [SubgoalContext(4)],
            seed=0,
        )
    with pytest.raises(ValueError, match="parent_target"):
        make_annotations(
            "pick_and_place_simple", {**SIMPLE_PARAMS, "parent_target": ""}, SIMPLE_PLAN, [], seed=0
        )


# --------------------------------------------------------------------------- real fixtures
def _fixture_files() -> list[Path]:
    if not ALFRED_DATA.is_dir():
        pytest.skip(f"ALFRED fixtures not found at {ALFRED_DATA}")
    files = [
        p
        for p in sorted(ALFRED_DATA.glob("json_2.1.0/**/traj_data.json"))
        if "plan" in json.loads(p.read_text())
    ]
    if not files:
        pytest.skip("no ALFRED fixtures with a plan")
    return files


def test_real_fixture_shapes_match_turk_annotations():
    for path in _fixture_files():
        traj = json.loads(path.read_text())
        high = traj["plan"]["high_pddl"]
        contexts = [
            SubgoalContext(
                h["high_idx"],
                tuple(
                    a["discrete_action"]["action"]
                    for a in traj["plan"]["low_actions"]
                    if a["high_idx"] == h["high_idx"]
                    and a["discrete_action"]["action"] in NAV_ACTION_SET
                ),
            )
            for h in high
            if h["discrete_action"]["action"] != "NoOp"
        ]
        anns = make_annotations(traj["task_type"], traj["pddl_params"], high, contexts, seed=0)
        expected = {len(a["high_descs"]) for a in traj["turk_annotations"]["anns"]}
        assert len(expected) == 1, path
        assert [len(a["high_descs"]) for a in anns] == [expected.pop()] * 3, path
        assert len({a["task_desc"] for a in anns}) == 3, path
        for ann in anns:
            for text in [ann["task_desc"], *ann["high_descs"]]:
                _well_formed(text)
            assert not DIRECTION_WORDS.search(ann["task_desc"]), ann["task_desc"]


def test_movable_receptacle_steps_mention_contents():
    plan = [
        _sub(0, "GotoLocation", "cup"),
        _sub(1, "PickupObject", "cup"),
        _sub(2, "GotoLocation", "sinkbasin"),
        _sub(3, "PutObject", "cup", "sinkbasin"),
        _sub(4, "NoOp"),
    ]
    params = PARAMS_BY_TYPE["pick_and_place_with_movable_recep"]
    for ann in make_annotations("pick_and_place_with_movable_recep", params, plan, [], seed=2):
        assert "cup" in ann["high_descs"][1] and "fork" in ann["high_descs"][1]
        assert "fork" in ann["high_descs"][3] and ann["high_descs"][3].endswith("in the sink.")
