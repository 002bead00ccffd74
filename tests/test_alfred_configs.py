"""ALFRED Seq2Seq(+PM) AllenAct configs end to end on a tiny generated dataset (CI keeps the
pipeline from rotting): imitation training, ``allenact --eval`` with ALFRED's metrics,
``python -m alfred_task.evaluation --agent checkpoint`` on the run's own checkpoint, a short DAgger run,
and one-line failures for bad config kwargs. Everything uses the seeded random ResNet-18."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
ENCODER = "random_resnet18"
LITE = {"model_size": "lite", "demb": 16, "dhid": 24, "dframe": 32, "pframe": 50}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Two train and one valid_seen demonstration with features, made by the repo's generator."""
    from alfred_task.gen.generate import generate

    out = tmp_path_factory.mktemp("alfred_ds")
    generate(out, 2, seed=0, features=ENCODER, planner="template", split="train")
    generate(out, 1, seed=0, features=ENCODER, planner="template", split="valid_seen")
    return out


def _kwargs(dataset: Path, **extra) -> dict:
    return {
        "data_root": str(dataset),
        "visual_encoder": ENCODER,
        **LITE,
        "num_test_processes": 1,
        "test_limit": 1,
        "max_steps": 8,
        **extra,
    }


def _allenact(cfg: str, out: Path, kwargs: dict, *extra: str) -> str:
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("allenact")),
            "-b",
            ".",
            f"baseline_configs/alfred/{cfg}.py",
            "-o",
            str(out),
            "-s",
            "1",
            "--config_kwargs",
            json.dumps(kwargs),
            *extra,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    return log


def _losses(log: str, name: str) -> list:
    return [float(v) for v in re.findall(rf"seq2seq/{name} ([0-9.e+-]+)", log)]


def _checkpoint(out: Path) -> Path:
    found = sorted(out.glob("checkpoints/*/*/*.pt"))
    assert found, f"no checkpoint under {out}"
    return found[-1]


@pytest.mark.slow
def test_imitation_trains_evaluates_and_its_checkpoint_runs_in_alfred_eval(dataset, tmp_path):
    out = tmp_path / "il"
    kw = _kwargs(dataset, training_frames=60, batch_size=2)
    log = _allenact("alfred_seq2seq_pm_il", out, kw)
    assert _losses(log, "action_low") and _losses(log, "progress_aux")  # PM terms trained
    ckpt = _checkpoint(out)
    record = torch.load(ckpt, weights_only=True)["model_state_dict"]["_extra_state"]
    assert (
        record["kwargs"]["visual_encoder"] == ENCODER
        and record["kwargs"]["model_kwargs"]["dhid"] == 24
    )

    _allenact("alfred_seq2seq_pm_il", out, kw, "--eval", "-c", str(ckpt), "--deterministic_agents")
    from alfred_task.evaluation.allenact_metrics import main as summarize

    metrics = sorted(out.glob("metrics/*/*/metrics__test_*.json"))[-1]
    assert summarize([str(metrics)]) == 0
    table = json.loads(metrics.with_name("alfred_metrics.json").read_text())
    row = table["results"][0]
    assert (
        row["episodes"] == 1
        and 0.0 <= row["GC"] <= 1.0
        and 0.0 <= row["PLW_GC"] <= row["GC"] + 1e-9
    )
    # the seeded tiny run interacts (3 times); every interaction sent the model's own mask, as ALFRED evaluates
    assert row["interactions"] > 0 and row["model_mask_interactions"] == row["interactions"]
    assert table["run_config_kwargs"]["visual_encoder"] == ENCODER

    from alfred_task.evaluation.cli import main as alfred_eval

    res_dir = tmp_path / "eval"
    assert (
        alfred_eval(
            [
                "--agent",
                "checkpoint",
                "--checkpoint",
                str(ckpt),
                "--data",
                str(dataset),
                "--splits",
                str(dataset / "splits.json"),
                "--split",
                "valid_seen",
                "--limit",
                "1",
                "--max-steps",
                "5",
                "--out",
                str(res_dir),
                "--quiet",
            ]
        )
        == 0
    )
    res = json.loads(next(res_dir.glob("task_results_valid_seen_*.json")).read_text())
    assert res["agent"]["visual_encoder"]["name"] == ENCODER and res["results"]["all"]


