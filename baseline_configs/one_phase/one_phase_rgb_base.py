"""1-phase track, raw RGB: the current view and the goal-state view from the same pose."""
from __future__ import annotations

from typing import Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig
from rearrange.baseline_models import RearrangeActorCriticSimpleConvRNN
from rearrange.sensors import RGBRearrangeSensor, UnshuffledRGBRearrangeSensor


class OnePhaseRGBBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = False
    run_unshuffle_phase = True

    def sensors(self) -> Sequence[Sensor]:
        size = self.SCREEN_SIZE
        return [
            RGBRearrangeSensor(height=size, width=size, use_resnet_normalization=True, uuid="rgb"),
            UnshuffledRGBRearrangeSensor(height=size, width=size, use_resnet_normalization=True,
                                         uuid="unshuffled_rgb"),
        ]

    def create_model(self, **kwargs):
        space = self._observation_space(kwargs)
        return RearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())), observation_space=space,
            rgb_uuid="rgb", unshuffled_rgb_uuid="unshuffled_rgb")

    def _observation_space(self, kwargs) -> gym.spaces.Dict:
        graph = kwargs.get("sensor_preprocessor_graph")
        if graph is not None:
            return graph.observation_spaces
        return gym.spaces.Dict({s.uuid: s.observation_space for s in self.sensors()})
