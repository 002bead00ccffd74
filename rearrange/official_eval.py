"""One command per official checkpoint: `python -m rearrange.eval --official <config name>`.

Why: evaluating an official agent needs its config, its weights, the official split and the
right kwargs (`data_dir`, `backend`), assembled from three places; this module resolves them
from the facts in `official_files` (the official repository's README), fetches what is missing
with the resumable, verified `common.download`, and says plainly that a real-THOR checkpoint
scored on thor_lite gives numbers the leaderboard cannot be compared with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from common.cli import UsageError

from .constants import REPO_ROOT
from .official_files import (
    CHECKPOINT_DIR,
    CHECKPOINTS,
    DATA_FILES,
    MAP_WEIGHTS,
    OFFICIAL_DATA_DIR,
    OfficialFile,
    checkpoint_base_url,
    data_base_url,
    official_splits,
)

__all__ = [
    "OfficialPlan",
    "LEADERBOARD_WARNING",
    "plan",
    "list_lines",
    "dry_run_lines",
    "fetch",
]

LEADERBOARD_WARNING = (
    "warning: official checkpoints were trained on the real AI2-THOR; scored on thor_lite these "
    "numbers are NOT comparable with the leaderboard (use --backend thor for those)"
)


@dataclass(frozen=True)
class Fetch:
    """One file of the plan: where it comes from, where it goes, what checks it."""

    label: str
    url: str
    dest: Path
    file: OfficialFile


@dataclass(frozen=True)
class OfficialPlan:
    name: str
    config: Path
    checkpoint: Path
    year: int
    stage: str
    backend: str
    data_root: Path
    files: List[Fetch]

    @property
    def config_kwargs(self) -> Dict[str, str]:
        return {"backend": self.backend}


def plan(
    name: str,
    year: int,
    stage: str,
    backend: str,
    data_root: Optional[Path] = None,
    ckpt_dir: Optional[Path] = None,
    data_url: Optional[str] = None,
    ckpt_url: Optional[str] = None,
) -> OfficialPlan:
    """Everything `--official name` needs; an unknown name, year or stage is one UsageError."""
    if name not in CHECKPOINTS:
        raise UsageError(f"--official {name!r}: unknown config (known: {', '.join(CHECKPOINTS)})")
    if (year, stage) not in DATA_FILES:
        raise UsageError(
            f"--stage {stage!r}: no official {year} file (--year {year} has "
            f"{', '.join(official_splits(year))})"
        )
    ck = CHECKPOINTS[name]
    data_root = Path(data_root or OFFICIAL_DATA_DIR)
    ckpt_dir = Path(ckpt_dir or CHECKPOINT_DIR)
    d_base, c_base = data_base_url(data_url), checkpoint_base_url(ckpt_url)
    data = DATA_FILES[(year, stage)]
    files = [
        Fetch(
            f"{name} checkpoint", c_base + ck.file.url_path, ckpt_dir / ck.file.local_path, ck.file
        ),
        Fetch(f"{year}/{stage} split", d_base + data.url_path, data_root / data.local_path, data),
    ]
    if ck.needs_map:
        files.append(
            Fetch(
                "map weights",
                c_base + MAP_WEIGHTS.url_path,
                ckpt_dir / MAP_WEIGHTS.local_path,
                MAP_WEIGHTS,
            )
        )
    return OfficialPlan(
        name, REPO_ROOT / ck.config, files[0].dest, year, stage, backend, data_root, files
    )


def _state(f: Fetch) -> str:
    from common.download import is_complete

    return "present" if is_complete(f.dest, f.file.size, f.file.sha256) else "missing"


def _checks(f: OfficialFile) -> str:
    if f.sha256:
        return f"{f.size} bytes, sha256 {f.sha256[:12]}..."
    return "size and sha256 not published: the server's size is checked"


def list_lines(names: Sequence[str], year: int, stage: str, **where) -> List[str]:
    """`--list`: each known config, its reported % Fixed Strict and where its files would go."""
    lines = []
    for name in names:
        p = plan(name, year, stage, "thor_lite", **where)
        reported = ", ".join(
            f"{y}: {v}" for y, v in sorted(CHECKPOINTS[name].fixed_strict_test.items())
        )
        lines.append(f"{name}  (official % Fixed Strict on test, by year: {reported})")
        lines += [f"  {f.label}: {_state(f)} {f.dest}  <- {f.url}" for f in p.files]
    return lines


def dry_run_lines(p: OfficialPlan, argv_rest: Sequence[str] = ()) -> List[str]:
    """`--dry-run`: what would be fetched and the evaluation that would run; nothing is done."""
    import json

    lines = [
        f"would {'keep' if _state(f) == 'present' else 'fetch'} {f.label}: {f.url} -> {f.dest} "
        f"({_checks(f.file)})"
        for f in p.files
    ]
    cmd = [
        "python -m rearrange.eval",
        f"--config {p.config.relative_to(REPO_ROOT) if p.config.is_relative_to(REPO_ROOT) else p.config}",
        f"--checkpoint {p.checkpoint}",
        f"--year {p.year} --stage {p.stage}",
        f"--config-kwargs '{json.dumps({**p.config_kwargs, 'data_dir': str(p.data_root)})}'",
        *argv_rest,
    ]
    lines.append("would run: " + " ".join(cmd))
    if p.backend == "thor_lite":
        lines.append(LEADERBOARD_WARNING)
    return lines


def fetch(p: OfficialPlan, retries: int = 3, progress: bool = True) -> None:
    """Download what is missing (resumed, size/sha256 checked); one status line per file."""
    from common.download import download

    for f in p.files:
        got = download(
            f.url, f.dest, f.file.size, f.file.sha256, retries=retries, progress=progress
        )
        verb = "downloaded to" if got else "already present at"
        print(f"{f.label}: {verb} {f.dest} ({f.dest.stat().st_size} bytes)", flush=True)
