"""THOR-schema metadata dictionaries built from a frozen world view.

Task code reads `metadata["objects"]` every step, mostly the scalar fields, poses and `visible`.
The two bounding boxes (sixteen corner lists and their dicts) cost more to build than all the
rest, so an object's dict fills them in on first use (`ObjectMetadata`); to every reader it is
the plain dict THOR returns, with the same keys in the same order.
"""

from __future__ import annotations

from operator import is_
from typing import Any, Dict, List, Sequence, Tuple


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


_BOX_KEYS = ("axisAlignedBoundingBox", "objectOrientedBoundingBox")


def _boxes(lo, hi, corners, oobb) -> Dict[str, Any]:
    return {
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


class ObjectMetadata(dict):
    """One object's metadata dict built in two late stages. At first it holds only the fields
    read most (`_EAGER`: id, type, `visible`, `isInteractable`, `distance`); any other use fills
    in the rest of the record's fields in THOR's key order (`_src`), and the bounding-box entries
    are built on first use (`_geom`, from the record's immutable geometry tuples). After both it
    is an ordinary dict; to every reader it is the plain dict THOR returns."""

    __slots__ = ("_src", "_geom")

    def _fill_base(self) -> None:
        src = self._src
        if src is not None:
            self._src = None
            (base, (_pos, lists, _geom)), rec_ids = src
            step = dict.copy(self)
            dict.clear(self)
            dict.update(self, base)
            dict.update(self, step)
            dict.__setitem__(self, "position", base["position"].copy())
            dict.__setitem__(self, "rotation", base["rotation"].copy())
            if rec_ids is not None:
                dict.__setitem__(self, "receptacleObjectIds", list(rec_ids))
            for k, v in lists.items():
                dict.__setitem__(self, k, list(v))

    def _fill(self) -> None:
        if self._src is not None:
            self._fill_base()
        geom = self._geom
        if geom is not None:
            self._geom = None
            lo, hi, oobb_t, corners_t = geom
            oobb = list(map(list, oobb_t)) if oobb_t is not None else None
            dict.update(self, _boxes(lo, hi, list(map(list, corners_t)), oobb))

    def __missing__(self, key):
        if self._src is not None:
            self._fill_base()
            if dict.__contains__(self, key):
                return dict.__getitem__(self, key)
        if self._geom is not None and key in _BOX_KEYS:
            self._fill()
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key, default=None):
        if not dict.__contains__(self, key):
            if self._src is not None:
                self._fill_base()
            if self._geom is not None and key in _BOX_KEYS:
                self._fill()
        return dict.get(self, key, default)

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            return True
        if self._src is not None and key in self._src[0][0]:
            return True
        return self._geom is not None and key in _BOX_KEYS

    def __iter__(self):
        self._fill()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._fill()
        return dict.__len__(self)

    def __reversed__(self):
        self._fill()
        return dict.__reversed__(self)

    def keys(self):
        self._fill()
        return dict.keys(self)

    def items(self):
        self._fill()
        return dict.items(self)

    def values(self):
        self._fill()
        return dict.values(self)

    def copy(self) -> dict:
        self._fill()
        return dict(dict.items(self))

    def __eq__(self, other) -> bool:
        self._fill()
        if isinstance(other, ObjectMetadata):
            other._fill()
        return dict.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._fill()
        return dict.__repr__(self)

    def __reduce__(self):
        self._fill()
        return (dict, (dict(dict.items(self)),))

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    def __setitem__(self, key, value) -> None:
        self._fill()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key) -> None:
        self._fill()
        dict.__delitem__(self, key)

    def pop(self, *args):
        self._fill()
        return dict.pop(self, *args)

    def popitem(self):
        self._fill()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        self._fill()
        return dict.setdefault(self, key, default)

    def update(self, *args, **kwargs) -> None:
        self._fill()
        dict.update(self, *args, **kwargs)

    def __or__(self, other):
        self._fill()
        return dict(dict.items(self)) | other

    def __ror__(self, other):
        self._fill()
        return other | dict(dict.items(self))

    def __ior__(self, other):
        self._fill()
        dict.update(self, other)
        return self


def _record_part(o: SimObject) -> Tuple[Dict[str, Any], tuple]:
    """What an object's metadata takes from its record alone, in THOR's key order (cached on
    the record: records are replaced, never mutated). Containers in it are templates: every
    event gets its own copies."""
    cached = o.__dict__.get("_meta_record")
    if cached is None:
        pos, rot, lo, hi, oobb_t, corners_t = o.geometry_meta
        base = dict(_static_fields(o))
        base.update(
            {
                "position": _v(pos),
                "rotation": _v(rot),
                "visible": False,
                "isInteractable": False,
                "distance": 0.0,
                "receptacleObjectIds": None,
                "parentReceptacles": tuple(o.parents) if o.parents else None,
                "isPickedUp": False,
                "controlledObjects": tuple(o.controlled_objects)
                if o.controlled_objects is not None
                else None,
                "salientMaterials": tuple(o.salient_materials) if o.salient_materials else None,
            }
        )
        lists = {
            k: base[k]
            for k in ("parentReceptacles", "controlledObjects", "salientMaterials")
            if base[k] is not None
        }
        cached = (base, (pos, lists, (lo, hi, oobb_t, corners_t)))
        object.__setattr__(o, "_meta_record", cached)
    return cached


