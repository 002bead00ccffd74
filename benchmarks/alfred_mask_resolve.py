"""How often a checkpoint's predicted interaction mask resolves to the expert's target object.

    python benchmarks/alfred_mask_resolve.py --checkpoint out/learn/seq2seq_pm_taken.pt \\
        --data out/alfred_s2s_big --split valid_seen --trajectories 20 [--tag NAME]

Why: session 8 found PickupObject subgoals fail on the mask (a blob that ALFRED's IoU rule resolves
to the receptacle under the target), not on the action. This isolates the mask: each trajectory's
expert steps are replayed on thor_lite (first annotation), the agent teacher-forced on them exactly
as subgoal evaluation does (`eval_episodes._replay`), and at every step where the *expert* interacts
the agent's own mask (sigmoid > 0.5, upsampled to 300x300) is resolved with the environment's
ALFRED rule (`mask_to_object`: highest IoU, no threshold) and compared with the object the expert's
gold mask resolves to. Reports the resolve rate (with a 95 % Wilson CI), how often the mask is
empty, its median size against the gold mask's, and its IoU with the gold mask.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import median
from typing import Any, Dict, List

import numpy as np

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown
from alfred_subgoal_diag import _agent_view


def _wilson(k: int, n: int) -> List[float]:
    from alfred_seq2seq_compare import wilson

    return [round(100 * v, 1) for v in wilson(k, n)]


def trajectory_records(env, agent, traj: dict) -> List[Dict[str, Any]]:
    """One record per expert interaction step of `traj` (annotation 0), agent teacher-forced."""
    from alfred_task import constants as C
    from alfred_task.agents import expert_steps
    from alfred_task.eval_episodes import _replay
    from alfred_task.subgoals import SubgoalTracker

    steps = expert_steps(traj)
    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, 0, env)
    recs = []
    for k, (action, gold, _h) in enumerate(steps):
        if C.has_interaction(action) and gold is not None:
            view = _agent_view(agent, env)
            pred, gold_b = view["mask"], np.asarray(gold, dtype=bool)
            union = int(np.logical_or(pred, gold_b).sum())
            recs.append({"task": traj["task_id"], "step": k, "action": action,
                         "target": env.mask_to_object(gold_b), "resolved": env.mask_to_object(pred) if pred.any() else None,
                         "pred_pixels": int(pred.sum()), "gold_pixels": int(gold_b.sum()),
                         "iou": int(np.logical_and(pred, gold_b).sum()) / union if union else 0.0})
        if _replay(env, agent, tracker, steps, k, k + 1) is not None:
            break
    return recs


def summarise(recs: List[Dict[str, Any]]) -> Dict[str, Any]:
    n = len(recs)
    hit = sum(r["resolved"] is not None and r["resolved"] == r["target"] for r in recs)
    empty = sum(r["pred_pixels"] == 0 for r in recs)
    return {"n": n, "resolved_to_target": hit, "resolve_rate": _wilson(hit, n), "empty": empty,
            "median_pred_pixels": median(r["pred_pixels"] for r in recs) if recs else None,
            "median_gold_pixels": median(r["gold_pixels"] for r in recs) if recs else None,
            "median_iou": round(median(r["iou"] for r in recs), 3) if recs else None}


def main() -> int:
    import torch

    from alfred_task.agents import CheckpointAgent
    from alfred_task.eval_inputs import load_traj, resolve_entries
    from alfred_task.eval_runner import _make_env

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=Path("out/alfred_s2s_big"))
    ap.add_argument("--split", default="valid_seen")
    ap.add_argument("--trajectories", type=int, default=20, help="first K trajectories of the split (annotation 0)")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    agent = CheckpointAgent(args.checkpoint).inner
    env, recs, seen = _make_env("thor_lite", 300), [], set()
    for e in resolve_entries(args.data, args.data / "splits.json", args.split):
        if e.path in seen:
            continue
        seen.add(e.path)
        if len(seen) > args.trajectories:
            break
        recs += trajectory_records(env, agent, load_traj(e.path))
    summary = {"checkpoint": str(args.checkpoint), "split": args.split, "trajectories": len(seen) - 1
               if len(seen) > args.trajectories else len(seen), **summarise(recs),
               "by_action": {a: summarise([r for r in recs if r["action"] == a])
                             for a in sorted({r["action"] for r in recs})}}
    stem = RESULTS_DIR / "alfred_mask_resolve" / (args.tag or args.checkpoint.stem)
    write_json(stem.with_suffix(".json"), {"summary": summary, "records": recs})
    rows = [[name, s["n"], f"{100 * s['resolved_to_target'] / max(1, s['n']):.1f} {s['resolve_rate']}", s["empty"],
             s["median_pred_pixels"], s["median_gold_pixels"], s["median_iou"]]
            for name, s in [("all", summary), *summary["by_action"].items()]]
    text = "\n".join([f"# Mask resolve rate: {args.checkpoint}", "",
                      f"{args.split}, first {summary['trajectories']} trajectories, annotation 0, teacher-forced", "",
                      *markdown_table(["expert action", "N", "resolves to target % [95 % CI]", "empty",
                                       "median mask px", "median gold px", "median IoU"], rows, "lrrrrrr")])
    write_markdown(stem.with_suffix(".md"), text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
