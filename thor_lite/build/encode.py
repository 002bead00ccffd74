"""thor_lite Events in the shapes ai2thor's client decodes: msgpack metadata and raw frames.

Frames go bottom row first (Unity's ReadPixels order; the client flips them back). Depth is
float32 metres with `depthFormat: "Meters"`, so the client's own depth_format conversion
applies. Instance ids are RGBA with alpha 255, the 4-byte layout the client keys masks on.
"""
from __future__ import annotations

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
        out["colors"] = list(colors) + [{"name": t, "color": list(class_color(t))} for t in types]
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


def _rgba(rgb: np.ndarray) -> np.ndarray:
    out = np.empty(rgb.shape[:2] + (4,), dtype=np.uint8)
    out[..., :3] = rgb
    out[..., 3] = 255
    return out


def image_fields(event: Any, render: bool) -> List[Tuple[int, bytes]]:
    """The frames this thor_lite Event holds, in Unity's field order; none when not rendering."""
    if not render:
        return []
    fields = []
    rgb = event.frame
    if rgb is not None:
        fields.append((wire.RGB_IMAGE, _bottom_up(rgb.astype(np.uint8, copy=False))))
    depth = event.depth_frame
    if depth is not None:
        fields.append((wire.DEPTH_IMAGE, _bottom_up(depth.astype("<f4", copy=False))))
    ids = event.instance_segmentation_frame
    if ids is not None:
        fields.append((wire.IDS_IMAGE, _bottom_up(_rgba(ids))))
    classes = event.semantic_segmentation_frame
    if classes is not None:
        fields.append((wire.CLASSES_IMAGE, _bottom_up(classes.astype(np.uint8, copy=False))))
    return fields


def event_message(agent: Dict[str, Any], sequence_id: int, images: List[Tuple[int, bytes]]) -> bytes:
    """A whole framed reply: METADATA (one agent), the image fields, end-of-message."""
    top = {"agents": [agent], "sequenceId": int(sequence_id), "activeAgentId": 0, "thirdPartyCameras": None}
    body = msgpack.packb(top, default=_plain, use_bin_type=True)
    return wire.frame_message([(wire.METADATA, body)] + images)
