"""Agents for ALFRED evaluation and their registry.

Protocol (`Agent`)::

    agent.reset(traj: dict, repeat_idx: int, env) -> None     # once per episode, after env.init_episode
    agent.act(env) -> (action, mask)                          # action: an ALFRED low action name
                                                              #   ("MoveAhead_25", "PickupObject", ...)
                                                              #   or "<<stop>>"; mask: 300x300 bool
                                                              #   array for interactions, else None
    agent.teacher_force(env, action, mask, success) -> None   # optional; subgoal evaluation calls it
                                                              #   for every replayed expert step
    agent.episode_error() -> str | None                       # optional; why the agent gave up (its
                                                              #   own error), recorded as `failure`
    agent.snapshot() -> state; agent.restore(state)           # optional (``supports_snapshot = True``):
                                                              #   subgoal evaluation teacher-forces the
                                                              #   expert prefix once per annotation

`traj` is the raw ``traj_data.json`` dict (test trajectories have no plan). The agent may
read ``env.last_event`` (frame, masks, metadata); the harness only reads its answer.

Registry: ``register_agent(name, factory)`` where ``factory(**kwargs) -> Agent`` is a callable
or a lazy ``"package.module:attr"`` string; ``make_agent(name, **kw)`` builds one and
``agent_factory(name, **kw)`` returns a picklable zero-argument factory (what the
multi-process evaluator sends to its workers). Built in: ``random``, ``replay``,
``checkpoint`` and ``expert`` (the online expert of :mod:`alfred_task.planning.expert`, loaded lazily).
"""

from __future__ import annotations

import copy
import functools
import importlib
import zlib
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from alfred_task.agent_api import ActionMask, Agent
from alfred_task.constants import INTERACT_ACTION_SET, LOW_ACTIONS, MASK_SHAPE, STOP
from alfred_task.data.masks import decompress_mask

__all__ = [
    "Agent",
    "RandomAgent",
    "ReplayAgent",
    "CheckpointAgent",
    "CheckpointError",
    "UnknownAgentError",
    "expert_steps",
    "register_agent",
    "unregister_agent",
    "registered_agents",
    "make_agent",
    "agent_factory",
]


# ---------------------------------------------------------------------------
# built-in agents
# ---------------------------------------------------------------------------
def _episode_key(traj: Mapping, repeat_idx: int) -> int:
    return zlib.crc32(f"{traj.get('task_id', '')}/{int(repeat_idx)}".encode())


class RandomAgent(Agent):
    """Uniform over the 12 low actions; interactions target a random visible instance mask.

    Its numpy Generator is re-derived at every ``reset`` from ``(seed, task_id, repeat_idx)``,
    so an episode's actions do not depend on which worker ran it or on episode order. The
    global RNG is never touched. ``stop_prob`` (default 0) adds a chance of "<<stop>>".
    """

    def __init__(self, seed: int = 0, stop_prob: float = 0.0) -> None:
        if not 0.0 <= float(stop_prob) <= 1.0:
            raise ValueError(f"stop_prob must be in [0, 1], got {stop_prob}")
        if isinstance(seed, bool) or int(seed) != seed or int(seed) < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self.stop_prob = float(stop_prob)
        self.rng = np.random.default_rng(self.seed)

    supports_snapshot = True

    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        self.rng = np.random.default_rng([self.seed, _episode_key(traj, repeat_idx)])

    def snapshot(self) -> Any:
        return copy.deepcopy(self.rng.bit_generator.state)

    def restore(self, state: Any) -> None:
        self.rng.bit_generator.state = copy.deepcopy(state)

    def act(self, env) -> ActionMask:
        if self.stop_prob and self.rng.random() < self.stop_prob:
            return STOP, None
        action = LOW_ACTIONS[int(self.rng.integers(len(LOW_ACTIONS)))]
        if action not in INTERACT_ACTION_SET:
            return action, None
        masks = env.last_event.instance_masks
        keys = sorted(masks.keys())
        if not keys:
            ev = env.last_event
            shape = ev.frame.shape[:2] if getattr(ev, "frame", None) is not None else MASK_SHAPE
            return action, np.zeros(shape, dtype=bool)
        oid = keys[int(self.rng.integers(len(keys)))]
        return action, np.asarray(masks[oid], dtype=bool).copy()


def expert_steps(traj: Mapping) -> List[Tuple[str, Optional[np.ndarray], int]]:
    """(discrete action, decoded mask or None, high_idx) for every recorded low action."""
    plan = traj.get("plan")
    if not plan or "low_actions" not in plan:
        raise ValueError(
            f"trajectory {traj.get('task_id', '?')!r} has no plan.low_actions "
            "(test split trajectories cannot be replayed)"
        )
    out = []
    for i, la in enumerate(plan["low_actions"]):
        da = la["discrete_action"]
        name = da["action"]
        mask = None
        if name in INTERACT_ACTION_SET:
            rle = (da.get("args") or {}).get("mask")
            if rle is None:
                raise ValueError(
                    f"trajectory {traj.get('task_id', '?')!r}: plan.low_actions[{i}]"
                    ".discrete_action.args.mask is missing"
                )
            mask = decompress_mask(rle)
        out.append((name, mask, int(la["high_idx"])))
    return out


