"""Shape, memory and masking checks of the rearrangement baselines and MaskedPPO."""

from __future__ import annotations

import functools

import gym
import numpy as np
import pytest
import torch
from gym.spaces import Dict as SpaceDict

from allenact.algorithms.onpolicy_sync.losses.ppo import PPO, PPOConfig
from allenact.base_abstractions.distributions import CategoricalDistr
from allenact.base_abstractions.misc import ActorCriticOutput, Memory

from rearrange.baseline_models import (
    RearrangeActorCriticSimpleConvRNN,
    ResNetRearrangeActorCriticRNN,
    TwoPhaseRearrangeActorCriticSimpleConvRNN,
)
from rearrange.losses import MaskedPPO

NSTEPS, NSAMPLERS, IMG, HIDDEN = 2, 2, 64, 512

OPENABLE = (
    "blinds cabinet drawer fridge laundry_hamper microwave safe shower_curtain shower_door toilet"
)
PICKUPABLE = (
    "alarm_clock aluminum_foil apple baseball_bat basket_ball book boots bottle bowl box bread"
    " butter_knife c_d candle cell_phone cloth credit_card cup dish_sponge dumbbell egg footstool"
    " fork hand_towel kettle key_chain knife ladle laptop lettuce mug newspaper pan"
    " paper_towel_roll pen pencil pepper_shaker pillow plate plunger pot potato remote_control"
    " salt_shaker scrub_brush soap_bar soap_bottle spatula spoon spray_bottle statue"
    " table_top_decor teddy_bear tennis_racket tissue_box toilet_paper tomato towel vase watch"
    " watering_can wine_bottle"
)
ACTION_NAMES = (
    [
        "done",
        "move_ahead",
        "move_left",
        "move_right",
        "move_back",
        "rotate_right",
        "rotate_left",
        "stand",
        "crouch",
        "look_up",
        "look_down",
        "drop_held_object_with_snap",
    ]
    + [f"open_by_type_{t}" for t in OPENABLE.split()]
    + [f"pickup_{t}" for t in PICKUPABLE.split()]
)
N_ACTIONS = len(ACTION_NAMES)
BAD = [i for i, n in enumerate(ACTION_NAMES) if n.startswith(("drop", "open", "pickup"))]
GOOD = [i for i in range(N_ACTIONS) if i not in BAD]


def test_action_list_matches_spec():
    assert N_ACTIONS == 84
    assert ACTION_NAMES.index("pickup_c_d") < ACTION_NAMES.index("pickup_candle")
    assert BAD == list(range(11, 84))


def _rgb_space():
    box = gym.spaces.Box(low=0.0, high=1.0, shape=(IMG, IMG, 3), dtype=np.float32)
    return SpaceDict(
        {
            "rgb": box,
            "unshuffled_rgb": box,
            "in_walkthrough_phase": gym.spaces.Box(low=0, high=1, shape=(1,), dtype=bool),
        }
    )


def _resnet_space(c=64):
    box = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(c, 7, 7), dtype=np.float32)
    return SpaceDict({"rgb_resnet": box, "unshuffled_rgb_resnet": box})


def _rgb_obs(phase=None):
    obs = {
        "rgb": torch.rand(NSTEPS, NSAMPLERS, IMG, IMG, 3),
        "unshuffled_rgb": torch.rand(NSTEPS, NSAMPLERS, IMG, IMG, 3),
    }
    if phase is not None:
        obs["in_walkthrough_phase"] = torch.as_tensor(phase, dtype=torch.bool).view(
            NSTEPS, NSAMPLERS, 1
        )
    return obs


def _resnet_obs(c=64):
    return {
        "rgb_resnet": torch.randn(NSTEPS, NSAMPLERS, c, 7, 7),
        "unshuffled_rgb_resnet": torch.randn(NSTEPS, NSAMPLERS, c, 7, 7),
    }


def _memory(model, fill: str = "zeros") -> Memory:
    spec = model.recurrent_memory_specification
    mem = Memory()
    for key, (dims, dtype) in spec.items():
        shape = [NSAMPLERS if n == "sampler" else size for n, size in dims]
        sampler_dim = [n for n, _ in dims].index("sampler")
        t = torch.zeros(shape, dtype=dtype) if fill == "zeros" else torch.randn(shape, dtype=dtype)
        mem.check_append(key, t, sampler_dim)
    return mem


def _clone(mem: Memory) -> Memory:
    return Memory({k: (mem.tensor(k).clone(), mem.sampler_dim(k)) for k in mem})


