"""The Active Neural SLAM (ANM) map baselines (§6.4), on AllenAct's `ActiveNeuralSLAM` module.

- `WalkthroughActorCriticResNetWithPassiveMap`: the walkthrough mapping model. The ANM's
  ResNet-18 trunk sees the frame; the policy reads the (detached) features, and the ANM's map
  head predicts the egocentric height/semantic maps that the map losses supervise. Its `map.`
  parameters are what the frozen-map configs load (`rearrange.export_map` writes them out).
- `OnePhaseRearrangeActorCriticFrozenMap` / `TwoPhaseRearrangeActorCriticFrozenMap`: the map
  is frozen (no gradients, always in eval mode); an allocentric map of the goal (walkthrough)
  room is built with ground-truth egomotion and compared with the current egocentric map.

Batches follow AllenAct's conventions (see `rearrange.baseline_models`): observations
`[steps, samplers, ...]`, `masks` `[steps, samplers, 1]` with 0 on a task's first step.
Poses come from `RelativePositionChangeTHORSensor` (THOR's clockwise degrees) and
`ReachableBoundsTHORSensor`; the ANM wants positions relative to the map origin (the bounds'
minimum) and counter-clockwise rotations, hence the sign flip in `map_frame_poses`.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple, cast

import gym
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
from allenact.embodiedai.mapping.mapping_models.active_neural_slam import ActiveNeuralSLAM
from allenact.embodiedai.models.basic_models import RNNStateEncoder
from allenact.utils.model_utils import simple_conv_and_linear_weights_init

from .map_settings import (
    HEIGHT_LOGITS_KEY,
    HEIGHT_MAP_CHANNELS,
    REL_POSITION_UUID,
    SCENE_BOUNDS_UUID,
    SEMANTIC_LOGITS_KEY,
    SEMANTIC_MAP_CHANNELS,
)

MAP_MEMORY_KEY = "walkthrough_allo_map_probs"
DISALLOWED_IN_WALKTHROUGH = (
    "drop",
    "open",
    "pickup",
)  # §6.4: these logits get -1000 in the walkthrough

__all__ = [
    "WalkthroughActorCriticResNetWithPassiveMap",
    "OnePhaseRearrangeActorCriticFrozenMap",
    "TwoPhaseRearrangeActorCriticFrozenMap",
    "PairAttentionEncoder",
    "map_frame_poses",
    "egocentric_view",
    "MAP_MEMORY_KEY",
]


def _rnn_spec(layers: int, hidden: int) -> Tuple:
    return ((("layer", layers), ("sampler", None), ("hidden", hidden)), torch.float32)


def _map_spec(anm: ActiveNeuralSLAM) -> Tuple:
    return (
        (
            ("sampler", None),
            ("channels", anm.n_map_channels),
            ("height", anm.map_size),
            ("width", anm.map_size),
        ),
        torch.float32,
    )


def _nchw(images: torch.Tensor) -> torch.Tensor:
    """[steps, samplers, H, W, 3] -> [steps*samplers, 3, H, W]."""
    return images.reshape(-1, *images.shape[-3:]).permute(0, 3, 1, 2).float()


def resnet_features(anm: ActiveNeuralSLAM, images: torch.Tensor) -> torch.Tensor:
    """The ANM's normalised ResNet-18 features (512x7x7) of [steps, samplers, H, W, 3] frames."""
    return anm.resnet_normalizer(anm.resnet_l5(_nchw(images)))


