"""ALFRED fidelity of thor_lite on real trajectories: replay and online expert, with failure causes.

    python benchmarks/alfred_fidelity.py                                   # the 316-trajectory sample
    python benchmarks/alfred_fidelity.py --data DIR --limit 40 --seed 0 --processes 2 --mode replay --out r.md

Over every ``traj_data.json`` with a plan under --data (any folder of real ALFRED data):

* **replay**: restore the recorded scene, run init_action, replay ``plan.low_actions``
  (navigation as recorded, interactions through their recorded masks). Reports % of steps that
  succeed, % of trajectories without a failed step, % whose goal holds at the end, how many are
  solved before the first action (t = 0), and a table of first-failure causes;
* **expert**: the online expert (``ExpertAgent``) from the same real initial state under the
  evaluation harness (1000 steps, 10 failures). Reports SR, GC and a table of causes: the
  expert's own error, else the first failed action, else how the episode ended.

A cause is ``<action>: <error message>`` with object ids and numbers replaced by placeholders,
so messages group by kind. Writes --out (benchmarks/results/alfred_fidelity.md) and a .json beside it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tqdm import tqdm

from _common import RESULTS_DIR, SHARED, markdown_table, write_json, write_markdown
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_dir,
    check_int,
    check_output_file,
    report_usage_errors,
)
from common.procs import stop_children_on_signals

from alfred_task.evaluation.replay import cause, find_trajectories, normalize, replay_trajectory

DEFAULT_DATA = SHARED / "data" / "alfred_train_sample" / "json_2.1.0"
MODES = ("replay", "expert")

_ENV = None  # one AlfredEnv per worker process


def _env():
    global _ENV
    if _ENV is None:
        from alfred_task.env.environment import AlfredEnv

        _ENV = AlfredEnv()
    return _ENV


class _Recording:
    """The env as the harness sees it, remembering the first failed action and its message."""

    def __init__(self, env) -> None:
        self._env = env
        self.first_failure: Optional[Dict[str, Any]] = None

    def __getattr__(self, name: str):
        return getattr(self._env, name)

    def va_interact(self, action: str, mask=None):
        out = self._env.va_interact(action, mask)
        if not out[0] and self.first_failure is None:
            self.first_failure = {
                "action": action,
                "message": (out[3] or "")[:300],
                "cause": cause(action, out[3]),
            }
        return out


def expert(env, traj: dict) -> Dict[str, Any]:
    """The online expert from the real initial state under the evaluation harness."""
    from alfred_task.evaluation.cli import run_task_episode
    from alfred_task.planning.expert import ExpertAgent

    rec_env = _Recording(env)
    rec = run_task_episode(rec_env, ExpertAgent(), traj, 0)
    ff = rec_env.first_failure
    if rec["success"]:
        why = None
    elif rec.get("failure", "").startswith("expert error"):
        why = "expert: " + normalize(rec["failure"].split(":", 2)[-1])
    elif ff is not None:
        why = ff["cause"]
    else:
        why = rec.get("failure") or "stopped without success"
    return {
        "success": bool(rec["success"]),
        "gc": [rec["completed_goal_conditions"], rec["total_goal_conditions"]],
        "path_len": rec["path_len"],
        "num_fails": rec["num_fails"],
        "failure": rec.get("failure"),
        "first_failed_action": ff,
        "cause": why,
    }


def run_one(job: Tuple[str, Sequence[str]]) -> Dict[str, Any]:
    """Both measurements of one trajectory in this worker's env (errors recorded, never raised)."""
    path, modes = job
    traj = json.loads(Path(path).read_text())
    row: Dict[str, Any] = {
        "path": path,
        "task": f"{Path(path).parent.parent.name}/{Path(path).parent.name}",
        "task_type": traj["task_type"],
        "scene": traj["scene"]["floor_plan"],
    }
    t0 = time.perf_counter()
    for mode in modes:
        try:
            row[mode] = (replay_trajectory if mode == "replay" else expert)(_env(), traj)
        except Exception as e:  # a crash is a finding, not the end of the benchmark
            row[mode] = {"crash": f"{type(e).__name__}: {e}"[:300]}
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:.1f} %" if b else "-"


def _cause_table(counter: Counter, n: int) -> List[str]:
    return markdown_table(
        ["cause", "trajectories", "share"],
        [(c.replace("|", "/"), k, _pct(k, n)) for c, k in counter.most_common()],
        "lrr",
    )


def summarize_replay(rows: List[Dict[str, Any]]) -> Tuple[dict, List[str]]:
    rs = [r["replay"] for r in rows if "replay" in r]
    crashed = [r for r in rs if "crash" in r]
    ok = [r for r in rs if "crash" not in r]
    steps, good = sum(r["steps"] for r in ok), sum(r["ok_steps"] for r in ok)
    summary = {
        "trajectories": len(rs),
        "crashed": len(crashed),
        "steps": steps,
        "steps_ok": good,
        "steps_ok_pct": round(100 * good / max(steps, 1), 2),
        "no_failed_step": sum(r["first_failure"] is None for r in ok),
        "goal_reached": sum(r["goal"] for r in ok),
        "solved_at_t0": sum(r["solved_at_t0"] for r in ok),
    }
    causes = Counter(r["first_failure"]["cause"] for r in ok if r["first_failure"])
    causes.update("crash: " + normalize(r["crash"]) for r in crashed)
    n = len(rs)
    lines = [
        "## Replay of the recorded low-level actions",
        "",
        f"- steps that succeed: {good}/{steps} ({_pct(good, steps)})",
        f"- trajectories without a failed step: {summary['no_failed_step']}/{n} ({_pct(summary['no_failed_step'], n)})",
        f"- goal reached at the end: {summary['goal_reached']}/{n} ({_pct(summary['goal_reached'], n)})",
        f"- goal already satisfied at t = 0: {summary['solved_at_t0']}/{n}; crashes: {len(crashed)}",
        "",
        "First failure of each trajectory, by cause:",
        "",
    ] + _cause_table(causes, n)
    summary["first_failure_causes"] = dict(causes.most_common())
    return summary, lines


