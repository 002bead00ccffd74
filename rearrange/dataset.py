"""Loading and validating rearrangement datasets (the official files of each year and thor_lite ones).

Files are gzip-compressed pickles of `{scene: [episode, ...]}` holding only plain Python
types (§7.1-7.2). Malformed files are rejected with the scene, episode index and field.
"""

from __future__ import annotations

import gzip
import math
import pickle
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from common.atomic_io import atomic_open

from .constants import DATA_DIR
from .official_files import (
    DATA_FILES,
    OFFICIAL_DATA_DIR,
    YEARS,
    download_data_command,
    official_splits,
)

EPISODE_KEYS = (
    "agent_position",
    "agent_rotation",
    "object_rearrangement_count",
    "openable_data",
    "starting_poses",
    "target_poses",
    "position_diff_count",
    "open_diff_count",
    "pose_diff_energy",
)
STAGES = ("train", "train_subset", "train_unseen", "val", "test", "combined")
# Stages `python -m rearrange.gen` makes on thor_lite; train_unseen comes only from the official 2021 files.
GENERATED_STAGES = ("train", "train_subset", "val", "test", "combined")


class DatasetError(ValueError):
    """A rearrangement dataset file is missing or malformed."""


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _xyz(v: Any) -> bool:
    return isinstance(v, dict) and all(_num(v.get(k)) for k in ("x", "y", "z"))


def _nonfinite(v: Dict[str, Any]) -> Optional[str]:
    """First of x/y/z that is NaN or infinite (a NaN start pose would run, silently wrong)."""
    for k in ("x", "y", "z"):
        if not math.isfinite(v[k]):
            return k
    return None


def validate_episode(scene: str, index: int, ep: Dict[str, Any], where: str = "") -> None:
    def bad(field: str, why: str) -> DatasetError:
        return DatasetError(f"{where}{scene} episode {index}: field '{field}' {why}")

    if not isinstance(ep, dict):
        raise DatasetError(
            f"{where}{scene} episode {index}: expected a dict, got {type(ep).__name__}"
        )
    for k in EPISODE_KEYS:
        if k not in ep:
            raise bad(k, "is missing")
    if not _xyz(ep["agent_position"]):
        raise bad(
            "agent_position", f"must be a dict with numeric x, y, z (got {ep['agent_position']!r})"
        )
    axis = _nonfinite(ep["agent_position"])
    if axis:
        raise bad(f"agent_position.{axis}", f"must be finite (got {ep['agent_position'][axis]!r})")
    if not _num(ep["agent_rotation"]):
        raise bad("agent_rotation", f"must be a number (got {ep['agent_rotation']!r})")
    if not math.isfinite(ep["agent_rotation"]):
        raise bad("agent_rotation", f"must be finite (got {ep['agent_rotation']!r})")
    for key in ("starting_poses", "target_poses"):
        poses = ep[key]
        if not isinstance(poses, list) or not poses:
            raise bad(key, "must be a non-empty list")
        for j, p in enumerate(poses):
            if (
                not isinstance(p, dict)
                or "name" not in p
                or not _xyz(p.get("position"))
                or not _xyz(p.get("rotation"))
            ):
                raise bad(f"{key}[{j}]", "must have name, position{x,y,z} and rotation{x,y,z}")
            for part in ("position", "rotation"):
                axis = _nonfinite(p[part])
                if axis:
                    raise bad(
                        f"{key}[{j}].{part}.{axis}", f"must be finite (got {p[part][axis]!r})"
                    )
    if [p["name"] for p in ep["starting_poses"]] != [p["name"] for p in ep["target_poses"]]:
        raise bad(
            "target_poses", "must list the same object names, in the same order, as starting_poses"
        )
    if not isinstance(ep["openable_data"], list):
        raise bad("openable_data", "must be a list")
    for j, od in enumerate(ep["openable_data"]):
        for k in ("objectName", "objectId", "start_openness", "target_openness"):
            if k not in od:
                raise bad(f"openable_data[{j}].{k}", "is missing")
        for k in ("start_openness", "target_openness"):
            if not (_num(od[k]) and 0.0 <= od[k] <= 1.0):  # also rejects NaN
                raise bad(f"openable_data[{j}].{k}", f"must be in [0, 1] (got {od[k]!r})")