class ReplayAgent(Agent):
    """Replays ``plan.low_actions`` (discrete actions + decoded masks), then "<<stop>>".

    Teacher-forced steps (subgoal-evaluation prefix) advance the replay pointer.
    """

    def __init__(self) -> None:
        self._steps: List[Tuple[str, Optional[np.ndarray], int]] = []
        self._i = 0

    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        self._steps = expert_steps(traj)
        self._i = 0

    def act(self, env) -> ActionMask:
        if self._i >= len(self._steps):
            return STOP, None
        name, mask, _ = self._steps[self._i]
        self._i += 1
        return name, mask

    def teacher_force(self, env, action: str, mask: Optional[np.ndarray], success: bool) -> None:
        self._i += 1

    supports_snapshot = True

    def snapshot(self) -> Any:
        return self._i

    def restore(self, state: Any) -> None:
        self._i = int(state)


# ---------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------
class CheckpointError(ValueError):
    """A checkpoint file is unusable; the message names the file and the field."""

    def __init__(self, path: Union[str, Path], field: str, problem: str) -> None:
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"{path}: {field}: {problem}")


def _import_ref(ref: str, what: str) -> Any:
    """Import ``"package.module:Attr"`` (``"package.module.Attr"`` also accepted)."""
    if not isinstance(ref, str) or not ref.strip():
        raise ValueError(f"{what}: expected 'package.module:ClassName', got {ref!r}")
    if ":" in ref:
        mod, _, attr = ref.partition(":")
    else:
        mod, _, attr = ref.rpartition(".")
    if not mod or not attr:
        raise ValueError(f"{what}: expected 'package.module:ClassName', got {ref!r}")
    try:
        module = importlib.import_module(mod)
    except ImportError as e:
        raise ValueError(f"{what}: cannot import module {mod!r} ({e})") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{what}: module {mod!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _with_run_record(ckpt: dict) -> dict:
    """An AllenAct checkpoint of a policy that records its evaluation fields in its state_dict
    (`alfred_task.models.trained`) gets `CheckpointAgent`'s fields from there."""
    if "agent" in ckpt or not isinstance(ckpt.get("model_state_dict"), dict):
        return ckpt
    from alfred_task.models.trained import agent_fields

    fields = agent_fields(ckpt["model_state_dict"])
    return ckpt if fields is None else {**ckpt, **fields}


class CheckpointAgent(Agent):
    """An agent restored from ``torch.save({"agent": "pkg.mod:Class", "kwargs": {...},
    "state_dict": {...}}, path)``.

    ``Class`` must subclass `Agent` and have ``load_state_dict``; it is built as
    ``Class(**kwargs)`` and then ``load_state_dict(state_dict)`` is called. The file is read
    with ``torch.load(weights_only=True)`` (tensors, containers and plain values only).
    Every problem raises `CheckpointError` naming the file and the field. `overrides` replace
    entries of the stored kwargs (inference options such as the Seq2Seq agent's ``mask_rule``;
    ``--agent-kwargs`` on the CLI).
    """

    def __init__(self, path: Union[str, Path], map_location: str = "cpu", **overrides: Any) -> None:
        self.path = Path(path)
        self.inner = self._load(self.path, map_location, overrides)

    @staticmethod
    def _load(
        path: Path, map_location: str, overrides: Optional[Mapping[str, Any]] = None
    ) -> Agent:
        import torch

        if not path.is_file():
            raise CheckpointError(path, "<file>", "checkpoint file not found")
        try:
            ckpt = torch.load(path, map_location=map_location, weights_only=True)
        except Exception as e:  # noqa: BLE001 - any unreadable file gets the same clear error
            raise CheckpointError(
                path,
                "<file>",
                f"cannot be read by torch.load(weights_only=True): "
                f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            ) from None
        if not isinstance(ckpt, dict):
            raise CheckpointError(
                path,
                "<root>",
                f"expected a dict with keys 'agent', 'kwargs', 'state_dict', "
                f"got {type(ckpt).__name__}",
            )
        ckpt = _with_run_record(ckpt)
        for key in ("agent", "state_dict"):
            if key not in ckpt:
                raise CheckpointError(path, key, "required field is missing")
        ref, kwargs, state = ckpt["agent"], ckpt.get("kwargs", {}), ckpt["state_dict"]
        if kwargs is None:
            kwargs = {}
        if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            raise CheckpointError(
                path, "kwargs", f"expected a dict of keyword arguments, got {type(kwargs).__name__}"
            )
        if not isinstance(state, dict):
            raise CheckpointError(
                path, "state_dict", f"expected a dict, got {type(state).__name__}"
            )
        try:
            cls = _import_ref(ref, "agent")
        except ValueError as e:
            raise CheckpointError(path, "agent", str(e).removeprefix("agent: ")) from None
        if not (isinstance(cls, type) and issubclass(cls, Agent)):
            raise CheckpointError(
                path, "agent", f"{ref!r} is not a subclass of alfred_task.evaluation.agents.Agent"
            )
        if not callable(getattr(cls, "load_state_dict", None)):
            raise CheckpointError(path, "agent", f"{ref!r} has no load_state_dict method")
        kwargs = {**kwargs, **(overrides or {})}
        try:
            inner = cls(**kwargs)
        except (TypeError, ValueError) as e:
            raise CheckpointError(path, "kwargs", f"{ref}(**kwargs) failed: {e}") from None
        try:
            inner.load_state_dict(state)
        except Exception as e:  # noqa: BLE001
            raise CheckpointError(
                path, "state_dict", f"{ref}.load_state_dict failed: {type(e).__name__}: {e}"
            ) from None
        return inner

    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        self.inner.reset(traj, repeat_idx, env)

    def act(self, env) -> ActionMask:
        return self.inner.act(env)

    def teacher_force(self, env, action: str, mask: Optional[np.ndarray], success: bool) -> None:
        self.inner.teacher_force(env, action, mask, success)

    @property
    def supports_snapshot(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "supports_snapshot", False))

    def snapshot(self) -> Any:
        return self.inner.snapshot()

    def restore(self, state: Any) -> None:
        self.inner.restore(state)


# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------
Factory = Union[Callable[..., Agent], str]


class UnknownAgentError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0]) if self.args else ""


_REGISTRY: Dict[str, Factory] = {
    "random": RandomAgent,
    "replay": ReplayAgent,
    "checkpoint": CheckpointAgent,
    "expert": "alfred_task.planning.expert:ExpertAgent",  # lazy: the expert imports this module
}


def register_agent(name: str, factory: Factory, *, overwrite: bool = False) -> None:
    """Register ``factory(**kwargs) -> Agent`` (or a lazy ``"pkg.mod:attr"``) under ``name``.

    For multi-process evaluation the factory must be importable by reference (a module-level
    class/function, or the string form).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"agent name must be a non-empty string, got {name!r}")
    if not (callable(factory) or isinstance(factory, str)):
        raise TypeError(f"factory for {name!r} must be callable or a 'pkg.mod:attr' string")
    if name in _REGISTRY and not overwrite and _REGISTRY[name] is not factory:
        raise ValueError(
            f"agent {name!r} is already registered (pass overwrite=True to replace it)"
        )
    _REGISTRY[name] = factory


def unregister_agent(name: str) -> None:
    _REGISTRY.pop(name, None)


def registered_agents() -> List[str]:
    return sorted(_REGISTRY)


def _resolve_factory(name: str) -> Callable[..., Agent]:
    if name not in _REGISTRY:
        hint = ""
        if name == "expert":
            hint = (
                " The online expert lives in another module: it must call "
                "alfred_task.evaluation.agents.register_agent('expert', factory) when imported "
                "(CLI: pass --agent-module <that.module>)."
            )
        raise UnknownAgentError(
            f"agent {name!r} is not registered (registered: {', '.join(registered_agents())})."
            + hint
        )
    f = _REGISTRY[name]
    if isinstance(f, str):
        f = _import_ref(f, f"factory of agent {name!r}")
    return f


def _build(name: str, factory: Callable[..., Agent], kwargs: Mapping[str, Any]) -> Agent:
    agent = factory(**kwargs)
    if not isinstance(agent, Agent):
        raise TypeError(f"factory of agent {name!r} returned {type(agent).__name__}, not an Agent")
    return agent


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a registered agent: ``make_agent("random", seed=3)``, ``make_agent("checkpoint", path=...)``."""
    return _build(name, _resolve_factory(name), kwargs)


def _make_lazy(name: str, ref: str, kwargs: Mapping[str, Any]) -> Agent:
    return _build(name, _import_ref(ref, f"factory of agent {name!r}"), kwargs)


def agent_factory(name: str, **kwargs: Any) -> Callable[[], Agent]:
    """Zero-argument, picklable factory for ``make_agent(name, **kwargs)``.

    The factory object itself (not the registry name) is captured, so worker processes do
    not need the registration to have happened in them.
    """
    f = _REGISTRY.get(name)
    if isinstance(f, str):
        return functools.partial(_make_lazy, name, f, dict(kwargs))
    return functools.partial(_build, name, _resolve_factory(name), dict(kwargs))
