"""Single ALFRED evaluation episodes: task episodes (§5.1) and subgoal episodes (§5.3).

Task episode: ``env.init_episode(traj)``; loop while ``t < max_steps``: ask the agent;
``<<stop>>`` ends the episode and is not a step; the mask is passed only for the 7 interaction
actions; ``va_interact``; a failure increments ``fails`` and the episode ends when ``fails >=
max_fails`` -- as in ALFRED this happens *before* the step is counted, so the action that reaches
``max_fails`` is neither counted in L nor rewarded nor recorded in the leaderboard action list;
otherwise the subgoal tracker is advanced (dense reward) and ``t += 1``. Unknown action strings
(e.g. ``<<seg>>``) go to the env and fail as "Invalid action". Afterwards success =
`goal_satisfied`, (s, ts) = `goal_conditions_met` on the final metadata with the env's
cleaned/heated/cooled sets and inventory, L* = ``len(plan.low_actions)``, L = t (see `metrics`
for the L = 0 rule). Each task record also says why the episode failed in ``failure`` (None on
success): the agent's own error when it gave up (`Agent.episode_error`, e.g. "expert error:
..."), else "max fails reached (...)", "step budget reached (...)" or "stopped without success", and
``fails_by_action`` counts its failed actions by name.

Subgoal episode for every subgoal index whose ``discrete_action.action`` is requested: init,
replay the expert low actions with ``high_idx < eval_idx`` (ReplayAgent semantics; each is also
passed to ``agent.teacher_force``), stop if one fails (``init_failed``, counted as a failure, the
agent does not act), then let the agent act until ``<<stop>>``/``<<seg>>``, ``max_fails`` fails or
``max_steps`` steps. Success = the tracker's ``get_subgoal_idx() == eval_idx`` (checked before each
agent action and once at the end); ``pl = agent steps + 1``, L* = #expert low actions of that
subgoal.

`run_subgoal_episodes` evaluates all requested subgoals of one (trajectory, annotation) with the
records `run_subgoal_episode` gives one index at a time, but teacher-forces the agent through the
expert prefix once: the prefix of a later subgoal extends the prefix of an earlier one, so the
agent's state at each subgoal is saved (`Agent.snapshot`) and put back after it acted, and only
the simulator is reset and replays the prefix (its steps cost milliseconds; the agent's cost a
ResNet and a decoder step each). Agents without snapshots are evaluated one index at a time.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from alfred_task.evaluation.agents import Agent, expert_steps
from alfred_task.constants import MAX_FAILS, MAX_STEPS, SEG, STOP, has_interaction
from alfred_task.env.goal_conditions import goal_conditions_met, goal_satisfied
from alfred_task.evaluation.metrics import episode_record, subgoal_record
from alfred_task.evaluation.subgoals import SubgoalTracker, num_subgoals

__all__ = ["run_task_episode", "subgoal_indices", "run_subgoal_episode", "run_subgoal_episodes"]

Step = Tuple[str, Optional[np.ndarray], int]


def _check_mask(mask: Any, env, action: str) -> np.ndarray:
    m = np.asarray(mask)
    md = env.last_event.metadata
    shape = (int(md["screenHeight"]), int(md["screenWidth"]))
    if m.ndim != 2 or m.shape != shape:
        raise ValueError(f"agent returned a mask of shape {m.shape} for {action}; expected {shape}")
    return m.astype(bool, copy=False)


def _agent_step(agent: Agent, env):
    out = agent.act(env)
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], str)):
        raise TypeError(
            f"{type(agent).__name__}.act must return (action: str, mask | None), got {out!r:.80}"
        )
    action, mask = out
    if action in (STOP,):
        return action, None
    if has_interaction(action):
        mask = None if mask is None else _check_mask(mask, env, action)
    else:
        mask = None
    return action, mask


def _goal_instr(traj: Mapping, repeat_idx: int) -> str:
    return traj["turk_annotations"]["anns"][repeat_idx].get("task_desc", "")


def _agent_loop(
    env,
    agent: Agent,
    tracker: Optional[SubgoalTracker],
    max_steps: int,
    max_fails: int,
    stop_tokens: Sequence[str],
    done: Optional[Callable[[], bool]] = None,
    actions: Optional[List[dict]] = None,
    failed: Optional[Dict[str, int]] = None,
    before_step: Optional[Callable[[], None]] = None,
) -> Tuple[int, int, float, str]:
    """Let the agent act until a stop token, `done()`, max_fails or max_steps (§5.1 counting:
    failed actions are steps, the stop prediction is not; the action reaching max_fails is
    neither counted nor tracked). Returns (steps, fails, reward, end reason); `failed` (if given)
    counts the failed actions by name, the one reaching max_fails included; `before_step` (if
    given) is called before each agent decision (e.g. to record what the agent sees)."""
    t = fails = 0
    reward = 0.0
    while t < max_steps:
        if done is not None and done():
            return t, fails, reward, "done"
        if before_step is not None:
            before_step()
        action, mask = _agent_step(agent, env)
        if action in stop_tokens:
            return t, fails, reward, "stop"
        ok, _ev, _target, _err, api = env.va_interact(action, mask)
        if not ok:
            fails += 1
            if failed is not None:
                failed[action] = failed.get(action, 0) + 1
            if fails >= max_fails:
                return t, fails, reward, "max_fails"
        if api and actions is not None:
            actions.append(dict(api))
        if tracker is not None:
            reward += tracker.update(action, ok)[0]
        t += 1
    return t, fails, reward, "max_steps"


def _failure(
    agent: Agent, success: Optional[bool], end_reason: str, steps: int, fails: int
) -> Optional[str]:
    """Why a task episode failed: the agent's own error first, else how it ended; None on success."""
    error = getattr(agent, "episode_error", None)
    error = error() if callable(error) else None
    if error:
        return str(error)
    if success or success is None:
        return None
    if end_reason == "max_fails":
        return f"max fails reached ({fails} failed actions)"
    if end_reason == "max_steps":
        return f"step budget reached ({steps} steps)"
    return "stopped without success"


