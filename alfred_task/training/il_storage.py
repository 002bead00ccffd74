"""AllenAct offline imitation for ALFRED: a streaming storage of teacher-forced demonstrations.

Why: AllenAct 0.5.4 trains on fixed datasets through an ``ExperienceStorage`` with
``StreamingStorageMixin`` plus a ``GenericAbstractLoss`` (reference allenact.md §1.10; the old
``OffPolicyPipelineComponent`` no longer works). ``AlfredDemoStorage`` streams the padded
teacher-forced batches of :class:`alfred_task.data.il_dataset.AlfredILDataset` (one epoch, then
``EOFError``; AllenAct calls ``reset_stream`` and the next epoch is reshuffled with
(seed, epoch)), converted by `to_allenact_batch` into what the policy and ALFRED's losses read
online too: ``observations`` [T, B, ...] under the uuids of
:mod:`alfred_task.models.observations` (language, features and the demonstration as expert
labels), ``masks`` (0 at each sequence start) and ``prev_actions``. The loss is
:class:`alfred_task.models.allenact_losses.AlfredSeq2SeqOfflineLoss` (the one implementation
of §6.3). ``total_experiences`` counts the teacher-forced frames served (logged by AllenAct as
``TRAIN: ... ({'<storage uuid>': frames})``). In a pure offline stage AllenAct's
``max_stage_steps`` counts *updates*, one batch each; ``updates_for_frames`` converts a frame
budget (to compare IL with DAgger at equal frames) into updates.

Use in a config (see ``baseline_configs/alfred/alfred_seq2seq_il.py``)::

    named_storages={"demos": Builder(AlfredDemoStorage, {"data_root": ..., "splits": ..., "batch_size": 8})},
    named_losses={"seq2seq": Builder(AlfredSeq2SeqOfflineLoss, {...})},
    pipeline_stages=[PipelineStage(loss_names=["seq2seq"], max_stage_steps=updates, stage_components=[
        StageComponent(uuid="il", storage_uuid="demos", loss_names=["seq2seq"],
                       training_settings=TrainingSettings(num_mini_batch=1, update_repeats=1))])]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

import torch
from allenact.algorithms.onpolicy_sync.storage import ExperienceStorage, StreamingStorageMixin

from alfred_task.data.il_dataset import MAX_SUBGOALS, AlfredILDataset
from alfred_task.models.observations import (
    EXPERT_ACTION_UUID,
    EXPERT_HIGH_IDX_UUID,
    EXPERT_MASK_UUID,
    EXPERT_PROGRESS_UUID,
    LANG_GOAL_UUID,
    LANG_INSTR_UUID,
    RESNET_UUID,
)

__all__ = ["AlfredDemoStorage", "batch_to", "to_allenact_batch"]


def batch_to(batch: Mapping[str, Any], device: torch.device) -> Dict[str, Any]:
    """Tensors of `batch` (nested dicts too) on `device` (lists stay as they are)."""
    return {
        k: batch_to(v, device)
        if isinstance(v, Mapping)
        else v.to(device)
        if torch.is_tensor(v)
        else v
        for k, v in batch.items()
    }


def _time_major(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(0, 1).contiguous()


def to_allenact_batch(batch: Mapping[str, Any]) -> Dict[str, Any]:
    """An `AlfredILDataset` batch ([B, T]) as a [T, B] AllenAct batch (module doc).

    Expert labels are the demonstration's: ``expert_action`` = (action_low id, 1 on real steps,
    0 on padding), the gold masks unpacked to [T, B, S, S] uint8 (zeros where none), the subgoal
    index and (t+1)/T. Actions are action_low ids, so the policy's ``action_names`` must be the
    action_low vocabulary (as online, `alfred_task.alfred_tasks.ACTION_NAMES`). The dataset's own keys
    (``task``, ``repeat_idx``, ``seq_len``) are kept for bookkeeping.
    """
    pad, actions = batch["pad_mask"], batch["action_low"]
    n_b, n_t = actions.shape
    size = batch["action_low_mask"].shape[-1]
    masks = torch.zeros(n_b, n_t, size, size, dtype=torch.uint8)
    masks[batch["action_low_valid_interact"]] = batch["action_low_mask"].to(torch.uint8)
    step = lambda x: x.unsqueeze(0).expand(n_t, *x.shape)  # noqa: E731 - language is constant per sequence
    obs = {
        LANG_GOAL_UUID: step(batch["lang_goal"]),
        LANG_INSTR_UUID: step(batch["lang_instr"]),
        EXPERT_ACTION_UUID: _time_major(torch.stack([actions, pad.long()], -1)),
        EXPERT_MASK_UUID: _time_major(masks),
        EXPERT_HIGH_IDX_UUID: _time_major(
            (batch["subgoals_completed"] * MAX_SUBGOALS).round().long()[..., None]
        ),
        EXPERT_PROGRESS_UUID: _time_major(batch["subgoal_progress"][..., None]),
    }
    if "frames" in batch:
        obs[RESNET_UUID] = _time_major(batch["frames"])
    seq_masks = torch.ones(n_t, n_b, 1)
    seq_masks[0] = 0.0
    prev = torch.cat([torch.zeros(1, n_b, dtype=torch.long), _time_major(actions)[:-1]], 0)
    return {
        "observations": obs,
        "masks": seq_masks,
        "prev_actions": prev,
        "bsize": int(pad.sum()),
        **{k: batch[k] for k in ("task", "repeat_idx", "seq_len")},
    }


class AlfredDemoStorage(ExperienceStorage, StreamingStorageMixin):
    """Teacher-forced ALFRED batches for an offline AllenAct stage component."""

    def __init__(
        self,
        data_root: str,
        splits: str,
        split: str = "train",
        batch_size: int = 8,
        seed: int = 123,
        load_features: bool = True,
        mask_size: int = 300,
        max_examples: Optional[int] = None,
        vocab: Any = None,
        dataset: Optional[AlfredILDataset] = None,
    ) -> None:
        self.kwargs = dict(
            data_root=Path(data_root),
            splits=Path(splits),
            split=split,
            vocab=vocab,
            load_features=load_features,
            mask_size=mask_size,
            max_examples=max_examples,
        )
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

    def add(
        self,
        observations: Any,
        memory: Any,
        actions: Any,
        action_log_probs: Any,
        value_preds: Any,
        rewards: Any,
        masks: Any,
    ) -> None:
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
        return batch_to(to_allenact_batch(batch), self.device)

    def reset_stream(self) -> None:
        self.epoch += 1
        self._it = self._iterator()

    def empty(self) -> bool:
        return len(self.dataset) == 0

    def updates_for_frames(self, frames: int) -> int:
        """Updates (batches) that serve about `frames` teacher-forced frames on one worker."""
        per_batch = (
            self.dataset.num_frames
            / max(len(self.dataset), 1)
            * min(self.batch_size, len(self.dataset))
        )
        return max(1, round(frames / max(per_batch, 1.0)))
