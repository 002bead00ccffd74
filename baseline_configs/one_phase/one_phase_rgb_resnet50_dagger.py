"""1-phase, frozen ImageNet ResNet-50 features (2048x7x7), DAgger.

Upstream this config copied the ResNet-18 config's class name and tag; here it has its own
tag, so its checkpoints and metrics are not mistaken for the ResNet-18 ones.
"""
from baseline_configs.one_phase.one_phase_rgb_resnet_dagger import OnePhaseRGBResNetDaggerExperimentConfig


class OnePhaseRGBResNet50DaggerExperimentConfig(OnePhaseRGBResNetDaggerExperimentConfig):
    VISUAL_ENCODER = "RN50"
    OFFICIAL_TAG = "OnePhaseRGBResNet50Dagger_40proc"
