"""Running evaluation episodes in-process or in a worker pool, results in input order.

``num_workers > 1`` uses a 'spawn' (or 'forkserver') pool; each worker builds its own `AlfredEnv`
and agent and runs one torch thread; results come back in input order whatever the number of
workers (and `RandomAgent` seeds per episode, so its records do not depend on it either). Subgoal
jobs evaluate every requested subgoal of one (trajectory, annotation) together
(`episodes.run_subgoal_episodes`).
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from backends import DEFAULT_BACKEND

from alfred_task.evaluation.agents import Agent
from alfred_task.constants import MAX_FAILS, MAX_STEPS, SCREEN_SIZE
from alfred_task.evaluation.episodes import run_subgoal_episodes, run_task_episode, subgoal_indices
from alfred_task.evaluation.inputs import EvalInputError, coerce_entries, load_traj, parse_subgoals

__all__ = [
    "AgentFactory",
    "EpisodeError",
    "set_torch_threads",
    "check_limits",
    "evaluate_tasks",
    "evaluate_subgoals",
]

AgentFactory = Callable[[], Agent]


class EpisodeError(RuntimeError):
    """An episode crashed (agent or environment); the message names the episode."""


_WORKER: Dict[str, Any] = {}


def make_env(backend: str, size: int):
    from alfred_task.env.environment import AlfredEnv

    return AlfredEnv(backend=backend, width=size, height=size)


def set_torch_threads(n: int = 1) -> None:
    """Intra-op threads for torch agents. Pool workers run one each: N workers on N cores would
    otherwise start N×N threads (torch's default is one per core) that fight each other and the
    simulator; the CLI uses one in-process too (``--torch-threads``): on a shared 2-core machine
    two OpenMP threads made one ResNet-18 call 3.5–5× slower than one thread (benchmarks/alfred_eval_speed.py).
    Call it after the agent is built (torch is only touched when something already imported it)."""
    torch = sys.modules.get("torch")
    if torch is None:  # agents without torch: importing it would only cost seconds of start-up
        return
    torch.set_num_threads(int(n))


def _worker_init(factory: AgentFactory, backend: str, size: int) -> None:
    try:
        _WORKER["env"] = make_env(backend, size)
        _WORKER["agent"] = factory()
        set_torch_threads(1)
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
        traj = load_traj(entry.path)
        if kind == "task":
            return run_task_episode(env, agent, traj, entry.repeat_idx, **opts, **extra)
        sg_opts = {k: v for k, v in opts.items() if k in ("max_steps", "max_fails")}
        return run_subgoal_episodes(
            env,
            agent,
            traj,
            entry.repeat_idx,
            subgoal_indices(traj, opts["subgoals"]),
            **sg_opts,
            **extra,
        )
    except Exception as e:  # noqa: BLE001 - re-raised with the episode named (picklable)
        raise EpisodeError(
            f"{entry.split}/{entry.task} repeat_idx={entry.repeat_idx}: {type(e).__name__}: {e}"
        ) from None


def _as_factory(agent_factory: Union[AgentFactory, Agent]) -> AgentFactory:
    if isinstance(agent_factory, Agent):
        inst = agent_factory
        return lambda: inst
    if not callable(agent_factory):
        raise TypeError(
            f"agent_factory must be a zero-argument callable returning an Agent, got {agent_factory!r}"
        )
    return agent_factory


def _run_jobs(
    jobs: List[tuple],
    agent_factory: Union[AgentFactory, Agent],
    *,
    num_workers: int,
    backend: str,
    size: int,
    env,
    progress: bool,
    desc: str,
    mp_context: str,
) -> list:
    from tqdm import tqdm

    results: list = []
    if not jobs:
        return results
    bar = tqdm(total=len(jobs), desc=desc, unit="ep", disable=not progress, file=sys.stderr)
    try:
        if num_workers <= 1 or len(jobs) <= 1:
            factory = _as_factory(agent_factory)
            own_env = env is None
            env = make_env(backend, size) if own_env else env
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
                raise TypeError(
                    "num_workers > 1 needs a picklable zero-argument agent factory, not an Agent instance"
                )
            try:
                pickle.dumps(agent_factory)
            except Exception as e:  # noqa: BLE001
                raise TypeError(
                    f"num_workers > 1 needs a picklable agent factory (module-level class/function or "
                    f"functools.partial of one): {e}"
                ) from None
            ctx = mp.get_context(mp_context)
            # ProcessPoolExecutor (not mp.Pool): a failing initializer breaks the pool instead of
            # respawning workers forever. map() yields results in input order.
            ex = ProcessPoolExecutor(
                max_workers=min(num_workers, len(jobs)),
                mp_context=ctx,
                initializer=_worker_init,
                initargs=(agent_factory, backend, size),
            )
            try:
                for res in ex.map(_run_job, jobs):
                    results.append(res)
                    bar.update(1)
            except BrokenProcessPool as e:
                raise EpisodeError(
                    f"evaluation worker died or failed to start (env/agent construction): {e}"
                ) from None
            finally:
                ex.shutdown(wait=True, cancel_futures=True)
    finally:
        bar.close()
    return results


def check_limits(max_steps: int, max_fails: int, num_workers: int) -> None:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise EvalInputError(f"max_steps must be an integer >= 0, got {max_steps!r}")
    if isinstance(max_fails, bool) or not isinstance(max_fails, int) or max_fails < 1:
        raise EvalInputError(f"max_fails must be an integer >= 1, got {max_fails!r}")
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise EvalInputError(f"num_workers must be an integer >= 0, got {num_workers!r}")


def evaluate_tasks(
    agent_factory: Union[AgentFactory, Agent],
    entries: Iterable[Any],
    data_root: Union[str, Path],
    *,
    split: Optional[str] = None,
    max_steps: int = MAX_STEPS,
    max_fails: int = MAX_FAILS,
    num_workers: int = 1,
    backend: str = DEFAULT_BACKEND,
    frame_size: int = SCREEN_SIZE,
    record_actions: Optional[bool] = None,
    env=None,
    progress: bool = False,
    mp_context: str = "spawn",
) -> List[dict]:
    """Task evaluation of ``entries`` (EvalEntry / SplitEntry / {"task", "repeat_idx"[, "split"]}).

    ``agent_factory`` is a zero-argument callable returning an `Agent` (picklable when
    ``num_workers > 1``; see `agents.agent_factory`); an Agent instance is accepted for
    in-process runs. ``env`` reuses an existing AlfredEnv (in-process only). Returns one
    record per entry, in input order: scored `metrics.episode_record` dicts for train/valid,
    unscored dicts (``scored: False``) for test trajectories. ``record_actions`` (default:
    only for test entries) adds ``api_actions``.
    """
    check_limits(max_steps, max_fails, num_workers)
    ents = coerce_entries(entries, data_root, split)
    jobs = [
        (
            "task",
            e,
            {
                "max_steps": max_steps,
                "max_fails": max_fails,
                "record_actions": e.is_test if record_actions is None else bool(record_actions),
            },
        )
        for e in ents
    ]
    return _run_jobs(
        jobs,
        agent_factory,
        num_workers=num_workers,
        backend=backend,
        size=frame_size,
        env=env,
        progress=progress,
        desc="tasks",
        mp_context=mp_context,
    )


def evaluate_subgoals(
    agent_factory: Union[AgentFactory, Agent],
    entries: Iterable[Any],
    data_root: Union[str, Path],
    subgoals: Union[str, Sequence[str]] = "all",
    *,
    split: Optional[str] = None,
    max_steps: int = MAX_STEPS,
    max_fails: int = MAX_FAILS,
    num_workers: int = 1,
    backend: str = DEFAULT_BACKEND,
    frame_size: int = SCREEN_SIZE,
    env=None,
    progress: bool = False,
    mp_context: str = "spawn",
) -> List[dict]:
    """Subgoal evaluation (§5.3); one `metrics.subgoal_record` per (entry, requested subgoal index)."""
    check_limits(max_steps, max_fails, num_workers)
    types = parse_subgoals(subgoals)
    ents = coerce_entries(entries, data_root, split)
    tests = [e for e in ents if e.is_test]
    if tests:
        raise EvalInputError(
            f"subgoal evaluation needs expert plans; {tests[0].split} has none ({tests[0].path})"
        )
    jobs = [
        ("subgoal", e, {"max_steps": max_steps, "max_fails": max_fails, "subgoals": types})
        for e in ents
    ]
    nested = _run_jobs(
        jobs,
        agent_factory,
        num_workers=num_workers,
        backend=backend,
        size=frame_size,
        env=env,
        progress=progress,
        desc="subgoals",
        mp_context=mp_context,
    )
    return [r for rs in nested for r in rs]
