"""Object interactions: picking up, putting, dropping, opening, toggling, slicing, ..."""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ..constants import (
    BASIN_FIXTURES,
    COOKABLE_TYPES,
    DRAWER_SLIDE,
    MUST_BE_OPEN_TO_PUT,
    OBJECT_SPECIFIC_RECEPTACLES,
    OFF_TO_OPEN,
    PUT_ANYWHERE_RECEPTACLES,
    SLICE_COUNT,
    SLICED_TYPE,
    placement_allowed,
)
from ..geometry import Box, camera_tan_aspect, euler_to_matrix
from ..objects import SimObject
from .. import physics
from ..world import World
from .interaction_queries import camera_sees, camera_sees_spot
from .registry import REQUIRED, SCREEN, ActionFailed, action

_TARGET = dict(objectId=None, x=None, y=None, forceAction=False)
_SCREEN_XY = dict(x=SCREEN, y=SCREEN)  # x, y here are viewport points, not world metres


def resolve_target(
    w: World,
    objectId: Optional[str],
    x: Optional[float],
    y: Optional[float],
    forceAction: bool,
    action_name: str = "",
) -> SimObject:
    """THOR's id lookup + interactable check (or a screen-point ray cast)."""
    if objectId is None and x is not None and y is not None:
        oid = object_at_screen_point(w, float(x), float(y))
        if oid is None:
            raise ActionFailed("No valid object found at the screen point")
        objectId = oid
    if objectId is None:
        from .registry import InvalidArguments

        raise InvalidArguments(
            f"action: {action_name} is missing the following arguments: objectId",
            "MissingArguments",
        )
    obj = w.get(objectId)
    if obj is None or not obj.enabled:
        raise ActionFailed(f"objectId: {objectId} is not the objectId on any object in the scene!")
    if not forceAction:
        vis, inter = w.visibility([objectId])[objectId]
        if not vis:
            raise ActionFailed("Target object not found within the specified visibility.")
        if not inter:
            raise ActionFailed(
                "Target object is visible but not interactable. It is likely obstructed by some clear object like glass."
            )
    return obj


def object_at_screen_point(w: World, x: float, y: float) -> Optional[str]:
    """First object hit by the camera ray through screen point (x, y) in [0,1], top-left."""
    from ..geometry import ray_box_hits

    tan_v, aspect = camera_tan_aspect(w.fov, w.width, w.height)
    d_local = np.array([(2 * x - 1) * tan_v * aspect, (1 - 2 * y) * tan_v, 1.0])
    cam = w.camera_position()
    d = w.camera_rotation() @ d_local
    occ = w.occluders()
    t = ray_box_hits(cam, (cam + d * 20.0)[None], occ.centers, occ.halves, occ.rots)[0]
    if w.held is not None and w.held in occ.ids:
        t[occ.owners == occ.ids.index(w.held)] = np.inf
    if not np.isfinite(t).any():
        return None
    oid = occ.ids[int(occ.owners[int(np.argmin(t))])]
    hit = cam + d * 20.0 * float(np.min(t))
    if np.hypot(hit[0] - cam[0], hit[2] - cam[2]) > w.visibility_distance:
        return None
    return oid


def _held(w: World) -> SimObject:
    if w.held is None:
        raise ActionFailed("Can't place an object if Agent isn't holding anything")
    return w.objects[w.held]


@action("PickupObject", kinds=_SCREEN_XY, **_TARGET)
def pickup(w: World, objectId=None, x=None, y=None, forceAction=False) -> str:
    obj = resolve_target(w, objectId, x, y, forceAction, "PickupObject")
    if not obj.pickupable:
        raise ActionFailed(f"{obj.object_id} must have the property CanPickup to be picked up.")
    if w.held is not None:
        raise ActionFailed("Agent hand has something in it already! Can't pick up anything else")
    # The object is carried at the hand point, oriented to the agent's yaw.
    rot = (obj.rotation[0], w.agent.yaw, obj.rotation[2]) if not forceAction else obj.rotation
    carried = [c for c in w.descendants(obj.object_id) if not w.objects[c].is_sliced]
    physics.move_with_contents(
        w, obj.object_id, _hand_pivot(w, obj, rot), rot, is_picked_up=True, parents=()
    )
    for cid in carried:
        w.update(cid, is_picked_up=False)
    w.held = obj.object_id
    return obj.object_id


