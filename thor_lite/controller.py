"""`Controller`: the ai2thor.controller.Controller surface, backed by thor_lite's World."""

from __future__ import annotations

import copy
import logging
import numbers
import zlib
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import actions  # noqa: F401  (registers every action)
from .actions.interaction import carry_held
from .actions.guard import check_world, compute_house_bounds
from .actions.registry import (
    ACTIONS,
    ActionFailed,
    InvalidArguments,
    PartialFailure,
    bind,
    check_args,
)
from .constants import (
    CAMERA_FAR,
    CAMERA_NEAR,
    DEFAULT_INIT,
    GRID_SIZE,
    LAYOUT_CLEARS_MOVEABLES,
    MAX_DOWN_LOOK,
    MAX_UP_LOOK,
    PHYSICS_KWARGS,
    THOR_ONLY_KWARGS,
    VISIBILITY_DISTANCE,
)
from .event import Event, LazyMetadata
from .fidelity import profile_for
from .metadata import (
    agent_metadata,
    colors_metadata,
    held_object_pose,
    objects_metadata,
    scene_bounds,
)
from .names import apply_names
from .scene_data import layout_dilation, layouts_dir, normalize_scene_name, scene_record
from .scene_build import build_world
from .walls import WALL_NAMES, room_boxes
from .world import World, drawn_held_box

_LOG = logging.getLogger(__name__)
_TOLERATED = PHYSICS_KWARGS | {"forceVisible"}
_BASE_WORLDS: Dict[Tuple, World] = {}
_NAV_ACTIONS = frozenset(
    {
        "MoveAhead",
        "MoveBack",
        "MoveLeft",
        "MoveRight",
        "RotateLeft",
        "RotateRight",
        "LookUp",
        "LookDown",
        "Crouch",
        "Stand",
        "Teleport",
        "TeleportFull",
    }
)


def _validate_init(p: Dict[str, Any]) -> None:
    g = float(p["gridSize"]) or GRID_SIZE
    if not 0 < g <= 5:
        raise ValueError("grid size must be in the range (0,5]")
    r = float(p["rotateStepDegrees"])
    if r <= 0:
        raise ValueError("rotateStepDegrees must be a non-zero, non-negative float")
    if p["snapToGrid"] and r % 90 != 0:
        raise ValueError(
            f"Invalid values 'rotateStepDegrees': ${r} and 'snapToGrid':True. 'snapToGrid': 'True' is not "
            "supported when 'rotateStepDegrees' is different from grid rotation steps of 0, 90, 180, 270 or 360."
        )
    fov = float(p["fieldOfView"])
    if not 0 < fov < 180:
        raise ValueError("fov must be set to (0, 180) noninclusive.")
    if int(p["width"]) <= 0 or int(p["height"]) <= 0:
        raise Exception("Screen resolution must be > 0x0")
    for k in ("maxUpwardLookAngle", "maxDownwardLookAngle"):
        if float(p[k]) < 0:
            raise ValueError(f"{k} must be a non-negative float")


