"""Evaluation inputs: which (trajectory, annotation) pairs to evaluate, validated up front.

Why a module of its own: every bad input (split missing from the split file, unreadable or invalid
``traj_data.json``, repeat_idx out of range, bad ``--subgoals``) must fail before the first episode
with one line naming the file, field and value (`EvalInputError`), whichever entry point was used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from alfred_task.constants import SUBGOAL_EVAL_TYPES, TEST_SPLITS
from alfred_task.data.traj_data import SplitEntry, load_split_file, validate_traj_dict
from alfred_task.data.traj_schema import TrajDataError

__all__ = [
    "EvalInputError",
    "EvalEntry",
    "load_traj",
    "resolve_entries",
    "coerce_entries",
    "parse_subgoals",
]


class EvalInputError(ValueError):
    """Bad evaluation input (split, split file, trajectory, repeat_idx, option value)."""


@dataclass(frozen=True)
class EvalEntry:
    """One (trajectory, annotation) to evaluate."""

    split: str
    task: str
    repeat_idx: int
    path: str  # <data_root>/<split>/<task>/traj_data.json

    @property
    def is_test(self) -> bool:
        return self.split in TEST_SPLITS


def load_traj(path: Union[str, Path]) -> dict:
    p = Path(path)
    try:
        with open(p, "r", encoding="utf-8") as f:
            d = json.load(f)
    except FileNotFoundError:
        raise EvalInputError(f"{p}: trajectory file not found") from None
    except json.JSONDecodeError as e:
        raise EvalInputError(f"{p}: invalid JSON: {e}") from None
    try:
        validate_traj_dict(d, source=str(p))
    except TrajDataError as e:
        raise EvalInputError(str(e)) from None
    return d


def _check_entry(e: EvalEntry, where: str, cache: Dict[str, dict]) -> None:
    if e.path not in cache:
        if not Path(e.path).is_file():
            raise EvalInputError(f"{where}: task {e.task!r}: trajectory file {e.path} not found")
        cache[e.path] = load_traj(e.path)
    n = len(cache[e.path]["turk_annotations"]["anns"])
    if (
        isinstance(e.repeat_idx, bool)
        or not isinstance(e.repeat_idx, int)
        or not 0 <= e.repeat_idx < n
    ):
        raise EvalInputError(
            f"{where}: repeat_idx {e.repeat_idx!r} out of range: {e.path} has {n} annotation(s) "
            f"in turk_annotations.anns"
        )


def resolve_entries(
    data_root: Union[str, Path],
    splits: Union[str, Path, Mapping[str, Sequence]],
    split_names: Union[str, Sequence[str]],
    limit: Optional[int] = None,
) -> List[EvalEntry]:
    """Entries of ``split_names`` from an oct21-style split file (or dict), validated.

    Raises `EvalInputError` naming the split file / trajectory file / field / value for: a
    split missing from the file, a missing or invalid trajectory, a repeat_idx out of range.
    ``limit`` keeps the first K entries of each split.
    """
    if isinstance(split_names, str):
        split_names = [s.strip() for s in split_names.split(",") if s.strip()]
    if not split_names:
        raise EvalInputError("no split given")
    if limit is not None and limit < 0:
        raise EvalInputError(f"--limit must be >= 0, got {limit}")
    src = "<splits>"
    if isinstance(splits, (str, Path)):
        src = str(splits)
        try:
            table = load_split_file(splits)
        except TrajDataError as e:
            raise EvalInputError(str(e)) from None
    else:
        table = {
            k: [
                x if isinstance(x, SplitEntry) else SplitEntry(x["task"], x["repeat_idx"])
                for x in v
            ]
            for k, v in splits.items()
        }
    data_root = Path(data_root)
    if not data_root.is_dir():
        raise EvalInputError(f"--data {data_root}: not a directory")
    out: List[EvalEntry] = []
    cache: Dict[str, dict] = {}
    for split in split_names:
        if split not in table:
            raise EvalInputError(
                f"{src}: split {split!r} not in the split file (available: {', '.join(table)})"
            )
        entries = table[split] if limit is None else table[split][:limit]
        for i, se in enumerate(entries):
            e = EvalEntry(split, se.task, se.repeat_idx, str(se.traj_path(data_root, split)))
            _check_entry(e, f"{src}: {split}[{i}]", cache)
            out.append(e)
    return out


def coerce_entries(
    entries: Iterable[Any], data_root: Union[str, Path], split: Optional[str]
) -> List[EvalEntry]:
    out: List[EvalEntry] = []
    cache: Dict[str, dict] = {}
    for i, x in enumerate(entries):
        if isinstance(x, EvalEntry):
            e = x
        else:
            if isinstance(x, SplitEntry):
                task, r, sp = x.task, x.repeat_idx, split
            elif isinstance(x, Mapping):
                if "task" not in x or "repeat_idx" not in x:
                    raise EvalInputError(
                        f"entries[{i}]: needs 'task' and 'repeat_idx', got {dict(x)!r}"
                    )
                task, r, sp = x["task"], x["repeat_idx"], x.get("split", split)
            else:
                raise EvalInputError(
                    f"entries[{i}]: expected EvalEntry, SplitEntry or dict, got {type(x).__name__}"
                )
            if not sp:
                raise EvalInputError(f"entries[{i}]: no split (pass split=... or an EvalEntry)")
            e = EvalEntry(sp, task, r, str(Path(data_root) / sp / task / "traj_data.json"))
        _check_entry(e, f"entries[{i}]", cache)
        out.append(e)
    return out


def parse_subgoals(spec: Union[str, Sequence[str]]) -> List[str]:
    """``"all"`` or a comma-separated list of subgoal types (§5.3) -> list, validated."""
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    items = [s for s in items if s]
    if items == ["all"]:
        return list(SUBGOAL_EVAL_TYPES)
    bad = [s for s in items if s not in SUBGOAL_EVAL_TYPES]
    if bad or not items:
        raise EvalInputError(
            f"--subgoals: invalid value {','.join(bad) or spec!r} "
            f"(expected 'all' or a comma-separated subset of {', '.join(SUBGOAL_EVAL_TYPES)})"
        )
    return items
