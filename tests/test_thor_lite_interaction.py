"""Object interactions of thor_lite (AI2-THOR 5.0 reference §5.2, §5.3, §6)."""

from __future__ import annotations

import re

import numpy as np
import pytest


def oid(c, object_type, i=0):
    return c.last_event.objects_by_type(object_type)[i]["objectId"]


def obj(c, object_id):
    o = c.last_event.get_object(object_id)
    assert o is not None, object_id
    return o


def ok(ev):
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert ev.metadata["errorMessage"] == ""
    return ev


def fails(ev, message=None, startswith=None):
    assert ev.metadata["lastActionSuccess"] is False
    if message is not None:
        assert ev.metadata["errorMessage"] == message
    if startswith is not None:
        assert ev.metadata["errorMessage"].startswith(startswith), ev.metadata["errorMessage"]
    return ev


def go_see(c, object_id, standing=None):
    """Teleport to an interactable pose of the object; the object is then visible."""
    kw = {} if standing is None else {"standings": [standing]}
    poses = ok(c.step("GetInteractablePoses", objectId=object_id, **kw)).metadata["actionReturn"]
    assert poses, f"no interactable pose for {object_id}"
    # prefer a level, standing view: deterministic choice
    poses = sorted(
        poses,
        key=lambda p: (abs(p["horizon"] - 30), not p["standing"], p["x"], p["z"], p["rotation"]),
    )
    ev = ok(c.step("TeleportFull", **poses[0]))
    assert ev.get_object(object_id)["visible"]
    return ev


# --- PickupObject --------------------------------------------------------------------
def test_pickup_success(fresh):
    c = fresh
    apple = oid(c, "Apple")
    parent = obj(c, apple)["parentReceptacles"][0]
    go_see(c, apple)
    assert obj(c, apple)["isInteractable"]
    ev = ok(c.step("PickupObject", objectId=apple))
    assert ev.metadata["actionReturn"] == apple
    a = ev.get_object(apple)
    assert a["isPickedUp"] and a["parentReceptacles"] is None
    assert apple not in ev.get_object(parent)["receptacleObjectIds"]
    assert ev.metadata["inventoryObjects"] == [{"objectId": apple, "objectType": "Apple"}]


def test_pickup_not_visible(fresh):
    c = fresh
    apple = oid(c, "Apple")
    assert not obj(c, apple)["visible"]
    ev = fails(
        c.step("PickupObject", objectId=apple),
        "Target object not found within the specified visibility.",
    )
    assert ev.metadata["inventoryObjects"] == []
    assert ev.get_object(apple)["isPickedUp"] is False


def test_pickup_not_pickupable(fresh):
    c = fresh
    fridge = oid(c, "Fridge")
    fails(
        c.step("PickupObject", objectId=fridge, forceAction=True),
        f"{fridge} must have the property CanPickup to be picked up.",
    )


def test_pickup_hand_full(fresh):
    c = fresh
    ok(c.step("PickupObject", objectId=oid(c, "Apple"), forceAction=True))
    ev = fails(
        c.step("PickupObject", objectId=oid(c, "Mug"), forceAction=True),
        "Agent hand has something in it already! Can't pick up anything else",
    )
    assert ev.metadata["inventoryObjects"][0]["objectType"] == "Apple"


def test_pickup_unknown_id(fresh):
    c = fresh
    fails(
        c.step("PickupObject", objectId="Apple|+01.00|+01.00|+01.00", forceAction=True),
        "objectId: Apple|+01.00|+01.00|+01.00 is not the objectId on any object in the scene!",
    )


def test_pickup_missing_object_id_raises(fresh):
    with pytest.raises(ValueError, match="objectId"):
        fresh.step("PickupObject")