def _hand_pivot(w: World, obj: SimObject, rot) -> Tuple[float, float, float]:
    """Object position that puts its box centre at the hand point."""
    r = euler_to_matrix(rot)
    hand = w.hand_position()
    return tuple(float(v) for v in hand - r @ obj.local_box.center)


def carry_held(w: World) -> None:
    """Keep the held object (and its contents) at the hand after the agent moved."""
    if w.held is None:
        return
    obj = w.objects[w.held]
    rot = (obj.rotation[0], w.agent.yaw, obj.rotation[2])
    physics.move_with_contents(w, obj.object_id, _hand_pivot(w, obj, rot), rot)


@action(
    "PutObject",
    kinds=_SCREEN_XY,
    objectId=None,
    x=None,
    y=None,
    forceAction=False,
    placeStationary=True,
    randomSeed=0,
    putNearXY=False,
    receptacleObjectId=None,
)
def put(
    w: World,
    objectId=None,
    x=None,
    y=None,
    forceAction=False,
    placeStationary=True,
    randomSeed=0,
    putNearXY=False,
    receptacleObjectId=None,
) -> None:
    # ALFRED (THOR 2.1.0) passed objectId=<held object> and receptacleObjectId=<receptacle>.
    if receptacleObjectId is not None:
        if w.held is not None and objectId not in (None, w.held):
            raise ActionFailed(f"{objectId} is not the object in the agent's hand")
        objectId = receptacleObjectId
    rec = basin_child_for_put(w, resolve_target(w, objectId, x, y, forceAction, "PutObject"))
    held = _held(w)
    if not rec.flags.get("receptacle"):
        raise ActionFailed("This target object is NOT a receptacle!")
    if rec.object_type in MUST_BE_OPEN_TO_PUT and rec.flags.get("openable") and not rec.is_open:
        raise ActionFailed(
            "Target openable Receptacle is CLOSED, can't place if target is not open!"
        )
    if rec.object_type in OBJECT_SPECIFIC_RECEPTACLES:
        snap = physics.snap_to_attach_point(w, held, rec)
        if snap == "full":
            raise ActionFailed(f"{rec.name} is full right now")
        if snap is None:
            raise ActionFailed(f"{held.name} is not a valid Object Type to be placed in {rec.name}")
        _place(w, held, rec, *snap)
        return
    if not forceAction and not placement_allowed(held.object_type, rec.object_type):
        raise ActionFailed(f"{held.name} cannot be placed in {rec.name}")
    anywhere = forceAction or rec.object_type in PUT_ANYWHERE_RECEPTACLES
    a = w.agent
    # THOR 2.1.0 (ALFRED, forced puts): spawn points come from raycasts onto the receptacle's
    # real surface, and its data only ever shows objects the camera saw land; nearest-first
    # on our boxes can pick a spot a rim hides (a soap bar under a sink's front edge).
    thor2 = forceAction and w.profile.layout_clears_moveables
    seen = camera_sees(w, held.object_id) if thor2 else None
    shelves = None
    if thor2 and rec.object_type == "Fridge":  # THOR's spawn points on every shelf it can see
        levels = physics.fridge_levels(w, rec, held.object_id)
        shelves = (
            levels,
            w.camera_position(),
            camera_sees_spot(w, held.object_id, rec.object_id, levels),
        )
    if thor2 and rec.object_type == "Microwave":
        region = physics.microwave_cavity(rec)
    else:
        region = physics.open_drawer_region(rec)  # where an open drawer is drawn, slid out
    pose = physics.find_placement(
        w,
        held,
        region,
        physics.PlacementSearch(
            agent_xz=np.array([a.x, a.z]),
            max_dist=None if anywhere else w.visibility_distance + 0.5,
            rng=None,
            yaws=[(a.yaw + k * 90.0) % 360 for k in range(4)],
            tilt=True,
            seen=seen,
            upright_first=thor2 and rec.object_type in BASIN_FIXTURES,
            thor_grid_fallback=thor2,
            held_yaw_first=w.profile.thor2_rules,
            shelves=shelves,
        ),
    )
    if pose is None:
        raise ActionFailed("No valid positions to place object found")
    _place(w, held, rec, *pose)


