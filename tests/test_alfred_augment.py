"""Subgoal augmentation (alfred_task.gen.augment): one start state, several targets, the language and the
pickup mask tell them apart; the source dataset stays untouched and the trainers read the result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from alfred_task.data.il_dataset import AlfredILDataset, load_features


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from alfred_task.gen.generate import generate

    out = tmp_path_factory.mktemp("src")
    summary = generate(
        out, 1, seed=3, workers=1, features="random_resnet18", planner="template", split="train"
    )
    assert summary["splits"]["train"] == 3
    return out


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_variants_share_the_start_state_and_differ_in_target_language_and_mask(source, tmp_path):
    from alfred_task.gen.augment import augment
    from alfred_task.data.masks import decompress_mask

    before = _files(source)
    out = tmp_path / "aug"
    summary = augment(source, out, start=0, num=1, per_demo=2, seed=0)
    assert _files(source) == before  # nothing written into the source
    assert summary["augmented_trials"] == 2 and summary["splits"]["train"] == 3 * 3
    (src_file,) = list((source / "train").glob("*/*/traj_data.json"))
    src = json.loads(src_file.read_text())
    recs = [
        json.loads(p.read_text()) for p in sorted((out / ".progress" / "augment").glob("*.json"))
    ]
    trajs = [json.loads((out / "train" / r["task"] / "traj_data.json").read_text()) for r in recs]
    targets = [t["pddl_params"]["object_target"] for t in trajs]
    assert len(set(targets)) == 2 and src["pddl_params"]["object_target"] not in targets
    masks = []
    for t, target in zip(trajs, targets):
        assert t["scene"] == src["scene"]  # same objects and agent start pose
        high = [h["discrete_action"]["action"] for h in t["plan"]["high_pddl"]]
        assert high[-2:] == ["PickupObject", "NoOp"] and t["plan"]["high_pddl"][-2][
            "discrete_action"
        ]["args"] == [target.lower()]
        last = t["plan"]["low_actions"][-1]["discrete_action"]
        assert last["action"] == "PickupObject"
        masks.append(decompress_mask(last["args"]["mask"]))
        for ann in t["turk_annotations"]["anns"]:
            assert len(ann["high_descs"]) == len(high) - 1
            word = target.lower()
            assert word in ann["task_desc"].lower().replace(" ", "") and word in ann["high_descs"][
                -1
            ].lower().replace(" ", "")
    assert not np.array_equal(masks[0], masks[1])
    ds = AlfredILDataset(out, out / "splits.json", "train")
    assert len(ds) == 9
    aug = [ex for ex in ds.examples if ex.task in {r["task"] for r in recs}]
    assert len(aug) == 6 and all(load_features(ex).shape[0] == ex.num_steps for ex in aug)
    goals = {tuple(ex.lang_goal) for ex in aug}
    assert len(goals) > 1  # the goal words differ between targets
    # resumable: a second run does no work and changes nothing
    snapshot = {p: p.stat().st_mtime_ns for p in (out / "train").rglob("traj_data.json")}
    assert augment(source, out, start=0, num=1, per_demo=2, seed=0)["augmented_trials"] == 2
    assert {p: p.stat().st_mtime_ns for p in (out / "train").rglob("traj_data.json")} == snapshot


def test_bad_arguments_fail_in_one_line(source, tmp_path, capsys):
    from alfred_task.gen.augment import main

    assert main(["--source", str(source), "--out", str(source)]) == 2
    assert main(["--source", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert main(["--source", str(source), "--out", str(tmp_path / "o2"), "--no-features"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(
        line.startswith("python -m alfred_task.gen.augment: error:") for line in err
    )
    assert "must differ" in err[0] and "splits.json" in err[1] and "features" in err[2]
    assert not (tmp_path / "o").exists() and not (tmp_path / "o2").exists()


def test_side_by_side_calls_may_both_link_the_source(tmp_path):
    """Two augmentation calls over one --out link the same source trials; the slower one must not
    fail on a link the faster one made between its check and its own link (session 12: it did),
    but a link to anything else is still an error."""
    import os

    from alfred_task.gen.augment import symlink, link_source

    src = tmp_path / "src"
    trial = src / "train" / "pick_and_place_simple-Apple-None-Fridge-1" / "trial_a"
    trial.mkdir(parents=True)
    (trial / "traj_data.json").write_text("{}")
    out = tmp_path / "out"
    link_source(src, out)
    made = out / "train" / trial.parent.name / trial.name
    assert os.readlink(made) == str(trial.resolve())
    symlink(trial.resolve(), made)  # the race: the link already exists when this call makes it
    assert os.readlink(made) == str(trial.resolve())
    made.unlink()
    os.symlink(tmp_path, made)
    with pytest.raises(FileExistsError):
        symlink(trial.resolve(), made)
