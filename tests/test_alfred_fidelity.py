"""ALFRED fidelity rules, each checked on a real trajectory of ../shared (skipped without it).

Every test names the general rule it checks and the real case that showed it broken; the
benchmark (benchmarks/alfred_fidelity.py) gives the before -> after numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import ALFRED_SAMPLE, alfred_sample_traj

from alfred_task.planning.state import slice_id, sliced_type

REPO = Path(__file__).resolve().parents[1]
SAMPLE = ALFRED_SAMPLE
needs_sample = pytest.mark.skipif(
    not SAMPLE.is_dir(), reason="../shared ALFRED train sample absent"
)


_traj = alfred_sample_traj


@pytest.fixture(scope="module")
def env(alfred_env):
    return alfred_env


def test_slice_ids_follow_the_one_sliced_type_table():
    """Planner placeholders name pieces as thor_lite does: an egg becomes EggCracked."""
    assert sliced_type("Egg") == "EggCracked" and sliced_type("Apple") == "AppleSliced"
    assert slice_id("Egg|+00.10|+01.00|-00.20", "Egg", 1) == "Egg|+00.10|+01.00|-00.20|EggCracked_1"


def test_failure_causes_group_by_kind():
    from alfred_task.evaluation import replay as bench

    a = bench.cause(
        "MoveAhead_25", "Drawer_c8f5a3b1 is blocking Agent 0 from moving by (0.25, 0.0, 0.0)."
    )
    b = bench.cause(
        "MoveAhead_25", "Drawer_0a9b8c7d is blocking Agent 0 from moving by (0.0, 0.0, -0.25)."
    )
    assert a == b == "MoveAhead_25: Drawer_<asset> is blocking Agent # from moving by (#, #, #)."
    assert (
        bench.cause("OpenObject", "Cabinet|+01.00|-00.50|+02.00 is not an Openable object\nmore")
        == "OpenObject: <id> is not an Openable object"
    )
    assert bench.cause("PutObject", "") == "PutObject: (no message)"
    assert (
        bench.normalize("template planner found no plan for pick_two_obj_and_place {'a': 1}")
        == "template planner found no plan for pick_two_obj_and_place {...}"
    )


@needs_sample
def test_task_placements_thor5_forbids_are_planned(env):
    """ALFRED's own table made the task (a Candle on a Plate); THOR 5's restrictions do not
    list it. The expert must still find a plan from the real initial state."""
    from alfred_task.planning.expert import AlfredExpert

    traj = _traj("pick_and_place_with_movable_recep-Candle-Plate-DiningTable-223")
    env.init_episode(traj)
    expert = AlfredExpert(env, traj["task_type"], traj["pddl_params"])
    assert any(a.action == "PutObject" and "Plate" in (a.receptacle_id or "") for a in expert.plan)


# Real trajectories whose recorded low-level actions now all succeed and reach the goal, each
# with the general rule that fixed it (the benchmark's first failure before the fix):
_REPLAY_CASES = {
    # MoveAhead blocked by a Sofa: THOR 2.1.0's reachable grid (the recorded layout) also
    # clears moveable furniture that today's scene files place elsewhere
    "look_at_obj_in_light-Newspaper-None-FloorLamp-203": "layout clears moveables",
    # PickupObject resolved to the ArmChair: a phone posed on the seat, inside the chair's box,
    # exposes the seat as a surface, as the scene's own contents do at load
    "look_at_obj_in_light-CellPhone-None-DeskLamp-318": "posed objects expose furniture surfaces",
    # PutObject "No valid positions" for a Fork into a Cup: THOR also tries sideways orientations
    "pick_and_place_with_movable_recep-Fork-Cup-SinkBasin-2": "PutObject tries tilted orientations",
    # a CreditCard sunk 2 cm into today's dresser top, flush with a drawer's top, stayed hidden
    "look_at_obj_in_light-CreditCard-None-DeskLamp-324": "flush with a drawer top settles onto the furniture",
    # MoveAhead blocked by a Drawer box 6 cm into the agent's body, on a cell THOR reached
    # but its recorded layout lacks: off the layout the body may overlap boxes by 7 cm
    "look_at_obj_in_light-RemoteControl-None-FloorLamp-217": "off-layout body overlaps boxes by 7 cm",
    # PickupObject of the Mug resolved to the CoffeeMachine (the mug was inside its box): the
    # machine holds its mug in an open front bay
    "pick_cool_then_place_in_recep-Mug-None-CoffeeMachine-20": "coffee machine mug bay",
    # PickupObject of a Pan resolved to the Fridge (it lay on the fridge floor): things put in
    # a fridge rest on its shelf level
    "pick_cool_then_place_in_recep-Pan-None-Cabinet-18": "fridge shelf level",
    # OpenObject of a Cabinet resolved to the L-shaped CounterTop over it: the counter slab
    # is open over the layout floor and in front of the cabinets under it
    "pick_two_obj_and_place-SaltShaker-None-Cabinet-3": "counter slab open in front of cabinets",
    # PickupObject of a DishSponge resolved to the SinkBasin: the Sink's own bottom covered
    # the basin's floor; a sink with a basin child draws no bottom
    "pick_clean_then_place_in_recep-DishSponge-None-CounterTop-403": "sink leaves its floor to the basin",
    # PickupObject of a SoapBar resolved to the SinkBasin: the forced PutObject had laid it
    # nearest the agent, under the basin's front rim; THOR 2.1.0 lands it where the camera sees it
    # (FloorPlan416's soap bar, the first case here, is lost to the low sink-basin walls of
    # session 10: THOR's lay further in than the nearest spot those walls no longer hide)
    "pick_clean_then_place_in_recep-SoapBar-None-GarbageCan-420": "forced put lands where the camera sees (2)",
    # PickupObject of the cleaned Knife resolved to the SinkBasin: the forced PutObject laid it
    # across the view at the nearest spot; THOR 2.1.0 kept the held yaw (along the view) wherever
    # it fitted, and a second lettuce put into a basin no longer lands on the first one's mask
    "pick_clean_then_place_in_recep-Knife-None-DiningTable-23": "basin put keeps the held yaw",
    "pick_two_obj_and_place-Lettuce-None-SinkBasin-26": "basin put keeps the held yaw (2); also fixed by round produce",
    # every step succeeded but the goal's Dresser / Cart did not exist: today's metadata calls
    # those pieces SideTable; THOR 2.1.0's scene type lists name them (thor_lite/thor2_types.py)
    "pick_and_place_simple-BasketBall-None-Dresser-314": "THOR 2.1.0 furniture names (Dresser)",
    "pick_and_place_simple-DishSponge-None-Cart-401": "THOR 2.1.0 furniture names (Cart)",
    # SliceObject "needs a knife": the knife's mask picked the Bread, because the Knife posed
    # flat at no roll stood on its edge along z; THOR 2.1.0's knife lay along x
    "pick_cool_then_place_in_recep-BreadSliced-None-DiningTable-15": "THOR 2.1.0 flat knife asset",
    # PickupObject of the heated Egg / Mug resolved to the Microwave: the forced PutObject had
    # stood it on the box's bottom beside the control panel; THOR 2.1.0 used the raised cavity
    "pick_heat_then_place_in_recep-Egg-None-GarbageCan-8": "microwave cavity (Egg)",
    "pick_heat_then_place_in_recep-Mug-None-Cabinet-12": "microwave cavity (Mug)",
    # PutObject on a coffee table with no resting height learned had no valid position (its
    # grid started on the floor between the legs); a table-like receptacle's surface is its top
    "pick_and_place_simple-Statue-None-CoffeeTable-222": "table top is the surface",
    # OpenObject's mask of a dresser drawer resolved to the dresser, whose box reaches 9 mm past
    # the drawer fronts (thor_lite/fronts.py draws them out past it)
    "pick_and_place_simple-TissueBox-None-Dresser-301": "drawer fronts past the dresser face",
    # PickupObject of a credit card beside a desk lamp's base resolved to the lamp, drawn as its
    # solid box; it is drawn as base, stem and shade
    "pick_two_obj_and_place-CreditCard-None-SideTable-326": "desk lamp base, stem and shade",
    # PickupObject of a washed Knife / Ladle resolved to the SinkBasin: the forced PutObject
    # had stood it on end at the basin's rim (upright poses hit the rim walls there); every
    # spot is tried upright before any is tried on its side
    "pick_clean_then_place_in_recep-Knife-None-CounterTop-24": "upright at every spot before tilted (Knife)",
    "pick_clean_then_place_in_recep-Ladle-None-Cabinet-25": "upright at every spot before tilted (Ladle)",
    # PickupObject of a RemoteControl on a side table's lower level resolved to the Shelf
    # above it, drawn as a solid block from its box bottom to its learned surface: a shelf
    # is drawn as its board
    "look_at_obj_in_light-RemoteControl-None-FloorLamp-202": "a shelf is drawn as its board",
    # PickupObject of a CreditCard / RemoteControl resolved to the Sofa / ArmChair: today's
    # scene contents put the seat 5-7 cm above where ALFRED's poses rest things on it;
    # THOR 2.1.0's poses lower a learned surface
    "pick_and_place_simple-CreditCard-None-ArmChair-201": "posed contents lower a sofa seat",
    "pick_two_obj_and_place-RemoteControl-None-CoffeeTable-202": "posed contents lower an armchair seat",
    # PickupObject of a Plate on a TV stand's lower shelf (its own Shelf / DiningTable object)
    # resolved to the TVStand, drawn as a solid box: furniture holding another level is open
    "look_at_obj_in_light-Plate-None-FloorLamp-223": "TV stand with an inner level is open (DiningTable)",
    "pick_two_obj_and_place-Plate-None-CoffeeTable-201": "TV stand with an inner level is open (Shelf)",
    # PickupObject of a RemoteControl / KeyChain on a TV stand resolved to the Television, drawn
    # as its solid box (a thin screen over a deep foot): it is drawn as foot and screen
    "look_at_obj_in_light-RemoteControl-None-FloorLamp-208": "television foot and screen (beside the foot)",
    "pick_two_obj_and_place-KeyChain-None-SideTable-311": "television foot and screen (in front of the screen)",
    # PickupObject of a KeyChain on the dresser under a loft bed resolved to the Bed, drawn
    # solid up to its mattress: a bed holding other furniture is a top on legs
    "pick_two_obj_and_place-KeyChain-None-Dresser-318": "loft bed over a dresser is open",
    # PutObject into an open dresser drawer found "No valid positions": the spots were searched
    # in the drawer's closed box, inside the dresser's solid box; the open drawer is drawn slid out
    "pick_two_obj_and_place-CreditCard-None-Drawer-213": "put in the drawn-out open drawer",
    "pick_two_obj_and_place-Newspaper-None-Drawer-224": "put in the drawn-out open drawer (2)",
    # PutObject on a shelf found "No valid positions": the shelf's board, drawn 2 cm thick about
    # the surface learned from its contents, poked 1 cm above where things rest
    "pick_and_place_with_movable_recep-CreditCard-Plate-Shelf-214": "shelf board top is the surface",
    "pick_two_obj_and_place-KeyChain-None-Shelf-207": "shelf board top is the surface (2)",
    # PutObject's mask of a dresser top (and PickupObject's of a remote in front of a TV) found
    # the Television drawn as its solid box; it is drawn as a thin centred panel on a stand
    "pick_two_obj_and_place-Pen-None-Dresser-229": "television panel and stand",
    "pick_and_place_with_movable_recep-RemoteControl-Box-CoffeeTable-211": "television panel and stand (2)",
    # every step succeeded but the PutObject mask of the garbage can found the toilet: today's
    # can stands 3 m away; the recorded objectId says where THOR 2.1.0 had it
    "pick_and_place_simple-SoapBottle-None-GarbageCan-413": "THOR 2.1.0 furniture poses from recorded ids",
    # PutObject of a Pencil into a 17 cm Bowl found "No valid positions": stood up, it fits only
    # at the bowl's centre, which the 5 cm grid from a corner misses; THOR's 9 x 9 spawn grid
    # (edge to edge, symmetric) is tried where ours holds nothing
    "pick_and_place_with_movable_recep-Pencil-Bowl-SideTable-316": "THOR spawn grid where ours holds nothing",
    # PickupObject of a cooled Lettuce resolved to the Fridge: put on our one shelf level, it
    # lay below where THOR's mask shows it; a fridge offers every level its contents rest on,
    # spots the camera sees first, nearest to the camera
    "pick_cool_then_place_in_recep-Lettuce-None-SinkBasin-25": "fridge shelf levels",
    # PutObject onto a coffee table found nothing: the held box, drawn centred at the hand
    # point, covered where the recorded mask lies; in a THOR 2.1.0 trajectory a held object
    # hangs from the hand
    "pick_and_place_with_movable_recep-Statue-Box-CoffeeTable-204": "a held box hangs from the hand",
    # every step succeeded but the pickup mask of a keychain in an open Box found the Box (a
    # shell with a side door and a 1.5 cm floor over the keychain), and that of a book behind an
    # open laptop found the Laptop (a solid box): an open Box is four walls, a Laptop is
    # keyboard and screen
    "pick_and_place_simple-KeyChain-None-Dresser-217": "an open box is four walls",
    "pick_and_place_simple-Book-None-Desk-304": "an open laptop is keyboard and screen",
    # PutObject into a sink basin found the salt shaker beside it: FloorPlan6's corner window,
    # drawn as its solid box (80 x 80 cm, down to below the counter), covered the basin
    "pick_clean_then_place_in_recep-Cup-None-Cabinet-6": "a corner window is two panes",
    # PickupObject of a pencil beside a lamp's base found the lamp: in THOR 2.1.0 mode the
    # shade is the top 28 % and the base 45 % wide (FloorPlan309's pen behind a lamp's shade
    # reached its goal with that rule too, until pens were turned: its 3-row mask then lies
    # 3 px below the pen; the shade is checked by the drawn-parts test below)
    "pick_and_place_with_movable_recep-Pencil-Mug-Dresser-322": "a desk lamp's base is narrower",
    # PickupObject of a pen found the drawer / the side table: THOR 2.1.0's pen ran its length
    # along local x, ours along z, so ours lay across the recorded mask (thor2_types)
    "pick_and_place_with_movable_recep-Pen-Mug-Dresser-301": "a 2.1.0 pen lies turned",
    "pick_and_place_with_movable_recep-Pen-Mug-SideTable-329": "a 2.1.0 pen lies turned (2)",
    # PutObject masks over a sink resolved to the Sink fixture (its drawn walls and rim): the
    # kettle was never in the SinkBasin the faucet cleans, the cup never in the goal's basin
    "pick_clean_then_place_in_recep-Kettle-None-Cabinet-11": "a put on a sink lands in its basin",
    "pick_and_place_with_movable_recep-ButterKnife-Cup-SinkBasin-8": "a put on a sink fills its basin",
    # PickupObject of a spray bottle at the frame's left edge (its pixels in columns 0-4): our
    # visibility lattice, at 75 % of the box, lay just outside the frame; in THOR 2.1.0 mode a
    # pickupable's points reach its surface as 2.1.0's mesh points do
    "pick_two_obj_and_place-SprayBottle-None-CounterTop-410": "visibility points on the surface",
    # every step succeeded but the PutObject mask of FloorPlan3's side table (its top at counter
    # height, inside the L-shaped counter's box) found the CounterTop slab drawn over it; in
    # THOR 2.1.0 mode a counter slab is open over a table standing inside its box
    "pick_and_place_simple-Knife-None-SideTable-3": "counter slab open over a table inside its box",
    "pick_heat_then_place_in_recep-Mug-None-SideTable-3": "counter slab open over a table inside its box (2)",
    # every step succeeded but the PutObject mask of a cabinet found the floor: every recorded id
    # is today's, so the THOR 2.1.0 rules (the held plunger hanging from the hand) were off;
    # ALFRED's posed asset names tell a THOR 2.1.0 trajectory (alfred_task/env/thor_version.py)
    "pick_and_place_simple-Plunger-None-Cabinet-402": "THOR 2.1.0 recognised by its posed asset names",
    # every step succeeded but the bowl went onto today's Desk, which 2.1.0 called SideTable (the
    # scene has both types): ALFRED's receptacle ids beside its layouts name it (thor2_renames)
    "pick_and_place_with_movable_recep-CreditCard-Bowl-SideTable-307": "a table takes the type 2.1.0's id gives it",
    # PutObject masks of a sink basin found a lettuce in it ("NOT a receptacle"): the lettuce's
    # solid box took the pixels around THOR's round lettuce; round produce is drawn round
    "pick_and_place_with_movable_recep-PotatoSliced-Pot-DiningTable-21": "round produce (a lettuce in a basin)",
    # PickupObject of a phone on a shelf / a pen on a side table found the furniture: settling
    # had lifted them 1-2 cm onto today's top before their poses lowered it; the posed bottoms
    # set the surface and the objects lie at their poses (thor_lite/actions/posed_surfaces.py)
    "pick_two_obj_and_place-CellPhone-None-Safe-302": "posed bottoms set a furniture surface (shelf)",
    "pick_and_place_with_movable_recep-Pen-Mug-Desk-309": "posed bottoms set a furniture surface (side table)",
}

# Real trajectories whose recorded low-level actions all succeed (the goal is not asserted:
# a later placement differs from THOR's), each with the rule that fixed its first failure:
_STEP_CASES = {
    # MoveAhead blocked by an L-shaped CounterTop's box, which holds recorded layout cells:
    # a box the layout contradicts does not block. (Its goal was reached until produce was drawn
    # round: the cooled lettuce lies on a fridge level above THOR's, and its pickup mask, which
    # overlapped the lettuce's solid box by 125 px, now finds the cup behind it.)
    "pick_cool_then_place_in_recep-Lettuce-None-SinkBasin-24": "layout-contradicted boxes do not block",
}


def _replay_row(env, task, monkeypatch):
    """The fidelity benchmark's replay row of one real trajectory."""
    from alfred_task.evaluation.replay import replay_trajectory

    return replay_trajectory(env, _traj(task))


