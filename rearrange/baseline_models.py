"""Baseline actor-critic models for the 2023 Rearrangement Challenge.

Written after the official `rearrange/baseline_models.py` of allenai/ai2thor-rearrangement
(§6.4 in docs/references.md) on top of AllenAct's building blocks (`SimpleCNN`,
`RNNStateEncoder`, `LinearActorCriticHead`, `CategoricalDistr`). Parameter names and shapes are
the official ones (`tests/fixtures/rearrangement_official_state_dict_keys.json`),
so the published checkpoints load with ``strict=True``:

* SimpleConv: ``visual_encoder.rgb_cnn.*`` (the encoder *is* a `SimpleCNN`);
* ResNet: ``visual_attention.{0,2}.*`` and ``visual_encoder.0.*`` on the model
  itself (no wrapper module in between).

The visual front-ends are two mixins (`_SimpleConvVisual`, `_ResNetPairVisual`)
shared by the one- and two-phase models, so each architecture is written once.

Conventions (those of AllenAct's on-policy engine):

* observations are batched as ``[steps, samplers, ...]``: raw RGB as
  ``[steps, samplers, H, W, 3]`` floats, ResNet features as
  ``[steps, samplers, C, h, w]``, ``in_walkthrough_phase`` as
  ``[steps, samplers, 1]`` bools;
* ``prev_actions`` is a ``[steps, samplers]`` long tensor;
* ``masks`` is ``[steps, samplers, 1]`` with 0 on the first step of a task;
* the outputs are ``CategoricalDistr(logits=[steps, samplers, n_actions])`` and
  values ``[steps, samplers, 1]``; recurrent state lives in a `Memory` under the
  keys of `_recurrent_memory_specification`.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, cast

import gym
import numpy as np
import torch
import torch.nn as nn
from gym.spaces import Dict as SpaceDict

from allenact.algorithms.onpolicy_sync.policy import (
    ActorCriticModel,
    LinearActorCriticHead,
    LinearActorHead,
    LinearCriticHead,
    ObservationType,
)
from allenact.base_abstractions.distributions import CategoricalDistr
from allenact.base_abstractions.misc import ActorCriticOutput, Memory
from allenact.embodiedai.models.basic_models import RNNStateEncoder, SimpleCNN
from allenact.utils.model_utils import simple_conv_and_linear_weights_init

__all__ = [
    "RearrangeActorCriticSimpleConvRNN",
    "ResNetRearrangeActorCriticRNN",
    "TwoPhaseRearrangeActorCriticSimpleConvRNN",
    "ResNetTwoPhaseRearrangeActorCriticRNN",
    "WALKTHROUGH_DISALLOWED_ACTION_SUBSTRINGS",
    "ConcatRGBSimpleCNN",
]

# Actions whose names contain one of these get a large negative logit during
# the walkthrough phase (they can only fail there).
WALKTHROUGH_DISALLOWED_ACTION_SUBSTRINGS: Tuple[str, ...] = ("drop", "open", "pickup")

_CONCAT_UUID = "_rearrange_concat_rgb"


def _num_actions(action_space: gym.Space) -> int:
    assert isinstance(action_space, gym.spaces.Discrete), (
        f"Rearrangement baselines need a Discrete action space, got {action_space}."
    )
    return int(action_space.n)


def _rnn_memory_spec(num_layers: int, hidden_size: int) -> Tuple:
    return (
        (("layer", num_layers), ("sampler", None), ("hidden", hidden_size)),
        torch.float32,
    )


class ConcatRGBSimpleCNN(SimpleCNN):
    """AllenAct `SimpleCNN` applied to two HxWx3 images stacked along channels.

    It subclasses `SimpleCNN` (rather than wrapping one) so its parameters are
    ``rgb_cnn.*``, as in the official checkpoints.
    ``goal_difference=True`` appends |a - b| as a third image (9 channels for two RGB frames):
    an explicit per-pixel comparison of the current and goal views, so "what differs from the
    goal" does not have to be learned from the two stacked frames (off = the official model).
    Input: ``observations[uuid_a]``, ``observations[uuid_b]`` of shape
    ``[steps, samplers, H, W, 3]``; output ``[steps, samplers, output_size]``.
    """

    def __init__(
        self,
        observation_space: SpaceDict,
        uuid_a: str,
        uuid_b: str,
        output_size: int,
        goal_difference: bool = False,
    ):
        space_a = observation_space.spaces[uuid_a]
        space_b = observation_space.spaces[uuid_b]
        assert space_a.shape[:2] == space_b.shape[:2], (
            f"Image sizes differ: {space_a.shape} vs {space_b.shape}"
        )
        h, w = space_a.shape[:2]
        channels = space_a.shape[2] + space_b.shape[2]
        if goal_difference:
            assert space_a.shape == space_b.shape, (
                f"goal_difference needs equal image spaces: {space_a.shape} vs {space_b.shape}"
            )
            channels += space_a.shape[2]
        # SimpleCNN only reads the shape of `rgb_uuid`'s space.
        concat_space = SpaceDict(
            {
                _CONCAT_UUID: gym.spaces.Box(
                    low=-np.inf, high=np.inf, shape=(h, w, channels), dtype=np.float32
                )
            }
        )
        super().__init__(
            observation_space=concat_space,
            output_size=output_size,
            rgb_uuid=_CONCAT_UUID,
            depth_uuid=None,
        )
        self.uuid_a = uuid_a
        self.uuid_b = uuid_b
        self.output_size = output_size
        self.goal_difference = bool(goal_difference)

    def forward(self, observations: ObservationType) -> torch.Tensor:  # type: ignore[override]
        a = cast(torch.Tensor, observations[self.uuid_a]).float()
        b = cast(torch.Tensor, observations[self.uuid_b]).float()
        parts = (a, b, (a - b).abs()) if self.goal_difference else (a, b)
        return super().forward({_CONCAT_UUID: torch.cat(parts, dim=-1)})


class _SimpleConvVisual:
    """Visual front-end: `ConcatRGBSimpleCNN` on (rgb, unshuffled_rgb) as ``visual_encoder``.

    ``visual_layer_norm`` (a model constructor flag; off = the official model):
    a parameter-free LayerNorm on the encoder's output. Why: `SimpleCNN` ends in an unbounded
    ReLU, and from random init Adam at lr >= 1e-3 scales those features up ~10^3-fold within
    ~10 updates; the GRU's gates then saturate, its output no longer depends on the frames, the
    encoder gets zero gradient and the policy is stuck at the expert's action marginal
    (experiments/rearrange_fit_diagnosis). The norm has no parameters, so the state-dict
    keys stay the official ones.

    ``goal_difference`` (set before `_build_visual` runs; off = the official model): the
    encoder also sees |rgb - unshuffled_rgb| (see `ConcatRGBSimpleCNN`). The keys stay the
    same, but the first conv's weight has 9 input channels instead of 6.
    """

    visual_encoder: ConcatRGBSimpleCNN
    visual_layer_norm: bool = False
    goal_difference: bool = False

    def _build_visual(self, space: SpaceDict, uuid_a: str, uuid_b: str, output_size: int) -> int:
        self.visual_encoder = ConcatRGBSimpleCNN(
            space, uuid_a, uuid_b, output_size=output_size, goal_difference=self.goal_difference
        )
        return output_size

    def _encode(self, observations: ObservationType) -> torch.Tensor:
        x = self.visual_encoder(observations)
        if self.visual_layer_norm:
            x = nn.functional.layer_norm(x, x.shape[-1:])
        return x


class _ResNetPairVisual:
    """Visual front-end: the [A, B, A⊙B] 1x1-conv attention block of §6.4.

    A, B: ``[steps, samplers, C, h, w]`` ResNet features (C read from the space).
    X = cat[A, B, A⊙B] (3C channels);
    attention = softmax over the h·w positions of
    ``visual_attention`` = Conv1x1(3C→32)→ReLU→Conv1x1(32→1);
    feature = spatial *mean* of ``visual_encoder`` = ReLU(Conv1x1(3C→out))(X) × attention.
    """

    visual_attention: nn.Sequential
    visual_encoder: nn.Sequential
    _pair_uuids: Tuple[str, str]

    def _build_visual(
        self,
        space: SpaceDict,
        uuid_a: str,
        uuid_b: str,
        output_size: int,
        attention_hidden: int = 32,
    ) -> int:
        shape_a, shape_b = space.spaces[uuid_a].shape, space.spaces[uuid_b].shape
        assert len(shape_a) == 3 and tuple(shape_a) == tuple(shape_b), (
            f"Expected two equal C×h×w feature spaces, got {shape_a} and {shape_b}."
        )
        self._pair_uuids = (uuid_a, uuid_b)
        three_c = 3 * int(shape_a[0])
        self.visual_attention = nn.Sequential(
            nn.Conv2d(three_c, attention_hidden, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(attention_hidden, 1, 1),
        )
        self.visual_encoder = nn.Sequential(
            nn.Conv2d(three_c, output_size, 1), nn.ReLU(inplace=True)
        )
        self.visual_attention.apply(simple_conv_and_linear_weights_init)
        self.visual_encoder.apply(simple_conv_and_linear_weights_init)
        return output_size

    def _encode(self, observations: ObservationType) -> torch.Tensor:
        a = cast(torch.Tensor, observations[self._pair_uuids[0]]).float()
        b = cast(torch.Tensor, observations[self._pair_uuids[1]]).float()
        lead = a.shape[:-3]
        a = a.reshape((-1,) + a.shape[-3:])
        b = b.reshape((-1,) + b.shape[-3:])
        x = torch.cat((a, b, a * b), dim=1)
        n, _, h, w = x.shape
        attn = torch.softmax(self.visual_attention(x).view(n, h * w), dim=-1).view(n, 1, h, w)
        feats = (self.visual_encoder(x) * attn).mean(dim=(2, 3))
        return feats.view(*lead, feats.shape[-1])


class _OnePhaseRNNActorCritic(ActorCriticModel[CategoricalDistr]):
    """Visual front-end (a mixin's `_build_visual`/`_encode`) → RNN → linear actor and critic."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str,
        unshuffled_rgb_uuid: str,
        hidden_size: int,
        num_rnn_layers: int,
        rnn_type: str,
    ):
        super().__init__(action_space=action_space, observation_space=observation_space)
        self.rgb_uuid = rgb_uuid
        self.unshuffled_rgb_uuid = unshuffled_rgb_uuid
        self.hidden_size = hidden_size
        self.num_actions = _num_actions(action_space)
        visual_size = self._build_visual(
            observation_space, rgb_uuid, unshuffled_rgb_uuid, hidden_size
        )
        self.state_encoder = RNNStateEncoder(
            input_size=visual_size,
            hidden_size=hidden_size,
            num_layers=num_rnn_layers,
            rnn_type=rnn_type,
        )
        self.actor = LinearActorHead(hidden_size, self.num_actions)
        self.critic = LinearCriticHead(hidden_size)

    def _build_visual(self, space: SpaceDict, uuid_a: str, uuid_b: str, output_size: int) -> int:
        raise NotImplementedError  # provided by a visual mixin

    def _encode(self, observations: ObservationType) -> torch.Tensor:
        raise NotImplementedError  # provided by a visual mixin

    @property
    def num_recurrent_layers(self) -> int:
        return self.state_encoder.num_recurrent_layers

    def _recurrent_memory_specification(self):
        return {"rnn": _rnn_memory_spec(self.num_recurrent_layers, self.hidden_size)}

    def forward(  # type:ignore
        self,
        observations: ObservationType,
        memory: Memory,
        prev_actions: torch.Tensor,
        masks: torch.FloatTensor,
    ) -> Tuple[ActorCriticOutput[CategoricalDistr], Optional[Memory]]:
        x = self._encode(observations)
        x, rnn_hidden = self.state_encoder(x, memory.tensor("rnn"), masks)
        return (
            ActorCriticOutput(distributions=self.actor(x), values=self.critic(x), extras={}),
            memory.set_tensor("rnn", rnn_hidden),
        )


