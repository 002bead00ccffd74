"""1-phase, frozen ImageNet ResNet-18 features + attention GRU, PPO (OnePhaseRGBResNetPPO)."""

from baseline_configs.one_phase.one_phase_rgb_ppo import OnePhaseRGBPPOExperimentConfig
from baseline_configs.one_phase.one_phase_rgb_resnet_base import OnePhaseResNetModelMixin


class OnePhaseRGBResNetPPOExperimentConfig(
    OnePhaseResNetModelMixin, OnePhaseRGBPPOExperimentConfig
):
    VISUAL_ENCODER = "RN18"
    OFFICIAL_TAG = "OnePhaseRGBResNetPPO"
