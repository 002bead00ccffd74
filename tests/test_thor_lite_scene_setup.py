"""Scene-setup actions of thor_lite (AI2-THOR 5.0 reference §5.4, §5.5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from thor_lite.constants import placement_allowed


def first(c, object_type):
    return c.last_event.objects_by_type(object_type)[0]


def ok(ev):
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    return ev


def fails(ev, message=None):
    assert ev.metadata["lastActionSuccess"] is False
    if message is not None:
        assert ev.metadata["errorMessage"] == message
    return ev


def _xyz(d):
    return np.array([d["x"], d["y"], d["z"]], dtype=float)


def _pose(o, dx=0.0, dy=0.0, dz=0.0):
    p = o["position"]
    return {
        "objectName": o["name"],
        "position": {"x": p["x"] + dx, "y": p["y"] + dy, "z": p["z"] + dz},
        "rotation": dict(o["rotation"]),
    }


# --- SetObjectPoses ----------------------------------------------------------------------
def test_set_object_poses_moves_listed_and_disables_unlisted(fresh):
    c = fresh
    before = c.last_event.metadata["objects"]
    apple, mug = first(c, "Apple"), first(c, "Mug")
    ev = ok(c.step("SetObjectPoses", objectPoses=[_pose(apple), _pose(mug, dx=0.05)]))
    objs = ev.metadata["objects"]
    ids = {o["objectId"] for o in objs}
    assert apple["objectId"] in ids and mug["objectId"] in ids
    m = ev.get_object(mug["objectId"])
    assert m["position"]["x"] == pytest.approx(mug["position"]["x"] + 0.05, abs=1e-4)
    assert m["position"]["z"] == pytest.approx(mug["position"]["z"], abs=1e-4)
    # every unlisted pickupable or moveable object is gone; static objects stay
    for o in before:
        if o["objectId"] in (apple["objectId"], mug["objectId"]):
            continue
        if o["pickupable"] or o["moveable"]:
            assert o["objectId"] not in ids, o["objectId"]
        else:
            assert o["objectId"] in ids, o["objectId"]
    # and the disabled objects are not listed as contents either
    for o in objs:
        for r in o["receptacleObjectIds"] or []:
            assert r in ids


def test_set_object_poses_unknown_name_fails_but_applies_valid_entries(fresh):
    c = fresh
    apple, mug = first(c, "Apple"), first(c, "Mug")
    bad = {
        "objectName": "NoSuchThing_1234",
        "position": apple["position"],
        "rotation": apple["rotation"],
    }
    ev = fails(
        c.step("SetObjectPoses", objectPoses=[_pose(apple), bad, _pose(mug, dz=0.05)]),
        "No Pickupable or Moveable object of name NoSuchThing_1234 found in scene.",
    )
    ids = {o["objectId"] for o in ev.metadata["objects"]}
    assert apple["objectId"] in ids and mug["objectId"] in ids
    assert ev.get_object(mug["objectId"])["position"]["z"] == pytest.approx(
        mug["position"]["z"] + 0.05, abs=1e-4
    )
    assert not ev.objects_by_type("Bread")  # unlisted: disabled


def test_set_object_poses_static_object_fails(fresh):
    c = fresh
    apple, counter = first(c, "Apple"), first(c, "CounterTop")
    fails(
        c.step("SetObjectPoses", objectPoses=[_pose(apple), _pose(counter)]),
        f"{counter['name']} is not a Moveable or Pickupable object. SetObjectPoses only works "
        "with Moveable and Pickupable sim objects.",
    )
    assert c.last_event.get_object(counter["objectId"])["position"] == counter["position"]


def test_set_object_poses_duplicate_creates_copy(fresh):
    c = fresh
    apple = first(c, "Apple")
    ev = ok(c.step("SetObjectPoses", objectPoses=[_pose(apple), _pose(apple, dx=0.25)]))
    apples = ev.objects_by_type("Apple")
    assert sorted(o["objectId"] for o in apples) == [
        apple["objectId"],
        apple["objectId"] + "_copy_0",
    ]
    copy = ev.get_object(apple["objectId"] + "_copy_0")
    assert copy["name"] == apple["name"] + "_copy_0"
    assert copy["position"]["x"] == pytest.approx(apple["position"]["x"] + 0.25, abs=1e-4)
    assert ev.get_object(apple["objectId"])["position"]["x"] == pytest.approx(
        apple["position"]["x"], abs=1e-4
    )


def test_set_object_poses_bad_input(fresh):
    fails(
        fresh.step("SetObjectPoses", objectPoses="nope"),
        "objectPoses was not initialized correctly. Please make sure each element in the "
        "objectPoses list is initialized.",
    )


def test_set_object_poses_round_trip(fresh):
    """Feeding back every pickupable/moveable pose keeps the scene as it was."""
    c = fresh
    before = {o["objectId"]: o for o in c.last_event.metadata["objects"]}
    poses = [_pose(o) for o in before.values() if o["pickupable"] or o["moveable"]]
    ev = ok(c.step("SetObjectPoses", objectPoses=poses))
    after = {o["objectId"]: o for o in ev.metadata["objects"]}
    assert set(after) == set(before)
    for k, o in before.items():
        assert _xyz(after[k]["position"]) == pytest.approx(_xyz(o["position"]), abs=1e-4), k


# --- SetObjectStates / SetObjectToggles / SetStateOfAllObjects --------------------------
def test_set_object_states(fresh):
    c = fresh
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Fridge", "stateChange": "openable", "isOpen": True},
        )
    )
    f = ev.objects_by_type("Fridge")[0]
    assert f["isOpen"] and f["openness"] == 1.0
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Mug", "stateChange": "dirtyable", "isDirty": True},
        )
    )
    assert all(o["isDirty"] for o in ev.objects_by_type("Mug"))
    assert not any(o["isDirty"] for o in ev.objects_by_type("Cup"))
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={
                "objectType": "Cup",
                "stateChange": "canFillWithLiquid",
                "isFilledWithLiquid": True,
            },
        )
    )
    assert all(o["fillLiquid"] == "water" for o in ev.objects_by_type("Cup"))
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Apple", "stateChange": "sliceable", "isSliced": True},
        )
    )
    assert ev.objects_by_type("Apple")[0]["isSliced"]
    assert ev.objects_by_type("AppleSliced")
    # one-way changes: cooking cannot be undone
    ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Potato", "stateChange": "cookable", "isCooked": True},
        )
    )
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={"objectType": "Potato", "stateChange": "cookable", "isCooked": False},
        )
    )
    assert ev.objects_by_type("Potato")[0]["isCooked"] is True


def test_set_object_states_without_type_applies_to_all(fresh):
    c = fresh
    ev = ok(
        c.step("SetObjectStates", SetObjectStates={"stateChange": "dirtyable", "isDirty": True})
    )
    dirtyable = [o for o in ev.metadata["objects"] if o["dirtyable"]]
    assert len({o["objectType"] for o in dirtyable}) > 1
    assert all(o["isDirty"] for o in dirtyable)
    assert not any(o["isDirty"] for o in ev.metadata["objects"] if not o["dirtyable"])


def test_set_object_states_toggle_propagates_to_burners(fresh):
    c = fresh
    ev = ok(
        c.step(
            "SetObjectStates",
            SetObjectStates={
                "objectType": "StoveKnob",
                "stateChange": "toggleable",
                "isToggled": True,
            },
        )
    )
    for k in ev.objects_by_type("StoveKnob"):
        assert k["isToggled"]
        for b in k["controlledObjects"]:
            assert ev.get_object(b)["isToggled"], b


def test_set_object_states_errors(fresh):
    c = fresh
    fails(c.step("SetObjectStates"), "action.SetObjectStates is null or not initialized!")
    fails(
        c.step("SetObjectStates", SetObjectStates={}),
        "action.SetObjectStates has objectType and stateChange strings null. Please pass in valid strings.",
    )
    fails(
        c.step("SetObjectStates", SetObjectStates={"objectType": "Mug"}),
        "action.SetObjectStates is missing stateChange string. If setting objects by objectType, Please "
        "specify both an objectType and a stateChange compatible with that objectType to set.",
    )


def test_set_object_toggles(fresh):
    c = fresh
    ev = ok(
        c.step(
            "SetObjectToggles",
            objectToggles=[
                {"objectType": "Faucet", "isOn": True},
                {"objectType": "StoveKnob", "isOn": True},
            ],
        )
    )
    assert all(o["isToggled"] for o in ev.objects_by_type("Faucet"))
    assert all(o["isToggled"] for o in ev.objects_by_type("StoveKnob"))
    assert all(o["isToggled"] for o in ev.objects_by_type("StoveBurner"))  # controlled by the knobs
    assert not ev.objects_by_type("Microwave")[0]["isToggled"]
    ev = ok(c.step("SetObjectToggles", objectToggles=[{"objectType": "StoveKnob", "isOn": False}]))
    assert not any(o["isToggled"] for o in ev.objects_by_type("StoveBurner"))
    assert all(o["isToggled"] for o in ev.objects_by_type("Faucet"))


def test_set_state_of_all_objects(fresh):
    c = fresh
    ev = ok(c.step("SetStateOfAllObjects", StateChange="CanBeDirty", forceAction=True))
    dirty = [o for o in ev.metadata["objects"] if o["isDirty"]]
    assert dirty and all(o["dirtyable"] for o in dirty)
    assert len(dirty) == sum(o["dirtyable"] for o in ev.metadata["objects"])
    ev = ok(c.step("SetStateOfAllObjects", StateChange="CanBeDirty", forceAction=False))
    assert not any(o["isDirty"] for o in ev.metadata["objects"])
    ev = ok(c.step("SetStateOfAllObjects", StateChange="CanBeFilled", forceAction=True))
    fillable = [o for o in ev.metadata["objects"] if o["canFillWithLiquid"]]
    assert fillable and all(
        o["isFilledWithLiquid"] and o["fillLiquid"] == "water" for o in fillable
    )
    fails(c.step("SetStateOfAllObjects", StateChange="Bogus"))


# --- InitialRandomSpawn ---------------------------------------------------------------------
def _irs_layout(c, seed, **kw):
    c.reset("FloorPlan1")
    ev = ok(c.step("InitialRandomSpawn", randomSeed=seed, **kw))
    return ev, {
        o["objectId"]: (o["position"], o["rotation"], o["parentReceptacles"])
        for o in ev.metadata["objects"]
        if o["pickupable"]
    }


def test_initial_random_spawn_deterministic(c):
    ev1, l1 = _irs_layout(c, 7)
    ev2, l2 = _irs_layout(c, 7)
    assert l1 == l2
    assert json.dumps(ev1.metadata["objects"], sort_keys=True) == json.dumps(
        ev2.metadata["objects"], sort_keys=True
    )
    _, l3 = _irs_layout(c, 8)
    assert set(l3) == set(l1)
    assert sum(l1[k][0] != l3[k][0] for k in l1) >= len(l1) // 2


def test_initial_random_spawn_moves_objects_to_allowed_receptacles(c):
    base = {o["objectId"]: o for o in c.reset("FloorPlan1").metadata["objects"]}
    for seed in (0, 1, 2):
        ev, layout = _irs_layout(c, seed)
        moved = [k for k, (p, _, _) in layout.items() if p != base[k]["position"]]
        assert len(moved) >= len(layout) // 2, seed
        objs = {o["objectId"]: o for o in ev.metadata["objects"]}
        for k in moved:
            o = objs[k]
            pr = o["parentReceptacles"]
            assert pr, (seed, k)
            rec = objs[pr[0]]
            assert rec["objectType"] != "Floor"
            assert placement_allowed(o["objectType"], rec["objectType"]), (seed, k, rec["objectId"])
            assert k in rec["receptacleObjectIds"]
            # it rests within the receptacle's footprint
            rb, ob = rec["axisAlignedBoundingBox"], o["axisAlignedBoundingBox"]
            for a in "xz":
                assert abs(ob["center"][a] - rb["center"][a]) <= rb["size"][a] / 2 + 0.05, (seed, k)
        # non-pickupable objects never move
        for k, o in base.items():
            if not o["pickupable"] and k in objs:
                assert objs[k]["position"] == o["position"], k


def test_initial_random_spawn_excluded_object_stays(c):
    base = c.reset("FloorPlan1")
    apple = base.objects_by_type("Apple")[0]
    _, layout = _irs_layout(c, 3, excludedObjectIds=[apple["objectId"]])
    assert layout[apple["objectId"]][0] == apple["position"]


def test_initial_random_spawn_excluded_receptacles(c):
    ev, layout = _irs_layout(c, 4, excludedReceptacles=["CounterTop"])
    base = {o["objectId"]: o for o in c.reset("FloorPlan1").metadata["objects"]}
    for k, (p, _, pr) in layout.items():
        if p != base[k]["position"]:
            assert not pr[0].startswith("CounterTop|"), k


def test_initial_random_spawn_duplicates(c):
    ev, layout = _irs_layout(c, 5, numDuplicatesOfType=[{"objectType": "Apple", "count": 3}])
    apples = sorted(o["objectId"] for o in ev.objects_by_type("Apple"))
    assert len(apples) == 3
    assert all(a.startswith(apples[0]) for a in apples)
    assert sum("_copy_" in a for a in apples) == 2


def test_initial_random_spawn_errors(fresh):
    c = fresh
    fails(
        c.step("InitialRandomSpawn", excludedReceptacles=["NotAType"]),
        "invalid Object Type used in excludedReceptacles array: NotAType",
    )
    fails(
        c.step("InitialRandomSpawn", excludedObjectIds=["Nope|1"]),
        "Cannot find sim object with id 'Nope|1'",
    )
    fails(
        c.step("InitialRandomSpawn", numPlacementAttempts=0),
        "numPlacementAttempts must be a positive integer.",
    )


def test_initial_random_spawn_drops_held_object(fresh):
    c = fresh
    apple = first(c, "Apple")
    ok(c.step("PickupObject", objectId=apple["objectId"], forceAction=True))
    ev = ok(c.step("InitialRandomSpawn", randomSeed=1))
    assert ev.metadata["inventoryObjects"] == []
    assert ev.get_object(apple["objectId"])["isPickedUp"] is False


# --- TeleportObject -------------------------------------------------------------------------
def test_teleport_object_positions_list_and_force_kinematic(fresh):
    c = fresh
    apple, bread = first(c, "Apple"), first(c, "Bread")
    ap = apple["position"]
    target = {"x": ap["x"], "y": ap["y"] + 0.3, "z": ap["z"] + 0.1}
    # the first candidate collides with the bread, the second is free
    ev = ok(
        c.step(
            "TeleportObject",
            objectId=apple["objectId"],
            positions=[bread["position"], target],
            forceKinematic=True,
        )
    )
    a = ev.get_object(apple["objectId"])
    assert _xyz(a["position"]) == pytest.approx(
        _xyz(target), abs=1e-6
    )  # kinematic: stays in the air
    assert _xyz(ev.metadata["actionReturn"]) == pytest.approx(_xyz(target), abs=1e-6)


def test_teleport_object_falls_without_force_kinematic(fresh):
    c = fresh
    apple = first(c, "Apple")
    ap = apple["position"]
    ev = ok(
        c.step(
            "TeleportObject",
            objectId=apple["objectId"],
            position={"x": ap["x"], "y": ap["y"] + 0.3, "z": ap["z"]},
        )
    )
    a = ev.get_object(apple["objectId"])
    assert a["position"]["y"] < ap["y"] + 0.1  # came to rest on the counter again
    assert a["parentReceptacles"] == apple["parentReceptacles"]


def test_teleport_object_rotation_and_xyz(fresh):
    c = fresh
    apple = first(c, "Apple")
    ap = apple["position"]
    ev = ok(
        c.step(
            "TeleportObject",
            objectId=apple["objectId"],
            x=ap["x"],
            y=ap["y"] + 0.5,
            z=ap["z"],
            rotation=dict(x=0, y=45, z=0),
            forceKinematic=True,
        )
    )
    a = ev.get_object(apple["objectId"])
    assert a["rotation"]["y"] == pytest.approx(45)
    assert a["position"]["y"] == pytest.approx(ap["y"] + 0.5)


def test_teleport_object_failures(fresh):
    c = fresh
    apple, bread = first(c, "Apple"), first(c, "Bread")
    fails(
        c.step("TeleportObject", objectId=apple["objectId"], position=bread["position"]),
        f"{apple['objectId']} is colliding with {bread['objectId']} after teleport.",
    )
    assert c.last_event.get_object(apple["objectId"])["position"] == apple["position"]
    fails(
        c.step("TeleportObject", objectId="Nope|1", position=bread["position"]),
        "Cannot find object with id Nope|1",
    )
    ok(c.step("PickupObject", objectId=apple["objectId"], forceAction=True))
    fails(
        c.step("TeleportObject", objectId=apple["objectId"], position=apple["position"]),
        "Cannot teleport object in hand.",
    )
    ev = ok(
        c.step(
            "TeleportObject",
            objectId=apple["objectId"],
            position=apple["position"],
            allowTeleportOutOfHand=True,
            forceAction=True,
            forceKinematic=True,
        )
    )
    assert ev.metadata["inventoryObjects"] == []


# --- RemoveFromScene ------------------------------------------------------------------------
def test_remove_from_scene(fresh):
    c = fresh
    objs0 = c.last_event.metadata["objects"]
    apple, mug, bread = first(c, "Apple"), first(c, "Mug"), first(c, "Bread")
    counter = apple["parentReceptacles"][0]
    ev = ok(c.step("RemoveFromScene", objectId=apple["objectId"]))
    assert ev.get_object(apple["objectId"]) is None
    assert apple["objectId"] not in ev.get_object(counter)["receptacleObjectIds"]
    assert len(ev.metadata["objects"]) == len(objs0) - 1
    ev = ok(c.step("RemoveFromScene", objectIds=[mug["objectId"], bread["objectId"]]))
    assert ev.get_object(mug["objectId"]) is None and ev.get_object(bread["objectId"]) is None
    # other ids are unchanged
    assert {o["objectId"] for o in ev.metadata["objects"]} == (
        {o["objectId"] for o in objs0} - {apple["objectId"], mug["objectId"], bread["objectId"]}
    )
    fails(c.step("RemoveFromScene", objectIds=[]), "objectIds must not be empty!")
    fails(c.step("RemoveFromScene", objectId="Nope|1"))
    fails(
        c.step("PickupObject", objectId=apple["objectId"], forceAction=True),
        f"objectId: {apple['objectId']} is not the objectId on any object in the scene!",
    )


# --- breakability ----------------------------------------------------------------------------
def _drop_mug_from_open_floor(c):
    reach = ok(c.step("GetReachablePositions")).metadata["actionReturn"]
    p = max(reach, key=lambda q: (q["x"], q["z"]))  # the open east side of FloorPlan1
    ok(c.step("TeleportFull", position=p, rotation=dict(x=0, y=0, z=0), horizon=0, standing=True))
    mug = first(c, "Mug")["objectId"]
    ok(c.step("PickupObject", objectId=mug, forceAction=True))
    ev = ok(c.step("DropHandObject"))
    assert ev.get_object(mug)["parentReceptacles"] == [first(c, "Floor")["objectId"]]
    return ev.get_object(mug)


def test_dropped_mug_breaks(fresh):
    assert _drop_mug_from_open_floor(fresh)["isBroken"] is True


def test_make_all_objects_unbreakable(fresh):
    c = fresh
    ok(c.step("MakeAllObjectsUnbreakable"))
    m = _drop_mug_from_open_floor(c)
    assert m["isBroken"] is False
    assert m["breakable"] is True  # the flag itself is unchanged
    # BreakObject still breaks unbreakable objects
    ev = ok(c.step("BreakObject", objectId=m["objectId"], forceAction=True))
    assert ev.get_object(m["objectId"])["isBroken"] is True


def test_make_object_breakable_unknown_id(fresh):
    fails(
        fresh.step("MakeObjectBreakable", objectId="Nope|1"),
        "Object ID Nope|1 appears to be invalid.",
    )


# --- physics and no-ops ---------------------------------------------------------------------
def test_physics_auto_sim_pause(fresh):
    c = fresh
    msg = (
        "AdvancePhysicsStep can only be called if Physics AutoSimulation is currently paused or if you "
        "have passed allowAutoSimulation=true! Either use the PausePhysicsAutoSim() action first, or if "
        "you already used it, Physics AutoSimulation has been turned back on already."
    )
    fails(c.step("AdvancePhysicsStep"), msg)
    ev = ok(c.step("PausePhysicsAutoSim"))
    assert ev.metadata["physicsAutoSimulation"] is False
    ok(c.step("AdvancePhysicsStep", timeStep=0.02))
    fails(
        c.step("AdvancePhysicsStep", timeStep=0.1),
        "Please use a timeStep between 0.0f and 0.05f. Larger timeSteps produce inconsistent simulation results.",
    )
    ev = ok(c.step("UnpausePhysicsAutoSim"))
    assert ev.metadata["physicsAutoSimulation"] is True
    fails(c.step("AdvancePhysicsStep"), msg)
    ok(c.step("AdvancePhysicsStep", allowAutoSimulation=True))


@pytest.mark.parametrize("action", ["Pass", "Done", "NoOp"])
def test_no_ops(fresh, action):
    c = fresh
    before = json.dumps(c.last_event.metadata["objects"], sort_keys=True)
    agent = c.last_event.metadata["agent"]
    ev = ok(c.step(action))
    assert ev.metadata["lastAction"] == action
    assert ev.metadata["actionReturn"] is None
    assert ev.metadata["agent"] == agent
    assert json.dumps(ev.metadata["objects"], sort_keys=True) == before
    with pytest.raises(ValueError):
        c.step(action, bogus=1)


def test_set_object_poses_copy_takes_parents_of_where_it_lies(fresh):
    """A duplicate is a new object at its own pose: its parentReceptacles come from that
    pose, never from the original it was copied from."""
    c = fresh
    apple = first(c, "Apple")
    other = next(
        o
        for o in c.last_event.metadata["objects"]
        if o["pickupable"]
        and o["objectType"] != "Apple"
        and o["parentReceptacles"]
        and not set(o["parentReceptacles"]) & set(apple["parentReceptacles"] or [])
    )
    spot = {**_pose(apple), "position": dict(other["position"])}
    ev = ok(c.step("SetObjectPoses", objectPoses=[_pose(apple), spot]))
    copy = ev.get_object(apple["objectId"] + "_copy_0")
    assert copy["parentReceptacles"], "the copy rests on something"
    assert not set(copy["parentReceptacles"]) & set(apple["parentReceptacles"] or [])
    assert set(copy["parentReceptacles"]) & set(other["parentReceptacles"])
    for rid in copy["parentReceptacles"]:
        assert copy["objectId"] in (ev.get_object(rid)["receptacleObjectIds"] or [])