def test_pickup_by_screen_point(fresh):
    c = fresh
    apple = oid(c, "Apple")
    go_see(c, apple)
    ev = c.last_event
    # aim at the projection of the apple's AABB centre (x, y in [0, 1], origin top-left)
    a = ev.get_object(apple)
    centre = np.array([a["axisAlignedBoundingBox"]["center"][k] for k in "xyz"])
    cam = ev.metadata["cameraPosition"]
    ag = ev.metadata["agent"]
    yaw, pitch = np.radians(ag["rotation"]["y"]), np.radians(ag["cameraHorizon"])
    fwd = np.array([np.sin(yaw) * np.cos(pitch), -np.sin(pitch), np.cos(yaw) * np.cos(pitch)])
    right = np.array([np.cos(yaw), 0.0, -np.sin(yaw)])
    up = np.cross(fwd, right)
    d = centre - np.array([cam["x"], cam["y"], cam["z"]])
    t = np.tan(np.radians(ev.metadata["fov"]) / 2)
    x = 0.5 + (d @ right) / (d @ fwd) / t / 2
    y = 0.5 - (d @ up) / (d @ fwd) / t / 2
    assert 0 < x < 1 and 0 < y < 1
    ev = ok(c.step("PickupObject", x=float(x), y=float(y)))
    assert ev.metadata["inventoryObjects"][0]["objectId"] == apple


# --- PutObject ----------------------------------------------------------------------
def test_put_on_counter_top(fresh):
    c = fresh
    apple = oid(c, "Apple")
    counter = obj(c, apple)["parentReceptacles"][0]
    assert counter.startswith("CounterTop|")
    go_see(c, apple)
    ok(c.step("PickupObject", objectId=apple))
    assert obj(c, counter)["visible"]
    ev = ok(c.step("PutObject", objectId=counter))
    a = ev.get_object(apple)
    assert a["isPickedUp"] is False
    assert a["parentReceptacles"][0] == counter
    assert apple in ev.get_object(counter)["receptacleObjectIds"]
    assert ev.metadata["inventoryObjects"] == []
    # the apple rests on top of the counter, inside its footprint
    cb = ev.get_object(counter)["axisAlignedBoundingBox"]
    ab = a["axisAlignedBoundingBox"]
    bottom = ab["center"]["y"] - ab["size"]["y"] / 2
    top = cb["center"]["y"] + cb["size"]["y"] / 2
    assert bottom == pytest.approx(top, abs=0.03)
    for k in "xz":
        assert abs(ab["center"][k] - cb["center"][k]) <= cb["size"][k] / 2 + 1e-6


def test_forced_put_on_a_side_table_rests_on_its_top():
    """A table-like receptacle is a top on legs, not a hollow box: without a resting height learned
    below its top a PutObject lands on its top, not on the floor between its legs (FloorPlan329's
    SideTable at x = -1.20: what the scene keeps on it rests on its very top)."""
    from backends import make_controller

    c = make_controller("thor_lite", scene="FloorPlan329")
    try:
        table = next(
            o
            for o in c.last_event.objects_by_type("SideTable")
            if o["objectId"].startswith("SideTable|-01.20")
        )
        assert c._world.objects[table["objectId"]].surface_offset is None
        book = oid(c, "Book")
        ok(c.step("PickupObject", objectId=book, forceAction=True))
        ev = ok(c.step("PutObject", objectId=table["objectId"], forceAction=True))
        b, t = (
            ev.get_object(book)["axisAlignedBoundingBox"],
            ev.get_object(table["objectId"])["axisAlignedBoundingBox"],
        )
        assert b["center"]["y"] - b["size"]["y"] / 2 == pytest.approx(
            t["center"]["y"] + t["size"]["y"] / 2, abs=0.03
        )
    finally:
        c.stop()


def test_put_alfred_style(fresh):
    c = fresh
    apple = oid(c, "Apple")
    counter = obj(c, apple)["parentReceptacles"][0]
    go_see(c, apple)
    ok(c.step("PickupObject", objectId=apple))
    ev = ok(c.step("PutObject", objectId=apple, receptacleObjectId=counter))
    assert ev.get_object(apple)["parentReceptacles"] == [counter]
    assert ev.metadata["inventoryObjects"] == []


def test_put_into_closed_fridge_fails(fresh):
    c = fresh
    apple, fridge = oid(c, "Apple"), oid(c, "Fridge")
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    fails(
        c.step("PutObject", objectId=fridge, forceAction=True),
        "Target openable Receptacle is CLOSED, can't place if target is not open!",
    )
    assert c.last_event.metadata["inventoryObjects"][0]["objectId"] == apple


def test_put_without_holding_and_non_receptacle(fresh):
    c = fresh
    fails(
        c.step("PutObject", objectId=oid(c, "CounterTop"), forceAction=True),
        "Can't place an object if Agent isn't holding anything",
    )
    ok(c.step("PickupObject", objectId=oid(c, "Apple"), forceAction=True))
    fails(
        c.step("PutObject", objectId=oid(c, "Bread"), forceAction=True),
        "This target object is NOT a receptacle!",
    )


