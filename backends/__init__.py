"""Simulator backends, shared by the task packages (`rearrange`, `alfred_task`).

This package owns the choice of simulator (`DEFAULT_BACKEND`, `BACKENDS`), starting one
(`make_controller`; `thor2_pose_kwargs` for a THOR 2.1.0 trajectory's poses), the real-THOR pre-flight (`check_thor`, `ThorUnavailableError`,
`open_x_displays`), the pinned THOR release (`THOR_COMMIT_ID`, `REQUIRED_THOR_VERSION`),
the AI2-THOR facts task code needs on either backend (`thor_facts`), and dataset-name
resolution on metadata dicts (`find_object`). Task packages import these from here, never
from each other or from thor_lite. Importing it loads no simulator: thor_lite and ai2thor
are imported inside `make_controller` / `check_thor`, only for the backend asked for.
"""

from .launch import (
    BACKENDS,
    DEFAULT_BACKEND,
    ThorUnavailableError,
    check_thor,
    make_controller,
    open_x_displays,
    thor2_pose_kwargs,
)
from .objects import find_object, position_from_object_id
from .poses import teleport_kwargs
from .thor_facts import (
    AGENT_Y_OFFSET,
    CAMERA_STANDING_OFFSET,
    OBJECT_SPECIFIC_RECEPTACLES,
    RECEPTACLE_ALLOWED,
    REQUIRED_THOR_VERSION,
    RESTRICTED_HELD_TYPES,
    ROOM_TYPE_OFFSETS,
    SCENES_PER_ROOM_TYPE,
    THOR_COMMIT_ID,
    ithor_scene_names,
    SLICED_TYPE,
    placement_allowed,
)

__all__ = [
    "AGENT_Y_OFFSET",
    "BACKENDS",
    "CAMERA_STANDING_OFFSET",
    "DEFAULT_BACKEND",
    "OBJECT_SPECIFIC_RECEPTACLES",
    "RECEPTACLE_ALLOWED",
    "REQUIRED_THOR_VERSION",
    "RESTRICTED_HELD_TYPES",
    "ROOM_TYPE_OFFSETS",
    "SCENES_PER_ROOM_TYPE",
    "THOR_COMMIT_ID",
    "ThorUnavailableError",
    "check_thor",
    "find_object",
    "ithor_scene_names",
    "make_controller",
    "open_x_displays",
    "SLICED_TYPE",
    "placement_allowed",
    "thor2_pose_kwargs",
    "position_from_object_id",
    "teleport_kwargs",
]
