"""Checkpoint cards: the JSON sidecar `<name>.pt.json` that makes a shipped checkpoint usable alone.

Why: a state dict does not say which config built its model or with which kwargs, so an
evaluator given only the file guesses the defaults and stops on a size mismatch. The card next
to the file says it (config module and class, kwargs, inference options), how the file was
made and what it measured, and is checked against the file it describes (name, size, sha256).
The evaluators take their defaults from it; flags given on the command line still win.

Fields (`config_class`, `agent_kwargs`, `size`, `sha256`, `measured` may be absent)::

    {"checkpoint": "x.pt", "size": 123, "sha256": "...", "task": "rearrangement" | "alfred",
     "config": "baseline_configs/...py", "config_class": "...", "config_kwargs": {...},
     "agent_kwargs": {...}, "trained_by": "<command>", "measured": {...}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Union

from .download import sha256_of

__all__ = ["CardError", "card_path", "read_card", "TASKS"]

TASKS = ("rearrangement", "alfred")
_REQUIRED = {
    "checkpoint": str,
    "task": str,
    "config": str,
    "config_kwargs": dict,
    "trained_by": str,
}
_OPTIONAL = {
    "config_class": str,
    "agent_kwargs": dict,
    "size": int,
    "sha256": str,
    "measured": dict,
}


class CardError(ValueError):
    """A card that is unreadable or describes another file (one line naming file and field)."""


def card_path(checkpoint: Union[str, Path]) -> Path:
    """`<checkpoint>.json`: the card's place, next to the file it describes."""
    p = Path(checkpoint)
    return p.with_name(p.name + ".json")


def read_card(checkpoint: Union[str, Path], verify: bool = True) -> Optional[Dict[str, Any]]:
    """The checked card of `checkpoint`, or None when it has none.

    With `verify`, a card whose name, size or sha256 differs from the file is an error: its
    kwargs would build a model for another file.
    """
    ckpt = Path(checkpoint)
    path = card_path(ckpt)
    if not path.is_file():
        return None
    try:
        card = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CardError(f"{path}: not a readable JSON card ({e})") from None
    if not isinstance(card, dict):
        raise CardError(f"{path}: expected a JSON object, got {type(card).__name__}")
    for fields, required in ((_REQUIRED, True), (_OPTIONAL, False)):
        for key, typ in fields.items():
            if key not in card:
                if required:
                    raise CardError(f"{path}: field {key!r} is missing")
                continue
            if not isinstance(card[key], typ) or isinstance(card[key], bool):
                raise CardError(
                    f"{path}: field {key!r} must be a {typ.__name__}, got {card[key]!r:.80}"
                )
    if card["task"] not in TASKS:
        raise CardError(f"{path}: field 'task' is {card['task']!r}, expected one of {TASKS}")
    if verify:
        _verify(path, ckpt, card)
    return card


def _verify(path: Path, ckpt: Path, card: Dict[str, Any]) -> None:
    if card["checkpoint"] != ckpt.name:
        raise CardError(
            f"{path}: field 'checkpoint' names {card['checkpoint']!r}, not the file {ckpt.name!r}"
        )
    if not ckpt.is_file():
        return  # the caller reports a missing checkpoint in its own words
    size = ckpt.stat().st_size
    if "size" in card and card["size"] != size:
        raise CardError(
            f"{path}: field 'size' is {card['size']} but {ckpt} has {size} bytes "
            "(the card describes another version of the file)"
        )
    if "sha256" in card and card["sha256"] != sha256_of(ckpt):
        raise CardError(
            f"{path}: field 'sha256' does not match {ckpt} "
            "(the card describes another version of the file)"
        )