@needs_sample
@pytest.mark.parametrize("task", sorted(_REPLAY_CASES), ids=lambda t: _REPLAY_CASES[t])
def test_recorded_actions_replay_to_the_goal(env, task, monkeypatch):
    row = _replay_row(env, task, monkeypatch)
    assert row["first_failure"] is None, row["first_failure"]
    assert row["goal"] and not row["solved_at_t0"]


@needs_sample
@pytest.mark.parametrize("task", sorted(_STEP_CASES), ids=lambda t: _STEP_CASES[t])
def test_recorded_actions_all_succeed(env, task, monkeypatch):
    row = _replay_row(env, task, monkeypatch)
    assert row["first_failure"] is None and row["ok_steps"] == row["steps"], row["first_failure"]


@needs_sample
@pytest.mark.parametrize(
    "task",
    [
        "pick_and_place_simple-CellPhone-None-SideTable-326",
        "pick_and_place_simple-TissueBox-None-Dresser-301",
    ],
)
def test_drawer_contents_are_not_on_the_furniture_top(env, task):
    """THOR's receptacle volume of a side table or dresser is on its top: a phone restored in
    one of its drawers is in that drawer only, so the task is not solved before it starts."""
    from alfred_task.env.goal_conditions import goal_satisfied

    traj = _traj(task)
    env.init_episode(traj)
    md = env.last_event.metadata
    assert not goal_satisfied(
        traj["task_type"],
        traj["pddl_params"],
        md["objects"],
        inventory_objects=md["inventoryObjects"],
    )
    parent = traj["pddl_params"]["parent_target"]
    in_drawers = [
        o
        for o in md["objects"]
        if o["objectType"] == traj["pddl_params"]["object_target"]
        and any(p.startswith("Drawer|") for p in o["parentReceptacles"] or [])
    ]
    assert in_drawers and all(
        not any(p.startswith(parent + "|") for p in o["parentReceptacles"]) for o in in_drawers
    )


