"""Walkthrough-only, frozen ImageNet ResNet-18 features + attention GRU, PPO on the exploration
reward (WalkthroughRGBResNetPPO)."""

from __future__ import annotations

import gym

from baseline_configs.rearrange_base import PPOMixin
from baseline_configs.resnet_base import ResNetPreprocessorMixin
from baseline_configs.walkthrough.walkthrough_rgb_base import (
    WALKTHROUGH_RGB_UUID,
    WalkthroughBaseExperimentConfig,
)
from rearrange.baseline_models import ResNetRearrangeActorCriticRNN


class WalkthroughRGBResNetPPOExperimentConfig(
    ResNetPreprocessorMixin, PPOMixin, WalkthroughBaseExperimentConfig
):
    VISUAL_ENCODER = "RN18"
    RGB_UUIDS = (WALKTHROUGH_RGB_UUID,)
    OFFICIAL_TAG = "WalkthroughRGBResNetPPO"

    def create_model(self, **kwargs):
        (features,) = self.feature_uuids()
        return ResNetRearrangeActorCriticRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            rgb_uuid=features,
            unshuffled_rgb_uuid=features,
        )
