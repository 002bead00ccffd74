"""Experiment configs: sampler arguments, machine params, pipelines, and the CLI exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from baseline_configs.one_phase.one_phase_rgb_dagger import OnePhaseRGBDaggerExperimentConfig
from baseline_configs.one_phase.one_phase_rgb_il_base import StepwiseLinearDecay
from baseline_configs.one_phase.one_phase_rgb_ppo import OnePhaseRGBPPOExperimentConfig
from baseline_configs.rearrange_base import partition_sequence
from baseline_configs.two_phase.two_phase_rgb_ppowalkthrough_ilunshuffle import (
    TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig,
)
from rearrange.constants import REARRANGE_ACTIONS

REPO = Path(__file__).resolve().parents[1]


def test_partition_sequence_is_contiguous_and_balanced():
    parts = partition_sequence(list(range(10)), 3)
    assert parts == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert sum(parts, []) == list(range(10))


def test_teacher_forcing_schedule():
    f = StepwiseLinearDecay(100, 200)
    assert f(0) == f(100) == 1.0
    assert f(200) == pytest.approx(0.5)
    assert f(300) == f(10_000) == 0.0


@pytest.mark.parametrize(
    "cls",
    [
        OnePhaseRGBDaggerExperimentConfig,
        OnePhaseRGBPPOExperimentConfig,
        TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig,
    ],
)
def test_configs_build_models_and_pipelines(cls):
    cfg = cls(num_train_processes=2, training_steps=1000)
    pipe = cfg.training_pipeline()
    assert pipe.pipeline_stages[0].max_stage_steps == 1000
    model = cfg.create_model()
    assert model.action_space.n == len(REARRANGE_ACTIONS) == 84
    mp = cfg.machine_params("train")
    if not torch.cuda.is_available():
        assert mp.devices == (torch.device("cpu"),) and sum(mp.nprocesses) == 2


def test_sampler_args_partition_scenes_and_hide_the_expert_outside_training():
    cfg = OnePhaseRGBDaggerExperimentConfig(num_train_processes=2, train_split="train_subset")
    a = cfg.train_task_sampler_args(0, 2)
    b = cfg.train_task_sampler_args(1, 2)
    assert set(a["scenes_to_task_spec_dicts"]).isdisjoint(b["scenes_to_task_spec_dicts"])
    assert len(a["scenes_to_task_spec_dicts"]) + len(b["scenes_to_task_spec_dicts"]) == 80
    assert a["epochs"] == float("inf") and a["seed"] != b["seed"]
    assert "expert_action" in a["sensors"].sensors
    t = cfg.test_task_sampler_args(0, 1)
    assert "expert_action" not in t["sensors"].sensors
    assert t["epochs"] == 1 and t["rearrange_env_kwargs"]["force_cache_reset"] is True
    v = cfg.valid_task_sampler_args(0, 1)
    assert all(
        len(eps) == 10 for eps in v["scenes_to_task_spec_dicts"].values()
    )  # indices 0,5,...,45


def test_real_thor_backend_fails_fast_with_a_reason():
    from backends import ThorUnavailableError, make_controller

    with pytest.raises(ThorUnavailableError, match="thor_lite"):
        make_controller("thor", width=64, height=64)
    with pytest.raises(ValueError, match="unknown simulator backend"):
        make_controller("unity")


def test_allenact_exits_nonzero_when_a_worker_crashes(tmp_path):
    """Plain allenact 0.5.4 exits 0 here; our compat layer turns worker failures into status 1."""
    kwargs = {
        "num_train_processes": 1,
        "training_steps": 64,
        "data_dir": str(tmp_path / "missing"),
        "train_split": "train_subset",
    }
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("allenact")),
            "-b",
            ".",
            "baseline_configs/one_phase/one_phase_rgb_dagger.py",
            "-o",
            str(tmp_path / "out"),
            "-s",
            "1",
            "--config_kwargs",
            json.dumps(kwargs),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "no such dataset file" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "cls, loss_name",
    [
        (OnePhaseRGBPPOExperimentConfig, "ppo_loss"),
        (TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig, "walkthrough_ppo_loss"),
    ],
)
def test_ppo_clip_decays_linearly_to_zero_over_training(cls, loss_name):
    """Official PPO settings: clip 0.1 scaled by a linear decay to 0 (also the 2-phase MaskedPPO)."""
    loss = cls(num_train_processes=1, training_steps=1000).training_pipeline().get_loss(loss_name)
    ppo = getattr(loss, "_ppo_loss", loss)
    assert ppo.clip_param == pytest.approx(0.1)
    assert [ppo.clip_decay(s) for s in (0, 500, 1000)] == pytest.approx([1.0, 0.5, 0.0])