@pytest.mark.parametrize("rec_type", ["StoveBurner", "CoffeeMachine"])
def test_object_specific_receptacles_reject_apple(fresh, rec_type):
    c = fresh
    apple, rec = oid(c, "Apple"), oid(c, rec_type)
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    fails(
        c.step("PutObject", objectId=rec, forceAction=True),
        f"{obj(c, apple)['name']} is not a valid Object Type to be placed in {obj(c, rec)['name']}",
    )
    assert c.last_event.metadata["inventoryObjects"][0]["objectId"] == apple


def test_object_specific_receptacles_accept_their_type(fresh):
    c = fresh
    pot, burner = oid(c, "Pot"), oid(c, "StoveBurner")
    ok(c.step("PickupObject", objectId=pot, forceAction=True))
    ev = ok(c.step("PutObject", objectId=burner, forceAction=True))
    assert ev.get_object(pot)["parentReceptacles"][0] == burner
    # the burner is now full
    ok(c.step("PickupObject", objectId=oid(c, "Pan"), forceAction=True))
    fails(
        c.step("PutObject", objectId=burner, forceAction=True),
        f"{obj(c, burner)['name']} is full right now",
    )


def test_placement_table_restriction(fresh):
    c = fresh
    apple, mug = oid(c, "Apple"), oid(c, "Mug")
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    go_see(c, mug)
    fails(
        c.step("PutObject", objectId=mug),
        f"{obj(c, apple)['name']} cannot be placed in {obj(c, mug)['name']}",
    )
    assert c.last_event.metadata["inventoryObjects"][0]["objectId"] == apple


def test_put_not_visible_receptacle_fails(fresh):
    c = fresh
    ok(c.step("PickupObject", objectId=oid(c, "Apple"), forceAction=True))
    fridge = oid(c, "Fridge")
    ok(c.step("OpenObject", objectId=fridge, forceAction=True))
    assert obj(c, fridge)["visible"] is False
    fails(
        c.step("PutObject", objectId=fridge),
        "Target object not found within the specified visibility.",
    )


# --- DropHandObject -------------------------------------------------------------------
def test_drop_hand_object(fresh):
    c = fresh
    fails(c.step("DropHandObject"), "Nothing is in the agent's hand to drop!")
    apple = oid(c, "Apple")
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    ev = ok(c.step("DropHandObject"))
    a = ev.get_object(apple)
    assert a["isPickedUp"] is False and ev.metadata["inventoryObjects"] == []
    ret = ev.metadata["actionReturn"]
    assert set(ret) == {"x", "y", "z"}
    assert ret["y"] == pytest.approx(a["position"]["y"], abs=1e-6)
    # it fell straight down from the hand and rests on whatever is below (the floor here)
    hand = ev.metadata["heldObjectPose"]["position"]
    assert a["axisAlignedBoundingBox"]["center"]["x"] == pytest.approx(hand["x"], abs=0.02)
    assert a["axisAlignedBoundingBox"]["center"]["z"] == pytest.approx(hand["z"], abs=0.02)
    assert a["position"]["y"] < hand["y"]


def test_drop_onto_floor_sets_parent(fresh):
    c = fresh
    apple = oid(c, "Apple")
    reach = ok(c.step("GetReachablePositions")).metadata["actionReturn"]
    cells = {(round(p["x"] / 0.25), round(p["z"] / 0.25)) for p in reach}
    # a cell whose forward (+z) neighbour is free floor too: the drop lands on the floor
    # (the east side of FloorPlan1, away from the L-shaped counter)
    p = max(
        (
            q
            for q in reach
            if (round(q["x"] / 0.25), round(q["z"] / 0.25) + 1) in cells
            and (round(q["x"] / 0.25), round(q["z"] / 0.25) + 2) in cells
        ),
        key=lambda q: (q["x"], q["z"]),
    )
    ok(c.step("TeleportFull", position=p, rotation=dict(x=0, y=0, z=0), horizon=0, standing=True))
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    ev = ok(c.step("DropHandObject"))
    a = ev.get_object(apple)
    floor = ev.objects_by_type("Floor")[0]
    assert a["parentReceptacles"] == [floor["objectId"]]
    assert apple in ev.get_object(floor["objectId"])["receptacleObjectIds"]
    fb = floor["axisAlignedBoundingBox"]
    ab = a["axisAlignedBoundingBox"]
    assert ab["center"]["y"] - ab["size"]["y"] / 2 == pytest.approx(
        fb["center"]["y"] + fb["size"]["y"] / 2, abs=0.01
    )


