"""1-phase imitation learning: teacher forcing held at 1, then decayed to 0 (DAgger, §6.3)."""
from __future__ import annotations

from typing import Optional, Sequence

import gym
import torch
from allenact.algorithms.onpolicy_sync.losses.imitation import Imitation
from allenact.base_abstractions.sensor import ExpertActionSensor, Sensor
from allenact.utils.experiment_utils import Builder, PipelineStage, TrainingPipeline

from baseline_configs.one_phase.one_phase_rgb_base import OnePhaseRGBBaseExperimentConfig


class StepwiseLinearDecay:
    """1.0 until `cumm_steps_before_decay`, then linearly down to `endp` over `steps`."""

    def __init__(self, cumm_steps_before_decay: int, steps_for_decay: int, startp: float = 1.0,
                 endp: float = 0.0) -> None:
        self.before = int(cumm_steps_before_decay)
        self.steps = max(int(steps_for_decay), 1)
        self.startp, self.endp = float(startp), float(endp)

    def __call__(self, epoch: int) -> float:
        if epoch <= self.before:
            return self.startp
        frac = min((epoch - self.before) / self.steps, 1.0)
        return self.startp + (self.endp - self.startp) * frac


class OnePhaseRGBILBaseExperimentConfig(OnePhaseRGBBaseExperimentConfig):
    IL_PARAMS = {"lr": 3e-4, "num_steps": 64, "update_repeats": 3, "num_mini_batch": 1,
                 "bc_tf1_steps": int(1e5), "dagger_steps": int(1e6)}

    def __init__(self, bc_tf1_steps: Optional[int] = None, dagger_steps: Optional[int] = None,
                 num_steps: Optional[int] = None, update_repeats: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        p = dict(self.IL_PARAMS)
        t = self.training_steps
        # Short runs keep the official proportions' shape: BC first, then DAgger, then on-policy.
        self.bc_tf1_steps = int(bc_tf1_steps if bc_tf1_steps is not None else min(p["bc_tf1_steps"], 0.25 * t))
        self.dagger_steps = int(dagger_steps if dagger_steps is not None else min(p["dagger_steps"], 0.5 * t))
        self.num_steps = int(num_steps or p["num_steps"])
        self.update_repeats = int(update_repeats or p["update_repeats"])
        if self.update_repeats < 1:
            raise ValueError(f"update_repeats must be >= 1, not {update_repeats!r}")

    def sensors(self) -> Sequence[Sensor]:
        return [*super().sensors(), ExpertActionSensor(gym.spaces.Discrete(len(self.actions())))]

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        p = self.IL_PARAMS
        return TrainingPipeline(
            save_interval=self.save_interval,
            metric_accumulate_interval=self._metric_interval(),
            optimizer_builder=Builder(torch.optim.Adam, dict(lr=self.lr)),
            num_mini_batch=min(p["num_mini_batch"], self.num_train_processes),
            update_repeats=self.update_repeats,
            max_grad_norm=0.5,
            num_steps=self.num_steps,
            named_losses={"imitation_loss": Imitation()},
            gamma=0.99, use_gae=True, gae_lambda=0.95,
            advance_scene_rollout_period=None,
            pipeline_stages=[
                PipelineStage(
                    loss_names=["imitation_loss"], max_stage_steps=self.training_steps,
                    teacher_forcing=StepwiseLinearDecay(self.bc_tf1_steps, self.dagger_steps)),
            ],
            lr_scheduler_builder=None,
        )
