"""1-phase track, raw RGB: the current view and the goal-state view from the same pose."""

from __future__ import annotations

from typing import Any, Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig, checked_visual_layer_norm
from rearrange.baseline_models import RearrangeActorCriticSimpleConvRNN
from rearrange.sensors import UnshuffledRGBRearrangeSensor


class OnePhaseRGBBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = False
    run_unshuffle_phase = True

    def __init__(
        self, visual_layer_norm: bool = False, goal_difference: bool = False, **kwargs: Any
    ) -> None:
        """`visual_layer_norm`: the model's parameter-free LayerNorm on the SimpleCNN features
        (see `RearrangeActorCriticSimpleConvRNN`); off reproduces the official model exactly.
        `goal_difference`: the encoder also gets |rgb - unshuffled_rgb| (9 input channels);
        off reproduces the official model exactly."""
        super().__init__(**kwargs)
        self.visual_layer_norm = checked_visual_layer_norm(
            self, OnePhaseRGBBaseExperimentConfig, visual_layer_norm
        )
        self.goal_difference = checked_visual_layer_norm(
            self, OnePhaseRGBBaseExperimentConfig, goal_difference, "goal_difference"
        )

    def sensors(self) -> Sequence[Sensor]:
        return self.rgb_sensors(UnshuffledRGBRearrangeSensor)

    def create_model(self, **kwargs):
        return RearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            rgb_uuid="rgb",
            unshuffled_rgb_uuid="unshuffled_rgb",
            visual_layer_norm=self.visual_layer_norm,
            goal_difference=self.goal_difference,
        )
