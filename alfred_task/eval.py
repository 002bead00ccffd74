"""ALFRED task / subgoal evaluation and the leaderboard dump (alfred.md §5, §4, §11).

CLI::

    python -m alfred_task.eval --agent random|replay|checkpoint|expert|<registered> \\
        --data <json_2.1.0 root> --splits <oct21-style split file> --split valid_seen \\
        [--checkpoint PATH] [--subgoals all|GotoLocation,PickupObject,...] \\
        [--max-steps 1000] [--max-fails 10] [--num-workers N] [--limit K] [--out DIR] \\
        [--seed S] [--backend thor_lite] [--agent-module MOD ...] [--agent-kwargs JSON] [--quiet]

``--split`` takes one split or a comma-separated list (``tests_seen,tests_unseen`` gives one
leaderboard dump with both keys). Outputs (written atomically, only after every episode
finished, so a failed run leaves nothing half-written):

* ``task_results_<split>_<ts>.json`` = ``{successes, failures, results}`` for train/valid
  splits; ``results`` holds ``all`` plus one entry per task type (`metrics.aggregate_by_type`);
* ``tests_actseqs_dump_<ts>.json`` = ``{"tests_seen": [{task_id: [api_action, ...]}, ...],
  "tests_unseen": [...]}`` when test splits are evaluated (one dict per annotation; test
  trajectories have no plan, so they are not scored; a split not evaluated is ``[]``);
* ``subgoal_results_<ts>.json`` = ``{split, successes, failures, results}`` with
  ``--subgoals`` (successes/failures keyed by subgoal type).

Task episode (§5.1): ``env.init_episode(traj)``; loop while ``t < max_steps``: ask the
agent; ``<<stop>>`` ends the episode and is not a step; the mask is passed only for the 7
interaction actions; ``va_interact``; a failure increments ``fails`` and the episode ends
when ``fails >= max_fails`` -- as in ALFRED this happens *before* the step is counted, so
the action that reaches ``max_fails`` is neither counted in L nor rewarded nor recorded in
the leaderboard action list; otherwise the subgoal tracker is advanced (dense reward) and
``t += 1``. Unknown action strings (e.g. ``<<seg>>``) go to the env and fail as "Invalid
action". Afterwards success = `goal_satisfied`, (s, ts) = `goal_conditions_met` on the
final metadata with the env's cleaned/heated/cooled sets and inventory, L* =
``len(plan.low_actions)``, L = t (see `metrics` for the L = 0 rule). Each task record also
says why the episode failed in ``failure`` (None on success): the agent's own error when it
gave up (`Agent.episode_error`, e.g. "expert error: ..."), else "max fails reached (...)",
"step budget reached (...)" or "stopped without success".

Subgoal episode (§5.3) for every subgoal index whose ``discrete_action.action`` is
requested: init, replay the expert low actions with ``high_idx < eval_idx`` (ReplayAgent
semantics; each is also passed to ``agent.teacher_force``), stop if one fails
(``init_failed``, counted as a failure, the agent does not act), then let the agent act
until ``<<stop>>``/``<<seg>>``, ``max_fails`` fails or ``max_steps`` steps. Success =
the tracker's ``get_subgoal_idx() == eval_idx`` (checked before each agent action and once
at the end); ``pl = agent steps + 1``, L* = #expert low actions of that subgoal.

Python API: `evaluate_tasks(agent_factory, entries, data_root, ...) -> list[record]`,
`evaluate_subgoals(...)`, `resolve_entries(...)`, `run_task_episode(...)`.

Multiprocessing: ``num_workers > 1`` uses a 'spawn' (or 'forkserver') pool; each worker
builds its own `AlfredEnv` and agent; results come back in input order whatever the number
of workers (and `RandomAgent` seeds per episode, so its records do not depend on it either).
"""
from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from backends import BACKENDS, DEFAULT_BACKEND
from common.atomic_io import write_json_atomic
from common.cli import OneLineArgumentParser, UsageError, check_int, check_output_dir
from common.procs import stop_children_on_signals