@pytest.mark.parametrize("scene", ["FloorPlan4", "FloorPlan15", "FloorPlan19"])
def test_coffee_machine_attach_point_matches_thors_recorded_mug(scene):
    """THOR's scenes record a Mug in these coffee machines: the attach-point rule puts a mug
    within 6 cm of that pose (the old rule, centred on its top, put it some 40 cm higher)."""
    import numpy as np

    from thor_lite.controller import Controller

    c = Controller(scene=scene)
    objs = c._world.objects
    cm = next(o for o in objs.values() if o.object_type == "CoffeeMachine")
    mug = next(o for o in objs.values() if o.object_type == "Mug" and cm.object_id in o.parents)
    assert c.step("PickupObject", objectId=mug.object_id, forceAction=True).metadata[
        "lastActionSuccess"
    ]
    ev = c.step("PutObject", objectId=cm.object_id, forceAction=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert np.abs(c._world.objects[mug.object_id].box.center - mug.box.center).max() < 0.06
    c.stop()


@needs_sample
def test_a_knife_posed_flat_at_no_roll_lies_flat_along_its_yaw_plus_90(env):
    """THOR 2.1.0 poses a knife lying flat as rotation (0, 180, 0) (real case: the Knife of
    FloorPlan15 under the loaf); today's knife lies flat rolled 90 degrees about its length.
    The rule keeps it flat (thin in y) with its length along x; a pose with a roll stays as given."""
    traj = _traj("pick_cool_then_place_in_recep-BreadSliced-None-DiningTable-15")
    env.init_episode(traj)
    knife = next(
        o for o in env.last_event.metadata["objects"] if o["objectId"].startswith("Knife|-01.36")
    )
    lo, hi = (
        np.array(
            [
                min(c[k] for c in knife["objectOrientedBoundingBox"]["cornerPoints"])
                for k in range(3)
            ]
        ),
        np.array(
            [
                max(c[k] for c in knife["objectOrientedBoundingBox"]["cornerPoints"])
                for k in range(3)
            ]
        ),
    )
    size = hi - lo
    assert size[1] < 0.02 and size[0] > 0.25 and size[2] < 0.06, size
    name = knife["name"]
    ev = env.controller.step(
        "SetObjectPoses",
        objectPoses=[
            {
                "objectName": name,
                "position": knife["position"],
                "rotation": {"x": 0, "y": 0, "z": 90},
            }
        ],
    )
    rot = next(o for o in ev.metadata["objects"] if o["name"] == name)["rotation"]
    assert abs(rot["y"]) < 1 and abs(rot["z"] - 90) < 1


@needs_sample
def test_microwave_cavity_holds_what_thor_kept_in_the_microwave(env):
    """FloorPlan12's ALFRED initial state keeps an Egg and a Cup in the Microwave at THOR 2.1.0's
    positions: both stand in the cavity PutObject uses (over its footprint, bottoms within 4 cm of
    its floor), 9+ cm above the box's bottom where the plain rule put things."""
    from thor_lite import physics

    env.init_episode(_traj("pick_heat_then_place_in_recep-Mug-None-Cabinet-12"))
    w = env.controller._world
    mw = next(o for o in w.objects.values() if o.object_type == "Microwave")
    cav = physics.microwave_cavity(mw)
    inside = [o for o in w.objects.values() if mw.object_id in o.parents]
    assert sorted(o.object_type for o in inside) == ["Cup", "Egg"]
    floor = physics.surface_height(w, cav)
    for o in inside:
        lo, hi = o.aabb
        local = (o.box.center - cav.box.center) @ cav.box.rot
        assert (np.abs(local[[0, 2]]) <= cav.box.half[[0, 2]]).all(), (
            o.object_type,
            local,
            cav.box.half,
        )
        assert abs(lo[1] - floor) < 0.04, (o.object_type, lo[1], floor)
        assert lo[1] - physics.surface_height(w, mw) > 0.06


def test_put_in_an_open_drawer_lands_in_the_drawn_out_drawer():
    """An open Drawer is drawn slid out of its closed box (80 % of its depth, `DRAWER_SLIDE`):
    PutObject searches that box, so the object lies in the drawer the camera sees, outside the
    furniture holding it; closing the drawer carries it back in."""
    from thor_lite import physics
    from thor_lite.controller import Controller

    c = Controller(scene="FloorPlan213")
    w = c._world
    drawer = next(
        o for o in w.objects.values() if o.object_id.startswith("Drawer|+14.18|+00.37|+00.56")
    )
    card = next(o for o in w.objects.values() if o.object_type == "CreditCard")
    assert c.step("OpenObject", objectId=drawer.object_id, forceAction=True).metadata[
        "lastActionSuccess"
    ]
    assert c.step("PickupObject", objectId=card.object_id, forceAction=True).metadata[
        "lastActionSuccess"
    ]
    opened = c._world.objects[drawer.object_id]
    region = physics.open_drawer_region(opened)
    lo, hi = opened.aabb
    assert np.allclose(
        region.box.center, opened.box.center + np.array([-0.8 * (hi - lo)[0], 0.0, 0.0])
    )
    ev = c.step("PutObject", objectId=drawer.object_id, forceAction=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    placed = c._world.objects[card.object_id]
    assert region.box.contains(placed.box.corners(), margin=0.01).all()
    assert not opened.box.contains(
        placed.box.center[None], margin=0.0
    ).all()  # not in the closed box
    assert c.step("CloseObject", objectId=drawer.object_id, forceAction=True).metadata[
        "lastActionSuccess"
    ]
    assert drawer.box.contains(c._world.objects[card.object_id].box.center[None], margin=0.01).all()
    c.stop()


def test_a_thin_truncated_part_keeps_its_top_at_the_surface():
    """A part cut `offset` below a box's top is at least 2 cm thick; when that is thicker than
    what is left, it grows downwards, so its top stays at the surface things rest on."""
    from thor_lite.geometry import Box
    from thor_lite.objects import _truncated

    b = Box(np.array([0.0, 0.5, 0.0]), np.array([0.3, 0.3, 0.2]), np.eye(3))
    for offset, top in ((0.4, 0.4), (0.595, 0.205), (0.61, 0.19)):
        lo, hi = _truncated(b, offset).aabb()
        assert hi[1] == pytest.approx(top) and hi[1] - lo[1] >= 0.02 - 1e-9


def test_a_television_is_a_thin_centred_panel_on_a_narrow_stand():
    """Television parts: a panel TV_PANEL_DEPTH of the depth (the shorter horizontal axis),
    centred, over the top of the box, and a narrow stand under it; nothing reaches the front
    or back faces of the solid box below the panel (the furniture top shows there)."""
    from thor_lite.constants import TV_PANEL_BOTTOM, TV_PANEL_DEPTH, TV_STAND_WIDTH
    from thor_lite.geometry import Box
    from thor_lite.objects import _tv_parts

    b = Box(np.array([1.0, 1.2, 2.0]), np.array([0.5, 0.4, 0.18]), np.eye(3))  # depth along z
    panel, stand = _tv_parts(b)
    plo, phi = panel.aabb()
    slo, shi = stand.aabb()
    assert np.allclose([plo[2], phi[2]], [2.0 - 0.18 * TV_PANEL_DEPTH, 2.0 + 0.18 * TV_PANEL_DEPTH])
    assert np.allclose([plo[0], phi[0]], [0.5, 1.5]) and np.isclose(phi[1], 1.6)
    assert np.isclose(plo[1], 0.8 + 0.8 * TV_PANEL_BOTTOM) and np.isclose(slo[1], 0.8)
    assert np.isclose(shi[1], plo[1]) and np.isclose(shi[0] - slo[0], 1.0 * TV_STAND_WIDTH)


def test_thor_spawn_grid_is_nine_by_nine_edge_to_edge_about_the_centre():
    from thor_lite.physics import _spots

    centre = np.array([1.0, 0.5, -2.0])
    rx, rz = np.array([0.0, 0.0, 1.0]), np.array([-1.0, 0.0, 0.0])  # a receptacle turned 90 deg
    ours = _spots(centre, rx, rz, 0.085, 0.085, thor_grid=False)
    thor = _spots(centre, rx, rz, 0.085, 0.085, thor_grid=True)
    assert len(thor) == 81
    assert np.isclose(np.linalg.norm(thor - centre, axis=1), 0.0).any()  # the centre is a spot
    assert not np.isclose(np.linalg.norm(ours - centre, axis=1), 0.0, atol=0.01).any()  # 1.5 cm off
    assert np.allclose(thor[:, 1], 0.5)
    off = thor - centre
    assert np.isclose(off[:, 2].max(), 0.085) and np.isclose(
        off[:, 0].min(), -0.085
    )  # edge to edge
    assert np.allclose(np.sort(off[:, 2]), -np.sort(off[:, 2])[::-1])  # symmetric about the centre


def test_shelf_spots_put_seen_spots_first_each_nearest_to_the_eye():
    from thor_lite.physics import _shelf_spots

    flat = np.array([[0.0, 9.0, 0.0], [0.3, 9.0, 0.0]])
    eye = np.array([0.0, 1.5, -0.5])
    hidden_low = lambda p: p[1] > 1.0  # the lower level is under a shelf
    grid = _shelf_spots(flat, [0.6, 1.2], eye, hidden_low)
    assert grid.shape == (4, 3)
    assert np.allclose(grid[:2, 1], 1.2) and np.allclose(grid[2:, 1], 0.6)  # seen level first
    assert np.allclose(grid[0], [0.0, 1.2, 0.0]) and np.allclose(
        grid[2], [0.0, 0.6, 0.0]
    )  # nearest first


def test_an_open_laptop_is_a_keyboard_slab_and_a_screen_at_its_back():
    """Laptop parts: a slab LAPTOP_BASE_TOP of the height over the whole footprint and a full
    height panel LAPTOP_SCREEN_DEPTH of the depth (the shorter horizontal axis) on the side
    away from `front`; the space over the keyboard in front of the screen is empty."""
    from thor_lite.constants import LAPTOP_BASE_TOP, LAPTOP_SCREEN_DEPTH
    from thor_lite.geometry import Box
    from thor_lite.objects import _laptop_parts

    b = Box(np.array([0.0, 1.0, 0.0]), np.array([0.18, 0.15, 0.14]), np.eye(3))  # depth along z
    for front, back in (((0.0, 1.0), -1.0), ((0.0, -1.0), 1.0)):
        base, screen = _laptop_parts(b, front)
        blo, bhi = base.aabb()
        slo, shi = screen.aabb()
        assert np.allclose([blo[1], bhi[1]], [0.85, 0.85 + 0.3 * LAPTOP_BASE_TOP])
        assert np.allclose([blo[2], bhi[2]], [-0.14, 0.14]) and np.allclose(
            [slo[1], shi[1]], [0.85, 1.15]
        )
        edge = (slo[2], shi[2])[back > 0]
        assert np.isclose(edge, back * 0.14) and np.isclose(
            shi[2] - slo[2], 0.28 * LAPTOP_SCREEN_DEPTH
        )
        assert not any(
            p.contains(np.array([[0.0, 1.05, -back * 0.1]]), margin=0.0).any()
            for p in (base, screen)
        )


@pytest.mark.parametrize("layout_mode", [True, False])
def test_a_held_object_hangs_from_the_hand_in_thor2_episodes(layout_mode):
    """In an episode THOR 2.1.0 recorded (`set_held_objects_hang`) the held object is drawn
    with its box top at most HELD_TOP_ABOVE_HAND above the hand point (THOR grips near the
    top); otherwise it stays centred at the hand, and its metadata pose (held_box) is the same
    in both."""
    from backends.launch import make_controller
    from thor_lite.constants import HELD_TOP_ABOVE_HAND
    from thor_lite.world import drawn_held_box

    c = make_controller(scene="FloorPlan1", width=64, height=64, layout_clears_moveables=True)
    c.set_held_objects_hang(layout_mode)
    w = c._world
    tall = max(
        (o for o in w.objects.values() if o.pickupable),
        key=lambda o: o.box.aabb()[1][1] - o.box.aabb()[0][1],
    )
    assert c.step("PickupObject", objectId=tall.object_id, forceAction=True).metadata[
        "lastActionSuccess"
    ]
    held = w.objects[w.held]
    centred, drawn = w.held_box(held), drawn_held_box(w, held)
    hand = w.hand_position()
    assert np.allclose(centred.center, hand)
    top = drawn.aabb()[1][1]
    if layout_mode:
        assert top == pytest.approx(min(centred.aabb()[1][1], hand[1] + HELD_TOP_ABOVE_HAND))
        assert (
            top < centred.aabb()[1][1]
        )  # the tallest pickupable of a kitchen is taller than 10 cm
    else:
        assert np.allclose(drawn.center, centred.center)
    (part,) = w.render_parts(held)
    assert np.allclose(part.center, drawn.center)
    c.stop()


def test_an_open_box_is_four_walls_in_thor2_mode_only():
    """An open Box: four walls and a 2 mm floor sheet, no top, in THOR 2.1.0 mode; a closed one is solid, and
    today's mode keeps its shell-and-door shape (data generated on thor_lite is unchanged)."""
    from backends.launch import make_controller

    for layout_mode in (True, False):
        c = make_controller(
            scene="FloorPlan201", width=64, height=64, layout_clears_moveables=layout_mode
        )
        box = next(o for o in c._world.objects.values() if o.object_type == "Box")
        assert box.openness > 0
        parts = box.parts
        lo, hi = box.aabb
        if layout_mode:
            assert len(parts) == 5
            centre = (lo + hi) / 2
            assert not any(
                p.contains(np.array([[centre[0], y, centre[2]]]), margin=0.0).any()
                for p in parts
                for y in (lo[1] + 0.003, hi[1] - 0.002)
            )
            assert (
                parts[-1]
                .contains(np.array([[centre[0], lo[1] + 0.001, centre[2]]]), margin=0.0)
                .all()
            )
            assert len(box.with_changes(openness=0.0).parts) == 1
        else:
            assert len(parts) == 6  # a shell without its front face, plus the door
        c.stop()


def test_a_corner_window_is_two_panes_on_the_walls_side_in_thor2_mode():
    """FloorPlan6's corner window (its box 80 x 80 cm, reaching below the counter over the
    sink): two thin panes on the faces away from the free floor in THOR 2.1.0 mode, nothing
    at the sink basin's centre; a plain window and today's mode keep the box."""
    from backends.launch import make_controller
    from thor_lite.constants import WINDOW_PANE_MIN_DEPTH

    for layout_mode in (True, False):
        c = make_controller(
            scene="FloorPlan6", width=64, height=64, layout_clears_moveables=layout_mode
        )
        w = c._world
        windows = [o for o in w.objects.values() if o.object_type == "Window"]
        corner = [o for o in windows if min(o.box.half[0], o.box.half[2]) >= WINDOW_PANE_MIN_DEPTH]
        assert len(corner) == 1 and len(windows) > 1
        basin = next(o for o in w.objects.values() if o.object_type == "SinkBasin")
        parts = corner[0].parts
        if layout_mode:
            assert len(parts) == 2 and all(min(p.half) <= 0.01 for p in parts)
            assert not any(p.contains(basin.box.center[None], margin=0.0).any() for p in parts)
            room = np.mean(np.array(list(w.free_cells()), dtype=float), axis=0) * w.grid_size
            for p in parts:  # each pane lies farther from the room centre than the box centre
                off = p.center - corner[0].box.center
                assert np.dot(off[[0, 2]], room - corner[0].box.center[[0, 2]]) < 0
        else:
            assert len(parts) == 1
        assert all(len(o.parts) == 1 for o in windows if o not in corner)
        c.stop()


@needs_sample
def test_thor2_trajectories_hang_held_objects_and_generated_data_keeps_them_centred(env):
    """A trajectory THOR 2.1.0 recorded (ids of the older build) is replayed with THOR 2.1.0's
    grip (`thor2_rules`); data generated here names today's ids and keeps held objects centred,
    as it was recorded (so training frames and evaluation frames agree)."""
    env.init_episode(_traj("pick_and_place_with_movable_recep-Statue-Box-CoffeeTable-204"))
    assert env.controller._world.held_hangs
    lite = sorted((REPO / "data" / "alfred_lite").rglob("traj_data.json"))[0]
    env.init_episode(json.loads(lite.read_text()))
    assert not env.controller._world.held_hangs


def test_a_thor2_desk_lamp_has_a_higher_shade_and_a_narrower_base():
    """THOR 2.1.0 mode's lamp (LAMP_*_THOR2): the shade starts higher and the base is narrower
    than today's, the stem and the base height unchanged."""
    from thor_lite.constants import (
        LAMP_BASE_TOP,
        LAMP_BASE_WIDTH,
        LAMP_BASE_WIDTH_THOR2,
        LAMP_SHADE_BOTTOM,
        LAMP_SHADE_BOTTOM_THOR2,
    )
    from thor_lite.geometry import Box
    from thor_lite.objects import _lamp_parts

    b = Box(np.array([0.0, 1.0, 0.0]), np.array([0.2, 0.4, 0.2]), np.eye(3))  # 0.6 .. 1.4 m
    for thor2, shade, width in (
        (False, LAMP_SHADE_BOTTOM, LAMP_BASE_WIDTH),
        (True, LAMP_SHADE_BOTTOM_THOR2, LAMP_BASE_WIDTH_THOR2),
    ):
        base, stem, top = _lamp_parts(b, thor2)
        assert top.aabb()[0][1] == pytest.approx(0.6 + 0.8 * shade) and top.aabb()[1][
            1
        ] == pytest.approx(1.4)
        assert base.half[0] == pytest.approx(0.2 * width) and base.aabb()[1][1] == pytest.approx(
            0.6 + 0.8 * LAMP_BASE_TOP
        )
        assert stem.half[0] <= 0.012
    assert LAMP_SHADE_BOTTOM_THOR2 > LAMP_SHADE_BOTTOM and LAMP_BASE_WIDTH_THOR2 < LAMP_BASE_WIDTH


@needs_sample
def test_a_put_on_a_sink_fixture_goes_to_its_basin_in_thor2_episodes_only(env):
    """THOR 2.1.0's Sink was no receptacle, only its SinkBasin child: in a THOR 2.1.0
    trajectory a PutObject on the fixture puts into the basin; elsewhere the fixture stays."""
    from thor_lite.actions.interaction import basin_child_for_put

    env.init_episode(_traj("pick_clean_then_place_in_recep-Kettle-None-Cabinet-11"))
    w = env.controller._world
    sink = next(
        o for o in w.objects.values() if o.object_type == "Sink" and o.flags.get("receptacle")
    )
    assert w.thor2_rules and basin_child_for_put(w, sink).object_id == sink.object_id + "|SinkBasin"
    w.thor2_rules = False
    try:
        assert basin_child_for_put(w, sink) is sink
    finally:
        w.thor2_rules = True


def test_a_bread_slice_seen_over_its_neighbours_is_visible_in_thor2_mode(env):
    """BreadSliced-GarbageCan-4 step 26: the recorded pickup mask lies on the top of one slice
    of a loaf standing in a row; every lattice point of that slice was behind the next slice's
    box. THOR's ray stops at the first collider it hits, and 2.1.0's points lie on the mesh: in
    THOR 2.1.0 mode the slice is visible, under today's rule (THOR 5 data) it is not."""
    from alfred_task.constants import INTERACT_ACTIONS
    from alfred_task.data.masks import decompress_mask

    traj = _traj("pick_heat_then_place_in_recep-BreadSliced-None-GarbageCan-4")
    env.init_episode(traj)
    lows = traj["plan"]["low_actions"]
    for la in lows[:26]:
        act = la["discrete_action"]["action"]
        if act in INTERACT_ACTIONS:
            assert env.va_interact(act, decompress_mask(la["discrete_action"]["args"]["mask"]))[0]
        else:
            env.step(dict(la["api_action"]))
    w = env.controller._world
    target = env.mask_to_object(decompress_mask(lows[26]["discrete_action"]["args"]["mask"]))
    assert "BreadSliced" in target and w.first_hit_visibility
    assert w.visibility([target])[target] == (True, True)
    w.first_hit_visibility = False
    w._cache.clear()
    try:
        assert w.visibility([target])[target] == (False, False)
    finally:
        w.first_hit_visibility = True
        w._cache.clear()
