"""Options files of the GPU training scripts: one JSON object read into a frozen dataclass.

Both `scripts/train_alfred_gpu.sh` and `scripts/train_rearrange_gpu.sh` read their run options
this way; the dataclass checks values in `__post_init__` and every failure is one line.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Type, TypeVar

__all__ = ["GpuRunOptionsError", "check_whole_numbers", "load_options", "options_main"]

T = TypeVar("T")


class GpuRunOptionsError(ValueError):
    """A bad option: the message is the one line the script prints."""


def check_whole_numbers(options: Any, names: Iterable[str]) -> None:
    """Refuse a field of `names` that is not an int >= 0 (bools included, as JSON has them)."""
    for name in names:
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GpuRunOptionsError(f"{name}: {value!r} is not a whole number >= 0")


def load_options(cls: Type[T], path: Optional[Path], defaults: Mapping[str, Any]) -> T:
    """The options of a JSON file (absent: all defaults) over `defaults`; unknown keys refused."""
    given: Dict[str, Any] = {}
    if path is not None:
        try:
            given = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise GpuRunOptionsError(f"options file {path}: {e}") from None
        if not isinstance(given, dict):
            raise GpuRunOptionsError(f"options file {path}: not a JSON object")
    known = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise GpuRunOptionsError(
            f"unknown option {', '.join(map(repr, unknown))} (options: {', '.join(known)})"
        )
    return cls(**{**defaults, **given})


def options_main(
    load: Callable[[Optional[Path], bool], Any], prog: str, argv: Optional[List[str]] = None
) -> int:
    """`python -m <prog> [OPTIONS.json] [--dry-run]`: print the checked options as shell lines."""
    args = list(sys.argv[1:] if argv is None else argv)
    dry_run = "--dry-run" in args
    files = [a for a in args if a != "--dry-run"]
    if len(files) > 1:
        print(f"usage: python -m {prog} [OPTIONS.json] [--dry-run]", file=sys.stderr)
        return 2
    try:
        options = load(Path(files[0]) if files else None, dry_run)
    except GpuRunOptionsError as e:
        print(e, file=sys.stderr)
        return 2
    print("\n".join(options.shell()))
    return 0
