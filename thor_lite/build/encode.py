"""thor_lite Events in the shapes ai2thor's client decodes: msgpack metadata and raw frames.

Frames go bottom row first (Unity's ReadPixels order; the client flips them back). Depth is
float32 metres with `depthFormat: "Meters"`, so the client's own depth_format conversion
applies. Instance ids are RGBA with alpha 255, the 4-byte layout the client keys masks on.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Tuple

import msgpack
import numpy as np

from ..event import class_color
from . import wire

# Keys the client reads on every event; Unity always sends them (nil when empty).
_REQUIRED: Dict[str, Any] = {
    "thirdPartyCameras": None,
    "errorCode": None,
    "errorMessage": "",
    "actionReturn": None,
    "depthFormat": "Meters",
    "colors": None,
    "agentId": 0,
}


@functools.lru_cache(maxsize=None)
def _class_color_tuple(object_type: str) -> Tuple[int, int, int]:
    return class_color(object_type)


def _class_color(object_type: str) -> List[int]:
    """thor_lite's colour for a class (what its class segmentation and color_to_object_id use)."""
    return list(_class_color_tuple(object_type))


def _plain(obj: Any) -> Any:
    """msgpack fallback for numpy values (the same numbers Python would see in-process)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"cannot encode {type(obj).__name__} in metadata")


def agent_metadata(meta: Any, overrides: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A plain per-agent dict from a thor_lite metadata mapping, with the keys ai2thor requires."""
    out = dict(meta.items())
    for k, v in _REQUIRED.items():
        out.setdefault(k, v)
    colors = out.get("colors")
    if colors:  # Unity lists class colours too: color_to_object_id then names them
        types = sorted({c["name"].split("|")[0] for c in colors})
        out["colors"] = list(colors) + [{"name": t, "color": _class_color(t)} for t in types]
    if overrides:
        out.update(overrides)
    return out


def bare_metadata(width: int, height: int, scene: str, action: str, ok: bool = True, error: str = "",
                  code: Optional[str] = None, ret: Any = None) -> Dict[str, Any]:
    """Per-agent metadata before any scene is loaded (the first frame, Reset, GetScenesInBuild)."""
    zero = {"x": 0.0, "y": 0.0, "z": 0.0}
    meta = dict(_REQUIRED)
    meta.update({
        "objects": [], "agent": {"name": "agent", "position": dict(zero), "rotation": dict(zero),
                                 "cameraHorizon": 0.0, "isStanding": True, "inHighFrictionArea": False},
        "inventoryObjects": [], "sceneName": scene, "lastAction": action, "lastActionSuccess": ok,
        "errorMessage": error, "errorCode": code, "actionReturn": ret, "screenWidth": width,
        "screenHeight": height, "isSceneAtRest": True, "collided": False, "collidedObjects": [],
    })
    return meta


def _bottom_up(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a[::-1]).tobytes()


_OPAQUE = np.uint32(255 << 24)


def _ids_rgba(event: Any, colors: Optional[list]) -> Optional[bytes]:
    """Instance ids as RGBA bytes, bottom row first, in one table lookup per pixel.

    thor_lite's metadata lists instance i's colour as colors[i - 1] (0 is the black background);
    when the table and the id frame disagree the RGB segmentation frame is converted instead."""
    ids = event.instance_ids_frame
    if ids is None:
        return None
    instances = [c["color"] for c in colors or [] if "|" in c["name"]]
    if instances and int(ids.max()) <= len(instances):
        rgb = np.asarray([[0, 0, 0]] + instances, dtype=np.uint32)
        lut = rgb[:, 0] | (rgb[:, 1] << 8) | (rgb[:, 2] << 16) | _OPAQUE
        return np.take(lut, ids[::-1]).astype("<u4", copy=False).tobytes()
    seg = event.instance_segmentation_frame
    out = np.empty(seg.shape[:2] + (4,), dtype=np.uint8)
    out[..., :3] = seg
    out[..., 3] = 255
    return _bottom_up(out)


def image_fields(event: Any, render: bool, colors: Optional[list] = None) -> List[Tuple[int, bytes]]:
    """The frames this thor_lite Event holds, in Unity's field order; none when not rendering.

    `colors` is the event's metadata colour table (it maps instance ids to colours)."""
    if not render:
        return []
    fields = []
    rgb = event.frame
    if rgb is not None:
        fields.append((wire.RGB_IMAGE, _bottom_up(rgb.astype(np.uint8, copy=False))))
    depth = event.depth_frame
    if depth is not None:
        fields.append((wire.DEPTH_IMAGE, _bottom_up(depth.astype("<f4", copy=False))))
    ids = _ids_rgba(event, colors)
    if ids is not None:
        fields.append((wire.IDS_IMAGE, ids))
    classes = event.semantic_segmentation_frame
    if classes is not None:
        fields.append((wire.CLASSES_IMAGE, _bottom_up(classes.astype(np.uint8, copy=False))))
    return fields


def event_message(agent: Dict[str, Any], sequence_id: int, images: List[Tuple[int, bytes]]) -> bytes:
    """A whole framed reply: METADATA (one agent), the image fields, end-of-message."""
    top = {"agents": [agent], "sequenceId": int(sequence_id), "activeAgentId": 0, "thirdPartyCameras": None}
    body = msgpack.packb(top, default=_plain, use_bin_type=True)
    return wire.frame_message([(wire.METADATA, body)] + images)