def load_dataset(
    path: Union[str, Path], stage: Optional[str] = None
) -> "OrderedDict[str, List[Dict[str, Any]]]":
    """Read and validate a `.pkl.gz` split; adds scene/index/stage to each episode if missing."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    try:
        with gzip.open(path, "rb") as f:
            data = pickle.load(f)
    except (
        OSError,
        EOFError,
        zlib.error,
        pickle.UnpicklingError,
        ValueError,
        TypeError,
        AttributeError,
        ImportError,
        IndexError,
        KeyError,
        UnicodeDecodeError,
    ) as e:
        # Random or truncated bytes make the unpickler fail in many ways; all mean "not a dataset".
        raise DatasetError(f"{path}: not a gzip-compressed pickle ({type(e).__name__}: {e})") from e
    if not isinstance(data, dict):
        raise DatasetError(
            f"{path}: expected a dict of scene -> episodes, got {type(data).__name__}"
        )
    if not data:
        raise DatasetError(f"{path}: holds no scenes")
    stage = stage or path.name.split(".")[0]
    out: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    for scene, eps in data.items():
        if not isinstance(eps, list):
            raise DatasetError(f"{path}: {scene}: expected a list of episodes")
        rows = []
        for i, ep in enumerate(eps):
            validate_episode(scene, i, ep, where=f"{path}: ")
            ep = dict(ep)
            ep.setdefault("scene", scene)
            ep.setdefault("index", i)
            ep.setdefault("stage", "train" if stage == "train_subset" else stage)
            rows.append(ep)
        out[scene] = rows
    return out


def save_dataset(data: Dict[str, List[Dict[str, Any]]], path: Union[str, Path]) -> None:
    """Atomic write (a crash never leaves a half-written dataset); gzip mtime 0 keeps the bytes
    identical for identical data."""
    with atomic_open(path, "wb", gzip_mtime=0) as f:
        pickle.dump(data, f, protocol=4)


def dataset_path(
    stage: str, data_dir: Union[str, Path, None] = None, year: Optional[int] = None
) -> Path:
    """`<data_dir>/<stage>.pkl.gz`; with `year`, the official file `<data_dir>/<year>/<stage>.pkl.gz`
    (data_dir then defaults to `data/`, where `python -m rearrange.download data` puts it)."""
    if stage not in STAGES:
        raise DatasetError(f"unknown stage '{stage}' (expected one of {STAGES})")
    if year is not None:
        if year not in YEARS:
            raise DatasetError(f"unknown dataset year {year!r} (official years: {YEARS})")
        data_dir = Path(data_dir or OFFICIAL_DATA_DIR) / str(year)
    return Path(data_dir or DATA_DIR) / f"{stage}.pkl.gz"


def _official_year(folder: Path) -> Optional[int]:
    """The year when `folder` is an official `<root>/<year>` folder (named like one)."""
    return int(folder.name) if folder.name.isdigit() and int(folder.name) in YEARS else None


def _missing_file_error(path: Path, stage: str, data_dir: Union[str, Path, None]) -> DatasetError:
    """What to run to get the file: the download for official files, else the generator."""
    year = _official_year(path.parent)
    if year is not None:
        root = (
            None
            if path.parent.parent.resolve() == OFFICIAL_DATA_DIR.resolve()
            else path.parent.parent
        )
        return DatasetError(
            f"{path}: no such dataset file; download it with "
            f"`{download_data_command(year, stage, root)}`"
        )
    if stage not in GENERATED_STAGES:
        years = [y for y in YEARS if (y, stage) in DATA_FILES]
        return DatasetError(
            f"{path}: no such dataset file; '{stage}' exists only as an official file "
            f"(year {years[0]}): `{download_data_command(years[0], stage)}`, then choose "
            f"year {years[0]}"
        )
    out = f" --out {path}" if data_dir is not None else ""
    return DatasetError(
        f"{path}: no such dataset file; generate it with `python -m rearrange.gen --stage {stage}{out}`"
    )


def load_stage(
    stage: str,
    data_dir: Union[str, Path, None] = None,
    scenes: Optional[Sequence[str]] = None,
    year: Optional[int] = None,
) -> "OrderedDict[str, List[Dict[str, Any]]]":
    """A stage's episodes: our thor_lite split, or with `year` the official file; loading never
    generates or downloads data.

    The full train split (4000 episodes) is not shipped: generating it takes about an hour on
    2 cores, which a config or benchmark must never start behind the user's back. A missing
    file is a DatasetError naming the command that makes it (`rearrange.gen`, or
    `rearrange.download` for official files); `train_subset` (shipped) is the quick
    alternative. A `data_dir` named like an official year folder (`data/2023`) is read as one.
    """
    path = dataset_path(stage, data_dir, year)
    year = _official_year(path.parent)
    if year is not None and (year, stage) not in DATA_FILES:
        raise DatasetError(
            f"{path}: {year} has no official '{stage}' split (it has {', '.join(official_splits(year))})"
        )
    if not path.is_file():
        raise _missing_file_error(path, stage, data_dir)
    data = load_dataset(path, stage=stage)
    if scenes is not None:
        missing = [s for s in scenes if s not in data]
        if missing:
            raise DatasetError(f"{path}: no episodes for scenes {missing}")
        data = OrderedDict((s, data[s]) for s in scenes)
    return data
