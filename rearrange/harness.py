"""The one place that steps a rearrangement episode and reads its metrics.

Both evaluators build on it: `rearrange.eval` (agents with `reset`/`act`, any split) and
`rearrange.curriculum` (act-callables on a slice; the main job's numbers), so an agent scored
by either is stepped and scored the same way.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

__all__ = ["Act", "play_episode", "side_by_side"]

Act = Callable[[Any, Dict[str, Any]], int]  # (task, observations) -> action index


def side_by_side(task) -> np.ndarray:
    """The current (unshuffle) view | a white bar | the goal (walkthrough) view."""
    cur = task.unshuffle_env.last_event.frame
    goal = task.walkthrough_env.last_event.frame
    return np.concatenate([cur, np.full((cur.shape[0], 4, 3), 255, np.uint8), goal], axis=1)


def play_episode(task, act: Act, frames: Optional[List[np.ndarray]] = None) -> Dict[str, Any]:
    """Step `task` with `act` until it is done and return `task.metrics()`; `frames`, when
    given, receives `side_by_side` before every step and once at the end."""
    obs = task.get_observations()
    while not task.is_done():
        if frames is not None:
            frames.append(side_by_side(task))
        obs = task.step(act(task, obs)).observation
    if frames is not None:
        frames.append(side_by_side(task))
    return task.metrics()
