"""Scene-setup actions (no visibility needed): poses, states, random spawns, removal."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..constants import OUTSIDE_RECEPTACLES, placement_allowed, OBJECT_SPECIFIC_RECEPTACLES
from ..geometry import Box
from ..objects import SimObject
from ..thor2_rules import use_thor2_rules
from ..thor2_types import thor2_pose_rotation
from .. import physics, posed_configs
from ..world import World
from .interaction import break_object, set_openness, slice_object
from .registry import (
    FLAG,
    REQUIRED,
    TEXT,
    VEC,
    ActionFailed,
    InvalidArguments,
    Kind,
    ListOf,
    Num,
    PartialFailure,
    Record,
    Verbatim,
    action,
    vec,
)
from .guard import house_bounds
from .posed_surfaces import expose_resting_surfaces, redrop_on_lowered


class _ObjectPoses(Kind):
    """SetObjectPoses' list: THOR's own message for a non-list, then per-entry checks."""

    what = "List<ObjectPose>"
    _entries = ListOf(
        Record(
            "ObjectPose",
            {"objectName": TEXT, "name": TEXT, "position": VEC, "rotation": VEC},
            one_of=("objectName", "name"),
        )
    )

    def problem(self, v):
        if not isinstance(v, (list, tuple)) or any(not isinstance(p, dict) for p in v):
            return Verbatim(
                "objectPoses was not initialized correctly. Please make sure each "
                "element in the objectPoses list is initialized."
            )
        return self._entries.problem(v)


_STATE_SPEC = Record(
    "SetObjectStates",
    {
        "objectType": TEXT,
        "stateChange": TEXT,
        **{
            k: FLAG
            for k in (
                "isOpen",
                "isToggled",
                "isBroken",
                "isFilledWithLiquid",
                "isDirty",
                "isCooked",
                "isSliced",
                "isUsedUp",
            )
        },
    },
    nullable=("objectType", "stateChange"),
)
_TOGGLES = ListOf(
    Record("ObjectToggle", {"objectType": TEXT, "isOn": FLAG}, required=("objectType", "isOn"))
)
# Each duplicate is a whole object; a cap keeps a typo (count=1e6) from eating the machine.
MAX_DUPLICATES = 100
_DUPLICATES = ListOf(
    Record(
        "ObjectTypeCount",
        {"objectType": TEXT, "count": Num(0, MAX_DUPLICATES, integer=True)},
        required=("objectType", "count"),
    )
)


def _lookup(w: World, object_id: str, msg: Optional[str] = None) -> SimObject:
    obj = w.get(object_id)
    if obj is None:
        raise ActionFailed(msg or f"Cannot find object with id {object_id}")
    return obj


def _name_prefix(name: str) -> str:
    return name.split("_")[0].lower()


def _entry_name(entry: Dict[str, Any]) -> Optional[str]:
    return entry.get("objectName") or entry.get("name")


def match_pose_entries(w: World, entries: List[Dict[str, Any]]) -> List[Optional[SimObject]]:
    """Map dataset pose entries to scene objects: by name, else by type in a fixed order.

    Datasets recorded on other THOR builds name objects with other hash suffixes
    (`Bowl_21eb5c01` vs `Bowl_072da5e8`), so a name often matches no object here. The rule:

    1. An entry whose name is a pickupable/moveable object's current name takes that object
       (same build, or a name this world adopted earlier).
    2. The other entries are grouped by name prefix (the object type). Within a group the
       distinct dataset names, sorted, are paired in order with the still unclaimed
       pickupable/moveable objects of that type, sorted by objectId (string order). THOR
       objectIds are `Type|x|y|z` of the object's initial position in the freshly loaded
       scene, so this order is the scene's own and is the same in every process; extra names
       go unmatched, extra objects stay unlisted.
    3. A matched object takes the dataset's name, so that later calls in this world (the
       unshuffle start after the walkthrough goal) and metadata readers see one identity.

    Entry positions are deliberately not used: in the rearrangement and ALFRED datasets they
    are the randomized episode poses, which say nothing about which same-type object is
    meant, and matching by them made the mapping change from episode to episode (and, when
    it was kept across resets, depend on which episode ran first). The pairing depends only
    on the entries' names and the scene, so every episode of a scene gets the same one.
    """
    out: List[Optional[SimObject]] = [None] * len(entries)
    used: set = set()
    pending: Dict[str, List[int]] = {}
    for i, e in enumerate(entries):
        name = _entry_name(e)
        obj = w.by_name(name) if name else None
        if obj is not None and (obj.pickupable or obj.moveable):
            out[i] = obj
            used.add(obj.object_id)
        elif obj is None and name:
            pending.setdefault(_name_prefix(name), []).append(i)
    adopted = set(w.name_aliases.values())
    for prefix, idxs in sorted(pending.items()):
        names = sorted(
            {_entry_name(entries[i]) for i in idxs}
        )  # a name listed twice asks for a copy
        cands = sorted(
            [
                o
                for o in w.objects.values()
                if (o.pickupable or o.moveable)
                and o.object_id not in used
                and o.name not in adopted
                and (_name_prefix(o.name) == prefix or o.object_type.lower() == prefix)
            ],
            key=lambda o: (_name_prefix(o.name) != prefix, o.object_id),
        )
        for new_name, cand in zip(names, cands):
            obj = w.update(cand.object_id, name=new_name)
            w.name_aliases[cand.object_id] = new_name
            used.add(obj.object_id)
            for j in idxs:
                if _entry_name(entries[j]) == new_name:
                    out[j] = obj
    return out


@action(
    "SetObjectPoses",
    lenient=True,
    kinds=dict(objectPoses=_ObjectPoses()),
    bounded=False,
    objectPoses=REQUIRED,
    placeStationary=True,
    skipMoveable=False,
    thor2Poses=False,
)
def set_object_poses(
    w: World, objectPoses, placeStationary=True, skipMoveable=False, thor2Poses=False, **_
) -> None:
    if not isinstance(objectPoses, (list, tuple)) or any(
        not isinstance(p, dict) for p in objectPoses
    ):
        raise ActionFailed(
            "objectPoses was not initialized correctly. Please make sure each element in the objectPoses list is initialized."
        )
    if (
        thor2Poses and w.profile.layout_clears_moveables
    ):  # a THOR 2.1.0 trajectory's poses (thor2_rules)
        use_thor2_rules(w)
    errors: List[str] = []
    placed: Dict[str, int] = {}
    plan = []
    matches = match_pose_entries(w, list(objectPoses))
    for entry, obj in zip(objectPoses, matches):
        name = entry.get("objectName") or entry.get("name")
        if obj is None:
            static = w.by_name(name) if name else None
            if static is not None:
                errors.append(
                    f"{name} is not a Moveable or Pickupable object. SetObjectPoses only works with Moveable and Pickupable sim objects."
                )
            else:
                errors.append(f"No Pickupable or Moveable object of name {name} found in scene.")
            continue
        pos = vec(entry.get("position", obj.position), "position")
        rot = vec(entry.get("rotation", obj.rotation), "rotation")
        if w.profile.layout_clears_moveables:
            rot = thor2_pose_rotation(obj.object_type, obj.rotation, rot, thor2=bool(thor2Poses))
        count = placed.get(obj.object_id, 0)
        placed[obj.object_id] = count + 1
        plan.append((obj, pos, rot, count))
    if w.held is not None:
        w.update(w.held, is_picked_up=False)
        w.held = None
    listed = {o.object_id for o, _, _, c in plan if c == 0}
    for o in list(w.objects.values()):
        if (o.pickupable or (o.moveable and not skipMoveable)) and o.object_id not in listed:
            if o.enabled:
                w.update(o.object_id, enabled=False, parents=())
    placed_ids: List[Tuple[str, Any]] = []  # (id, position) of every listed object and copy
    for obj, pos, rot, count in plan:
        if count == 0:
            w.update(obj.object_id, position=pos, rotation=rot, enabled=True, is_picked_up=False)
            placed_ids.append((obj.object_id, pos))
        else:
            # a copy is a new object at its own pose: it starts with no parents (never the
            # original's) and gets them below from where it lies, like every listed object
            copy_id = f"{obj.object_id}_copy_{count - 1}"
            copy = w.objects[obj.object_id].with_changes(
                object_id=copy_id,
                name=f"{obj.name}_copy_{count - 1}",
                position=pos,
                rotation=rot,
                enabled=True,
                is_picked_up=False,
                parents=(),
            )
            w.add(copy)
            w.update(copy_id, parents=w.infer_parents(copy))
            placed_ids.append((copy_id, pos))
    # Parents from the new poses, not the scene's previous ones: settling leaves things inside
    # drawers alone, so a stale drawer parent would skip the settle in one episode and not another.
    _refresh_parents(w, [oid for oid, _ in placed_ids])
    posed_bottoms = (
        {oid: float(w.objects[oid].aabb[0][1]) for oid, _ in placed_ids} if thor2Poses else None
    )
    for oid, _ in sorted(placed_ids, key=lambda e: e[1][1]):  # lowest first: supports settle first
        physics.settle(w, oid)
    _refresh_parents(w, [oid for oid, _ in placed_ids])
    if w.profile.layout_clears_moveables:  # poses from THOR 2.1.0 (ALFRED), not today's scene files
        lowered = expose_resting_surfaces(
            w, [oid for oid, _ in placed_ids], floor_shows_none=thor2Poses, bottoms=posed_bottoms
        )
        if thor2Poses:
            _refresh_parents(w, redrop_on_lowered(w, placed_ids, lowered))
    physics.apply_state_rules(w)
    posed_configs.record(w, [oid for oid, _ in placed_ids])
    if errors:
        raise PartialFailure("\n".join(errors))


def _refresh_parents(w: World, ids: List[str]) -> None:
    for oid in ids:
        o = w.objects[oid]
        w.update(oid, parents=w.infer_parents(o))


_STATE_FIELDS = {
    "openable": ("isOpen", None),
    "toggleable": ("isToggled", "is_toggled"),
    "breakable": ("isBroken", None),
    "canFillWithLiquid": ("isFilledWithLiquid", None),
    "dirtyable": ("isDirty", "is_dirty"),
    "cookable": ("isCooked", "is_cooked"),
    "sliceable": ("isSliced", None),
    "canBeUsedUp": ("isUsedUp", "is_used_up"),
}


def _apply_state(w: World, obj: SimObject, change: str, value: bool) -> None:
    if change == "openable":
        set_openness(w, obj, 1.0 if value else 0.0)
    elif change == "breakable":
        if value and not obj.is_broken:
            break_object(w, obj.object_id)
    elif change == "sliceable":
        if value and not obj.is_sliced:
            slice_object(w, obj.object_id)
    elif change == "canFillWithLiquid":
        w.update(obj.object_id, is_filled=value, fill_liquid="water" if value else None)
    elif change == "cookable":
        if value:
            w.update(obj.object_id, is_cooked=True)
    elif change == "toggleable":
        # like ToggleObjectOn/Off, a StoveKnob's burner follows it
        w.update(obj.object_id, is_toggled=value)
        for cid in obj.controlled_objects or ():
            if cid in w.objects:
                w.update(cid, is_toggled=value)
    else:
        w.update(obj.object_id, **{_STATE_FIELDS[change][1]: value})


@action(
    "SetObjectStates", lenient=True, kinds=dict(SetObjectStates=_STATE_SPEC), SetObjectStates=None
)
def set_object_states(w: World, SetObjectStates=None, **_) -> None:
    spec = SetObjectStates
    if not isinstance(spec, dict):
        raise ActionFailed("action.SetObjectStates is null or not initialized!")
    otype, change = spec.get("objectType"), spec.get("stateChange")
    if otype is None and change is None:
        raise ActionFailed(
            "action.SetObjectStates has objectType and stateChange strings null. Please pass in valid strings."
        )
    if change is None or change not in _STATE_FIELDS:
        raise ActionFailed(
            "action.SetObjectStates is missing stateChange string. If setting objects by objectType, Please specify both an objectType and a stateChange compatible with that objectType to set."
        )
    key = _STATE_FIELDS[change][0]
    if key not in spec:
        raise ActionFailed(f"action.SetObjectStates is missing the value '{key}'")
    for o in list(w.objects.values()):
        if (otype is None or o.object_type == otype) and o.flags.get(change) and o.enabled:
            _apply_state(w, w.objects[o.object_id], change, bool(spec[key]))
    physics.apply_state_rules(w)


@action("SetObjectToggles", kinds=dict(objectToggles=_TOGGLES), objectToggles=REQUIRED)
def set_object_toggles(w: World, objectToggles) -> None:
    """ALFRED-era (THOR 2.1.0) action: set every toggleable of a type on or off."""
    for entry in objectToggles or []:
        t, on = entry.get("objectType"), bool(entry.get("isOn"))
        for o in list(w.objects.values()):
            if o.object_type == t and o.flags.get("toggleable"):
                w.update(o.object_id, is_toggled=on)
                for cid in o.controlled_objects or ():
                    if cid in w.objects:
                        w.update(cid, is_toggled=on)
    physics.apply_state_rules(w)


@action("SetStateOfAllObjects", StateChange=REQUIRED, forceAction=False)
def set_state_of_all_objects(w: World, StateChange, forceAction=False) -> None:
    """ALFRED-era action: forceAction selects the value (CanBeDirty+True = make all dirty)."""
    field = {
        "CanBeDirty": ("dirtyable", "is_dirty"),
        "CanBeFilled": ("canFillWithLiquid", "is_filled"),
        "CanBeUsedUp": ("canBeUsedUp", "is_used_up"),
    }.get(StateChange)
    if field is None:
        raise ActionFailed(f"Invalid StateChange: {StateChange}")
    flag, attr = field
    for o in list(w.objects.values()):
        if o.flags.get(flag):
            changes = {attr: bool(forceAction)}
            if attr == "is_filled":
                changes["fill_liquid"] = "water" if forceAction else None
            w.update(o.object_id, **changes)


@action(
    "TeleportObject",
    objectId=REQUIRED,
    position=None,
    positions=None,
    x=None,
    y=None,
    z=None,
    rotation=None,
    forceAction=False,
    forceKinematic=False,
    allowTeleportOutOfHand=False,
    makeUnbreakable=False,
)
def teleport_object(
    w: World,
    objectId,
    position=None,
    positions=None,
    x=None,
    y=None,
    z=None,
    rotation=None,
    forceAction=False,
    forceKinematic=False,
    allowTeleportOutOfHand=False,
    makeUnbreakable=False,
):
    obj = _lookup(w, objectId)
    if obj.object_id == w.held and not allowTeleportOutOfHand:
        raise ActionFailed("Cannot teleport object in hand.")
    if positions is not None:
        cands = [vec(p, "positions") for p in positions]
    elif position is not None:
        cands = [vec(position, "position")]
    else:
        cands = [
            (
                obj.position[0] if x is None else float(x),
                obj.position[1] if y is None else float(y),
                obj.position[2] if z is None else float(z),
            )
        ]
    rot = (
        obj.rotation
        if rotation is None
        else (
            (0.0, float(rotation), 0.0)
            if isinstance(rotation, (int, float))
            else vec(rotation, "rotation")
        )
    )
    ignore = [obj.object_id] + w.descendants(obj.object_id)
    last = None
    outside = None
    lo, hi = house_bounds(w)
    for pos in cands:
        if not (lo[0] <= pos[0] <= hi[0] and lo[1] <= pos[1] <= hi[1] and lo[2] <= pos[2] <= hi[2]):
            outside = pos  # objects must stay in the house, even with forceAction
            continue
        box = physics.pose_box(obj, pos, rot)
        hit = None if forceAction else _teleport_collision(w, obj.object_id, box, pos, rot, ignore)
        if hit is not None:
            last = hit
            continue
        if obj.object_id == w.held:
            w.held = None
        new_pos = np.asarray(pos, float)
        if not forceKinematic:
            y_rest, _ = physics.drop_height(w, box, ignore)
            new_pos[1] -= box.aabb()[0][1] - y_rest - physics.REST_GAP
            box = physics.pose_box(obj, new_pos, rot)
        physics.move_with_contents(
            w,
            obj.object_id,
            new_pos,
            rot,
            is_picked_up=False,
            unbreakable=obj.unbreakable or bool(makeUnbreakable),
        )
        if not forceKinematic:  # kinematic objects stay exactly where they were put (THOR)
            physics.settle(w, obj.object_id)
        moved = w.objects[obj.object_id]
        w.update(obj.object_id, parents=w.infer_parents(moved))
        new_pos = np.asarray(moved.position)
        physics.apply_state_rules(w)
        return {"x": float(new_pos[0]), "y": float(new_pos[1]), "z": float(new_pos[2])}
    if last is None and outside is not None:
        raise ActionFailed(
            f"Position coordinate ({_fmt_xyz(outside)}) is not within scene bounds "
            f"({_fmt_xyz(lo)} to {_fmt_xyz(hi)})"
        )
    raise ActionFailed(
        f"{obj.object_id} is colliding with {last.object_id if last else '?'} after teleport."
    )


def _teleport_collision(w: World, oid: str, box, pos, rot, ignore: List[str]):
    """What the object would collide with at (pos, rot); objects that stood with it like that
    in a configuration the caller's data set (SetObjectPoses, i.e. THOR) are no collision."""
    hit = w.overlapping(box, ignore=ignore, pass_containing=True)
    if hit is None:
        return None
    together = posed_configs.co_posed(w, oid, pos, rot)
    if not together:
        return hit
    return w.overlapping(box, ignore=list(ignore) + sorted(together), pass_containing=True)


