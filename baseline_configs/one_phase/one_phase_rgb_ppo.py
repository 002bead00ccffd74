"""1-phase RGB + SimpleConv GRU trained by PPO on the energy-shaped reward (OnePhaseRGBPPO)."""
from __future__ import annotations

from allenact.algorithms.onpolicy_sync.losses import PPO
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.utils.experiment_utils import LinearDecay, PipelineStage, TrainingPipeline

from baseline_configs.one_phase.one_phase_rgb_base import OnePhaseRGBBaseExperimentConfig


class OnePhaseRGBPPOExperimentConfig(OnePhaseRGBBaseExperimentConfig):
    def tag(self) -> str:
        return "OnePhaseRGBPPO"

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        steps = self.training_steps
        return self.pipeline(
            named_losses={"ppo_loss": PPO(clip_decay=LinearDecay(steps), **PPOConfig)},
            stages=[PipelineStage(loss_names=["ppo_loss"], max_stage_steps=steps)],
            lr_scheduler_builder=self.lr_schedule(steps),
        )