def run_task_episode(
    env,
    agent: Agent,
    traj: Mapping,
    repeat_idx: int,
    *,
    max_steps: int = MAX_STEPS,
    max_fails: int = MAX_FAILS,
    record_actions: bool = False,
    reward_type: str = "dense",
    before_step: Optional[Callable[[Optional[SubgoalTracker]], None]] = None,
    **extra: Any,
) -> dict:
    """Evaluate one (trajectory, annotation); returns an episode record (see module doc).
    `before_step(tracker)` (if given) is called before each agent decision with the episode's
    subgoal tracker (None for unscored trajectories); it must not act in the simulator."""
    env.init_episode(traj)
    scored = bool(traj.get("plan"))
    tracker = SubgoalTracker(traj, env, reward_type=reward_type) if scored else None
    agent.reset(traj, repeat_idx, env)
    actions: List[dict] = []
    failed: Dict[str, int] = {}
    hook = None if before_step is None else (lambda: before_step(tracker))
    t, fails, reward, end_reason = _agent_loop(
        env,
        agent,
        tracker,
        max_steps,
        max_fails,
        (STOP,),
        actions=actions,
        failed=failed,
        before_step=hook,
    )
    common = {
        "num_fails": fails,
        "fails_by_action": dict(sorted(failed.items())),
        "end_reason": end_reason,
        "scored": scored,
        **extra,
    }
    if record_actions:
        common["api_actions"] = actions
    if not scored:
        return {
            "trial": traj["task_id"],
            "type": traj.get("task_type"),
            "repeat_idx": int(repeat_idx),
            "goal_instr": _goal_instr(traj, repeat_idx),
            "path_len": t,
            "failure": _failure(agent, None, end_reason, t, fails),
            **common,
        }
    md = env.last_event.metadata
    state = dict(
        cleaned_objects=env.cleaned_objects,
        heated_objects=env.heated_objects,
        cooled_objects=env.cooled_objects,
        inventory_objects=md["inventoryObjects"],
    )
    success = goal_satisfied(traj["task_type"], traj["pddl_params"], md["objects"], **state)
    s, ts = goal_conditions_met(traj["task_type"], traj["pddl_params"], md["objects"], **state)
    return episode_record(
        traj["task_id"],
        traj["task_type"],
        repeat_idx,
        _goal_instr(traj, repeat_idx),
        success,
        s,
        ts,
        len(traj["plan"]["low_actions"]),
        t,
        reward,
        subgoals_completed=tracker.get_subgoal_idx() + 1,
        num_subgoals=tracker.num_subgoals,
        failure=_failure(agent, success, end_reason, t, fails),
        **common,
    )


def subgoal_indices(traj: Mapping, subgoal_types: Sequence[str]) -> List[int]:
    high = traj["plan"]["high_pddl"]
    n = num_subgoals(high)
    return [
        i for i, h in enumerate(high[:n]) if h["discrete_action"]["action"] in set(subgoal_types)
    ]


def prefix_end(steps: Sequence[Step], eval_idx: int) -> int:
    """Number of expert steps replayed before subgoal ``eval_idx`` (those before the first step
    with ``high_idx >= eval_idx``); non-decreasing in ``eval_idx``."""
    return next((k for k, (_, _, h) in enumerate(steps) if h >= eval_idx), len(steps))