def map_frame_poses(
    observations: ObservationType,
    rel_uuid: str = REL_POSITION_UUID,
    bounds_uuid: str = SCENE_BOUNDS_UUID,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(last x, z, rot) relative to the map origin and the egocentric (dx, dz, drot), ANM convention.

    Both `[steps, samplers, 3]`; rotations are negated (THOR turns clockwise, the ANM's map
    counter-clockwise), positions are metres from the scene bounds' minimum."""
    rel = cast(Dict[str, torch.Tensor], observations[rel_uuid])
    bounds = cast(Dict[str, torch.Tensor], observations[bounds_uuid])
    last = rel["last_allocentric_position"].float().clone()
    delta = rel["dx_dz_dr"].float().clone()
    last[..., 0] -= bounds["x_range"][..., 0].float()
    last[..., 1] -= bounds["z_range"][..., 0].float()
    last[..., 2] = -last[..., 2]
    delta[..., 2] = -delta[..., 2]
    return last, delta


def egocentric_view(
    anm: ActiveNeuralSLAM, allo: torch.Tensor, xzr: torch.Tensor, match_placement: bool = True
) -> torch.Tensor:
    """The 40x40 egocentric crop of allocentric maps `[B, C, 210, 210]` at poses `xzr` `[B, 3]`.

    AllenAct 0.5.4's ANM places egocentric updates into the allocentric map mirrored about the
    map centre relative to where `allocentric_map_to_egocentric_view` crops (the rotations
    agree; tests/test_rearrange_map_configs.py shows the round trip). With `match_placement`
    the crop is taken at the mirrored position, so an update placed at a pose is read back at
    that pose; False reproduces the library's (and so presumably the official models') crop."""
    if match_placement:
        xzr = xzr.clone()
        xzr[:, :2] = anm.map_size_in_cm / 100.0 - xzr[:, :2]
    return anm.allocentric_map_to_egocentric_view(
        allocentric_map=allo, xzr=xzr, padding_mode="zeros"
    )


class PairAttentionEncoder(nn.Module):
    """[a, b, a*b] -> softmax spatial attention x conv encoding, spatially averaged (§6.4).

    Used on ResNet features (1x1 convs, attention width 32) and on 75-channel egocentric maps
    (2x2 stride-2 convs, width 128, one more 1x1 layer). Inputs `[B, C, h, w]`, output `[B, out]`."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int = 512,
        attention_hidden: int = 32,
        kernel: int = 1,
        extra_layer: bool = False,
    ) -> None:
        super().__init__()
        c3 = 3 * in_channels
        self.attention = nn.Sequential(
            nn.Conv2d(c3, attention_hidden, kernel, stride=kernel),
            nn.ReLU(inplace=True),
            nn.Conv2d(attention_hidden, 1, 1),
        )
        layers = [nn.Conv2d(c3, out_channels, kernel, stride=kernel), nn.ReLU(inplace=True)]
        if extra_layer:
            layers += [nn.Conv2d(out_channels, out_channels, 1), nn.ReLU(inplace=True)]
        self.encoder = nn.Sequential(*layers)
        self.output_size = out_channels
        self.apply(simple_conv_and_linear_weights_init)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        x = torch.cat((a, b, a * b), dim=1)
        logits = self.attention(x)
        n, _, h, w = logits.shape
        attn = torch.softmax(logits.view(n, h * w), dim=-1).view(n, 1, h, w)
        return (self.encoder(x) * attn).mean(dim=(2, 3))


def _freeze(anm: ActiveNeuralSLAM) -> ActiveNeuralSLAM:
    anm.requires_grad_(False)
    anm.eval()  # ActiveNeuralSLAM.train returns None, so no chaining
    return anm


def _num_actions(space: gym.Space) -> int:
    if not isinstance(space, gym.spaces.Discrete):
        raise ValueError(f"the map baselines need a Discrete action space, got {space}")
    return int(space.n)


class WalkthroughActorCriticResNetWithPassiveMap(ActorCriticModel[CategoricalDistr]):
    """Walkthrough policy on ANM ResNet features plus the ANM map head as an auxiliary task.

    The policy branch (downsampler 7->5->3->1, GRU, linear actor/critic) reads detached
    features, so only the map losses train the ResNet and the map head. Extras:
    `ego_height_binned_map_logits` `[steps, samplers, 3, 40, 40]` and
    `ego_semantic_map_logits` `[steps, samplers, 72, 40, 40]` (the map losses' inputs)."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        map: ActiveNeuralSLAM,
        rgb_uuid: str = "unshuffled_rgb",
        height_map_channels: int = HEIGHT_MAP_CHANNELS,
        semantic_map_channels: int = SEMANTIC_MAP_CHANNELS,
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "GRU",
    ) -> None:
        super().__init__(action_space=action_space, observation_space=observation_space)
        if map.n_map_channels != height_map_channels + semantic_map_channels:
            raise ValueError(
                f"the map has {map.n_map_channels} channels, expected "
                f"{height_map_channels} + {semantic_map_channels}"
            )
        self.rgb_uuid = rgb_uuid
        self.height_map_channels = height_map_channels
        self.hidden_size = hidden_size
        self.map = map
        lrelu = nn.LeakyReLU
        self.visual_encoder = nn.Sequential(
            nn.Conv2d(512, 64, 1),
            lrelu(),
            nn.Conv2d(64, 128, 3),
            lrelu(),
            nn.Conv2d(128, 256, 3),
            lrelu(),
            nn.Conv2d(256, hidden_size, 3),
            lrelu(),
            nn.Flatten(),
        )
        self.visual_encoder.apply(simple_conv_and_linear_weights_init)
        self.state_encoder = RNNStateEncoder(
            hidden_size, hidden_size, num_layers=num_rnn_layers, rnn_type=rnn_type
        )
        self.actor = LinearActorHead(hidden_size, _num_actions(action_space))
        self.critic = LinearCriticHead(hidden_size)

    def _recurrent_memory_specification(self):
        return {"rnn": _rnn_spec(self.state_encoder.num_recurrent_layers, self.hidden_size)}

    def forward(
        self,
        observations: ObservationType,
        memory: Memory,
        prev_actions: torch.Tensor,  # type: ignore
        masks: torch.FloatTensor,
    ) -> Tuple[ActorCriticOutput[CategoricalDistr], Optional[Memory]]:
        nsteps, nsamplers = masks.shape[:2]
        feats = resnet_features(self.map, cast(torch.Tensor, observations[self.rgb_uuid]))
        x = self.visual_encoder(feats.detach()).view(nsteps, nsamplers, -1)
        x, rnn = self.state_encoder(x, memory.tensor("rnn"), masks)
        logits = self.map.image_to_egocentric_map_logits(images=None, resnet_image_features=feats)
        logits = logits.view(nsteps, nsamplers, *logits.shape[1:])
        extras = {
            HEIGHT_LOGITS_KEY: logits[:, :, : self.height_map_channels],
            SEMANTIC_LOGITS_KEY: logits[:, :, self.height_map_channels :],
        }
        out = ActorCriticOutput(distributions=self.actor(x), values=self.critic(x), extras=extras)
        return out, memory.set_tensor("rnn", rnn)


class _FrozenMapBase(ActorCriticModel[CategoricalDistr]):
    """Holds the frozen ANM, the map-pair encoder and the per-sampler allocentric map memory."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        map: ActiveNeuralSLAM,
        height_map_channels: int,
        semantic_map_channels: int,
        hidden_size: int,
        match_placement: bool = True,
    ) -> None:
        super().__init__(action_space=action_space, observation_space=observation_space)
        self.match_placement = match_placement
        if map.n_map_channels != height_map_channels + semantic_map_channels:
            raise ValueError(
                f"the map has {map.n_map_channels} channels, expected "
                f"{height_map_channels} + {semantic_map_channels}"
            )
        self.num_actions = _num_actions(action_space)
        self.hidden_size = hidden_size
        self.map = _freeze(map)
        self.map_encoder = PairAttentionEncoder(
            map.n_map_channels, hidden_size, attention_hidden=128, kernel=2, extra_layer=True
        )

    def train(self, mode: bool = True):
        super().train(mode)
        self.map.eval()  # frozen: dropout off and BatchNorm statistics fixed, also while training
        return self

    def _ego_update(self, feats: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(
            self.map.image_to_egocentric_map_logits(images=None, resnet_image_features=feats)
        )

    def _map_step(
        self, allo: torch.Tensor, feats: torch.Tensor, last: torch.Tensor, delta: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Add one frame to the allocentric maps; returns (new maps, agent xzr in map frame)."""
        out = self.map(
            images=None,
            resnet_image_features=feats,
            last_map_probs_allocentric=allo,
            last_xzrs_allocentric=last,
            dx_dz_drs_egocentric=delta,
            last_map_logits_egocentric=None,
            return_allocentric_maps=True,
        )
        return out["map_probs_allocentric_no_grad"], out["xzr_allocentric_preds"]

    def _ego_view(self, allo: torch.Tensor, xzr: torch.Tensor) -> torch.Tensor:
        return egocentric_view(self.map, allo, xzr, self.match_placement)


class OnePhaseRearrangeActorCriticFrozenMap(_FrozenMapBase):
    """1-phase: current frame vs goal-state frame, and their maps (§6.4).

    Image branch: [u, w, u*w] attention over the frozen ResNet features of the current (u) and
    goal-state (w) frames -> 512. Map branch: the goal-state frames are accumulated into an
    allocentric map (reset at episode start); a = egocentric crop of sigmoid(that map) (the
    official code applies the sigmoid to probabilities; kept for checkpoint parity), b =
    sigmoid(current egocentric map logits); [a, b, a*b] attention -> 512. GRU(1024 -> 512),
    linear actor and critic; `object_type_change_logits` (512 -> 72) is an unused official head.
    Memory: `rnn` and `walkthrough_allo_map_probs` `[samplers, 75, 210, 210]`."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        map: ActiveNeuralSLAM,
        rgb_uuid: str = "rgb",
        unshuffled_rgb_uuid: str = "unshuffled_rgb",
        height_map_channels: int = HEIGHT_MAP_CHANNELS,
        semantic_map_channels: int = SEMANTIC_MAP_CHANNELS,
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "GRU",
        match_placement: bool = True,
    ) -> None:
        super().__init__(
            action_space,
            observation_space,
            map,
            height_map_channels,
            semantic_map_channels,
            hidden_size,
            match_placement,
        )
        self.rgb_uuid, self.unshuffled_rgb_uuid = rgb_uuid, unshuffled_rgb_uuid
        self.visual_encoder = PairAttentionEncoder(512, hidden_size, attention_hidden=32, kernel=1)
        self.state_encoder = RNNStateEncoder(
            2 * hidden_size, hidden_size, num_layers=num_rnn_layers, rnn_type=rnn_type
        )
        self.actor = LinearActorHead(hidden_size, self.num_actions)
        self.critic = LinearCriticHead(hidden_size)
        self.object_type_change_logits = nn.Linear(hidden_size, semantic_map_channels)

    def _recurrent_memory_specification(self):
        return {
            "rnn": _rnn_spec(self.state_encoder.num_recurrent_layers, self.hidden_size),
            MAP_MEMORY_KEY: _map_spec(self.map),
        }

    def _goal_map_views(
        self,
        w: torch.Tensor,
        observations: ObservationType,
        masks: torch.Tensor,
        allo: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        nsteps, nsamplers = masks.shape[:2]
        last, delta = map_frame_poses(observations)
        w = w.view(nsteps, nsamplers, *w.shape[1:])
        views = []
        for t in range(nsteps):
            allo = allo * masks[t].view(nsamplers, 1, 1, 1)
            allo, xzr = self._map_step(allo, w[t], last[t], delta[t])
            views.append(self._ego_view(torch.sigmoid(allo), xzr))
        return torch.cat(views, dim=0), allo

    def forward(
        self,
        observations: ObservationType,
        memory: Memory,
        prev_actions: torch.Tensor,  # type: ignore
        masks: torch.FloatTensor,
    ) -> Tuple[ActorCriticOutput[CategoricalDistr], Optional[Memory]]:
        nsteps, nsamplers = masks.shape[:2]
        with torch.no_grad():
            imgs = torch.cat(
                (
                    cast(torch.Tensor, observations[self.rgb_uuid]),
                    cast(torch.Tensor, observations[self.unshuffled_rgb_uuid]),
                ),
                dim=0,
            )
            u, w = resnet_features(self.map, imgs).chunk(2, dim=0)
            current = self._ego_update(u)
            goal, allo = self._goal_map_views(w, observations, masks, memory.tensor(MAP_MEMORY_KEY))
        x = torch.cat((self.visual_encoder(u, w), self.map_encoder(goal, current)), dim=-1)
        x, rnn = self.state_encoder(x.view(nsteps, nsamplers, -1), memory.tensor("rnn"), masks)
        out = ActorCriticOutput(distributions=self.actor(x), values=self.critic(x), extras={})
        return out, memory.set_tensor("rnn", rnn).set_tensor(MAP_MEMORY_KEY, allo)


class TwoPhaseRearrangeActorCriticFrozenMap(_FrozenMapBase):
    """2-phase: walkthrough map built while exploring, compared with the view while unshuffling.

    Image: frozen ResNet features of the current frame -> Conv1x1, ReLU, AvgPool 7 -> 512.
    Map: the allocentric map is updated on walkthrough steps only (reset at walkthrough start)
    and frozen in the unshuffle phase; a = its egocentric crop at the current pose, b =
    sigmoid(current egocentric logits) -> [a, b, a*b] attention -> 512. LSTM input
    [image, map, walkthrough encoding, phase embedding 32]; the walkthrough GRU, the two
    heads, the walkthrough `done` bias -3 and the -1000 walkthrough mask are those of
    `TwoPhaseRearrangeActorCriticSimpleConvRNN`.
    Memory: `rnn`, `walkthrough_encoding`, `walkthrough_allo_map_probs`."""

    def __init__(
        self,
        action_space: gym.spaces.Discrete,
        observation_space: SpaceDict,
        map: ActiveNeuralSLAM,
        action_names: Sequence[str],
        rgb_uuid: str = "rgb",
        in_walkthrough_phase_uuid: str = "in_walkthrough_phase",
        done_action_index: int = 0,
        height_map_channels: int = HEIGHT_MAP_CHANNELS,
        semantic_map_channels: int = SEMANTIC_MAP_CHANNELS,
        is_walkthrough_phase_embedding_dim: int = 32,
        hidden_size: int = 512,
        num_rnn_layers: int = 1,
        rnn_type: str = "LSTM",
        match_placement: bool = True,
    ) -> None:
        super().__init__(
            action_space,
            observation_space,
            map,
            height_map_channels,
            semantic_map_channels,
            hidden_size,
            match_placement,
        )
        if len(action_names) != self.num_actions:
            raise ValueError(f"{len(action_names)} action names for {self.num_actions} actions")
        self.rgb_uuid, self.in_walkthrough_phase_uuid = rgb_uuid, in_walkthrough_phase_uuid
        self.visual_encoder = nn.Sequential(
            nn.Conv2d(512, hidden_size, 1), nn.ReLU(inplace=True), nn.AvgPool2d(7), nn.Flatten()
        )
        self.visual_encoder.apply(simple_conv_and_linear_weights_init)
        self.is_walkthrough_phase_embedder = nn.Embedding(2, is_walkthrough_phase_embedding_dim)
        self.state_encoder = RNNStateEncoder(
            3 * hidden_size + is_walkthrough_phase_embedding_dim,
            hidden_size,
            num_layers=num_rnn_layers,
            rnn_type=rnn_type,
        )
        self.walkthrough_encoder = RNNStateEncoder(
            hidden_size, hidden_size, num_layers=1, rnn_type="GRU"
        )
        self.walkthrough_ac = LinearActorCriticHead(hidden_size, self.num_actions)
        with torch.no_grad():
            self.walkthrough_ac.actor_and_critic.bias[done_action_index] -= 3.0
        self.unshuffle_ac = LinearActorCriticHead(hidden_size, self.num_actions)
        offsets = torch.tensor(
            [
                -1000.0 if any(s in a for s in DISALLOWED_IN_WALKTHROUGH) else 0.0
                for a in action_names
            ]
        )
        self.walkthrough_logit_offsets: torch.Tensor
        self.register_buffer("walkthrough_logit_offsets", offsets, persistent=False)

    def _recurrent_memory_specification(self):
        return {
            "rnn": _rnn_spec(self.state_encoder.num_recurrent_layers, self.hidden_size),
            "walkthrough_encoding": _rnn_spec(1, self.hidden_size),
            MAP_MEMORY_KEY: _map_spec(self.map),
        }

    def _walkthrough_map_views(
        self,
        feats: torch.Tensor,
        observations: ObservationType,
        masks: torch.Tensor,
        in_wt: torch.Tensor,
        allo: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        nsteps, nsamplers = masks.shape[:2]
        last, delta = map_frame_poses(observations)
        feats = feats.view(nsteps, nsamplers, *feats.shape[1:])
        views = []
        for t in range(nsteps):
            wt = in_wt[t].view(nsamplers, 1, 1, 1)
            allo = torch.where(
                wt & (masks[t].view(nsamplers, 1, 1, 1) == 0), torch.zeros_like(allo), allo
            )
            if bool(wt.any()):
                updated, xzr = self._map_step(allo, feats[t], last[t], delta[t])
                allo = torch.where(wt, updated, allo)
            else:  # everyone is unshuffling: the map is frozen, only the pose moves
                xzr = self.map.update_allocentric_xzrs_with_egocentric_movement(last[t], delta[t])
            views.append(self._ego_view(allo, xzr))
        return torch.cat(views, dim=0), allo

    def _recurrent(
        self,
        x: torch.Tensor,
        phase: torch.Tensor,
        in_wt: torch.Tensor,
        masks: torch.Tensor,
        memory: Memory,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """LSTM over [x, walkthrough encoding, phase]; the encoding is reset at walkthrough start
        only, updated by the GRU on walkthrough steps and frozen through the unshuffle phase."""
        nsteps, nsamplers = masks.shape[:2]
        wt_masks = 1.0 - (1.0 - masks) * in_wt.float()
        rnn, enc = memory.tensor("rnn"), memory.tensor("walkthrough_encoding")
        outs = []
        for t in range(nsteps):
            enc = enc * wt_masks[t].view(1, nsamplers, 1)
            x_t = torch.cat((x[t : t + 1], enc[-1:], phase[t : t + 1]), dim=-1)
            out_t, rnn = self.state_encoder(x_t, rnn, masks[t : t + 1])
            _, new_enc = self.walkthrough_encoder(out_t, enc, wt_masks[t : t + 1])
            enc = torch.where(in_wt[t].view(1, nsamplers, 1), new_enc, enc)
            outs.append(out_t)
        return torch.cat(outs, dim=0), rnn, enc

    def forward(
        self,
        observations: ObservationType,
        memory: Memory,
        prev_actions: torch.Tensor,  # type: ignore
        masks: torch.FloatTensor,
    ) -> Tuple[ActorCriticOutput[CategoricalDistr], Optional[Memory]]:
        nsteps, nsamplers = masks.shape[:2]
        masks = cast(torch.FloatTensor, masks.view(nsteps, nsamplers, 1).float())
        in_wt = (
            cast(torch.Tensor, observations[self.in_walkthrough_phase_uuid])
            .view(nsteps, nsamplers, 1)
            .bool()
        )
        with torch.no_grad():
            feats = resnet_features(self.map, cast(torch.Tensor, observations[self.rgb_uuid]))
            current = self._ego_update(feats)
            walk, allo = self._walkthrough_map_views(
                feats, observations, masks, in_wt, memory.tensor(MAP_MEMORY_KEY)
            )
        x = torch.cat((self.visual_encoder(feats), self.map_encoder(walk, current)), dim=-1)
        phase = self.is_walkthrough_phase_embedder(in_wt.long().squeeze(-1))
        x, rnn, enc = self._recurrent(x.view(nsteps, nsamplers, -1), phase, in_wt, masks, memory)
        wt_distr, wt_values = self.walkthrough_ac(x)
        un_distr, un_values = self.unshuffle_ac(x)
        logits = torch.where(
            in_wt, wt_distr.logits + self.walkthrough_logit_offsets, un_distr.logits
        )
        values = torch.where(in_wt, wt_values, un_values)
        memory = memory.set_tensor("rnn", rnn).set_tensor("walkthrough_encoding", enc)
        out = ActorCriticOutput(
            distributions=CategoricalDistr(logits=logits), values=values, extras={}
        )
        return out, memory.set_tensor(MAP_MEMORY_KEY, allo)
