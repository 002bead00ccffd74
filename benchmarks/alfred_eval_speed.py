"""Cost of ALFRED evaluation per episode (`alfred_task.evaluation.cli`), before -> after, with identical records.

    git archive <old commit> | tar -x -C /tmp/eval_before      # the code to compare against
    python benchmarks/alfred_eval_speed.py --data out/alfred_s2s_big \\
        --checkpoint out/learn/seq2seq_pm.pt --before-tree /tmp/eval_before \\
        --tasks 3 --subgoal-episodes 2 --max-steps 40 --subgoal-max-steps 20

Each tree (``--before-tree`` and this repository) runs in its own process (``PYTHONPATH`` = that
tree) with what its CLI would do in-process: the "before" code at torch's default thread count
(the old CLI never set it), this code at ``--torch-threads`` (the CLI's default 1). Both evaluate
the same first ``--tasks`` task episodes and the subgoal evaluation of the first
``--subgoal-episodes`` (trajectory, annotation) pairs (all requested subgoals of one pair = one
"subgoal episode"), for the seeded random agent and the checkpoint agent, on one env per process.
The script prints median seconds per episode and the ratio, asserts that both trees produced the
same records (every field), and times one ResNet-18 call at 1 and 2 torch threads (the thread
effect alone). Results: ``benchmarks/results/alfred_eval_speed.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any, Dict, List, Optional

from _common import REPO, RESULTS_DIR, markdown_table, write_json, write_markdown


def _worker(args: argparse.Namespace) -> None:
    """Runs inside one tree: time every episode, print records + seconds as JSON on stdout."""
    import torch

    from alfred_task.evaluation import agents as A
    from alfred_task.evaluation import cli as E
    from alfred_task.env.environment import AlfredEnv

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    entries = E.resolve_entries(
        args.data, args.splits or str(Path(args.data) / "splits.json"), args.split
    )
    env = AlfredEnv(width=300, height=300)
    agents = {"random": lambda: A.RandomAgent(seed=0)}
    if args.checkpoint:
        agents["checkpoint"] = lambda: A.CheckpointAgent(args.checkpoint)
    types = E.parse_subgoals(args.subgoals)
    out: Dict[str, Any] = {"torch_threads": torch.get_num_threads()}
    for name, make in agents.items():
        agent = make()
        tasks, subgoals = [], []
        for e in entries[: args.tasks]:
            traj = json.loads(Path(e.path).read_text())
            t0 = time.perf_counter()
            rec = E.run_task_episode(env, agent, traj, e.repeat_idx, max_steps=args.max_steps)
            tasks.append({"s": time.perf_counter() - t0, "rec": rec})
        for e in entries[: args.subgoal_episodes]:
            traj = json.loads(Path(e.path).read_text())
            idxs = E.subgoal_indices(traj, types)
            t0 = time.perf_counter()
            if hasattr(E, "run_subgoal_episodes"):
                recs = E.run_subgoal_episodes(
                    env, agent, traj, e.repeat_idx, idxs, max_steps=args.subgoal_max_steps
                )
            else:  # the code before one-pass subgoal evaluation
                recs = [
                    E.run_subgoal_episode(
                        env, agent, traj, e.repeat_idx, i, max_steps=args.subgoal_max_steps
                    )
                    for i in idxs
                ]
            subgoals.append({"s": time.perf_counter() - t0, "recs": recs, "n": len(idxs)})
        out[name] = {"task": tasks, "subgoal": subgoals}
    env.stop()
    print("@@RESULT@@" + json.dumps(out, default=str))


def _resnet_threads() -> Dict[str, float]:
    """Median seconds of one ResNet-18 call (300x300 frame) at 1 and 2 torch threads."""
    import numpy as np
    import torch

    from alfred_task.data.features import ResnetFeatures

    feats = ResnetFeatures("random_resnet18")
    frame = np.random.default_rng(0).integers(0, 255, (300, 300, 3), dtype=np.uint8)
    before = torch.get_num_threads()
    out = {}
    for n in (2, 1):
        torch.set_num_threads(n)
        feats([frame])
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            feats([frame])
            times.append(time.perf_counter() - t0)
        out[f"{n}_threads"] = median(times)
    torch.set_num_threads(before)
    return out


def _run_tree(tree: Path, args: argparse.Namespace, threads: int) -> Dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--data",
        str(Path(args.data).resolve()),
        "--split",
        args.split,
        "--tasks",
        str(args.tasks),
        "--subgoal-episodes",
        str(args.subgoal_episodes),
        "--max-steps",
        str(args.max_steps),
        "--subgoal-max-steps",
        str(args.subgoal_max_steps),
        "--subgoals",
        args.subgoals,
        "--torch-threads",
        str(threads),
    ]
    if args.splits:
        cmd += ["--splits", str(Path(args.splits).resolve())]
    if args.checkpoint:
        cmd += ["--checkpoint", str(Path(args.checkpoint).resolve())]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if p.returncode != 0 or "@@RESULT@@" not in p.stdout:
        raise SystemExit(f"{tree}: worker failed (exit {p.returncode}): {p.stderr[-800:]}")
    res = json.loads(p.stdout.split("@@RESULT@@", 1)[1])
    res["wall_s"] = time.perf_counter() - t0
    return res


def _medians(res: Dict[str, Any], agent: str) -> Dict[str, Optional[float]]:
    r = res[agent]
    return {
        "task": median(x["s"] for x in r["task"]) if r["task"] else None,
        "subgoal": median(x["s"] for x in r["subgoal"]) if r["subgoal"] else None,
        "subgoal_per_eval": (
            sum(x["s"] for x in r["subgoal"]) / max(1, sum(x["n"] for x in r["subgoal"]))
            if r["subgoal"]
            else None
        ),
    }


def _same_records(a: Dict[str, Any], b: Dict[str, Any], agent: str) -> bool:
    ra = [x["rec"] for x in a[agent]["task"]] + [r for x in a[agent]["subgoal"] for r in x["recs"]]
    rb = [x["rec"] for x in b[agent]["task"]] + [r for x in b[agent]["subgoal"] for r in x["recs"]]
    return ra == rb


def _report(out: Dict[str, Any], args: argparse.Namespace) -> str:
    rows: List[List[Any]] = []
    fmt = lambda v: "-" if v is None else f"{v:.2f}"
    for agent in out["agents"]:
        for kind in ("task", "subgoal", "subgoal_per_eval"):
            b = out["before"]["medians"][agent][kind] if "before" in out else None
            a = out["after"]["medians"][agent][kind]
            ratio = f"{b / a:.1f}x" if b and a else "-"
            rows.append([agent, kind, fmt(b), fmt(a), ratio])
    lines = [
        "# ALFRED evaluation cost per episode (s), before -> after",
        "",
        f"{args.tasks} task episodes (max_steps {args.max_steps}), {args.subgoal_episodes} subgoal episodes "
        f"({args.subgoals}, max_steps {args.subgoal_max_steps} after the prefix), split {args.split}; "
        f"load average at start {out['load_avg']}.",
        "",
    ]
    lines += markdown_table(
        ["agent", "what (median s)", "before", "after", "speed-up"], rows, "llrrr"
    )
    lines += [
        "",
        f"identical records before/after: {out.get('identical', 'not compared')}",
        f"ResNet-18, one 300x300 frame: {out['resnet']['2_threads']:.3f} s at 2 torch threads, "
        f"{out['resnet']['1_threads']:.3f} s at 1",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--splits", default=None, help="split file (default <data>/splits.json)")
    ap.add_argument("--split", default="valid_seen")
    ap.add_argument(
        "--checkpoint", default=None, help="checkpoint for --agent checkpoint (omit: random only)"
    )
    ap.add_argument("--before-tree", default=None, help="checkout of the code to compare against")
    ap.add_argument("--tasks", type=int, default=3)
    ap.add_argument("--subgoal-episodes", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=40)
    ap.add_argument("--subgoal-max-steps", type=int, default=20)
    ap.add_argument("--subgoals", default="GotoLocation,PickupObject")
    ap.add_argument(
        "--torch-threads", type=int, default=1, help="threads of this tree's run (the CLI default)"
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(RESULTS_DIR / "alfred_eval_speed"))
    args = ap.parse_args()
    if args.worker:
        return _worker(args)
    agents = ["random"] + (["checkpoint"] if args.checkpoint else [])
    out: Dict[str, Any] = {
        "agents": agents,
        "load_avg": round(os.getloadavg()[0], 1),
        "args": vars(args),
    }
    out["resnet"] = _resnet_threads()
    if args.before_tree:
        before = _run_tree(Path(args.before_tree).resolve(), args, 0)
        out["before"] = {
            "medians": {a: _medians(before, a) for a in agents},
            "wall_s": before["wall_s"],
            "torch_threads": before["torch_threads"],
        }
    after = _run_tree(REPO, args, args.torch_threads)
    out["after"] = {
        "medians": {a: _medians(after, a) for a in agents},
        "wall_s": after["wall_s"],
        "torch_threads": after["torch_threads"],
    }
    if args.before_tree:
        out["identical"] = {a: _same_records(before, after, a) for a in agents}
    text = _report(out, args)
    print(text)
    write_json(Path(args.out).with_suffix(".json"), out)
    write_markdown(Path(args.out).with_suffix(".md"), text + "\n")
    if args.before_tree and not all(out["identical"].values()):
        raise SystemExit(f"records differ before/after: {out['identical']}")


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
