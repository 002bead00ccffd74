"""Every baseline config builds its model and drives a few rollout steps on thor_lite
(random-init visual trunks), and the pretrained-weights pre-flight fails fast and clearly."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pytest
import torch
from allenact.base_abstractions.misc import Memory
from allenact.utils.tensor_utils import batch_observations

from allenact_ext.visual_encoders import (
    ENCODERS,
    check_pretrained_weights,
    resnet_preprocessor_builder,
    weights_path,
)
from common.errors import PretrainedWeightsError

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {  # module under baseline_configs -> class
    "one_phase.one_phase_rgb_dagger": "OnePhaseRGBDaggerExperimentConfig",
    "one_phase.one_phase_rgb_ppo": "OnePhaseRGBPPOExperimentConfig",
    "one_phase.one_phase_rgb_resnet_dagger": "OnePhaseRGBResNetDaggerExperimentConfig",
    "one_phase.one_phase_rgb_resnet50_dagger": "OnePhaseRGBResNet50DaggerExperimentConfig",
    "one_phase.one_phase_rgb_clipresnet50_dagger": "OnePhaseRGBClipResNet50DaggerExperimentConfig",
    "one_phase.one_phase_rgb_resnet_ppo": "OnePhaseRGBResNetPPOExperimentConfig",
    "two_phase.two_phase_rgb_ppowalkthrough_ilunshuffle": "TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig",
    "two_phase.two_phase_rgb_resnet_ppowalkthrough_ilunshuffle": "TwoPhaseRGBResNetPPOWalkthroughILUnshuffleExperimentConfig",
    "walkthrough.walkthrough_rgb_ppo": "WalkthroughRGBPPOExperimentConfig",
    "walkthrough.walkthrough_rgb_resnet_ppo": "WalkthroughRGBResNetPPOExperimentConfig",
}
STEPS = 3


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """On 2 shared cores torch's 2 threads spin against each other (orthogonal init, convs: ~20x slower)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _config_class(module: str):
    return getattr(importlib.import_module(f"baseline_configs.{module}"), CONFIGS[module])


def _uses_features(cls) -> bool:
    return hasattr(cls, "VISUAL_ENCODER")


def _zero_memory(model) -> Memory:
    mem = Memory()
    for key, (dims, dtype) in model.recurrent_memory_specification.items():
        shape = [1 if name == "sampler" else size for name, size in dims]
        mem.check_append(
            key, torch.zeros(shape, dtype=dtype), [n for n, _ in dims].index("sampler")
        )
    return mem


def _rollout(cfg, steps: int) -> Dict[str, Any]:
    """`steps` policy steps of the config's own train sampler, preprocessor graph and model."""
    sampler = cfg.make_sampler_fn(**cfg.train_task_sampler_args(0, 1, seeds=[0]))
    try:
        graph = cfg.machine_params("train").sensor_preprocessor_graph  # built by MachineParams
        model = cfg.create_model(sensor_preprocessor_graph=graph).eval()
        task, memory = sampler.next_task(), _zero_memory(model)
        prev, mask, taken = torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, 1, 1), []
        for _ in range(steps):
            obs = batch_observations([task.get_observations()])
            if graph is not None:
                obs = graph.get_observations(obs)
            with torch.no_grad():
                out, memory = model({k: v.unsqueeze(0) for k, v in obs.items()}, memory, prev, mask)
            action = int(out.distributions.sample().item())
            assert torch.isfinite(out.values).all()
            task.step(action)
            taken.append(task.action_names()[action])
            prev, mask = torch.tensor([[action]]), torch.ones(1, 1, 1)
            if task.is_done():
                break
        return {"model": model, "obs": obs, "taken": taken, "task": task}
    finally:
        sampler.close()