def test_dropped_object_always_has_a_parent(fresh):
    c = fresh
    apple = oid(c, "Apple")
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    ev = ok(c.step("DropHandObject"))
    assert ev.get_object(apple)["parentReceptacles"]


# --- Open / Close ---------------------------------------------------------------------
def test_open_close(fresh):
    c = fresh
    fridge = oid(c, "Fridge")
    assert obj(c, fridge)["isOpen"] is False
    ev = ok(c.step("OpenObject", objectId=fridge, forceAction=True))
    f = ev.get_object(fridge)
    assert f["isOpen"] is True and f["openness"] == pytest.approx(1.0)
    ev = ok(c.step("OpenObject", objectId=fridge, openness=0.3, forceAction=True))
    assert ev.get_object(fridge)["openness"] == pytest.approx(0.3)
    assert ev.get_object(fridge)["isOpen"] is True
    ev = ok(c.step("CloseObject", objectId=fridge, forceAction=True))
    f = ev.get_object(fridge)
    assert f["isOpen"] is False and f["openness"] == 0.0
    fails(
        c.step("OpenObject", objectId=fridge, openness=1.5, forceAction=True),
        "openness must be in [0:1]",
    )
    apple = oid(c, "Apple")
    fails(
        c.step("OpenObject", objectId=apple, forceAction=True), f"{apple} is not an Openable object"
    )
    fails(
        c.step("OpenObject", objectId=fridge),
        "Target object not found within the specified visibility.",
    )


def test_open_without_force_from_interactable_pose(fresh):
    c = fresh
    micro = oid(c, "Microwave")
    go_see(c, micro)
    ev = ok(c.step("OpenObject", objectId=micro))
    assert ev.get_object(micro)["isOpen"]


def test_closed_fridge_hides_its_egg(fresh):
    c = fresh
    egg, fridge = oid(c, "Egg"), oid(c, "Fridge")
    assert obj(c, egg)["parentReceptacles"] == [fridge]
    assert c.step("GetInteractablePoses", objectId=egg).metadata["actionReturn"] == []
    go_see(c, fridge)
    ok(c.step("OpenObject", objectId=fridge))
    poses = c.step("GetInteractablePoses", objectId=egg).metadata["actionReturn"]
    assert poses
    go_see(c, egg)
    ev = ok(c.step("PickupObject", objectId=egg))
    assert ev.metadata["inventoryObjects"][0]["objectId"] == egg


def test_closed_drawer_hides_knife_until_opened(fresh):
    c = fresh
    knife = oid(c, "Knife")
    drawer = obj(c, knife)["parentReceptacles"][0]
    assert drawer.startswith("Drawer|")
    assert obj(c, knife)["visible"] is False
    assert c.step("GetInteractablePoses", objectId=knife).metadata["actionReturn"] == []
    fails(
        c.step("PickupObject", objectId=knife),
        "Target object not found within the specified visibility.",
    )
    go_see(c, drawer)
    assert obj(c, knife)["visible"] is False  # the drawer is still closed
    ok(c.step("OpenObject", objectId=drawer))
    assert c.step("GetInteractablePoses", objectId=knife).metadata["actionReturn"]
    go_see(c, knife)
    ev = ok(c.step("PickupObject", objectId=knife))
    assert ev.metadata["inventoryObjects"][0]["objectId"] == knife
    assert knife not in ev.get_object(drawer)["receptacleObjectIds"]


def test_drawer_contents_slide_with_drawer(fresh):
    c = fresh
    knife = oid(c, "Knife")
    drawer = obj(c, knife)["parentReceptacles"][0]
    before = np.array([obj(c, knife)["position"][k] for k in "xyz"])
    ev = ok(c.step("OpenObject", objectId=drawer, forceAction=True))
    after = np.array([ev.get_object(knife)["position"][k] for k in "xyz"])
    assert np.linalg.norm(after - before) > 0.05
    assert after[1] == pytest.approx(before[1])
    ev = ok(c.step("CloseObject", objectId=drawer, forceAction=True))
    back = np.array([ev.get_object(knife)["position"][k] for k in "xyz"])
    assert back == pytest.approx(before, abs=1e-6)