@pytest.mark.slow
def test_dagger_learner_acts_with_expert_labels_and_decaying_teacher_forcing(dataset, tmp_path):
    out = tmp_path / "dagger"
    kw = _kwargs(
        dataset,
        training_frames=32,
        num_steps=16,
        num_train_processes=1,
        bc_tf1_steps=0,
        dagger_steps=32,
        max_steps=20,
    )
    log = _allenact("alfred_seq2seq_pm_dagger", out, kw)
    enforced = [float(v) for v in re.findall(r"teacher_ratio/enforced ([0-9.e+-]+)", log)]
    assert len(enforced) == 2 and enforced[0] > enforced[1]  # teacher forcing decays
    assert _losses(log, "action_low") and _losses(log, "subgoal_aux")
    state = torch.load(_checkpoint(out), weights_only=True)["model_state_dict"]
    assert any(k.startswith("seq2seq.dec.mask_dec") for k in state)


@pytest.mark.slow
def test_dagger_with_demo_data_root_trains_on_demonstrations_beside_online_frames(
    dataset, tmp_path
):
    """DAgger's aggregation: each update has an online and a demonstration component; the stage
    still ends after the online frames asked for."""
    out = tmp_path / "dagger_demos"
    kw = _kwargs(
        dataset,
        training_frames=32,
        num_steps=16,
        num_train_processes=1,
        bc_tf1_steps=0,
        dagger_steps=32,
        max_steps=20,
        batch_size=2,
        demo_data_root=str(dataset),
    )
    log = _allenact("alfred_seq2seq_pm_dagger", out, kw)
    served = [
        (int(a), int(b)) for a, b in re.findall(r"\{'onpolicy': (\d+), 'demos': (\d+)\}", log)
    ]
    assert [a for a, _ in served] == [16, 32] and 0 < served[0][1] < served[1][
        1
    ]  # demo frames per update
    assert (
        len(_losses(log, "action_low")) == 2
        and len(re.findall(r"demos/action_low_mask [0-9.]+", log)) == 2
    )
    assert re.search(r"demos/progress_aux [0-9.]+", log)  # ALFRED's offline loss, PM terms included


def test_dagger_demo_data_root_errors_are_one_line(dataset, tmp_path):
    from baseline_configs.alfred.alfred_seq2seq_pm_dagger import AlfredSeq2SeqPMDaggerConfig

    with pytest.raises(
        SystemExit, match=r"alfred config: demo_splits: .*nowhere.*splits.json not found"
    ):
        AlfredSeq2SeqPMDaggerConfig(**_kwargs(dataset, demo_data_root=str(tmp_path / "nowhere")))
    other = tmp_path / "other"
    other.mkdir()
    (other / "splits.json").write_text("{}")
    with pytest.raises(
        SystemExit,
        match=r"alfred config: demo_data_root: .*other and data_root .* must share one "
        r"vocabulary: pass vocab",
    ):
        AlfredSeq2SeqPMDaggerConfig(**_kwargs(dataset, demo_data_root=str(other)))
    with pytest.raises(
        SystemExit, match="alfred config: visual_encoder 'random_resnet18:7' is not the encoder"
    ):
        AlfredSeq2SeqPMDaggerConfig(
            **_kwargs(dataset, visual_encoder="random_resnet18:7", demo_data_root=str(dataset))
        )


def test_dagger_policy_trains_with_frozen_batchnorm_unless_asked(dataset):
    """Online rollouts are too few episodes for batch statistics (see alfred_task.models.actor_critic)."""
    from baseline_configs.alfred.alfred_seq2seq_il import AlfredSeq2SeqILConfig
    from baseline_configs.alfred.alfred_seq2seq_pm_dagger import AlfredSeq2SeqPMDaggerConfig

    def bn_training(cfg) -> list:
        model = cfg.create_model().train()
        return [
            m.training
            for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
        ]

    assert (
        bn_training(AlfredSeq2SeqPMDaggerConfig(**_kwargs(dataset))) == [False] * 4
    )  # visual encoder + mask decoder
    assert (
        bn_training(AlfredSeq2SeqPMDaggerConfig(**_kwargs(dataset, freeze_batchnorm=False)))
        == [True] * 4
    )
    assert bn_training(AlfredSeq2SeqILConfig(**_kwargs(dataset))) == [True] * 4
    with pytest.raises(SystemExit, match="alfred config: freeze_batchnorm: 'yes'"):
        AlfredSeq2SeqPMDaggerConfig(**_kwargs(dataset, freeze_batchnorm="yes"))