def _run(model, obs, mem, masks, prev=None):
    prev = torch.zeros(NSTEPS, NSAMPLERS, dtype=torch.long) if prev is None else prev
    with torch.no_grad():
        out, new_mem = model(obs, _clone(mem), prev, masks)
    return out, new_mem


def _masks(value):
    return torch.full((NSTEPS, NSAMPLERS, 1), float(value))


@functools.lru_cache(maxsize=None)
def _build(kind):
    # Models are built once per kind (orthogonal init of the 512-d RNNs is slow
    # on CPU); the tests never modify their parameters.
    torch.manual_seed(0)
    action_space = gym.spaces.Discrete(N_ACTIONS)
    if kind == "simple":
        return RearrangeActorCriticSimpleConvRNN(action_space, _rgb_space())
    if kind == "resnet":
        return ResNetRearrangeActorCriticRNN(action_space, _resnet_space())
    return TwoPhaseRearrangeActorCriticSimpleConvRNN(
        action_space, _rgb_space(), action_names=ACTION_NAMES
    )


def _make(kind):
    torch.manual_seed(1)
    if kind == "simple":
        obs = _rgb_obs()
    elif kind == "resnet":
        obs = _resnet_obs()
    else:
        obs = _rgb_obs(phase=[[1, 0], [1, 0]])
    return _build(kind), obs


@pytest.mark.parametrize("kind", ["simple", "resnet", "two_phase"])
def test_shapes_and_memory(kind):
    model, obs = _make(kind)
    spec = model.recurrent_memory_specification
    expected_keys = {"rnn"} if kind != "two_phase" else {"rnn", "walkthrough_encoding"}
    assert set(spec) == expected_keys
    mem = _memory(model, "randn")
    out, new_mem = _run(model, obs, mem, _masks(1))
    assert isinstance(out, ActorCriticOutput)
    assert isinstance(out.distributions, CategoricalDistr)
    assert out.distributions.logits.shape == (NSTEPS, NSAMPLERS, N_ACTIONS)
    assert out.values.shape == (NSTEPS, NSAMPLERS, 1)
    assert out.extras == {}
    for key in expected_keys:
        assert new_mem.tensor(key).shape == mem.tensor(key).shape
        assert new_mem.tensor(key).shape[1] == NSAMPLERS
        assert new_mem.tensor(key).shape[-1] == HIDDEN
    if kind == "two_phase":
        assert (
            mem.tensor("rnn").shape[0] == 1
        )  # GRU, as the official checkpoints' 3x512-row weights
    # A sample can be drawn and scored, as the engine does.
    actions = out.distributions.sample()
    assert actions.shape == (NSTEPS, NSAMPLERS)
    assert out.distributions.log_prob(actions).shape == (NSTEPS, NSAMPLERS)


@pytest.mark.parametrize("kind", ["simple", "resnet", "two_phase"])
def test_masks_reset_memory(kind):
    model, obs = _make(kind)
    if kind == "two_phase":  # both samplers start a walkthrough: every state resets
        obs["in_walkthrough_phase"][:] = True
    rand_mem, zero_mem = _memory(model, "randn"), _memory(model, "zeros")
    out_keep, _ = _run(model, obs, rand_mem, _masks(1))
    out_reset, mem_reset = _run(model, obs, rand_mem, _masks(0))
    out_zero, mem_zero = _run(model, obs, zero_mem, _masks(0))
    assert not torch.allclose(out_keep.distributions.logits, out_reset.distributions.logits)
    assert not torch.allclose(out_keep.values, out_reset.values)
    # masks == 0 means the incoming memory is ignored completely.
    torch.testing.assert_close(out_reset.distributions.logits, out_zero.distributions.logits)
    torch.testing.assert_close(out_reset.values, out_zero.values)
    for key in mem_reset:
        torch.testing.assert_close(mem_reset.tensor(key), mem_zero.tensor(key))

    # A reset at step 1 only: step 0 keeps the memory, step 1 equals a fresh start.
    masks = torch.ones(NSTEPS, NSAMPLERS, 1)
    masks[1] = 0
    out_mid, _ = _run(model, obs, rand_mem, masks)
    torch.testing.assert_close(out_mid.values[0], out_keep.values[0])
    obs1 = {k: v[1:] for k, v in obs.items()}
    with torch.no_grad():
        fresh, _ = model(
            obs1, _clone(zero_mem), torch.zeros(1, NSAMPLERS, dtype=torch.long), masks[1:]
        )
    torch.testing.assert_close(out_mid.values[1:], fresh.values, atol=1e-5, rtol=1e-5)


