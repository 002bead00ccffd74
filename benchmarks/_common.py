"""What every benchmark shares: where results go, markdown tables, atomic result files.

Benchmarks are run as scripts (`python benchmarks/<name>.py`), which puts this folder first on
`sys.path`, so they import this module as `_common`; the repository's packages come from its
editable install (`pip install -e .`), so no benchmark edits `sys.path`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from common.atomic_io import write_text_atomic

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
SHARED = REPO.parent / "shared"  # read-only fixtures next to the repository, when present

__all__ = [
    "BENCH_DIR",
    "REPO",
    "RESULTS_DIR",
    "SHARED",
    "markdown_table",
    "run_cli",
    "write_markdown",
    "write_json",
]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str) -> list[str]:
    """Lines of a markdown table; `align` has one letter per column, "l" or "r"."""
    if len(align) != len(header):
        raise ValueError(f"align {align!r} has {len(align)} columns, header has {len(header)}")
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def write_markdown(path: Path, text: str) -> Path:
    """Write a report atomically (a run killed midway never leaves half a table), newline-terminated."""
    return write_text_atomic(path, text if text.endswith("\n") else text + "\n")


def write_json(
    path: Path, obj: Any, indent: Optional[int] = 2, default: Optional[Callable[[Any], Any]] = None
) -> Path:
    """Write a JSON result atomically, keys in insertion order (ASCII, as `json.dumps`)."""
    return write_text_atomic(path, json.dumps(obj, indent=indent, default=default))


def run_cli(main: Callable[[], Any]) -> None:
    """Run a benchmark's `main` as the script: Ctrl-C / SIGTERM print one line and exit 130 / 143
    with every child process stopped (no KeyboardInterrupt traceback); `main`'s int is the exit code."""
    import sys

    from common.cli import run_main

    run_main(main, stop_children_as=f"benchmarks/{Path(sys.argv[0]).name}")
