"""1-phase DAgger with a frozen Active Neural SLAM map (official tag
OnePhaseRGBResNetFrozenMapDagger_40proc, 8.9 % Fixed Strict on the 2021 test set).

The map (trained by `walkthrough/walkthrough_rgb_mapping_ppo.py`) turns the current and the
goal-state frames into egocentric maps; with ground-truth egomotion (`rel_position_change`)
and the scene bounds the goal-state frames also build an allocentric map of the goal room.
IL parameters "40proc" (§6.3). Weight kwargs: see `baseline_configs/map_common.py`.
"""

from __future__ import annotations

from typing import Any, Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.map_common import MapWeightsMixin
from baseline_configs.one_phase.one_phase_rgb_il_base import OnePhaseRGBILBaseExperimentConfig
from rearrange.map_models import OnePhaseRearrangeActorCriticFrozenMap
from rearrange.map_sensors import egomotion_sensors


class OnePhaseRGBResNetFrozenMapDaggerExperimentConfig(
    MapWeightsMixin, OnePhaseRGBILBaseExperimentConfig
):
    MAP_SOURCE = "map_checkpoint"

    def tag(self) -> str:
        return self.weights_tag("OnePhaseRGBResNetFrozenMapDagger_40proc")

    def sensors(self) -> Sequence[Sensor]:
        return [*super().sensors(), *egomotion_sensors()]

    def create_model(self, **kwargs: Any) -> OnePhaseRearrangeActorCriticFrozenMap:
        return OnePhaseRearrangeActorCriticFrozenMap(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            map=self.build_map(),
            rgb_uuid="rgb",
            unshuffled_rgb_uuid="unshuffled_rgb",
        )
