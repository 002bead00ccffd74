"""1-phase track on frozen ResNet/CLIP features of the current and the goal-state view."""

from __future__ import annotations

import gym

from baseline_configs.resnet_base import ResNetPreprocessorMixin
from rearrange.baseline_models import ResNetRearrangeActorCriticRNN


class OnePhaseResNetModelMixin(ResNetPreprocessorMixin):
    """`ResNetRearrangeActorCriticRNN` on (rgb_resnet, unshuffled_rgb_resnet); mix in first."""

    def create_model(self, **kwargs):
        rgb, unshuffled = self.feature_uuids()
        return ResNetRearrangeActorCriticRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),  # type: ignore[attr-defined]
            observation_space=self.observation_space(kwargs),
            rgb_uuid=rgb,
            unshuffled_rgb_uuid=unshuffled,
        )
