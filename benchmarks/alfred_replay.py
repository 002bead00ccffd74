"""Replay real ALFRED expert trajectories in thor_lite: our fidelity figure against ALFRED.

    python benchmarks/alfred_replay.py [--data ../shared/data/alfred/json_2.1.0]

For every traj_data.json with a plan: restore the scene (object poses matched by name, else by
type and nearest position), run init_action, then replay `plan.low_actions` (navigation as
recorded, interactions through their recorded masks). Reports per trajectory how many steps
succeed, the first failure and its message, and whether the goal holds at the end.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from _common import RESULTS_DIR, SHARED, markdown_table, write_markdown

FIXTURES = SHARED / "data" / "alfred" / "json_2.1.0"


def replay(path: Path, env) -> dict:
    from alfred_task.constants import INTERACT_ACTIONS
    from alfred_task.goal_conditions import goal_conditions_met
    from alfred_task.masks import decompress_mask

    traj = json.loads(path.read_text())
    env.init_episode(traj)
    ok_steps, first_fail = 0, None
    for i, la in enumerate(traj["plan"]["low_actions"]):
        act = la["discrete_action"]["action"]
        if act in INTERACT_ACTIONS:
            mask = decompress_mask(la["discrete_action"]["args"]["mask"])
            ok, _, _, err, _ = env.va_interact(act, mask)
        else:
            ev = env.step(dict(la["api_action"]))
            ok, err = bool(ev.metadata["lastActionSuccess"]), ev.metadata["errorMessage"]
        if ok:
            ok_steps += 1
        elif first_fail is None:
            first_fail = (i, act, err.splitlines()[0][:90] if err else "")
    md = env.last_event.metadata
    met, total = goal_conditions_met(traj["task_type"], traj["pddl_params"], md["objects"],
                                     env.cleaned_objects, env.heated_objects, env.cooled_objects,
                                     md["inventoryObjects"])
    return {"trial": path.parent.name, "task_type": traj["task_type"], "steps": len(traj["plan"]["low_actions"]),
            "ok_steps": ok_steps, "first_fail": first_fail, "goal": met == total, "gc": f"{met}/{total}"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=FIXTURES)
    args = ap.parse_args(argv)
    files = sorted(p for p in args.data.rglob("traj_data.json") if "plan" in json.loads(p.read_text()))
    if not files:
        print(f"no traj_data.json with a plan under {args.data}", file=sys.stderr)
        return 2
    from alfred_task.environment import AlfredEnv

    env = AlfredEnv()
    rows = [replay(p, env) for p in files]
    env.stop()
    def first_failure(r: dict) -> str:
        return "" if r["first_fail"] is None else f"step {r['first_fail'][0]} {r['first_fail'][1]}: {r['first_fail'][2]}"

    lines = markdown_table(
        ["trajectory", "task type", "steps ok", "goal (GC)", "first failure"],
        [(r["trial"], r["task_type"], f"{r['ok_steps']}/{r['steps']}", f"{'yes' if r['goal'] else 'no'} ({r['gc']})",
          first_failure(r)) for r in rows], "llrll")
    steps = sum(r["steps"] for r in rows)
    ok = sum(r["ok_steps"] for r in rows)
    full = sum(r["first_fail"] is None for r in rows)
    goals = sum(r["goal"] for r in rows)
    lines.append("")
    lines.append(f"{ok}/{steps} steps succeed ({100 * ok / steps:.1f} %); {full}/{len(rows)} trajectories replay "
                 f"without a failed step; goal satisfied at the end in {goals}/{len(rows)}.")
    reasons = Counter(r["first_fail"][1] for r in rows if r["first_fail"])
    lines.append(f"first failures by action: {dict(reasons)}")
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "alfred_replay.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