from .agents import Agent, UnknownAgentError, agent_factory as _agent_factory, expert_steps, registered_agents
from .constants import MAX_FAILS, MAX_STEPS, SCREEN_SIZE, SEG, STOP, SUBGOAL_EVAL_TYPES, TEST_SPLITS, has_interaction
from .goal_conditions import goal_conditions_met, goal_satisfied
from .metrics import (aggregate_by_type, aggregate_subgoals, episode_record, format_subgoal_table,
                      format_task_table, subgoal_record)
from .subgoals import SubgoalTracker, num_subgoals
from .traj_data import SplitEntry, load_split_file, validate_traj_dict
from .traj_schema import TrajDataError

__all__ = [
    "EvalEntry",
    "EvalInputError",
    "EpisodeError",
    "resolve_entries",
    "run_task_episode",
    "run_subgoal_episode",
    "evaluate_tasks",
    "evaluate_subgoals",
    "task_results",
    "subgoal_results",
    "leaderboard_dump",
    "parse_subgoals",
    "main",
]

AgentFactory = Callable[[], Agent]


class EvalInputError(ValueError):
    """Bad evaluation input (split, split file, trajectory, repeat_idx, option value)."""


class EpisodeError(RuntimeError):
    """An episode crashed (agent or environment); the message names the episode."""


@dataclass(frozen=True)
class EvalEntry:
    """One (trajectory, annotation) to evaluate."""

    split: str
    task: str
    repeat_idx: int
    path: str  # <data_root>/<split>/<task>/traj_data.json

    @property
    def is_test(self) -> bool:
        return self.split in TEST_SPLITS


# ---------------------------------------------------------------------------
# input resolution / validation
# ---------------------------------------------------------------------------
def _load_traj(path: Union[str, Path]) -> dict:
    p = Path(path)
    try:
        with open(p, "r", encoding="utf-8") as f:
            d = json.load(f)
    except FileNotFoundError:
        raise EvalInputError(f"{p}: trajectory file not found") from None
    except json.JSONDecodeError as e:
        raise EvalInputError(f"{p}: invalid JSON: {e}") from None
    try:
        validate_traj_dict(d, source=str(p))
    except TrajDataError as e:
        raise EvalInputError(str(e)) from None
    return d


def _check_entry(e: EvalEntry, where: str, cache: Dict[str, dict]) -> None:
    if e.path not in cache:
        if not Path(e.path).is_file():
            raise EvalInputError(f"{where}: task {e.task!r}: trajectory file {e.path} not found")
        cache[e.path] = _load_traj(e.path)
    n = len(cache[e.path]["turk_annotations"]["anns"])
    if isinstance(e.repeat_idx, bool) or not isinstance(e.repeat_idx, int) or not 0 <= e.repeat_idx < n:
        raise EvalInputError(f"{where}: repeat_idx {e.repeat_idx!r} out of range: {e.path} has {n} annotation(s) "
                             f"in turk_annotations.anns")


