"""1-phase RGB + SimpleConv GRU trained by DAgger (official tag OnePhaseRGBDagger_40proc)."""

from baseline_configs.one_phase.one_phase_rgb_il_base import OnePhaseRGBILBaseExperimentConfig


class OnePhaseRGBDaggerExperimentConfig(OnePhaseRGBILBaseExperimentConfig):
    def tag(self) -> str:
        return "OnePhaseRGBDagger_40proc"
