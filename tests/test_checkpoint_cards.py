"""Shipped checkpoints describe themselves: a card `<name>.pt.json` beside each, read by the evaluators."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from common.checkpoint_card import CardError, card_path, read_card
from common.cli import UsageError

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "pretrained_model_ckpts"
REARRANGE = SHIPPED / "one_phase_rgb_dagger" / "thor_lite_one_object_slice.pt"
ALFRED = SHIPPED / "alfred_seq2seq_pm_gpu" / "alfred_seq2seq_pm_lite.pt"


def _tracked_checkpoints():
    out = subprocess.run(
        ["git", "ls-files", "pretrained_model_ckpts"], cwd=REPO, capture_output=True, text=True
    )
    if out.returncode != 0:  # not a git checkout (an unpacked tarball): every .pt on disk
        return sorted(p for p in SHIPPED.rglob("*.pt"))
    return sorted(REPO / line for line in out.stdout.splitlines() if line.endswith(".pt"))


def test_every_shipped_checkpoint_has_a_card_that_matches_it():
    ckpts = _tracked_checkpoints()
    assert len(ckpts) >= 4
    for ckpt in ckpts:
        card = read_card(ckpt)  # name, size and sha256 checked against the file
        assert card is not None, f"{ckpt} has no card {card_path(ckpt)}"
        assert card["sha256"] and card["size"] == ckpt.stat().st_size
        assert (REPO / card["config"]).is_file(), card["config"]
        assert card["trained_by"].startswith(("python", "STOP_AFTER", "bash"))


def _eval_args(**kw) -> argparse.Namespace:
    base = dict(
        gif=None,
        submission=None,
        table=None,
        episodes_per_scene=1,
        agents=["checkpoint"],
        checkpoint=str(REARRANGE),
        scenes=["FloorPlan21"],
        config=None,
        config_kwargs="{}",
        year=None,
        stage="val",
        seed=0,
    )
    base.update(kw)
    return argparse.Namespace(**base)


def test_rearrange_eval_takes_config_and_kwargs_from_the_card(capsys):
    from rearrange.eval import _prepare

    config, agent = _prepare(_eval_args())  # without the card: a size mismatch (224 px frames)
    assert type(config).__name__ == "OnePhaseRGBDaggerExperimentConfig"
    assert agent is not None
    assert "thor_lite_one_object_slice.pt.json" in capsys.readouterr().err


def test_explicit_kwargs_override_the_card_and_a_mismatch_is_one_line():
    from rearrange.eval import _prepare

    with pytest.raises(UsageError) as e:
        _prepare(_eval_args(config_kwargs='{"screen_size": 224}'))
    msg = str(e.value)
    assert "\n" not in msg
    assert "does not fit the config's model" in msg and "its card" in msg
    assert '"screen_size": 64' in msg  # says what the card would have used


def _copy_with_card(tmp_path: Path, src: Path, **changes) -> Path:
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    card = {**json.loads(card_path(src).read_text()), **changes}
    card_path(dst).write_text(json.dumps(card))
    return dst


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"checkpoint": "other.pt"}, "field 'checkpoint' names 'other.pt'"),
        ({"size": 5}, "field 'size' is 5"),
        ({"sha256": "0" * 64}, "field 'sha256' does not match"),
        ({"config_kwargs": [1]}, "field 'config_kwargs' must be a dict"),
        ({"task": "chess"}, "field 'task' is 'chess'"),
    ],
)
def test_a_card_for_another_file_or_malformed_is_one_clear_line(tmp_path, changes, words):
    ckpt = _copy_with_card(tmp_path, REARRANGE, **changes)
    with pytest.raises(CardError) as e:
        read_card(ckpt)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert str(card_path(ckpt)) in str(e.value)


def test_unreadable_card_and_no_card(tmp_path):
    ckpt = tmp_path / "x.pt"
    ckpt.write_bytes(b"weights")
    assert read_card(ckpt) is None  # no card: the evaluators fall back to their flags
    card_path(ckpt).write_text("{not json")
    with pytest.raises(CardError, match="not a readable JSON card"):
        read_card(ckpt)


def test_rearrange_eval_refuses_an_alfred_card(tmp_path):
    from rearrange.eval import _prepare

    ckpt = _copy_with_card(tmp_path, REARRANGE, task="alfred")
    with pytest.raises(UsageError, match="says task 'alfred'"):
        _prepare(_eval_args(checkpoint=str(ckpt)))


def test_alfred_evaluation_reads_the_card(tmp_path):
    from alfred_task.evaluation import cli

    args = cli.build_parser().parse_args(
        ["--agent", "checkpoint", "--checkpoint", str(ALFRED), "--data", "d", "--splits", "s"]
    )
    card = cli._checkpoint_card(args)
    assert card["config"] == "baseline_configs/alfred/alfred_seq2seq_pm_lite_gpu.py"
    kw = cli._agent_kwargs(args, card)
    assert kw["mask_rule"] == card["agent_kwargs"]["mask_rule"] and kw["path"] == str(ALFRED)
    args.agent_kwargs = '{"mask_rule": "threshold"}'  # the flag wins over the card
    assert cli._agent_kwargs(args, card)["mask_rule"] == "threshold"

    bad = _copy_with_card(tmp_path, ALFRED, task="rearrangement")
    args.checkpoint = str(bad)
    with pytest.raises(cli.EvalInputError, match="python -m rearrange.eval"):
        cli._checkpoint_card(args)
