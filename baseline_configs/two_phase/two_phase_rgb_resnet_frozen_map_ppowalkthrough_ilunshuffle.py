"""2-phase with a frozen Active Neural SLAM map: PPO on walkthrough steps, imitation on
unshuffle steps (official tag TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffle_40proc-longtf).

During the walkthrough the map accumulates an allocentric map of the goal room (ground-truth
egomotion); while unshuffling, that map's egocentric view at the agent's pose is compared with
the map of the current frame. Weight kwargs: see `baseline_configs/map_common.py`; `num_steps`
and `update_repeats` shorten rollouts (tests, CPU runs).
"""

from __future__ import annotations

from typing import Any, Sequence

import gym
from allenact.base_abstractions.sensor import Sensor

from baseline_configs.map_common import MapWeightsMixin, RolloutLengthMixin
from baseline_configs.two_phase.two_phase_rgb_ppowalkthrough_ilunshuffle import (
    TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig,
)
from rearrange.map_models import TwoPhaseRearrangeActorCriticFrozenMap
from rearrange.map_sensors import egomotion_sensors


class TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffleExperimentConfig(
    MapWeightsMixin, RolloutLengthMixin, TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig
):
    MAP_SOURCE = "map_checkpoint"

    def tag(self) -> str:
        return self.weights_tag("TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffle_40proc-longtf")

    def sensors(self) -> Sequence[Sensor]:
        return [*super().sensors(), *egomotion_sensors()]

    def create_model(self, **kwargs: Any) -> TwoPhaseRearrangeActorCriticFrozenMap:
        actions = self.actions()
        return TwoPhaseRearrangeActorCriticFrozenMap(
            action_space=gym.spaces.Discrete(len(actions)),
            observation_space=self.observation_space(kwargs),
            map=self.build_map(),
            action_names=actions,
            rgb_uuid="rgb",
            in_walkthrough_phase_uuid="in_walkthrough_phase",
            done_action_index=actions.index("done"),
        )