def test_a_moved_encoder_file_is_the_same_encoder_other_weights_are_not(tmp_path):
    """Datasets record a file encoder by its weights' digest: the shipped copy of the file (another
    path, same numbers) is accepted, another file with other weights is not."""
    import shutil

    import torchvision

    from alfred_task.gen.generate import generate
    from baseline_configs.alfred.alfred_seq2seq_il import AlfredSeq2SeqILConfig

    def save(seed: int, path: Path) -> Path:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
        return path

    enc = save(1, tmp_path / "enc.pt")
    ds = tmp_path / "ds"
    generate(ds, 1, seed=0, features=str(enc), planner="template", split="train")
    moved = tmp_path / "elsewhere" / "enc.pt"
    moved.parent.mkdir()
    shutil.move(enc, moved)
    AlfredSeq2SeqILConfig(**_kwargs(ds, visual_encoder=str(moved)))
    with pytest.raises(SystemExit, match="is not the encoder that made"):
        AlfredSeq2SeqILConfig(**_kwargs(ds, visual_encoder=str(save(2, tmp_path / "other.pt"))))


def test_bad_kwargs_fail_in_one_line(dataset, tmp_path, monkeypatch):
    from baseline_configs.alfred.alfred_seq2seq_il import AlfredSeq2SeqILConfig

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "no_torch_home"))  # no ImageNet weights there
    cases = [
        ({"visual_encoder": "imagenet"}, "resnet18-f37072fd.pth"),
        ({"visual_encoder": "random_resnet18:3"}, "is not the encoder that made"),
        ({"ablation": "no_eyes"}, "ablation"),
        ({"data_root": str(tmp_path / "nowhere")}, "splits"),
        ({"sampler_torch_threads": 0}, "sampler_torch_threads"),
        ({"prev_action_input": "gold"}, "prev_action_input"),
        ({"mask_dice_weight": -1}, "mask_dice_weight"),
        ({"mask_dice_weight": "lots"}, "mask_dice_weight"),
        ({"spatial_mask": "yes"}, "spatial_mask"),
        ({"subcell_mask": 1}, "subcell_mask"),
        ({"lr": "fast"}, "lr: 'fast' is not a number"),
        ({"bogus": 1}, "unknown option 'bogus'"),
        ({"bc_tf1_steps": 0}, "unknown option 'bc_tf1_steps'"),
    ]  # a DAgger option, not imitation's
    for extra, needle in cases:
        with pytest.raises(SystemExit) as e:
            AlfredSeq2SeqILConfig(**{**_kwargs(dataset), **extra})
        msg = str(e.value)
        assert needle in msg and msg.startswith("alfred config:") and "\n" not in msg


def test_alfred_summary_is_micro_gc_and_expert_length_weighted(tmp_path):
    from alfred_task.evaluation.allenact_metrics import alfred_summary, main as summarize

    # episode A: success, 2/2 conditions, L*=10 in 20 steps; episode B: 1/4 conditions, L*=30 in 15 steps
    tasks = [
        {
            "success": 1.0,
            "gc_completed": 2.0,
            "gc_total": 2.0,
            "expert_len": 10.0,
            "plw_success_num": 1.0 * 0.5 * 10,
            "plw_gc_num": 1.0 * 0.5 * 10,
        },
        {
            "success": 0.0,
            "gc_completed": 1.0,
            "gc_total": 4.0,
            "expert_len": 30.0,
            "plw_success_num": 0.0,
            "plw_gc_num": 0.25 * 1.0 * 30,
        },
    ]
    s = alfred_summary(tasks)
    assert s["SR"] == 0.5 and s["GC"] == pytest.approx(3 / 6)  # micro: not the mean of 1.0 and 0.25
    assert s["PLW_SR"] == pytest.approx(5 / 40) and s["PLW_GC"] == pytest.approx((5 + 7.5) / 40)
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps([{"no_tasks": 1}]))
    assert summarize([str(bad)]) == 2 and not (tmp_path / "alfred_metrics.json").exists()
