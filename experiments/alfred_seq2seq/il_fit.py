"""In-process imitation of teacher-forced ALFRED demonstrations, with the IL configs' own pieces.

Why: a memorisation check (can the pipeline overfit a few episodes and then replay them
closed-loop through ALFRED's evaluator?) and the learning benchmarks need many cheap updates and
a checkpoint in the middle; AllenAct's trainer adds a process start and fixed checkpoint points.
This runs exactly what ``baseline_configs/alfred/alfred_seq2seq_*_il.py`` run per update: the
config's policy (`create_model`), `AlfredILDataset` batches converted by `to_allenact_batch` (what
`AlfredDemoStorage` serves), `AlfredSeq2SeqOfflineLoss` with the config's loss weights and Adam,
plus ALFRED's ×0.1 step decay at `decay_at`. `save_policy` writes a file that ``python -m
alfred_task.evaluation --agent checkpoint`` and ``allenact --eval -c`` both read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import torch

__all__ = ["FitResult", "fit", "held_out_losses", "save_policy"]


@dataclass
class FitResult:
    """Per-update loss terms, teacher-forced demonstration frames served (padding of the batched
    sequences excluded, so budgets compare with online frames) and update seconds (data loading excluded)."""

    history: List[Dict[str, float]] = field(default_factory=list)
    frames: int = 0
    seconds: float = 0.0

    @property
    def frames_per_s(self) -> float:
        return self.frames / max(self.seconds, 1e-9)


def _loss_step(model: torch.nn.Module, loss: Any, batch: Dict[str, Any]):
    from allenact.base_abstractions.misc import Memory

    return loss.loss(model=model, batch=batch, batch_memory=Memory(), stream_memory=Memory())


def fit(
    model: torch.nn.Module,
    dataset: Any,
    loss: Any,
    *,
    updates: int,
    lr: float,
    batch_size: int,
    seed: int = 0,
    decay_at: Optional[int] = None,
    stop_action_ce: Optional[float] = None,
    max_frames: Optional[int] = None,
    on_update: Optional[Callable[[int, Dict[str, float]], None]] = None,
) -> FitResult:
    """`updates` Adam updates on batches of `dataset` (an `AlfredILDataset`, reshuffled per epoch
    with (seed, epoch)); stops early once a batch's action CE is below `stop_action_ce`, or once
    `max_frames` teacher-forced frames were served (budgets equal to an online run's frames).
    `on_update(update, info)` sees every update's loss terms (progress bars, TensorBoard)."""
    from alfred_task.training.il_storage import to_allenact_batch

    torch.manual_seed(seed)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda u: 0.1 if decay_at is not None and u >= decay_at else 1.0
    )
    res, epoch, it = FitResult(), 0, None
    for u in range(1, int(updates) + 1):
        batch = next(it, None) if it is not None else None
        if batch is None:
            it = dataset.batches(batch_size, seed=seed, epoch=epoch)
            epoch += 1
            batch = next(it)
        batch = to_allenact_batch(batch)
        t = time.perf_counter()
        out = _loss_step(model, loss, batch)
        opt.zero_grad()
        out.value.backward()
        opt.step()
        sched.step()
        res.seconds += time.perf_counter() - t
        res.frames += int(
            batch["bsize"]
        )  # demonstration steps, padding excluded (the loss's bsize counts it)
        res.history.append({"update": u, **out.info})
        if on_update is not None:
            on_update(u, out.info)
        if stop_action_ce is not None and out.info["action_low"] < stop_action_ce:
            break
        if max_frames is not None and res.frames >= max_frames:
            break
    return res


@torch.no_grad()
def held_out_losses(
    model: torch.nn.Module, dataset: Any, loss: Any, batch_size: int = 8
) -> Dict[str, float]:
    """Mean loss terms over `dataset` with dropout and batch norm in eval mode (the wrapper itself
    stays in training mode: it decodes the masks the mask loss needs only then)."""
    from alfred_task.training.il_storage import to_allenact_batch

    was_training = model.training
    model.eval()
    model.training = True
    batches = list(dataset.batches(batch_size, shuffle=False))
    sums: Dict[str, float] = {}
    for b in batches:
        for k, v in _loss_step(model, loss, to_allenact_batch(b)).info.items():
            sums[k] = sums.get(k, 0.0) + v / len(batches)
    model.train(was_training)
    return sums


def save_policy(model: torch.nn.Module, path: Path, total_steps: int = 0) -> Path:
    """The policy as an AllenAct-layout checkpoint (``model_state_dict`` + ``total_steps``),
    written atomically; its state dict carries the evaluation record (`models.trained`)."""
    from common.atomic_io import atomic_open

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        torch.save({"model_state_dict": model.state_dict(), "total_steps": int(total_steps)}, f)
    return path
