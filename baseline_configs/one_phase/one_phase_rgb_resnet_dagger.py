"""1-phase, frozen ImageNet ResNet-18 features + attention GRU, DAgger (OnePhaseRGBResNetDagger_40proc)."""

from baseline_configs.one_phase.one_phase_rgb_dagger import OnePhaseRGBDaggerExperimentConfig
from baseline_configs.one_phase.one_phase_rgb_resnet_base import OnePhaseResNetModelMixin


class OnePhaseRGBResNetDaggerExperimentConfig(
    OnePhaseResNetModelMixin, OnePhaseRGBDaggerExperimentConfig
):
    VISUAL_ENCODER = "RN18"
    OFFICIAL_TAG = "OnePhaseRGBResNetDagger_40proc"
