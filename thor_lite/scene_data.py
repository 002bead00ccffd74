"""The 120 iTHOR floor plans, rebuilt from AI2-THOR's published object metadata.

The PyPI package `procthor==0.0.1.dev2` ships `databases/ai2thor-object-metadata.json`, the
real `metadata["objects"]` of every iTHOR scene. We read it as data only (its code is never
imported) and compile the fields thor_lite needs into a small pickle cache, so that creating
a Controller does not parse 43 MB of JSON every time.
"""

from __future__ import annotations

import hashlib
import json
import importlib.util
import os
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import numpy as np

from common.atomic_io import atomic_open

from .constants import ROOM_TYPE_OFFSETS, ithor_scene_names
from .geometry import Box

CACHE_VERSION = 3
_SCENE_RE = re.compile(r"^FloorPlan(\d+)(_physics)?$")

FLAG_KEYS = (
    "pickupable",
    "moveable",
    "openable",
    "receptacle",
    "toggleable",
    "sliceable",
    "cookable",
    "dirtyable",
    "breakable",
    "canFillWithLiquid",
    "canBeUsedUp",
    "isHeatSource",
    "isColdSource",
)
STATE_KEYS = (
    "isOpen",
    "openness",
    "isToggled",
    "isSliced",
    "isCooked",
    "isDirty",
    "isBroken",
    "isFilledWithLiquid",
    "fillLiquid",
    "isUsedUp",
    "temperature",
)


class SceneDataError(RuntimeError):
    """The object metadata needed to build iTHOR scenes is missing or malformed."""


@dataclass(frozen=True)
class ObjectRecord:
    """One object of a scene as recorded by real AI2-THOR."""

    object_id: str
    name: str
    object_type: str
    asset_id: str
    position: Tuple[float, float, float]
    rotation: Tuple[float, float, float]
    box: Box  # world box at the recorded pose (OOBB if THOR gave one, else the AABB)
    has_oobb: bool
    flags: Dict[str, bool]
    state: Dict[str, Any]
    parent_receptacles: Tuple[str, ...]
    mass: float
    salient_materials: Optional[Tuple[str, ...]]
    controlled_objects: Optional[Tuple[str, ...]]


@dataclass(frozen=True)
class SceneRecord:
    name: str  # e.g. "FloorPlan1"
    objects: Tuple[ObjectRecord, ...]


def normalize_scene_name(scene: str) -> str:
    """'FloorPlan28' and 'FloorPlan28_physics' -> 'FloorPlan28'; raises for unknown names."""
    m = _SCENE_RE.match(scene or "")
    if not m or f"FloorPlan{int(m.group(1))}" not in ithor_scene_names():
        raise ValueError(
            f"\nScene '{scene}' not contained in build (scene names are case sensitive)."
            f"\nPlease choose one of the following scene names:\n\n"
            + ", ".join(sorted(f"{s}_physics" for s in ithor_scene_names()))
        )
    return f"FloorPlan{int(m.group(1))}"


def metadata_json_path() -> Path:
    """Where the published iTHOR object metadata lives (override: THOR_LITE_OBJECT_METADATA)."""
    env = os.environ.get("THOR_LITE_OBJECT_METADATA")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("procthor")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SceneDataError(
            "thor_lite needs AI2-THOR's published object metadata, shipped in the PyPI package "
            "'procthor==0.0.1.dev2'. Install it without its dependencies:\n"
            "    pip install --no-deps procthor==0.0.1.dev2"
        )
    return (
        Path(list(spec.submodule_search_locations)[0])
        / "databases"
        / "ai2thor-object-metadata.json"
    )


def _cache_dir() -> Path:
    return Path(os.environ.get("THOR_LITE_CACHE", Path.home() / ".cache" / "thor_lite"))


def _vec(d: Dict[str, float]) -> Tuple[float, float, float]:
    return (float(d["x"]), float(d["y"]), float(d["z"]))