def resolve_entries(data_root: Union[str, Path], splits: Union[str, Path, Mapping[str, Sequence]],
                    split_names: Union[str, Sequence[str]], limit: Optional[int] = None) -> List[EvalEntry]:
    """Entries of ``split_names`` from an oct21-style split file (or dict), validated.

    Raises `EvalInputError` naming the split file / trajectory file / field / value for: a
    split missing from the file, a missing or invalid trajectory, a repeat_idx out of range.
    ``limit`` keeps the first K entries of each split.
    """
    if isinstance(split_names, str):
        split_names = [s.strip() for s in split_names.split(",") if s.strip()]
    if not split_names:
        raise EvalInputError("no split given")
    if limit is not None and limit < 0:
        raise EvalInputError(f"--limit must be >= 0, got {limit}")
    src = "<splits>"
    if isinstance(splits, (str, Path)):
        src = str(splits)
        try:
            table = load_split_file(splits)
        except TrajDataError as e:
            raise EvalInputError(str(e)) from None
    else:
        table = {k: [x if isinstance(x, SplitEntry) else SplitEntry(x["task"], x["repeat_idx"]) for x in v]
                 for k, v in splits.items()}
    data_root = Path(data_root)
    if not data_root.is_dir():
        raise EvalInputError(f"--data {data_root}: not a directory")
    out: List[EvalEntry] = []
    cache: Dict[str, dict] = {}
    for split in split_names:
        if split not in table:
            raise EvalInputError(f"{src}: split {split!r} not in the split file (available: {', '.join(table)})")
        entries = table[split] if limit is None else table[split][:limit]
        for i, se in enumerate(entries):
            e = EvalEntry(split, se.task, se.repeat_idx, str(se.traj_path(data_root, split)))
            _check_entry(e, f"{src}: {split}[{i}]", cache)
            out.append(e)
    return out


def _coerce_entries(entries: Iterable[Any], data_root: Union[str, Path], split: Optional[str]) -> List[EvalEntry]:
    out: List[EvalEntry] = []
    cache: Dict[str, dict] = {}
    for i, x in enumerate(entries):
        if isinstance(x, EvalEntry):
            e = x
        else:
            if isinstance(x, SplitEntry):
                task, r, sp = x.task, x.repeat_idx, split
            elif isinstance(x, Mapping):
                if "task" not in x or "repeat_idx" not in x:
                    raise EvalInputError(f"entries[{i}]: needs 'task' and 'repeat_idx', got {dict(x)!r}")
                task, r, sp = x["task"], x["repeat_idx"], x.get("split", split)
            else:
                raise EvalInputError(f"entries[{i}]: expected EvalEntry, SplitEntry or dict, got {type(x).__name__}")
            if not sp:
                raise EvalInputError(f"entries[{i}]: no split (pass split=... or an EvalEntry)")
            e = EvalEntry(sp, task, r, str(Path(data_root) / sp / task / "traj_data.json"))
        _check_entry(e, f"entries[{i}]", cache)
        out.append(e)
    return out


def parse_subgoals(spec: Union[str, Sequence[str]]) -> List[str]:
    """``"all"`` or a comma-separated list of subgoal types (§5.3) -> list, validated."""
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    items = [s for s in items if s]
    if items == ["all"]:
        return list(SUBGOAL_EVAL_TYPES)
    bad = [s for s in items if s not in SUBGOAL_EVAL_TYPES]
    if bad or not items:
        raise EvalInputError(f"--subgoals: invalid value {','.join(bad) or spec!r} "
                             f"(expected 'all' or a comma-separated subset of {', '.join(SUBGOAL_EVAL_TYPES)})")
    return items


# ---------------------------------------------------------------------------
# single episodes
# ---------------------------------------------------------------------------
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
        raise TypeError(f"{type(agent).__name__}.act must return (action: str, mask | None), got {out!r:.80}")
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


def _agent_loop(env, agent: Agent, tracker: Optional[SubgoalTracker], max_steps: int, max_fails: int,
                stop_tokens: Sequence[str], done: Optional[Callable[[], bool]] = None,
                actions: Optional[List[dict]] = None) -> Tuple[int, int, float, str]:
    """Let the agent act until a stop token, `done()`, max_fails or max_steps (§5.1 counting:
    failed actions are steps, the stop prediction is not; the action reaching max_fails is
    neither counted nor tracked). Returns (steps, fails, reward, end reason)."""
    t = fails = 0
    reward = 0.0
    while t < max_steps:
        if done is not None and done():
            return t, fails, reward, "done"
        action, mask = _agent_step(agent, env)
        if action in stop_tokens:
            return t, fails, reward, "stop"
        ok, _ev, _target, _err, api = env.va_interact(action, mask)
        if not ok:
            fails += 1
            if fails >= max_fails:
                return t, fails, reward, "max_fails"
        if api and actions is not None:
            actions.append(dict(api))
        if tracker is not None:
            reward += tracker.update(action, ok)[0]
        t += 1
    return t, fails, reward, "max_steps"


