"""How the mask decoder's 300×300 logits become the boolean mask an agent sends.

ALFRED's agent sends ``sigmoid > 0.5`` (``threshold``). ALFRED's balanced mask loss weighs the
few target pixels as much as all the others, so wherever the model is unsure the optimum marks
pixels with even a small chance of being the target: a blob several times the object, which the
evaluator's highest-IoU rule then resolves to the larger receptacle under it. ``top_k:N`` keeps the
N most confident pixels instead (the logit order is what the loss does get right), an inference
rule of the agent only: nothing about training or the evaluator changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MaskRule", "parse_mask_rule", "DEFAULT_MASK_RULE"]

#: ALFRED's rule
DEFAULT_MASK_RULE = "threshold"


@dataclass(frozen=True)
class MaskRule:
    """``top_k`` None: ALFRED's sigmoid > 0.5; else the `top_k` highest logits."""

    top_k: int | None = None

    @property
    def spec(self) -> str:
        return DEFAULT_MASK_RULE if self.top_k is None else f"top_k:{self.top_k}"

    def __call__(self, logits) -> np.ndarray:
        """Boolean mask from a 2-D logit map (tensor or array)."""
        import torch

        if self.top_k is None:  # exactly ALFRED's comparison, not `logits > 0` (they differ at float edges)
            return (torch.sigmoid(torch.as_tensor(logits)) > 0.5).numpy()
        logits = np.asarray(logits)
        flat = logits.reshape(-1)
        k = min(self.top_k, flat.size)
        keep = np.zeros(flat.size, dtype=bool)
        # a stable sort keeps the choice among tied logits deterministic
        keep[np.argsort(-flat, kind="stable")[:k]] = True
        return keep.reshape(logits.shape)


def parse_mask_rule(spec: str) -> MaskRule:
    """``threshold`` or ``top_k:N`` (N ≥ 1); ValueError naming the bad spec."""
    spec = str(spec).strip()
    if spec == DEFAULT_MASK_RULE:
        return MaskRule()
    name, _, arg = spec.partition(":")
    if name == "top_k" and arg.isdigit() and int(arg) >= 1:
        return MaskRule(top_k=int(arg))
    raise ValueError(f"mask rule {spec!r}: expected 'threshold' or 'top_k:N' with N >= 1")
