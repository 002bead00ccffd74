"""Official parameter names/shapes: every baseline model matches the published checkpoints' keys
(tests/fixtures/rearrangement_official_state_dict_keys.json, see tests/fixtures/README.md) and
loads them strictly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Tuple

import gym
import numpy as np
import pytest
import torch
from gym.spaces import Dict as SpaceDict

from rearrange.baseline_models import (
    RearrangeActorCriticSimpleConvRNN,
    ResNetRearrangeActorCriticRNN,
    ResNetTwoPhaseRearrangeActorCriticRNN,
    TwoPhaseRearrangeActorCriticSimpleConvRNN,
)
from rearrange.constants import REARRANGE_ACTIONS

KEYS_JSON = (
    Path(__file__).resolve().parent / "fixtures" / "rearrangement_official_state_dict_keys.json"
)

SIZE = 224  # the official frame size: SimpleCNN's fc is 512 x (32*24*24) only at 224 px


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """On 2 shared cores torch's 2 threads spin against each other (orthogonal init, convs: ~20x slower)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _rgb_spaces() -> Dict[str, gym.Space]:
    box = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(SIZE, SIZE, 3), dtype=np.float32)
    return {
        "rgb": box,
        "unshuffled_rgb": box,
        "in_walkthrough_phase": gym.spaces.Box(low=False, high=True, shape=(1,), dtype=np.bool_),
    }


def _resnet_spaces(channels: int) -> Dict[str, gym.Space]:
    box = gym.spaces.Box(
        low=-np.inf, high=np.inf, shape=(channels, SIZE // 32, SIZE // 32), dtype=np.float32
    )
    return {
        "rgb_resnet": box,
        "unshuffled_rgb_resnet": box,
        "in_walkthrough_phase": gym.spaces.Box(low=False, high=True, shape=(1,), dtype=np.bool_),
    }


def _build(entry: str) -> torch.nn.Module:
    actions = gym.spaces.Discrete(len(REARRANGE_ACTIONS))
    if entry.startswith("RearrangeActorCriticSimpleConvRNN"):
        return RearrangeActorCriticSimpleConvRNN(actions, SpaceDict(_rgb_spaces()))
    if entry.startswith("ResNetRearrangeActorCriticRNN(RN18"):
        return ResNetRearrangeActorCriticRNN(actions, SpaceDict(_resnet_spaces(512)))
    if entry.startswith("ResNetRearrangeActorCriticRNN(RN50"):
        return ResNetRearrangeActorCriticRNN(actions, SpaceDict(_resnet_spaces(2048)))
    if entry.startswith("TwoPhaseRearrangeActorCriticSimpleConvRNN"):
        return TwoPhaseRearrangeActorCriticSimpleConvRNN(
            actions, SpaceDict(_rgb_spaces()), action_names=REARRANGE_ACTIONS
        )
    if entry.startswith("ResNetTwoPhaseRearrangeActorCriticRNN"):
        return ResNetTwoPhaseRearrangeActorCriticRNN(
            actions, SpaceDict(_resnet_spaces(512)), action_names=REARRANGE_ACTIONS
        )
    raise AssertionError(f"no model for the official entry {entry!r}: add it to baseline_models")


def _official() -> Dict[str, Dict[str, Tuple[int, ...]]]:
    raw = json.loads(KEYS_JSON.read_text())
    return {entry: {k: tuple(v) for k, v in keys.items()} for entry, keys in raw.items()}


ENTRIES = sorted(_official())


@pytest.mark.parametrize("entry", ENTRIES)
def test_model_keys_and_shapes_equal_the_official_ones(entry):
    torch.manual_seed(0)
    model = _build(entry)
    mine = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    official = _official()[entry]
    assert set(mine) - set(official) == set(), "parameters the official checkpoint lacks"
    assert set(official) - set(mine) == set(), "official parameters this model lacks"
    assert mine == official

    # An official-shaped state dict (random tensors) loads strictly and is what the model then holds.
    g = torch.Generator().manual_seed(1)
    ckpt = {k: torch.randn(shape, generator=g) for k, shape in official.items()}
    model.load_state_dict(ckpt, strict=True)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, ckpt[k])


def test_a_wrong_shape_is_refused():
    """The check above can fail: the RN50 key list does not fit the RN18 model."""
    official = _official()
    rn50 = next(e for e in official if e.startswith("ResNetRearrangeActorCriticRNN(RN50"))
    rn18 = next(e for e in official if e.startswith("ResNetRearrangeActorCriticRNN(RN18"))
    model = _build(rn18)
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict({k: torch.zeros(s) for k, s in official[rn50].items()}, strict=True)
