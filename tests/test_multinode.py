"""Multi-node training: the configs' machine_params for AllenAct's --machine_id, and a real
two-node run on one machine (benchmarks/multinode_smoke.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import torch

from baseline_configs.one_phase.one_phase_rgb_dagger import OnePhaseRGBDaggerExperimentConfig

REPO = Path(__file__).resolve().parents[1]


def _cpu_config(**kwargs):
    with mock.patch.object(torch.cuda, "is_available", return_value=False):
        return OnePhaseRGBDaggerExperimentConfig(**kwargs)


def test_one_machine_is_unchanged():
    mp = _cpu_config(num_train_processes=2).machine_params("train", machine_id=0)
    assert (
        mp.devices == (torch.device("cpu"),) and mp.nprocesses == [2] and mp.local_worker_ids == [0]
    )


def test_two_machines_see_the_global_workers_and_their_own_share():
    cfg = _cpu_config(num_train_processes=3, num_machines=2)
    everyone = cfg.machine_params("train")
    assert everyone.devices == (torch.device("cpu"),) * 2 and everyone.nprocesses == [3, 3]
    assert cfg.machine_params("train", machine_id=0).local_worker_ids == [0]
    assert cfg.machine_params("train", machine_id=1).local_worker_ids == [1]
    # validation and test stay on one machine (AllenAct runs them on machine 0 only)
    assert cfg.machine_params("test").devices == (torch.device("cpu"),)


def test_gpu_nodes_get_one_trainer_per_local_gpu():
    """4 GPUs per node (faked; MachineParams, which would look for them, records its arguments)."""
    with (
        mock.patch.object(torch.cuda, "is_available", return_value=True),
        mock.patch.object(torch.cuda, "device_count", return_value=4),
        mock.patch("baseline_configs.rearrange_base.MachineParams", lambda **kw: kw),
    ):
        cfg = OnePhaseRGBDaggerExperimentConfig(num_train_processes=8, num_machines=2)
        mp = cfg.machine_params("train", machine_id=1)
    assert mp["devices"] == [0, 1, 2, 3] * 2 and mp["nprocesses"] == [2] * 8
    assert mp["local_worker_ids"] == [4, 5, 6, 7]


def test_bad_machine_settings_are_errors():
    with pytest.raises(ValueError, match="num_machines must be at least 1"):
        _cpu_config(num_machines=0)
    with pytest.raises(ValueError, match="--machine_id 2 is outside 0..1"):
        _cpu_config(num_machines=2).machine_params("train", machine_id=2)


@pytest.mark.slow
def test_two_nodes_train_in_lock_step_on_loopback(tmp_path):
    """1-2 minutes on 2 busy cores (52 s and 120 s measured); deselect with -m "not slow"."""
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "multinode_smoke.py"),
            "--steps",
            "256",
            "--timeout",
            "240",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=330,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert "exit codes: node 0 = 0, node 1 = 0" in text
    assert "max |weight difference| between the nodes' checkpoints: 0.0" in text
    assert text.count("at step 256") == 2