def basin_child_for_put(w: World, rec: SimObject) -> SimObject:
    """THOR 2.1.0 rules: a Sink or Bathtub fixture was no receptacle there, only its *Basin
    child, so ALFRED's PutObject masks over a sink only ever named the basin; our fixture's
    drawn walls and rim take some of those pixels (a cup or kettle then landed in the Sink,
    never in the SinkBasin the goal and the faucet's cleaning test ask for)."""
    if not w.profile.thor2_rules or rec.object_type not in ("Sink", "Bathtub"):
        return rec
    child = w.objects.get(f"{rec.object_id}|{rec.object_type}Basin")
    return child if child is not None and child.enabled and child.flags.get("receptacle") else rec


def _place(w: World, obj: SimObject, rec: SimObject, pos, rot) -> None:
    physics.move_with_contents(
        w, obj.object_id, pos, rot, is_picked_up=False, parents=_parents_for(w, rec)
    )
    w.held = None
    physics.apply_state_rules(w)


def _parents_for(w: World, rec: SimObject) -> Tuple[str, ...]:
    chain = [rec.object_id]
    # THOR lists every receptacle whose trigger overlaps; include the receptacle's own parent
    # for containers sitting on something (e.g. Pot on StoveBurner -> object in Pot only).
    return tuple(chain)


def _drop(w: World, forceAction: bool, ahead: float = 0.0) -> Optional[dict]:
    if w.held is None:
        raise ActionFailed("Nothing is in the agent's hand to drop!")
    obj = w.objects[w.held]
    box = w.held_box(obj)
    a = w.agent
    th = np.radians(a.yaw)
    shift = np.array([np.sin(th), 0.0, np.cos(th)]) * ahead
    box = Box(box.center + shift, box.half, box.rot)
    ignore = [obj.object_id] + w.descendants(obj.object_id)
    if not forceAction and w.overlapping(box, ignore=ignore) is not None:
        raise ActionFailed(
            f"{obj.name} can't be dropped. It must be clear of all other collision first, including the Agent."
        )
    lo, _ = box.aabb()
    y, under = physics.drop_height(w, box, ignore)
    fall = float(lo[1] - y)
    rot = obj.rotation
    base = box.center - obj.box.rot @ np.zeros(3)
    pos = np.asarray(base) - euler_to_matrix(rot) @ obj.local_box.center
    pos[1] -= fall - physics.REST_GAP
    new_box = physics.pose_box(obj, pos, rot)
    parents = w.infer_parents(obj, new_box)
    broken = physics.breaks_on_drop(obj, fall)
    physics.move_with_contents(w, obj.object_id, pos, rot, is_picked_up=False, parents=parents)
    w.held = None
    if broken:
        break_object(w, obj.object_id)
    physics.apply_state_rules(w)
    return {"x": float(pos[0]), "y": float(pos[1]), "z": float(pos[2])}


@action("DropHandObject", "DropHeldObject", forceAction=False, autoSimulation=True)
def drop_hand_object(w: World, forceAction=False, autoSimulation=True):
    return _drop(w, forceAction)


@action("DropHeldObjectAhead", forceAction=False, autoSimulation=True)
def drop_held_object_ahead(w: World, forceAction=False, autoSimulation=True):
    return _drop(w, forceAction, ahead=0.3)


@action("ThrowObject", moveMagnitude=REQUIRED, forceAction=False, autoSimulation=True)
def throw_object(w: World, moveMagnitude, forceAction=False, autoSimulation=True):
    if w.held is None:
        raise ActionFailed("Nothing in Hand to Throw!")
    ahead = min(max(float(moveMagnitude), 0.0) / 250.0, 1.0) * 1.0
    return _drop(w, True, ahead=ahead)


# --- opening --------------------------------------------------------------------------
def set_openness(w: World, obj: SimObject, openness: float) -> None:
    if obj.object_type == "Drawer":
        # Contents ride along with the drawer as it slides.
        lo, hi = obj.aabb
        depth = (hi - lo)[0] if abs(obj.front[0]) > abs(obj.front[1]) else (hi - lo)[2]
        delta = (
            (openness - obj.openness) * depth * DRAWER_SLIDE
        )  # scalar first: stored poses depend on it
        shift = np.array([obj.front[0], 0.0, obj.front[1]]) * delta
        for cid in w.descendants(obj.object_id):
            c = w.objects[cid]
            w.update(cid, position=tuple(float(v) for v in np.asarray(c.position) + shift))
    w.update(obj.object_id, openness=float(openness), is_open=openness > 0)


