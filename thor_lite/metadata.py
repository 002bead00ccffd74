"""THOR-schema metadata dictionaries built from a frozen world view."""

from __future__ import annotations

from typing import Any, Dict, List


from .constants import HAND_LOCAL_POSITION
from .objects import SimObject, aabb_corner_points
from .world import World


def _v(p) -> Dict[str, float]:
    return {"x": float(p[0]), "y": float(p[1]), "z": float(p[2])}


def agent_metadata(w: World) -> Dict[str, Any]:
    a = w.agent
    return {
        "name": "agent",
        "position": {"x": a.x, "y": a.y, "z": a.z},
        "rotation": {"x": 0.0, "y": a.yaw, "z": 0.0},
        "cameraHorizon": a.horizon,
        "isStanding": a.standing,
        "inHighFrictionArea": False,
    }


def _static_fields(o: SimObject) -> Dict[str, Any]:
    """Scalar metadata fields that only change when the object record changes (cached)."""
    cached = o.__dict__.get("_meta_static")
    if cached is None:
        f = o.flags
        cached = {
            "objectId": o.object_id,
            "name": o.name,
            "objectType": o.object_type,
            "assetId": o.asset_id,
            "receptacle": f.get("receptacle", False),
            "pickupable": f.get("pickupable", False),
            "moveable": f.get("moveable", False),
            "openable": f.get("openable", False),
            "isOpen": o.is_open,
            "openness": o.openness,
            "toggleable": f.get("toggleable", False),
            "isToggled": o.is_toggled,
            "sliceable": f.get("sliceable", False),
            "isSliced": o.is_sliced,
            "cookable": f.get("cookable", False),
            "isCooked": o.is_cooked,
            "dirtyable": f.get("dirtyable", False),
            "isDirty": o.is_dirty,
            "breakable": f.get("breakable", False),
            "isBroken": o.is_broken,
            "canFillWithLiquid": f.get("canFillWithLiquid", False),
            "isFilledWithLiquid": o.is_filled,
            "fillLiquid": o.fill_liquid,
            "canBeUsedUp": f.get("canBeUsedUp", False),
            "isUsedUp": o.is_used_up,
            "temperature": o.temperature,
            "isHeatSource": f.get("isHeatSource", False),
            "isColdSource": f.get("isColdSource", False),
            "mass": o.mass,
            "isMoving": False,
        }
        object.__setattr__(o, "_meta_static", cached)
    return cached


def object_metadata(
    w: World, o: SimObject, vis: Dict[str, tuple], contents: Dict[str, List[str]]
) -> Dict[str, Any]:
    if o.object_id == w.held:
        b = w.held_box(o)
        lo, hi = b.aabb()
        pos = b.center - o.rot_matrix @ o.local_box.center
        oobb = b.corners().tolist() if (o.pickupable or o.moveable) else None
        rot = o.rotation
        corners = aabb_corner_points(lo, hi)
        lo, hi = lo.tolist(), hi.tolist()
    else:
        pos, rot, lo, hi, oobb_t, corners_t = o.geometry_meta
        oobb = list(map(list, oobb_t)) if oobb_t is not None else None
        corners = list(map(list, corners_t))
    visible, interactable = vis.get(o.object_id, (False, False))
    a = w.agent
    d = dict(_static_fields(o))
    d.update(
        {
            "position": _v(pos),
            "rotation": _v(rot),
            "visible": visible,
            "isInteractable": interactable,
            "distance": float(
                ((pos[0] - a.x) ** 2 + (pos[1] - a.y) ** 2 + (pos[2] - a.z) ** 2) ** 0.5
            ),
            "receptacleObjectIds": list(contents.get(o.object_id, [])) if d["receptacle"] else None,
            "parentReceptacles": list(o.parents) if o.parents else None,
            "isPickedUp": o.object_id == w.held,
            "controlledObjects": list(o.controlled_objects)
            if o.controlled_objects is not None
            else None,
            "salientMaterials": list(o.salient_materials) if o.salient_materials else None,
            "axisAlignedBoundingBox": {
                "cornerPoints": corners,
                "center": {
                    "x": (lo[0] + hi[0]) / 2,
                    "y": (lo[1] + hi[1]) / 2,
                    "z": (lo[2] + hi[2]) / 2,
                },
                "size": {"x": hi[0] - lo[0], "y": hi[1] - lo[1], "z": hi[2] - lo[2]},
            },
            "objectOrientedBoundingBox": {"cornerPoints": oobb} if oobb is not None else None,
        }
    )
    return d


def objects_metadata(w: World) -> List[Dict[str, Any]]:
    objs = [o for o in w.objects.values() if o.enabled]
    flt = getattr(w, "object_filter", None)
    if flt is not None:
        objs = [o for o in objs if o.object_id in flt]
    vis = w.visibility([o.object_id for o in objs])
    contents: Dict[str, List[str]] = {}
    for o in w.objects.values():
        if o.enabled:
            for p in o.parents:
                contents.setdefault(p, []).append(o.object_id)
    return [object_metadata(w, o, vis, contents) for o in objs]


def held_object_pose(w: World) -> Dict[str, Any]:
    hand = w.hand_position()
    return {
        "position": _v(hand),
        "rotation": {"x": w.agent.horizon, "y": w.agent.yaw, "z": 0.0},
        "localPosition": _v(HAND_LOCAL_POSITION),
        "localRotation": {"x": 0.0, "y": 0.0, "z": 0.0},
    }


def scene_bounds(w: World) -> Dict[str, Any]:
    lo = w.room_lo.copy()
    hi = w.room_hi.copy()
    hi[1] = max(hi[1], w.floor_y + 3.0)
    return {
        "cornerPoints": aabb_corner_points(lo, hi),
        "center": _v((lo + hi) / 2),
        "size": _v(hi - lo),
    }
