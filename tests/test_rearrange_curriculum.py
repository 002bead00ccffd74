"""The curriculum slice is what it claims to be, and its summaries use Wilson intervals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rearrange import curriculum as cur

SLICE = Path(__file__).resolve().parents[1] / "data" / "rearrange_curriculum"
OPEN_SLICE = SLICE.with_name(
    "rearrange_curriculum_open"
)  # the shipped agent's slice (openness changes only)


def test_an_empty_summary_has_no_rate_and_no_interval():
    empty = cur.summarize_ci([])
    assert empty["episodes"] == 0
    assert all(
        math.isnan(v)
        for key in ("fixed_strict", "success")
        for v in (empty[key]["pct"], *empty[key]["ci"])
    )


def test_summary_and_beats_use_the_intervals():
    def res(k, n):
        return [
            {"kind": "move", "fixed_strict": float(i < k), "success": float(i < k), "steps": 3.0}
            for i in range(n)
        ]

    strong, weak, close = (
        cur.summarize_ci(res(20, 60)),
        cur.summarize_ci(res(1, 60)),
        cur.summarize_ci(res(5, 60)),
    )
    assert (
        strong["fixed_strict"]["pct"] == pytest.approx(100 * 20 / 60) and strong["episodes"] == 60
    )
    assert cur.beats(strong, weak) and not cur.beats(close, weak) and not cur.beats(weak, strong)


@pytest.mark.parametrize("folder, kinds", [(SLICE, {"move", "open"}), (OPEN_SLICE, {"open"})])
def test_shipped_slice_is_one_object_and_held_out_is_disjoint(folder, kinds):
    train, held = cur.load_slice(folder, "train"), cur.load_slice(folder, "val")
    assert list(train) == list(held)
    for data in (train, held):
        for eps in data.values():
            assert all(e["position_diff_count"] + e["open_diff_count"] == 1 for e in eps)
            assert {cur.episode_kind(e) for e in eps} == kinds

    def key(e):
        return json.dumps(
            [e["agent_position"], e["target_poses"], e["openable_data"]], sort_keys=True
        )

    assert not {key(e) for v in train.values() for e in v} & {
        key(e) for v in held.values() for e in v
    }


def test_asking_for_more_episodes_than_the_files_hold_never_overwrites_them(tmp_path):
    """The slice files are tracked data: a slice bigger than they hold is a clear error naming
    the file and the shortfall, and both files keep their bytes (no regeneration over them)."""
    import shutil

    for name in ("train.pkl.gz", "val.pkl.gz"):
        shutil.copy(SLICE / name, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    held = cur.load_slice(SLICE, "val")
    have = sum(cur.episode_kind(e) == "open" for e in held["FloorPlan401"])
    spec = cur.SliceSpec(("FloorPlan401",), 1, have + 1, ("open",))
    with pytest.raises(
        cur.SliceDataError,
        match=rf"val.pkl.gz: FloorPlan401 has {have} episodes of kinds open, "
        rf"the slice asks for {have + 1}",
    ):
        cur.make_slice(spec, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    (tmp_path / "train.pkl.gz").unlink()
    with pytest.raises(cur.SliceDataError, match="exists without its partner"):
        cur.make_slice(spec, tmp_path)
    train, val = cur.make_slice(cur.SliceSpec(("FloorPlan401",), 0, have, ("open",)), SLICE)
    assert len(val["FloorPlan401"]) == have and all(
        cur.episode_kind(e) == "open" for e in val["FloorPlan401"]
    )


HELD_OUT_SCENES_SLICE = SLICE.with_name("rearrange_heldout_bathrooms")
# Fixed before the agent trained on it (docs/rearrangement.md, "Learning, measured"): a changed
# byte means the held-out set is no longer the one the table was measured on.
HELD_OUT_SCENES_SHA256 = {
    "train.pkl.gz": "a528c9a08ac2875ca9b43cea41e66111a896310ae7d89b9f30e3442f6f452366",
    "val.pkl.gz": "89137641745fcf22cdb347820478b084e1604fdc935944a2c596ef9901849ba3",
}


def test_held_out_scene_slice_uses_the_official_split_and_is_pinned():
    from rearrange.constants import scenes_for_stage
    from rearrange.protocol import sha256_of

    for name, digest in HELD_OUT_SCENES_SHA256.items():
        assert sha256_of(HELD_OUT_SCENES_SLICE / name) == digest
    train = cur.load_slice(HELD_OUT_SCENES_SLICE, "train")
    held = cur.load_slice(HELD_OUT_SCENES_SLICE, "val")
    bathrooms = {f"FloorPlan{400 + i}" for i in range(1, 31)}
    assert set(train) == set(scenes_for_stage("train")) & bathrooms
    assert set(held) == set(scenes_for_stage("val")) & bathrooms
    for data, per_scene in ((train, 15), (held, 30)):
        for eps in data.values():
            assert len(eps) == per_scene
            assert all(e["position_diff_count"] == 0 and e["open_diff_count"] == 1 for e in eps)
    spec = cur.SliceSpec(tuple(train), 15, 30, ("open",), 50, 0, tuple(held))
    assert cur.make_slice(spec, HELD_OUT_SCENES_SLICE)[1] == held
    assert cur.held_out_of(spec, held) == held


def test_held_out_scenes_must_not_be_training_scenes():
    with pytest.raises(ValueError, match="must not be training scenes: FloorPlan402"):
        cur.SliceSpec(("FloorPlan401", "FloorPlan402"), 1, 1, ("open",), 50, 0, ("FloorPlan402",))
    spec = cur.SliceSpec(("FloorPlan401",), 1, 1, ("open",), 50, 0, ("FloorPlan421",))
    assert spec.eval_scenes == ("FloorPlan421",) and "unseen scenes FloorPlan421" in spec.describe()
    assert cur.SliceSpec(("FloorPlan401",), 1, 1).eval_scenes == ("FloorPlan401",)


def test_the_larger_held_out_scene_training_file_extends_the_pinned_one():
    """data/rearrange_heldout_bathrooms_60 (60 training episodes per training scene, generated
    for the four-times-the-data run before it trained): its held-out file is byte for byte the
    pinned one, and its first 15 episodes per scene are the pinned training file's."""
    from rearrange.protocol import sha256_of

    larger = SLICE.with_name("rearrange_heldout_bathrooms_60")
    assert sha256_of(larger / "val.pkl.gz") == HELD_OUT_SCENES_SHA256["val.pkl.gz"]
    assert (
        sha256_of(larger / "train.pkl.gz")
        == "6aade92da73b8ce4bb039d157f7c579d2d5c64e747b810b6f3fea59d5c070fa3"
    )
    small = cur.load_slice(HELD_OUT_SCENES_SLICE, "train")
    big = cur.load_slice(larger, "train")
    assert set(big) == set(small)
    for scene, eps in big.items():
        assert len(eps) == 60 and eps[:15] == small[scene]
        assert all(e["position_diff_count"] == 0 and e["open_diff_count"] == 1 for e in eps)
