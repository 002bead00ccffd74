"""thor_lite steps per second of this checkout against an older one, interleaved.

    git worktree add --detach /tmp/fps_before <commit>
    python benchmarks/thor_lite_fps_compare.py --before-tree /tmp/fps_before [--rounds 3]

A shared 2-core VM drifts by tens of percent within minutes, so two runs made an hour apart say
nothing about a 10 % regression. This script alternates this checkout's
``benchmarks/thor_lite_fps.py`` between the two trees' simulators (before, after, before, after,
...; each in its own process with ``PYTHONPATH`` starting with that tree, so only ``thor_lite``
differs and the measured loop is the same) after one short discarded warm-up run per tree, then
prints, per case, every round's steps/s, the median over rounds and the ratio after/before, and
the same for the CPU time per step (which other processes on the cores barely move), and writes
the table to ``benchmarks/results/thor_lite_fps_compare.md``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tqdm import tqdm

from _common import REPO, RESULTS_DIR, markdown_table, write_markdown
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_int,
    check_output_file,
    report_usage_errors,
)
from common.procs import stop_children_on_signals

Case = Tuple[str, str, str]  # resolution, action mix, images read
Result = Tuple[float, Optional[float]]  # steps/s, CPU ms per step (None in tables without it)


def parse_fps_table(text: str) -> Dict[Case, Result]:
    """(steps/s, CPU ms/step) per case from a ``thor_lite_fps.py`` markdown table."""
    out: Dict[Case, Result] = {}
    columns: List[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set("".join(cells)) <= set("-:"):
            continue
        if cells[0] == "res":
            columns = cells
        elif columns and len(cells) == len(columns) and cells[0].isdigit():
            row = dict(zip(columns, cells))
            cpu = row.get("CPU ms/step")
            out[(row["res"], row["mix"], row["images read"])] = (
                float(row["steps/s"]),
                float(cpu) if cpu else None,
            )
    return out


def run_tree(tree: Path, out: Path, steps: int, repeats: int) -> Dict[Case, Result]:
    """One run of this checkout's ``thor_lite_fps.py`` on `tree`'s ``thor_lite`` in a fresh
    process; its table, parsed."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(REPO)]))
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "thor_lite_fps.py"),
        "--steps",
        str(steps),
        "--repeats",
        str(repeats),
        "--no-profile",
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"thor_lite_fps.py failed in {tree}: {tail[0]}")
    table = parse_fps_table(out.read_text())
    if not table:
        raise RuntimeError(f"thor_lite_fps.py in {tree} wrote no table to {out}")
    return table


def compare_rows(before: List[Dict[Case, Result]], after: List[Dict[Case, Result]]) -> List[list]:
    """Table rows: case, each side's steps/s runs, medians and after/before; then both sides'
    median CPU ms/step and the CPU speed ratio before/after ("-" when a table lacks CPU times)."""
    rows = []
    for case in before[0]:
        b = [run[case][0] for run in before if case in run]
        a = [run[case][0] for run in after if case in run]
        if not a:
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        bc = [run[case][1] for run in before if case in run and run[case][1] is not None]
        ac = [run[case][1] for run in after if case in run and run[case][1] is not None]
        cpu = (
            ["-", "-", "-"]
            if not (bc and ac)
            else [
                f"{statistics.median(bc):.3f}",
                f"{statistics.median(ac):.3f}",
                f"{statistics.median(bc) / statistics.median(ac):.2f}",
            ]
        )
        rows.append(
            [
                *case,
                ", ".join(f"{x:.0f}" for x in b),
                ", ".join(f"{x:.0f}" for x in a),
                f"{mb:.0f}",
                f"{ma:.0f}",
                f"{ma / mb:.2f}",
                *cpu,
            ]
        )
    return rows


def build_parser() -> OneLineArgumentParser:
    ap = OneLineArgumentParser(
        prog="thor_lite_fps_compare.py", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--before-tree", type=Path, required=True, help="checkout of the code to compare against"
    )
    ap.add_argument("--rounds", type=int, default=3, help="alternating before/after runs per tree")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "thor_lite_fps_compare.md")
    return ap


def run_interleaved(
    before_tree: Path, rounds: int, steps: int, repeats: int
) -> Tuple[List[Dict[Case, Result]], List[Dict[Case, Result]]]:
    """`rounds` runs per tree, alternating, after one discarded warm-up run per tree (a tree's
    first run pays for compiling its caches)."""
    before: List[Dict[Case, Result]] = []
    after: List[Dict[Case, Result]] = []
    with (
        tempfile.TemporaryDirectory(prefix="fps_compare_") as tmp,
        tqdm(total=2 * rounds + 2, desc="fps runs") as bar,
    ):
        for tree in (before_tree, REPO):
            run_tree(tree, Path(tmp) / "warmup.md", 20, 1)
            bar.update(1)
        for r in range(rounds):
            for tree, runs, tag in ((before_tree, before, "before"), (REPO, after, "after")):
                runs.append(run_tree(tree, Path(tmp) / f"{tag}_{r}.md", steps, repeats))
                bar.update(1)
    return before, after


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog):
        for flag, value in (
            ("--rounds", args.rounds),
            ("--steps", args.steps),
            ("--repeats", args.repeats),
        ):
            check_int(flag, value, 1)
        check_output_file("--out", args.out)
        if not (args.before_tree / "benchmarks" / "thor_lite_fps.py").is_file():
            raise UsageError(
                f"--before-tree {args.before_tree}: no benchmarks/thor_lite_fps.py there"
            )
    before_tree = args.before_tree.resolve()
    with stop_children_on_signals(ap.prog):
        before, after = run_interleaved(before_tree, args.rounds, args.steps, args.repeats)
    header = [
        "res",
        "mix",
        "images read",
        "before runs",
        "after runs",
        "before median",
        "after median",
        "after/before",
        "before CPU ms",
        "after CPU ms",
        "CPU speed after/before",
    ]
    lines = [
        f"# thor_lite steps/s: this checkout vs {before_tree}",
        "",
        f"{args.rounds} interleaved rounds of `benchmarks/thor_lite_fps.py --steps {args.steps} "
        f"--repeats {args.repeats}` per tree; steps/s of each round is that run's median; CPU ms is "
        "the median over rounds of each run's median CPU time per step.",
        "",
        *markdown_table(header, compare_rows(before, after), "lllrrrrrrrr"),
    ]
    print("\n".join(lines))
    write_markdown(args.out, "\n".join(lines))
    print(f"\ntable written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