def _fmt_xyz(p) -> str:
    return ", ".join(f"{float(v):.4f}" for v in p)


@action(
    "PlaceObjectAtPoint",
    objectId=REQUIRED,
    position=None,
    positions=None,
    rotation=None,
    forceKinematic=False,
)
def place_object_at_point(
    w: World, objectId, position=None, positions=None, rotation=None, forceKinematic=False
):
    obj = w.get(objectId)
    if obj is None:
        raise ActionFailed(f"Cannot find object with id {objectId}.")
    if position is None and not positions:
        raise InvalidArguments(
            "action: PlaceObjectAtPoint is missing the following arguments: position",
            "MissingArguments",
        )
    cands = [vec(p, "positions") for p in positions] if positions else [vec(position, "position")]
    rot = obj.rotation if rotation is None else vec(rotation, "rotation")
    ignore = [obj.object_id] + w.descendants(obj.object_id)
    for p in cands:
        lo, hi = w.room_lo, w.room_hi
        if not (lo[0] <= p[0] <= hi[0] and lo[2] <= p[2] <= hi[2]):
            raise ActionFailed(f"Position coordinate ({p}) is not within scene bounds ({lo}, {hi})")
        probe = physics.pose_box(obj, p, rot)
        y, _ = physics.drop_height(
            w, Box(probe.center + np.array([0, 10.0, 0]), probe.half, probe.rot), ignore
        )
        pos = np.asarray(p, float)
        pos[1] += y - probe.aabb()[0][1] + 0.005
        box = physics.pose_box(obj, pos, rot)
        hit = w.overlapping(box, ignore=ignore)
        if hit is not None:
            raise ActionFailed(
                f"Spawn area not clear ({hit.object_id}) is in the way), can't place object at that point"
            )
        if obj.object_id == w.held:
            w.held = None
        physics.move_with_contents(
            w, obj.object_id, pos, rot, is_picked_up=False, parents=w.infer_parents(obj, box)
        )
        return {"x": float(pos[0]), "y": float(pos[1]), "z": float(pos[2])}


