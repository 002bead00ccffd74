"""ALFRED evaluation metrics (alfred.md §5.1 item 3-4, §5.2, §5.3) as pure functions.

Per episode (§5.1)::

    GC_ep    = completed / total
    factor   = min(1, L* / L)            L* = len(plan.low_actions), L = steps taken
    SR_spl   = 1[success] * factor       PLW_SR_ep = SR_spl * L*
    GC_spl   = GC_ep * factor            PLW_GC_ep = GC_spl * L*

Aggregate over N episodes (§5.2)::

    SR     = #successes / N
    GC     = sum(completed) / sum(total)            (micro-average over conditions,
                                                    NOT the mean of per-episode ratios)
    PLW-SR = sum(PLW_SR_ep) / sum(path_len_weight)
    PLW-GC = sum(PLW_GC_ep) / sum(path_len_weight)

Every episode counts, with weight L*, including one where the agent predicts <<stop>> before
any action (L = 0). ALFRED's script divides by zero there and silently drops the episode from
every metric, which is not its formula: with L = 0, min(1, L*/L) is 1 (the paper's
p = s * L*/max(L*, L) gives the same), so a failed stop-at-0 episode adds L* to both PLW
denominators and nothing (PLW-SR) or GC_ep * L* (PLW-GC) to the numerators. An episode with
L* = 0 has weight 0 and so adds nothing to either side, as the formula says.

Episode records are plain JSON-able dicts whose metric keys are exactly ALFRED's
(§5.1 item 4): ``trial, type, repeat_idx, goal_instr, completed_goal_conditions,
total_goal_conditions, goal_condition_success, success_spl,
path_len_weighted_success_spl, goal_condition_spl, path_len_weighted_goal_condition_spl,
path_len_weight, reward``; we add ``success``, ``path_len`` (L) and ``expert_path_len``
(L*) plus whatever extra fields the caller passes.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "EPISODE_KEYS",
    "path_factor",
    "episode_record",
    "aggregate",
    "aggregate_by_type",
    "subgoal_record",
    "aggregate_subgoals",
    "format_task_table",
    "format_subgoal_table",
]

#: ALFRED's per-episode keys (§5.1 item 4), in ALFRED's order.
EPISODE_KEYS = (
    "trial",
    "type",
    "repeat_idx",
    "goal_instr",
    "completed_goal_conditions",
    "total_goal_conditions",
    "goal_condition_success",
    "success_spl",
    "path_len_weighted_success_spl",
    "goal_condition_spl",
    "path_len_weighted_goal_condition_spl",
    "path_len_weight",
    "reward",
)


def _nonneg_int(name: str, v: Any) -> int:
    if isinstance(v, (bool, np.bool_)) or not hasattr(v, "__index__"):
        raise TypeError(f"{name} must be an integer, got {v!r}")
    v = int(v.__index__())
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v


def path_factor(expert_len: int, path_len: int) -> float:
    """min(1, L*/L), i.e. L*/max(L*, L); 1 when L = 0 (no longer than the expert)."""
    if path_len <= expert_len:
        return 1.0
    return expert_len / path_len


def episode_record(
    trial: str,
    task_type: str,
    repeat_idx: int,
    goal_instr: str,
    success: bool,
    completed: int,
    total: int,
    expert_len: int,
    path_len: int,
    reward: float = 0.0,
    **extra: Any,
) -> dict:
    """One task-evaluation record from (success, completed, total, L*, L)."""
    completed = _nonneg_int("completed", completed)
    total = _nonneg_int("total", total)
    expert_len = _nonneg_int("expert_len", expert_len)
    path_len = _nonneg_int("path_len", path_len)
    if total == 0:
        raise ValueError("total goal conditions must be >= 1")
    if completed > total:
        raise ValueError(f"completed ({completed}) > total ({total}) goal conditions")
    gc = completed / total
    factor = path_factor(expert_len, path_len)
    weight = float(expert_len)
    s_spl = (1.0 if success else 0.0) * factor
    gc_spl = gc * factor
    rec = {
        "trial": trial,
        "type": task_type,
        "repeat_idx": int(repeat_idx),
        "goal_instr": goal_instr,
        "completed_goal_conditions": completed,
        "total_goal_conditions": total,
        "goal_condition_success": gc,
        "success_spl": s_spl,
        "path_len_weighted_success_spl": s_spl * weight,
        "goal_condition_spl": gc_spl,
        "path_len_weighted_goal_condition_spl": gc_spl * weight,
        "path_len_weight": weight,
        "reward": float(reward),
        "success": bool(success),
        "path_len": path_len,
        "expert_path_len": expert_len,
    }
    rec.update(extra)
    return rec


def _div(a: float, b: float) -> float:
    return float(a) / float(b) if b else 0.0


def aggregate(records: Iterable[Mapping]) -> dict:
    """SR, GC (micro), PLW-SR, PLW-GC and counts over episode records (§5.2).

    Returns ALFRED's nested layout (``success``, ``goal_condition_success``,
    ``path_length_weighted_*``) plus flat shortcuts ``sr, gc, plw_sr, plw_gc, num_evals``.
    Empty input gives zeros.
    """
    recs = list(records)
    n = len(recs)
    n_succ = sum(1 for r in recs if r["success"])
    completed = sum(int(r["completed_goal_conditions"]) for r in recs)
    total = sum(int(r["total_goal_conditions"]) for r in recs)
    weight = sum(float(r["path_len_weight"]) for r in recs)
    plw_s = sum(float(r["path_len_weighted_success_spl"]) for r in recs)
    plw_gc = sum(float(r["path_len_weighted_goal_condition_spl"]) for r in recs)
    sr, gc = _div(n_succ, n), _div(completed, total)
    plw_sr, plw_gcr = _div(plw_s, weight), _div(plw_gc, weight)
    return {
        "success": {"num_successes": n_succ, "num_evals": n, "success_rate": sr},
        "goal_condition_success": {
            "completed_goal_conditions": completed,
            "total_goal_conditions": total,
            "goal_condition_success_rate": gc,
        },
        "path_length_weighted_success_rate": plw_sr,
        "path_length_weighted_goal_condition_success_rate": plw_gcr,
        "num_evals": n,
        "sr": sr,
        "gc": gc,
        "plw_sr": plw_sr,
        "plw_gc": plw_gcr,
    }


def aggregate_by_type(records: Iterable[Mapping]) -> dict:
    """``{"all": aggregate(records), <task_type>: aggregate(subset), ...}`` (types sorted)."""
    recs = list(records)
    out = {"all": aggregate(recs)}
    for t in sorted({r["type"] for r in recs}):
        out[t] = aggregate([r for r in recs if r["type"] == t])
    return out


# ---------------------------------------------------------------------------
# subgoal evaluation (§5.3)
# ---------------------------------------------------------------------------
def subgoal_record(
    trial: str,
    task_type: str,
    repeat_idx: int,
    subgoal_idx: int,
    subgoal_type: str,
    success: bool,
    expert_len: int,
    agent_steps: int,
    **extra: Any,
) -> dict:
    """One subgoal-evaluation record: ``pl = agent_steps + 1``, ``s_spl = success * min(1, L*/pl)``."""
    expert_len = _nonneg_int("expert_len", expert_len)
    agent_steps = _nonneg_int("agent_steps", agent_steps)
    pl = agent_steps + 1
    s_spl = (1.0 if success else 0.0) * min(1.0, expert_len / pl)
    rec = {
        "trial": trial,
        "type": task_type,
        "repeat_idx": int(repeat_idx),
        "subgoal_idx": int(subgoal_idx),
        "subgoal_type": subgoal_type,
        "success": bool(success),
        "subgoal_spl": s_spl,
        "subgoal_path_len_weighted_spl": s_spl * expert_len,
        "subgoal_path_len_weight": float(expert_len),
        "path_len": pl,
        "expert_path_len": expert_len,
    }
    rec.update(extra)
    return rec


def aggregate_subgoals(records: Iterable[Mapping]) -> dict:
    """Per subgoal type (plus ``all``): ``sr = successes/evals``, ``sr_plw = sum(s_spl*L*)/sum(L*)``."""
    recs = list(records)

    def agg(rs: Sequence[Mapping]) -> dict:
        s = sum(1 for r in rs if r["success"])
        w = sum(float(r["subgoal_path_len_weight"]) for r in rs)
        p = sum(float(r["subgoal_path_len_weighted_spl"]) for r in rs)
        return {"successes": s, "evals": len(rs), "sr": _div(s, len(rs)), "sr_plw": _div(p, w)}

    out = {"all": agg(recs)}
    for t in sorted({r["subgoal_type"] for r in recs}):
        out[t] = agg([r for r in recs if r["subgoal_type"] == t])
    return out


# ---------------------------------------------------------------------------
# text tables
# ---------------------------------------------------------------------------
def format_task_table(results: Mapping[str, Mapping], title: str = "") -> str:
    """Markdown-ish table of aggregate_by_type() output (percentages)."""
    lines = [title] if title else []
    lines.append(
        f"| {'task type':<34} | {'N':>4} | {'SR':>6} | {'GC':>6} | {'PLW-SR':>6} | {'PLW-GC':>6} |"
    )
    lines.append(f"|{'-' * 36}|{'-' * 6}|{'-' * 8}|{'-' * 8}|{'-' * 8}|{'-' * 8}|")
    for name, m in results.items():
        lines.append(
            f"| {name:<34} | {m['num_evals']:>4} | {100 * m['sr']:>6.2f} | {100 * m['gc']:>6.2f} | "
            f"{100 * m['plw_sr']:>6.2f} | {100 * m['plw_gc']:>6.2f} |"
        )
    return "\n".join(lines)


def format_subgoal_table(results: Mapping[str, Mapping], title: str = "") -> str:
    lines = [title] if title else []
    lines.append(f"| {'subgoal':<14} | {'evals':>5} | {'SR':>6} | {'PLW-SR':>6} |")
    lines.append(f"|{'-' * 16}|{'-' * 7}|{'-' * 8}|{'-' * 8}|")
    for name, m in results.items():
        lines.append(
            f"| {name:<14} | {m['evals']:>5} | {100 * m['sr']:>6.2f} | {100 * m['sr_plw']:>6.2f} |"
        )
    return "\n".join(lines)