@pytest.mark.parametrize("module", sorted(CONFIGS))
def test_config_builds_its_model_and_rolls_out_on_thor_lite(module):
    cls = _config_class(module)
    kwargs: Dict[str, Any] = {
        "num_train_processes": 1,
        "training_steps": 1000,
        "screen_size": 64,
        "train_split": "train_subset",
        "episodes_per_scene": 1,
        "train_scenes": ["FloorPlan1"],
    }
    if _uses_features(cls):
        kwargs["pretrained"] = False
    cfg = cls(**kwargs)
    assert cfg.training_pipeline().pipeline_stages[0].max_stage_steps == 1000
    result = _rollout(cfg, STEPS)
    model, obs = result["model"], result["obs"]
    assert model.action_space.n == len(cfg.actions())
    assert 1 <= len(result["taken"]) <= STEPS and result["task"].num_steps_taken() == len(
        result["taken"]
    )
    if _uses_features(cls):
        assert cfg.tag().endswith("-randinit")
        channels = ENCODERS[cls.VISUAL_ENCODER].channels
        for uuid in cfg.feature_uuids():
            assert tuple(obs[uuid].shape) == (1, channels, 2, 2)  # 64 px / 32
    if module.startswith("walkthrough"):
        assert (
            len(cfg.actions()) == 11 and cfg.thor_controller_kwargs("train")["snapToGrid"] is False
        )


def test_random_init_trunks_are_seeded():
    x = torch.randn(1, 64, 64, 3)
    feats = [
        resnet_preprocessor_builder("RN18", "rgb", 64, pretrained=False, seed=s)().process(
            {"rgb": x}
        )
        for s in (0, 0, 1)
    ]
    torch.testing.assert_close(feats[0], feats[1])
    assert not torch.allclose(feats[0], feats[2])


@pytest.fixture
def no_weights(tmp_path, monkeypatch):
    """Empty torch hub and clip caches (TORCH_HOME / HOME point into tmp_path)."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize("kind", sorted(ENCODERS))
def test_preflight_names_the_missing_weight_file_and_where_to_put_it(no_weights, kind):
    path = weights_path(kind)
    assert str(path).startswith(str(no_weights))
    with pytest.raises(PretrainedWeightsError, match="not found") as err:
        check_pretrained_weights(kind)
    message = str(err.value)
    assert (
        str(path) in message and ENCODERS[kind].url in message and '"pretrained": false' in message
    )
    assert "\n" not in message
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(PretrainedWeightsError, match="damaged"):
        check_pretrained_weights(kind)


def test_preflight_accepts_a_file_with_the_expected_digest(no_weights, monkeypatch):
    data = b"stand-in weights"
    spec = dataclasses.replace(ENCODERS["RN18"], sha256_prefix=hashlib.sha256(data).hexdigest()[:8])
    monkeypatch.setitem(ENCODERS, "RN18", spec)
    path = weights_path("RN18")
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    assert check_pretrained_weights("RN18") == path


@pytest.mark.parametrize(
    "module",
    ["one_phase.one_phase_rgb_resnet_dagger", "one_phase.one_phase_rgb_clipresnet50_dagger"],
)
def test_pretrained_config_without_weights_fails_at_construction(no_weights, module):
    with pytest.raises(
        PretrainedWeightsError, match=ENCODERS[_config_class(module).VISUAL_ENCODER].url
    ):
        _config_class(module)(num_train_processes=1)


def test_allenact_cli_without_weights_prints_one_line_and_exits_1(no_weights):
    start = time.monotonic()
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("allenact")),
            "-b",
            ".",
            "baseline_configs/one_phase/one_phase_rgb_resnet_dagger.py",
            "-o",
            str(no_weights / "out"),
            "--config_kwargs",
            json.dumps({"num_train_processes": 1}),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert "resnet18-f37072fd.pth" in last and "pretrained" in last
    assert (
        time.monotonic() - start < 100
    )  # nearly all of it is importing allenact (~20 s on a loaded 2-core box)
    assert not (no_weights / "out").exists() or not any((no_weights / "out").rglob("*.pt"))