def _failure(agent: Agent, success: Optional[bool], end_reason: str, steps: int, fails: int) -> Optional[str]:
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


def run_task_episode(env, agent: Agent, traj: Mapping, repeat_idx: int, *, max_steps: int = MAX_STEPS,
                     max_fails: int = MAX_FAILS, record_actions: bool = False, reward_type: str = "dense",
                     **extra: Any) -> dict:
    """Evaluate one (trajectory, annotation); returns an episode record (see module doc)."""
    env.init_episode(traj)
    scored = bool(traj.get("plan"))
    tracker = SubgoalTracker(traj, env, reward_type=reward_type) if scored else None
    agent.reset(traj, repeat_idx, env)
    actions: List[dict] = []
    t, fails, reward, end_reason = _agent_loop(env, agent, tracker, max_steps, max_fails, (STOP,), actions=actions)
    common = {"num_fails": fails, "end_reason": end_reason, "scored": scored, **extra}
    if record_actions:
        common["api_actions"] = actions
    if not scored:
        return {"trial": traj["task_id"], "type": traj.get("task_type"), "repeat_idx": int(repeat_idx),
                "goal_instr": _goal_instr(traj, repeat_idx), "path_len": t,
                "failure": _failure(agent, None, end_reason, t, fails), **common}
    md = env.last_event.metadata
    state = dict(cleaned_objects=env.cleaned_objects, heated_objects=env.heated_objects,
                 cooled_objects=env.cooled_objects, inventory_objects=md["inventoryObjects"])
    success = goal_satisfied(traj["task_type"], traj["pddl_params"], md["objects"], **state)
    s, ts = goal_conditions_met(traj["task_type"], traj["pddl_params"], md["objects"], **state)
    return episode_record(traj["task_id"], traj["task_type"], repeat_idx, _goal_instr(traj, repeat_idx),
                          success, s, ts, len(traj["plan"]["low_actions"]), t, reward,
                          subgoals_completed=tracker.get_subgoal_idx() + 1, num_subgoals=tracker.num_subgoals,
                          failure=_failure(agent, success, end_reason, t, fails), **common)


def subgoal_indices(traj: Mapping, subgoal_types: Sequence[str]) -> List[int]:
    high = traj["plan"]["high_pddl"]
    n = num_subgoals(high)
    return [i for i, h in enumerate(high[:n]) if h["discrete_action"]["action"] in set(subgoal_types)]


def run_subgoal_episode(env, agent: Agent, traj: Mapping, repeat_idx: int, eval_idx: int, *,
                        max_steps: int = MAX_STEPS, max_fails: int = MAX_FAILS, **extra: Any) -> dict:
    """Evaluate subgoal ``eval_idx`` of one (trajectory, annotation) (§5.3)."""
    high = traj["plan"]["high_pddl"]
    sg_type = high[eval_idx]["discrete_action"]["action"]
    steps = expert_steps(traj)
    expert_len = sum(1 for _, _, h in steps if h == eval_idx)
    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, repeat_idx, env)
    init_failed = False
    for action, mask, h in steps:
        if h >= eval_idx:
            break
        ok, _ev, _t, _err, _api = env.va_interact(action, mask)
        agent.teacher_force(env, action, mask, ok)
        tracker.update(action, ok)
        if not ok:
            init_failed = True
            break
    prefix_idx = tracker.get_subgoal_idx()
    t = fails = 0
    reward = 0.0
    success = False
    end_reason = "init_failed"
    if not init_failed:
        t, fails, reward, end_reason = _agent_loop(
            env, agent, tracker, max_steps, max_fails, (STOP, SEG),
            done=lambda: tracker.get_subgoal_idx() == eval_idx)
        success = tracker.get_subgoal_idx() == eval_idx
        if success:
            end_reason = "subgoal_done"
    return subgoal_record(traj["task_id"], traj["task_type"], repeat_idx, eval_idx, sg_type, success, expert_len, t,
                          init_failed=init_failed, prefix_subgoal_idx=prefix_idx, num_fails=fails,
                          end_reason=end_reason, reward=reward, goal_instr=_goal_instr(traj, repeat_idx), **extra)


