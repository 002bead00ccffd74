"""1-phase RGB + SimpleConv GRU trained by PPO on the energy-shaped reward (OnePhaseRGBPPO)."""

from __future__ import annotations

from baseline_configs.one_phase.one_phase_rgb_base import OnePhaseRGBBaseExperimentConfig
from baseline_configs.rearrange_base import PPOMixin


class OnePhaseRGBPPOExperimentConfig(PPOMixin, OnePhaseRGBBaseExperimentConfig):
    def tag(self) -> str:
        return "OnePhaseRGBPPO"
