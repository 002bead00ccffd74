"""AllenAct offline imitation for ALFRED: a streaming demonstration storage and ALFRED's losses.

Why: AllenAct 0.5.4 trains on fixed datasets through an ``ExperienceStorage`` with
``StreamingStorageMixin`` plus a ``GenericAbstractLoss`` (reference allenact.md §1.10; the old
``OffPolicyPipelineComponent`` no longer works). ``AlfredDemoStorage`` streams the padded
teacher-forced batches of :class:`alfred_task.il_dataset.AlfredILDataset` (one epoch, then
``EOFError``; AllenAct calls ``reset_stream`` and the next epoch is reshuffled with
(seed, epoch)); ``AlfredSeq2SeqLoss`` runs the model on a batch and applies ALFRED's losses
(§6.3). ``total_experiences`` counts the teacher-forced frames served (logged by AllenAct as
``TRAIN: ... ({'<storage uuid>': frames})``). In a pure offline stage AllenAct's
``max_stage_steps`` counts *updates*, one batch each; ``updates_for_frames`` converts a frame
budget (to compare IL with DAgger at equal frames) into updates.

Use in a config::

    named_storages={"demos": Builder(AlfredDemoStorage, {"data_root": ..., "splits": ..., "batch_size": 8})},
    named_losses={"seq2seq": Builder(AlfredSeq2SeqLoss, {"pm_aux_loss_wt": 0.1, "subgoal_aux_loss_wt": 0.1})},
    pipeline_stages=[PipelineStage(loss_names=["seq2seq"], max_stage_steps=frames, stage_components=[
        StageComponent(uuid="il", storage_uuid="demos", loss_names=["seq2seq"],
                       training_settings=TrainingSettings(num_mini_batch=1, update_repeats=1))])]

Model protocol: ``model.forward_teacher_forced(batch)`` returns a dict with
``action_low`` logits [B, T, V], ``action_low_mask`` logits [B, T, S, S] (or [N, S, S] for the
interaction steps only), and, with the progress monitor, ``subgoal`` and ``progress`` [B, T]
(sigmoid outputs). Another callable can be given as ``forward``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

import torch
import torch.nn.functional as F
from allenact.algorithms.onpolicy_sync.storage import ExperienceStorage, StreamingStorageMixin
from allenact.base_abstractions.misc import GenericAbstractLoss, LossOutput, Memory

from .il_dataset import AlfredILDataset

__all__ = ["AlfredDemoStorage", "AlfredSeq2SeqLoss", "seq2seq_losses", "batch_to"]


def batch_to(batch: Mapping[str, Any], device: torch.device) -> Dict[str, Any]:
    """Tensors of `batch` on `device` (lists stay as they are)."""
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


class AlfredDemoStorage(ExperienceStorage, StreamingStorageMixin):
    """Teacher-forced ALFRED batches for an offline AllenAct stage component."""

    def __init__(self, data_root: str, splits: str, split: str = "train", batch_size: int = 8, seed: int = 123,
                 load_features: bool = True, mask_size: int = 300, max_examples: Optional[int] = None,
                 vocab: Any = None, dataset: Optional[AlfredILDataset] = None) -> None:
        self.kwargs = dict(data_root=Path(data_root), splits=Path(splits), split=split, vocab=vocab,
                           load_features=load_features, mask_size=mask_size, max_examples=max_examples)
        self.batch_size, self.seed = int(batch_size), int(seed)
        self._dataset = dataset
        self.device = torch.device("cpu")
        self.partition: Tuple[int, int] = (0, 1)
        self.epoch = 0
        self._frames = 0
        self._it: Optional[Iterator[Dict[str, Any]]] = None

    @property
    def dataset(self) -> AlfredILDataset:
        """Built on first use, in the training worker (not when the config is read)."""
        if self._dataset is None:
            self._dataset = AlfredILDataset(**self.kwargs)
        return self._dataset

    # --- ExperienceStorage: nothing is collected online ---------------------------------------
    def initialize(self, *, observations: Any, **kwargs: Any) -> None:
        pass

    def add(self, observations: Any, memory: Any, actions: Any, action_log_probs: Any, value_preds: Any,
            rewards: Any, masks: Any) -> None:
        pass

    def to(self, device: torch.device) -> None:
        self.device = torch.device(device)

    def set_partition(self, index: int, num_parts: int) -> None:
        """Worker `index` of `num_parts` streams every num_parts-th example of each epoch."""
        self.partition = (int(index), int(num_parts))
        self._it = None

    @property
    def total_experiences(self) -> int:
        """Teacher-forced frames (non-padding steps) served so far: AllenAct's stage step count."""
        return self._frames

    # --- StreamingStorageMixin -------------------------------------------------------------------
    def _iterator(self) -> Iterator[Dict[str, Any]]:
        index, parts = self.partition
        shard = self.dataset.order(self.seed, self.epoch)[index::parts]
        return self.dataset.batches(self.batch_size, self.seed, self.epoch, indices=shard)

    def next_batch(self) -> Dict[str, Any]:
        if self._it is None:
            self._it = self._iterator()
        try:
            batch = next(self._it)
        except StopIteration:
            raise EOFError(f"end of epoch {self.epoch}") from None
        self._frames += int(batch["seq_len"].sum())
        return batch_to(batch, self.device)

    def reset_stream(self) -> None:
        self.epoch += 1
        self._it = self._iterator()

    def empty(self) -> bool:
        return len(self.dataset) == 0

    def updates_for_frames(self, frames: int) -> int:
        """Updates (batches) that serve about `frames` teacher-forced frames on one worker."""
        per_batch = self.dataset.num_frames / max(len(self.dataset), 1) * min(self.batch_size, len(self.dataset))
        return max(1, round(frames / max(per_batch, 1.0)))


