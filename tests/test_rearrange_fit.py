"""The 1-phase SimpleConv GRU, trained as `rearrange.imitation` trains it, must fit a few
labelled frames: the regression test of the GRU-saturation failure (see
experiments/rearrange_fit_diagnosis), where the encoder's unbounded features grew ~10^3-fold
under Adam, the GRU's output stopped depending on the frames and the loss stayed at the
label marginal."""

from __future__ import annotations

import random
from pathlib import Path

import gym
import numpy as np
import pytest
import torch

from rearrange import imitation as im
from rearrange.baseline_models import RearrangeActorCriticSimpleConvRNN

SIZE, ACTIONS = 64, 84  # 64x64: the curriculum's frames (the fc of SimpleCNN then has 512 inputs)


def _model(visual_layer_norm: bool) -> RearrangeActorCriticSimpleConvRNN:
    box = gym.spaces.Box(-np.inf, np.inf, (SIZE, SIZE, 3), np.float32)
    space = gym.spaces.Dict({"rgb": box, "unshuffled_rgb": box})
    return RearrangeActorCriticSimpleConvRNN(
        gym.spaces.Discrete(ACTIONS), space, visual_layer_norm=visual_layer_norm
    )


def _smooth(rng: np.random.Generator, n: int, cells: int) -> np.ndarray:
    """`n` smooth random SIZExSIZEx3 images (bilinear upsampling of a cells x cells grid)."""
    low = torch.from_numpy(rng.standard_normal((n, 3, cells, cells)).astype(np.float32))
    return (
        torch.nn.functional.interpolate(low, size=(SIZE, SIZE), mode="bilinear")
        .permute(0, 2, 3, 1)
        .numpy()
    )


def _data(episodes: int, steps: int, seed: int):
    """Frames like the RGB sensor's (normalised, one room: a shared smooth image plus small
    smooth per-frame changes) and labels with a dominant few actions, as the expert's: the
    regime where the loss must leave the label marginal through the frames."""
    rng = np.random.default_rng(seed)
    base = 0.3 * _smooth(rng, 1, 4)
    prior = np.ones(ACTIONS)
    prior[:4] = 30.0
    out = []
    for _ in range(episodes):
        obs = {
            u: (base + 0.1 * _smooth(rng, steps, 8)).astype(np.float16)
            for u in ("rgb", "unshuffled_rgb")
        }
        labels = rng.choice(ACTIONS, steps, p=prior / prior.sum())
        out.append(im.Trajectory(obs, labels, np.ones(steps, np.int64), labels))
    return out


def _fit(visual_layer_norm: bool, updates: int) -> float:
    """Full-batch `im.train_epochs` (AllenAct's Imitation loss, BPTT) at the curriculum's lr."""
    torch.manual_seed(0)
    model = _model(visual_layer_norm)
    data = _data(episodes=7, steps=2, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss = float("nan")
    for _ in range(updates):
        loss = im.train_epochs(model, opt, data, 1, len(data), random.Random(0))
    return loss


def test_simpleconv_gru_fits_few_labelled_frames_with_feature_norm():
    torch.set_num_threads(1)
    # Without the norm this stays at the labels' marginal entropy (2.05 nats; measured).
    assert _fit(True, 100) < 0.2


def test_official_simpleconv_is_unchanged_by_the_flag_when_off():
    torch.manual_seed(0)
    a = _model(False)
    b = _model(True)
    b.load_state_dict(
        a.state_dict(), strict=True
    )  # no new parameters: official keys load into both
    batch = im.batch_tensors(_data(2, 3, seed=1))
    out_a, _ = a(
        batch["observations"], im.initial_memory(a, 2), batch["prev_actions"], batch["masks"]
    )
    feats = a.visual_encoder(batch["observations"])
    assert torch.equal(a._encode(batch["observations"]), feats)  # off: the official forward
    assert not torch.allclose(b._encode(batch["observations"]), feats)
    assert torch.allclose(b._encode(batch["observations"]).std(-1), torch.ones(3, 2), atol=1e-2)


def test_config_kwarg_reaches_the_model():
    from rearrange.eval import load_config

    path = str(
        Path(__file__).resolve().parents[1]
        / "baseline_configs"
        / "one_phase"
        / "one_phase_rgb_dagger.py"
    )
    kwargs = {"screen_size": 64, "train_split": "train_subset", "num_train_processes": 1}
    assert (
        load_config(path, {**kwargs, "visual_layer_norm": True}).create_model().visual_layer_norm
        is True
    )
    assert (
        load_config(path, kwargs).create_model().visual_layer_norm is False
    )  # official by default
    with pytest.raises(ValueError, match="visual_layer_norm"):
        load_config(path, {**kwargs, "visual_layer_norm": "yes"})


def test_two_phase_simpleconv_has_the_same_norm_flag():
    """The 2-phase SimpleConv config takes `visual_layer_norm` as the 1-phase one does: same
    parameters (official keys load both ways), normalised features only when on; the ResNet
    config derived from it rejects the flag instead of ignoring it."""
    from rearrange.eval import load_config

    root = Path(__file__).resolve().parents[1] / "baseline_configs" / "two_phase"
    kwargs = {"screen_size": SIZE, "train_split": "train_subset", "num_train_processes": 1}
    torch.manual_seed(0)
    off = load_config(
        str(root / "two_phase_rgb_ppowalkthrough_ilunshuffle.py"), kwargs
    ).create_model()
    on = load_config(
        str(root / "two_phase_rgb_ppowalkthrough_ilunshuffle.py"),
        {**kwargs, "visual_layer_norm": True},
    ).create_model()
    assert (off.visual_layer_norm, on.visual_layer_norm) == (False, True)
    on.load_state_dict(off.state_dict(), strict=True)
    obs = {
        u: torch.from_numpy(v.astype(np.float32))[:, None]
        for u, v in _data(1, 3, seed=2)[0].obs.items()
    }
    feats = off.visual_encoder(obs)
    assert torch.equal(off._encode(obs), feats)
    assert torch.allclose(on._encode(obs), torch.nn.functional.layer_norm(feats, feats.shape[-1:]))
    with pytest.raises(ValueError, match="SimpleConv configs only"):
        load_config(
            str(root / "two_phase_rgb_resnet_ppowalkthrough_ilunshuffle.py"),
            {**kwargs, "visual_layer_norm": True, "pretrained": False},
        )
