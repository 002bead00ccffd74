"""ALFRED goal-condition counting (alfred.md §3.6, env/tasks.py semantics).

Operates on THOR-metadata-like object dicts (``objectId``, ``objectType``,
``pickupable``, ``receptacle``, ``receptacleObjectIds``, ``parentReceptacles``,
``toggleable``, ``isToggled``, ``visible``, ...) plus the env-side sets of
cleaned / heated / cooled object ids and the agent's inventory.

Deliberately reproduced quirks (§3.6, §11):
* candidates are matched by **substring of objectId** (so "Pot" matches Potato,
  "Box" matches TissueBox, "Knife" matches ButterKnife, ...);
* the "all receptacles closed" clause of the PDDL goal is not checked;
* sliced tasks add "at least one slice exists" (pick_two: up to 2 slices).

One deliberate deviation: ALFRED's ``np.max`` over an empty receptacle list
crashes in pick_two_obj_and_place; here it contributes 0.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

__all__ = ["TOTALS", "target_names", "goal_conditions_met", "goal_satisfied"]

# Goal-condition totals without / with the sliced bonus.
TOTALS = {
    "pick_and_place_simple": (1, 2),
    "pick_two_obj_and_place": (2, 4),
    "look_at_obj_in_light": (2, 3),
    "pick_heat_then_place_in_recep": (3, 4),
    "pick_cool_then_place_in_recep": (3, 4),
    "pick_clean_then_place_in_recep": (3, 4),
    "pick_and_place_with_movable_recep": (3, 4),
}

_STATE_SET = {
    "pick_heat_then_place_in_recep": "heated",
    "pick_cool_then_place_in_recep": "cooled",
    "pick_clean_then_place_in_recep": "cleaned",
}


def target_names(pddl_params: Mapping) -> dict[str, str]:
    """``object`` (+"Sliced" if object_sliced), ``parent``, ``toggle``, ``mrecep``."""
    obj = str(pddl_params.get("object_target") or "")
    if pddl_params.get("object_sliced") and not obj.endswith("Sliced"):
        obj += "Sliced"
    return {
        "object": obj,
        "parent": str(pddl_params.get("parent_target") or ""),
        "toggle": str(pddl_params.get("toggle_target") or ""),
        "mrecep": str(pddl_params.get("mrecep_target") or ""),
    }


def _contents(o: Mapping) -> list[str]:
    return list(o.get("receptacleObjectIds") or [])


def _inventory_ids(state_objects: Sequence[Mapping], inventory_objects: Any) -> list[str]:
    if inventory_objects is None:
        return [o["objectId"] for o in state_objects if o.get("isPickedUp")]
    out = []
    for x in inventory_objects:
        out.append(x["objectId"] if isinstance(x, Mapping) else str(x))
    return out


def goal_conditions_met(
    task_type: str,
    pddl_params: Mapping,
    state_objects: Sequence[Mapping],
    cleaned_objects: Iterable[str] = (),
    heated_objects: Iterable[str] = (),
    cooled_objects: Iterable[str] = (),
    inventory_objects: Any = None,
) -> tuple[int, int]:
    """Return ``(satisfied, total)`` goal conditions for one episode state.

    ``inventory_objects``: THOR ``inventoryObjects`` (list of dicts with objectId)
    or a list of ids; if None, objects flagged ``isPickedUp`` are used.
    """
    if task_type not in TOTALS:
        raise ValueError(f"unknown task_type {task_type!r}")
    t = target_names(pddl_params)
    objs = list(state_objects)
    pickupables = [o for o in objs if t["object"] in o["objectId"] and o.get("pickupable")]
    s, ts = 0, 0

    sliced = "Sliced" in t["object"]
    if sliced:
        slices = [p for p in pickupables if "Sliced" in p["objectId"]]
        if task_type == "pick_two_obj_and_place":
            ts += 2
            s += min(len(slices), 2)
        else:
            ts += 1
            s += 1 if slices else 0

    if task_type == "look_at_obj_in_light":
        ts += 2
        toggleables = [o for o in objs if t["toggle"] in o["objectId"] and o.get("toggleable")]
        inv = _inventory_ids(objs, inventory_objects)
        pick_ids = {p["objectId"] for p in pickupables}
        if inv and inv[0] in pick_ids:
            s += 1
        if any(o.get("isToggled") and o.get("visible") for o in toggleables):
            s += 1
        return s, ts

    receptacles = [o for o in objs if t["parent"] in o["objectId"] and o.get("receptacle")]

    if task_type == "pick_and_place_simple":
        ts += 1
        if any(p["objectId"] in _contents(r) for p in pickupables for r in receptacles):
            s += 1
        return s, ts

    if task_type == "pick_two_obj_and_place":
        ts += 2
        counts = [sum(1 for p in pickupables if p["objectId"] in _contents(r)) for r in receptacles]
        s += min(max(counts) if counts else 0, 2)
        return s, ts

    if task_type in _STATE_SET:
        ts += 3
        done = set(
            {"cleaned": cleaned_objects, "heated": heated_objects, "cooled": cooled_objects}[
                _STATE_SET[task_type]
            ]
        )
        in_place = {
            p["objectId"]
            for p in pickupables
            if any(p["objectId"] in _contents(r) for r in receptacles)
        }
        treated = {p["objectId"] for p in pickupables if p["objectId"] in done}
        s += 1 if in_place else 0
        s += 1 if treated else 0
        s += 1 if in_place & treated else 0
        return s, ts

    if task_type == "pick_and_place_with_movable_recep":
        ts += 3
        movables = [o for o in objs if t["mrecep"] in o["objectId"] and o.get("pickupable")]
        pick_ids = {p["objectId"] for p in pickupables}
        rec_ids = {r["objectId"] for r in receptacles}
        if any(pid in _contents(m) for m in movables for pid in pick_ids):
            s += 1
        if any(m["objectId"] in _contents(r) for m in movables for r in receptacles):
            s += 1
        if any(
            any(pid in _contents(m) for pid in pick_ids)
            and any(rid in (m.get("parentReceptacles") or []) for rid in rec_ids)
            for m in movables
        ):
            s += 1
        return s, ts

    raise AssertionError(task_type)  # pragma: no cover


def goal_satisfied(
    task_type: str,
    pddl_params: Mapping,
    state_objects: Sequence[Mapping],
    cleaned_objects: Iterable[str] = (),
    heated_objects: Iterable[str] = (),
    cooled_objects: Iterable[str] = (),
    inventory_objects: Any = None,
) -> bool:
    """True iff every goal condition is met (ALFRED's ``goal_satisfied``)."""
    s, ts = goal_conditions_met(
        task_type,
        pddl_params,
        state_objects,
        cleaned_objects,
        heated_objects,
        cooled_objects,
        inventory_objects,
    )
    return s == ts
