"""THOR 2.1.0's type for one piece of furniture that a later build renamed, read from its id.

ALFRED's generator recorded an interaction pose for every receptacle of each THOR 2.1.0 scene
(`FloorPlanN-openable.json`, beside its layouts), keyed by 2.1.0's objectId `Type|x|y|z`. Where
such an id names a table-like type (`THOR2_TABLE_TYPES`), no object of that type stands there
today and exactly one of today's tables stands within RENAME_SPOT of it, today's table is that
2.1.0 piece under a new name (FloorPlan307's SideTable is a Desk today, FloorPlan211's a
DiningTable). ALFRED's goals name receptacles by type, so it takes the 2.1.0 type and objectId
prefix, drawn as today's asset (`shape_type`). `thor2_types` renames whole types where a
scene's 2.1.0 type list is unambiguous; this covers a scene that holds both types.
"""

from __future__ import annotations

from typing import Dict, Iterable, Mapping

import numpy as np

from .constants import TABLE_TOPS
from .objects import SimObject

#: 2.1.0's id this near (m, 3D) to today's table is the same piece
RENAME_SPOT = 0.05
#: a piece of the 2.1.0 type this near (m, 3D) means nothing was renamed there
SAME_TYPE_SPOT = 0.15
#: THOR 2.1.0 types a table of today may have carried
THOR2_TABLE_TYPES = TABLE_TOPS | {"Dresser", "Cart"}


def _xyz(object_id: str):
    parts = object_id.split("|")
    if len(parts) != 4:
        return None
    try:
        return parts[0], np.array([float(v) for v in parts[1:]])
    except ValueError:
        return None


def positional_renames(objs: Iterable[SimObject], thor2_ids: Iterable[str]) -> Dict[str, str]:
    """today's objectId -> 2.1.0 type, for the tables a 2.1.0 id of another type names."""
    tables = [o for o in objs if o.object_type in TABLE_TOPS and not o.pickupable]
    out: Dict[str, str] = {}
    for rid in thor2_ids:
        parsed = _xyz(rid)
        if parsed is None or parsed[0] not in THOR2_TABLE_TYPES:
            continue
        t, p = parsed
        near = [(float(np.linalg.norm(np.asarray(o.position) - p)), o) for o in objs]
        if any(d < SAME_TYPE_SPOT and o.object_type == t for d, o in near):
            continue
        hits = [o for d, o in near if d < RENAME_SPOT and o in tables]
        if len(hits) == 1 and hits[0].object_id.startswith(hits[0].object_type):
            out[hits[0].object_id] = t
    return out


def renamed(objs: Mapping[str, SimObject], renames: Mapping[str, str]) -> Dict[str, SimObject]:
    """The objects with the renamed tables' types and ids; parent links follow the new ids."""
    ids = {oid: renames[oid] + oid[len(objs[oid].object_type) :] for oid in renames}
    out: Dict[str, SimObject] = {}
    for oid, o in objs.items():
        changes = {"parents": tuple(ids.get(p, p) for p in o.parents)}
        if oid in ids:
            changes.update(
                object_id=ids[oid],
                object_type=renames[oid],
                shape_type=o.shape_type or o.object_type,
            )
        new = o.with_changes(**changes)
        out[new.object_id] = new
    return out
