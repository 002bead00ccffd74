"""A small synthetic kitchen and one planning task per type (and sliced variants).

A known scene for the planner tests (tests/test_alfred_planning.py) and for timing the
planners (benchmarks/alfred_planner_time.py): one definition, so both see the same problems.
"""

from __future__ import annotations

from .state import ProblemState, SceneObject as O, distances_from_coords

__all__ = ["COORDS", "CASES", "kitchen", "P"]

COORDS = {
    "start": (0, 0),
    "counter1": (2, 0),
    "counter2": (6, 4),
    "fridge": (8, 0),
    "microwave": (4, 6),
    "sink": (0, 6),
    "cabinet1": (3, 3),
    "table": (5, 1),
    "desk": (9, 8),
    "lamp": (9, 9),
    "shelf": (1, 9),
}


def kitchen(**overrides) -> ProblemState:
    """The synthetic kitchen; keyword arguments replace ProblemState fields."""
    objs = [
        O("CounterTop|1", "CounterTop", location="counter1", receptacle=True),
        O("CounterTop|2", "CounterTop", location="counter2", receptacle=True),
        O("Fridge|1", "Fridge", location="fridge", receptacle=True, openable=True),
        O("Microwave|1", "Microwave", location="microwave", receptacle=True, openable=True),
        O("Sink|1|SinkBasin", "SinkBasin", location="sink", receptacle=True),
        O("Cabinet|1", "Cabinet", location="cabinet1", receptacle=True, openable=True),
        O("DiningTable|1", "DiningTable", location="table", receptacle=True),
        O("Desk|1", "Desk", location="desk", receptacle=True),
        O("Shelf|1", "Shelf", location="shelf", receptacle=True),
        O("DeskLamp|1", "DeskLamp", location="lamp"),
        O("Apple|1", "Apple", parent="CounterTop|1", pickupable=True),
        O("Apple|2", "Apple", parent="DiningTable|1", pickupable=True),
        O("Potato|1", "Potato", parent="CounterTop|2", pickupable=True),
        O("Knife|1", "Knife", parent="DiningTable|1", pickupable=True),
        O("Cup|1", "Cup", parent="DiningTable|1", pickupable=True, receptacle=True),
        O("Fork|1", "Fork", parent="CounterTop|1", pickupable=True),
        O("Mug|1", "Mug", parent="Shelf|1", pickupable=True, receptacle=True),
        O("Pencil|1", "Pencil", parent="Desk|1", pickupable=True),
        O("SoapBar|1", "SoapBar", parent="Shelf|1", pickupable=True),
    ]
    st = ProblemState("start", objs, distances_from_coords(COORDS))
    for k, v in overrides.items():
        setattr(st, k, v)
    return st


def P(obj: str, parent: str = "", toggle: str = "", mrecep: str = "", sliced: bool = False) -> dict:
    """ALFRED pddl_params."""
    return {
        "object_target": obj,
        "object_sliced": sliced,
        "parent_target": parent,
        "toggle_target": toggle,
        "mrecep_target": mrecep,
    }


CASES = {
    "simple": ("pick_and_place_simple", P("Apple", "Fridge")),
    "look": ("look_at_obj_in_light", P("Pencil", toggle="DeskLamp")),
    "clean": ("pick_clean_then_place_in_recep", P("SoapBar", "DiningTable")),
    "heat": ("pick_heat_then_place_in_recep", P("Potato", "CounterTop")),
    "cool": ("pick_cool_then_place_in_recep", P("Mug", "Cabinet")),
    "two": ("pick_two_obj_and_place", P("Apple", "Fridge")),
    "movable": ("pick_and_place_with_movable_recep", P("Fork", "SinkBasin", mrecep="Cup")),
    "heat_sliced": ("pick_heat_then_place_in_recep", P("Potato", "SinkBasin", sliced=True)),
    "simple_sliced": ("pick_and_place_simple", P("Apple", "Fridge", sliced=True)),
    "two_sliced": ("pick_two_obj_and_place", P("Apple", "Fridge", sliced=True)),
    "cool_sliced": ("pick_cool_then_place_in_recep", P("Apple", "Cabinet", sliced=True)),
    "movable_sliced": (
        "pick_and_place_with_movable_recep",
        P("Apple", "CounterTop", mrecep="Cup", sliced=True),
    ),
}
