"""How often a checkpoint's predicted interaction mask resolves to the expert's target object.

    python -m experiments.alfred_masks.mask_resolve --checkpoint out/learn/seq2seq_pm_taken.pt \\
        --data out/alfred_s2s_big --split valid_seen --trajectories 20 [--tag NAME]

Why: the subgoal diagnosis found PickupObject subgoals fail on the mask (a blob that ALFRED's IoU rule resolves
to the receptacle under the target), not on the action. This isolates the mask: each trajectory's
expert steps are replayed on thor_lite (first annotation), the agent teacher-forced on them exactly
as subgoal evaluation does (`evaluation.episodes.replay_steps`), and at every step where the *expert* interacts
the agent's own mask (sigmoid > 0.5, upsampled to 300x300) is resolved with the environment's
ALFRED rule (`mask_to_object`: highest IoU, no threshold) and compared with the object the expert's
gold mask resolves to. Reports the resolve rate (with a 95 % Wilson CI), how often the mask is
empty, its median size against the gold mask's, and its IoU with the gold mask.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from statistics import median
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from benchmarks._common import RESULTS_DIR, markdown_table, write_json, write_markdown
from experiments.alfred_seq2seq.subgoal_diag import _agent_view


def _wilson(k: int, n: int) -> List[float]:
    from common.stats import wilson_interval

    return [round(100 * v, 1) for v in wilson_interval(k, n)]


def trajectory_records(
    env, agent, traj: dict, thresholds: Sequence[float] = (), rules: Sequence[str] = ()
) -> List[Dict[str, Any]]:
    """One record per expert interaction step of `traj` (annotation 0), agent teacher-forced; with
    `thresholds`, also the object each thresholded probability map (sigmoid > t) resolves to, and
    with `rules` (`alfred_task.models.mask_rules` specs) the object each rule's mask resolves to."""
    from alfred_task import constants as C
    from alfred_task.evaluation.agents import expert_steps
    from alfred_task.evaluation.episodes import replay_steps
    from alfred_task.models.mask_rules import parse_mask_rule
    from alfred_task.evaluation.subgoals import SubgoalTracker

    parsed = {r: parse_mask_rule(r) for r in rules}
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
            swept = {
                str(t): env.mask_to_object(m) if (m := view["prob"] > t).any() else None
                for t in thresholds
            }
            swept.update(
                {
                    r: env.mask_to_object(m) if (m := rule(view["logit"], action)).any() else None
                    for r, rule in parsed.items()
                }
            )
            recs.append(
                {
                    "task": traj["task_id"],
                    "step": k,
                    "action": action,
                    "target": env.mask_to_object(gold_b),
                    "resolved": env.mask_to_object(pred) if pred.any() else None,
                    "pred_pixels": int(pred.sum()),
                    "gold_pixels": int(gold_b.sum()),
                    "iou": int(np.logical_and(pred, gold_b).sum()) / union if union else 0.0,
                    "resolved_at": swept,
                }
            )
        if replay_steps(env, agent, tracker, steps, k, k + 1) is not None:
            break
    return recs


def _thresholds(spec: str) -> List[float]:
    """``--thresholds`` as floats in (0, 1); ValueError naming a bad one."""
    out = []
    for part in filter(None, spec.split(",")):
        try:
            t = float(part)
        except ValueError:
            t = float("nan")
        if not 0.0 < t < 1.0:
            raise ValueError(f"--thresholds: {part!r} is not a number between 0 and 1")
        out.append(t)
    return out


def _rate(hits: int, n: int, ci: List[float]) -> str:
    return f"{100 * hits / max(1, n):.1f} {ci}"


def summarise(recs: List[Dict[str, Any]], thresholds: Sequence[Any] = ()) -> Dict[str, Any]:
    n = len(recs)
    hit = sum(r["resolved"] is not None and r["resolved"] == r["target"] for r in recs)
    swept = {}
    for t in map(str, thresholds):
        k = sum(r["resolved_at"][t] == r["target"] for r in recs)
        swept[t] = {"resolved_to_target": k, "resolve_rate": _wilson(k, n)}
    empty = sum(r["pred_pixels"] == 0 for r in recs)
    return {
        "n": n,
        "resolved_to_target": hit,
        "resolve_rate": _wilson(hit, n),
        "empty": empty,
        "median_pred_pixels": median(r["pred_pixels"] for r in recs) if recs else None,
        "median_gold_pixels": median(r["gold_pixels"] for r in recs) if recs else None,
        "median_iou": round(median(r["iou"] for r in recs), 3) if recs else None,
        "resolve_rate_at_threshold": swept,
    }


