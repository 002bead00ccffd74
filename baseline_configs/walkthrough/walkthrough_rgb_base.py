"""Walkthrough-only track: explore the goal-state room, rewarded for seeing new objects (§3.8).

Used upstream to study exploration and to pretrain the map. The agent sees one image, the
walkthrough env's frame under the uuid ``unshuffled_rgb`` (the models read it twice, as the
official configs do), and has the 11 navigation actions (`NAVIGATION_ACTIONS`, `done` first).
As officially, the controller runs with ``snapToGrid=False`` and training episodes start at a
uniform random yaw (``RANDOMIZE_START_ROTATION_DURING_TRAINING``: 360 * U from an RNG seeded
with 1 in every sampler); validation and test episodes start at the dataset's rotation.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig
from rearrange.baseline_models import RearrangeActorCriticSimpleConvRNN
from rearrange.constants import NAVIGATION_ACTIONS
from rearrange.sensors import RGBRearrangeSensor

WALKTHROUGH_RGB_UUID = "unshuffled_rgb"


class WalkthroughBaseExperimentConfig(RearrangeBaseExperimentConfig):
    run_walkthrough_phase = True
    run_unshuffle_phase = False
    ACTIONS: Tuple[str, ...] = NAVIGATION_ACTIONS
    RANDOMIZE_START_ROTATION_DURING_TRAINING = True

    def sensors(self) -> Sequence[Sensor]:
        size = self.SCREEN_SIZE
        return [
            RGBRearrangeSensor(
                height=size,
                width=size,
                use_resnet_normalization=True,
                uuid=WALKTHROUGH_RGB_UUID,
                **self.rgb_normalisation(),
            )
        ]

    def thor_controller_kwargs(self, mode: str, device: Optional[int] = None) -> Dict[str, Any]:
        return {**super().thor_controller_kwargs(mode, device), "snapToGrid": False}

    def create_model(self, **kwargs):
        return RearrangeActorCriticSimpleConvRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            rgb_uuid=WALKTHROUGH_RGB_UUID,
            unshuffled_rgb_uuid=WALKTHROUGH_RGB_UUID,
        )
