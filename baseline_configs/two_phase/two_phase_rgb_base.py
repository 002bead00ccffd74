"""2-phase track: explore the goal room (walkthrough), then restore it from memory."""

from __future__ import annotations

from typing import Any, Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig, checked_visual_layer_norm
from rearrange.baseline_models import TwoPhaseRearrangeActorCriticSimpleConvRNN
from rearrange.sensors import ClosestUnshuffledRGBRearrangeSensor, InWalkthroughPhaseSensor


class TwoPhaseRGBBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = True
    run_unshuffle_phase = True

    def __init__(self, visual_layer_norm: bool = False, **kwargs: Any) -> None:
        """`visual_layer_norm`: the SimpleConv model's parameter-free LayerNorm on its visual
        features, as in the 1-phase configs; off reproduces the official model exactly."""
        super().__init__(**kwargs)
        self.visual_layer_norm = checked_visual_layer_norm(
            self, TwoPhaseRGBBaseExperimentConfig, visual_layer_norm
        )

    def sensors(self) -> Sequence[Sensor]:
        return [*self.rgb_sensors(ClosestUnshuffledRGBRearrangeSensor), InWalkthroughPhaseSensor()]

    def create_model(self, **kwargs):
        return TwoPhaseRearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            rgb_uuid="rgb",
            unshuffled_rgb_uuid="unshuffled_rgb",
            in_walkthrough_phase_uuid="in_walkthrough_phase",
            action_names=self.actions(),
            visual_layer_norm=self.visual_layer_norm,
        )
