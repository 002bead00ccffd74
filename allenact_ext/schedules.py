"""Teacher-forcing schedules shared by the rearrangement and ALFRED imitation configs."""

from __future__ import annotations

__all__ = ["StepwiseLinearDecay"]


class StepwiseLinearDecay:
    """1.0 until `cumm_steps_before_decay`, then linearly down to `endp` over `steps`."""

    def __init__(
        self,
        cumm_steps_before_decay: int,
        steps_for_decay: int,
        startp: float = 1.0,
        endp: float = 0.0,
    ) -> None:
        self.before = int(cumm_steps_before_decay)
        self.steps = max(int(steps_for_decay), 1)
        self.startp, self.endp = float(startp), float(endp)

    def __call__(self, epoch: int) -> float:
        if epoch <= self.before:
            return self.startp
        frac = min((epoch - self.before) / self.steps, 1.0)
        return self.startp + (self.endp - self.startp) * frac