# ---------------------------------------------------------------------------
# workers
# ---------------------------------------------------------------------------
_WORKER: Dict[str, Any] = {}


def _make_env(backend: str, size: int):
    from .environment import AlfredEnv

    return AlfredEnv(backend=backend, width=size, height=size)


def _one_torch_thread() -> None:
    """Pool workers run one torch thread each: N workers on N cores would otherwise start N×N
    intra-op threads (torch's default is one per core) that fight each other and the simulator."""
    try:
        import torch
    except ImportError:  # agents without torch
        return
    torch.set_num_threads(1)


def _worker_init(factory: AgentFactory, backend: str, size: int) -> None:
    _one_torch_thread()
    try:
        _WORKER["env"] = _make_env(backend, size)
        _WORKER["agent"] = factory()
    except Exception as e:  # noqa: BLE001 - reported by the first job (keeps the pool alive)
        _WORKER["init_error"] = f"worker start-up failed: {type(e).__name__}: {e}"


def _run_job(job: tuple, env=None, agent=None):
    kind, entry, opts = job
    if env is None and "init_error" in _WORKER:
        raise EpisodeError(_WORKER["init_error"])
    env = env if env is not None else _WORKER["env"]
    agent = agent if agent is not None else _WORKER["agent"]
    extra = {"split": entry.split, "task": entry.task}
    try:
        traj = _load_traj(entry.path)
        if kind == "task":
            return run_task_episode(env, agent, traj, entry.repeat_idx, **opts, **extra)
        sg_opts = {k: v for k, v in opts.items() if k in ("max_steps", "max_fails")}
        return [run_subgoal_episode(env, agent, traj, entry.repeat_idx, i, **sg_opts, **extra)
                for i in subgoal_indices(traj, opts["subgoals"])]
    except Exception as e:  # noqa: BLE001 - re-raised with the episode named (picklable)
        raise EpisodeError(f"{entry.split}/{entry.task} repeat_idx={entry.repeat_idx}: "
                           f"{type(e).__name__}: {e}") from None


def _as_factory(agent_factory: Union[AgentFactory, Agent]) -> AgentFactory:
    if isinstance(agent_factory, Agent):
        inst = agent_factory
        return lambda: inst
    if not callable(agent_factory):
        raise TypeError(f"agent_factory must be a zero-argument callable returning an Agent, got {agent_factory!r}")
    return agent_factory


def _run_jobs(jobs: List[tuple], agent_factory: Union[AgentFactory, Agent], *, num_workers: int, backend: str,
              size: int, env, progress: bool, desc: str, mp_context: str) -> list:
    from tqdm import tqdm

    results: list = []
    if not jobs:
        return results
    bar = tqdm(total=len(jobs), desc=desc, unit="ep", disable=not progress, file=sys.stderr)
    try:
        if num_workers <= 1 or len(jobs) <= 1:
            factory = _as_factory(agent_factory)
            own_env = env is None
            env = _make_env(backend, size) if own_env else env
            try:
                agent = factory()
                for job in jobs:
                    results.append(_run_job(job, env, agent))
                    bar.update(1)
            finally:
                if own_env:
                    env.stop()
        else:
            if isinstance(agent_factory, Agent) or not callable(agent_factory):
                raise TypeError("num_workers > 1 needs a picklable zero-argument agent factory, not an Agent instance")
            try:
                pickle.dumps(agent_factory)
            except Exception as e:  # noqa: BLE001
                raise TypeError(f"num_workers > 1 needs a picklable agent factory (module-level class/function or "
                                f"functools.partial of one): {e}") from None
            ctx = mp.get_context(mp_context)
            # ProcessPoolExecutor (not mp.Pool): a failing initializer breaks the pool instead of
            # respawning workers forever. map() yields results in input order.
            ex = ProcessPoolExecutor(max_workers=min(num_workers, len(jobs)), mp_context=ctx,
                                     initializer=_worker_init, initargs=(agent_factory, backend, size))
            try:
                for res in ex.map(_run_job, jobs):
                    results.append(res)
                    bar.update(1)
            except BrokenProcessPool as e:
                raise EpisodeError(f"evaluation worker died or failed to start (env/agent construction): {e}") from None
            finally:
                ex.shutdown(wait=True, cancel_futures=True)
    finally:
        bar.close()
    return results


