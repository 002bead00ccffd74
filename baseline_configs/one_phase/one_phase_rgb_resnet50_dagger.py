"""1-phase, frozen ImageNet ResNet-50 features (2048x7x7), DAgger.

Upstream this config file copied the ResNet-18 config's class name and tag, while its published
checkpoint is named after `OnePhaseRGBImageNetResNet50Dagger_40proc(_aws0)`; we use that name
(without the machine suffix), so its checkpoints and metrics are never mistaken for ResNet-18's.
"""

from baseline_configs.one_phase.one_phase_rgb_resnet_dagger import (
    OnePhaseRGBResNetDaggerExperimentConfig,
)


class OnePhaseRGBResNet50DaggerExperimentConfig(OnePhaseRGBResNetDaggerExperimentConfig):
    VISUAL_ENCODER = "RN50"
    OFFICIAL_TAG = "OnePhaseRGBImageNetResNet50Dagger_40proc"