def _mask_loss(logits: torch.Tensor, batch: Mapping[str, Any]) -> torch.Tensor:
    """ALFRED's balanced BCE: mean over positive pixels + mean over negative pixels."""
    gold = batch["action_low_mask"].to(logits.dtype)
    if logits.dim() == 4:  # [B, T, S, S]: keep the interaction steps, in (b, t) order as the gold masks
        logits = logits[batch["action_low_valid_interact"]]
    if gold.shape[0] == 0:
        return logits.sum() * 0.0
    if logits.shape[-1] != gold.shape[-1]:
        gold = F.interpolate(gold[:, None], size=logits.shape[-2:], mode="nearest")[:, 0]
    bce = F.binary_cross_entropy_with_logits(logits, gold, reduction="none")
    pos, neg = gold > 0.5, gold <= 0.5
    return bce[pos].sum() / pos.sum().clamp(min=1) + bce[neg].sum() / neg.sum().clamp(min=1)


def seq2seq_losses(out: Mapping[str, torch.Tensor], batch: Mapping[str, Any], action_loss_wt: float = 1.0,
                   mask_loss_wt: float = 1.0, subgoal_aux_loss_wt: float = 0.0,
                   pm_aux_loss_wt: float = 0.0) -> Tuple[torch.Tensor, Dict[str, float]]:
    """ALFRED's Seq2Seq losses (§6.3): (weighted total, per-term values for logging)."""
    pad = batch["pad_mask"].float()
    logits = out["action_low"]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["action_low"].reshape(-1), reduction="none")
    terms = {"action_low": (ce * pad.reshape(-1)).mean()}  # mean over all positions, padding included
    if mask_loss_wt > 0 and "action_low_mask" in out:
        terms["action_low_mask"] = _mask_loss(out["action_low_mask"], batch)
    if subgoal_aux_loss_wt > 0:
        terms["subgoal_aux"] = (((out["subgoal"] - batch["subgoals_completed"]) ** 2) * pad).mean()
    if pm_aux_loss_wt > 0:
        terms["progress_aux"] = (((out["progress"] - batch["subgoal_progress"]) ** 2) * pad).mean()
    weights = {"action_low": action_loss_wt, "action_low_mask": mask_loss_wt, "subgoal_aux": subgoal_aux_loss_wt,
               "progress_aux": pm_aux_loss_wt}
    total = sum(weights[k] * v for k, v in terms.items())
    info = {k: float(v.detach()) for k, v in terms.items()}
    info["total"] = float(total.detach())
    return total, info


def _teacher_forced(model: torch.nn.Module, batch: Mapping[str, Any]) -> Mapping[str, torch.Tensor]:
    return model.forward_teacher_forced(batch)


class AlfredSeq2SeqLoss(GenericAbstractLoss):
    """``GenericAbstractLoss`` wrapper of `seq2seq_losses` for an offline stage component."""

    def __init__(self, action_loss_wt: float = 1.0, mask_loss_wt: float = 1.0, subgoal_aux_loss_wt: float = 0.0,
                 pm_aux_loss_wt: float = 0.0,
                 forward: Callable[[torch.nn.Module, Mapping[str, Any]], Mapping[str, torch.Tensor]] = _teacher_forced
                 ) -> None:
        self.weights = dict(action_loss_wt=action_loss_wt, mask_loss_wt=mask_loss_wt,
                            subgoal_aux_loss_wt=subgoal_aux_loss_wt, pm_aux_loss_wt=pm_aux_loss_wt)
        self.forward = forward

    def loss(self, *, model: torch.nn.Module, batch: Mapping[str, Any], batch_memory: Memory,
             stream_memory: Memory, **kwargs: Any) -> LossOutput:
        out = self.forward(model, batch)
        total, info = seq2seq_losses(out, batch, **self.weights)
        return LossOutput(value=total, info=info, per_epoch_info={}, batch_memory=batch_memory,
                          stream_memory=stream_memory, bsize=int(batch["seq_len"].sum()))