# --- toggling ------------------------------------------------------------------------
def test_toggle_messages(fresh):
    c = fresh
    faucet = oid(c, "Faucet")
    assert obj(c, faucet)["isToggled"] is False
    fails(
        c.step("ToggleObjectOff", objectId=faucet, forceAction=True),
        "can't toggle object off if it's already off!",
    )
    ev = ok(c.step("ToggleObjectOn", objectId=faucet, forceAction=True))
    assert ev.get_object(faucet)["isToggled"] is True
    fails(
        c.step("ToggleObjectOn", objectId=faucet, forceAction=True),
        "can't toggle object on if it's already on!",
    )
    ev = ok(c.step("ToggleObjectOff", objectId=faucet, forceAction=True))
    assert ev.get_object(faucet)["isToggled"] is False
    fails(
        c.step("ToggleObjectOn", objectId=oid(c, "Apple"), forceAction=True),
        "object is not toggleable.",
    )


def test_stove_burner_not_directly_toggleable(fresh):
    c = fresh
    burner = oid(c, "StoveBurner")
    fails(
        c.step("ToggleObjectOn", objectId=burner, forceAction=True),
        "target object is controlled by another sim object. target object cannot be turned on/off directly",
    )
    assert obj(c, burner)["isToggled"] is False


def test_stove_knob_controls_its_burner(fresh):
    c = fresh
    knobs = c.last_event.objects_by_type("StoveKnob")
    knob = knobs[0]
    burner = knob["controlledObjects"][0]
    others = [
        o["objectId"]
        for o in c.last_event.objects_by_type("StoveBurner")
        if o["objectId"] != burner
    ]
    ev = ok(c.step("ToggleObjectOn", objectId=knob["objectId"], forceAction=True))
    assert ev.get_object(knob["objectId"])["isToggled"] is True
    assert ev.get_object(burner)["isToggled"] is True
    assert all(not ev.get_object(b)["isToggled"] for b in others)
    ev = ok(c.step("ToggleObjectOff", objectId=knob["objectId"], forceAction=True))
    assert ev.get_object(burner)["isToggled"] is False


def test_pot_on_burner_cooks_potato(fresh):
    c = fresh
    knob = c.last_event.objects_by_type("StoveKnob")[0]
    burner = knob["controlledObjects"][0]
    pot, potato = oid(c, "Pot"), oid(c, "Potato")
    ok(c.step("PickupObject", objectId=pot, forceAction=True))
    ok(c.step("PutObject", objectId=burner, forceAction=True))
    ok(c.step("PickupObject", objectId=potato, forceAction=True))
    ev = ok(c.step("PutObject", objectId=pot, forceAction=True))
    assert ev.get_object(potato)["parentReceptacles"][0] == pot
    assert ev.get_object(potato)["isCooked"] is False
    ev = ok(c.step("ToggleObjectOn", objectId=knob["objectId"], forceAction=True))
    assert ev.get_object(potato)["isCooked"] is True
    assert ev.get_object(potato)["temperature"] == "Hot"
    assert ev.get_object(pot)["temperature"] == "Hot"


# --- appliances -----------------------------------------------------------------------
def test_microwave_cooks_potato(fresh):
    c = fresh
    micro, potato = oid(c, "Microwave"), oid(c, "Potato")
    ok(c.step("PickupObject", objectId=potato, forceAction=True))
    ok(c.step("OpenObject", objectId=micro, forceAction=True))
    ev = ok(c.step("PutObject", objectId=micro, forceAction=True))
    assert ev.get_object(potato)["parentReceptacles"][0] == micro
    assert potato in ev.get_object(micro)["receptacleObjectIds"]
    fails(
        c.step("ToggleObjectOn", objectId=micro, forceAction=True),
        "Target must be closed to Toggle On!",
    )
    ok(c.step("CloseObject", objectId=micro, forceAction=True))
    assert obj(c, potato)["isCooked"] is False
    ev = ok(c.step("ToggleObjectOn", objectId=micro, forceAction=True))
    p = ev.get_object(potato)
    assert p["isCooked"] is True and p["temperature"] == "Hot"
    fails(c.step("OpenObject", objectId=micro, forceAction=True), "Target must be OFF to open!")
    ok(c.step("ToggleObjectOff", objectId=micro, forceAction=True))
    ok(c.step("OpenObject", objectId=micro, forceAction=True))
    assert obj(c, potato)["isCooked"] is True  # irreversible


