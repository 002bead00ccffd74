"""Agent movement, looking, teleporting and pose queries."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Optional

import numpy as np

from ..constants import AGENT_Y_OFFSET
from ..world import AgentState, World
from .registry import REQUIRED, ActionFailed, InvalidArguments, action, vec

_MOVE_DIRS = {"MoveAhead": (0, 1), "MoveBack": (0, -1), "MoveRight": (1, 0), "MoveLeft": (-1, 0)}
_MOVE_PARAMS = dict(moveMagnitude=None, forceAction=False, objectId="")


def _f4(v: float) -> str:
    """THOR's F4 format, but a 1e308 target prints as 1e+308, not 309 digits."""
    return f"{v:.4f}" if abs(v) < 1e9 else f"{v:.4g}"


def _snap(w: World, v: float) -> float:
    g = w.grid_size
    return round(round(v / g) * g, 4)


def _move(
    w: World, name: str, moveMagnitude: Optional[float], forceAction: bool, objectId: str
) -> None:
    mag = w.grid_size if moveMagnitude is None else float(moveMagnitude)
    if mag <= 0:
        raise ActionFailed("moveMagnitude must be > 0")
    a = w.agent
    r, f = _MOVE_DIRS[name]
    th = np.radians(a.yaw)
    fwd = np.array([np.sin(th), np.cos(th)])
    right = np.array([np.cos(th), -np.sin(th)])
    d = (fwd * f + right * r) * mag
    x, z = a.x + d[0], a.z + d[1]
    lo, hi = w.room_lo, w.room_hi
    g = w.grid_size
    if not (lo[0] - g <= x <= hi[0] + g and lo[2] - g <= z <= hi[2] + g):  # before snapping
        raise ActionFailed(
            f"Scene bounds do not contain target position: ({_f4(x)}, {a.y:.4f}, {_f4(z)})"
        )
    if w.snap_to_grid:
        x, z = _snap(w, x), _snap(w, z)
    if not (lo[0] - 1e-6 <= x <= hi[0] + 1e-6 and lo[2] - 1e-6 <= z <= hi[2] + 1e-6):
        raise ActionFailed(
            f"Scene bounds do not contain target position: ({x:.4f}, {a.y:.4f}, {z:.4f})"
        )
    if not _path_clear(w, a.x, a.z, x, z):
        blocker = _blocker_name(w, x, z)
        raise ActionFailed(
            f"{blocker} is blocking Agent 0 from moving by ({x - a.x:.4f}, 0.0000, {z - a.z:.4f})."
        )
    w.agent = replace(a, x=x, z=z)


def _path_clear(w: World, x0: float, z0: float, x1: float, z1: float) -> bool:
    g = w.grid_size
    on_grid = abs(x1 / g - round(x1 / g)) < 1e-6 and abs(z1 / g - round(z1 / g)) < 1e-6
    if on_grid and w.snap_to_grid:
        if (int(round(x1 / g)), int(round(z1 / g))) not in w.free_cells():
            return False
    elif not w.position_free(x1, z1):
        return False
    # Sample the segment so a long move cannot tunnel through thin furniture.
    dist = float(np.hypot(x1 - x0, z1 - z0))
    n = int(dist / 0.1)
    for i in range(1, n):
        t = i / n
        if not w.position_free(x0 + (x1 - x0) * t, z0 + (z1 - z0) * t):
            return False
    return True


def _blocker_name(w: World, x: float, z: float) -> str:
    best, best_d = "Wall", np.inf
    for o in w.active():
        if o.pickupable or o.object_type == "Floor":
            continue
        lo, hi = o.aabb
        dx = max(lo[0] - x, 0, x - hi[0])
        dz = max(lo[2] - z, 0, z - hi[2])
        d = np.hypot(dx, dz)
        if d < best_d and d < 0.2:
            best, best_d = o.name, d
    return best


for _name in _MOVE_DIRS:

    def _make(name: str):
        @action(name, **_MOVE_PARAMS)
        def _fn(w: World, moveMagnitude=None, forceAction=False, objectId="") -> None:
            _move(w, name, moveMagnitude, forceAction, objectId)

        return _fn

    _make(_name)


def _rotate(w: World, sign: int, degrees: Optional[float]) -> None:
    deg = w.rotate_step if degrees is None else float(degrees)
    if deg == 0:
        raise ActionFailed(
            "Cannot rotate by 0 degrees as this previously defaulted to rotating by a diferent amount."
        )
    yaw = (w.agent.yaw + sign * deg) % 360.0
    w.agent = replace(w.agent, yaw=round(yaw, 4) % 360.0)


