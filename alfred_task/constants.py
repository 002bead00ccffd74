"""Single source of truth for ALFRED constants.

Everything here is taken from ALFRED's public code and data (askforalfred/alfred; the
sections are those of the ALFRED table in docs/references.md):
§2.4 (traj_data fields), §2.5 (vocabularies), §3.1 (task types), §3.4 (generation
constants), §3.5 (object/receptacle constraints), §4 (evaluation limits) and §7
(action vocabulary and special tokens).

Nothing in this module imports anything heavy; it is safe to import anywhere.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

# ---------------------------------------------------------------------------
# Frames / agent / evaluation limits (§2.4, §3.4, §4, §5.1)
# ---------------------------------------------------------------------------
SCREEN_WIDTH = 300
SCREEN_HEIGHT = 300
SCREEN_SIZE = 300  # frames and interaction masks are SCREEN_SIZE x SCREEN_SIZE
MASK_SHAPE = (SCREEN_HEIGHT, SCREEN_WIDTH)  # (rows, cols), row-major RLE index = row*300 + col

VISIBILITY_DISTANCE = 1.5  # metres, THOR Initialize visibilityDistance (§3.4, §4)
#: vertical field of view of ALFRED's frames. ALFRED never set it, so THOR 2.1.0's default
#: applied; THOR 5 defaults to 90. Measured on the real fixtures' recorded interaction masks
#: replayed in thor_lite: median mask IoU 0.58 at 60 deg vs 0.17 at 90 (0.50 at 55, 0.42 at 65).
FIELD_OF_VIEW = 60.0
AGENT_STEP_SIZE = 0.25  # metres, gridSize / MoveAhead magnitude
AGENT_HORIZON_ADJ = 15  # degrees per LookUp/LookDown
MIN_VISIBLE_PIXELS = 10  # generation-time visibility requirement

MAX_FAILS = 10  # evaluation: episode ends when the failure count reaches 10
MAX_STEPS = 1000  # evaluation: step budget (failed actions count, <<stop>> does not)

# ---------------------------------------------------------------------------
# Special tokens (§7, §2.5)
# ---------------------------------------------------------------------------
PAD = "<<pad>>"
SEG = "<<seg>>"
GOAL = "<<goal>>"
STOP = "<<stop>>"

#: word vocabulary seed, in index order: <<pad>>=0, <<seg>>=1, <<goal>>=2
WORD_SPECIAL_TOKENS = (PAD, SEG, GOAL)
#: action_low / action_high vocabulary seed, in index order: <<pad>>=0, <<seg>>=1, <<stop>>=2
ACTION_SPECIAL_TOKENS = (PAD, SEG, STOP)
GOAL_INDEX = 2  # in the word vocabulary

# ---------------------------------------------------------------------------
# Low-level actions (§7): 5 navigation + 7 interaction + <<stop>> = 13 agent actions
# ---------------------------------------------------------------------------
NAV_ACTIONS = ("MoveAhead_25", "RotateLeft_90", "RotateRight_90", "LookUp_15", "LookDown_15")
INTERACT_ACTIONS = (
    "PickupObject",
    "PutObject",
    "OpenObject",
    "CloseObject",
    "ToggleObjectOn",
    "ToggleObjectOff",
    "SliceObject",
)
INTERACT_ACTION_SET = frozenset(INTERACT_ACTIONS)
NAV_ACTION_SET = frozenset(NAV_ACTIONS)
#: the 12 `discrete_action.action` strings that appear in `plan.low_actions`
LOW_ACTIONS = NAV_ACTIONS + INTERACT_ACTIONS
LOW_ACTION_SET = frozenset(LOW_ACTIONS)
#: the 13 actions an agent can emit
AGENT_ACTIONS = LOW_ACTIONS + (STOP,)
NUM_AGENT_ACTIONS = len(AGENT_ACTIONS)  # 13

#: discrete action name -> THOR `api_action.action` name
DISCRETE_TO_API = MappingProxyType(
    {
        "MoveAhead_25": "MoveAhead",
        "RotateLeft_90": "RotateLeft",
        "RotateRight_90": "RotateRight",
        "LookUp_15": "LookUp",
        "LookDown_15": "LookDown",
        **{a: a for a in INTERACT_ACTIONS},
    }
)
API_TO_DISCRETE = MappingProxyType({v: k for k, v in DISCRETE_TO_API.items()})

#: Fixed action_low vocabulary (15 entries) in the order §2.5 / vocab_stats.txt gives
#: (special tokens, then API actions in order of first appearance over oct21).
ACTION_LOW_VOCAB = (
    PAD,
    SEG,
    STOP,
    "LookDown_15",
    "MoveAhead_25",
    "RotateLeft_90",
    "PickupObject",
    "SliceObject",
    "LookUp_15",
    "RotateRight_90",
    "OpenObject",
    "PutObject",
    "CloseObject",
    "ToggleObjectOn",
    "ToggleObjectOff",
)

#: `api_action.action` used for the appended <<stop>> step in preprocessing (§2.5)
STOP_API_ACTION = "NoOp"


def has_interaction(action: str) -> bool:
    """True for actions that need an interaction mask (the 7 interaction actions).

    Mirrors §6.5: anything containing MoveAhead/Rotate/Look or a special token has none.
    """
    return action in INTERACT_ACTION_SET


# ---------------------------------------------------------------------------
# High-level (subgoal) actions (§2.4)
# ---------------------------------------------------------------------------
HIGH_ACTIONS = (
    "GotoLocation",
    "PickupObject",
    "PutObject",
    "OpenObject",
    "CloseObject",
    "ToggleObject",
    "SliceObject",
    "CleanObject",
    "HeatObject",
    "CoolObject",
    "NoOp",
)
HIGH_ACTION_SET = frozenset(HIGH_ACTIONS)
END_HIGH_ACTION = "NoOp"  # discrete_action.action of the End subgoal
END_PLANNER_ACTION = "End"  # planner_action.action of the End subgoal
#: subgoal types evaluated by subgoal evaluation (§5.3)
SUBGOAL_EVAL_TYPES = (
    "GotoLocation",
    "PickupObject",
    "PutObject",
    "CoolObject",
    "HeatObject",
    "CleanObject",
    "SliceObject",
    "ToggleObject",
)

# ---------------------------------------------------------------------------
# Task types (§3.1): exact `task_type` strings
# ---------------------------------------------------------------------------
TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
    "pick_and_place_with_movable_recep",
)
TASK_TYPE_SET = frozenset(TASK_TYPES)

#: Dataset split names (§2.2), in oct21.json key order
SPLITS = ("tests_seen", "tests_unseen", "train", "valid_seen", "valid_unseen")
TEST_SPLITS = frozenset({"tests_seen", "tests_unseen"})

# ---------------------------------------------------------------------------
# Object / receptacle constraints (§3.5)
# ---------------------------------------------------------------------------
MOVABLE_RECEPTACLES = frozenset({"Bowl", "Box", "Cup", "Mug", "Plate", "Pan", "Pot"})
OPENABLE_CLASS_LIST = frozenset({"Fridge", "Cabinet", "Microwave", "Drawer", "Safe", "Box"})

HEATABLE = frozenset(
    {
        "Apple",
        "AppleSliced",
        "Bread",
        "BreadSliced",
        "Cup",
        "Egg",
        "Mug",
        "Plate",
        "Potato",
        "PotatoSliced",
        "Tomato",
        "TomatoSliced",
    }
)
COOLABLE = HEATABLE | frozenset({"Bowl", "Lettuce", "LettuceSliced", "Pan", "Pot", "WineBottle"})
CLEANABLE = frozenset(
    {
        "Apple",
        "AppleSliced",
        "Bowl",
        "ButterKnife",
        "Cloth",
        "Cup",
        "DishSponge",
        "Egg",
        "Fork",
        "Kettle",
        "Knife",
        "Ladle",
        "Lettuce",
        "LettuceSliced",
        "Mug",
        "Pan",
        "Plate",
        "Pot",
        "Potato",
        "PotatoSliced",
        "SoapBar",
        "Spatula",
        "Spoon",
        "Tomato",
        "TomatoSliced",
    }
)
TOGGLEABLE = frozenset({"DeskLamp", "FloorLamp"})
SLICEABLE = frozenset({"Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato"})
#: objects that can slice (SliceObject precondition, §3.2)
KNIVES = frozenset({"Knife", "ButterKnife"})

#: Every receptacle class that is a key of ALFRED's VAL_RECEPTACLE_OBJECTS (§3.5).
RECEPTACLE_CLASSES = (
    "Pot",
    "Pan",
    "Bowl",
    "CoffeeMachine",
    "Microwave",
    "StoveBurner",
    "Fridge",
    "Mug",
    "Plate",
    "Cup",
    "Sofa",
    "ArmChair",
    "Box",
    "Ottoman",
    "Dresser",
    "LaundryHamper",
    "Desk",
    "Bed",
    "Toilet",
    "ToiletPaperHanger",
    "TowelHolder",
    "HandTowelHolder",
    "Cart",
    "BathtubBasin",
    "SinkBasin",
    "Cabinet",
    "CounterTop",
    "Shelf",
    "Drawer",
    "GarbageCan",
    "Safe",
    "TVStand",
    "Toaster",
    "DiningTable",
    "CoffeeTable",
    "SideTable",
)
RECEPTACLE_CLASS_SET = frozenset(RECEPTACLE_CLASSES)

#: Receptacle -> placeable object classes, for the receptacles whose list §3.5 spells out.
#: The reference gives the full contents only for these; for the other RECEPTACLE_CLASSES
#: the list must be taken from the data (see `receptacle_accepts`).
VAL_RECEPTACLE_OBJECTS_KNOWN: Mapping[str, frozenset] = MappingProxyType(
    {
        "CoffeeMachine": frozenset({"Mug"}),
        "StoveBurner": frozenset({"Kettle", "Pan", "Pot"}),
        "Cup": frozenset({"ButterKnife", "Fork", "Spoon"}),
        "LaundryHamper": frozenset({"Cloth"}),
        "ToiletPaperHanger": frozenset({"ToiletPaper", "ToiletPaperRoll"}),
        "TowelHolder": frozenset({"Towel"}),
        "HandTowelHolder": frozenset({"HandTowel"}),
        "TVStand": frozenset({"TissueBox"}),
        "Toaster": frozenset({"BreadSliced"}),
    }
)

#: receptacles forbidden as the goal receptacle, per task type (§3.4)
FORBIDDEN_GOAL_RECEPTACLES: Mapping[str, frozenset] = MappingProxyType(
    {
        "pick_heat_then_place_in_recep": frozenset({"Microwave"}),
        "pick_cool_then_place_in_recep": frozenset({"Fridge"}),
        "pick_clean_then_place_in_recep": frozenset({"SinkBasin"}),
        "pick_two_obj_and_place": frozenset(
            {"CoffeeMachine", "ToiletPaperHanger", "HandTowelHolder"}
        ),
    }
)


def receptacle_accepts(receptacle: str, obj: str) -> bool | None:
    """Whether `obj` may be placed in `receptacle` according to §3.5.

    Returns True/False where the reference lists the receptacle's contents, and None
    ("not specified by the reference") for the other known receptacle classes.
    Raises ValueError for a class that is not an ALFRED receptacle at all.
    """
    if receptacle not in RECEPTACLE_CLASS_SET:
        raise ValueError(f"unknown ALFRED receptacle class {receptacle!r}")
    known = VAL_RECEPTACLE_OBJECTS_KNOWN.get(receptacle)
    if known is None:
        return None
    return obj in known


__all__ = [name for name in dir() if name.isupper()] + ["has_interaction", "receptacle_accepts"]
