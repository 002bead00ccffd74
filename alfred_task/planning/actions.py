"""High-level actions: one ``plan.high_pddl`` step and how the dataset writes it.

Both planners (Fast Downward and the template planner) and the executor produce and consume
:class:`HighLevelAction`; the dataset conventions for its ``discrete_action`` arguments live
here so every planner writes them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

__all__ = ["ACTION_COSTS", "HighLevelAction", "high_pddl", "arg_name", "fill_goto_args"]

# Action costs (alfred.md §3.2): goto = distance; open/close/pick/put = 1;
# clean/heat/cool/toggle/slice = 5.
ACTION_COSTS = {
    "OpenObject": 1,
    "CloseObject": 1,
    "PickupObject": 1,
    "PutObject": 1,
    "CleanObject": 5,
    "HeatObject": 5,
    "CoolObject": 5,
    "ToggleObject": 5,
    "SliceObject": 5,
    "NoOp": 0,
}


@dataclass
class HighLevelAction:
    """One ``plan.high_pddl`` step.

    ``action``/``args`` form ``discrete_action`` (args are lower-case class names;
    for slices the whole object's class, e.g. ``potato``, as in the dataset).
    ``object_id``: the picked/put/cleaned/heated/cooled object, the toggled lamp,
    the sliced object, or the opened/closed receptacle.  ``receptacle_id``: the put
    target, the appliance (sink basin/microwave/fridge), or the receptacle a picked
    object is taken from.  ``location``: GotoLocation target.  ``tool_id``: the knife
    of a SliceObject.  ``cost``: the action's planning cost.
    """

    action: str
    args: list[str] = field(default_factory=list)
    object_id: str | None = None
    receptacle_id: str | None = None
    location: str | None = None
    tool_id: str | None = None
    cost: int = 0
    pddl: str | None = None

    @property
    def discrete_action(self) -> dict:
        return {"action": self.action, "args": list(self.args)}

    @property
    def planner_action(self) -> dict:
        """ALFRED-style ``planner_action`` (field names as in the dataset, §2.4)."""
        a = self.action
        if a == "NoOp":
            return {"action": "End", "value": 1}
        if a == "GotoLocation":
            return {"action": a, "location": self.location}
        d: dict = {"action": a}
        if a in ("HeatObject", "CoolObject"):
            d["objectId"] = self.receptacle_id
            d["heldObjectId"] = self.object_id
        elif a == "CleanObject":
            d["objectId"] = self.receptacle_id
            d["cleanObjectId"] = self.object_id
        else:
            d["objectId"] = self.object_id
            if a == "PutObject":
                d["receptacleObjectId"] = self.receptacle_id
            elif a == "PickupObject" and self.receptacle_id is not None:
                d["coordinateReceptacleObjectId"] = self.receptacle_id
            elif a == "SliceObject" and self.tool_id is not None:
                d["knifeObjectId"] = self.tool_id
        return d

    def to_high_pddl(self, high_idx: int) -> dict:
        return {
            "high_idx": high_idx,
            "discrete_action": self.discrete_action,
            "planner_action": self.planner_action,
        }

    def key(self) -> tuple:
        return (self.action, tuple(self.args))


def high_pddl(plan: Sequence[HighLevelAction]) -> list[dict]:
    """The plan in the dataset's ``plan.high_pddl`` list form."""
    return [a.to_high_pddl(i) for i, a in enumerate(plan)]


def arg_name(object_type: str) -> str:
    """discrete_action argument: lower-case class, slices named after the whole (as the dataset does)."""
    t = object_type
    if t.endswith("Sliced"):
        t = t[: -len("Sliced")]
    return t.lower()


def fill_goto_args(plan: list[HighLevelAction], types: Mapping[str, str]) -> None:
    """GotoLocation args = [the receptacle of the next action, or else its object]
    (dataset convention, §2.4)."""
    for i, a in enumerate(plan):
        if a.action != "GotoLocation":
            continue
        nxt = plan[i + 1] if i + 1 < len(plan) else None
        target = None
        if nxt is not None:
            if nxt.action in (
                "PickupObject",
                "PutObject",
                "CleanObject",
                "HeatObject",
                "CoolObject",
            ):
                target = nxt.receptacle_id or nxt.object_id
            elif nxt.action in ("ToggleObject", "SliceObject", "OpenObject", "CloseObject"):
                target = nxt.object_id
        a.args = [arg_name(types[target])] if target is not None and target in types else []
