"""Symbolic task planning for ALFRED-style tasks (alfred.md §3, planning.md).

Pipeline (as in ALFRED's generator, §3.3):

    ProblemState --make_problem--> PDDL problem (task-relevant objects only)
                 --solve (Fast Downward, subprocess)--> [HighLevelAction]

plus :func:`template_plan`, a millisecond task-specific planner that produces the
same kind of high-level plan (the ``plan.high_pddl`` structure of the dataset),
and :func:`apply_plan`, a symbolic executor with the same semantics as
``pddl/domain.pddl`` (used to validate plans from either planner).

High-level plan structure (matches ``plan.high_pddl``): GotoLocation, PickupObject,
PutObject, Clean/Heat/CoolObject (abstract macros at the sink basin / microwave /
fridge), ToggleObject, SliceObject, OpenObject/CloseObject (only when a
receptacle starts open: pick/put are abstract and the low-level expansion does the
opening and closing, which is why the released high_pddl never contains them), and
a final NoOp (``End``).

Modules: :mod:`.state` (scene objects, problem state, task parsing and pruning),
:mod:`.actions` (high-level actions), :mod:`.pddl` (problem generation),
:mod:`.fast_downward` (running the planner), :mod:`.template` (template planner),
:mod:`.executor` (symbolic executor and goal test), :mod:`.errors`.
"""

from __future__ import annotations

from .actions import ACTION_COSTS, HighLevelAction, arg_name, high_pddl
from .errors import (
    PlanExecutionError,
    PlannerNotFoundError,
    PlannerTimeoutError,
    PlanningError,
    UnsolvableError,
)
from .executor import apply_action, apply_plan, goal_reached, plan_cost
from .fast_downward import DEFAULT_SEARCH, EXISTS_SEARCH, FALLBACK_SEARCH, find_fast_downward, solve
from .pddl import DEFAULT_GOAL_STYLE, DOMAIN_PATH, load_domain, make_problem
from .state import (
    TASK_TYPES,
    PlanningTask,
    ProblemState,
    SceneObject,
    distances_from_coords,
    parse_task,
    relevant_objects,
    to_thor_metadata,
)
from .template import template_plan

__all__ = [
    "TASK_TYPES",
    "DOMAIN_PATH",
    "DEFAULT_SEARCH",
    "DEFAULT_GOAL_STYLE",
    "EXISTS_SEARCH",
    "FALLBACK_SEARCH",
    "ACTION_COSTS",
    "SceneObject",
    "ProblemState",
    "PlanningTask",
    "HighLevelAction",
    "PlanningError",
    "UnsolvableError",
    "PlannerTimeoutError",
    "PlannerNotFoundError",
    "PlanExecutionError",
    "load_domain",
    "make_problem",
    "find_fast_downward",
    "solve",
    "template_plan",
    "apply_action",
    "apply_plan",
    "plan_cost",
    "goal_reached",
    "distances_from_coords",
    "to_thor_metadata",
    "high_pddl",
    "arg_name",
    "parse_task",
    "relevant_objects",
]
