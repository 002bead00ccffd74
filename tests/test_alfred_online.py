"""ALFRED as an AllenAct task: the sampler over data/alfred_lite, sensors and online expert labels."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task import constants as C
from alfred_task.il_dataset import build_vocab
from alfred_task.models.observations import (EXPERT_ACTION_UUID, EXPERT_HIGH_IDX_UUID, EXPERT_MASK_UUID,
                                             EXPERT_PROGRESS_UUID, LANG_GOAL_UUID, LANG_INSTR_UUID,
                                             PREV_ACTION_UUID, RGB_UUID)
from alfred_task.online import ACTION_NAMES, AlfredTaskSampler
from alfred_task.sensors import (AlfredExpertActionSensor, ExpertHighIdxSensor, ExpertMaskSensor,
                                 ExpertProgressSensor, FrameSensor, GoalTokensSensor, InstructionTokensSensor,
                                 PrevActionSensor, ResnetFeaturePreprocessor, ResnetFeatureSensor)
from alfred_task.traj_data import load_split_file

ROOT = Path(__file__).resolve().parents[1] / "data" / "alfred_lite"


@pytest.fixture(scope="module")
def splits():
    return load_split_file(ROOT / "splits.json")


@pytest.fixture(scope="module")
def vocab(splits):
    return build_vocab(ROOT, splits)


@pytest.fixture(scope="module")
def sampler(splits, vocab):
    sensors = [GoalTokensSensor(), InstructionTokensSensor(), AlfredExpertActionSensor(), ExpertMaskSensor(size=100),
               PrevActionSensor(), ExpertHighIdxSensor(), ExpertProgressSensor()]
    s = AlfredTaskSampler(ROOT, splits, "valid_seen", sensors, vocab, seed=0, deterministic=True, max_steps=150,
                          entries=splits["valid_seen"][:2])
    yield s
    s.close()


def test_following_the_expert_labels_solves_the_episode(sampler, vocab):
    task = sampler.next_task()
    obs = task.get_observations()
    assert obs[LANG_GOAL_UUID].shape == (64,) and obs[LANG_INSTR_UUID].shape == (512,)
    goal = obs[LANG_GOAL_UUID][obs[LANG_GOAL_UUID] > 0]
    assert list(goal) == task.task_info["lang_goal"] and goal[-1] == C.GOAL_INDEX
    assert obs[PREV_ACTION_UUID].tolist() == [0]
    low = [la["discrete_action"]["action"] for la in task.task_info["traj"]["plan"]["low_actions"]]
    taken, high = [], []
    while not task.is_done():
        action, ok = obs[EXPERT_ACTION_UUID]
        assert ok == 1
        high.append(int(obs[EXPERT_HIGH_IDX_UUID][0]))
        assert obs[EXPERT_PROGRESS_UUID][0] == pytest.approx(min(1.0, (len(taken) + 1) / (len(low) + 1)))
        name = ACTION_NAMES[int(action)]
        assert (obs[EXPERT_MASK_UUID].sum() > 0) == C.has_interaction(name)
        taken.append(name)
        obs = task.step(int(action)).observation
        assert obs[PREV_ACTION_UUID].tolist() == [int(action)]
    assert high == sorted(high) and high[0] == 0 and high[-1] > 0  # subgoal index advances along the demo
    m = task.metrics()
    assert taken[-1] == C.STOP and m["success"] == 1.0 and m["goal_condition_success"] == 1.0
    assert m["num_fails"] == 0 and len(taken) - 1 <= 2 * len(low)  # the recorded demo is one expert run


def test_random_agent_steps_still_get_expert_labels(sampler):
    task = sampler.next_task()
    rng = np.random.default_rng(0)
    labels = []
    for _ in range(8):
        obs = task.get_observations()
        labels.append(tuple(obs[EXPERT_ACTION_UUID]))
        task.step(int(rng.integers(3, len(ACTION_NAMES))))  # any non-special action
    assert all(ok == 1 and 3 <= a < len(ACTION_NAMES) for a, ok in labels)
    assert sampler.next_task() is None and sampler.length == 0  # deterministic: two entries, then done


def test_training_order_is_seeded(splits, vocab):
    def order(seed):
        s = AlfredTaskSampler(ROOT, splits, "train", [], vocab, seed=seed)
        return [s.entries[i].task for i in s._order]

    assert order(3) == order(3) and order(3) != order(4) and sorted(order(3)) == sorted(e.task for e in splits["train"])


def test_feature_sensor_is_seeded_resnet18_conv_map():
    class Env:
        class last_event:
            frame = np.random.default_rng(0).integers(0, 256, (300, 300, 3), dtype=np.uint8)

    a = ResnetFeatureSensor("random_resnet18", seed=0).get_observation(Env, None)
    b = ResnetFeatureSensor("random_resnet18", seed=0).get_observation(Env, None)
    c = ResnetFeatureSensor("random_resnet18", seed=1).get_observation(Env, None)
    assert a.shape == (512, 7, 7) and a.dtype == np.float32
    assert np.array_equal(a, b) and not np.allclose(a, c)
    rgb = FrameSensor().get_observation(Env, None)
    pre = ResnetFeaturePreprocessor("random_resnet18", seed=0)
    batched = pre.process({RGB_UUID: torch.from_numpy(np.stack([rgb, rgb]))[None]})  # [steps, samplers, ...]
    assert batched.shape == (1, 2, 512, 7, 7)
    assert torch.allclose(batched[0, 1], torch.from_numpy(a), atol=1e-5)


def test_imagenet_feature_sensor_fails_fast_without_weights():
    from alfred_task.features import imagenet_weights_path

    if imagenet_weights_path().is_file():
        pytest.skip("ImageNet weights are cached on this machine")
    with pytest.raises(FileNotFoundError, match=str(imagenet_weights_path())):
        ResnetFeatureSensor("imagenet")