def test_microwave_does_not_toast_bread_slices(fresh):
    c = fresh
    micro, bread = oid(c, "Microwave"), oid(c, "Bread")
    ok(c.step("SliceObject", objectId=bread, forceAction=True))
    piece = f"{bread}|BreadSliced_0"
    assert obj(c, piece)["cookable"] is True
    ok(c.step("PickupObject", objectId=piece, forceAction=True))
    ok(c.step("OpenObject", objectId=micro, forceAction=True))
    ok(c.step("PutObject", objectId=micro, forceAction=True))
    ok(c.step("CloseObject", objectId=micro, forceAction=True))
    ev = ok(c.step("ToggleObjectOn", objectId=micro, forceAction=True))
    assert ev.get_object(piece)["temperature"] == "Hot"
    assert ev.get_object(piece)["isCooked"] is False


def test_fridge_cools_apple(fresh):
    c = fresh
    apple, fridge = oid(c, "Apple"), oid(c, "Fridge")
    assert obj(c, oid(c, "Egg"))["temperature"] == "Cold"  # authored state
    assert obj(c, apple)["temperature"] == "RoomTemp"
    ok(c.step("PickupObject", objectId=apple, forceAction=True))
    ok(c.step("OpenObject", objectId=fridge, forceAction=True))
    ev = ok(c.step("PutObject", objectId=fridge, forceAction=True))
    assert ev.get_object(apple)["parentReceptacles"][0] == fridge
    assert apple in ev.get_object(fridge)["receptacleObjectIds"]
    ev = ok(c.step("CloseObject", objectId=fridge, forceAction=True))
    assert ev.get_object(apple)["temperature"] == "Cold"
    assert ev.get_object(apple)["visible"] is False


def test_faucet_cleans_and_fills_dirty_mug_in_sink(fresh):
    c = fresh
    mug, basin, faucet = oid(c, "Mug"), oid(c, "SinkBasin"), oid(c, "Faucet")
    ev = ok(c.step("DirtyObject", objectId=mug, forceAction=True))
    assert ev.get_object(mug)["isDirty"] is True
    ok(c.step("PickupObject", objectId=mug, forceAction=True))
    ev = ok(c.step("PutObject", objectId=basin, forceAction=True))
    assert ev.get_object(mug)["parentReceptacles"][0] == basin
    m = ev.get_object(mug)
    assert m["isDirty"] is True and m["isFilledWithLiquid"] is False
    ev = ok(c.step("ToggleObjectOn", objectId=faucet, forceAction=True))
    m = ev.get_object(mug)
    assert m["isDirty"] is False
    assert m["isFilledWithLiquid"] is True and m["fillLiquid"] == "water"


def test_faucet_dirty_via_set_object_states(fresh):
    c = fresh
    mug, basin, faucet = oid(c, "Mug"), oid(c, "SinkBasin"), oid(c, "Faucet")
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Mug", "stateChange": "dirtyable", "isDirty": True},
        )
    )
    assert ev.get_object(mug)["isDirty"] is True
    ok(c.step("ToggleObjectOn", objectId=faucet, forceAction=True))
    ok(c.step("PickupObject", objectId=mug, forceAction=True))
    assert obj(c, mug)["isDirty"] is True  # not in the water yet
    ev = ok(c.step("PutObject", objectId=basin, forceAction=True))
    assert ev.get_object(mug)["isDirty"] is False
    assert ev.get_object(mug)["fillLiquid"] == "water"


def test_sink_basin_is_reachable(fresh):
    c = fresh
    basin = oid(c, "SinkBasin")
    # (the basin sits below the counter top: the counter must not hide it)
    ok(c.step("PickupObject", objectId=oid(c, "Mug"), forceAction=True))
    go_see(c, basin)
    ev = ok(c.step("PutObject", objectId=basin))
    assert ev.get_object(oid(c, "Mug"))["parentReceptacles"] == [basin]