def replay_steps(
    env,
    agent: Optional[Agent],
    tracker: SubgoalTracker,
    steps: Sequence[Step],
    start: int,
    end: int,
) -> Optional[int]:
    """Execute expert steps ``start:end`` (teacher-forcing `agent` unless None); the index of the
    first that failed, else None (replay stops there)."""
    for k in range(start, end):
        action, mask, _ = steps[k]
        ok = env.va_interact(action, mask)[0]
        if agent is not None:
            agent.teacher_force(env, action, mask, ok)
        tracker.update(action, ok)
        if not ok:
            return k
    return None


def _subgoal_record(
    env,
    agent: Agent,
    traj: Mapping,
    repeat_idx: int,
    eval_idx: int,
    tracker: SubgoalTracker,
    init_failed: bool,
    expert_len: int,
    max_steps: int,
    max_fails: int,
    extra: dict,
) -> dict:
    """Let the agent act from the replayed prefix (unless it failed) and build the record."""
    sg_type = traj["plan"]["high_pddl"][eval_idx]["discrete_action"]["action"]
    prefix_idx = tracker.get_subgoal_idx()
    t = fails = 0
    reward = 0.0
    success = False
    end_reason = "init_failed"
    if not init_failed:
        t, fails, reward, end_reason = _agent_loop(
            env,
            agent,
            tracker,
            max_steps,
            max_fails,
            (STOP, SEG),
            done=lambda: tracker.get_subgoal_idx() == eval_idx,
        )
        success = tracker.get_subgoal_idx() == eval_idx
        if success:
            end_reason = "subgoal_done"
    return subgoal_record(
        traj["task_id"],
        traj["task_type"],
        repeat_idx,
        eval_idx,
        sg_type,
        success,
        expert_len,
        t,
        init_failed=init_failed,
        prefix_subgoal_idx=prefix_idx,
        num_fails=fails,
        end_reason=end_reason,
        reward=reward,
        goal_instr=_goal_instr(traj, repeat_idx),
        **extra,
    )


def _expert_len(steps: Sequence[Step], eval_idx: int) -> int:
    return sum(1 for _, _, h in steps if h == eval_idx)


def run_subgoal_episode(
    env,
    agent: Agent,
    traj: Mapping,
    repeat_idx: int,
    eval_idx: int,
    *,
    max_steps: int = MAX_STEPS,
    max_fails: int = MAX_FAILS,
    **extra: Any,
) -> dict:
    """Evaluate subgoal ``eval_idx`` of one (trajectory, annotation) (§5.3): reset, replay the prefix, act."""
    steps = expert_steps(traj)
    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, repeat_idx, env)
    failed_at = replay_steps(env, agent, tracker, steps, 0, prefix_end(steps, eval_idx))
    return _subgoal_record(
        env,
        agent,
        traj,
        repeat_idx,
        eval_idx,
        tracker,
        failed_at is not None,
        _expert_len(steps, eval_idx),
        max_steps,
        max_fails,
        extra,
    )


def run_subgoal_episodes(
    env,
    agent: Agent,
    traj: Mapping,
    repeat_idx: int,
    eval_idxs: Sequence[int],
    *,
    max_steps: int = MAX_STEPS,
    max_fails: int = MAX_FAILS,
    **extra: Any,
) -> List[dict]:
    """`run_subgoal_episode` for each of ``eval_idxs`` (same records, same order), with one
    teacher-forced pass of the agent over the expert prefix when it supports snapshots (module doc)."""
    if not getattr(agent, "supports_snapshot", False):
        return [
            run_subgoal_episode(
                env, agent, traj, repeat_idx, i, max_steps=max_steps, max_fails=max_fails, **extra
            )
            for i in eval_idxs
        ]
    order = sorted(range(len(eval_idxs)), key=lambda j: eval_idxs[j])
    steps = expert_steps(traj)
    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, repeat_idx, env)
    out: List[Optional[dict]] = [None] * len(eval_idxs)
    done, failed_at = 0, None  # expert steps executed on the current simulator / first failed one
    for n, j in enumerate(order):
        end = prefix_end(steps, eval_idxs[j])
        if failed_at is None:
            failed_at = replay_steps(env, agent, tracker, steps, done, end)
            done = end if failed_at is None else failed_at + 1
        more = failed_at is None and n + 1 < len(order)
        saved = agent.snapshot() if more else None
        out[j] = _subgoal_record(
            env,
            agent,
            traj,
            repeat_idx,
            eval_idxs[j],
            tracker,
            failed_at is not None,
            _expert_len(steps, eval_idxs[j]),
            max_steps,
            max_fails,
            extra,
        )
        if more:  # the agent moved: put its state back and rebuild the simulator's prefix state
            agent.restore(saved)
            env.init_episode(traj)
            tracker = SubgoalTracker(traj, env)
            if replay_steps(env, None, tracker, steps, 0, done) is not None:
                raise RuntimeError(
                    f"{traj.get('task_id')}: the expert prefix replayed differently the second "
                    "time (non-deterministic simulator?)"
                )
    return out  # type: ignore[return-value]