@action("RotateRight", degrees=None, forceAction=False)
def rotate_right(w: World, degrees=None, forceAction=False) -> None:
    _rotate(w, 1, degrees)


@action("RotateLeft", degrees=None, forceAction=False)
def rotate_left(w: World, degrees=None, forceAction=False) -> None:
    _rotate(w, -1, degrees)


def _look(w: World, name: str, sign: int, degrees: Optional[float]) -> None:
    deg = 30.0 if degrees in (None, 0) else float(degrees)
    if deg < 0:
        raise ActionFailed(
            f"{name} action requires positive degree value. Invalid value used: {deg}"
        )
    if math.isfinite(deg * 10) and abs(deg * 10 - round(deg * 10)) > 1e-4:  # 1e308 * 10 = inf
        raise ActionFailed(f"{name} action requires degree value to be a multiple of 0.1f")
    h = round(w.agent.horizon + sign * deg, 1)
    if h < -w.max_up - 1e-6:
        raise ActionFailed(
            f"can't look up beyond {w.max_up:g} degrees above the forward horizon",
            code="LookDownCantExceedMin",
        )  # THOR sets this code for both limits
    if h > w.max_down + 1e-6:
        raise ActionFailed(
            f"can't look down beyond {w.max_down:g} degrees below the forward horizon",
            code="LookDownCantExceedMin",
        )
    w.agent = replace(w.agent, horizon=h)


@action("LookUp", lenient=True, degrees=None)
def look_up(w: World, degrees=None) -> None:
    _look(w, "LookUp", -1, degrees)


@action("LookDown", lenient=True, degrees=None)
def look_down(w: World, degrees=None) -> None:
    _look(w, "LookDown", 1, degrees)


@action("Crouch")
def crouch(w: World) -> None:
    if not w.agent.standing:
        raise ActionFailed("Already crouching.")
    w.agent = replace(w.agent, standing=False)


@action("Stand")
def stand(w: World) -> None:
    if w.agent.standing:
        raise ActionFailed("Already standing.")
    w.agent = replace(w.agent, standing=True)


def _teleport(w: World, position, x, y, z, rotation, horizon, standing, forceAction) -> None:
    a = w.agent
    if position is not None:
        px, py, pz = vec(position, "position")
    else:
        px = a.x if x is None else float(x)
        py = a.y if y is None else float(y)
        pz = a.z if z is None else float(z)
    if rotation is None:
        rx, ry, rz = 0.0, a.yaw, 0.0
    elif isinstance(rotation, (int, float)):
        rx, ry, rz = 0.0, float(rotation), 0.0
    else:
        rx, ry, rz = vec(rotation, "rotation")
    hor = a.horizon if horizon is None else float(horizon)
    if not -180.0 < hor <= 180.0:  # forceAction skips the range check; pitch is an angle
        hor = hor % 360.0
        hor = hor - 360.0 if hor > 180.0 else hor
    st = a.standing if standing is None else bool(standing)
    if not forceAction:
        if abs(rx) >= 0.01 or abs(rz) >= 0.01:
            raise ActionFailed(
                "No agents currently can change in pitch or roll. So, you must set rotation(x=0, y=yaw, z=0)."
                f" You gave ({rx}, {ry}, {rz})."
            )
        if not (-w.max_up - 1e-6 <= hor <= w.max_down + 1e-6):
            raise ActionFailed(
                f"Each horizon must be in [-{w.max_up:g}:{w.max_down:g}]. You gave {hor}."
            )
        lo, hi = w.room_lo, w.room_hi
        if not (lo[0] - 1e-6 <= px <= hi[0] + 1e-6 and lo[2] - 1e-6 <= pz <= hi[2] + 1e-6):
            raise ActionFailed(
                f"Teleport position ({px:.6f}, {py:.6f}, {pz:.6f}) out of scene bounds! Ignore this by setting forceAction=true."
            )
        g = w.grid_size
        if w.snap_to_grid and (
            abs(px / g - round(px / g)) > 1e-3 or abs(pz / g - round(pz / g)) > 1e-3
        ):
            raise ActionFailed(
                f"Teleport position ({px:.6f}, {py:.6f}, {pz:.6f}) is not on the grid of size {g:g}."
            )
        if not w.position_free(px, pz):
            raise ActionFailed(f"Collided with: {_blocker_name(w, px, pz)}.")
        floor_y = w.floor_y + AGENT_Y_OFFSET
        if abs(py - floor_y) > 0.05 and abs(py - a.y) > 0.05:
            raise ActionFailed(
                f"After teleporting and adjusting agent position to floor, there was too large a change"
                f"({abs(py - floor_y):.6f} > 0.05) in the y component. Consider using `forceAction=true` "
                "if you'd like to teleport anyway."
            )
    w.agent = AgentState(px, w.floor_y + AGENT_Y_OFFSET, pz, ry % 360.0, hor, st)
    if forceAction:
        w.admit_agent_cell()