def _check_limits(max_steps: int, max_fails: int, num_workers: int) -> None:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise EvalInputError(f"max_steps must be an integer >= 0, got {max_steps!r}")
    if isinstance(max_fails, bool) or not isinstance(max_fails, int) or max_fails < 1:
        raise EvalInputError(f"max_fails must be an integer >= 1, got {max_fails!r}")
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise EvalInputError(f"num_workers must be an integer >= 0, got {num_workers!r}")


def evaluate_tasks(agent_factory: Union[AgentFactory, Agent], entries: Iterable[Any], data_root: Union[str, Path],
                   *, split: Optional[str] = None, max_steps: int = MAX_STEPS, max_fails: int = MAX_FAILS,
                   num_workers: int = 1, backend: str = DEFAULT_BACKEND, frame_size: int = SCREEN_SIZE,
                   record_actions: Optional[bool] = None, env=None, progress: bool = False,
                   mp_context: str = "spawn") -> List[dict]:
    """Task evaluation of ``entries`` (EvalEntry / SplitEntry / {"task", "repeat_idx"[, "split"]}).

    ``agent_factory`` is a zero-argument callable returning an `Agent` (picklable when
    ``num_workers > 1``; see `agents.agent_factory`); an Agent instance is accepted for
    in-process runs. ``env`` reuses an existing AlfredEnv (in-process only). Returns one
    record per entry, in input order: scored `metrics.episode_record` dicts for train/valid,
    unscored dicts (``scored: False``) for test trajectories. ``record_actions`` (default:
    only for test entries) adds ``api_actions``.
    """
    _check_limits(max_steps, max_fails, num_workers)
    ents = _coerce_entries(entries, data_root, split)
    jobs = [("task", e, {"max_steps": max_steps, "max_fails": max_fails,
                         "record_actions": e.is_test if record_actions is None else bool(record_actions)})
            for e in ents]
    return _run_jobs(jobs, agent_factory, num_workers=num_workers, backend=backend, size=frame_size, env=env,
                     progress=progress, desc="tasks", mp_context=mp_context)


def evaluate_subgoals(agent_factory: Union[AgentFactory, Agent], entries: Iterable[Any], data_root: Union[str, Path],
                      subgoals: Union[str, Sequence[str]] = "all", *, split: Optional[str] = None,
                      max_steps: int = MAX_STEPS, max_fails: int = MAX_FAILS, num_workers: int = 1,
                      backend: str = DEFAULT_BACKEND, frame_size: int = SCREEN_SIZE, env=None, progress: bool = False,
                      mp_context: str = "spawn") -> List[dict]:
    """Subgoal evaluation (§5.3); one `metrics.subgoal_record` per (entry, requested subgoal index)."""
    _check_limits(max_steps, max_fails, num_workers)
    types = parse_subgoals(subgoals)
    ents = _coerce_entries(entries, data_root, split)
    tests = [e for e in ents if e.is_test]
    if tests:
        raise EvalInputError(f"subgoal evaluation needs expert plans; {tests[0].split} has none "
                             f"({tests[0].path})")
    jobs = [("subgoal", e, {"max_steps": max_steps, "max_fails": max_fails, "subgoals": types}) for e in ents]
    nested = _run_jobs(jobs, agent_factory, num_workers=num_workers, backend=backend, size=frame_size, env=env,
                       progress=progress, desc="subgoals", mp_context=mp_context)
    return [r for rs in nested for r in rs]


