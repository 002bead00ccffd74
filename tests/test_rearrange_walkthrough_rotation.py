"""The walkthrough configs start training episodes at a random yaw, as the official ones do
(rearrangement.md §6: 360 * U, Random(1), snapToGrid False); evaluation keeps the dataset's."""

from __future__ import annotations

import random

import pytest

from baseline_configs.walkthrough.walkthrough_rgb_ppo import WalkthroughRGBPPOExperimentConfig

KWARGS = {
    "screen_size": 64,
    "train_split": "train_subset",
    "num_train_processes": 1,
    "num_valid_processes": 1,
}


def _yaws(episodes: int):
    """(agent yaw after each reset, yaw after one rotate_right) for `episodes` training tasks."""
    config = WalkthroughRGBPPOExperimentConfig(**KWARGS)
    sampler = config.make_sampler_fn(**config.stagewise_task_sampler_args("train", 0, 1))
    out = []
    try:
        for _ in range(episodes):
            task = sampler.next_task()
            yaw = sampler.walkthrough_env.controller.last_event.metadata["agent"]["rotation"]["y"]
            task.step(task.action_names().index("rotate_right"))
            after = sampler.walkthrough_env.controller.last_event.metadata["agent"]["rotation"]["y"]
            out.append((yaw, after))
    finally:
        sampler.close()
    return out


def test_training_starts_at_the_official_random_yaws_and_evaluation_does_not():
    rng = random.Random(1)
    expected = [360.0 * rng.random() for _ in range(2)]
    train = _yaws(2)
    assert [y for y, _ in train] == pytest.approx(expected, abs=1e-3)
    assert [a for _, a in train] == pytest.approx(
        [(y + 90) % 360 for y in expected], abs=1e-3
    )  # off-grid yaw moves on
    config = WalkthroughRGBPPOExperimentConfig(**KWARGS)
    assert not any(
        config.stagewise_task_sampler_args(stage, 0, 1)["randomize_start_rotation"]
        for stage in ("valid_subset", "test")
    )