class Controller:
    """Drop-in for ai2thor's Controller on the 120 iTHOR floor plans, CPU only."""

    _generation = 0  # distinguishes worlds so renderer uploads are never confused

    def __init__(self, scene: Optional[str] = None, **kwargs: Any) -> None:
        self.initialization_parameters: Dict[str, Any] = dict(DEFAULT_INIT)
        for k, v in kwargs.items():
            if k in THOR_ONLY_KWARGS:
                continue
            if k == "renderObjectImage":
                k = "renderInstanceSegmentation"
            self.initialization_parameters[k] = v
        if kwargs.get("renderObjectImage"):
            self.initialization_parameters["renderInstanceSegmentation"] = True
        if kwargs.get("renderClassImage"):
            self.initialization_parameters["renderSemanticSegmentation"] = True
        self.headless = bool(kwargs.get("headless", False))  # THOR: no frames at all
        # the build whose object names the scenes carry (thor_lite.names; None: the pinned one)
        self.commit_id: Optional[str] = kwargs.get("commit_id")
        self._renderer = None
        self._uploaded_key: Optional[int] = None
        self.last_event: Optional[Event] = None
        self.scene: Optional[str] = None
        self._world: Optional[World] = None
        self._time = 0.0
        self.reset(scene or "FloorPlan10")

    # --- lifecycle ---------------------------------------------------------------------
    @property
    def width(self) -> int:
        return int(self.initialization_parameters["width"])

    @property
    def height(self) -> int:
        return int(self.initialization_parameters["height"])

    def reset(self, scene: Optional[str] = None, **init_params: Any) -> Event:
        name = normalize_scene_name(scene or self.scene or "FloorPlan10")
        params = dict(self.initialization_parameters)
        params.update({k: v for k, v in init_params.items() if k not in THOR_ONLY_KWARGS})
        _validate_init(params)
        self.initialization_parameters = params
        self.scene = name
        self._world = self._fresh_world(name, params)
        # Every reset starts from the scene's own names: dataset names adopted by SetObjectPoses
        # belong to that world only, so no episode's matching depends on what ran before it.
        self._world.name_aliases = {}
        if self._renderer is not None:
            self._renderer.resize(self.width, self.height)
            self._renderer.set_fov(float(params["fieldOfView"]))
        self._uploaded_key = None
        self._time = 0.0
        return self._finish("Initialize", True, "", None, None)

    def _fresh_world(self, name: str, p: Dict[str, Any]) -> World:
        # The layout folder and dilation shape the reachable grid, so they are part of the key.
        key = (
            name,
            float(p["gridSize"]) or GRID_SIZE,
            float(p["visibilityDistance"]),
            float(p["fieldOfView"]),
            self.width,
            self.height,
            layouts_dir(),
            bool(p.get(LAYOUT_CLEARS_MOVEABLES, False)),
            layout_dilation(),
            # names are build-specific: a commit_id asks for that build's names (as the official
            # code passes its challenge build's); without one, and in ALFRED's THOR 2.1.0 scenes,
            # objects keep the names thor_lite's own splits were generated with
            None if p.get(LAYOUT_CLEARS_MOVEABLES, False) or not self.commit_id else self.commit_id,
        )
        base = _BASE_WORLDS.get(key)
        if base is None:
            base = build_world(
                scene_record(name),
                grid_size=key[1],
                visibility_distance=key[2] if key[2] > 0 else VISIBILITY_DISTANCE,
                fov=key[3],
                width=key[4],
                height=key[5],
                layout_dilation=key[8],
                profile=profile_for(key[7]),
            )
            if key[9] is not None:
                apply_names(base, key[9])
            base.free_cells(), base.reachable_cells()
            base.house_bounds = compute_house_bounds(base)  # fixed at load; see actions.guard
            _BASE_WORLDS[key] = base
        w = copy.copy(base)
        w._cache = dict(base._cache)
        Controller._generation += 1
        w.generation = Controller._generation
        w.rotate_step = float(p["rotateStepDegrees"])
        w.snap_to_grid = bool(p["snapToGrid"])
        w.max_up = float(p["maxUpwardLookAngle"]) or MAX_UP_LOOK
        w.max_down = float(p["maxDownwardLookAngle"]) or MAX_DOWN_LOOK
        w.physics_auto_sim = True
        w.object_filter = None
        w.seed = 0
        return w

    def set_held_objects_hang(self, hang: bool) -> None:
        """Draw held objects hanging from the hand, their box top near the hand point (THOR
        2.1.0's grip, for episodes it recorded), or centred at it, until the next reset."""
        self._world.held_hangs = bool(hang)

    def stop(self) -> None:
        if self._renderer is not None:
            self._renderer.release()
            self._renderer = None

    def __enter__(self) -> "Controller":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- stepping ----------------------------------------------------------------------
    def step(self, action: Any = None, **kwargs: Any) -> Event:
        if isinstance(action, dict):
            req = copy.deepcopy(action)
            req.update(kwargs)
        else:
            req = dict(kwargs)
            if action is not None:
                req["action"] = action
        raise_for_failure = bool(req.pop("raise_for_failure", False))
        name = req.pop("action", None)
        rot = req.get("rotation")
        if isinstance(rot, numbers.Real) and not isinstance(rot, (bool, np.bool_)):
            try:  # NaN/inf pass through as {"y": nan} and are rejected by check_args
                req["rotation"] = {"x": 0.0, "y": float(rot), "z": 0.0}
            except OverflowError:  # an int beyond float range stays a scalar; also rejected
                pass
        step_flags = {}
        if req.pop("renderObjectImage", False) or req.pop("renderInstanceSegmentation", False):
            step_flags["renderInstanceSegmentation"] = True  # the id pass for this step only
        if req.pop("renderImage", True) is False:
            step_flags["renderImage"] = False
        w = self._world
        spec = ACTIONS.get(name) if isinstance(name, str) else None
        if spec is None:
            ev = self._finish(str(name), False, f"Invalid action: {name}", None, "InvalidAction")
            raise ValueError(f"Invalid action: {name}")
        try:
            args = bind(spec, req, _TOLERATED)
        except InvalidArguments as e:
            self._finish(name, False, str(e), None, e.code)
            raise ValueError(str(e)) from None
        snap = w.snapshot()
        try:
            check_args(spec, args)
            partial = None
            try:
                ret = spec.fn(w, **args)
            except PartialFailure as e:  # the valid entries stay applied (THOR), if sane
                ret, partial = None, e
            if partial is None and w.held is not None and name in _NAV_ACTIONS:
                carry_held(w)
            check_world(w, snap[0], snap[2], spec.bounded)
            if partial is not None:
                raise partial
            ok, err, code = True, "", None
        except PartialFailure as e:
            ret, ok, err, code = None, False, str(e), e.code
        except ActionFailed as e:
            w.restore(snap)
            ret, ok, err, code = None, False, str(e), e.code
        except InvalidArguments as e:
            w.restore(snap)
            self._finish(name, False, str(e), None, e.code)
            raise ValueError(str(e)) from None
        except Exception as e:  # THOR reports exceptions thrown inside actions as failures
            w.restore(snap)
            ret, ok, code = None, False, None
            # THOR appends a C# stack trace; ours would leak Python internals into task logs.
            err = _one_line(f"{type(e).__name__}: {e}")
            _LOG.debug("action %s raised", name, exc_info=True)
        self._time += 0.26
        ev = self._finish(name, ok, err, ret, code, step_flags)
        if not ok and raise_for_failure:
            raise RuntimeError(err)
        return ev

    def _finish(
        self,
        name: str,
        ok: bool,
        err: str,
        ret: Any,
        code: Optional[str],
        step_flags: Optional[Dict[str, bool]] = None,
    ) -> Event:
        view = copy.copy(self._world)
        p = self.initialization_parameters
        a = view.agent
        held = view.held
        inv = [{"objectId": held, "objectType": view.objects[held].object_type}] if held else []
        cam = view.camera_position()
        base = {
            "sceneName": f"{view.scene_name}_physics",
            "lastAction": name,
            "lastActionSuccess": ok,
            "errorMessage": err,
            "errorCode": code,
            "actionReturn": ret,
            "agent": agent_metadata(view),
            "inventoryObjects": inv,
            "screenWidth": self.width,
            "screenHeight": self.height,
            "fov": float(p["fieldOfView"]),
            "cameraPosition": {"x": float(cam[0]), "y": float(cam[1]), "z": float(cam[2])},
            "cameraOrthSize": -1.0,
            "isSceneAtRest": True,
            "collided": False,
            "collidedObjects": [],
            "thirdPartyCameras": [],
            "depthFormat": "Meters",
            "agentId": 0,
            "arm": None,
            "currentTime": self._time,
            "physicsAutoSimulation": getattr(view, "physics_auto_sim", True),
            "isStanding": a.standing,
        }
        flags = {
            k: bool(p.get(k))
            for k in (
                "renderDepthImage",
                "renderInstanceSegmentation",
                "renderSemanticSegmentation",
            )
        }
        flags["renderImage"] = not self.headless
        flags.update(step_flags or {})
        names, palette = _id_table(view)

        def colors():
            seg = flags["renderInstanceSegmentation"] or flags["renderSemanticSegmentation"]
            return colors_metadata(names, palette) if seg else None

        parts = {
            "objects": lambda: objects_metadata(view),
            "heldObjectPose": lambda: held_object_pose(view),
            "sceneBounds": lambda: scene_bounds(view),
            "colors": colors,
            "colorBounds": lambda: None,
        }
        meta = LazyMetadata(base, parts=parts)
        ev = Event(meta, lambda: self._render_view(view, names, flags), flags, (names, palette))
        self.last_event = ev
        return ev

    # --- rendering ---------------------------------------------------------------------
    def _render_view(self, view: World, names: Tuple[str, ...], flags: Dict[str, bool]):
        from .render import BoxRenderer

        if self._renderer is None:
            self._renderer = BoxRenderer(
                self.width,
                self.height,
                float(self.initialization_parameters["fieldOfView"]),
                CAMERA_NEAR,
                CAMERA_FAR,
            )
        key = (view.generation, view.version, view.held, view.agent if view.held else None)
        if self._uploaded_key != key:
            transforms, colors, ids, patterns = _instances(view, names)
            self._renderer.set_instances(transforms, colors, ids, patterns)
            self._uploaded_key = key
        a = view.agent
        seg = flags["renderInstanceSegmentation"] or flags["renderSemanticSegmentation"]
        return self._renderer.render(
            view.camera_position(),
            a.yaw,
            a.horizon,
            rgb=True,
            depth=flags["renderDepthImage"],
            ids=seg,
        )


