"""Action registry: THOR action names, their parameters and defaults, and failure types.

Each action is a function `fn(sim, **kwargs) -> actionReturn`. It raises `ActionFailed` for
ordinary failures (reported as lastActionSuccess=False, like THOR) and `InvalidArguments`
for calls THOR's dispatcher rejects (which ai2thor turns into a Python ValueError).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

REQUIRED = object()


class ActionFailed(Exception):
    """An action ran but could not be carried out (THOR: lastActionSuccess=False)."""

    def __init__(self, message: str, code: "str | None" = None) -> None:
        super().__init__(message)
        self.code = code


class PartialFailure(ActionFailed):
    """Some of a batch action's entries failed; the valid ones stay applied (THOR semantics)."""


class InvalidArguments(ValueError):
    """THOR's InvalidAction / MissingArguments / InvalidArgument error codes."""

    def __init__(self, message: str, code: str = "InvalidArgument") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ActionSpec:
    name: str
    fn: Callable[..., Any]
    params: Dict[str, Any]
    lenient: bool  # THOR's ServerAction-style actions ignore unknown kwargs


ACTIONS: Dict[str, ActionSpec] = {}


def action(*names: str, lenient: bool = False, **params: Any) -> Callable:
    def deco(fn: Callable) -> Callable:
        for n in names:
            ACTIONS[n] = ActionSpec(n, fn, dict(params), lenient)
        return fn

    return deco


def bind(spec: ActionSpec, kwargs: Dict[str, Any], tolerated: frozenset) -> Dict[str, Any]:
    """Apply defaults and THOR's argument checks; returns the kwargs for `spec.fn`."""
    unknown = [k for k in kwargs if k not in spec.params and k not in tolerated]
    if unknown and not spec.lenient:
        expected = ", ".join(
            f"{k}" if v is REQUIRED else f"{k} = {v!r}" for k, v in spec.params.items()
        )
        raise InvalidArguments(
            f'\n\tAction: "{spec.name}" called with invalid argument(s): '
            + ", ".join(f"'{k}'" for k in unknown)
            + f"\n\tExpected arguments: {expected}\n\tYour arguments: "
            + ", ".join(f"'{k}'" for k in kwargs),
            "InvalidArgument",
        )
    out = {}
    missing = []
    for k, default in spec.params.items():
        if k in kwargs:
            out[k] = kwargs[k]
        elif default is REQUIRED:
            missing.append(k)
        else:
            out[k] = default
    if missing:
        raise InvalidArguments(
            f"action: {spec.name} is missing the following arguments: {','.join(missing)}",
            "MissingArguments",
        )
    return out


def vec(v: Any, name: str) -> Tuple[float, float, float]:
    """Accept {x,y,z} dicts or 3-sequences, as THOR's Vector3 binding does."""
    try:
        if isinstance(v, dict):
            return (float(v.get("x", 0.0)), float(v.get("y", 0.0)), float(v.get("z", 0.0)))
        x, y, z = v
        return (float(x), float(y), float(z))
    except (TypeError, ValueError):
        raise InvalidArguments(f"action has an invalid argument: {name} (=={v!r}). Cannot convert to: Vector3")
