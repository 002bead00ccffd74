"""1-phase track, raw RGB: the current view and the goal-state view from the same pose."""
from __future__ import annotations

from typing import Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig
from rearrange.baseline_models import RearrangeActorCriticSimpleConvRNN
from rearrange.sensors import UnshuffledRGBRearrangeSensor


class OnePhaseRGBBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = False
    run_unshuffle_phase = True

    def sensors(self) -> Sequence[Sensor]:
        return self.rgb_sensors(UnshuffledRGBRearrangeSensor)

    def create_model(self, **kwargs):
        return RearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())), observation_space=self.observation_space(kwargs),
            rgb_uuid="rgb", unshuffled_rgb_uuid="unshuffled_rgb")