def summarize_expert(rows: List[Dict[str, Any]]) -> Tuple[dict, List[str]]:
    rs = [r["expert"] for r in rows if "expert" in r]
    ok = [r for r in rs if "crash" not in r]
    n = len(rs)
    sr = sum(r["success"] for r in ok)
    gc = sum(r["gc"][0] / r["gc"][1] for r in ok)
    causes = Counter(r["cause"] for r in ok if not r["success"])
    causes.update("crash: " + normalize(r["crash"]) for r in rs if "crash" in r)
    summary = {
        "episodes": n,
        "success": sr,
        "sr_pct": round(100 * sr / max(n, 1), 2),
        "gc_pct": round(100 * gc / max(n, 1), 2),
        "causes": dict(causes.most_common()),
    }
    lines = [
        "## Online expert from the real initial state",
        "",
        f"- success rate: {sr}/{n} ({_pct(sr, n)}); goal-condition rate {_pct(gc, n)}",
        "",
        "Failed episodes, by cause (expert error, else first failed action, else end reason):",
        "",
    ]
    return summary, lines + _cause_table(causes, n)


def by_task_type(rows: List[Dict[str, Any]]) -> List[str]:
    types = sorted({r["task_type"] for r in rows})
    out = []
    for t in types:
        rs = [r for r in rows if r["task_type"] == t]
        rp = [r["replay"] for r in rs if "steps" in r.get("replay", {})]
        ex = [r["expert"] for r in rs if "success" in r.get("expert", {})]
        out.append(
            (
                t,
                len(rs),
                _pct(sum(x["ok_steps"] for x in rp), sum(x["steps"] for x in rp)),
                _pct(sum(x["goal"] for x in rp), len(rp)),
                _pct(sum(x["success"] for x in ex), len(ex)),
            )
        )
    return ["## By task type", ""] + markdown_table(
        ["task type", "trajectories", "replay steps ok", "replay goal", "expert SR"], out, "lrrrr"
    )


def _pool_init() -> None:
    import os

    from common.procs import ignore_sigint

    os.nice(5)
    ignore_sigint()


def run_all(files: List[Path], modes: Sequence[str], processes: int) -> List[Dict[str, Any]]:
    jobs = [(str(p), tuple(modes)) for p in files]
    if processes == 1:
        return [run_one(j) for j in tqdm(jobs, desc="trajectories")]
    rows = []
    with mp.get_context("forkserver").Pool(processes, initializer=_pool_init) as pool:
        for row in tqdm(pool.imap_unordered(run_one, jobs), total=len(jobs), desc="trajectories"):
            rows.append(row)
    return sorted(rows, key=lambda r: r["path"])


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineArgumentParser(
        prog="benchmarks/alfred_fidelity.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder searched for traj_data.json"
    )
    ap.add_argument(
        "--limit", type=int, default=None, help="a seeded random subset of this many trajectories"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the --limit subset")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--mode", choices=("both",) + MODES, default="both")
    ap.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / "alfred_fidelity.md",
        help="markdown report; the JSON (summary + one row per trajectory) goes next to it",
    )
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    out = args.out
    with report_usage_errors(ap.prog):
        check_int("--limit", args.limit, 1)
        check_int("--processes", args.processes, 1)
        check_output_file("--out", out)
        check_output_file("--out (json next to it)", out.with_suffix(".json"))
        check_input_dir("--data", args.data)
        files = find_trajectories(args.data, args.limit, args.seed)
        if not files:
            raise UsageError(f"--data {args.data}: no traj_data.json with a plan below it")
    modes = MODES if args.mode == "both" else (args.mode,)
    with stop_children_on_signals(ap.prog):
        t0 = time.perf_counter()
        rows = run_all(files, modes, args.processes)
        wall = time.perf_counter() - t0
    return report(rows, modes, args, out, wall)


def report(
    rows: List[Dict[str, Any]],
    modes: Sequence[str],
    args: argparse.Namespace,
    out: Path,
    wall: float,
) -> int:
    lines = [
        f"# ALFRED fidelity of thor_lite on {len(rows)} real trajectories",
        "",
        f"data: {args.data}; limit {args.limit}, seed {args.seed}; {wall:.0f} s wall on "
        f"{args.processes} process(es)",
        "",
    ]
    summary: Dict[str, Any] = {
        "data": str(args.data),
        "limit": args.limit,
        "seed": args.seed,
        "trajectories": len(rows),
        "wall_s": round(wall, 1),
    }
    for mode, fn in (("replay", summarize_replay), ("expert", summarize_expert)):
        if mode in modes:
            summary[mode], part = fn(rows)
            lines += part + [""]
    lines += by_task_type(rows)
    text = "\n".join(lines)
    print(text)
    write_markdown(out, text)
    write_json(out.with_suffix(".json"), {"summary": summary, "rows": rows}, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
