"""ALFRED as an AllenAct task: the sampler over data/alfred_lite, sensors and online expert labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task import constants as C
from alfred_task.data.il_dataset import build_vocab
from alfred_task.models.observations import (
    EXPERT_ACTION_UUID,
    EXPERT_HIGH_IDX_UUID,
    EXPERT_MASK_UUID,
    EXPERT_PROGRESS_UUID,
    LANG_GOAL_UUID,
    LANG_INSTR_UUID,
    PREV_ACTION_UUID,
    RGB_UUID,
)
from alfred_task.alfred_tasks import ACTION_NAMES
from alfred_task.alfred_task_samplers import AlfredTaskSampler
from alfred_task.alfred_sensors import (
    AlfredExpertActionSensor,
    ExpertHighIdxSensor,
    ExpertMaskSensor,
    ExpertProgressSensor,
    FrameSensor,
    GoalTokensSensor,
    InstructionTokensSensor,
    PrevActionSensor,
    ResnetFeaturePreprocessor,
    ResnetFeatureSensor,
)
from alfred_task.data.traj_data import load_split_file

ROOT = Path(__file__).resolve().parents[1] / "data" / "alfred_lite"


@pytest.fixture(scope="module")
def splits():
    return load_split_file(ROOT / "splits.json")


@pytest.fixture(scope="module")
def vocab(splits):
    return build_vocab(ROOT, splits)


@pytest.fixture(scope="module")
def sampler(splits, vocab):
    sensors = [
        GoalTokensSensor(),
        InstructionTokensSensor(),
        AlfredExpertActionSensor(),
        ExpertMaskSensor(size=100),
        PrevActionSensor(),
        ExpertHighIdxSensor(),
        ExpertProgressSensor(),
    ]
    s = AlfredTaskSampler(
        ROOT,
        splits,
        "valid_seen",
        sensors,
        vocab,
        seed=0,
        deterministic=True,
        max_steps=150,
        entries=splits["valid_seen"][:2],
    )
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
        assert obs[EXPERT_PROGRESS_UUID][0] == pytest.approx(
            min(1.0, (len(taken) + 1) / (len(low) + 1))
        )
        name = ACTION_NAMES[int(action)]
        assert (obs[EXPERT_MASK_UUID].sum() > 0) == C.has_interaction(name)
        taken.append(name)
        obs = task.step(int(action)).observation
        assert obs[PREV_ACTION_UUID].tolist() == [int(action)]
    assert (
        high == sorted(high) and high[0] == 0 and high[-1] > 0
    )  # subgoal index advances along the demo
    m = task.metrics()
    assert taken[-1] == C.STOP and m["success"] == 1.0 and m["goal_condition_success"] == 1.0
    assert m["num_fails"] == 0 and len(taken) - 1 <= 2 * len(
        low
    )  # the recorded demo is one expert run


def test_random_agent_steps_still_get_expert_labels(sampler):
    task = sampler.next_task()
    rng = np.random.default_rng(0)
    labels = []
    for _ in range(8):
        obs = task.get_observations()
        labels.append(tuple(obs[EXPERT_ACTION_UUID]))
        task.step(int(rng.integers(3, len(ACTION_NAMES))))  # any non-special action
    assert all(ok == 1 and 3 <= a < len(ACTION_NAMES) for a, ok in labels)
    assert (
        sampler.next_task() is None and sampler.length == 0
    )  # deterministic: two entries, then done


def test_training_order_is_seeded(splits, vocab):
    def order(seed):
        s = AlfredTaskSampler(ROOT, splits, "train", [], vocab, seed=seed)
        return [s.entries[i].task for i in s._order]

    assert (
        order(3) == order(3)
        and order(3) != order(4)
        and sorted(order(3)) == sorted(e.task for e in splits["train"])
    )


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
    batched = pre.process(
        {RGB_UUID: torch.from_numpy(np.stack([rgb, rgb]))[None]}
    )  # [steps, samplers, ...]
    assert batched.shape == (1, 2, 512, 7, 7)
    assert torch.allclose(batched[0, 1], torch.from_numpy(a), atol=1e-5)


def test_imagenet_feature_sensor_fails_fast_without_weights():
    from alfred_task.data.features import imagenet_weights_path

    if imagenet_weights_path().is_file():
        pytest.skip("ImageNet weights are cached on this machine")
    with pytest.raises(FileNotFoundError, match=str(imagenet_weights_path())):
        ResnetFeatureSensor("imagenet")


def test_a_policy_mask_in_the_action_is_the_one_the_task_interacts_with(splits, vocab):
    """`emit_masks` policies (allenact --eval) act with {"action", "mask" logits}: the task sends
    ALFRED's sigmoid > 0.5 of the upsampled logits, not the expert's or a centre object's mask."""
    s = AlfredTaskSampler(
        ROOT,
        splits,
        "valid_seen",
        [AlfredExpertActionSensor(), ExpertMaskSensor(size=100)],
        vocab,
        seed=0,
        deterministic=True,
        max_steps=150,
        entries=splits["valid_seen"][:1],
    )
    try:
        task = s.next_task()
        obs = task.get_observations()
        while not C.has_interaction(ACTION_NAMES[int(obs[EXPERT_ACTION_UUID][0])]):
            obs = task.step(int(obs[EXPERT_ACTION_UUID][0])).observation
        action, gold = int(obs[EXPERT_ACTION_UUID][0]), obs[EXPERT_MASK_UUID].astype(bool)
        sent = []
        real = task.env.va_interact
        task.env.va_interact = lambda name, mask: (sent.append(mask), real(name, mask))[1]
        nowhere = np.full(gold.size, -10.0, np.float32)
        task.step({"action": action, "mask": nowhere})  # an empty mask: the interaction fails
        assert not sent[-1].any() and task.num_fails == 1
        logits = np.where(gold.reshape(-1), 10.0, -10.0).astype(np.float32)
        task.step({"action": action, "mask": logits})
        assert sent[-1].shape == C.MASK_SHAPE and sent[-1].sum() > 0
        up = torch.nn.functional.interpolate(
            torch.tensor(logits).view(1, 1, 100, 100),
            size=C.MASK_SHAPE,
            mode="bilinear",
            align_corners=False,
        )[0, 0]
        assert np.array_equal(sent[-1], (torch.sigmoid(up) > 0.5).numpy())
        assert task.num_fails == 1 and task.interactions == task.model_mask_interactions == 2
        task.step(action)  # a plain id (training): the task picks the mask
        assert task.interactions == 3 and task.model_mask_interactions == 2
        with pytest.raises(ValueError, match="not a square map"):
            task.step({"action": action, "mask": np.zeros(10, np.float32)})
    finally:
        s.close()