def lazy_object_metadata(
    w: World, o: SimObject, vis: Dict[str, tuple], contents: Dict[str, List[str]]
) -> Dict[str, Any]:
    """`object_metadata` for an object not in hand, its fields filled in on first use."""
    rec = _record_part(o)
    oid = o.object_id
    rec_ids = tuple(contents.get(oid, ())) if rec[0]["receptacle"] else None
    return _lazy(rec, rec_ids, vis.get(oid, _UNSEEN), w.agent)


_UNSEEN = (False, False)


def _lazy(rec, rec_ids, seen, a) -> "ObjectMetadata":
    base, (pos, _lists, geom) = rec
    d = ObjectMetadata(
        {
            "objectId": base["objectId"],
            "objectType": base["objectType"],
            "visible": seen[0],
            "isInteractable": seen[1],
            "distance": float(
                ((pos[0] - a.x) ** 2 + (pos[1] - a.y) ** 2 + (pos[2] - a.z) ** 2) ** 0.5
            ),
        }
    )
    d._src = (rec, rec_ids)
    d._geom = geom
    return d


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
            **_boxes(lo, hi, corners, oobb),
        }
    )
    return d


#: agent poses whose visibility answers are kept per world state (an agent turning back,
#: bumping into a wall or looking up and down again stands where it stood before)
POSE_VISIBILITY_CACHE = 256


def pose_visibility(w: World, object_ids: Tuple[str, ...]) -> Dict[str, tuple]:
    """`w.visibility(object_ids)` from the agent's pose, remembered per (world, objects state,
    hand, pose, camera, rules): the answer depends on nothing else. A fresh dict each call."""
    return dict(_pose_visibility(w, object_ids))


def _pose_visibility(w: World, object_ids: Tuple[str, ...]) -> Dict[str, tuple]:
    """`pose_visibility`'s remembered answer itself (not to be changed by the caller)."""
    key = (
        getattr(w, "generation", None),
        w.version,
        w.held,
        w.agent,
        w.visibility_distance,
        w.fov,
        w.width,
        w.height,
        w.profile,
        object_ids,
    )
    memo = w._cache.setdefault("pose_visibility", {})
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= POSE_VISIBILITY_CACHE:
            memo.clear()
        hit = memo[key] = w.visibility(list(object_ids))
    return hit


def receptacle_contents(w: World) -> Dict[str, List[str]]:
    """Receptacle id -> ids of the enabled objects directly in or on it."""
    contents: Dict[str, List[str]] = {}
    for o in w.objects.values():
        if o.enabled:
            for p in o.parents:
                contents.setdefault(p, []).append(o.object_id)
    return contents


def _objects_plan(w: World):
    """What `objects_metadata` needs of the world's objects state, whatever the agent's pose:
    the listed records, their ids, and per record its cached record part and contents (or the
    held object's record). Remembered while the same records, hand and filter stand."""
    records = tuple(w.objects.values())
    flt = getattr(w, "object_filter", None)
    key = (getattr(w, "generation", None), w.held, flt)
    memo = w._cache.get("objects_plan")
    if (
        memo is not None
        and memo[0] == key
        and len(memo[1]) == len(records)
        and all(map(is_, memo[1], records))
    ):
        return memo[2]
    objs = [o for o in records if o.enabled]
    if flt is not None:
        objs = [o for o in objs if o.object_id in flt]
    contents = receptacle_contents(w)
    # (object id, (type, position, (record part, contents), box geometry)), or (held record, None)
    rows = []
    for o in objs:
        if o.object_id == w.held:
            rows.append((o, None))
            continue
        rec = _record_part(o)
        base, (pos, _lists, geom) = rec
        rec_ids = tuple(contents.get(o.object_id, ())) if base["receptacle"] else None
        rows.append((o.object_id, (base["objectType"], pos, (rec, rec_ids), geom)))
    plan = (tuple(o.object_id for o in objs), tuple(rows), contents)
    w._cache["objects_plan"] = (key, records, plan)
    return plan


def objects_metadata(w: World) -> List[Dict[str, Any]]:
    ids, rows, contents = _objects_plan(w)
    vis = _pose_visibility(w, ids)
    a = w.agent
    ax, ay, az = a.x, a.y, a.z
    get = vis.get
    out = []
    append = out.append
    for first, part in rows:
        if part is None:  # the held object: an eager dict
            append(object_metadata(w, first, vis, contents))
            continue
        otype, pos, src, geom = part
        seen = get(first, _UNSEEN)
        # what `_lazy` makes, inlined (the loop runs for every object every step)
        d = ObjectMetadata(
            {
                "objectId": first,
                "objectType": otype,
                "visible": seen[0],
                "isInteractable": seen[1],
                "distance": float(
                    ((pos[0] - ax) ** 2 + (pos[1] - ay) ** 2 + (pos[2] - az) ** 2) ** 0.5
                ),
            }
        )
        d._src = src
        d._geom = geom
        append(d)
    return out


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


_COLORS: Dict[int, Tuple[Any, Tuple[Tuple[Tuple[int, int, int], str], ...]]] = {}


def colors_metadata(names: Sequence[str], palette) -> List[Dict[str, Any]]:
    """THOR's `colors` list (instance colour -> name), fresh dicts per call; the colours are
    converted once per id table (the controller keeps one table while the rendered objects stay
    the same)."""
    hit = _COLORS.get(id(palette))
    if hit is None or hit[0] is not palette:
        rows = tuple((tuple(int(c) for c in palette[i]), n) for i, n in enumerate(names) if i)
        if len(_COLORS) >= 64:
            _COLORS.clear()
        hit = _COLORS[id(palette)] = (palette, rows)
    return [{"color": list(c), "name": n} for c, n in hit[1]]
