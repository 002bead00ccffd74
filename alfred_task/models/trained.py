"""The policy our AllenAct configs train: the Seq2Seq wrapper plus what evaluation needs.

Why: AllenAct writes checkpoints itself (``model_state_dict`` + trainer state), so nothing but
the model's ``state_dict`` can carry the vocabulary, the model's dimensions and the visual
encoder that ``python -m alfred_task.evaluation --agent checkpoint`` must rebuild. torch's
``get_extra_state`` stores them as ``_extra_state`` (plain types: readable with
``torch.load(weights_only=True)``), so a checkpoint straight out of a run evaluates without a
conversion step; `agent_fields` turns it into `CheckpointAgent`'s fields.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .actor_critic import AlfredSeq2SeqActorCritic

__all__ = ["EXTRA_STATE_KEY", "AlfredSeq2SeqTrainedPolicy", "agent_fields"]

EXTRA_STATE_KEY = "_extra_state"


class AlfredSeq2SeqTrainedPolicy(AlfredSeq2SeqActorCritic):
    """`AlfredSeq2SeqActorCritic` whose state_dict also holds `eval_record`:
    ``{"agent": "pkg.mod:Class", "kwargs": {model_kwargs, vocab, visual_encoder}}``."""

    def __init__(
        self, *args: Any, eval_record: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.eval_record: Dict[str, Any] = dict(eval_record or {})

    def get_extra_state(self) -> Dict[str, Any]:
        return self.eval_record

    def set_extra_state(self, state: Any) -> None:
        self.eval_record = dict(state or {})


def agent_fields(model_state_dict: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """``{"agent", "kwargs", "state_dict"}`` of an AllenAct checkpoint's model state trained by
    `AlfredSeq2SeqTrainedPolicy`, or None when it carries no record."""
    record = model_state_dict.get(EXTRA_STATE_KEY)
    if not isinstance(record, dict) or "agent" not in record:
        return None
    state = {k: v for k, v in model_state_dict.items() if k != EXTRA_STATE_KEY}
    return {"agent": record["agent"], "kwargs": record.get("kwargs") or {}, "state_dict": state}
