"""Does an agent act differently for the different annotations of one trajectory?

    python -m experiments.alfred_seq2seq.language_use --eval benchmarks/results/alfred_seq2seq_compare_s10/eval \\
        --agents seq2seq_pm,no_language,random --splits valid_seen,valid_unseen

Why: sessions 8 and 9 found the learned agents did the same thing for all three annotations of a
trajectory (the language unused). This reads the cached per-episode task records of
`experiments/alfred_seq2seq/compare.py` (``<eval>/<agent>/<split>_task.json``) and counts, per
agent and split, the trajectories evaluated with more than one annotation whose episodes are all
identical in (path length, failed actions, goal conditions met, end reason). A deterministic agent
that ignores the language scores 100 %; the seeded random agent draws its actions independently.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

from benchmarks._common import RESULTS_DIR, markdown_table, write_markdown


def identical_trajectories(records: List[dict]) -> Tuple[int, int]:
    """(trajectories whose annotations all gave the same outcome, trajectories with >= 2 annotations)."""
    by_task: Dict[str, set] = defaultdict(set)
    count: Dict[str, int] = defaultdict(int)
    for r in records:
        key = (r["path_len"], r["num_fails"], r["completed_goal_conditions"], r.get("end_reason"))
        by_task[r["task"]].add(key)
        count[r["task"]] += 1
    multi = [t for t in by_task if count[t] > 1]
    return sum(len(by_task[t]) == 1 for t in multi), len(multi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--eval", type=Path, required=True, help="the eval/ folder of an alfred_seq2seq_compare run"
    )
    ap.add_argument("--agents", default="seq2seq_pm,no_language,random")
    ap.add_argument("--splits", default="valid_seen,valid_unseen")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_language_use.md")
    args = ap.parse_args()
    rows = []
    for split in args.splits.split(","):
        for agent in args.agents.split(","):
            path = args.eval / agent / f"{split}_task.json"
            if not path.is_file():
                raise SystemExit(f"{path}: not found (evaluate {agent} on {split} first)")
            same, n = identical_trajectories(json.loads(path.read_text()))
            rows.append([split, agent, str(n), f"{same} ({100 * same / max(n, 1):.0f} %)"])
    text = "\n".join(
        [
            "# Same outcome for every annotation of a trajectory",
            "",
            *markdown_table(
                ["split", "agent", "trajectories", "identical across annotations"], rows, "llrr"
            ),
        ]
    )
    write_markdown(args.out, text)
    print(text)


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)
