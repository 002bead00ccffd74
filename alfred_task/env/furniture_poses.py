"""Where THOR 2.1.0's scene stood the moveable furniture that a trajectory's actions name.

ALFRED's `scene.object_poses` lists pickupables only: THOR 2.1.0 restored nothing else, so a
garbage can or a microwave stood where 2.1.0's scene file put it, and later builds moved some
of them (FloorPlan413's garbage can is 3 m away today, and the recorded PutObject mask of the
can beside the toilet then finds the toilet). A recorded objectId is 2.1.0's metadata id,
`Type|x|y|z` at the object's scene position, so it says where that furniture stood. These
poses move today's piece there when that is unambiguous: it is the scene's only non-pickupable
moveable of that type and stands more than MOVED_FAR away.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

#: a recorded position this far (m, on the floor plane) from today's piece means it was moved
MOVED_FAR = 0.3
#: another piece of furniture this near the recorded position (m) is the one 2.1.0 had there
#: under another type (FloorPlan307's Desk was 2.1.0's SideTable): nothing moves onto it
SAME_SPOT = 0.1
_ID_KEYS = ("objectId", "receptacleObjectId")


def recorded_ids(traj: Dict[str, Any]) -> List[str]:
    """The `Type|x|y|z` objectIds of the trajectory's recorded low-level actions, in order."""
    out: List[str] = []
    for la in (traj.get("plan") or {}).get("low_actions") or []:
        api = la.get("api_action") or {}
        for k in _ID_KEYS:
            v = api.get(k)
            if isinstance(v, str) and v.count("|") == 3 and v not in out:
                out.append(v)
    return out


def _parse(object_id: str) -> Optional[Tuple[str, Tuple[float, float, float]]]:
    t, *xyz = object_id.split("|")
    try:
        return t, (float(xyz[0]), float(xyz[1]), float(xyz[2]))
    except ValueError:
        return None


def _occupied(objs: List[Dict[str, Any]], x: float, z: float) -> bool:
    return any(
        not o["pickupable"]
        and o["objectType"] != "Floor"
        and ((o["position"]["x"] - x) ** 2 + (o["position"]["z"] - z) ** 2) ** 0.5 < SAME_SPOT
        for o in objs
    )


def furniture_poses(
    traj: Dict[str, Any], objects: Iterable[Dict[str, Any]]
) -> List[Dict[str, Any]]:
    """SetObjectPoses entries (today's name, 2.1.0's x and z, today's height and rotation) for
    the moveable furniture the trajectory names where THOR 2.1.0 had it, given today's metadata
    `objects`."""
    objs = list(objects)
    out: List[Dict[str, Any]] = []
    for rid in recorded_ids(traj):
        parsed = _parse(rid)
        if parsed is None:
            continue
        t, (x, _, z) = parsed
        same = [o for o in objs if o["objectType"] == t and not o["pickupable"]]
        if len(same) != 1 or not same[0].get("moveable"):
            continue
        o = same[0]
        p = o["position"]
        if ((p["x"] - x) ** 2 + (p["z"] - z) ** 2) ** 0.5 <= MOVED_FAR:
            continue
        if any(e["objectName"] == o["name"] for e in out) or _occupied(objs, x, z):
            continue
        out.append(
            {
                "objectName": o["name"],
                "position": {"x": x, "y": p["y"], "z": z},
                "rotation": dict(o["rotation"]),
            }
        )
    return out
