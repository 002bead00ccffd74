"""ALFRED's Seq2Seq training losses (reference §6.3), for teacher-forced sequences.

* action: token cross-entropy times the non-pad mask, averaged over all positions (pads too);
* mask: at interactive steps only, BCE-with-logits balanced as mean over positive pixels plus
  mean over negative pixels (over all masks in the batch);
* subgoal aux: MSE of the subgoal head against ``high_idx / 25``, non-pad, mean over all positions;
* progress aux: MSE of the progress head against ``(t+1)/T``, same masking.

Total = Σ weight × term; defaults are ALFRED's README command (1, 1, 0.1, 0.1).

Not ALFRED's (off by default, weight ``mask_dice``): a soft Dice term on the same interaction masks.
Why: the balanced BCE weighs the few positive pixels as much as all the negative ones, so a model
that cannot yet localise a small target lowers it most by covering a blob around it, and ALFRED's
IoU rule then resolves the blob to the receptacle underneath (docs/logs/alfred_seq2seq_experiments.md). Dice is
an overlap ratio, so over-covering a 70-pixel target with 10 k pixels costs almost the full term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F

__all__ = [
    "MAX_SUBGOALS",
    "LossWeights",
    "balanced_mask_bce",
    "progress_targets",
    "seq2seq_losses",
    "soft_dice_loss",
]

#: ALFRED divides the absolute subgoal index by this (``max_subgoals``)
MAX_SUBGOALS = 25


@dataclass(frozen=True)
class LossWeights:
    action: float = 1.0  # --action_loss_wt
    mask: float = 1.0  # --mask_loss_wt
    subgoal_aux: float = 0.1  # --subgoal_aux_loss_wt
    progress_aux: float = 0.1  # --pm_aux_loss_wt
    mask_dice: float = (
        0.0  # not ALFRED's: soft Dice on the interaction masks (config kwarg mask_dice_weight)
    )


def balanced_mask_bce(logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Mean BCE over the gold-positive pixels + mean BCE over the negative ones ([N, P, P] each)."""
    gold = gold.float()
    bce = F.binary_cross_entropy_with_logits(logits, gold, reduction="none")
    neg = 1.0 - gold
    inside = (bce * gold).sum() / gold.sum().clamp(min=1.0)
    outside = (bce * neg).sum() / neg.sum().clamp(min=1.0)
    return inside + outside


def soft_dice_loss(logits: torch.Tensor, gold: torch.Tensor, smooth: float = 1.0) -> torch.Tensor:
    """Mean over masks of 1 - (2|p·g| + s) / (|p| + |g| + s), p = sigmoid(logits) ([N, P, P] each)."""
    p = torch.sigmoid(logits).flatten(1)
    g = gold.float().flatten(1)
    return (1.0 - (2.0 * (p * g).sum(1) + smooth) / (p.sum(1) + g.sum(1) + smooth)).mean()


def progress_targets(actions: torch.Tensor) -> torch.Tensor:
    """``(t+1)/T`` per row of right-padded gold actions [B, T] (T = the row's non-pad length)."""
    valid = (actions != 0).float()
    lengths = valid.sum(1, keepdim=True).clamp(min=1.0)
    t = torch.arange(1, actions.shape[1] + 1, device=actions.device, dtype=torch.float32).unsqueeze(
        0
    )
    return t / lengths * valid


def _masked_mean(per_pos: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return (per_pos * valid).mean()


def seq2seq_losses(
    action_logits: torch.Tensor,
    actions: torch.Tensor,
    *,
    mask_logits: Optional[torch.Tensor] = None,
    gold_masks: Optional[torch.Tensor] = None,
    subgoal: Optional[torch.Tensor] = None,
    progress: Optional[torch.Tensor] = None,
    high_idx: Optional[torch.Tensor] = None,
    progress_target: Optional[torch.Tensor] = None,
    weights: LossWeights = LossWeights(),
) -> tuple[torch.Tensor, dict[str, float]]:
    """ALFRED's weighted loss terms; returns (total, {term: value}).

    action_logits [B, T, V] and actions [B, T] (action_low ids, pad 0); mask_logits and
    gold_masks [N, P, P] for the N interactive steps (row-major over (b, t)); subgoal and
    progress [B, T] from the progress monitor with high_idx [B, T] (absolute subgoal index);
    progress_target [B, T] replaces ``(t+1)/T`` where rows are not whole demonstrations (rollouts).
    Terms whose inputs are absent (or whose weight is 0) are left out.
    """
    valid = (actions != 0).float().reshape(-1)
    ce = F.cross_entropy(
        action_logits.reshape(-1, action_logits.shape[-1]), actions.reshape(-1), reduction="none"
    )
    terms = {"action_low": (weights.action, _masked_mean(ce, valid))}
    if mask_logits is not None and gold_masks is not None and weights.mask > 0 and len(mask_logits):
        if mask_logits.shape != gold_masks.shape:
            raise ValueError(
                f"mask logits {list(mask_logits.shape)} vs gold masks {list(gold_masks.shape)}"
            )
        terms["action_low_mask"] = (weights.mask, balanced_mask_bce(mask_logits, gold_masks))
        if weights.mask_dice > 0:
            terms["action_low_mask_dice"] = (
                weights.mask_dice,
                soft_dice_loss(mask_logits, gold_masks),
            )
    if subgoal is not None and high_idx is not None and weights.subgoal_aux > 0:
        target = high_idx.float() / MAX_SUBGOALS
        terms["subgoal_aux"] = (
            weights.subgoal_aux,
            _masked_mean(F.mse_loss(subgoal, target, reduction="none").reshape(-1), valid),
        )
    if progress is not None and weights.progress_aux > 0:
        target = progress_targets(actions) if progress_target is None else progress_target.float()
        se = F.mse_loss(progress, target, reduction="none").reshape(-1)
        terms["progress_aux"] = (weights.progress_aux, _masked_mean(se, valid))
    total = sum(w * v for w, v in terms.values())
    info = {k: float(v.detach()) for k, (_, v) in terms.items()}
    info["total"] = float(total.detach())
    return total, info
