"""1-phase RGB + SimpleConv GRU trained by PPO on the energy-shaped reward (OnePhaseRGBPPO)."""
from __future__ import annotations

import torch
from allenact.algorithms.onpolicy_sync.losses import PPO
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.utils.experiment_utils import Builder, LinearDecay, PipelineStage, TrainingPipeline

from baseline_configs.one_phase.one_phase_rgb_base import OnePhaseRGBBaseExperimentConfig


class OnePhaseRGBPPOExperimentConfig(OnePhaseRGBBaseExperimentConfig):
    def tag(self) -> str:
        return "OnePhaseRGBPPO"

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        steps = self.training_steps
        return TrainingPipeline(
            save_interval=self.save_interval,
            metric_accumulate_interval=self._metric_interval(),
            optimizer_builder=Builder(torch.optim.Adam, dict(lr=self.lr)),
            num_mini_batch=1, update_repeats=3, max_grad_norm=0.5, num_steps=64,
            named_losses={"ppo_loss": PPO(clip_decay=LinearDecay(steps), **PPOConfig)},
            gamma=0.99, use_gae=True, gae_lambda=0.95, advance_scene_rollout_period=None,
            pipeline_stages=[PipelineStage(loss_names=["ppo_loss"], max_stage_steps=steps)],
            lr_scheduler_builder=self.lr_schedule(steps),
        )