class RearrangeActorCriticSimpleConvRNN(_SimpleConvVisual, _OnePhaseRNNActorCritic):
    """1-phase SimpleConvRNN baseline (§6.4).

    ``rgb`` and ``unshuffled_rgb`` (H×W×3 each) are stacked into 6 channels and
    encoded by AllenAct's `SimpleCNN` (→ `hidden_size`), followed by an RNN
    (GRU by default) and linear actor/critic heads. The walkthrough-only configs
    pass the same uuid twice. ``visual_layer_norm=True`` normalises the encoder's output
    (parameter-free; see `_SimpleConvVisual`) so training from scratch at lr >= 1e-3 does not
    saturate the GRU; leave it off to run the official checkpoints as trained.
    ``goal_difference=True`` adds |rgb - unshuffled_rgb| as 3 more input channels (9 in all);
    off by default, so the official checkpoints load unchanged.
    Memory: ``"rnn"`` of shape ``[layers, samplers, hidden_size]``.
    """

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str = "rgb",
        unshuffled_rgb_uuid: str = "unshuffled_rgb",
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "GRU",
        visual_layer_norm: bool = False,
        goal_difference: bool = False,
    ):
        # read by `_build_visual` during the base constructor (a plain bool, so allowed before
        # nn.Module.__init__)
        self.goal_difference = bool(goal_difference)
        super().__init__(
            action_space,
            observation_space,
            rgb_uuid,
            unshuffled_rgb_uuid,
            hidden_size,
            num_rnn_layers,
            rnn_type,
        )
        self.visual_layer_norm = bool(visual_layer_norm)


