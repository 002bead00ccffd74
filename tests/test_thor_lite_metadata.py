"""Per-step metadata schema of thor_lite (AI2-THOR 5.0 reference §2, §3)."""

from __future__ import annotations

import copy
import itertools
import json
import math
import re

import numpy as np
import pytest

from thor_lite import Controller

OBJECT_KEYS = (
    "objectId",
    "name",
    "objectType",
    "assetId",
    "position",
    "rotation",
    "visible",
    "isInteractable",
    "distance",
    "receptacle",
    "receptacleObjectIds",
    "parentReceptacles",
    "pickupable",
    "isPickedUp",
    "moveable",
    "openable",
    "isOpen",
    "openness",
    "toggleable",
    "isToggled",
    "controlledObjects",
    "sliceable",
    "isSliced",
    "cookable",
    "isCooked",
    "dirtyable",
    "isDirty",
    "breakable",
    "isBroken",
    "canFillWithLiquid",
    "isFilledWithLiquid",
    "fillLiquid",
    "canBeUsedUp",
    "isUsedUp",
    "temperature",
    "isHeatSource",
    "isColdSource",
    "mass",
    "salientMaterials",
    "isMoving",
    "axisAlignedBoundingBox",
    "objectOrientedBoundingBox",
)
BOOL_KEYS = (
    "visible",
    "isInteractable",
    "receptacle",
    "pickupable",
    "isPickedUp",
    "moveable",
    "openable",
    "isOpen",
    "toggleable",
    "isToggled",
    "sliceable",
    "isSliced",
    "cookable",
    "isCooked",
    "dirtyable",
    "isDirty",
    "breakable",
    "isBroken",
    "canFillWithLiquid",
    "isFilledWithLiquid",
    "canBeUsedUp",
    "isUsedUp",
    "isHeatSource",
    "isColdSource",
    "isMoving",
)
ID_RE = re.compile(r"^[A-Za-z]+\|[+-]?\d\d\.\d\d\|[+-]?\d\d\.\d\d\|[+-]?\d\d\.\d\d")
SCENES = ("FloorPlan1", "FloorPlan201", "FloorPlan301", "FloorPlan401")


@pytest.fixture(scope="module")
def c():
    ctrl = Controller(scene="FloorPlan1", width=96, height=96)
    yield ctrl
    ctrl.stop()


@pytest.fixture(scope="module")
def scene_objects(c):
    out = {}
    for s in SCENES:
        out[s] = c.reset(s).metadata["objects"]
    c.reset("FloorPlan1")
    return out


def _vec(d):
    return np.array([d["x"], d["y"], d["z"]], dtype=float)


def _is_xyz(d):
    return (
        isinstance(d, dict)
        and set(d) == {"x", "y", "z"}
        and all(isinstance(v, float) and math.isfinite(v) for v in d.values())
    )


def _obj(ev, object_type):
    return next(o for o in ev.metadata["objects"] if o["objectType"] == object_type)


# --- per-object schema ---------------------------------------------------------------
def test_objects_have_exactly_the_42_keys(scene_objects):
    assert len(OBJECT_KEYS) == 42 and len(set(OBJECT_KEYS)) == 42
    for scene, objs in scene_objects.items():
        assert objs, scene
        for o in objs:
            assert set(o) == set(OBJECT_KEYS), (scene, o["objectId"], set(o) ^ set(OBJECT_KEYS))


