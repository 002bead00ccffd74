"""1-phase imitation learning: teacher forcing held at 1, then decayed to 0 (DAgger, §6.3)."""

from __future__ import annotations

from typing import Optional

from allenact.algorithms.onpolicy_sync.losses.imitation import Imitation
from allenact.utils.experiment_utils import PipelineStage, TrainingPipeline

from baseline_configs.one_phase.one_phase_rgb_base import OnePhaseRGBBaseExperimentConfig
from baseline_configs.rearrange_base import ImitationMixin, StepwiseLinearDecay

__all__ = ["OnePhaseRGBILBaseExperimentConfig", "StepwiseLinearDecay"]


class OnePhaseRGBILBaseExperimentConfig(ImitationMixin, OnePhaseRGBBaseExperimentConfig):
    IL_PARAMS = {
        "lr": 3e-4,
        "num_steps": 64,
        "update_repeats": 3,
        "num_mini_batch": 1,
        "bc_tf1_steps": int(1e5),
        "dagger_steps": int(1e6),
    }

    def __init__(
        self,
        bc_tf1_steps: Optional[int] = None,
        dagger_steps: Optional[int] = None,
        num_steps: Optional[int] = None,
        update_repeats: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(bc_tf1_steps=bc_tf1_steps, dagger_steps=dagger_steps, **kwargs)
        p = self.IL_PARAMS
        self.num_steps = int(num_steps or p["num_steps"])
        self.update_repeats = int(update_repeats or p["update_repeats"])
        if self.update_repeats < 1:
            raise ValueError(f"update_repeats must be >= 1, not {update_repeats!r}")

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        return self.pipeline(
            named_losses={"imitation_loss": Imitation()},
            stages=[
                PipelineStage(
                    loss_names=["imitation_loss"],
                    max_stage_steps=self.training_steps,
                    teacher_forcing=self.teacher_forcing(),
                )
            ],
            num_mini_batch=min(self.IL_PARAMS["num_mini_batch"], self.num_train_processes),
            update_repeats=self.update_repeats,
            num_steps=self.num_steps,
        )