class ResNetRearrangeActorCriticRNN(_ResNetPairVisual, _OnePhaseRNNActorCritic):
    """1-phase ResNet baseline (§6.4).

    Inputs ``rgb_resnet`` / ``unshuffled_rgb_resnet`` are C×h×w feature maps (C
    is read from the observation space: 512 for ResNet18, 2048 for
    ResNet50/CLIP-RN50; h = w = 7 at 224 px). They go through the [A, B, A⊙B]
    attention block (→ `hidden_size`), an RNN and linear actor/critic heads.
    Memory: ``"rnn"`` of shape ``[layers, samplers, hidden_size]``.
    """

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str = "rgb_resnet",
        unshuffled_rgb_uuid: str = "unshuffled_rgb_resnet",
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "GRU",
    ):
        super().__init__(
            action_space,
            observation_space,
            rgb_uuid,
            unshuffled_rgb_uuid,
            hidden_size,
            num_rnn_layers,
            rnn_type,
        )


class _TwoPhaseRNNActorCritic(ActorCriticModel[CategoricalDistr]):
    """2-phase baseline (§6.4); the visual front-end comes from a mixin.

    The state encoder is a GRU by default: the configs say ``RNN_TYPE="LSTM"``,
    but the published checkpoints hold 3·512-row (GRU) state-encoder weights
    (`rearrangement_official_state_dict_keys.json`), and loading them is what
    counts; ``rnn_type="LSTM"`` is still accepted.

    Per step t (run step by step, since the walkthrough encoding fed to the
    state encoder at t is the one produced at t-1):

    * v_t = visual feature of (rgb, unshuffled_rgb) (→ `hidden_size`);
    * a_t = Embedding(n_actions + 1)(mask_t · (prev_action_t + 1)) (0 at a task start);
    * p_t = Embedding(2)(in_walkthrough_phase_t);
    * o_t, h = RNN([v_t, a_t, p_t, w_{t-1}], h · mask_t) — the state-encoder
      state resets at the start of every task (walkthrough and unshuffle);
    * the walkthrough encoding w is reset only where mask_t == 0 *and* the step
      is a walkthrough step; during walkthrough steps
      w_t = GRU(o_t, w_{t-1}); during unshuffle steps w_t = w_{t-1} (frozen);
    * logits/value come from the walkthrough or the unshuffle
      `LinearActorCriticHead` (n_actions logits + 1 value each), chosen by
      phase. The walkthrough head's `done` bias starts at `walkthrough_done_bias`
      (−3), and during the walkthrough `walkthrough_disallowed_logit_offset`
      (−1000) is added to the logits of every action whose name contains
      "drop", "open" or "pickup".

    ``zero_walkthrough_encoding_at_start``: on walkthrough-start steps the
    encoding fed to the state encoder is the reset (zero) one. With False the stale
    encoding of the previous episode is fed on that one step (the upstream
    SimpleConv variant's behaviour per §6.4; the ResNet variant zeroes it); the
    GRU update itself always starts from zero.

    Memory: ``"rnn"`` ``[layers, samplers, hidden_size]`` (``2·layers`` for an
    LSTM: h and c stacked, AllenAct's `RNNStateEncoder` packing) and ``"walkthrough_encoding"``
    ``[1, samplers, hidden_size]``.
    """

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str,
        unshuffled_rgb_uuid: str,
        in_walkthrough_phase_uuid: str = "in_walkthrough_phase",
        is_walkthrough_phase_embedding_dim: int = 32,
        done_action_index: int = 0,
        action_names: Optional[Sequence[str]] = None,
        walkthrough_disallowed_action_substrings: Sequence[
            str
        ] = WALKTHROUGH_DISALLOWED_ACTION_SUBSTRINGS,
        walkthrough_disallowed_logit_offset: float = -1000.0,
        walkthrough_done_bias: float = -3.0,
        prev_action_embedding_dim: int = 32,
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "GRU",
        zero_walkthrough_encoding_at_start: bool = True,
    ):
        super().__init__(action_space=action_space, observation_space=observation_space)
        self.num_actions = _num_actions(action_space)
        self.action_names = _checked_action_names(action_names, self.num_actions, done_action_index)
        self.rgb_uuid = rgb_uuid
        self.unshuffled_rgb_uuid = unshuffled_rgb_uuid
        self.in_walkthrough_phase_uuid = in_walkthrough_phase_uuid
        self.hidden_size = hidden_size
        self.done_action_index = done_action_index
        self.zero_walkthrough_encoding_at_start = zero_walkthrough_encoding_at_start

        visual_size = self._build_visual(
            observation_space, rgb_uuid, unshuffled_rgb_uuid, hidden_size
        )
        self.prev_action_embedder = nn.Embedding(self.num_actions + 1, prev_action_embedding_dim)
        self.is_walkthrough_phase_embedder = nn.Embedding(2, is_walkthrough_phase_embedding_dim)
        self.state_encoder = RNNStateEncoder(
            input_size=visual_size
            + prev_action_embedding_dim
            + is_walkthrough_phase_embedding_dim
            + hidden_size,
            hidden_size=hidden_size,
            num_layers=num_rnn_layers,
            rnn_type=rnn_type,
        )
        self.walkthrough_encoder = RNNStateEncoder(
            input_size=hidden_size, hidden_size=hidden_size, num_layers=1, rnn_type="GRU"
        )
        self.walkthrough_ac = LinearActorCriticHead(hidden_size, self.num_actions)
        with torch.no_grad():
            self.walkthrough_ac.actor_and_critic.bias[done_action_index] = float(
                walkthrough_done_bias
            )
        self.unshuffle_ac = LinearActorCriticHead(hidden_size, self.num_actions)

        offsets = torch.tensor(
            [
                walkthrough_disallowed_logit_offset
                if any(s in name for s in walkthrough_disallowed_action_substrings)
                else 0.0
                for name in self.action_names
            ],
            dtype=torch.float32,
        )
        self.walkthrough_logit_offsets: torch.Tensor
        self.register_buffer("walkthrough_logit_offsets", offsets, persistent=False)

    def _build_visual(self, space: SpaceDict, uuid_a: str, uuid_b: str, output_size: int) -> int:
        raise NotImplementedError  # provided by a visual mixin

    def _encode(self, observations: ObservationType) -> torch.Tensor:
        raise NotImplementedError  # provided by a visual mixin

    @property
    def num_recurrent_layers(self) -> int:
        return self.state_encoder.num_recurrent_layers

    def _recurrent_memory_specification(self):
        return {
            "rnn": _rnn_memory_spec(self.num_recurrent_layers, self.hidden_size),
            "walkthrough_encoding": _rnn_memory_spec(
                self.walkthrough_encoder.num_recurrent_layers, self.hidden_size
            ),
        }

    def _non_recurrent_inputs(
        self,
        observations: ObservationType,
        prev_actions: torch.Tensor,
        masks: torch.Tensor,
        in_walkthrough: torch.Tensor,
    ) -> torch.Tensor:
        """[v_t, a_t, p_t] for every step: ``[T, N, visual + 2·embedding]``."""
        nsteps, nsamplers = masks.shape[:2]
        prev = prev_actions.view(nsteps, nsamplers).long()
        prev_emb = self.prev_action_embedder(masks.view(nsteps, nsamplers).long() * (prev + 1))
        phase_emb = self.is_walkthrough_phase_embedder(
            in_walkthrough.view(nsteps, nsamplers).long()
        )
        return torch.cat((self._encode(observations), prev_emb, phase_emb), dim=-1)

    def _unroll(
        self,
        non_recurrent: torch.Tensor,
        masks: torch.Tensor,
        in_walkthrough: torch.Tensor,
        rnn_hidden: torch.Tensor,
        wt_hidden: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Step-by-step state-encoder + walkthrough-GRU recurrence; returns (outputs, rnn, walkthrough)."""
        nsteps, nsamplers = masks.shape[:2]
        # The walkthrough encoding is reset only on walkthrough-start steps.
        wt_masks = 1.0 - (1.0 - masks) * in_walkthrough.float()  # [T, N, 1]
        outputs = []
        for t in range(nsteps):
            wt_mask_t = wt_masks[t : t + 1]  # [1, N, 1]
            wt_prev_masked = wt_hidden * wt_mask_t.view(1, nsamplers, 1)
            wt_in = wt_prev_masked if self.zero_walkthrough_encoding_at_start else wt_hidden
            x_t = torch.cat(
                (non_recurrent[t : t + 1], wt_in[-1].unsqueeze(0)), dim=-1
            )  # [1, N, in]
            out_t, rnn_hidden = self.state_encoder(
                x_t, rnn_hidden, cast(torch.FloatTensor, masks[t : t + 1])
            )
            _, wt_new = self.walkthrough_encoder(
                out_t, wt_hidden, cast(torch.FloatTensor, wt_mask_t)
            )
            wt_hidden = torch.where(in_walkthrough[t].view(1, nsamplers, 1), wt_new, wt_prev_masked)
            outputs.append(out_t)
        return torch.cat(outputs, dim=0), rnn_hidden, wt_hidden

    def forward(  # type:ignore
        self,
        observations: ObservationType,
        memory: Memory,
        prev_actions: torch.Tensor,
        masks: torch.FloatTensor,
    ) -> Tuple[ActorCriticOutput[CategoricalDistr], Optional[Memory]]:
        nsteps, nsamplers = masks.shape[:2]
        masks = cast(torch.FloatTensor, masks.view(nsteps, nsamplers, 1).float())
        in_walkthrough = (
            cast(torch.Tensor, observations[self.in_walkthrough_phase_uuid])
            .view(nsteps, nsamplers, 1)
            .bool()
        )
        non_recurrent = self._non_recurrent_inputs(
            observations, prev_actions, masks, in_walkthrough
        )
        x, rnn_hidden, wt_hidden = self._unroll(
            non_recurrent,
            masks,
            in_walkthrough,
            memory.tensor("rnn"),
            memory.tensor("walkthrough_encoding"),
        )
        wt_distr, wt_values = self.walkthrough_ac(x)
        un_distr, un_values = self.unshuffle_ac(x)
        wt_logits = wt_distr.logits + self.walkthrough_logit_offsets
        logits = torch.where(in_walkthrough, wt_logits, un_distr.logits)
        values = torch.where(in_walkthrough, wt_values, un_values)

        memory = memory.set_tensor("rnn", rnn_hidden)
        memory = memory.set_tensor("walkthrough_encoding", wt_hidden)
        return (
            ActorCriticOutput(
                distributions=CategoricalDistr(logits=logits), values=values, extras={}
            ),
            memory,
        )


class TwoPhaseRearrangeActorCriticSimpleConvRNN(_SimpleConvVisual, _TwoPhaseRNNActorCritic):
    """2-phase SimpleConv baseline: `SimpleCNN` on cat[rgb, unshuffled_rgb] + the 2-phase recurrence.

    See `_TwoPhaseRNNActorCritic` for the recurrence, heads and walkthrough masking;
    every keyword of that class is accepted. ``visual_layer_norm`` as in the 1-phase
    `RearrangeActorCriticSimpleConvRNN` (parameter-free, so the state-dict keys do not change).
    """

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str = "rgb",
        unshuffled_rgb_uuid: str = "unshuffled_rgb",
        visual_layer_norm: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(action_space, observation_space, rgb_uuid, unshuffled_rgb_uuid, **kwargs)
        self.visual_layer_norm = bool(visual_layer_norm)


class ResNetTwoPhaseRearrangeActorCriticRNN(_ResNetPairVisual, _TwoPhaseRNNActorCritic):
    """2-phase ResNet baseline: the [A, B, A⊙B] attention block + the 2-phase recurrence.

    As officially, the walkthrough encoding fed to the state encoder is zeroed on
    walkthrough-start steps (``zero_walkthrough_encoding_at_start=True``).
    """

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        rgb_uuid: str = "rgb_resnet",
        unshuffled_rgb_uuid: str = "unshuffled_rgb_resnet",
        **kwargs,
    ) -> None:
        kwargs.setdefault("zero_walkthrough_encoding_at_start", True)
        super().__init__(action_space, observation_space, rgb_uuid, unshuffled_rgb_uuid, **kwargs)


def _checked_action_names(
    action_names: Optional[Sequence[str]], num_actions: int, done_action_index: int
) -> List[str]:
    """The ordered action names the walkthrough mask is built from, checked against the space."""
    if action_names is None:
        raise ValueError(
            "`action_names` (the ordered list of action names) is required to"
            " know which actions to mask during the walkthrough phase."
        )
    names = list(action_names)
    if len(names) != num_actions:
        raise ValueError(f"{len(names)} action names for {num_actions} actions.")
    if not 0 <= done_action_index < num_actions:
        raise ValueError(f"done_action_index {done_action_index} out of range.")
    return names
