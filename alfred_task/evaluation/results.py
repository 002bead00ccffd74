"""ALFRED's evaluation result files: task results, subgoal results, the leaderboard dump (§5.4)."""

from __future__ import annotations

from datetime import datetime
from typing import Dict, Mapping, Optional, Sequence

from alfred_task.evaluation.metrics import aggregate_by_type, aggregate_subgoals

__all__ = ["task_results", "subgoal_results", "leaderboard_dump", "timestamp"]


def task_results(records: Sequence[Mapping]) -> dict:
    """``{successes, failures, results}`` of scored records (ALFRED's task_results layout)."""
    scored = [dict(r) for r in records if r.get("scored", True)]
    for r in scored:
        r.pop("api_actions", None)
    return {
        "successes": [r for r in scored if r["success"]],
        "failures": [r for r in scored if not r["success"]],
        "results": aggregate_by_type(scored),
    }


def subgoal_results(records: Sequence[Mapping], split: Optional[str] = None) -> dict:
    """``{[split,] successes, failures, results}`` with successes/failures keyed by subgoal type."""
    succ: Dict[str, list] = {}
    fail: Dict[str, list] = {}
    for r in records:
        (succ if r["success"] else fail).setdefault(r["subgoal_type"], []).append(dict(r))
    out = {"successes": succ, "failures": fail, "results": aggregate_subgoals(records)}
    if split is not None:
        out = {"split": split, **out}
    return out


def leaderboard_dump(records: Sequence[Mapping]) -> dict:
    """``{"tests_seen": [{task_id: [api_action, ...]}, ...], "tests_unseen": [...]}`` (§5.4)."""
    out: Dict[str, list] = {"tests_seen": [], "tests_unseen": []}
    for r in records:
        if r.get("split") in out:
            if "api_actions" not in r:
                raise ValueError(
                    f"record {r.get('trial')} has no api_actions (evaluate with record_actions=True)"
                )
            out[r["split"]].append({r["trial"]: list(r["api_actions"])})
    return out


def timestamp() -> str:
    """Result file name suffix (microseconds: two runs in one second do not collide)."""
    return datetime.now().strftime("%Y%m%d_%H%M%S_%f")