def test_object_lying_in_sink_basin_is_reachable(fresh):
    c = fresh
    basin, sponge = oid(c, "SinkBasin"), oid(c, "DishSponge")
    assert obj(c, sponge)["parentReceptacles"] == [basin]
    go_see(c, sponge)
    ok(c.step("PickupObject", objectId=sponge))


# --- slicing and breaking ------------------------------------------------------------
@pytest.mark.parametrize("object_type", ["Apple", "Bread", "Potato", "Tomato", "Lettuce"])
def test_slice(fresh, object_type):
    c = fresh
    src = oid(c, object_type)
    n0 = len(c.last_event.metadata["objects"])
    ev = ok(c.step("SliceObject", objectId=src, forceAction=True))
    s = ev.get_object(src)
    assert s is not None and s["isSliced"] is True
    pat = re.compile(re.escape(src) + r"\|" + object_type + r"Sliced_(\d+)$")
    pieces = [o for o in ev.metadata["objects"] if pat.match(o["objectId"])]
    assert pieces
    ks = sorted(int(pat.match(p["objectId"]).group(1)) for p in pieces)
    assert ks == list(range(len(ks)))
    assert len(ev.metadata["objects"]) == n0 + len(pieces)
    if object_type == "Bread":
        assert len(pieces) >= 7
    for p in pieces:
        assert p["objectType"] == f"{object_type}Sliced"
        assert p["pickupable"] is True and p["sliceable"] is False
        assert np.linalg.norm([p["position"][k] - s["position"][k] for k in "xyz"]) < 0.3
    fails(c.step("SliceObject", objectId=src, forceAction=True))
    # slices can be picked up
    ok(c.step("PickupObject", objectId=pieces[0]["objectId"], forceAction=True))


def test_slicing_cooked_potato_gives_cooked_slices(fresh):
    c = fresh
    potato = oid(c, "Potato")
    ok(c.step("CookObject", objectId=potato, forceAction=True))
    ev = ok(c.step("SliceObject", objectId=potato, forceAction=True))
    pieces = [
        o for o in ev.metadata["objects"] if o["objectId"].startswith(potato + "|PotatoSliced_")
    ]
    assert pieces and all(p["isCooked"] for p in pieces)


def test_slice_held_object_fails(fresh):
    c = fresh
    bread = oid(c, "Bread")
    ok(c.step("PickupObject", objectId=bread, forceAction=True))
    fails(
        c.step("SliceObject", objectId=bread, forceAction=True),
        "target object cannot be sliced if it is in the agent's hand",
    )
    assert obj(c, bread)["isSliced"] is False


def test_slice_non_sliceable(fresh):
    c = fresh
    mug = oid(c, "Mug")
    fails(
        c.step("SliceObject", objectId=mug, forceAction=True),
        f"{obj(c, mug)['name']} Does not have the CanBeSliced property!",
    )


def test_egg_slices_and_breaks_into_egg_cracked(fresh):
    c = fresh
    egg = oid(c, "Egg")
    ev = ok(c.step("BreakObject", objectId=egg, forceAction=True))
    assert ev.get_object(egg)["isBroken"] is True
    cracked = ev.get_object(f"{egg}|EggCracked_0")
    assert cracked is not None and cracked["objectType"] == "EggCracked"
    assert cracked["cookable"] is True


def test_break_object(fresh):
    c = fresh
    mug, apple = oid(c, "Mug"), oid(c, "Apple")
    ev = ok(c.step("BreakObject", objectId=mug, forceAction=True))
    assert ev.get_object(mug)["isBroken"] is True
    fails(
        c.step("BreakObject", objectId=apple, forceAction=True),
        f"{obj(c, apple)['name']} does not have the CanBreak property!!",
    )


def test_break_held_object_empties_hand(fresh):
    c = fresh
    mug = oid(c, "Mug")
    ok(c.step("PickupObject", objectId=mug, forceAction=True))
    ev = ok(c.step("BreakObject", objectId=mug, forceAction=True))
    assert ev.metadata["inventoryObjects"] == []
    assert ev.get_object(mug)["isBroken"] is True and ev.get_object(mug)["isPickedUp"] is False


