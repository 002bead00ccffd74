"""2-phase: PPO on walkthrough steps (exploration reward) + imitation on unshuffle steps.

As officially, the PPO clip parameter decays linearly to 0 over training (`clip_decay`).
"""

from __future__ import annotations

from allenact.algorithms.onpolicy_sync.losses.imitation import Imitation
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.utils.experiment_utils import LinearDecay, PipelineStage, TrainingPipeline

from baseline_configs.rearrange_base import ImitationMixin
from baseline_configs.two_phase.two_phase_rgb_base import TwoPhaseRGBBaseExperimentConfig
from rearrange.losses import MaskedPPO


class TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig(
    ImitationMixin, TwoPhaseRGBBaseExperimentConfig
):
    IL_PARAMS = {"bc_tf1_steps": int(5e5), "dagger_steps": int(5e6)}  # "40proc-longtf"

    def tag(self) -> str:
        return "TwoPhaseRGBPPOWalkthroughILUnshuffle_40proc-longtf"

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        return self.pipeline(
            named_losses={
                "walkthrough_ppo_loss": MaskedPPO(
                    mask_uuid="in_walkthrough_phase",
                    ppo_params=dict(clip_decay=LinearDecay(self.training_steps), **PPOConfig),
                ),
                "imitation_loss": Imitation(),
            },
            stages=[
                PipelineStage(
                    loss_names=["walkthrough_ppo_loss", "imitation_loss"],
                    max_stage_steps=self.training_steps,
                    teacher_forcing=self.teacher_forcing(),
                )
            ],
        )
