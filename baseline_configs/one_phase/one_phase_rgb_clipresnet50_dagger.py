"""1-phase, frozen CLIP-RN50 features (unpooled 2048x7x7, CLIP normalisation), DAgger
(OnePhaseRGBClipResNet50Dagger_40proc; the best official 1-phase baseline)."""

from baseline_configs.one_phase.one_phase_rgb_resnet_dagger import (
    OnePhaseRGBResNetDaggerExperimentConfig,
)


class OnePhaseRGBClipResNet50DaggerExperimentConfig(OnePhaseRGBResNetDaggerExperimentConfig):
    VISUAL_ENCODER = "CLIP-RN50"
    OFFICIAL_TAG = "OnePhaseRGBClipResNet50Dagger_40proc"