def test_two_phase_walkthrough_encoding_reset_rules():
    model, obs = _make("two_phase")
    rand_mem = _memory(model, "randn")
    # Unshuffle start (mask 0, not walkthrough): the state encoder resets, walkthrough encoding is kept
    # unchanged throughout the unshuffle phase.
    obs["in_walkthrough_phase"][:] = False
    _, mem = _run(model, obs, rand_mem, _masks(0))
    torch.testing.assert_close(
        mem.tensor("walkthrough_encoding"), rand_mem.tensor("walkthrough_encoding")
    )
    out_a, _ = _run(model, obs, rand_mem, _masks(0))
    other = _clone(rand_mem)
    other.set_tensor("walkthrough_encoding", torch.randn_like(other.tensor("walkthrough_encoding")))
    out_b, _ = _run(model, obs, other, _masks(0))
    # ... and it is read by the state encoder (so the unshuffle policy depends on it).
    assert not torch.allclose(out_a.values, out_b.values)
    # Walkthrough steps update the encoding.
    obs["in_walkthrough_phase"][:] = True
    _, mem = _run(model, obs, rand_mem, _masks(1))
    assert not torch.allclose(
        mem.tensor("walkthrough_encoding"), rand_mem.tensor("walkthrough_encoding")
    )


def test_two_phase_walkthrough_action_masking():
    model, obs = _make("two_phase")
    phase = torch.tensor([[True, False], [False, True]])
    obs["in_walkthrough_phase"] = phase.view(NSTEPS, NSAMPLERS, 1)
    out, _ = _run(model, obs, _memory(model, "randn"), _masks(1))
    logits = out.distributions.logits
    wt, un = logits[phase], logits[~phase]  # [k, 84]
    assert (wt[:, BAD] < -900).all()
    assert (wt[:, GOOD] > -100).all()
    assert (un > -100).all()
    probs = out.distributions.probs
    assert probs[phase][:, BAD].sum() < 1e-6
    # The walkthrough head's done bias starts at -3, the unshuffle head's at 0.
    assert model.walkthrough_ac.actor_and_critic.bias[0].item() == pytest.approx(-3.0)
    assert model.unshuffle_ac.actor_and_critic.bias[0].item() == 0.0


def test_two_phase_requires_matching_action_names():
    with pytest.raises(ValueError):
        TwoPhaseRearrangeActorCriticSimpleConvRNN(gym.spaces.Discrete(N_ACTIONS), _rgb_space())
    with pytest.raises(ValueError):
        TwoPhaseRearrangeActorCriticSimpleConvRNN(
            gym.spaces.Discrete(N_ACTIONS), _rgb_space(), action_names=ACTION_NAMES[:-1]
        )


def test_two_phase_prev_action_embedding_uses_masks():
    model, obs = _make("two_phase")
    mem = _memory(model, "zeros")
    prev_a = torch.full((NSTEPS, NSAMPLERS), 5, dtype=torch.long)
    prev_b = torch.full((NSTEPS, NSAMPLERS), 7, dtype=torch.long)
    # At task starts the previous action is replaced by the start token.
    out_a, _ = _run(model, obs, mem, _masks(0), prev_a)
    out_b, _ = _run(model, obs, mem, _masks(0), prev_b)
    torch.testing.assert_close(out_a.values, out_b.values)
    out_a, _ = _run(model, obs, mem, _masks(1), prev_a)
    out_b, _ = _run(model, obs, mem, _masks(1), prev_b)
    assert not torch.allclose(out_a.values, out_b.values)


def test_resnet_channels_from_observation_space():
    torch.manual_seed(0)
    model = ResNetRearrangeActorCriticRNN(gym.spaces.Discrete(N_ACTIONS), _resnet_space(c=32))
    assert model.visual_attention[0].in_channels == 96  # [A, B, A*B]
    assert model.visual_encoder[0].in_channels == 96
    out, _ = _run(model, _resnet_obs(c=32), _memory(model), _masks(1))
    assert out.distributions.logits.shape == (NSTEPS, NSAMPLERS, N_ACTIONS)


# ------------------------------------------------------------------ MaskedPPO
T, N = 4, 3


