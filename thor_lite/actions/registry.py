"""Action registry: THOR action names, their parameters and defaults, and failure types.

Each action is a function `fn(sim, **kwargs) -> actionReturn`. It raises `ActionFailed` for
ordinary failures (reported as lastActionSuccess=False, like THOR) and `InvalidArguments`
for calls THOR's dispatcher rejects (which ai2thor turns into a Python ValueError).
"""

from __future__ import annotations

import abc
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

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
    kinds: Dict[str, "Kind"] = field(default_factory=dict)  # what each parameter accepts
    # False for actions that put objects exactly where the caller says (SetObjectPoses): THOR
    # checks no bounds there, and official data holds objects that fell out of the world.
    bounded: bool = True


ACTIONS: Dict[str, ActionSpec] = {}


def action(
    *names: str,
    lenient: bool = False,
    kinds: Optional[Dict[str, "Kind"]] = None,
    bounded: bool = True,
    **params: Any,
) -> Callable:
    """Register `fn` under THOR action `names`; `kinds` overrides `DEFAULT_KINDS` by name."""

    def deco(fn: Callable) -> Callable:
        for n in names:
            ACTIONS[n] = ActionSpec(
                n, fn, dict(params), lenient, resolve_kinds(n, params, kinds or {}), bounded
            )
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
    """Accept {x,y,z} dicts or 3-sequences, as THOR's Vector3 binding does.

    Top-level arguments are checked by `check_args` first; nested values (dataset pose
    entries) can still be bad here, and fail the action rather than raising.
    """
    p = VEC.problem(v)
    if p is not None:
        raise InvalidArgumentValue(
            f"action has an invalid argument: {name} (=={_safe_repr(v)}). {p}"
        )
    if isinstance(v, dict):
        return (float(v["x"]), float(v["y"]), float(v["z"]))
    x, y, z = v
    return (float(x), float(y), float(z))


# --- argument kinds -------------------------------------------------------------------
# THOR binds JSON to typed C# parameters, so a string where a float is expected, a NaN
# that Unity would happily propagate, or a bool standing in for a number never reaches a
# real action. thor_lite has no type system at the boundary, so every parameter of every
# action declares a kind, and `check_args` rejects bad values before the action runs.
# A rejected value is an ordinary failed action (errorMessage one line, world unchanged);
# unknown/missing arguments still raise ValueError in `bind`, as THOR's dispatcher does.


def _safe_repr(v: Any, limit: int = 60) -> str:
    """repr() that never raises and never spans lines (hostile objects, nested junk)."""
    try:
        r = repr(v)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not break the error path
        r = f"<{type(v).__name__}>"
    r = " ".join(r.split())
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _is_number(v: Any) -> bool:
    t = type(v)
    if t is float or t is int:
        return True
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(v)
    except (OverflowError, TypeError, ValueError):  # ints beyond float range
        return False


class Verbatim(str):
    """A kind's complaint that is THOR's own full message (e.g. "openness must be in [0:1]")."""


class Kind(abc.ABC):
    """One parameter's accepted values; `problem` returns why a value is bad, or None."""

    what = "value"  # the THOR type name used in "Cannot convert to: <what>"

    @abc.abstractmethod
    def problem(self, v: Any) -> Optional[str]:
        """Why `v` is not acceptable, or None when it is."""


class Num(Kind):
    """A finite real number (int or float, never bool), optionally bounded or integral."""

    def __init__(
        self,
        lo: Optional[float] = None,
        hi: Optional[float] = None,
        *,
        integer: bool = False,
        msg: Optional[str] = None,
    ) -> None:
        self.lo, self.hi, self.integer, self.msg = lo, hi, integer, msg
        self.what = "Int32" if integer else "Single"

    def problem(self, v: Any) -> Optional[str]:
        if not _is_number(v):
            return f"Cannot convert to: {self.what}"
        if not _finite(v):
            return "It must be a finite number."
        if self.integer and v != int(v):
            return f"Cannot convert to: {self.what}"
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            return Verbatim(self.msg) if self.msg else f"It must be in [{self.lo}:{self.hi}]."
        return None


class Flag(Kind):
    what = "Boolean"

    def problem(self, v: Any) -> Optional[str]:
        if isinstance(v, (bool, np.bool_)) or (type(v) is int and v in (0, 1)):
            return None
        return "Cannot convert to: Boolean"


class Text(Kind):
    what = "String"

    def problem(self, v: Any) -> Optional[str]:
        return None if isinstance(v, str) else "Cannot convert to: String"


class Vec3(Kind):
    """{x, y, z} dict (all three numbers) or a 3-sequence; rotations may be a scalar yaw."""

    what = "Vector3"

    def __init__(self, scalar_ok: bool = False) -> None:
        self.scalar_ok = scalar_ok

    def problem(self, v: Any) -> Optional[str]:
        if self.scalar_ok and _is_number(v):
            return None if _finite(v) else "It must be a finite number."
        if isinstance(v, dict):
            comps = [v.get(k) for k in ("x", "y", "z")]
        elif isinstance(v, (list, tuple, np.ndarray)) and len(v) == 3:
            comps = list(v)
        else:
            return "Cannot convert to: Vector3"
        if not all(_is_number(c) for c in comps):
            return "Cannot convert to: Vector3 (x, y and z must be numbers)"
        if not all(_finite(c) for c in comps):
            return "Vector3 components must be finite numbers."
        return None