# --- other state changes ---------------------------------------------------------------
def test_dirty_clean_messages(fresh):
    c = fresh
    mug, apple = oid(c, "Mug"), oid(c, "Apple")
    name = obj(c, mug)["name"]
    fails(c.step("CleanObject", objectId=mug, forceAction=True), f"{name} is already Clean!")
    ok(c.step("DirtyObject", objectId=mug, forceAction=True))
    assert obj(c, mug)["isDirty"] is True
    fails(c.step("DirtyObject", objectId=mug, forceAction=True), f"{name} is already dirty!")
    ok(c.step("CleanObject", objectId=mug, forceAction=True))
    assert obj(c, mug)["isDirty"] is False
    aname = obj(c, apple)["name"]
    fails(
        c.step("DirtyObject", objectId=apple, forceAction=True),
        f"{aname} does not have CanBeDirty property!",
    )
    fails(
        c.step("CleanObject", objectId=apple, forceAction=True),
        f"{aname} does not have dirtyable property!",
    )


def test_fill_and_empty_liquid(fresh):
    c = fresh
    mug, cup, apple = oid(c, "Mug"), oid(c, "Cup"), oid(c, "Apple")
    name = obj(c, mug)["name"]
    fails(c.step("EmptyLiquidFromObject", objectId=mug, forceAction=True), "object already empty")
    ev = ok(c.step("FillObjectWithLiquid", objectId=mug, fillLiquid="Water", forceAction=True))
    m = ev.get_object(mug)
    assert m["isFilledWithLiquid"] and m["fillLiquid"] == "water" and m["temperature"] == "RoomTemp"
    fails(
        c.step("FillObjectWithLiquid", objectId=mug, fillLiquid="wine", forceAction=True),
        f"{name} is already Filled!",
    )
    ev = ok(c.step("EmptyLiquidFromObject", objectId=mug, forceAction=True))
    assert (
        ev.get_object(mug)["isFilledWithLiquid"] is False
        and ev.get_object(mug)["fillLiquid"] is None
    )
    ev = ok(c.step("FillObjectWithLiquid", objectId=mug, fillLiquid="coffee", forceAction=True))
    assert (
        ev.get_object(mug)["fillLiquid"] == "coffee" and ev.get_object(mug)["temperature"] == "Hot"
    )
    fails(
        c.step("FillObjectWithLiquid", objectId=cup, fillLiquid="milk", forceAction=True),
        "milk is not a valid Liquid Type",
    )
    fails(
        c.step("FillObjectWithLiquid", objectId=cup, forceAction=True),
        "Missing Liquid string for FillObject action",
    )
    aname = obj(c, apple)["name"]
    fails(
        c.step("FillObjectWithLiquid", objectId=apple, fillLiquid="water", forceAction=True),
        f"{aname} does not have CanBeFilled property!",
    )
    fails(
        c.step("EmptyLiquidFromObject", objectId=apple, forceAction=True),
        f"{aname} does not have CanBeFilled property!",
    )


def test_cook_object(fresh):
    c = fresh
    potato, apple = oid(c, "Potato"), oid(c, "Apple")
    ev = ok(c.step("CookObject", objectId=potato, forceAction=True))
    assert ev.get_object(potato)["isCooked"] is True
    fails(c.step("CookObject", objectId=potato, forceAction=True), f"{potato} is already Toasted!")
    fails(c.step("CookObject", objectId=apple, forceAction=True), "target object is not cookable")


def test_interactions_require_visibility(fresh):
    c = fresh
    msg = "Target object not found within the specified visibility."
    mug, potato, faucet = oid(c, "Mug"), oid(c, "Potato"), oid(c, "Faucet")
    for action, target in (
        ("DirtyObject", mug),
        ("CookObject", potato),
        ("ToggleObjectOn", faucet),
        ("SliceObject", potato),
        ("BreakObject", mug),
    ):
        assert not obj(c, target)["visible"]
        fails(c.step(action, objectId=target), msg)
    assert obj(c, mug)["isDirty"] is False and obj(c, mug)["isBroken"] is False


def test_coffee_machine_fills_mug(fresh):
    c = fresh
    mug, machine = oid(c, "Mug"), oid(c, "CoffeeMachine")
    ok(c.step("PickupObject", objectId=mug, forceAction=True))
    ev = ok(c.step("PutObject", objectId=machine, forceAction=True))
    assert ev.get_object(mug)["parentReceptacles"][0] == machine
    ev = ok(c.step("ToggleObjectOn", objectId=machine, forceAction=True))
    m = ev.get_object(mug)
    assert m["isFilledWithLiquid"] and m["fillLiquid"] == "coffee" and m["temperature"] == "Hot"
