"""Replay real ALFRED expert trajectories in thor_lite: our fidelity figure against ALFRED.

    python benchmarks/alfred_replay.py [--data ../shared/data/alfred/json_2.1.0]

For every traj_data.json with a plan: restore the scene (object poses matched by name, else by
type and nearest position), run init_action, then replay `plan.low_actions` (navigation as
recorded, interactions through their recorded masks). Reports per trajectory how many steps
succeed, the first failure and its message, and whether the goal holds at the end. The
replay itself is `alfred_task.evaluation.replay.replay_trajectory`; benchmarks/alfred_fidelity.py aggregates any folder of real data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from _common import RESULTS_DIR, SHARED, markdown_table, write_markdown
from alfred_task.evaluation.replay import replay_trajectory

FIXTURES = SHARED / "data" / "alfred" / "json_2.1.0"


def replay(path: Path, env) -> dict:
    """One fixture's replay (`replay_trajectory`) with the fields this table shows."""
    traj = json.loads(path.read_text())
    r = replay_trajectory(env, traj)
    ff = r["first_failure"]
    return {
        "trial": path.parent.name,
        "task_type": traj["task_type"],
        "steps": r["steps"],
        "ok_steps": r["ok_steps"],
        "goal": r["goal"],
        "gc": f"{r['gc'][0]}/{r['gc'][1]}",
        "first_fail": None
        if ff is None
        else (ff["step"], ff["action"], ff["message"].splitlines()[0][:90]),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=FIXTURES)
    args = ap.parse_args(argv)
    files = sorted(
        p for p in args.data.rglob("traj_data.json") if "plan" in json.loads(p.read_text())
    )
    if not files:
        print(f"no traj_data.json with a plan under {args.data}", file=sys.stderr)
        return 2
    from alfred_task.env.environment import AlfredEnv

    env = AlfredEnv()
    rows = [replay(p, env) for p in files]
    env.stop()

    def first_failure(r: dict) -> str:
        return (
            ""
            if r["first_fail"] is None
            else f"step {r['first_fail'][0]} {r['first_fail'][1]}: {r['first_fail'][2]}"
        )

    lines = markdown_table(
        ["trajectory", "task type", "steps ok", "goal (GC)", "first failure"],
        [
            (
                r["trial"],
                r["task_type"],
                f"{r['ok_steps']}/{r['steps']}",
                f"{'yes' if r['goal'] else 'no'} ({r['gc']})",
                first_failure(r),
            )
            for r in rows
        ],
        "llrll",
    )
    steps = sum(r["steps"] for r in rows)
    ok = sum(r["ok_steps"] for r in rows)
    full = sum(r["first_fail"] is None for r in rows)
    goals = sum(r["goal"] for r in rows)
    lines.append("")
    lines.append(
        f"{ok}/{steps} steps succeed ({100 * ok / steps:.1f} %); {full}/{len(rows)} trajectories replay "
        f"without a failed step; goal satisfied at the end in {goals}/{len(rows)}."
    )
    reasons = Counter(r["first_fail"][1] for r in rows if r["first_fail"])
    lines.append(f"first failures by action: {dict(reasons)}")
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "alfred_replay.md", text)
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
