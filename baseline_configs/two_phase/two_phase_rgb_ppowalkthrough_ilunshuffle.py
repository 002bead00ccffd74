"""2-phase: PPO on walkthrough steps (exploration reward) + imitation on unshuffle steps."""
from __future__ import annotations

from typing import Optional, Sequence

import gym
import torch
from allenact.algorithms.onpolicy_sync.losses.imitation import Imitation
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.base_abstractions.sensor import ExpertActionSensor, Sensor
from allenact.utils.experiment_utils import Builder, PipelineStage, TrainingPipeline

from baseline_configs.one_phase.one_phase_rgb_il_base import StepwiseLinearDecay
from baseline_configs.two_phase.two_phase_rgb_base import TwoPhaseRGBBaseExperimentConfig
from rearrange.losses import MaskedPPO


class TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig(TwoPhaseRGBBaseExperimentConfig):
    IL_PARAMS = {"bc_tf1_steps": int(5e5), "dagger_steps": int(5e6)}  # "40proc-longtf"

    def __init__(self, bc_tf1_steps: Optional[int] = None, dagger_steps: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        t = self.training_steps
        self.bc_tf1_steps = int(bc_tf1_steps if bc_tf1_steps is not None else min(self.IL_PARAMS["bc_tf1_steps"], 0.25 * t))
        self.dagger_steps = int(dagger_steps if dagger_steps is not None else min(self.IL_PARAMS["dagger_steps"], 0.5 * t))

    def tag(self) -> str:
        return "TwoPhaseRGBPPOWalkthroughILUnshuffle_40proc-longtf"

    def sensors(self) -> Sequence[Sensor]:
        return [*super().sensors(), ExpertActionSensor(gym.spaces.Discrete(len(self.actions())))]

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        return TrainingPipeline(
            save_interval=self.save_interval,
            metric_accumulate_interval=self._metric_interval(),
            optimizer_builder=Builder(torch.optim.Adam, dict(lr=self.lr)),
            num_mini_batch=1, update_repeats=3, max_grad_norm=0.5, num_steps=64,
            named_losses={"walkthrough_ppo_loss": MaskedPPO(mask_uuid="in_walkthrough_phase", ppo_params=dict(PPOConfig)),
                          "imitation_loss": Imitation()},
            gamma=0.99, use_gae=True, gae_lambda=0.95, advance_scene_rollout_period=None,
            pipeline_stages=[PipelineStage(
                loss_names=["walkthrough_ppo_loss", "imitation_loss"], max_stage_steps=self.training_steps,
                teacher_forcing=StepwiseLinearDecay(self.bc_tf1_steps, self.dagger_steps))],
            lr_scheduler_builder=None,
        )
