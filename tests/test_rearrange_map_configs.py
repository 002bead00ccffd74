"""The Active Neural SLAM map family: weight pre-flight, map frames, map targets on thor_lite,
rollouts of the frozen-map configs, and walkthrough mapping training whose exported map loads
into both frozen-map models (random-init weights throughout: nothing can be downloaded here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from baseline_configs.one_phase.one_phase_rgb_resnet_frozen_map_dagger import (
    OnePhaseRGBResNetFrozenMapDaggerExperimentConfig as OnePhaseMap,
)
from baseline_configs.two_phase.two_phase_rgb_resnet_frozen_map_ppowalkthrough_ilunshuffle import (
    TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffleExperimentConfig as TwoPhaseMap,
)
from baseline_configs.walkthrough.walkthrough_rgb_mapping_ppo import (
    WalkthroughRGBMappingPPOExperimentConfig as WalkthroughMap,
)
from allenact.base_abstractions.misc import Memory
from allenact.utils.tensor_utils import batch_observations
from rearrange.map_models import MAP_MEMORY_KEY, egocentric_view, map_frame_poses
from rearrange.map_settings import DOWNLOAD_COMMAND, MAP_CHECKPOINT_NAME

REPO = Path(__file__).resolve().parents[1]
SMALL = {
    "num_train_processes": 1,
    "train_split": "train_subset",
    "train_scenes": ["FloorPlan1"],
    "episodes_per_scene": 1,
}


# --- pre-flight -------------------------------------------------------------------------------
def _preflight_error(capsys, cls, **kwargs) -> str:
    with pytest.raises(SystemExit) as exc:
        cls(**kwargs)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_missing_map_checkpoint_names_the_file_and_the_download_command(capsys, tmp_path):
    missing = tmp_path / MAP_CHECKPOINT_NAME
    for cls in (OnePhaseMap, TwoPhaseMap):
        err = _preflight_error(capsys, cls, map_checkpoint=str(missing))
        assert str(missing) in err and DOWNLOAD_COMMAND in err and '"pretrained": false' in err


def test_unreadable_or_foreign_map_checkpoints_are_rejected(capsys, tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(os.urandom(2048))
    assert "cannot load" in _preflight_error(capsys, OnePhaseMap, map_checkpoint=str(junk))
    foreign = tmp_path / "foreign.pt"
    torch.save({"weight": torch.zeros(3)}, foreign)
    assert "missing keys" in _preflight_error(capsys, OnePhaseMap, map_checkpoint=str(foreign))
    trainer = tmp_path / "trainer.pt"
    torch.save({"model_state_dict": {}}, trainer)
    assert "rearrange.export_map" in _preflight_error(
        capsys, TwoPhaseMap, map_checkpoint=str(trainer)
    )


def test_missing_imagenet_weights_stop_the_walkthrough_mapping_config(capsys, tmp_path):
    err = _preflight_error(capsys, WalkthroughMap, resnet_weights=str(tmp_path / "resnet18.pth"))
    assert "resnet18-f37072fd.pth" in err and str(tmp_path / "resnet18.pth") in err


def test_random_init_is_recorded_in_the_tag_and_screen_size_is_fixed():
    cfg = OnePhaseMap(pretrained=False, **SMALL)
    assert cfg.tag() == "OnePhaseRGBResNetFrozenMapDagger_40proc_random_init"
    with pytest.raises(ValueError, match="screen_size must be 224"):
        OnePhaseMap(pretrained=False, screen_size=64)


def test_allenact_cli_preflight_is_one_line_without_traceback(tmp_path):
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("allenact")),
            "-b",
            ".",
            "baseline_configs/two_phase/two_phase_rgb_resnet_frozen_map_ppowalkthrough_ilunshuffle.py",
            "-o",
            str(tmp_path / "out"),
            "--config_kwargs",
            json.dumps({"map_checkpoint": str(tmp_path / "no.pt")}),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"{tmp_path / 'no.pt'}" in proc.stderr and DOWNLOAD_COMMAND in proc.stderr
    assert not (tmp_path / "out").exists()


# --- map frames -------------------------------------------------------------------------------
def test_egomotion_moves_the_agent_in_the_map_frame():
    """THOR rotation 90 faces +x: one step ahead must move the ANM pose +0.25 m in x (map frame)."""
    from allenact.embodiedai.mapping.mapping_models.active_neural_slam import ActiveNeuralSLAM
    from allenact_plugins.ithor_plugin.ithor_sensors import RelativePositionChangeTHORSensor

    start, end = np.array([1.0, 2.0, 90.0]), np.array([1.25, 2.0, 90.0])
    d = RelativePositionChangeTHORSensor.get_relative_position_change(start, end)
    obs = {
        "rel_position_change": {
            "last_allocentric_position": torch.tensor(start).view(1, 1, 3),
            "dx_dz_dr": torch.tensor(d).view(1, 1, 3),
        },
        "scene_bounds": {
            "x_range": torch.tensor([-1.0, 3.0]).view(1, 1, 2),
            "z_range": torch.tensor([0.5, 4.0]).view(1, 1, 2),
        },
    }
    last, delta = map_frame_poses(obs)
    assert last[0, 0].tolist() == pytest.approx([2.0, 1.5, -90.0])
    new = ActiveNeuralSLAM.update_allocentric_xzrs_with_egocentric_movement(last[0], delta[0])
    assert new[0].tolist() == pytest.approx([2.25, 1.5, -90.0], abs=1e-5)
    # a right turn (THOR +90) is a -90 turn in the map's counter-clockwise convention
    d = RelativePositionChangeTHORSensor.get_relative_position_change(
        start, np.array([1.0, 2.0, 180.0])
    )
    obs["rel_position_change"]["dx_dz_dr"] = torch.tensor(d).view(1, 1, 3)
    last, delta = map_frame_poses(obs)
    new = ActiveNeuralSLAM.update_allocentric_xzrs_with_egocentric_movement(last[0], delta[0])
    assert new[0, 2].item() == pytest.approx(-180.0) or new[0, 2].item() == pytest.approx(180.0)


@pytest.fixture(scope="module")
def anm():
    from rearrange.map_weights import build_active_neural_slam

    return build_active_neural_slam(seed=0)


def test_random_map_init_is_seeded(anm):
    from rearrange.map_weights import build_active_neural_slam

    again, other = (
        build_active_neural_slam(seed=0).state_dict(),
        build_active_neural_slam(seed=1).state_dict(),
    )
    assert all(torch.equal(v, again[k]) for k, v in anm.state_dict().items())
    assert not torch.equal(anm.state_dict()["proj1.weight"], other["proj1.weight"])


def test_egocentric_view_reads_back_what_was_placed_at_a_pose(anm):
    """An egocentric update placed into the allocentric map at a pose is cropped back at that
    pose; AllenAct's own crop finds it only at the pose mirrored about the map centre."""
    from allenact.embodiedai.mapping.mapping_models.active_neural_slam import (
        _move_egocentric_map_view_into_allocentric_position as place,
    )

    ego = torch.zeros(1, 1, 40, 40)
    ego[0, 0, 5:15, 8:30] = 1.0  # an asymmetric pattern, so rotations and flips show
    ego[0, 0, 25:35, 25:32] = 1.0

    def similarity(view: torch.Tensor) -> float:
        return float(torch.nn.functional.cosine_similarity(view.flatten(), ego.flatten(), dim=0))

    for rot in (0.0, -90.0, 180.0):
        xzr = torch.tensor([[4.0, 5.5, rot]])
        allo = place(ego, xzr, (anm.map_size, anm.map_size), anm.resolution_in_cm)
        assert similarity(egocentric_view(anm, allo, xzr)) > 0.99, rot
        assert similarity(egocentric_view(anm, allo, xzr, match_placement=False)) < 0.1, rot
        mirrored = torch.tensor([[10.5 - 4.0, 10.5 - 5.5, rot]])
        assert similarity(egocentric_view(anm, allo, mirrored, match_placement=False)) > 0.99, rot