def test_object_value_types(scene_objects):
    for scene, objs in scene_objects.items():
        for o in objs:
            where = (scene, o["objectId"])
            for k in BOOL_KEYS:
                assert isinstance(o[k], bool), (where, k, o[k])
            for k in ("objectId", "name", "objectType", "assetId", "temperature"):
                assert isinstance(o[k], str), (where, k)
            assert _is_xyz(o["position"]) and _is_xyz(o["rotation"]), where
            # (the recorded THOR data itself holds tiny negative angles such as -1e-14)
            assert all(-360.0 < v < 360.0 for v in o["rotation"].values()), where
            assert isinstance(o["distance"], float) and o["distance"] >= 0, where
            assert isinstance(o["mass"], float) and o["mass"] >= 0, where
            assert isinstance(o["openness"], float) and 0.0 <= o["openness"] <= 1.0, where
            assert o["temperature"] in ("RoomTemp", "Hot", "Cold"), where
            assert o["fillLiquid"] in (None, "water", "coffee", "wine"), where
            if not o["isFilledWithLiquid"]:
                assert o["fillLiquid"] is None, where
            sm = o["salientMaterials"]
            assert sm is None or (
                isinstance(sm, list) and sm and all(isinstance(s, str) for s in sm)
            ), where
            if not o["openable"]:
                assert o["isOpen"] is False and o["openness"] == 0.0, where
            else:
                assert o["isOpen"] == (o["openness"] > 0), where


def test_parent_receptacles_null_not_empty(scene_objects):
    seen_none = seen_list = False
    for scene, objs in scene_objects.items():
        ids = {o["objectId"] for o in objs}
        for o in objs:
            pr = o["parentReceptacles"]
            if pr is None:
                seen_none = True
            else:
                seen_list = True
                assert isinstance(pr, list) and len(pr) > 0, (scene, o["objectId"])
                assert all(p in ids for p in pr), (scene, o["objectId"], pr)
    assert seen_none and seen_list


def test_receptacle_object_ids_null_for_non_receptacles(scene_objects):
    for scene, objs in scene_objects.items():
        by_id = {o["objectId"]: o for o in objs}
        for o in objs:
            r = o["receptacleObjectIds"]
            if not o["receptacle"]:
                assert r is None, (scene, o["objectId"])
            else:
                assert isinstance(r, list), (scene, o["objectId"])
                for child in r:  # receptacleObjectIds is the inverse of parentReceptacles
                    assert o["objectId"] in (by_id[child]["parentReceptacles"] or []), (
                        scene,
                        child,
                    )
        for o in objs:
            for p in o["parentReceptacles"] or []:
                assert o["objectId"] in by_id[p]["receptacleObjectIds"], (scene, o["objectId"], p)


def test_controlled_objects_only_for_toggleables(scene_objects):
    objs = scene_objects["FloorPlan1"]
    by_id = {o["objectId"]: o for o in objs}
    for o in objs:
        if not o["toggleable"]:
            assert o["controlledObjects"] is None, o["objectId"]
        else:
            assert isinstance(o["controlledObjects"], list), o["objectId"]
    knobs = [o for o in objs if o["objectType"] == "StoveKnob"]
    assert knobs
    for k in knobs:
        assert len(k["controlledObjects"]) == 1
        assert by_id[k["controlledObjects"][0]]["objectType"] == "StoveBurner"
    burner = next(o for o in objs if o["objectType"] == "StoveBurner")
    assert burner["toggleable"] is False and burner["isHeatSource"] is True
    fridge = next(o for o in objs if o["objectType"] == "Fridge")
    assert fridge["isColdSource"] is True and fridge["isHeatSource"] is False


def test_object_id_format(scene_objects):
    for scene, objs in scene_objects.items():
        ids = [o["objectId"] for o in objs]
        assert len(ids) == len(set(ids)), scene
        for o in objs:
            oid = o["objectId"]
            assert ID_RE.match(oid), oid
            if o["objectType"] in ("SinkBasin", "BathtubBasin"):
                parent_type = o["objectType"][: -len("Basin")]
                assert oid.startswith(parent_type + "|"), oid
                assert oid.endswith("|" + o["objectType"]), oid
                assert oid.count("|") == 4
            else:
                assert oid.split("|")[0] == o["objectType"], oid
                assert oid.count("|") == 3, oid
            # the signed-zero quirk: '-00.00' never appears
            assert "-00.00" not in oid.split("|")[1:4], oid


