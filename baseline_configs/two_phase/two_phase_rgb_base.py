"""2-phase track: explore the goal room (walkthrough), then restore it from memory."""
from __future__ import annotations

from typing import Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig
from rearrange.baseline_models import TwoPhaseRearrangeActorCriticSimpleConvRNN
from rearrange.sensors import ClosestUnshuffledRGBRearrangeSensor, InWalkthroughPhaseSensor, RGBRearrangeSensor


class TwoPhaseRGBBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = True
    run_unshuffle_phase = True

    def sensors(self) -> Sequence[Sensor]:
        size = self.SCREEN_SIZE
        return [
            RGBRearrangeSensor(height=size, width=size, use_resnet_normalization=True, uuid="rgb"),
            ClosestUnshuffledRGBRearrangeSensor(height=size, width=size, use_resnet_normalization=True,
                                                uuid="unshuffled_rgb"),
            InWalkthroughPhaseSensor(),
        ]

    def create_model(self, **kwargs):
        graph = kwargs.get("sensor_preprocessor_graph")
        space = graph.observation_spaces if graph is not None else gym.spaces.Dict(
            {s.uuid: s.observation_space for s in self.sensors()})
        return TwoPhaseRearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())), observation_space=space,
            rgb_uuid="rgb", unshuffled_rgb_uuid="unshuffled_rgb",
            in_walkthrough_phase_uuid="in_walkthrough_phase", action_names=self.actions())