@action(
    "InitialRandomSpawn",
    kinds=dict(numDuplicatesOfType=_DUPLICATES),
    randomSeed=0,
    forceVisible=False,
    numPlacementAttempts=5,
    placeStationary=True,
    numDuplicatesOfType=None,
    excludedReceptacles=None,
    excludedObjectIds=None,
    objectIds=None,
    receptacleObjectIds=None,
    allowFloor=False,
    allowMoveable=False,
)
def initial_random_spawn(
    w: World,
    randomSeed=0,
    forceVisible=False,
    numPlacementAttempts=5,
    placeStationary=True,
    numDuplicatesOfType=None,
    excludedReceptacles=None,
    excludedObjectIds=None,
    objectIds=None,
    receptacleObjectIds=None,
    allowFloor=False,
    allowMoveable=False,
) -> None:
    if int(numPlacementAttempts) <= 0:
        raise ActionFailed("numPlacementAttempts must be a positive integer.")
    known_types = {o.object_type for o in w.objects.values()}
    for t in excludedReceptacles or []:
        if (
            t not in known_types
            and t not in OBJECT_SPECIFIC_RECEPTACLES
            and t not in OUTSIDE_RECEPTACLES
        ):
            raise ActionFailed(f"invalid Object Type used in excludedReceptacles array: {t}")
    for oid in excludedObjectIds or []:
        if oid not in w.objects:
            raise ActionFailed(f"Cannot find sim object with id '{oid}'")
    rng = np.random.default_rng(int(randomSeed) % 2**63)  # THOR takes any int; numpy no negatives
    if w.held is not None:
        w.update(w.held, is_picked_up=False)
        w.held = None
    excluded_r = set(excludedReceptacles or [])
    if not allowFloor:
        excluded_r.add("Floor")
    excluded_o = set(excludedObjectIds or [])
    for spec in numDuplicatesOfType or []:
        t, n = spec.get("objectType"), int(spec.get("count", 0))
        same = sorted(
            [o for o in w.objects.values() if o.object_type == t and o.pickupable],
            key=lambda o: o.object_id,
        )
        for j in range(len(same), n):
            if not same:
                break
            src = same[0]
            w.add(
                src.with_changes(
                    object_id=f"{src.object_id}_copy_{j}", name=f"{src.name}_random_copy_{j}"
                )
            )
    movers = sorted(
        [
            o
            for o in w.objects.values()
            if o.enabled
            and (o.pickupable or (allowMoveable and o.moveable))
            and o.object_id not in excluded_o
            and (objectIds is None or o.object_id in objectIds)
        ],
        key=lambda o: o.object_id,
    )
    movers = [movers[i] for i in rng.permutation(len(movers))]
    recs = sorted(
        [
            o
            for o in w.objects.values()
            if o.enabled
            and o.flags.get("receptacle")
            and o.object_type not in excluded_r
            and not o.is_picked_up
            and (receptacleObjectIds is None or o.object_id in receptacleObjectIds)
            and (not forceVisible or o.object_type in OUTSIDE_RECEPTACLES)
        ],
        key=lambda o: o.object_id,
    )
    moving = {m.object_id for m in movers}
    for m in movers:
        m = w.objects[m.object_id]
        order = [recs[i] for i in rng.permutation(len(recs))]
        for r in order:
            r = w.objects[r.object_id]
            if r.object_id in moving and r.pickupable and w.contents(r.object_id):
                continue
            if r.object_id == m.object_id or r.object_id in w.descendants(m.object_id):
                continue
            if not placement_allowed(m.object_type, r.object_type):
                continue
            if r.object_type in OBJECT_SPECIFIC_RECEPTACLES:
                snap = physics.snap_to_attach_point(w, m, r)
                if snap in (None, "full"):
                    continue
                pose = snap
            else:
                if r.flags.get("openable") and r.object_type in ("Box",) and not r.is_open:
                    continue
                pose = physics.find_placement(
                    w,
                    m,
                    r,
                    physics.PlacementSearch(
                        agent_xz=None,
                        max_dist=None,
                        rng=rng,
                        attempts=int(numPlacementAttempts),
                        yaws=[m.rotation[1] + 90.0 * k for k in rng.permutation(4)],
                        spawn=True,
                    ),
                )
            if pose is None:
                continue
            physics.move_with_contents(w, m.object_id, pose[0], pose[1], parents=(r.object_id,))
            break
    physics.apply_state_rules(w)


