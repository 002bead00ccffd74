"""`goal_difference`: the 1-phase SimpleConv encoder also sees |rgb - unshuffled_rgb| (9 input
channels), an explicit comparison of the current and goal views. Off by default (the official
model and shipped checkpoints are unchanged); on, the first conv takes 9 channels, the input is
exactly cat[rgb, unshuffled_rgb, |rgb - unshuffled_rgb|], and the logits depend on the goal."""

from __future__ import annotations

from pathlib import Path

import gym
import numpy as np
import pytest
import torch
from allenact.base_abstractions.misc import Memory
from allenact.embodiedai.models.basic_models import SimpleCNN

from rearrange.baseline_models import _CONCAT_UUID, RearrangeActorCriticSimpleConvRNN

SIZE, ACTIONS = 64, 84
FIRST_CONV = "visual_encoder.rgb_cnn.conv_0.weight"
ONE_PHASE = Path(__file__).resolve().parents[1] / "baseline_configs" / "one_phase"
KWARGS = {"screen_size": SIZE, "train_split": "train_subset", "num_train_processes": 1}


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _model(**kwargs) -> RearrangeActorCriticSimpleConvRNN:
    torch.manual_seed(0)
    box = gym.spaces.Box(-np.inf, np.inf, (SIZE, SIZE, 3), np.float32)
    space = gym.spaces.Dict({"rgb": box, "unshuffled_rgb": box})
    return RearrangeActorCriticSimpleConvRNN(gym.spaces.Discrete(ACTIONS), space, **kwargs).eval()


def _frames(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn((1, 1, SIZE, SIZE, 3), generator=g)  # [steps, samplers, H, W, C]


def _logits(model, rgb: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
    memory = Memory()
    memory.check_append("rnn", torch.zeros(1, 1, model.hidden_size), 1)
    out, _ = model(
        {"rgb": rgb, "unshuffled_rgb": goal},
        memory,
        torch.zeros(1, 1, dtype=torch.long),
        torch.ones(1, 1, 1),
    )
    return out.distributions.logits


def test_off_by_default_and_nine_input_channels_when_on():
    off, on = _model(), _model(goal_difference=True)
    assert (off.goal_difference, on.goal_difference) == (False, True)
    assert off.state_dict()[FIRST_CONV].shape[1] == 6
    assert on.state_dict()[FIRST_CONV].shape[1] == 9
    # Only the first conv's input channels differ: same keys, every other shape equal.
    so, sn = off.state_dict(), on.state_dict()
    assert set(so) == set(sn)
    assert [k for k in so if so[k].shape != sn[k].shape] == [FIRST_CONV]


def test_the_encoder_input_is_current_goal_and_their_absolute_difference():
    model = _model(goal_difference=True)
    a, b = _frames(1), _frames(2)
    manual = torch.cat((a, b, (a - b).abs()), dim=-1)
    expected = SimpleCNN.forward(model.visual_encoder, {_CONCAT_UUID: manual})
    torch.testing.assert_close(
        model.visual_encoder({"rgb": a, "unshuffled_rgb": b}), expected, rtol=0, atol=0
    )


@pytest.mark.parametrize("goal_difference", [False, True])
def test_changing_only_the_goal_changes_the_logits(goal_difference):
    model = _model(goal_difference=goal_difference, visual_layer_norm=True)
    rgb = _frames(1)
    with torch.no_grad():
        same = _logits(model, rgb, rgb.clone())
        again = _logits(model, rgb, rgb.clone())
        other = _logits(model, rgb, _frames(3))
    torch.testing.assert_close(same, again, rtol=0, atol=0)  # deterministic
    assert (same - other).abs().max() > 1e-4


def test_config_kwarg_reaches_the_model_and_is_checked():
    from rearrange.eval import load_config

    dagger = str(ONE_PHASE / "one_phase_rgb_dagger.py")
    off = load_config(dagger, KWARGS).create_model()
    on = load_config(dagger, {**KWARGS, "goal_difference": True}).create_model()
    assert off.goal_difference is False  # official by default
    assert off.state_dict()[FIRST_CONV].shape[1] == 6
    assert on.goal_difference is True
    assert on.state_dict()[FIRST_CONV].shape[1] == 9
    with pytest.raises(ValueError, match="goal_difference must be true or false"):
        load_config(dagger, {**KWARGS, "goal_difference": "yes"})
    # The ResNet config derived from the same base has no such input: refused, not ignored.
    with pytest.raises(ValueError, match="SimpleConv configs only"):
        load_config(
            str(ONE_PHASE / "one_phase_rgb_resnet_dagger.py"), {**KWARGS, "goal_difference": True}
        )
