"""DAgger through the real pipeline parts (config model, sensors, task sampler, expert,
AllenAct's Imitation loss) can memorise one fixed one-object episode."""

from __future__ import annotations

import random
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from rearrange import imitation as im
from rearrange.dataset import load_stage
from rearrange.eval import load_config

CONFIG = (
    Path(__file__).resolve().parents[1]
    / "baseline_configs"
    / "one_phase"
    / "one_phase_rgb_dagger.py"
)
UUIDS = ("rgb", "unshuffled_rgb")


def _one_episode():
    """FloorPlan1's first shipped train episode: move one Mug (21 expert steps)."""
    ep = [e for e in load_stage("train_subset")["FloorPlan1"] if e["index"] == 0]
    assert len(ep) == 1 and ep[0]["position_diff_count"] == 1 and ep[0]["open_diff_count"] == 0
    return OrderedDict(FloorPlan1=ep)


def test_batch_tensors_pads_and_masks():
    obs = {"rgb": np.ones((3, 2, 2, 3), np.float16)}
    a = im.Trajectory(obs, np.array([4, 5, 6]), np.array([1, 0, 1]), np.array([4, 7, 6]))
    b = im.Trajectory({"rgb": obs["rgb"][:1]}, np.array([9]), np.array([1]), np.array([9]))
    batch = im.batch_tensors([a, b])
    assert batch["observations"]["rgb"].shape == (3, 2, 2, 2, 3)
    assert batch["observations"]["rgb"][1:, 1].abs().sum() == 0  # padding
    assert batch["expert_action"][:, 0].tolist() == [[4, 1], [5, 0], [6, 1]]
    assert batch["expert_action"][:, 1].tolist() == [
        [9, 1],
        [0, 0],
        [0, 0],
    ]  # padded steps have no label
    assert batch["prev_actions"][:, 0].tolist() == [0, 4, 7]  # the actions taken, shifted
    assert batch["masks"][:, :, 0].tolist() == [[0, 0], [1, 1], [1, 1]]


def test_dagger_memorises_one_fixed_episode():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = load_config(
        str(CONFIG), {"screen_size": 36, "train_split": "train_subset", "num_train_processes": 1}
    )
    episodes = _one_episode()
    model = config.create_model()
    runner = im.PolicyRunner(model, UUIDS)
    rng = random.Random(0)
    data = im.play_all(config, episodes, runner, beta=1.0, rng=rng)  # round 0: the expert acts
    expert_len = len(data[0])
    assert (
        data[0].metrics["unshuffle/prop_fixed_strict"] == 1.0 and data[0].expert[-1] == 0
    )  # ends with done
    before = im.play_all(config, episodes, runner, beta=0.0, rng=rng, max_steps=expert_len)[0]
    assert not np.array_equal(
        before.actions, before.expert
    )  # untrained, it does not already imitate
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(
        4
    ):  # DAgger rounds: fit the aggregate, let the argmax learner act, label its states
        for _ in range(40):
            if im.train_epochs(model, opt, data, 5, 8, rng) < 0.05:
                break
        after = im.play_all(config, episodes, runner, beta=0.0, rng=rng, max_steps=2 * expert_len)[
            0
        ]
        if (
            np.array_equal(after.actions, after.expert)
            and after.metrics.get("unshuffle/prop_fixed_strict") == 1.0
        ):
            break
        data.append(after)
    assert (
        after.actions.tolist() == after.expert.tolist()
    )  # argmax policy == expert at every visited state
    assert len(after) == expert_len
    assert (
        after.metrics["unshuffle/prop_fixed_strict"] == 1.0
        and after.metrics["unshuffle/success"] == 1.0
    )