@action("RemoveFromScene", objectId=None, objectIds=None)
def remove_from_scene(w: World, objectId=None, objectIds=None) -> None:
    ids = [objectId] if objectId is not None else list(dict.fromkeys(objectIds or []))  # dedupe
    if not ids:
        raise ActionFailed("objectIds must not be empty!")
    for oid in ids:
        _lookup(w, oid, f"objectId: {oid} is not the objectId on any object in the scene!")
    for oid in ids:
        if w.held == oid:
            w.held = None
        for cid in w.descendants(oid):
            c = w.objects[cid]
            w.update(cid, parents=tuple(p for p in c.parents if p != oid))
        w.remove(oid)


@action("DisableObject", objectId=REQUIRED)
def disable_object(w: World, objectId) -> None:
    if objectId not in w.objects:
        raise ActionFailed("")
    w.update(objectId, enabled=False)


@action("EnableObject", objectId=REQUIRED)
def enable_object(w: World, objectId) -> None:
    if objectId not in w.objects:
        raise ActionFailed("")
    w.update(objectId, enabled=True)


@action("MakeAllObjectsUnbreakable")
def make_all_unbreakable(w: World) -> None:
    for o in list(w.objects.values()):
        if o.flags.get("breakable") and not o.unbreakable:
            w.update(o.object_id, unbreakable=True)


