"""The 7 ALFRED task types as small registered classes (alfred.md §3.1, §3.6).

Each task binds a ``task_type`` and its ``pddl_params`` and answers ALFRED's two questions about
an :class:`~alfred_task.env.environment.AlfredEnv`'s current state: ``goal_conditions_met`` (satisfied,
total) and ``goal_satisfied``. The counting rules (substring matching, sliced bonus, env-side
cleaned/heated/cooled sets) live in :mod:`alfred_task.env.goal_conditions`, the single source of
truth; these classes add the per-type facts a user needs (which pddl_params a type uses, its
goal-condition count) and a registry, so a new task type is one class and one decorator.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Mapping, Tuple, Type

from alfred_task.env.goal_conditions import TOTALS, goal_conditions_met

TASKS: Dict[str, Type["AlfredTask"]] = {}


def register_task(cls: Type["AlfredTask"]) -> Type["AlfredTask"]:
    if cls.task_type in TASKS:
        raise ValueError(f"task type {cls.task_type!r} is already registered")
    TASKS[cls.task_type] = cls
    return cls


class AlfredTask:
    task_type: ClassVar[str] = ""
    #: pddl_params fields this type needs besides object_target
    required: ClassVar[Tuple[str, ...]] = ("parent_target",)

    def __init__(self, pddl_params: Mapping[str, Any]) -> None:
        missing = [k for k in ("object_target",) + self.required if not pddl_params.get(k)]
        if missing:
            raise ValueError(f"{self.task_type}: pddl_params lacks {missing}")
        self.pddl_params = dict(pddl_params)

    @property
    def num_goal_conditions(self) -> int:
        plain, sliced = TOTALS[self.task_type]
        return sliced if self.pddl_params.get("object_sliced") else plain

    def goal_conditions_met(self, env) -> Tuple[int, int]:
        md = env.last_event.metadata
        return goal_conditions_met(
            self.task_type,
            self.pddl_params,
            md["objects"],
            env.cleaned_objects,
            env.heated_objects,
            env.cooled_objects,
            md["inventoryObjects"],
        )

    def goal_satisfied(self, env) -> bool:
        s, ts = self.goal_conditions_met(env)
        return s == ts


def _define(task_type: str, required: Tuple[str, ...] = ("parent_target",)) -> Type[AlfredTask]:
    name = "".join(p.title() for p in task_type.split("_")) + "Task"
    return register_task(
        type(
            name,
            (AlfredTask,),
            {
                "task_type": task_type,
                "required": required,
                "__doc__": f"ALFRED's {task_type} (§3.1).",
            },
        )
    )


PickAndPlaceSimpleTask = _define("pick_and_place_simple")
LookAtObjInLightTask = _define("look_at_obj_in_light", ("toggle_target",))
PickCleanThenPlaceInRecepTask = _define("pick_clean_then_place_in_recep")
PickHeatThenPlaceInRecepTask = _define("pick_heat_then_place_in_recep")
PickCoolThenPlaceInRecepTask = _define("pick_cool_then_place_in_recep")
PickTwoObjAndPlaceTask = _define("pick_two_obj_and_place")
PickAndPlaceWithMovableRecepTask = _define(
    "pick_and_place_with_movable_recep", ("parent_target", "mrecep_target")
)


def make_task(traj: Mapping[str, Any]) -> AlfredTask:
    """The task of a train/valid ``traj_data.json`` dict."""
    t = traj.get("task_type")
    if t not in TASKS:
        raise ValueError(
            f"{traj.get('task_id', '?')}: task_type {t!r} is not one of {sorted(TASKS)}"
        )
    return TASKS[t](traj["pddl_params"])


__all__ = ["AlfredTask", "TASKS", "make_task", "register_task"] + [
    c.__name__ for c in TASKS.values()
]