def run(args: argparse.Namespace) -> Dict[str, Any]:
    """Records and summary over the first ``--trajectories`` trajectories of the split."""
    import torch

    from alfred_task.evaluation.agents import CheckpointAgent
    from alfred_task.evaluation.inputs import load_traj, resolve_entries
    from alfred_task.evaluation.runner import make_env

    torch.set_num_threads(1)
    agent = CheckpointAgent(args.checkpoint).inner
    paths = list(
        dict.fromkeys(
            e.path for e in resolve_entries(args.data, args.data / "splits.json", args.split)
        )
    )
    env, recs = make_env("thor_lite", 300), []
    for path in paths[: args.trajectories]:
        recs += trajectory_records(env, agent, load_traj(path), args.thresholds, args.mask_rules)
    swept = [*args.thresholds, *args.mask_rules]
    summary = {
        "checkpoint": str(args.checkpoint),
        "split": args.split,
        "trajectories": min(len(paths), args.trajectories),
        **summarise(recs, swept),
        "by_action": {
            a: summarise([r for r in recs if r["action"] == a], swept)
            for a in sorted({r["action"] for r in recs})
        },
    }
    return {"summary": summary, "records": recs}


def main(argv: Optional[List[str]] = None) -> int:
    from common.cli import OneLineArgumentParser, check_input_file, check_int, report_usage_errors

    ap = OneLineArgumentParser(
        prog="python -m experiments.alfred_masks.mask_resolve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=Path("out/alfred_s2s_big"))
    ap.add_argument("--split", default="valid_seen")
    ap.add_argument(
        "--trajectories",
        type=int,
        default=20,
        help="first K trajectories of the split (annotation 0)",
    )
    ap.add_argument("--tag", default="")
    ap.add_argument(
        "--thresholds",
        default="",
        help="also resolve sigmoid > t for these t (comma-separated, "
        "e.g. 0.7,0.9): how much a stricter mask threshold would change (the agent uses 0.5)",
    )
    ap.add_argument(
        "--mask-rules",
        default="",
        help="also resolve the masks of these agent mask rules "
        "(comma-separated `alfred_task.models.mask_rules` specs, e.g. top_k:1000,top_k:2000)",
    )
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog, ValueError):
        from alfred_task.models.mask_rules import parse_mask_rule

        check_input_file("--checkpoint", args.checkpoint)
        check_int("--trajectories", args.trajectories, 1)
        args.thresholds = _thresholds(args.thresholds)
        args.mask_rules = [
            parse_mask_rule(r).spec for r in filter(None, args.mask_rules.split(","))
        ]
        res = run(args)
    summary = res["summary"]
    stem = RESULTS_DIR / "alfred_mask_resolve" / (args.tag or args.checkpoint.stem)
    write_json(stem.with_suffix(".json"), res)
    rows = [
        [
            name,
            s["n"],
            _rate(s["resolved_to_target"], s["n"], s["resolve_rate"]),
            s["empty"],
            s["median_pred_pixels"],
            s["median_gold_pixels"],
            s["median_iou"],
            *(
                _rate(at["resolved_to_target"], s["n"], at["resolve_rate"])
                for at in s["resolve_rate_at_threshold"].values()
            ),
        ]
        for name, s in [("all", summary), *summary["by_action"].items()]
    ]
    text = "\n".join(
        [
            f"# Mask resolve rate: {args.checkpoint}",
            "",
            f"{args.split}, first {summary['trajectories']} trajectories, annotation 0, teacher-forced",
            "",
            *markdown_table(
                [
                    "expert action",
                    "N",
                    "resolves to target % [95 % CI]",
                    "empty",
                    "median mask px",
                    "median gold px",
                    "median IoU",
                    *(f"resolves at > {t} %" for t in args.thresholds),
                    *(f"resolves with {r} %" for r in args.mask_rules),
                ],
                rows,
                "lrrrrrr" + "r" * (len(args.thresholds) + len(args.mask_rules)),
            ),
        ]
    )
    write_markdown(stem.with_suffix(".md"), text)
    print(text)
    return 0


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)
