"""How the mask decoder's 300×300 logits become the boolean mask an agent sends.

ALFRED's agent sends ``sigmoid > 0.5`` (``threshold``). ALFRED's balanced mask loss weighs the
few target pixels as much as all the others, so wherever the model is unsure the optimum marks
pixels with even a small chance of being the target: a blob several times the object, which the
evaluator's highest-IoU rule then resolves to the larger receptacle under it. ``top_k:N`` keeps the
N most confident pixels instead (the logit order is what the loss does get right), an inference
rule of the agent only: nothing about training or the evaluator changes. ``top_k:N@A+B`` applies it
to the actions A and B only (e.g. ``top_k:700@PickupObject+SliceObject``) and ALFRED's rule to the
others: the IoU rule favours a mask of the target's own size, and pickup targets are small objects
while Put/Open/Toggle targets are receptacles and appliances (a small mask on a counter resolves to
whatever small object lies there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MaskRule", "parse_mask_rule", "DEFAULT_MASK_RULE", "frame_logits"]

#: ALFRED's rule
DEFAULT_MASK_RULE = "threshold"


def frame_logits(logits, shape: tuple[int, int]):
    """[N, P, P] mask-decoder logits at frame resolution `shape` (bilinear, as ALFRED's agent
    upsamples before thresholding); unchanged when already that size."""
    import torch

    logits = torch.as_tensor(logits)
    if tuple(logits.shape[-2:]) == tuple(shape):
        return logits
    return torch.nn.functional.interpolate(
        logits.unsqueeze(1), size=tuple(shape), mode="bilinear", align_corners=False
    )[:, 0]


@dataclass(frozen=True)
class MaskRule:
    """``top_k`` None: ALFRED's sigmoid > 0.5; else the `top_k` highest logits, for every action or,
    when `actions` is given, for those only."""

    top_k: int | None = None
    actions: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        if self.top_k is None:
            return DEFAULT_MASK_RULE
        return f"top_k:{self.top_k}" + ("@" + "+".join(self.actions) if self.actions else "")

    def __call__(
        self, logits, action: str | None = None, exclude: np.ndarray | None = None
    ) -> np.ndarray:
        """Boolean mask from a 2-D logit map (tensor or array) for `action`; pixels set in
        `exclude` (same shape) are never chosen (an agent retrying a failed interaction)."""
        import torch

        if self.top_k is None or (self.actions and action not in self.actions):
            # exactly ALFRED's comparison, not `logits > 0` (they differ at float edges)
            mask = (torch.sigmoid(torch.as_tensor(logits)) > 0.5).numpy()
            return mask if exclude is None else mask & ~exclude
        logits = np.asarray(logits)
        flat = logits.reshape(-1)
        # a stable sort keeps the choice among tied logits deterministic
        order = np.argsort(-flat, kind="stable")
        if exclude is not None:
            order = order[~np.asarray(exclude, dtype=bool).reshape(-1)[order]]
        keep = np.zeros(flat.size, dtype=bool)
        keep[order[: self.top_k]] = True
        return keep.reshape(logits.shape)


def parse_mask_rule(spec: str) -> MaskRule:
    """``threshold``, ``top_k:N`` or ``top_k:N@A+B`` (N ≥ 1, A and B interaction actions);
    ValueError naming the bad spec."""
    from alfred_task.constants import INTERACT_ACTIONS

    spec = str(spec).strip()
    if spec == DEFAULT_MASK_RULE:
        return MaskRule()
    rule, at, acts = spec.partition("@")
    name, _, arg = rule.partition(":")
    actions = tuple(acts.split("+")) if at else ()
    bad = [a for a in actions if a not in INTERACT_ACTIONS]
    if name == "top_k" and arg.isdigit() and int(arg) >= 1 and not bad and (actions or not at):
        return MaskRule(top_k=int(arg), actions=actions)
    raise ValueError(
        f"mask rule {spec!r}: expected 'threshold', 'top_k:N' or 'top_k:N@Action+Action' with N >= 1"
        + (f" (not interaction actions: {bad})" if bad else "")
    )