def _fake_batch(seed=0, mask=None):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(T, N, N_ACTIONS, generator=g, requires_grad=True)
    values = torch.randn(T, N, 1, generator=g, requires_grad=True)
    adv = torch.randn(T, N, 1, generator=g)
    batch = {
        "observations": {
            "in_walkthrough_phase": (
                torch.ones(T, N, 1, dtype=torch.bool) if mask is None else mask.clone()
            )
        },
        "actions": torch.randint(0, N_ACTIONS, (T, N), generator=g),
        "old_action_log_probs": torch.randn(T, N, generator=g) * 0.1 - 4.4,
        "values": torch.randn(T, N, 1, generator=g),
        "returns": torch.randn(T, N, 1, generator=g),
        "adv_targ": adv,
        "norm_adv_targ": (adv - adv.mean()) / (adv.std() + 1e-5),
        "masks": torch.ones(T, N, 1),
        "bsize": T * N,
    }
    output = ActorCriticOutput(
        distributions=CategoricalDistr(logits=logits), values=values, extras={}
    )
    return batch, output, (logits, values)


def test_masked_ppo_equals_ppo_with_all_ones_mask():
    batch, output, _ = _fake_batch()
    ref, ref_info = PPO(**PPOConfig).loss(step_count=0, batch=batch, actor_critic_output=output)
    batch, output, _ = _fake_batch()
    loss, info = MaskedPPO("in_walkthrough_phase", PPOConfig).loss(
        step_count=0, batch=batch, actor_critic_output=output
    )
    torch.testing.assert_close(loss, ref, atol=1e-6, rtol=1e-5)
    assert set(info) == set(ref_info) == {"ppo_total", "value", "action", "entropy"}
    for k in info:
        assert info[k] == pytest.approx(ref_info[k], rel=1e-5, abs=1e-6)


def test_masked_ppo_ignores_masked_out_steps():
    mask = torch.rand(T, N, 1, generator=torch.Generator().manual_seed(1)) > 0.5
    mask[0, 0] = True
    mask[1, 1] = False
    loss_fn = MaskedPPO("in_walkthrough_phase", PPOConfig)
    batch, output, (logits, values) = _fake_batch(mask=mask)
    loss, info = loss_fn.loss(step_count=0, batch=batch, actor_critic_output=output)

    off = ~mask.view(T, N)
    batch2, _, _ = _fake_batch(mask=mask)
    g = torch.Generator().manual_seed(7)
    logits2 = logits.detach().clone()
    values2 = values.detach().clone()
    logits2[off] = torch.randn(int(off.sum()), N_ACTIONS, generator=g) * 3
    values2[off] = torch.randn(int(off.sum()), 1, generator=g) * 3
    for key in ["returns", "values", "norm_adv_targ", "adv_targ"]:
        batch2[key][off] = torch.randn(int(off.sum()), 1, generator=g) * 5
    batch2["old_action_log_probs"][off] = torch.randn(int(off.sum()), generator=g)
    batch2["actions"][off] = torch.randint(0, N_ACTIONS, (int(off.sum()),), generator=g)
    output2 = ActorCriticOutput(
        distributions=CategoricalDistr(logits=logits2), values=values2, extras={}
    )
    loss2, info2 = loss_fn.loss(step_count=0, batch=batch2, actor_critic_output=output2)
    torch.testing.assert_close(loss, loss2)
    assert info == pytest.approx(info2)

    # Equals PPO restricted to the masked-in steps (mean over them).
    on = mask.view(T, N)
    sub = {
        k: (v[on].unsqueeze(1) if k not in ("observations", "bsize") else v)
        for k, v in batch.items()
    }
    sub_out = ActorCriticOutput(
        distributions=CategoricalDistr(logits=logits.detach()[on].unsqueeze(1)),
        values=values.detach()[on].unsqueeze(1),
        extras={},
    )
    ref, _ = PPO(**PPOConfig).loss(step_count=0, batch=sub, actor_critic_output=sub_out)
    torch.testing.assert_close(loss.detach(), ref, atol=1e-6, rtol=1e-5)

    # Gradients reach only the masked-in steps.
    loss.backward()
    assert logits.grad[off].abs().max() == 0
    assert values.grad[off].abs().max() == 0
    assert logits.grad[on].abs().max() > 0


def test_masked_ppo_empty_mask_logs_nothing():
    batch, output, (logits, _) = _fake_batch(mask=torch.zeros(T, N, 1, dtype=torch.bool))
    loss, info = MaskedPPO("in_walkthrough_phase", PPOConfig).loss(
        step_count=0, batch=batch, actor_critic_output=output
    )
    assert info == {}
    assert loss.item() == 0.0
    loss.backward()  # still part of the graph, contributes zero gradient
    assert logits.grad.abs().max() == 0
