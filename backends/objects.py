"""Find the object a dataset refers to, on any THOR build (works on metadata dicts).

Lives with the backends, not in thor_lite, because both backends return the same metadata
dicts and task code must resolve dataset names without importing the embedded simulator.

Datasets recorded on another THOR build carry other name hashes and, for a few objects,
slightly different ids. Resolution order: exact name, exact objectId, then the nearest
object of the same type to the position encoded in the objectId (or given explicitly).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple


def position_from_object_id(object_id: str) -> Optional[Tuple[float, float, float]]:
    """The (x, y, z) encoded in a THOR objectId ("Type|x|y|z"), or None if it has none."""
    parts = object_id.split("|")
    if len(parts) < 4:
        return None
    try:
        return (float(parts[1]), float(parts[2]), float(parts[3]))
    except ValueError:
        return None


# Object-name prefixes that are not the object's type (THOR's asset names, kept from the builds
# ALFRED and the rearrangement datasets were recorded on): name prefix -> objectType.
NAME_PREFIX_TYPES: Dict[str, str] = {"Glassbottle": "Bottle"}


def type_from_name(name: str) -> str:
    """The objectType a THOR object name (`<Prefix>_<hash>`) stands for."""
    prefix = name.split("_")[0]
    return NAME_PREFIX_TYPES.get(prefix, prefix)


def find_object(
    objects: Iterable[Dict[str, Any]],
    name: Optional[str] = None,
    object_id: Optional[str] = None,
    object_type: Optional[str] = None,
    position: Optional[Sequence[float]] = None,
    max_distance: float = 0.5,
) -> Optional[Dict[str, Any]]:
    """The object meant by a dataset's name/objectId (or type + position), or None."""
    objs = list(objects)
    if name is not None:
        for o in objs:
            if o["name"] == name:
                return o
    if object_id is not None:
        for o in objs:
            if o["objectId"] == object_id:
                return o
        object_type = object_type or object_id.split("|")[0]
        position = position if position is not None else position_from_object_id(object_id)
    if object_type is None and name is not None:
        object_type = type_from_name(name)
    if object_type is None or position is None:
        return None
    best, best_d = None, math.inf
    for o in objs:
        if o["objectType"] != object_type:
            continue
        ref = position_from_object_id(o["objectId"]) or (
            o["position"]["x"],
            o["position"]["y"],
            o["position"]["z"],
        )
        d = math.dist(ref, position)
        if d < best_d:
            best, best_d = o, d
    return best if best_d <= max_distance else None
