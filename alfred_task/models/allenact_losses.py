"""ALFRED's Seq2Seq losses (`losses.seq2seq_losses`) as AllenAct losses.

* `AlfredSeq2SeqLoss` (on-policy rollouts, e.g. DAgger): reads the wrapper's extras and the
  expert's labels from the observations (`observations` uuids): ``expert_action`` [T, B, 2],
  ``alfred_expert_mask`` [T, B, 300, 300] and optionally ``alfred_expert_high_idx`` and
  ``alfred_expert_progress`` (each [T, B, 1]) for the progress-monitor terms.
* `AlfredSeq2SeqOfflineLoss` (a `GenericAbstractLoss` for offline storages of teacher-forced
  demonstrations): runs the model on the batch (``observations``, ``masks``, ``prev_actions``,
  with the stream memory) and applies the same terms.

Steps where the expert failed (``expert_action[..., 1] == 0``) are left out, like padding.
"""

from __future__ import annotations

from typing import Sequence

import torch
from allenact.algorithms.onpolicy_sync.losses.abstract_loss import AbstractActorCriticLoss
from allenact.base_abstractions.misc import (
    ActorCriticOutput,
    GenericAbstractLoss,
    LossOutput,
    Memory,
)

from alfred_task import constants as C
from .losses import LossWeights, seq2seq_losses
from .observations import (
    EXPERT_ACTION_UUID,
    EXPERT_HIGH_IDX_UUID,
    EXPERT_MASK_UUID,
    EXPERT_PROGRESS_UUID,
)

__all__ = ["alfred_rollout_losses", "AlfredSeq2SeqLoss", "AlfredSeq2SeqOfflineLoss"]


def alfred_rollout_losses(
    observations: dict,
    extras: dict,
    weights: LossWeights,
    action_names: Sequence[str] = C.AGENT_ACTIONS,
    action_vocab: Sequence[str] = C.ACTION_LOW_VOCAB,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Loss terms of one [T, B] batch from the wrapper's `extras` and the expert observations."""
    expert = observations[EXPERT_ACTION_UUID].long()
    to_vocab = torch.tensor(
        [list(action_vocab).index(a) for a in action_names], device=expert.device
    )
    ok = expert[..., 1] > 0
    targets = torch.where(
        ok, to_vocab[expert[..., 0]], torch.zeros_like(expert[..., 0])
    )  # 0 = <<pad>>: ignored
    kw = {}
    if "alfred_mask_logits" in extras and EXPERT_MASK_UUID in observations:
        sel = extras["alfred_mask_steps"]
        keep = ok[sel]
        kw["mask_logits"] = extras["alfred_mask_logits"][keep]
        kw["gold_masks"] = observations[EXPERT_MASK_UUID][sel][keep]
    if "alfred_subgoal" in extras and EXPERT_HIGH_IDX_UUID in observations:
        kw["subgoal"] = extras["alfred_subgoal"]
        kw["high_idx"] = observations[EXPERT_HIGH_IDX_UUID].view_as(targets)
    if "alfred_progress" in extras and EXPERT_PROGRESS_UUID in observations:
        kw["progress"] = extras["alfred_progress"]
        kw["progress_target"] = observations[EXPERT_PROGRESS_UUID].view_as(targets)
    return seq2seq_losses(extras["alfred_vocab_logits"], targets, weights=weights, **kw)


class AlfredSeq2SeqLoss(AbstractActorCriticLoss):
    """ALFRED's action CE + balanced mask BCE (+ PM MSE) on rollouts labelled by the expert."""

    def __init__(
        self, weights: LossWeights = LossWeights(), action_names: Sequence[str] = C.AGENT_ACTIONS
    ) -> None:
        super().__init__()
        self.weights, self.action_names = weights, tuple(action_names)

    def loss(self, step_count: int, batch, actor_critic_output: ActorCriticOutput, *args, **kwargs):
        total, info = alfred_rollout_losses(
            batch["observations"], actor_critic_output.extras, self.weights, self.action_names
        )
        return total, info


class AlfredSeq2SeqOfflineLoss(GenericAbstractLoss):
    """The same terms on batches of an offline storage (runs the model itself)."""

    def __init__(
        self, weights: LossWeights = LossWeights(), action_names: Sequence[str] = C.AGENT_ACTIONS
    ) -> None:
        super().__init__()
        self.weights, self.action_names = weights, tuple(action_names)

    def loss(self, *, model, batch, batch_memory: Memory, stream_memory: Memory) -> LossOutput:  # type: ignore
        n_t, n_b = batch["masks"].shape[:2]
        out, memory = model(
            observations=batch["observations"],
            memory=_memory_for(model, stream_memory, n_b),
            prev_actions=batch.get("prev_actions"),
            masks=batch["masks"],
        )
        total, info = alfred_rollout_losses(
            batch["observations"], out.extras, self.weights, self.action_names
        )
        return LossOutput(
            value=total,
            info=info,
            per_epoch_info={},
            batch_memory=batch_memory,
            stream_memory=_detached(memory),
            bsize=n_t * n_b,
        )


def _memory_for(model, stream_memory: Memory, n_b: int) -> Memory:
    """`stream_memory` when it fits `n_b` sequences, else zeros of the model's memory spec.

    AllenAct starts a stream with an empty ``Memory()`` and the last batch of an epoch may be
    smaller; teacher-forced batches begin every sequence with ``masks == 0`` (ALFRED's initial
    state), so zeros lose nothing."""
    spec = model.recurrent_memory_specification
    if all(k in stream_memory and stream_memory.tensor(k).shape[1] == n_b for k in spec):
        return stream_memory
    device = next(model.parameters()).device
    memory = Memory()
    for key, (dims, dtype) in spec.items():
        shape = [n_b if d is None else d for _, d in dims]
        memory.check_append(key, torch.zeros(*shape, dtype=dtype, device=device), 1)
    return memory


def _detached(memory: Memory) -> Memory:
    """The stream memory carried to the next batch, cut from this batch's graph."""
    for key in list(memory.keys()):
        memory = memory.set_tensor(key, memory.tensor(key).detach())
    return memory
