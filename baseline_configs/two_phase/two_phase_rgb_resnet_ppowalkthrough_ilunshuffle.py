"""2-phase on frozen ImageNet ResNet-18 features: PPO on walkthrough steps + imitation on unshuffle
steps (TwoPhaseRGBResNetPPOWalkthroughILUnshuffle_40proc-longtf)."""

from __future__ import annotations

import gym

from baseline_configs.resnet_base import ResNetPreprocessorMixin
from baseline_configs.two_phase.two_phase_rgb_ppowalkthrough_ilunshuffle import (
    TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig,
)
from rearrange.baseline_models import ResNetTwoPhaseRearrangeActorCriticRNN


class TwoPhaseResNetModelMixin(ResNetPreprocessorMixin):
    """`ResNetTwoPhaseRearrangeActorCriticRNN` on (rgb_resnet, unshuffled_rgb_resnet); mix in first."""

    def create_model(self, **kwargs):
        rgb, unshuffled = self.feature_uuids()
        return ResNetTwoPhaseRearrangeActorCriticRNN(
            action_space=gym.spaces.Discrete(len(self.actions())),  # type: ignore[attr-defined]
            observation_space=self.observation_space(kwargs),
            rgb_uuid=rgb,
            unshuffled_rgb_uuid=unshuffled,
            in_walkthrough_phase_uuid="in_walkthrough_phase",
            action_names=self.actions(),
        )  # type: ignore[attr-defined]


class TwoPhaseRGBResNetPPOWalkthroughILUnshuffleExperimentConfig(
    TwoPhaseResNetModelMixin, TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig
):
    VISUAL_ENCODER = "RN18"
    OFFICIAL_TAG = "TwoPhaseRGBResNetPPOWalkthroughILUnshuffle_40proc-longtf"
