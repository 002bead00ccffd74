"""The Seq2Seq agent with masks from a separately trained `fine_mask_head` (this study's option).

Why here: the head is a study, not part of the shipped agent, so the library's `Seq2SeqAgent`
keeps ALFRED's signature and this subclass overrides only `_mask_logits`. ``mask_head=<file>``
takes the masks from the head (decoder state plus finer frame features) instead of the model's
mask decoder, for every interaction or for ``mask_head_actions`` only (e.g. ``["PickupObject"]``).
`MaskHeadCheckpointAgent` is `CheckpointAgent` with these two options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch

from alfred_task import constants as C
from alfred_task.evaluation.agents import CheckpointAgent
from alfred_task.models.agent import Seq2SeqAgent
from alfred_task.models.mask_rules import frame_logits

from .fine_mask_head import AGENT_KINDS, layer3_features, load_head

__all__ = ["MaskHeadAgent", "MaskHeadCheckpointAgent"]


class MaskHeadAgent(Seq2SeqAgent):
    """See the module doc; without a head it is the plain `Seq2SeqAgent`."""

    def __init__(
        self,
        *args: Any,
        mask_head: Optional[str] = None,
        mask_head_actions: Optional[list[str]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._attach(mask_head, mask_head_actions)

    @classmethod
    def around(
        cls,
        agent: Seq2SeqAgent,
        mask_head: Optional[str] = None,
        mask_head_actions: Optional[list[str]] = None,
    ) -> "MaskHeadAgent":
        """`agent` (already loaded, e.g. by `CheckpointAgent`) turned into this class in place."""
        agent.__class__ = cls
        agent._attach(mask_head, mask_head_actions)  # noqa: SLF001 - its own class now
        return agent

    def _attach(self, mask_head: Optional[str], mask_head_actions: Optional[list[str]]) -> None:
        self.mask_head, self._mask_head_size = (
            self._load_mask_head(mask_head) if mask_head else (None, 0)
        )
        if mask_head_actions is not None and (
            not isinstance(mask_head_actions, list)
            or not mask_head_actions
            or any(a not in C.INTERACT_ACTIONS for a in mask_head_actions)
        ):
            raise ValueError(
                f"mask_head_actions must be a non-empty list of interaction actions, "
                f"got {mask_head_actions!r}"
            )
        self.mask_head_actions = frozenset(mask_head_actions or C.INTERACT_ACTIONS)

    def _load_mask_head(self, path: str):
        """(a `fine_mask_head` file's head, its label resolution), checked against this agent."""
        head, record = load_head(Path(path))
        if head.kind not in AGENT_KINDS:
            raise ValueError(
                f"mask_head {path}: kind {head.kind!r} is a probe's oracle, not one of {AGENT_KINDS}"
            )
        if record["encoder"] != self.features.encoder:
            raise ValueError(
                f"mask_head {path}: trained on encoder {record['encoder']}, "
                f"this agent's is {self.features.encoder}"
            )
        if head.cond_dim != self.model.dec.cont_dim:
            raise ValueError(
                f"mask_head {path}: reads a decoder state of width {head.cond_dim}, "
                f"this model's is {self.model.dec.cont_dim}"
            )
        return head, int(record["meta"]["label_size"])

    def _mask_logits(
        self, cont: torch.Tensor, feat: torch.Tensor, frame: np.ndarray, action: str
    ) -> torch.Tensor:
        """The mask decoder's (or, for `mask_head_actions`, the `mask_head`'s) logits at 300×300."""
        if self.mask_head is None or action not in self.mask_head_actions:
            return super()._mask_logits(cont, feat, frame, action)
        f14 = None
        if self.mask_head.f14 is not None:
            f14 = layer3_features(
                self.features, torch.from_numpy(np.ascontiguousarray(frame))[None]
            )
        lo = self.mask_head(
            cont, feat, f14
        )  # resized as in its training: to its label side, then the frame
        lo = frame_logits(lo, (self._mask_head_size, self._mask_head_size))
        return frame_logits(lo, C.MASK_SHAPE)[0]


class MaskHeadCheckpointAgent(CheckpointAgent):
    """A Seq2Seq checkpoint whose agent takes masks from `mask_head` (see `MaskHeadAgent`)."""

    def __init__(
        self,
        path: Union[str, Path],
        map_location: str = "cpu",
        *,
        mask_head: Optional[str] = None,
        mask_head_actions: Optional[list[str]] = None,
        **overrides: Any,
    ) -> None:
        super().__init__(path, map_location, **overrides)
        if not isinstance(self.inner, Seq2SeqAgent):
            raise ValueError(
                f"{path}: a mask head needs a Seq2SeqAgent checkpoint, got {type(self.inner).__name__}"
            )
        self.inner = MaskHeadAgent.around(self.inner, mask_head, mask_head_actions)
