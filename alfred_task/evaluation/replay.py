"""Replay of a recorded ALFRED trajectory in the environment, with normalised failure causes.

Why in the library: the fidelity benchmarks, the replay fixture table and the fidelity tests all
measure thor_lite against real trajectories the same way; one definition keeps their numbers
comparable. A cause is ``<action>: <error message>`` with object ids and numbers replaced by
placeholders, so messages group by kind.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from common.cli import UsageError

_ID = re.compile(r"[A-Za-z]+\|[-+0-9.|A-Za-z_]+")
_ASSET = re.compile(r"\b([A-Za-z]+)_[0-9a-f]{6,}\b")  # scene asset names: Drawer_c8f5a3b1
_NUM = re.compile(r"-?\d+(\.\d+)?")
_DICT = re.compile(r"\{[^{}]*\}")  # e.g. the pddl_params a planner error quotes


def normalize(message: str) -> str:
    """First line of a message, object ids -> <id>, asset hashes -> <asset>, numbers -> #,
    quoted dicts -> {...}."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
    first = _DICT.sub("{...}", first)
    return _NUM.sub("#", _ASSET.sub(r"\1_<asset>", _ID.sub("<id>", first)))[:100]


def cause(action: str, message: str) -> str:
    """`action: message` normalized, so failures group by kind."""
    return f"{action}: {normalize(message)}"


def goal_counts(env, traj: dict) -> Tuple[int, int]:
    from alfred_task.env.goal_conditions import goal_conditions_met

    md = env.last_event.metadata
    return goal_conditions_met(
        traj["task_type"],
        traj["pddl_params"],
        md["objects"],
        env.cleaned_objects,
        env.heated_objects,
        env.cooled_objects,
        md["inventoryObjects"],
    )


def replay_trajectory(env, traj: dict) -> Dict[str, Any]:
    """Replay the recorded low-level actions; per-step success, first failure, goal at t=0 and end."""
    from alfred_task.constants import INTERACT_ACTIONS
    from alfred_task.data.masks import decompress_mask

    env.init_episode(traj)
    s0, ts0 = goal_counts(env, traj)
    ok_steps, first = 0, None
    lows = traj["plan"]["low_actions"]
    for i, la in enumerate(lows):
        act = la["discrete_action"]["action"]
        if act in INTERACT_ACTIONS:
            mask = decompress_mask(la["discrete_action"]["args"]["mask"])
            ok, _, _, err, _ = env.va_interact(act, mask)
        else:
            ev = env.step(dict(la["api_action"]))
            ok, err = bool(ev.metadata["lastActionSuccess"]), ev.metadata["errorMessage"]
        ok_steps += bool(ok)
        if not ok and first is None:
            first = {
                "step": i,
                "action": act,
                "message": (err or "")[:300],
                "cause": cause(act, err),
            }
    s, ts = goal_counts(env, traj)
    return {
        "steps": len(lows),
        "ok_steps": ok_steps,
        "first_failure": first,
        "goal": s == ts,
        "gc": [s, ts],
        "solved_at_t0": s0 == ts0,
    }


def read_traj_file(path: Path) -> dict:
    try:
        traj = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"--data: {path} is not a readable traj_data.json ({e})") from None
    if not isinstance(traj, dict):
        raise UsageError(f"--data: {path} holds {type(traj).__name__}, not a traj_data.json object")
    return traj


def find_trajectories(data: Path, limit: Optional[int], seed: int) -> List[Path]:
    """traj_data.json files with a plan, sorted; a seeded random subset of `limit` if given."""
    files = [p for p in sorted(data.rglob("traj_data.json")) if "plan" in read_traj_file(p)]
    if limit is not None and limit < len(files):
        files = sorted(random.Random(seed).sample(files, limit))
    return files