def test_object_id_encodes_initial_position(scene_objects):
    # ids are the authored position in 00.00 format; at load nothing has drifted much
    # horizontally, and objects that sank into our coarser support boxes were lifted by at
    # most thor_lite.physics.MAX_SETTLE_LIFT
    from thor_lite.physics import MAX_SETTLE_LIFT

    n_close = 0
    objs = scene_objects["FloorPlan1"]
    for o in objs:
        coords = np.array([float(v) for v in o["objectId"].split("|")[1:4]])
        pos = _vec(o["position"])
        if (
            np.allclose(coords[[0, 2]], pos[[0, 2]], atol=0.006)
            and -0.006 <= pos[1] - coords[1] <= MAX_SETTLE_LIFT + 0.006
        ):
            n_close += 1
    assert n_close >= 0.8 * len(objs)


# --- bounding boxes ----------------------------------------------------------------
def test_oobb_present_only_for_pickupable_or_moveable(scene_objects):
    for scene, objs in scene_objects.items():
        for o in objs:
            if o["pickupable"] or o["moveable"]:
                ob = o["objectOrientedBoundingBox"]
                assert isinstance(ob, dict) and len(ob["cornerPoints"]) == 8, o["objectId"]
            else:
                assert o["objectOrientedBoundingBox"] is None, o["objectId"]


def test_oobb_corner_topology(scene_objects):
    checked = 0
    for objs in scene_objects.values():
        for o in objs:
            ob = o["objectOrientedBoundingBox"]
            if ob is None:
                continue
            p = np.asarray(ob["cornerPoints"], dtype=float)
            assert p.shape == (8, 3)
            e = lambda i, j: float(np.linalg.norm(p[i] - p[j]))  # noqa: E731
            # 0..3 bottom face, 4..7 top face; corner 0 adjacent to 1, 3 and 4
            a, b, h = e(0, 1), e(0, 3), e(0, 4)
            # opposite / parallel edges of a box have equal lengths
            for i, j in ((3, 2), (4, 5), (7, 6)):
                assert e(i, j) == pytest.approx(a, abs=1e-4)
            for i, j in ((1, 2), (4, 7), (5, 6)):
                assert e(i, j) == pytest.approx(b, abs=1e-4)
            for i in range(4):
                assert e(i, i + 4) == pytest.approx(h, abs=1e-4)
            # edges at corner 0 are mutually orthogonal; diagonals are longer than edges
            v1, v3, v4 = p[1] - p[0], p[3] - p[0], p[4] - p[0]
            for u, w in ((v1, v3), (v1, v4), (v3, v4)):
                assert abs(float(u @ w)) <= 1e-4 * (1 + np.linalg.norm(u) * np.linalg.norm(w))
            assert e(0, 2) == pytest.approx(math.hypot(a, b), abs=1e-4)
            assert e(0, 6) == pytest.approx(math.sqrt(a * a + b * b + h * h), abs=1e-4)
            # the top face (4..7) is above the bottom face (0..3) for upright objects
            if abs(o["rotation"]["x"]) < 1 and abs(o["rotation"]["z"]) < 1:
                assert p[4:, 1].mean() > p[:4, 1].mean()
                assert np.ptp(p[:4, 1]) < 0.01, o["objectId"]
                # local (+x,+z) -> (-x,+z) -> (-x,-z) -> (+x,-z): a yaw keeps the winding, so
                # (p1-p0) x (p3-p0) = (-x) x (-z) points down (numpy's cross formula)
                assert np.cross(v1, v3)[1] < 0, o["objectId"]
            checked += 1
    assert checked > 50


