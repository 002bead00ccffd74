"""Ship an AllenAct ALFRED checkpoint: only the weights and counters, optionally float16.

Why a library module: `scripts/train_alfred_gpu.sh` writes the shipped checkpoints with it, and
the comparison study (`experiments/alfred_seq2seq/compare.py`) ships its arms the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

__all__ = ["SHIP_KEYS", "ship"]

#: what the shipped checkpoint keeps of AllenAct's file (`allenact --eval -c` reads these)
SHIP_KEYS = ("model_state_dict", "total_steps", "trainer_seed", "training_pipeline_state_dict")


def ship(
    ckpt: Path, dest: Path, half: bool = False, agent_kwargs: Optional[Dict[str, Any]] = None
) -> Path:
    """The checkpoint without optimizer/scheduler state (an AllenAct file `--eval -c` and
    `--agent checkpoint` both read), written atomically. `half` stores floating-point weights as
    float16 (half the file; ``load_state_dict`` casts them back into the float32 model, so the
    file's numbers are those of the rounded weights: evaluate the shipped file itself).
    `agent_kwargs` (the inference options it was evaluated with) join the evaluation record, so
    ``--agent checkpoint`` uses them unless ``--agent-kwargs`` says otherwise."""
    import torch

    from common.atomic_io import atomic_open

    full = torch.load(ckpt, map_location="cpu", weights_only=True)
    slim = {k: full[k] for k in SHIP_KEYS if k in full}
    if half:
        slim["model_state_dict"] = {
            k: v.half() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for k, v in slim["model_state_dict"].items()
        }
    if agent_kwargs:
        from alfred_task.models.trained import EXTRA_STATE_KEY

        record = dict(slim["model_state_dict"].get(EXTRA_STATE_KEY) or {})
        if "kwargs" not in record:
            raise ValueError(
                f"{ckpt}: no evaluation record in its state dict to add the agent kwargs to"
            )
        record["kwargs"] = {**record["kwargs"], **agent_kwargs}
        slim["model_state_dict"] = {**slim["model_state_dict"], EXTRA_STATE_KEY: record}
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "alfred_seq2seq_pm_lite.pt"
    with atomic_open(out, "wb") as f:
        torch.save(slim, f)
    return out