def _object_record(raw: Dict[str, Any], where: str) -> ObjectRecord:
    try:
        oobb = raw.get("objectOrientedBoundingBox")
        if oobb and oobb.get("cornerPoints"):
            box, has_oobb = Box.from_oobb_corners(oobb["cornerPoints"]), True
        else:
            corners = np.asarray(raw["axisAlignedBoundingBox"]["cornerPoints"], dtype=float)
            box, has_oobb = Box.axis_aligned(corners.min(0), corners.max(0)), False
        return ObjectRecord(
            object_id=raw["objectId"],
            name=raw["name"],
            object_type=raw["objectType"],
            asset_id=raw.get("assetId") or "",
            position=_vec(raw["position"]),
            rotation=_vec(raw["rotation"]),
            box=box,
            has_oobb=has_oobb,
            flags={k: bool(raw.get(k, False)) for k in FLAG_KEYS},
            state={k: raw.get(k) for k in STATE_KEYS},
            parent_receptacles=tuple(raw.get("parentReceptacles") or ()),
            mass=float(raw.get("mass") or 0.0),
            salient_materials=tuple(raw["salientMaterials"])
            if raw.get("salientMaterials")
            else None,
            controlled_objects=tuple(raw["controlledObjects"])
            if raw.get("controlledObjects") is not None
            else None,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise SceneDataError(f"{where}: malformed object record ({e!r})") from e


def _compile(src: Path) -> Dict[str, SceneRecord]:
    import json

    try:
        with open(src) as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        raise SceneDataError(f"cannot read iTHOR object metadata at {src}: {e}") from e
    scenes: Dict[str, SceneRecord] = {}
    for room, offset in ROOM_TYPE_OFFSETS.items():
        rooms = raw.get(room)
        if not isinstance(rooms, list) or len(rooms) != 30:
            raise SceneDataError(f"{src}: field '{room}' should list 30 scenes")
        for i, objs in enumerate(rooms):
            name = f"FloorPlan{offset + i + 1}"
            scenes[name] = SceneRecord(
                name, tuple(_object_record(o, f"{src} {room}[{i}] ({name})") for o in objs)
            )
    return scenes


_SCENES: Optional[Dict[str, SceneRecord]] = None


def all_scene_records() -> Dict[str, SceneRecord]:
    """All 120 scenes, compiled once per machine into a pickle cache keyed by source hash."""
    global _SCENES
    if _SCENES is not None:
        return _SCENES
    src = metadata_json_path()
    if not src.is_file():
        raise SceneDataError(f"iTHOR object metadata not found at {src}")
    stat = src.stat()
    key = hashlib.sha1(
        f"{src.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{CACHE_VERSION}".encode()
    ).hexdigest()[:16]
    cache = _cache_dir() / f"ithor_scenes_{key}.pkl"
    if cache.is_file():
        try:
            with open(cache, "rb") as f:
                _SCENES = pickle.load(f)
            return _SCENES
        except Exception:  # a stale or truncated cache is rebuilt, never trusted
            pass
    scenes = _compile(src)
    with atomic_open(cache, "wb") as f:  # concurrent workers never read a half-written cache
        pickle.dump(scenes, f, protocol=pickle.HIGHEST_PROTOCOL)
    _SCENES = scenes
    return scenes


def scene_record(scene: str) -> SceneRecord:
    return all_scene_records()[normalize_scene_name(scene)]


def layouts_dir() -> Optional[Path]:
    """Real reachable grids of the iTHOR scenes (ALFRED's `FloorPlanN-layout.npy` files).

    The object metadata has no walls, so the room outline comes from these files, shipped
    in the PyPI package `alfworld==0.4.2` (installed without dependencies; read as data).
    Override with THOR_LITE_LAYOUTS=<dir>. Without them, only the Floor's box bounds the room.
    """
    env = os.environ.get("THOR_LITE_LAYOUTS")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("alfworld")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = Path(list(spec.submodule_search_locations)[0]) / "gen" / "layouts"
    return d if d.is_dir() else None


def layout_dilation() -> int:
    """How many grid cells beyond the recorded layout a room may extend (THOR_LITE_LAYOUT_DILATION,
    default 1). It changes every scene's reachable grid, so callers that cache worlds key on it."""
    raw = os.environ.get("THOR_LITE_LAYOUT_DILATION", "1").strip()
    try:
        k = int(raw)
    except ValueError:
        k = -1
    if k < 0:
        raise SceneDataError(
            f"THOR_LITE_LAYOUT_DILATION must be a non-negative integer, got {raw!r}"
        )
    return k


def _layout_file(scene: str, suffix: str) -> Optional[Path]:
    """ALFRED's per-scene file `FloorPlanN-<suffix>` beside the layouts, or None if absent."""
    d = layouts_dir()
    if d is None:
        return None
    f = d / f"{normalize_scene_name(scene)}-{suffix}"
    return f if f.is_file() else None


def layout_cells(scene: str, grid_size: float = 0.25) -> Optional[frozenset]:
    """Grid cells (i, k) with x = i*grid, z = k*grid that real THOR found reachable."""
    f = _layout_file(scene, "layout.npy")
    if f is None:
        return None
    try:
        pts = np.load(f)
    except (OSError, ValueError) as e:
        raise SceneDataError(f"{f}: unreadable layout file ({e})") from e
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise SceneDataError(f"{f}: expected an (N, 2) array of x, z positions, got {pts.shape}")
    return frozenset((int(round(x / grid_size)), int(round(z / grid_size))) for x, z in pts)


def layout_open_poses(scene: str) -> Dict[str, Tuple[float, float, float, float]]:
    """objectId -> (x, z, yaw, horizon) of the agent pose ALFRED's generator recorded for
    opening each openable in THOR 2.1.0 (`FloorPlanN-openable.json`, beside its layouts);
    empty without that file."""
    f = _layout_file(scene, "openable.json")
    if f is None:
        return {}
    try:
        poses = json.loads(f.read_text())
        return {str(k): tuple(float(x) for x in v[:4]) for k, v in poses.items()}
    except (OSError, ValueError, TypeError, IndexError) as e:
        raise SceneDataError(f"{f}: unreadable openable pose list ({e})") from e


def layout_object_types(scene: str) -> Optional[frozenset]:
    """The object types THOR 2.1.0's scene held (ALFRED's `FloorPlanN-objects.json`, beside
    its layouts), or None without that file."""
    f = _layout_file(scene, "objects.json")
    if f is None:
        return None
    try:
        types = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        raise SceneDataError(f"{f}: unreadable object-type list ({e})") from e
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise SceneDataError(f"{f}: expected a JSON list of object type names")
    return frozenset(types)
