"""`experiments/alfred_seq2seq/subgoal_diag.py --task`: step logs of whole task episodes with the shipped
checkpoint on the shipped valid episodes, and the classification of the first pickup attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alfred_task.constants import INTERACT_ACTIONS
from conftest import load_script

REPO = Path(__file__).resolve().parents[1]
CKPT = REPO / "pretrained_model_ckpts" / "alfred_seq2seq_pm_gpu" / "alfred_seq2seq_pm_lite.pt"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def diag(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))  # as `python -m experiments...` from the root would
    return load_script(
        REPO / "experiments" / "alfred_seq2seq" / "subgoal_diag.py", "alfred_subgoal_diag_task"
    )


def _step(subgoal, action, target="Mug|1|2|3", hit=None, ok=False, visible=True):
    return {
        "subgoal": subgoal,
        "action": action,
        "target": target,
        "mask_object": hit,
        "ok": ok,
        "target_visible": visible,
    }


@pytest.mark.parametrize(
    "steps, expect",
    [
        ([_step("GotoLocation", "MoveAhead_25")], None),
        ([_step("PickupObject", "MoveAhead_25")], "no pickup attempt"),
        (
            [_step("PickupObject", "PickupObject", hit="Mug|1|2|3", ok=True)],
            "the target instance, succeeded, target visible",
        ),
        (
            [_step("PickupObject", "PickupObject", hit="Mug|9|9|9", ok=True, visible=False)],
            "another instance of the target type, succeeded, target not visible",
        ),
        (
            [
                _step("PickupObject", "PickupObject", hit="Fridge|0|0|0"),
                _step("PickupObject", "PickupObject", hit="Mug|1|2|3", ok=True),
            ],
            "another object, failed, target visible",
        ),
        ([_step("PickupObject", "PickupObject", hit=None)], "nothing, failed, target visible"),
    ],
)
def test_first_pickup_outcome_classifies_the_first_attempt_only(diag, steps, expect):
    assert diag.first_pickup_outcome({"steps": steps}) == expect


def test_task_mode_logs_every_step_of_real_episodes(diag, tmp_path):
    out = tmp_path / "diag"
    assert (
        diag.main(
            [
                "--task",
                "--checkpoint",
                str(CKPT),
                "--data",
                str(REPO / "data" / "alfred_lite"),
                "--split",
                "valid_seen",
                "--episodes",
                "2",
                "--max-steps",
                "12",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    recs = json.loads((out / "diag.json").read_text())["episodes"]
    assert len(recs) == 2
    for r in recs:
        assert r["end"] in ("stop", "max_fails", "max_steps")
        assert 1 <= len(r["steps"]) <= 12 and [s["t"] for s in r["steps"]] == list(
            range(len(r["steps"]))
        )
        assert (
            r["steps"][0]["subgoal_idx"] == 0
            and r["steps"][0]["subgoal"] == r["subgoals"][0] == "GotoLocation"
        )
        assert 0 <= r["subgoals_completed"] <= len(r["subgoals"])
        for s in r["steps"]:
            if s["action"] != "<<stop>>":
                assert isinstance(s["ok"], bool)
            assert ("mask_object" in s) == (s["action"] in INTERACT_ACTIONS)
    text = (out / "diag.md").read_text()
    assert "Subgoals completed:" in text and text.count("\n## ") == 2