@action("MakeAllObjectsBreakable")
def make_all_breakable(w: World) -> None:
    for o in list(w.objects.values()):
        if o.unbreakable:
            w.update(o.object_id, unbreakable=False)


@action("MakeObjectsOfTypeUnbreakable", objectType=REQUIRED)
def make_type_unbreakable(w: World, objectType) -> None:
    for o in list(w.objects.values()):
        if o.object_type == objectType:
            w.update(o.object_id, unbreakable=True)


@action("MakeObjectBreakable", objectId=REQUIRED)
def make_object_breakable(w: World, objectId) -> None:
    if objectId not in w.objects:
        raise ActionFailed(f"Object ID {objectId} appears to be invalid.")
    w.update(objectId, unbreakable=False)


@action("PausePhysicsAutoSim")
def pause_physics(w: World) -> None:
    w.physics_auto_sim = False


@action("UnpausePhysicsAutoSim")
def unpause_physics(w: World) -> None:
    w.physics_auto_sim = True


@action("AdvancePhysicsStep", timeStep=0.02, simSeconds=None, allowAutoSimulation=False)
def advance_physics_step(
    w: World, timeStep=0.02, simSeconds=None, allowAutoSimulation=False
) -> None:
    if w.physics_auto_sim and not allowAutoSimulation:
        raise ActionFailed(
            "AdvancePhysicsStep can only be called if Physics AutoSimulation is currently paused or if you "
            "have passed allowAutoSimulation=true! Either use the PausePhysicsAutoSim() action first, or if "
            "you already used it, Physics AutoSimulation has been turned back on already."
        )
    if not 0.0 < float(timeStep) <= 0.05:
        raise ActionFailed(
            "Please use a timeStep between 0.0f and 0.05f. Larger timeSteps produce inconsistent simulation results."
        )


@action("Pass")
@action("Done")
@action("NoOp")
def no_op(w: World) -> None:
    return None


@action("SetObjectFilter", objectIds=REQUIRED)
def set_object_filter(w: World, objectIds) -> None:
    w.object_filter = frozenset(objectIds)


@action("SetObjectFilterForType", objectTypes=REQUIRED)
def set_object_filter_for_type(w: World, objectTypes) -> None:
    types = set(objectTypes)
    w.object_filter = frozenset(o.object_id for o in w.objects.values() if o.object_type in types)


@action("ResetObjectFilter")
def reset_object_filter(w: World) -> None:
    w.object_filter = None


@action("GetScenesInBuild")
def get_scenes_in_build(w: World) -> List[str]:
    from ..constants import ithor_scene_names

    return sorted(f"{s}_physics" for s in ithor_scene_names())


@action("SetRandomSeed", seed=REQUIRED)
def set_random_seed(w: World, seed) -> None:
    w.seed = int(seed)