@action(
    "Teleport",
    position=None,
    x=None,
    y=None,
    z=None,
    rotation=None,
    horizon=None,
    standing=None,
    forceAction=False,
)
def teleport(
    w: World,
    position=None,
    x=None,
    y=None,
    z=None,
    rotation=None,
    horizon=None,
    standing=None,
    forceAction=False,
) -> None:
    _teleport(w, position, x, y, z, rotation, horizon, standing, forceAction)


@action(
    "TeleportFull",
    position=None,
    x=None,
    y=None,
    z=None,
    rotation=REQUIRED,
    horizon=REQUIRED,
    standing=REQUIRED,
    forceAction=False,
)
def teleport_full(
    w: World,
    position=None,
    x=None,
    y=None,
    z=None,
    rotation=None,
    horizon=None,
    standing=None,
    forceAction=False,
) -> None:
    if position is None and (x is None or y is None or z is None):
        raise InvalidArguments(
            "action: TeleportFull is missing the following arguments: position", "MissingArguments"
        )
    _teleport(w, position, x, y, z, rotation, horizon, standing, forceAction)


@action("GetReachablePositions", maxStepCount=None, directionsRelativeAgent=False, gridSize=None)
def get_reachable_positions(
    w: World, maxStepCount=None, directionsRelativeAgent=False, gridSize=None
) -> List[Dict[str, float]]:
    g = w.grid_size
    cells = w.reachable_cells()
    if maxStepCount is not None and len(cells) > int(maxStepCount):
        raise ActionFailed("Too many steps taken in GetReachablePositions.")
    y = w.agent.y
    return [{"x": round(i * g, 4), "y": y, "z": round(k * g, 4)} for i, k in sorted(cells)]


@action(
    "GetInteractablePoses",
    objectId=REQUIRED,
    positions=None,
    rotations=None,
    horizons=None,
    standings=None,
    maxDistance=None,
    maxPoses=None,
)
def get_interactable_poses(
    w: World,
    objectId,
    positions=None,
    rotations=None,
    horizons=None,
    standings=None,
    maxDistance=None,
    maxPoses=None,
) -> List[Dict[str, Any]]:
    obj = w.get(objectId)
    if obj is None:
        raise ActionFailed(f"objectId: {objectId} is not the objectId on any object in the scene!")
    if horizons is None:
        horizons = [-30.0, 0.0, 30.0, 60.0]
    if standings is None:
        standings = [False, True]
    if rotations is None:
        step = w.rotate_step
        off = round(w.agent.yaw % step)
        rotations = list(np.arange(off, 360 + off, step, dtype=float))
        rotations = [r for r in rotations if r < 360 + off]
    for h in horizons:
        if not (-w.max_up - 1e-6 <= float(h) <= w.max_down + 1e-6):
            raise ActionFailed(
                f"Each horizon must be in [-{w.max_up:g}:{w.max_down:g}]. You gave {h}."
            )
    if maxPoses is not None and int(maxPoses) <= 0:
        raise ActionFailed("maxPoses must be > 0.")
    dist = w.visibility_distance if maxDistance is None else float(maxDistance)
    if dist <= 0:
        raise ActionFailed("maxDistance must be >= 0 meters from the object.")
    if not len(horizons) or not len(standings) or not len(rotations):
        raise ActionFailed("Every degree of freedom must have at least 1 valid value.")
    if positions is None:
        g = w.grid_size
        pos = np.array([[i * g, k * g] for i, k in sorted(w.reachable_cells())], dtype=float)
    else:
        pos = np.array(
            [[vec(p, "positions")[0], vec(p, "positions")[2]] for p in positions], dtype=float
        )
    if len(pos) == 0:
        return []
    from .interaction_queries import interactable_poses

    return interactable_poses(
        w,
        obj,
        pos,
        [float(r) for r in rotations],
        [float(h) for h in horizons],
        [bool(s) for s in standings],
        dist,
        None if maxPoses is None else int(maxPoses),
    )