@action(
    "OpenObject",
    kinds=_SCREEN_XY,
    objectId=None,
    x=None,
    y=None,
    forceAction=False,
    openness=1.0,
    moveMagnitude=None,
)
def open_object(
    w: World, objectId=None, x=None, y=None, forceAction=False, openness=1.0, moveMagnitude=None
) -> None:
    if moveMagnitude is not None:
        openness = 1.0 if float(moveMagnitude) == 0 else float(moveMagnitude)
    openness = float(openness)
    if not 0.0 <= openness <= 1.0:
        raise ActionFailed("openness must be in [0:1]")
    obj = resolve_target(w, objectId, x, y, forceAction, "OpenObject")
    if not obj.flags.get("openable"):
        raise ActionFailed(f"{obj.object_id} is not an Openable object")
    if obj.object_type in OFF_TO_OPEN and obj.is_toggled and openness > 0:
        raise ActionFailed("Target must be OFF to open!")
    set_openness(w, obj, openness)
    physics.apply_state_rules(w)


@action("CloseObject", kinds=_SCREEN_XY, objectId=None, x=None, y=None, forceAction=False)
def close_object(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "CloseObject")
    if not obj.flags.get("openable"):
        raise ActionFailed(f"{obj.object_id} is not an Openable object")
    set_openness(w, obj, 0.0)
    physics.apply_state_rules(w)


@action("OpenObjectImmediate", objectId=REQUIRED, openness=1.0)
def open_object_immediate(w: World, objectId, openness=1.0) -> None:
    obj = w.get(objectId)
    if obj is None or not obj.flags.get("openable"):
        raise ActionFailed(f"{objectId} is not an Openable object")
    set_openness(w, obj, float(openness))


# --- toggling --------------------------------------------------------------------------
def _toggle(w: World, obj: SimObject, on: bool, name: str) -> None:
    if obj.object_type == "StoveBurner":
        raise ActionFailed(
            "target object is controlled by another sim object. target object cannot be turned on/off directly"
        )
    if not obj.flags.get("toggleable"):
        raise ActionFailed("object is not toggleable.")
    if on and obj.is_toggled:
        raise ActionFailed("can't toggle object on if it's already on!")
    if not on and not obj.is_toggled:
        raise ActionFailed("can't toggle object off if it's already off!")
    if on and obj.object_type == "Microwave" and obj.is_open:
        raise ActionFailed("Target must be closed to Toggle On!")
    if on and obj.is_broken:
        raise ActionFailed("Target is broken and cannot be Toggled On!")
    w.update(obj.object_id, is_toggled=on)
    for cid in obj.controlled_objects or ():
        if cid in w.objects:
            w.update(cid, is_toggled=on)
    physics.apply_state_rules(w)