def test_oobb_bottom_face_winding_matches_reference(c):
    # An unrotated object: corner signs must be exactly (+x-y+z), (-x-y+z), (-x-y-z), (+x-y-z), ...
    ev = c.reset("FloorPlan1")
    for o in ev.metadata["objects"]:
        ob = o["objectOrientedBoundingBox"]
        r = o["rotation"]
        if ob is None or any(min(abs(v), abs(v - 360)) > 0.5 for v in r.values()):
            continue
        p = np.asarray(ob["cornerPoints"])
        ctr = p.mean(0)
        signs = np.sign(np.round(p - ctr, 6))
        expected = np.array(
            [
                [1, -1, 1],
                [-1, -1, 1],
                [-1, -1, -1],
                [1, -1, -1],
                [1, 1, 1],
                [-1, 1, 1],
                [-1, 1, -1],
                [1, 1, -1],
            ]
        )
        assert np.array_equal(signs, expected), o["objectId"]
        return
    pytest.fail("no unrotated object with an OOBB in FloorPlan1")


def test_aabb_corner_ordering_center_and_size(scene_objects):
    signs = np.array(list(itertools.product((1, -1), repeat=3)))  # x outer, then y, then z
    for objs in scene_objects.values():
        for o in objs:
            bb = o["axisAlignedBoundingBox"]
            assert set(bb) == {"cornerPoints", "center", "size"}
            p = np.asarray(bb["cornerPoints"], dtype=float)
            ctr, size = _vec(bb["center"]), _vec(bb["size"])
            assert p.shape == (8, 3)
            assert np.all(size >= 0)
            assert np.allclose(p, ctr + signs * size / 2, atol=1e-5), o["objectId"]
            ob = o["objectOrientedBoundingBox"]
            if ob is not None:  # the AABB encloses the OOBB
                q = np.asarray(ob["cornerPoints"])
                assert np.all(q >= p.min(0) - 1e-4) and np.all(q <= p.max(0) + 1e-4), o["objectId"]


# --- agent and top level -----------------------------------------------------------
def test_agent_keys_and_start_pose(c):
    ev = c.reset("FloorPlan1")
    a = ev.metadata["agent"]
    assert set(a) >= {
        "name",
        "position",
        "rotation",
        "cameraHorizon",
        "isStanding",
        "inHighFrictionArea",
    }
    assert a["name"] == "agent"
    assert _is_xyz(a["position"]) and _is_xyz(a["rotation"])
    assert a["rotation"]["x"] == 0 and a["rotation"]["z"] == 0
    assert 0 <= a["rotation"]["y"] < 360
    assert a["position"]["y"] == pytest.approx(0.9009992, abs=1e-4)
    assert a["isStanding"] is True
    assert a["cameraHorizon"] == 0
    for k in ("x", "z"):
        assert a["position"][k] / 0.25 == pytest.approx(round(a["position"][k] / 0.25), abs=1e-6)


def test_top_level_keys(c):
    ev = c.reset("FloorPlan1")
    m = ev.metadata
    for k in (
        "sceneName",
        "lastAction",
        "lastActionSuccess",
        "errorMessage",
        "errorCode",
        "actionReturn",
        "agent",
        "objects",
        "inventoryObjects",
        "heldObjectPose",
        "screenWidth",
        "screenHeight",
        "fov",
        "cameraPosition",
        "sceneBounds",
        "isSceneAtRest",
        "colors",
        "depthFormat",
        "currentTime",
    ):
        assert k in m, k
    assert m["errorMessage"] == "" and m["errorCode"] is None
    assert m["fov"] == 90
    assert m["inventoryObjects"] == []
    sb = m["sceneBounds"]
    assert len(sb["cornerPoints"]) == 8
    # every object's pivot lies inside the scene bounds (x/z)
    lo = _vec(sb["center"]) - _vec(sb["size"]) / 2
    hi = _vec(sb["center"]) + _vec(sb["size"]) / 2
    for o in m["objects"]:
        p = _vec(o["position"])
        assert lo[0] - 0.5 <= p[0] <= hi[0] + 0.5 and lo[2] - 0.5 <= p[2] <= hi[2] + 0.5, o[
            "objectId"
        ]


