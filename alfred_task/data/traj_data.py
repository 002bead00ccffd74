"""Reading and writing ALFRED ``traj_data.json`` files (reference §2.3, §2.4) and split files (§2.2).

`load_traj_data(path)` validates the file and returns a `TrajData` (the schema lives in
:mod:`alfred_task.data.traj_schema`); `TrajData.to_dict()` reproduces the input field by field.
`write_traj_data(obj, path)` writes atomically in ALFRED's layout (``indent=4``, sorted keys).
Errors are `TrajDataError`, naming the file and the field.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from common.atomic_io import write_json_atomic

from alfred_task.data.masks import validate_rle
from alfred_task.data.traj_schema import TrajData, TrajDataError


# ---------------------------------------------------------------------------
# traj_data.json
# ---------------------------------------------------------------------------
def _read_json(path: Path, what: str):
    try:
        with open(path, "r", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TrajDataError(path, "<file>", f"{what} not found") from None
    except json.JSONDecodeError as e:
        raise TrajDataError(path, "<file>", f"invalid JSON: {e}") from None


def load_traj_data(path: str | os.PathLike) -> TrajData:
    """Load and validate one traj_data.json (a directory holding one is accepted too)."""
    p = Path(path)
    if p.is_dir():
        p = p / "traj_data.json"
    return TrajData.from_dict(_read_json(p, "traj_data file"), source=p)


def validate_traj_dict(d: dict, source: str | None = None) -> TrajData:
    """Validate an in-memory traj_data dict; returns the typed view."""
    return TrajData.from_dict(d, source=source)


def traj_to_dict(obj) -> dict:
    """TrajData -> dict; a dict is validated and returned unchanged."""
    if isinstance(obj, TrajData):
        return obj.to_dict()
    if isinstance(obj, dict):
        TrajData.from_dict(obj)
        return obj
    raise TypeError(f"expected TrajData or dict, got {type(obj).__name__}")


def write_traj_data(obj: TrajData | dict, path: str | os.PathLike) -> Path:
    """Validate and write a trajectory atomically, in ALFRED's layout (indent 4, sorted keys,
    ASCII, no trailing newline): a released json_2.1.0 file is reproduced byte for byte."""
    return write_json_atomic(path, traj_to_dict(obj))


# ---------------------------------------------------------------------------
# split files (oct21.json format, §2.2)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SplitEntry:
    """One split-file entry: a trajectory and which of its annotations to use."""

    task: str  # "<task_dir>/<trial_id>" (train/valid) or "<trial_id>" (tests)
    repeat_idx: int  # index into turk_annotations.anns

    def traj_path(self, data_root: str | os.PathLike, split: str) -> Path:
        return Path(data_root) / split / self.task / "traj_data.json"


def load_split_file(path: str | os.PathLike) -> dict[str, list[SplitEntry]]:
    """Load an oct21-style split file: ``{split: [{"repeat_idx": int, "task": str}, ...]}``.

    Key order of the file is preserved (it determines vocabulary growth order).
    """
    p = Path(path)
    d = _read_json(p, "split file")
    if not isinstance(d, dict):
        raise TrajDataError(p, "<root>", f"expected an object mapping split -> entries, got {type(d).__name__}")
    out: dict[str, list[SplitEntry]] = {}
    for split, entries in d.items():
        if not isinstance(entries, list):
            raise TrajDataError(p, split, f"expected a list of entries, got {type(entries).__name__}")
        lst = []
        for i, e in enumerate(entries):
            where = f"{split}[{i}]"
            if not isinstance(e, dict):
                raise TrajDataError(p, where, f"expected an object, got {type(e).__name__}")
            if "task" not in e:
                raise TrajDataError(p, f"{where}.task", "required field is missing")
            if "repeat_idx" not in e:
                raise TrajDataError(p, f"{where}.repeat_idx", "required field is missing")
            task, r = e["task"], e["repeat_idx"]
            if not isinstance(task, str) or not task:
                raise TrajDataError(p, f"{where}.task", f"expected a non-empty string, got {task!r}")
            if isinstance(r, bool) or not isinstance(r, int) or r < 0:
                raise TrajDataError(p, f"{where}.repeat_idx", f"expected a non-negative integer, got {r!r}")
            lst.append(SplitEntry(task=task, repeat_idx=r))
        out[split] = lst
    return out


def check_rle_fields(traj: TrajData) -> None:
    """Fully validate every interaction mask RLE (load only checks it is a list)."""
    for i, a in enumerate(traj.low_actions):
        if a.is_interaction:
            try:
                validate_rle(a.mask_rle)
            except ValueError as e:
                raise TrajDataError(traj.source, f"plan.low_actions[{i}].discrete_action.args.mask", str(e)) from None


__all__ = [
    "SplitEntry",
    "load_traj_data",
    "validate_traj_dict",
    "traj_to_dict",
    "write_traj_data",
    "load_split_file",
    "check_rle_fields",
]