# --- map targets on thor_lite -----------------------------------------------------------------
def test_map_targets_see_free_space_and_objects_on_thor_lite():
    cfg = WalkthroughMap(pretrained=False, **SMALL)
    sampler = cfg.make_sampler_fn(**cfg.train_task_sampler_args(0, 1))
    try:
        task = sampler.next_task()
        seen: List[Dict[str, Any]] = [task.get_observations()]
        for _ in range(3):
            seen.append(task.step(cfg.actions().index("rotate_right")).observation)
    finally:
        sampler.close()
    floor = sum(float(o["binned_pc_map"]["egocentric_update"][..., 0].sum()) for o in seen)
    objects = np.stack([o["semantic_map"]["egocentric_update"] for o in seen]).any(axis=(0, 1, 2))
    assert seen[0]["binned_pc_map"]["egocentric_update"].shape == (40, 40, 3)
    assert floor > 0 and 0 < objects.sum() < len(objects)
    assert seen[0]["depth"].shape == (224, 224, 1) and seen[0]["rel_position_change"][
        "dx_dz_dr"
    ].shape == (3,)


# --- rollouts of the frozen-map configs -------------------------------------------------------
def _with_time_dim(x):
    if isinstance(x, dict):
        return {k: _with_time_dim(v) for k, v in x.items()}
    return x.unsqueeze(0)


def _memory(model, n: int) -> Memory:
    mem = Memory()
    for key, (dims, dtype) in model.recurrent_memory_specification.items():
        names = [name for name, _ in dims]
        mem.check_append(
            key,
            torch.zeros([n if a == "sampler" else s for a, s in dims], dtype=dtype),
            names.index("sampler"),
        )
    return mem