def _one_line(msg: str, limit: int = 500) -> str:
    """Collapse whitespace and cap the length: errorMessage is read in logs and tables."""
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def _id_table(w: World) -> Tuple[Tuple[str, ...], np.ndarray]:
    """Instance index -> name (0 = background) and a collision-free colour per instance."""
    cached = w._cache.get("id_table")
    if cached is not None and cached[0] is w.objects:  # objects are replaced, never mutated
        return cached[2]
    order = tuple(oid for oid, o in w.objects.items() if o.rendered)
    if cached is not None and cached[1] == order:
        w._cache["id_table"] = (w.objects, order, cached[2])
        return cached[2]
    names = ("",) + order + WALL_NAMES
    palette = np.zeros((len(names), 3), dtype=np.uint8)
    used = {(0, 0, 0)}
    for i, n in enumerate(names[1:], start=1):
        salt = 0
        while True:
            h = zlib.crc32(f"{salt}:{n}".encode())
            c = ((h >> 16) & 255, (h >> 8) & 255, h & 255)
            if c not in used:
                break
            salt += 1
        used.add(c)
        palette[i] = c
    w._cache["id_table"] = (w.objects, order, (names, palette))
    return names, palette


def _instances(w: World, names: Tuple[str, ...]):
    index = {n: i for i, n in enumerate(names)}
    mats, cols, ids, counts, pats = [], [], [], [], []
    for o in w.objects.values():
        if not o.rendered:
            continue
        m = (
            o.part_transforms
            if o.object_id != w.held
            else drawn_held_box(w, o).transform()[None].astype(np.float32)
        )
        mats.append(m)
        cols.append(o.part_colors if o.object_id != w.held else o.color[None])
        ids.append(index[o.object_id])
        pats.append(o.pattern)
        counts.append(len(m))
    cols = [np.concatenate(cols).reshape(-1, 3)] if cols else []
    ids = [np.repeat(np.asarray(ids, dtype=np.int32), counts)]
    pats = [np.repeat(np.asarray(pats, dtype=np.uint8), counts)]
    walls = w._cache.get("room_transforms")
    if walls is None:
        pieces = room_boxes(w)
        walls = w._cache["room_transforms"] = (
            np.stack([b.transform() for _, b in pieces]).astype(np.float32),
            np.array([i for i, _ in pieces], dtype=np.int64),
        )
    mats.append(walls[0])
    wall_cols = np.array([[200, 196, 188]] * (len(WALL_NAMES) - 1) + [[230, 230, 230]], np.uint8)
    cols.append(wall_cols[walls[1]])
    ids.append(np.array([index[n] for n in WALL_NAMES], dtype=np.int32)[walls[1]])
    pats.append(np.zeros(len(walls[1]), dtype=np.uint8))  # walls and ceiling: flat
    return (
        np.concatenate(mats),
        np.concatenate(cols).astype(np.uint8),
        np.concatenate(ids),
        np.concatenate(pats),
    )
