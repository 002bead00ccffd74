"""Walkthrough-only, raw RGB + SimpleConv GRU, PPO on the exploration reward (WalkthroughRGBPPO)."""

from baseline_configs.rearrange_base import PPOMixin
from baseline_configs.walkthrough.walkthrough_rgb_base import WalkthroughBaseExperimentConfig


class WalkthroughRGBPPOExperimentConfig(PPOMixin, WalkthroughBaseExperimentConfig):
    def tag(self) -> str:
        return "WalkthroughRGBPPO"
