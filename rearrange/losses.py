"""Losses for the rearrangement baselines (§6.6 of the reference)."""

from __future__ import annotations

from typing import Any, Dict, Tuple, Union, cast

import torch

from allenact.algorithms.onpolicy_sync.losses.abstract_loss import (
    AbstractActorCriticLoss,
    ObservationType,
)
from allenact.algorithms.onpolicy_sync.losses.ppo import PPO
from allenact.base_abstractions.distributions import CategoricalDistr
from allenact.base_abstractions.misc import ActorCriticOutput

__all__ = ["MaskedPPO"]


class MaskedPPO(AbstractActorCriticLoss):
    """PPO averaged only over the steps where a boolean observation is true.

    The per-step PPO terms (clipped surrogate, clipped value loss, negative
    entropy; normalised advantages unless ``normalize_advantage=False`` is in
    `ppo_params`) come from AllenAct's `PPO.loss_per_step`. Each is multiplied
    by the float mask ``batch["observations"][mask_uuid]`` (shape
    ``[steps, samplers(, 1)]``), summed and divided by ``max(Σmask, 1)``, then
    combined with PPO's weights (``value_loss_coef``, ``entropy_coef``; the
    surrogate has weight 1). With an all-ones mask this equals `PPO.loss`.

    When the mask sums to 0 the returned loss is an (exact) zero that still
    belongs to the graph, and nothing is logged (the info dict is empty).

    # Parameters

    mask_uuid : observation uuid of the mask (e.g. ``"in_walkthrough_phase"``).
    ppo_params : keyword arguments of `allenact...losses.ppo.PPO`
        (e.g. ``PPOConfig = dict(clip_param=0.1, value_loss_coef=0.5, entropy_coef=0.01)``).
    """

    def __init__(self, mask_uuid: str, ppo_params: Dict[str, Any]):
        super().__init__()
        self.mask_uuid = mask_uuid
        self._ppo_loss = PPO(**ppo_params)

    def loss(  # type: ignore
        self,
        step_count: int,
        batch: ObservationType,
        actor_critic_output: ActorCriticOutput[CategoricalDistr],
        *args,
        **kwargs,
    ) -> Union[
        Tuple[torch.FloatTensor, Dict[str, float]],
        Tuple[torch.FloatTensor, Dict[str, float], Dict[str, float]],
    ]:
        observations = cast(Dict[str, torch.Tensor], batch["observations"])
        mask = observations[self.mask_uuid].float()
        nsteps, nsamplers = mask.shape[:2]
        mask = mask.reshape(nsteps, nsamplers)
        denominator = torch.clamp(mask.sum(), min=1.0)

        def masked_mean(t: torch.Tensor) -> torch.Tensor:
            # t: [steps, samplers, ...] with trailing singleton dims.
            m = mask.view((nsteps, nsamplers) + (1,) * (t.dim() - 2))
            return (t * m).sum() / denominator

        losses_per_step, ratio_info = self._ppo_loss.loss_per_step(
            step_count=step_count,
            batch=batch,
            actor_critic_output=actor_critic_output,
        )
        losses = {
            key: (masked_mean(loss), weight) for key, (loss, weight) in losses_per_step.items()
        }
        total_loss = cast(
            torch.FloatTensor,
            sum(loss * weight if weight is not None else loss for loss, weight in losses.values()),
        )

        show_ratios = self._ppo_loss.show_ratios
        if mask.sum().item() == 0:
            return (total_loss, {}, {}) if show_ratios else (total_loss, {})

        info = {
            "ppo_total": float(total_loss.item()),
            **{key: float(loss.item()) for key, (loss, _) in losses.items()},
        }
        if not show_ratios:
            return total_loss, info
        per_epoch_info = {
            key: float(masked_mean(value).item()) for key, value in ratio_info.items()
        }
        return total_loss, info, per_epoch_info