# ---------------------------------------------------------------------------
# result files
# ---------------------------------------------------------------------------
def task_results(records: Sequence[Mapping]) -> dict:
    """``{successes, failures, results}`` of scored records (ALFRED's task_results layout)."""
    scored = [dict(r) for r in records if r.get("scored", True)]
    for r in scored:
        r.pop("api_actions", None)
    return {"successes": [r for r in scored if r["success"]],
            "failures": [r for r in scored if not r["success"]],
            "results": aggregate_by_type(scored)}


def subgoal_results(records: Sequence[Mapping], split: Optional[str] = None) -> dict:
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
                raise ValueError(f"record {r.get('trial')} has no api_actions (evaluate with record_actions=True)")
            out[r["split"]].append({r["trial"]: list(r["api_actions"])})
    return out


def _timestamp() -> str:
    return datetime.now().strftime("%Y%m%d_%H%M%S_%f")


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------
def _agent_record(agent: Agent, args: argparse.Namespace) -> Dict[str, Any]:
    """What result files say about the agent: its name, checkpoint and visual encoder (if any)."""
    inner = getattr(agent, "inner", agent)
    return {"agent": args.agent, "checkpoint": args.checkpoint,
            "visual_encoder": getattr(inner, "visual_encoder", None)}


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineArgumentParser(prog="python -m alfred_task.eval",
                               description="Evaluate an agent on ALFRED (task SR/GC/PLW, subgoals, leaderboard dump).")
    ap.add_argument("--agent", required=True,
                    help=f"registered agent name ({', '.join(registered_agents())}, expert once registered)")
    ap.add_argument("--checkpoint", default=None, help="checkpoint file for --agent checkpoint")
    ap.add_argument("--agent-module", action="append", default=[], metavar="MOD",
                    help="import MOD first (a module that calls alfred_task.agents.register_agent); repeatable")
    ap.add_argument("--agent-kwargs", default=None, metavar="JSON", help="extra keyword arguments for the agent factory")
    ap.add_argument("--data", required=True, help="json root holding <split>/<task>/traj_data.json")
    ap.add_argument("--splits", required=True, help="oct21-style split file")
    ap.add_argument("--split", default="valid_seen", help="split name, or comma-separated names (default valid_seen)")
    ap.add_argument("--subgoals", default=None, help="subgoal evaluation: 'all' or e.g. GotoLocation,PickupObject")
    ap.add_argument("--max-steps", type=int, default=MAX_STEPS)
    ap.add_argument("--max-fails", type=int, default=MAX_FAILS)
    ap.add_argument("--num-workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="first K entries of each split")
    ap.add_argument("--out", default="out/alfred_eval", help="output folder (default out/alfred_eval)")
    ap.add_argument("--seed", type=int, default=0, help="seed (random agent)")
    ap.add_argument("--backend", default=DEFAULT_BACKEND, help=f"simulator backend ({' or '.join(BACKENDS)})")
    ap.add_argument("--frame-size", type=int, default=SCREEN_SIZE, help="frame/mask size (default 300)")
    ap.add_argument("--mp-context", choices=("spawn", "forkserver"), default="spawn")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    return ap


def _agent_kwargs(args: argparse.Namespace) -> Dict[str, Any]:
    kw: Dict[str, Any] = {}
    if args.agent_kwargs:
        try:
            kw = json.loads(args.agent_kwargs)
        except json.JSONDecodeError as e:
            raise EvalInputError(f"--agent-kwargs: invalid JSON: {e}") from None
        if not isinstance(kw, dict):
            raise EvalInputError(f"--agent-kwargs: expected a JSON object, got {args.agent_kwargs!r}")
    if args.agent == "random":
        kw.setdefault("seed", args.seed)
    if args.agent == "checkpoint":
        if not args.checkpoint and "path" not in kw:
            raise EvalInputError("--agent checkpoint needs --checkpoint PATH")
        if args.checkpoint:
            kw["path"] = args.checkpoint
    elif args.checkpoint:
        raise EvalInputError(f"--checkpoint is only used with --agent checkpoint (got --agent {args.agent})")
    return kw


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for mod in args.agent_module:
            try:
                importlib.import_module(mod)
            except ImportError as e:
                raise EvalInputError(f"--agent-module {mod}: cannot import ({e})") from None
        from .environment import AlfredEnv  # noqa: F401  (fail early on a broken install)
        if args.backend not in BACKENDS:
            raise EvalInputError(f"--backend: unknown backend {args.backend!r} (expected one of {', '.join(BACKENDS)})")
        check_int("--num-workers", args.num_workers, 1)  # the library's 0 (= in-process) is not a CLI value
        _check_limits(args.max_steps, args.max_fails, args.num_workers)
        check_int("--limit", args.limit, 1)
        check_int("--frame-size", args.frame_size, 1)
        check_output_dir("--out", args.out)
        subgoals = parse_subgoals(args.subgoals) if args.subgoals else None
        splits = [s.strip() for s in args.split.split(",") if s.strip()]
        if subgoals and len(splits) != 1:
            raise EvalInputError(f"--subgoals evaluates one split at a time, got --split {args.split}")
        if subgoals and splits[0] in TEST_SPLITS:
            raise EvalInputError(f"--subgoals needs expert plans; split {splits[0]} has none")
        factory = _agent_factory(args.agent, **_agent_kwargs(args))
        run = _agent_record(factory(), args)  # built once here: bad checkpoints etc. fail before any episode
        entries = resolve_entries(args.data, args.splits, splits, args.limit)
    except UnknownAgentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (UsageError, EvalInputError, TrajDataError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    out_dir = Path(args.out)
    ts = _timestamp()
    common = dict(max_steps=args.max_steps, max_fails=args.max_fails, num_workers=args.num_workers,
                  backend=args.backend, frame_size=args.frame_size, progress=not args.quiet,
                  mp_context=args.mp_context)
    try:
        if subgoals:
            recs = evaluate_subgoals(factory, entries, args.data, subgoals, **common)
            res = {**subgoal_results(recs, splits[0]), "agent": run}
            path = write_json_atomic(out_dir / f"subgoal_results_{ts}.json", res, sort_keys=False)
            print(format_subgoal_table(res["results"], f"subgoal evaluation: {splits[0]} ({len(recs)} evaluations)"))
            print(f"wrote {path}")
            return 0
        recs = evaluate_tasks(factory, entries, args.data, **common)
    except (EvalInputError, EpisodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    written = []
    tables = []
    for split in splits:
        rs = [r for r in recs if r["split"] == split]
        if split in TEST_SPLITS:
            tables.append(f"{split}: {len(rs)} episodes run (test split: not scored, actions recorded)")
            continue
        res = {**task_results(rs), "agent": run}
        written.append(write_json_atomic(out_dir / f"task_results_{split}_{ts}.json", res, sort_keys=False))
        tables.append(format_task_table(res["results"], f"task evaluation: {split} ({len(rs)} episodes)"))
    if any(s in TEST_SPLITS for s in splits):
        written.append(write_json_atomic(out_dir / f"tests_actseqs_dump_{ts}.json", leaderboard_dump(recs),
                                         sort_keys=False))
    print("\n\n".join(tables))
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    # SIGTERM/SIGINT stop the worker pool (forkserver/spawn processes) too, exit 128 + signum.
    with stop_children_on_signals("python -m alfred_task.eval"):
        sys.exit(main())