class ListOf(Kind):
    """A list/tuple whose items all have `item`'s kind (empty lists allowed)."""

    def __init__(self, item: Kind, max_len: Optional[int] = None) -> None:
        self.item, self.max_len = item, max_len
        self.what = f"List<{item.what}>"

    def problem(self, v: Any) -> Optional[str]:
        if not isinstance(v, (list, tuple, np.ndarray)) or getattr(v, "ndim", 1) == 0:
            return f"Cannot convert to: {self.what}"
        if self.max_len is not None and len(v) > self.max_len:
            return f"At most {self.max_len} entries are supported."
        for i, x in enumerate(v):
            p = self.item.problem(x)
            if p is not None:
                return f"entry [{i}] (=={_safe_repr(x, 40)}): {p}"
        return None


class Record(Kind):
    """A dict with typed fields: `required` must be present, `nullable` ones may be None."""

    def __init__(
        self,
        what: str,
        fields: Dict[str, Kind],
        required: Tuple[str, ...] = (),
        one_of: Tuple[str, ...] = (),
        nullable: Tuple[str, ...] = (),
    ) -> None:
        self.what, self.fields, self.required = what, fields, required
        self.one_of, self.nullable = one_of, nullable

    def problem(self, v: Any) -> Optional[str]:
        if not isinstance(v, dict):
            return f"Cannot convert to: {self.what}"
        for k in self.required:
            if k not in v:
                return f"{self.what} is missing '{k}'"
        if self.one_of and not any(k in v for k in self.one_of):
            return f"{self.what} needs one of: {', '.join(self.one_of)}"
        for k, kind in self.fields.items():
            if k not in v or (v[k] is None and k in self.nullable):
                continue
            p = kind.problem(v[k])
            if p is not None:
                return f"{k} (=={_safe_repr(v[k], 40)}): {p}"
        return None


class Opaque(Kind):
    """Anything: the action inspects the value itself (kept rare; see `DEFAULT_KINDS`)."""

    def problem(self, v: Any) -> Optional[str]:
        return None


REAL = Num()
INT = Num(integer=True)
FLAG = Flag()
TEXT = Text()
VEC = Vec3()
ROT = Vec3(scalar_ok=True)
SCREEN = Num(0.0, 1.0, msg="screen coordinates must be in [0:1]")

# Kinds by parameter name; actions override where one name means something else.
DEFAULT_KINDS: Dict[str, Kind] = {
    **{
        k: FLAG
        for k in (
            "forceAction",
            "manualInteract",
            "standing",
            "placeStationary",
            "putNearXY",
            "autoSimulation",
            "forceKinematic",
            "allowTeleportOutOfHand",
            "makeUnbreakable",
            "skipMoveable",
            "directionsRelativeAgent",
            "forceVisible",
            "allowFloor",
            "allowMoveable",
            "allowAutoSimulation",
            "thor2Poses",
        )
    },
    **{
        k: TEXT
        for k in ("objectId", "receptacleObjectId", "objectType", "fillLiquid", "StateChange")
    },
    **{
        k: ListOf(TEXT)
        for k in (
            "objectIds",
            "objectTypes",
            "excludedReceptacles",
            "excludedObjectIds",
            "receptacleObjectIds",
        )
    },
    "moveMagnitude": REAL,
    "degrees": REAL,
    "horizon": REAL,
    "maxDistance": REAL,
    "timeStep": REAL,
    "simSeconds": REAL,
    "gridSize": Num(0.0),
    "openness": Num(0.0, 1.0, msg="openness must be in [0:1]"),
    "x": REAL,
    "y": REAL,
    "z": REAL,
    "position": VEC,
    "rotation": ROT,
    "positions": ListOf(VEC),
    "rotations": ListOf(REAL),
    "horizons": ListOf(REAL),
    "standings": ListOf(FLAG),
    "randomSeed": INT,
    "seed": INT,
    "maxStepCount": INT,
    "maxPoses": INT,
    "numPlacementAttempts": INT,
}


def resolve_kinds(name: str, params: Dict[str, Any], overrides: Dict[str, Kind]) -> Dict[str, Kind]:
    """Every parameter gets a kind at registration, so no action can skip validation."""
    out = {}
    for p in params:
        kind = overrides.get(p) or DEFAULT_KINDS.get(p)
        if kind is None:
            raise TypeError(f"action {name}: parameter '{p}' has no declared kind")
        out[p] = kind
    return out


class InvalidArgumentValue(ActionFailed):
    """A value of the right name but the wrong type, non-finite, or out of range."""


def check_args(spec: ActionSpec, args: Dict[str, Any]) -> None:
    """Reject bad argument values with a one-line THOR-style message; defaults are trusted."""
    params, kinds = spec.params, spec.kinds
    for k, v in args.items():
        d = params.get(k, REQUIRED)
        if v is d or (v is None and d is None):
            continue
        kind = kinds.get(k)
        if kind is None:  # a tolerated extra key (physics kwargs); actions never see it
            continue
        p = kind.problem(v)
        if p is not None:
            if isinstance(p, Verbatim):
                raise InvalidArgumentValue(str(p))
            raise InvalidArgumentValue(
                f"action: {spec.name} has an invalid argument: {k} (=={_safe_repr(v)}). {p}"
            )
