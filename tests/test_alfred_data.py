"""ALFRED data layer: constants, mask RLE, traj_data I/O, split files, preprocessing.

Tests on the real fixtures (../shared/data/alfred) skip cleanly when shared/ is absent;
the synthetic tests at the top never skip.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from alfred_task import constants as C
from alfred_task.data.masks import (
    bbox_to_mask,
    compress_mask,
    decompress_mask,
    mask_extent,
    point_to_mask,
    rle_pixel_count,
    validate_rle,
)
from alfred_task.data.preprocess import (
    main as preprocess_main,
    pp_path,
    preprocess_splits,
    preprocess_traj,
)
from alfred_task.data.vocabulary import AlfredVocab, tokens_of
from alfred_task.data.traj_data import (
    SplitEntry,
    check_rle_fields,
    load_split_file,
    load_traj_data,
    write_traj_data,
)
from alfred_task.data.traj_schema import TrajData, TrajDataError


# ===========================================================================
# synthetic helpers
# ===========================================================================
def _rect_rle(r0, r1, c0, c1):
    m = np.zeros(C.MASK_SHAPE, bool)
    m[r0 : r1 + 1, c0 : c1 + 1] = True
    return compress_mask(m)


def _nav(name, high_idx):
    api = {"action": C.DISCRETE_TO_API[name], "forceAction": True}
    if name == "MoveAhead_25":
        api["moveMagnitude"] = 0.25
    return {
        "api_action": api,
        "discrete_action": {"action": name, "args": {}},
        "high_idx": high_idx,
    }


def _interact(name, high_idx, obj="Mug|+01.00|+00.90|-01.00"):
    return {
        "api_action": {"action": name, "objectId": obj},
        "discrete_action": {
            "action": name,
            "args": {
                "bbox": [10, 21, 20, 31],
                "point": [15, 25],
                "mask": _rect_rle(20, 30, 10, 20),
            },
        },
        "high_idx": high_idx,
    }


def make_traj(with_end=True, n_descs=None):
    """A small, valid pick_and_place_simple trajectory: Goto, Pickup, Goto, Put [, End]."""
    hp = [
        ("GotoLocation", ["countertop"], {"action": "GotoLocation", "location": "loc|1|2|0|45"}),
        (
            "PickupObject",
            ["mug"],
            {"action": "PickupObject", "objectId": "Mug|+01.00|+00.90|-01.00"},
        ),
        ("GotoLocation", ["shelf"], {"action": "GotoLocation", "location": "loc|3|2|1|30"}),
        (
            "PutObject",
            ["mug", "shelf"],
            {
                "action": "PutObject",
                "objectId": "Mug|+01.00|+00.90|-01.00",
                "receptacleObjectId": "Shelf|+02.00|+01.00|-01.00",
            },
        ),
    ]
    if with_end:
        hp.append(("NoOp", [], {"action": "End", "value": 1}))
    high = [
        {"discrete_action": {"action": a, "args": args}, "high_idx": i, "planner_action": pa}
        for i, (a, args, pa) in enumerate(hp)
    ]
    low = [
        _nav("LookDown_15", 0),
        _nav("MoveAhead_25", 0),
        _interact("PickupObject", 1),
        _nav("RotateLeft_90", 2),
        _nav("MoveAhead_25", 2),
        _interact("PutObject", 3),
    ]
    images = [
        {"high_idx": a["high_idx"], "image_name": f"{i:09d}.png", "low_idx": i}
        for i, a in enumerate(low)
    ]
    n_descs = 4 if n_descs is None else n_descs
    descs = [
        "Go to the counter.",
        "Pick up the mug!",
        "Turn left, walk 2 steps to the shelf.",
        "Put the mug on the shelf.",
        "Extra step text.",
    ][:n_descs]
    return {
        "images": images,
        "pddl_params": {
            "mrecep_target": "",
            "object_sliced": False,
            "object_target": "Mug",
            "parent_target": "Shelf",
            "toggle_target": "",
        },
        "plan": {"high_pddl": high, "low_actions": low},
        "scene": {
            "dirty_and_empty": False,
            "floor_plan": "FloorPlan5",
            "scene_num": 5,
            "random_seed": 123,
            "init_action": {
                "action": "TeleportFull",
                "horizon": 30,
                "rotateOnTeleport": True,
                "rotation": 90,
                "x": 1.0,
                "y": 0.9,
                "z": -1.5,
            },
            "object_poses": [
                {
                    "objectName": "Mug_abc",
                    "position": {"x": 1.0, "y": 0.9, "z": -1.0},
                    "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
                }
            ],
            "object_toggles": [],
        },
        "task_id": "trial_T20990101_000000_000000",
        "task_type": "pick_and_place_simple",
        "turk_annotations": {
            "anns": [
                {
                    "assignment_id": "A1_B1",
                    "high_descs": list(descs),
                    "task_desc": "Put a mug on the  shelf.",
                    "votes": [1, 1],
                },
                {
                    "assignment_id": "A2_B2",
                    "high_descs": list(descs),
                    "task_desc": "Move the MUG to the shelf",
                    "votes": [1],
                },
            ]
        },
    }


def make_test_traj():
    d = make_traj()
    for k in ("images", "pddl_params", "plan", "task_type"):
        del d[k]
    for a in d["turk_annotations"]["anns"]:
        del a["assignment_id"], a["votes"]
    return d


# ===========================================================================
# constants
# ===========================================================================
def test_constants_action_vocabulary():
    assert len(C.NAV_ACTIONS) == 5 and len(C.INTERACT_ACTIONS) == 7
    assert (
        len(C.AGENT_ACTIONS) == C.NUM_AGENT_ACTIONS == 13
        and C.AGENT_ACTIONS[-1] == C.STOP == "<<stop>>"
    )
    assert (C.PAD, C.SEG, C.GOAL) == ("<<pad>>", "<<seg>>", "<<goal>>")
    assert C.WORD_SPECIAL_TOKENS.index(C.GOAL) == C.GOAL_INDEX == 2
    assert C.ACTION_LOW_VOCAB[:3] == (C.PAD, C.SEG, C.STOP) and len(C.ACTION_LOW_VOCAB) == 15
    assert set(C.ACTION_LOW_VOCAB[3:]) == set(C.LOW_ACTIONS)
    assert all(C.has_interaction(a) for a in C.INTERACT_ACTIONS)
    assert not any(C.has_interaction(a) for a in C.NAV_ACTIONS + (C.STOP, C.PAD, C.SEG))
    assert (
        C.DISCRETE_TO_API["LookDown_15"] == "LookDown"
        and C.API_TO_DISCRETE["MoveAhead"] == "MoveAhead_25"
    )
    assert len(C.TASK_TYPES) == 7 and (C.MAX_FAILS, C.MAX_STEPS, C.SCREEN_SIZE) == (10, 1000, 300)
    assert C.VISIBILITY_DISTANCE == 1.5


def test_constants_object_sets():
    assert C.HEATABLE < C.COOLABLE and "WineBottle" in C.COOLABLE and "WineBottle" not in C.HEATABLE
    assert {"AppleSliced", "PotatoSliced"} <= C.CLEANABLE and "BreadSliced" not in C.CLEANABLE
    assert C.SLICEABLE == {"Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato"}
    assert (
        C.TOGGLEABLE == {"DeskLamp", "FloorLamp"}
        and "Box" in C.OPENABLE_CLASS_LIST & C.MOVABLE_RECEPTACLES
    )
    assert C.receptacle_accepts("CoffeeMachine", "Mug") is True
    assert C.receptacle_accepts("StoveBurner", "Mug") is False
    assert C.receptacle_accepts("CounterTop", "Mug") is None  # list not given by the reference
    with pytest.raises(ValueError, match="unknown ALFRED receptacle class 'Banana'"):
        C.receptacle_accepts("Banana", "Mug")


# ===========================================================================
# masks (synthetic)
# ===========================================================================
def test_rle_known_example_and_roundtrip():
    m = np.zeros((300, 300), bool)
    m[0, 0] = m[0, 1] = m[1, 299] = m[2, 0] = True  # (1,299)=599 and (2,0)=600 form one run
    m[299, 299] = True
    rle = compress_mask(m)
    assert rle == [[0, 2], [599, 2], [89999, 1]]
    assert np.array_equal(decompress_mask(rle), m)
    assert compress_mask(np.zeros((300, 300), bool)) == [] and not decompress_mask([]).any()
    assert compress_mask(np.ones((300, 300), np.uint8)) == [[0, 90000]]
    rng = np.random.default_rng(0)
    for p in (0.01, 0.5, 0.97):
        m = rng.random((300, 300)) < p
        rle = compress_mask(m)
        assert (
            np.array_equal(decompress_mask(rle), m) and compress_mask(decompress_mask(rle)) == rle
        )
        assert rle_pixel_count(rle) == m.sum()
    assert compress_mask(np.eye(4, dtype=bool), shape=None) == [[0, 1], [5, 1], [10, 1], [15, 1]]
    assert np.array_equal(
        decompress_mask([[0, 1], [5, 1]], shape=(2, 4)), [[1, 0, 0, 0], [0, 1, 0, 0]]
    )
    assert validate_rle(np.array([[3, 4], [7, 1]])).tolist() == [
        [3, 4],
        [7, 1],
    ]  # touching runs are valid


@pytest.mark.parametrize(
    "rle, msg",
    [
        ("0 5", "list of \\[start, length\\] pairs"),
        ({"a": 1}, "list of \\[start, length\\] pairs"),
        ([[1, 2, 3]], "run 0 must be a \\[start, length\\] pair"),
        ([[0, 1], 5], "run 1 must be a \\[start, length\\] pair"),
        ([[0.5, 2]], "run 0 must hold two integers"),
        ([[True, 2]], "run 0 must hold two integers"),
        ([[-1, 2]], "run 0 has negative start -1"),
        ([[3, 0]], "run 0 has length 0"),
        ([[89990, 11]], "ends at 90001, past the 300x300 image"),
        ([[10, 5], [12, 3]], "run 1 starts at 12, before the end of run 0"),
        ([[50, 5], [10, 3]], "must be sorted and non-overlapping"),
    ],
)
def test_rle_bad_input_raises(rle, msg):
    with pytest.raises(ValueError, match=msg):
        decompress_mask(rle)


def test_compress_bad_input_raises():
    with pytest.raises(ValueError, match="2-D"):
        compress_mask(np.zeros((300, 300, 3), bool))
    with pytest.raises(ValueError, match=r"shape \(300, 300\), got \(30, 30\)"):
        compress_mask(np.zeros((30, 30), bool))
    with pytest.raises(ValueError, match="0/1"):
        compress_mask(np.full((300, 300), 2))
    with pytest.raises(ValueError, match="dtype"):
        compress_mask(np.full((300, 300), "x"))
    with pytest.raises(ValueError, match="shape must be"):
        decompress_mask([], shape=(0, 5))


def test_bbox_and_point_masks():
    m = bbox_to_mask([10, 20, 15, 22])
    assert m.shape == (300, 300) and m.sum() == 5 * 2
    e = mask_extent(m)
    assert (e["row_min"], e["row_max"], e["col_min"], e["col_max"]) == (20, 21, 10, 14)
    mi = bbox_to_mask([10, 20, 15, 22], inclusive=True)
    assert mi.sum() == 6 * 3 and mask_extent(mi)["row_max"] == 22
    assert (
        bbox_to_mask([0, 0, 300, 300]).all()
        and bbox_to_mask(np.array([0, 0, 299, 299]), inclusive=True).all()
    )
    assert bbox_to_mask([5, 5, 5, 5]).sum() == 0
    p = point_to_mask([7, 3])
    assert p.sum() == 1 and p[3, 7]
    assert mask_extent(np.zeros((2, 2), bool))["pixels"] == 0
    for bad, msg in [
        ([1, 2, 3], "4 values"),
        ([1, 2, 3, 4.5], "integers"),
        ([5, 0, 4, 10], "x1 <= x2"),
        ([0, 0, 301, 10], "outside the 300x300"),
        ("abcd", "sequence"),
    ]:
        with pytest.raises(ValueError, match=msg):
            bbox_to_mask(bad)
    with pytest.raises(ValueError, match="outside"):
        bbox_to_mask([0, 0, 300, 10], inclusive=True)
    for bad, msg in [
        ([300, 0], "outside"),
        ([-1, 0], "outside"),
        ([1], "2 values"),
        ([1.5, 2], "integers"),
    ]:
        with pytest.raises(ValueError, match=msg):
            point_to_mask(bad)


# ===========================================================================
# traj_data (synthetic)
# ===========================================================================
def test_synthetic_traj_roundtrip(tmp_path):
    raw = make_traj()
    raw["plan"]["low_actions"][0]["extra_key"] = {"kept": True}  # unknown keys survive
    raw["scene"]["object_poses"][0]["extra"] = 1  # a key literally named "extra" too
    t = TrajData.from_dict(raw)
    assert t.to_dict() == raw
    p = write_traj_data(t, tmp_path / "a" / "traj_data.json")
    assert json.loads(p.read_text()) == raw
    t2 = load_traj_data(p)
    assert t2 == t and load_traj_data(p.parent) == t
    write_traj_data(t2.to_dict(), p)
    assert load_traj_data(p) == t
    assert not list(p.parent.glob(".*tmp"))  # no temp files left
    assert t.plan.has_end and t.plan.num_subgoals == 4 and not t.is_test
    assert t.pddl_params.goal_object == "Mug" and t.scene.init_action["horizon"] == 30
    masks = list(t.iter_masks())
    assert [i for i, _, _ in masks] == [2, 5] and masks[0][2].sum() == 11 * 11
    assert t.low_actions[0].mask() is None and t.low_actions[2].bbox == [10, 21, 20, 31]
    check_rle_fields(t)

    test_raw = make_test_traj()
    tt = TrajData.from_dict(test_raw)
    assert tt.is_test and tt.task_type is None and tt.to_dict() == test_raw
    assert "votes" not in tt.to_dict()["turk_annotations"]["anns"][0]


def _mutated(fn):
    d = make_traj()
    fn(d)
    return d


@pytest.mark.parametrize(
    "mutate, field_path, problem",
    [
        (lambda d: d.pop("task_id"), "task_id", "required field is missing"),
        (lambda d: d.pop("task_type"), "task_type", "required field is missing"),
        (lambda d: d.update(task_type="pick_three"), "task_type", "unknown task type 'pick_three'"),
        (
            lambda d: d["scene"].pop("object_poses"),
            "scene.object_poses",
            "required field is missing",
        ),
        (lambda d: d["scene"].update(scene_num="5"), "scene.scene_num", "expected an integer"),
        (
            lambda d: d["scene"].update(floor_plan="FloorPlan6"),
            "scene.floor_plan",
            "does not match scene_num 5",
        ),
        (
            lambda d: d["scene"]["init_action"].pop("horizon"),
            "scene.init_action.horizon",
            "missing",
        ),
        (
            lambda d: d["pddl_params"].update(object_sliced="no"),
            "pddl_params.object_sliced",
            "expected a boolean",
        ),
        (
            lambda d: d["plan"]["low_actions"][1]["discrete_action"].update(action="Jump"),
            r"plan.low_actions\[1\].discrete_action.action",
            "unknown low-level action 'Jump'",
        ),
        (
            lambda d: d["plan"]["low_actions"][2]["discrete_action"]["args"].pop("mask"),
            r"plan.low_actions\[2\].discrete_action.args.mask",
            "required field is missing",
        ),
        (
            lambda d: d["plan"]["low_actions"][3].update(high_idx=9),
            r"plan.low_actions\[3\].high_idx",
            "not a high_pddl index",
        ),
        (
            lambda d: d["plan"]["high_pddl"][1].update(high_idx=3),
            r"plan.high_pddl\[1\].high_idx",
            "expected 1",
        ),
        (
            lambda d: d["plan"]["high_pddl"][0]["discrete_action"].update(action="Fly"),
            r"plan.high_pddl\[0\].discrete_action.action",
            "unknown high-level action",
        ),
        (lambda d: d["turk_annotations"].update(anns=[]), "turk_annotations.anns", "at least one"),
        (
            lambda d: d["turk_annotations"]["anns"][1]["high_descs"].append(3),
            r"turk_annotations.anns\[1\].high_descs\[4\]",
            "expected a string",
        ),
        (lambda d: d["images"][0].pop("image_name"), r"images\[0\].image_name", "missing"),
        (
            lambda d: d["scene"]["init_action"].update(x=float("nan")),
            "scene.init_action.x",
            "must be finite",
        ),
        (
            lambda d: d["scene"]["object_poses"][0]["position"].update(y=float("inf")),
            r"scene.object_poses\[0\].position.y",
            "must be finite",
        ),
    ],
)
def test_validation_errors_name_file_and_field(tmp_path, mutate, field_path, problem):
    p = tmp_path / "traj_data.json"
    p.write_text(json.dumps(_mutated(mutate)))
    with pytest.raises(
        TrajDataError, match=f"^{re.escape(str(p))}: {field_path}: .*{problem}"
    ) as ei:
        load_traj_data(p)
    assert isinstance(ei.value, ValueError)


def test_bad_files_raise(tmp_path):
    p = tmp_path / "traj_data.json"
    p.write_text("{not json")
    with pytest.raises(TrajDataError, match="invalid JSON"):
        load_traj_data(p)
    with pytest.raises(TrajDataError, match="not found"):
        load_traj_data(tmp_path / "nope.json")
    p.write_text("[1, 2]")
    with pytest.raises(TrajDataError, match="expected an object"):
        load_traj_data(p)
    with pytest.raises(TrajDataError):
        write_traj_data({"task_id": "x"}, tmp_path / "out.json")  # invalid dict is not written
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(TypeError):
        write_traj_data([1], tmp_path / "out.json")
    bad = make_traj()
    bad["plan"]["low_actions"][2]["discrete_action"]["args"]["mask"] = [[5, 0]]
    with pytest.raises(
        TrajDataError, match=r"low_actions\[2\].discrete_action.args.mask: .*length 0"
    ):
        check_rle_fields(TrajData.from_dict(bad))


def test_split_file_synthetic(tmp_path):
    p = tmp_path / "split.json"
    p.write_text(json.dumps({"valid_seen": [{"repeat_idx": 0, "task": "a/trial_1"}], "train": []}))
    s = load_split_file(p)
    assert list(s) == ["valid_seen", "train"] and s["valid_seen"] == [SplitEntry("a/trial_1", 0)]
    assert s["valid_seen"][0].traj_path("/d", "valid_seen") == Path(
        "/d/valid_seen/a/trial_1/traj_data.json"
    )
    for content, msg in [
        ({"train": {}}, "train: expected a list"),
        ({"train": [{"task": "x"}]}, r"train\[0\].repeat_idx: required field is missing"),
        ({"train": [{"task": "x", "repeat_idx": -1}]}, "non-negative integer"),
        (
            {"train": [{"task": 3, "repeat_idx": 0}]},
            r"train\[0\].task: expected a non-empty string",
        ),
        ([], "expected an object mapping split"),
    ]:
        p.write_text(json.dumps(content))
        with pytest.raises(TrajDataError, match=msg):
            load_split_file(p)


# ===========================================================================
# preprocessing (synthetic)
# ===========================================================================
def _check_pp(pp, traj: TrajData, vocab: AlfredVocab, r: int):
    ann = traj.anns[r]
    num = pp["num"]
    assert pp["repeat_idx"] == r and pp["ann"]["repeat_idx"] == r
    assert pp["ann"]["goal"][-1] == C.GOAL and pp["ann"]["instr"][-1] == [C.STOP]
    assert len(pp["ann"]["instr"]) == len(ann.high_descs) + 1 == len(num["lang_instr"])
    assert vocab.word.index2word(num["lang_goal"]) == [w.strip().lower() for w in pp["ann"]["goal"]]
    assert num["lang_goal"][-1] == C.GOAL_INDEX and num["lang_instr"][-1] == [
        vocab.word.word2index(C.STOP)
    ]
    for key in ("task_id", "scene", "turk_annotations"):
        assert pp[key] == traj.to_dict()[key]
    if traj.is_test:
        assert set(num) == {"lang_goal", "lang_instr"}
        return
    assert set(num) == {"lang_goal", "lang_instr", "action_low", "action_high", "low_to_high_idx"}
    n_low = len(traj.low_actions)
    flat = [e for seg in num["action_low"] for e in seg]
    assert len(flat) == n_low + 1 == len(num["low_to_high_idx"])
    assert len(num["action_low"]) == len(
        num["lang_instr"]
    )  # action segments align with instructions
    assert num["low_to_high_idx"] == [e["high_idx"] for e in flat]
    assert num["low_to_high_idx"] == sorted(num["low_to_high_idx"])
    for h, seg in enumerate(num["action_low"]):
        assert all(e["high_idx"] == h for e in seg)
    assert vocab.action_low.index2word(flat[-1]["action"]) == C.STOP and flat[-1]["mask"] is None
    assert num["action_low"][-1] == [flat[-1]]  # the End segment holds only <<stop>>
    for e, a in zip(flat, traj.low_actions):
        assert vocab.action_low.index2word(e["action"]) == a.action
        assert (
            e["valid_interact"] == int(a.is_interaction)
            and e["action_high_args"] == a.discrete_action.args
        )
        if a.is_interaction:
            assert e["mask"] == a.mask_rle
            x1, y1, x2, y2 = a.bbox
            assert e["centroid"] == [(x1 + x2) / 2 / 300, (y1 + y2) / 2 / 300]
        else:
            assert e["mask"] is None and e["centroid"] == [-1, -1]
    hp = pp["plan"]["high_pddl"]
    assert hp[-1]["planner_action"]["action"] == "End" and len(num["action_high"]) == len(hp)
    for ah, h in zip(num["action_high"], hp):
        assert vocab.action_high.index2word(ah["action"]) == h["discrete_action"]["action"]
        assert vocab.action_high.index2word(ah["action_high_args"]) == [
            x.lower() for x in h["discrete_action"]["args"]
        ]


def test_preprocess_synthetic():
    raw = make_traj()
    before = copy.deepcopy(raw)
    vocab = AlfredVocab.new()
    t = TrajData.from_dict(raw)
    pp = preprocess_traj(raw, vocab, 0, split="train", root="/data/task")
    assert raw == before  # input untouched
    _check_pp(pp, t, vocab, 0)
    assert pp["root"] == "/data/task" and pp["split"] == "train"
    assert pp["ann"]["goal"] == [
        " put ",
        " a ",
        " mug ",
        " on ",
        " the ",
        " shelf ",
        ". ",
        "<<goal>>",
    ]
    assert pp["num"]["low_to_high_idx"] == [0, 0, 1, 2, 2, 3, 4]
    assert tokens_of(vocab.action_high)[3:] == [
        "GotoLocation",
        "countertop",
        "PickupObject",
        "mug",
        "shelf",
        "PutObject",
        "NoOp",
    ]
    pp1 = preprocess_traj(t, vocab, 1)
    _check_pp(pp1, t, vocab, 1)
    assert "root" not in pp1 and vocab.word.index2word(pp1["num"]["lang_goal"][:3]) == [
        "move",
        "the",
        "mug",
    ]
    n_words = len(vocab.word)
    assert preprocess_traj(t, vocab, 0, grow=False)["num"] == pp["num"]  # same ids, no growth
    assert len(vocab.word) == n_words
    with pytest.raises(KeyError, match="not in the word vocabulary"):
        preprocess_traj(t, AlfredVocab.new(), 0, grow=False)
    with pytest.raises(ValueError, match="repeat_idx 2 out of range: turk_annotations.anns has 2"):
        preprocess_traj(t, vocab, 2)

    test_t = TrajData.from_dict(make_test_traj())
    _check_pp(preprocess_traj(test_t, vocab, 0, split="tests_seen"), test_t, vocab, 0)


def test_preprocess_appends_missing_end():
    raw = make_traj(with_end=False)
    t = TrajData.from_dict(raw)
    assert not t.plan.has_end and t.plan.num_subgoals == 4
    vocab = AlfredVocab.new()
    pp = preprocess_traj(t, vocab, 0)
    _check_pp(pp, t, vocab, 0)
    assert pp["plan"]["high_pddl"][-1] == {
        "discrete_action": {"action": "NoOp", "args": []},
        "planner_action": {"action": "End", "value": 1},
        "high_idx": 4,
    }
    assert len(raw["plan"]["high_pddl"]) == 4 and len(t.high_pddl) == 4  # originals untouched
    assert pp["num"]["low_to_high_idx"][-1] == 4


def test_preprocess_alignment_fix_and_mismatch():
    # one instruction fewer than subgoals: the last real subgoal (Put) merges into the Goto before it
    t = TrajData.from_dict(make_traj(n_descs=3))
    vocab = AlfredVocab.new()
    pp = preprocess_traj(t, vocab, 0)
    num = pp["num"]
    assert len(num["action_low"]) == len(num["lang_instr"]) == 4
    assert num["low_to_high_idx"] == [0, 0, 1, 2, 2, 2, 3]
    assert [vocab.action_low.index2word(e["action"]) for e in num["action_low"][2]] == [
        "RotateLeft_90",
        "MoveAhead_25",
        "PutObject",
    ]
    assert [h["high_idx"] for h in num["action_high"]] == [0, 1, 2, 2, 3]
    for h, seg in enumerate(num["action_low"]):
        assert all(e["high_idx"] == h for e in seg)
    with pytest.raises(ValueError, match="5 action segments .* vs 3 instruction segments"):
        preprocess_traj(TrajData.from_dict(make_traj(n_descs=2)), vocab, 0)
    with pytest.raises(ValueError, match="5 action segments .* vs 6 instruction segments"):
        preprocess_traj(TrajData.from_dict(make_traj(n_descs=5)), vocab, 0)


def test_preprocess_cli_synthetic(tmp_path, capsys):
    data = tmp_path / "json"
    write_traj_data(make_traj(), data / "train" / "pick_x" / "trial_1" / "traj_data.json")
    write_traj_data(make_test_traj(), data / "tests_seen" / "trial_2" / "traj_data.json")
    split = tmp_path / "split.json"
    split.write_text(
        json.dumps(
            {
                "train": [
                    {"repeat_idx": 1, "task": "pick_x/trial_1"},
                    {"repeat_idx": 0, "task": "pick_x/trial_1"},
                ],
                "tests_seen": [{"repeat_idx": 0, "task": "trial_2"}],
            }
        )
    )
    assert (
        preprocess_main(["--data", str(data), "--splits", str(split), "--quiet"]) == 0
    )  # next to trajs
    assert "wrote 3 pp files" in capsys.readouterr().out
    pp = json.loads((data / "train" / "pick_x" / "trial_1" / "pp" / "ann_1.json").read_text())
    assert pp["root"] == str(data / "pick_x" / "trial_1") and pp["split"] == "train"
    assert (data / "tests_seen" / "trial_2" / "pp" / "ann_0.json").exists()
    vocab = AlfredVocab.load(data / "pp.vocab")
    assert vocab.word.index2word(pp["num"]["lang_goal"][:3]) == ["move", "the", "mug"]
    out = tmp_path / "out"
    assert (
        preprocess_main(
            [
                "--data",
                str(data),
                "--splits",
                str(split),
                "--out",
                str(out),
                "--quiet",
                "--vocab-format",
                "json",
            ]
        )
        == 0
    )
    assert AlfredVocab.load(out / "pp.vocab.json") == vocab
    assert (out / "train" / "pick_x" / "trial_1" / "pp" / "ann_0.json").read_bytes() == (
        data / "train" / "pick_x" / "trial_1" / "pp" / "ann_0.json"
    ).read_bytes()
    split.write_text(json.dumps({"train": [{"repeat_idx": 0, "task": "missing/trial"}]}))
    assert (
        preprocess_main(["--data", str(data), "--splits", str(split), "--out", str(out), "--quiet"])
        == 1
    )
    assert "missing/trial" in capsys.readouterr().err


# ===========================================================================
# real fixtures (skip without ../shared)
# ===========================================================================
@pytest.fixture(scope="module")
def alfred_dir():
    shared = Path(__file__).resolve().parents[2] / "shared"
    d = shared / "data" / "alfred"
    if not d.is_dir():
        pytest.skip(f"ALFRED fixtures not available ({d} missing)")
    return d


@pytest.fixture(scope="module")
def fixture_files(alfred_dir):
    files = sorted((alfred_dir / "json_2.1.0").glob("**/traj_data.json"))
    assert len(files) == 12
    return files


@pytest.fixture(scope="module")
def fixture_trajs(fixture_files):
    return {f: load_traj_data(f) for f in fixture_files}


@pytest.fixture(scope="module")
def preprocessed(alfred_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("pp")
    vocab, written = preprocess_splits(
        alfred_dir / "json_2.1.0", alfred_dir / "splits_mini.json", out, progress=False
    )
    return out, vocab, written


def test_fixture_mask_expectations(alfred_dir):
    exp = json.loads((alfred_dir / "mask_fixture_expectations.json").read_text())
    assert len(exp) == 6
    for e in exp:
        t = load_traj_data(alfred_dir / e["file"])
        a = t.low_actions[e["low_idx"]]
        assert a.action == e["action"] and a.bbox == e["bbox"] and a.point == e["point"]
        assert len(a.mask_rle) == e["runs"]
        m = a.mask()
        ext = mask_extent(m)
        assert ext["pixels"] == e["mask_pixels"] == rle_pixel_count(a.mask_rle)
        for k in ("row_min", "row_max", "col_min", "col_max"):
            assert ext[k] == e[k], (e["file"], e["low_idx"], k)


def test_fixture_every_mask_roundtrips(fixture_trajs):
    n = 0
    for f, t in fixture_trajs.items():
        check_rle_fields(t)
        for i, a, m in t.iter_masks():
            n += 1
            assert m.shape == (300, 300) and m.any()
            assert compress_mask(m) == a.mask_rle, (f, i)
            ext = mask_extent(m)
            x1, y1, x2, y2 = a.bbox
            # §2.4 quirk: bbox x-range == mask column range; bbox y == mask row range + 1
            assert (x1, x2, y1, y2) == (
                ext["col_min"],
                ext["col_max"],
                ext["row_min"] + 1,
                ext["row_max"] + 1,
            )
            px, py = a.point
            assert m[py, px]  # the stored point lies on the mask
        for a in t.low_actions:
            assert a.is_interaction == ("mask" in a.discrete_action.args)
    assert n == 51


def test_fixture_traj_roundtrip(fixture_files, fixture_trajs, tmp_path):
    for i, f in enumerate(fixture_files):
        raw = json.loads(f.read_text())
        t = fixture_trajs[f]
        assert t.to_dict() == raw  # every field, ALFRED key names
        out = write_traj_data(t, tmp_path / str(i) / "traj_data.json")
        assert json.loads(out.read_text()) == raw
        t2 = load_traj_data(out)
        assert t2 == t
        for name in (
            "task_id",
            "task_type",
            "pddl_params",
            "scene",
            "plan",
            "images",
            "turk_annotations",
        ):
            assert getattr(t2, name) == getattr(t, name), (f, name)
        assert out.read_bytes() == f.read_bytes()  # same layout as the released files


def test_fixture_schema_facts(alfred_dir, fixture_trajs):
    types = set()
    for f, t in fixture_trajs.items():
        split = f.relative_to(alfred_dir / "json_2.1.0").parts[0]
        if split.startswith("tests"):
            assert t.is_test and t.task_type is None and all(a.votes is None for a in t.anns)
            continue
        types.add(t.task_type)
        assert t.scene.floor_plan == f"FloorPlan{t.scene.scene_num}"
        assert t.plan.has_end and t.low_actions[0].action == "LookDown_15"  # horizon 30 -> 45
        assert t.scene.dirty_and_empty == (t.task_type == "pick_clean_then_place_in_recep")
        assert bool(t.scene.object_toggles) == (t.task_type == "look_at_obj_in_light")
        for ann in t.anns:  # one description per subgoal, excluding the trailing End/NoOp
            assert len(ann.high_descs) == t.plan.num_subgoals == len(t.high_pddl) - 1
        assert {im.low_idx for im in t.images} == set(range(len(t.low_actions)))
        assert all(a.api_action["action"] == C.DISCRETE_TO_API[a.action] for a in t.low_actions)
    assert types == set(C.TASK_TYPES)


def test_fixture_split_file(alfred_dir):
    s = load_split_file(alfred_dir / "splits_mini.json")
    assert list(s) == ["train", "valid_seen", "valid_unseen", "tests_seen", "tests_unseen"]
    assert sum(len(v) for v in s.values()) == 36 and len(s["train"]) == 24
    for split, entries in s.items():
        for e in entries:
            t = load_traj_data(e.traj_path(alfred_dir / "json_2.1.0", split))
            assert e.repeat_idx < len(t.anns) and e.task.endswith(t.task_id)


def test_fixture_preprocess(alfred_dir, preprocessed, fixture_trajs):
    out, vocab, written = preprocessed
    assert len(written) == 36 and (out / "pp.vocab").exists()
    assert AlfredVocab.load(out / "pp.vocab") == vocab
    splits = load_split_file(alfred_dir / "splits_mini.json")
    data = alfred_dir / "json_2.1.0"
    for split, entries in splits.items():
        for e in entries:
            p = pp_path(out, split, e)
            pp = json.loads(p.read_text())
            t = fixture_trajs[e.traj_path(data, split)]
            _check_pp(pp, t, vocab, e.repeat_idx)
            assert pp["split"] == split and pp["root"] == str(data / e.task)
            raw = t.to_dict()
            assert all(pp[k] == raw[k] for k in raw)  # pp is the traj JSON plus the new fields
            if not t.is_test:
                assert len(pp["num"]["low_to_high_idx"]) == len(t.low_actions) + 1
                assert len(pp["num"]["action_low"]) == len(t.anns[e.repeat_idx].high_descs) + 1


def test_fixture_vocab_stats(alfred_dir, preprocessed):
    out, vocab, _ = preprocessed
    text = (alfred_dir / "vocab_stats.txt").read_text()
    al = ast.literal_eval(re.search(r"^action_low vocab 15 (\[.*\])$", text, re.M).group(1))
    assert al == tokens_of(vocab.action_low) == list(C.ACTION_LOW_VOCAB)
    wsize = int(re.search(r"^word vocab size (\d+)$", text, re.M).group(1))
    wfirst = ast.literal_eval(re.search(r"^word first 30 (\[.*\])$", text, re.M).group(1))
    assert tokens_of(vocab.word)[:3] == wfirst[:3] and 3 < len(vocab.word) <= wsize == 2360
    hm = re.search(r"^action_high vocab size (\d+) (\[.*\])$", text, re.M)
    assert tokens_of(vocab.action_high)[:3] == ast.literal_eval(hm.group(2))[:3]
    assert len(vocab.action_high) <= int(hm.group(1)) == 93
    # every high-level action name in the fixtures is an ALFRED high action; the rest are lower-case args
    for tok in tokens_of(vocab.action_high)[3:]:
        assert tok in C.HIGH_ACTION_SET or tok == tok.lower()
    # length maxima of the full train split bound the fixtures'
    goal_max = int(re.search(r"train goal len mean/max \S+ (\d+)", text).group(1))
    instr_max = int(re.search(r"train instr len mean/max \S+ (\d+)", text).group(1))
    act_max = int(
        re.search(r"train action seq len \(incl stop\) mean/max \S+ (\d+)", text).group(1)
    )
    for p in (out / "train").glob("**/pp/ann_*.json"):
        num = json.loads(p.read_text())["num"]
        assert len(num["lang_goal"]) <= goal_max
        assert sum(len(s) for s in num["lang_instr"]) <= instr_max
        assert len(num["low_to_high_idx"]) <= act_max


def test_fixture_dataset_stats_match_constants(alfred_dir):
    rows = {}
    for line in (alfred_dir / "dataset_stats_raw.txt").read_text().splitlines():
        key, _, rest = line.partition(" ")
        rows[key] = rest
    low = ast.literal_eval(rows["low_disc"])
    assert set(low) == set(C.LOW_ACTIONS)
    assert {C.DISCRETE_TO_API[k] for k in low} == set(ast.literal_eval(rows["low_api"]))
    # Open/CloseObject are in the §2.4 enum but never occur as subgoals in the released data
    assert set(ast.literal_eval(rows["high_disc"])) == C.HIGH_ACTION_SET - {
        "OpenObject",
        "CloseObject",
    }
    tt = ast.literal_eval(rows["TT"])
    assert set(tt["train"]) == set(C.TASK_TYPES)
    disc_args = ast.literal_eval(rows["DISC_ARGS"])
    for action, keysets in disc_args.items():
        assert set(keysets) == (
            {("bbox", "mask", "point")} if action in C.INTERACT_ACTION_SET else {()}
        )