def test_distance_is_3d_from_agent_body(c):
    c.reset("FloorPlan1")
    for ev in (c.step("Pass"), c.step("MoveRight"), c.step("Crouch")):
        a = _vec(ev.metadata["agent"]["position"])
        for o in ev.metadata["objects"]:
            d = float(np.linalg.norm(_vec(o["position"]) - a))
            assert o["distance"] == pytest.approx(d, abs=1e-4), o["objectId"]
    c.step("Stand")


def test_camera_position_matches_agent(c):
    ev = c.reset("FloorPlan1")
    a = ev.metadata["agent"]["position"]
    cp = ev.metadata["cameraPosition"]
    assert cp["x"] == pytest.approx(a["x"]) and cp["z"] == pytest.approx(a["z"])
    assert cp["y"] - a["y"] == pytest.approx(0.675, abs=1e-4)


# --- holding ------------------------------------------------------------------------
def test_inventory_and_held_object_pose(c):
    ev = c.reset("FloorPlan1")
    apple = _obj(ev, "Apple")
    ev = c.step("PickupObject", objectId=apple["objectId"], forceAction=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert ev.metadata["actionReturn"] == apple["objectId"]
    assert ev.metadata["inventoryObjects"] == [
        {"objectId": apple["objectId"], "objectType": "Apple"}
    ]
    held = ev.get_object(apple["objectId"])
    assert held["isPickedUp"] is True
    assert held["parentReceptacles"] is None
    counter = ev.get_object(apple["parentReceptacles"][0])
    assert apple["objectId"] not in counter["receptacleObjectIds"]
    hp = ev.metadata["heldObjectPose"]
    assert set(hp) == {"position", "rotation", "localPosition", "localRotation"}
    assert all(_is_xyz(hp[k]) for k in hp)
    assert _vec(hp["localPosition"]) == pytest.approx(np.array([0.0, -0.16, 0.38]))
    cam = _vec(ev.metadata["cameraPosition"])
    assert np.linalg.norm(_vec(hp["position"]) - cam) == pytest.approx(
        math.hypot(0.16, 0.38), abs=1e-4
    )
    # the apple sits at the hand
    centre = _vec(held["axisAlignedBoundingBox"]["center"])
    assert np.linalg.norm(centre - _vec(hp["position"])) < 0.05
    # it follows the agent
    ev = c.step("RotateRight")
    hp2 = ev.metadata["heldObjectPose"]
    centre2 = _vec(ev.get_object(apple["objectId"])["axisAlignedBoundingBox"]["center"])
    assert np.linalg.norm(centre2 - _vec(hp2["position"])) < 0.05
    assert np.linalg.norm(centre2 - centre) > 0.1
    c.reset("FloorPlan1")


# --- events are frozen per step ----------------------------------------------------
def _frozen_sequence(ctrl, read_early: bool):
    ev0 = ctrl.reset("FloorPlan1")
    apple = next(o for o in ev0.metadata["objects"] if o["objectType"] == "Apple")
    fridge = next(o for o in ev0.metadata["objects"] if o["objectType"] == "Fridge")
    ev1 = ctrl.step("Pass")
    early = json.dumps(ev1.metadata, sort_keys=True) if read_early else None
    ctrl.step("MoveRight")
    ctrl.step("RotateLeft")
    ctrl.step("PickupObject", objectId=apple["objectId"], forceAction=True)
    ctrl.step("OpenObject", objectId=fridge["objectId"], forceAction=True)
    return ev1, early, apple, fridge


def test_event_metadata_is_frozen_after_later_steps(c):
    # read right away
    ev_a, early, apple, fridge = _frozen_sequence(c, read_early=True)
    # never read until after the later steps
    ev_b, _, _, _ = _frozen_sequence(c, read_early=False)
    late = json.loads(json.dumps(ev_b.metadata, sort_keys=True))
    ref = json.loads(early)
    assert late["agent"] == ref["agent"]
    assert late["objects"] == ref["objects"]
    assert late["inventoryObjects"] == [] and late["lastAction"] == "Pass"
    b_apple = next(o for o in late["objects"] if o["objectId"] == apple["objectId"])
    assert b_apple["isPickedUp"] is False and b_apple["position"] == apple["position"]
    b_fridge = next(o for o in late["objects"] if o["objectId"] == fridge["objectId"])
    assert b_fridge["isOpen"] is False
    # and the current event reflects the new state
    cur = c.last_event.metadata
    assert cur["agent"]["position"] != late["agent"]["position"]
    assert next(o for o in cur["objects"] if o["objectId"] == fridge["objectId"])["isOpen"]
    c.reset("FloorPlan1")


def test_event_metadata_frozen_after_reset(c):
    ev = c.reset("FloorPlan1")
    apple = _obj(ev, "Apple")
    ev1 = c.step("PickupObject", objectId=apple["objectId"], forceAction=True)
    c.reset("FloorPlan1")
    c.step("MoveRight")
    assert ev1.metadata["inventoryObjects"][0]["objectId"] == apple["objectId"]
    assert ev1.get_object(apple["objectId"])["isPickedUp"] is True


def test_metadata_dict_behaviour(c):
    ev = c.reset("FloorPlan1")
    d = copy.deepcopy(ev.metadata)
    assert isinstance(d, dict)
    assert "objects" in ev.metadata
    assert json.loads(json.dumps(ev.metadata)) == json.loads(json.dumps(d))


def test_visibility_invariants(c):
    """visible needs a point within visibilityDistance (1.5 m) of the agent's vertical axis;
    isInteractable implies visible."""
    import random

    ev = c.reset("FloorPlan1")
    reach = c.step("GetReachablePositions").metadata["actionReturn"]
    rng = random.Random(9)
    n_visible = 0
    for _ in range(15):
        p = rng.choice(reach)
        ev = c.step(
            "TeleportFull",
            position=p,
            rotation=rng.choice([0, 90, 180, 270]),
            horizon=rng.choice([-30, 0, 30, 60]),
            standing=rng.random() < 0.7,
        )
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        ax, az = p["x"], p["z"]
        for o in ev.metadata["objects"]:
            if o["isInteractable"]:
                assert o["visible"], o["objectId"]
            if not o["visible"]:
                continue
            n_visible += 1
            bb = o["axisAlignedBoundingBox"]
            dx = max(abs(ax - bb["center"]["x"]) - bb["size"]["x"] / 2, 0.0)
            dz = max(abs(az - bb["center"]["z"]) - bb["size"]["z"] / 2, 0.0)
            assert math.hypot(dx, dz) <= 1.5 + 1e-6, (o["objectId"], p)
    assert n_visible > 10
    c.reset("FloorPlan1")


def test_error_code_of_rejected_calls(c):
    c.reset("FloorPlan1")
    with pytest.raises(ValueError):
        c.step("NoSuchAction")
    m = c.last_event.metadata
    assert (m["lastAction"], m["lastActionSuccess"], m["errorCode"]) == (
        "NoSuchAction",
        False,
        "InvalidAction",
    )
    with pytest.raises(ValueError):
        c.step("MoveAhead", bogus=1)
    assert c.last_event.metadata["errorCode"] == "InvalidArgument"
    with pytest.raises(ValueError):
        c.step("TeleportFull", position=dict(x=0, y=0.9, z=0), rotation=0, horizon=0)
    assert c.last_event.metadata["errorCode"] == "MissingArguments"
    ev = c.step("PickupObject", objectId="Nope|1", forceAction=True)
    assert ev.metadata["errorCode"] is None  # ordinary failures: Undefined -> null
    assert c.step("Pass").metadata["errorCode"] is None