@action("ToggleObjectOn", kinds=_SCREEN_XY, **_TARGET)
def toggle_on(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    _toggle(w, resolve_target(w, objectId, x, y, forceAction, "ToggleObjectOn"), True, "on")


@action("ToggleObjectOff", kinds=_SCREEN_XY, **_TARGET)
def toggle_off(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    _toggle(w, resolve_target(w, objectId, x, y, forceAction, "ToggleObjectOff"), False, "off")


# --- slicing / breaking / other state changes ----------------------------------------
def slice_object(w: World, oid: str) -> None:
    obj = w.objects[oid]
    new_type = SLICED_TYPE[obj.object_type]
    n = SLICE_COUNT.get(obj.object_type, 1)
    b = obj.box
    axis = int(np.argmax([b.half[0], -1, b.half[2]]))  # slice along the longest horizontal axis
    for k in range(n):
        half = b.half.copy()
        offset = np.zeros(3)
        if n > 1:
            half[axis] = b.half[axis] / n
            offset[axis] = -b.half[axis] + half[axis] * (2 * k + 1)
        centre = b.center + b.rot @ offset
        pid = f"{obj.object_id}|{new_type}_{k}"
        if pid in w.objects:
            continue
        piece = SimObject(
            object_id=pid,
            name=f"{obj.name}_{new_type}_{k}",
            object_type=new_type,
            asset_id="",
            position=tuple(float(v) for v in centre),
            rotation=(0.0, 0.0, 0.0) if new_type == "EggCracked" else obj.rotation,
            local_box=Box(
                np.zeros(3),
                half,
                (euler_to_matrix(obj.rotation).T @ b.rot)
                if new_type != "EggCracked"
                else np.eye(3),
            ),
            has_oobb=True,
            flags={
                "pickupable": True,
                "moveable": False,
                "openable": False,
                "receptacle": False,
                "toggleable": False,
                "sliceable": False,
                "cookable": new_type in COOKABLE_TYPES,
                "dirtyable": False,
                "breakable": False,
                "canFillWithLiquid": False,
                "canBeUsedUp": False,
                "isHeatSource": False,
                "isColdSource": False,
            },
            is_cooked=obj.is_cooked,
            temperature=obj.temperature,
            parents=obj.parents,
            mass=obj.mass / max(n, 1),
            salient_materials=obj.salient_materials,
        )
        w.add(piece)
    w.update(oid, is_sliced=True)


def break_object(w: World, oid: str) -> None:
    obj = w.objects[oid]
    if obj.object_type == "Egg":
        slice_object(w, oid)
        w.update(oid, is_broken=True)
        return
    w.update(
        oid,
        is_broken=True,
        is_toggled=False if obj.flags.get("toggleable") else obj.is_toggled,
        is_filled=False,
        fill_liquid=None,
    )


@action("SliceObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def slice_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "SliceObject")
    if obj.object_id == w.held:
        raise ActionFailed("target object cannot be sliced if it is in the agent's hand")
    if not obj.flags.get("sliceable") or obj.is_sliced:
        raise ActionFailed(f"{obj.name} Does not have the CanBeSliced property!")
    slice_object(w, obj.object_id)
    physics.apply_state_rules(w)


@action("BreakObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def break_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "BreakObject")
    if not obj.flags.get("breakable"):
        raise ActionFailed(f"{obj.name} does not have the CanBreak property!!")
    if obj.object_id == w.held:
        _drop(w, True)
    break_object(w, obj.object_id)


@action("DirtyObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def dirty_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "DirtyObject")
    if not obj.flags.get("dirtyable"):
        raise ActionFailed(f"{obj.name} does not have CanBeDirty property!")
    if obj.is_dirty:
        raise ActionFailed(f"{obj.name} is already dirty!")
    w.update(obj.object_id, is_dirty=True)


@action("CleanObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def clean_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "CleanObject")
    if not obj.flags.get("dirtyable"):
        raise ActionFailed(f"{obj.name} does not have dirtyable property!")
    if not obj.is_dirty:
        raise ActionFailed(f"{obj.name} is already Clean!")
    w.update(obj.object_id, is_dirty=False)


@action("FillObjectWithLiquid", lenient=True, kinds=_SCREEN_XY, fillLiquid=None, **_TARGET)
def fill_action(
    w: World, objectId=None, x=None, y=None, forceAction=False, fillLiquid=None
) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "FillObjectWithLiquid")
    if fillLiquid is None:
        raise ActionFailed("Missing Liquid string for FillObject action")
    if not obj.flags.get("canFillWithLiquid"):
        raise ActionFailed(f"{obj.name} does not have CanBeFilled property!")
    liq = str(fillLiquid).lower()
    if liq not in ("water", "coffee", "wine"):
        raise ActionFailed(f"{fillLiquid} is not a valid Liquid Type")
    if obj.is_filled:
        raise ActionFailed(f"{obj.name} is already Filled!")
    changes = dict(is_filled=True, fill_liquid=liq)
    if liq == "coffee":
        changes["temperature"] = "Hot"
    w.update(obj.object_id, **changes)


@action("EmptyLiquidFromObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def empty_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "EmptyLiquidFromObject")
    if not obj.flags.get("canFillWithLiquid"):
        raise ActionFailed(f"{obj.name} does not have CanBeFilled property!")
    if not obj.is_filled:
        raise ActionFailed("object already empty")
    w.update(obj.object_id, is_filled=False, fill_liquid=None)


@action("CookObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def cook_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "CookObject")
    if not obj.flags.get("cookable"):
        raise ActionFailed("target object is not cookable")
    if obj.is_cooked:
        raise ActionFailed(f"{obj.object_id} is already Toasted!")
    w.update(obj.object_id, is_cooked=True)


@action("UseUpObject", lenient=True, kinds=_SCREEN_XY, **_TARGET)
def use_up_action(w: World, objectId=None, x=None, y=None, forceAction=False) -> None:
    obj = resolve_target(w, objectId, x, y, forceAction, "UseUpObject")
    if not obj.flags.get("canBeUsedUp"):
        raise ActionFailed(f"{obj.name} does not have CanBeUsedUp property!")
    if obj.is_used_up:
        raise ActionFailed("object already used up!")
    w.update(obj.object_id, is_used_up=True)