def _rollout(cfg, actions: List[str]):
    """Take `actions` on thor_lite through the model; returns its logits, expert labels, map sizes."""
    torch.manual_seed(0)
    model = cfg.create_model()
    sampler = cfg.make_sampler_fn(**cfg.train_task_sampler_args(0, 1))
    logits, labels, map_mass = [], [], []
    try:
        task, mem, prev, mask = (
            sampler.next_task(),
            _memory(model, 1),
            torch.zeros(1, 1, dtype=torch.long),
            0.0,
        )
        obs = task.get_observations()
        for name in actions:
            batch = _with_time_dim(batch_observations([obs]))
            out, mem = model(batch, mem, prev, torch.full((1, 1, 1), mask))
            logits.append(out.distributions.logits[0, 0])
            labels.append(int(obs["expert_action"][0]))
            map_mass.append(float(mem.tensor(MAP_MEMORY_KEY).sum()))
            action = cfg.actions().index(name)
            result = task.step(action)
            obs, mask = result.observation, 1.0
            if task.is_done():
                task, mask = sampler.next_task(), 0.0
                obs = task.get_observations()
            prev = torch.tensor([[action]])
    finally:
        sampler.close()
    return model, torch.stack(logits), torch.tensor(labels), map_mass


def _imitation_step_trains_policy_not_map(model, logits, labels) -> None:
    model.train()
    assert not model.map.training  # frozen: dropout stays off while the policy trains
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    assert all(p.grad is None for p in model.map.parameters())
    grads = [
        p.grad
        for n, p in model.named_parameters()
        if not n.startswith("map.") and p.grad is not None
    ]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)


def test_one_phase_frozen_map_rollout_on_thor_lite():
    cfg = OnePhaseMap(pretrained=False, **SMALL)
    assert {"rel_position_change", "scene_bounds", "expert_action"} <= set(
        s.uuid for s in cfg.sensors()
    )
    model, logits, labels, mass = _rollout(cfg, ["rotate_right", "move_ahead", "rotate_left"])
    assert logits.shape == (3, 84) and torch.isfinite(logits).all()
    assert 0 < mass[0] < mass[1]  # the goal-room map grows as the agent turns
    _imitation_step_trains_policy_not_map(model, logits, labels)


def test_two_phase_frozen_map_rollout_freezes_the_map_while_unshuffling():
    cfg = TwoPhaseMap(pretrained=False, **SMALL)
    model, logits, labels, mass = _rollout(
        cfg, ["rotate_right", "done", "rotate_right", "move_ahead"]
    )
    assert (
        0 < mass[0] < mass[1] == mass[2] == mass[3]
    )  # walkthrough steps build it, unshuffle steps do not
    assert logits[0, 11:].max() < -500  # walkthrough: no pickup/open/drop
    _imitation_step_trains_policy_not_map(model, logits[2:], labels[2:])


# --- walkthrough mapping training -> exported map -> frozen-map models -------------------------
@pytest.mark.slow
def test_walkthrough_mapping_trains_and_its_map_loads_into_the_frozen_models(tmp_path):
    from rearrange.export_map import main as export_main

    kwargs = {
        **SMALL,
        "pretrained": False,
        "training_steps": 4,
        "num_steps": 2,
        "update_repeats": 1,
    }
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("allenact")),
            "-b",
            ".",
            "baseline_configs/walkthrough/walkthrough_rgb_mapping_ppo.py",
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
        timeout=900,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert (
        "binned_map_loss/binned_pc_map_ce" in log and "semantic_map_loss/sem_map_focal_loss" in log
    )
    ckpt = next((tmp_path / "out" / "checkpoints").rglob("*.pt"))
    out = tmp_path / "map.pt"
    assert export_main(["--checkpoint", str(ckpt), "--out", str(out)]) == 0
    trained = torch.load(ckpt, map_location="cpu", weights_only=True)["model_state_dict"]
    for cls in (OnePhaseMap, TwoPhaseMap):
        model = cls(map_checkpoint=str(out), **SMALL).create_model()
        loaded = model.map.state_dict()
        assert all(torch.equal(loaded[k], trained["map." + k]) for k in loaded)
        assert not any(p.requires_grad for p in model.map.parameters())


def test_export_map_rejects_bad_checkpoints_in_one_line(tmp_path, capsys):
    from rearrange.export_map import main as export_main

    junk, foreign = tmp_path / "junk.pt", tmp_path / "foreign.pt"
    junk.write_bytes(os.urandom(1000))
    torch.save({"model_state_dict": {"rnn.weight": torch.zeros(2)}}, foreign)
    out = tmp_path / "o" / "map.pt"
    for ckpt, says in (
        (tmp_path / "none.pt", "no such file"),
        (junk, "cannot load"),
        (foreign, "no `map.`"),
    ):
        with pytest.raises(SystemExit) as exc:
            export_main(["--checkpoint", str(ckpt), "--out", str(out)])
        err = capsys.readouterr().err.strip()
        assert (
            exc.value.code == 2 and len(err.splitlines()) == 1 and says in err and str(ckpt) in err
        )
        assert not out.exists()
