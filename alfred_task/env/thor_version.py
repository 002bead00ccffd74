"""Whether a trajectory was recorded in THOR 2.1.0 (ALFRED's build) rather than on today's scenes.

thor_lite applies its THOR 2.1.0 rules only to such trajectories, so data generated here keeps
the rules it was made with. Two records tell: a recorded objectId that today's scene lacks
(2.1.0's `Type|x|y|z` of an object that moved since), and the posed object names. ALFRED's
`scene.object_poses` name 2.1.0's scene assets (`Type_hash`); later builds gave every asset a
new name, so in a real trajectory (all 316 of the train sample) no posed name is one of today's,
even where every recorded id still is (a plunger that never moved, FloorPlan402). Data generated
here poses today's names, plus `*_random_copy_N` duplicates named after them.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable

from alfred_task.env.furniture_poses import recorded_ids

#: more than this share of the posed names unknown today means another build's scene
FOREIGN_NAME_SHARE = 0.5


def foreign_name_share(traj: Dict[str, Any], objects: Iterable[Dict[str, Any]]) -> float:
    """Share of the entries of `scene.object_poses` whose objectName today's scene (`objects`,
    metadata dicts) lacks; 0 with no poses."""
    names = {o["name"] for o in objects}
    posed = [p.get("objectName") for p in (traj.get("scene") or {}).get("object_poses") or []]
    return sum(n not in names for n in posed) / len(posed) if posed else 0.0


def recorded_in_thor2(traj: Dict[str, Any], objects: Iterable[Dict[str, Any]]) -> bool:
    """True when the trajectory comes from THOR 2.1.0: a recorded objectId today's scene lacks,
    or most posed object names unknown today (`FOREIGN_NAME_SHARE`)."""
    objs = list(objects)
    today = {o["objectId"] for o in objs}
    if any(i not in today for i in recorded_ids(traj)):
        return True
    return foreign_name_share(traj, objs) > FOREIGN_NAME_SHARE
