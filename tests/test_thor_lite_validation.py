"""thor_lite never accepts bad numbers: hostile arguments fail cleanly and change nothing.

Also: nothing an action does can leave NaN or out-of-house poses behind (post-step guard),
Event properties never raise, and the rearrangement loader rejects non-finite poses.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest

from rearrange.dataset import EPISODE_KEYS, DatasetError, load_dataset, save_dataset
from thor_lite.actions.registry import ACTIONS, ActionSpec, action, resolve_kinds

NAN, INF = float("nan"), float("inf")
RAW_EXCEPTION = re.compile(r"^[A-Za-z_]\w*(Error|Exception)\b")


def _state(ev):
    m = ev.metadata
    return copy.deepcopy((m["agent"], m["objects"], m["inventoryObjects"]))


def _ids(c):
    objs = c.last_event.metadata["objects"]
    pick = next(o["objectId"] for o in objs if o["pickupable"])
    opn = next(o["objectId"] for o in objs if o["openable"])
    return pick, opn


def _clean_failure(ev):
    m = ev.metadata
    assert m["lastActionSuccess"] is False
    err = m["errorMessage"]
    assert err and "\n" not in err, err
    assert "Traceback" not in err and "trace:" not in err and ".py" not in err, err
    assert not RAW_EXCEPTION.match(err), err
    return err


# (action, kwargs builder, expected message fragment); builders get (pickupable, openable) ids
BAD_CASES = [
    ("RotateRight", lambda p, o: dict(degrees=INF), "degrees (==inf). It must be a finite number."),
    ("RotateLeft", lambda p, o: dict(degrees=NAN), "degrees (==nan)"),
    ("RotateRight", lambda p, o: dict(degrees=True), "Cannot convert to: Single"),
    ("Teleport", lambda p, o: dict(rotation=NAN), "rotation"),
    ("Teleport", lambda p, o: dict(rotation={"x": 0, "y": NAN, "z": 0}), "must be finite"),
    ("Teleport", lambda p, o: dict(horizon=NAN, forceAction=True), "horizon (==nan)"),
    ("Teleport", lambda p, o: dict(position={"x": NAN, "y": 0.9, "z": 0}), "position"),
    (
        "Teleport",
        lambda p, o: dict(position={"x": 1e9, "y": 0.9, "z": 0}, forceAction=True),
        "not within scene bounds",
    ),
    ("Teleport", lambda p, o: dict(position={"x": 0.0, "z": 0.0}), "Cannot convert to: Vector3"),
    (
        "TeleportFull",
        lambda p, o: dict(x=INF, y=0.9, z=0, rotation=0, horizon=0, standing=True),
        "x (==inf)",
    ),
    (
        "TeleportFull",
        lambda p, o: dict(
            position={"x": 0, "y": 0.9, "z": 0}, rotation=0, horizon=0, standing="yes"
        ),
        "Cannot convert to: Boolean",
    ),
    (
        "TeleportObject",
        lambda p, o: dict(objectId=p, position={"x": NAN, "y": 1, "z": 0}),
        "position",
    ),
    (
        "TeleportObject",
        lambda p, o: dict(objectId=p, position={"x": 1e9, "y": 1, "z": 0}),
        "not within scene bounds",
    ),
    (
        "TeleportObject",
        lambda p, o: dict(objectId=p, position={"x": 1e9, "y": 1, "z": 0}, forceAction=True),
        "not within scene bounds",
    ),
    (
        "TeleportObject",
        lambda p, o: dict(objectId=p, y=1e6, forceAction=True, forceKinematic=True),
        "not within scene bounds",
    ),
    (
        "TeleportObject",
        lambda p, o: dict(objectId=p, positions=[{"x": 0, "y": 1, "z": INF}]),
        "positions",
    ),
    ("OpenObjectImmediate", lambda p, o: dict(objectId=o, openness=NAN), "openness"),
    (
        "OpenObjectImmediate",
        lambda p, o: dict(objectId=o, openness=-5),
        "openness must be in [0:1]",
    ),
    ("OpenObjectImmediate", lambda p, o: dict(objectId=o, openness=3), "openness must be in [0:1]"),
    (
        "OpenObjectImmediate",
        lambda p, o: dict(objectId=o, openness=1e9),
        "openness must be in [0:1]",
    ),
    (
        "OpenObjectImmediate",
        lambda p, o: dict(objectId=o, openness=True),
        "Cannot convert to: Single",
    ),
    ("OpenObject", lambda p, o: dict(objectId=o, openness=NAN, forceAction=True), "openness"),
    (
        "PlaceObjectAtPoint",
        lambda p, o: dict(objectId=p, position={"x": 0, "y": 1, "z": 0}, rotation=NAN),
        "rotation",
    ),
    ("PlaceObjectAtPoint", lambda p, o: dict(objectId=p, position=[0, NAN, 0]), "position"),
    (
        "MoveAhead",
        lambda p, o: dict(moveMagnitude="abc"),
        "moveMagnitude (=='abc'). Cannot convert to: Single",
    ),
    ("MoveAhead", lambda p, o: dict(moveMagnitude=[1]), "Cannot convert to: Single"),
    ("MoveAhead", lambda p, o: dict(moveMagnitude=10**400), "It must be a finite number."),
    ("MoveAhead", lambda p, o: dict(moveMagnitude=1e308), "Scene bounds do not contain"),
    ("LookUp", lambda p, o: dict(degrees=1e308), "can't look up beyond"),
    ("PickupObject", lambda p, o: dict(x=NAN, y=0.5), "x (==nan)"),
    ("PickupObject", lambda p, o: dict(objectId=7), "Cannot convert to: String"),
    ("ThrowObject", lambda p, o: dict(moveMagnitude=INF), "moveMagnitude"),
    (
        "SetObjectPoses",
        lambda p, o: dict(
            objectPoses=[
                {
                    "objectName": "Apple_1",
                    "position": {"x": NAN, "y": 0, "z": 0},
                    "rotation": {"x": 0, "y": 0, "z": 0},
                }
            ]
        ),
        "position",
    ),
    ("GetInteractablePoses", lambda p, o: dict(objectId=p, horizons=[0, NAN]), "horizons"),
    (
        "InitialRandomSpawn",
        lambda p, o: dict(numDuplicatesOfType=[{"objectType": "Apple", "count": 1e9}]),
        "count",
    ),
    (
        "SetObjectToggles",
        lambda p, o: dict(objectToggles=[{"objectType": "Faucet", "isOn": "yes"}]),
        "isOn",
    ),
    (
        "SetObjectStates",
        lambda p, o: dict(SetObjectStates={"stateChange": "openable", "isOpen": NAN}),
        "isOpen",
    ),
    ("DisableObject", lambda p, o: dict(objectId=["not", "hashable"]), "Cannot convert to: String"),
    ("SetObjectFilter", lambda p, o: dict(objectIds="abc"), "Cannot convert to: List<String>"),
    ("AdvancePhysicsStep", lambda p, o: dict(timeStep=NAN, allowAutoSimulation=True), "timeStep"),
]


@pytest.mark.parametrize(
    "name,build,fragment", BAD_CASES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_CASES)]
)
def test_bad_argument_fails_cleanly_and_changes_nothing(fresh, name, build, fragment):
    c = fresh
    pick, opn = _ids(c)
    before = _state(c.last_event)
    ev = c.step(name, **build(pick, opn))
    err = _clean_failure(ev)
    assert fragment in err, err
    assert _state(ev) == before
    assert _state(c.step("Pass")) == before


def test_bad_arguments_while_holding_change_nothing(fresh):
    c = fresh
    apple = next(o for o in c.last_event.metadata["objects"] if o["objectType"] == "Apple")
    assert c.step("PickupObject", objectId=apple["objectId"], forceAction=True).metadata[
        "lastActionSuccess"
    ]
    before = _state(c.last_event)
    for kw in (dict(degrees=NAN), dict(degrees="90")):
        _clean_failure(c.step("RotateRight", **kw))
    _clean_failure(
        c.step(
            "TeleportObject",
            objectId=apple["objectId"],
            allowTeleportOutOfHand=True,
            position={"x": 0, "y": 1e7, "z": 0},
            forceAction=True,
            forceKinematic=True,
        )
    )
    assert _state(c.step("Pass")) == before
    assert [o["objectId"] for o in c.last_event.metadata["objects"] if o["isPickedUp"]] == [
        apple["objectId"]
    ]


def test_valid_numeric_forms_still_accepted(fresh):
    c = fresh
    assert c.step("RotateRight", degrees=np.float32(90)).metadata["lastActionSuccess"]
    assert c.step("RotateLeft", degrees=90).metadata["lastActionSuccess"]
    ev = c.step("Teleport", rotation=np.float64(180.0))
    assert ev.metadata["lastActionSuccess"] and ev.metadata["agent"]["rotation"][
        "y"
    ] == pytest.approx(180)
    assert c.step("LookDown", degrees=np.int64(30)).metadata["lastActionSuccess"]
    assert c.step("GetReachablePositions", maxStepCount=5000.0).metadata["lastActionSuccess"]
    pick, opn = _ids(c)
    ev = c.step("OpenObjectImmediate", objectId=opn, openness=np.float64(0.5))
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert ev.get_object(opn)["openness"] == pytest.approx(0.5)
    assert c.step("InitialRandomSpawn", randomSeed=-3).metadata["lastActionSuccess"]


def test_forced_teleport_horizon_is_an_angle(fresh):
    ev = fresh.step("Teleport", horizon=390.0, forceAction=True)
    assert ev.metadata["lastActionSuccess"]
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(30.0)


def test_documented_value_errors_still_raise(fresh):
    c = fresh
    with pytest.raises(ValueError, match="Invalid action"):
        c.step("NotAnAction", degrees=NAN)
    with pytest.raises(ValueError, match="invalid argument"):
        c.step("MoveAhead", moveMagnitude=NAN, bogus=1)
    with pytest.raises(ValueError, match="is missing the following arguments: standing"):
        c.step("TeleportFull", position={"x": NAN, "y": 0, "z": 0}, rotation=0, horizon=0)
    with pytest.raises(ValueError, match="missing the following arguments: position"):
        c.step("PlaceObjectAtPoint", objectId=_ids(c)[0])


def test_exception_inside_action_reports_one_line_without_trace(fresh, monkeypatch):
    def boom(w):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setitem(ACTIONS, "Pass", ActionSpec("Pass", boom, {}, False, {}))
    ev = fresh.step("Pass")
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "RuntimeError: boom second line"


def test_guard_rolls_back_non_finite_and_out_of_house_states(fresh, monkeypatch):
    c = fresh
    pick, _ = _ids(c)
    before = _state(c.last_event)
    bad_writes = [
        lambda w: w.update(pick, position=(NAN, 1.0, 0.0)),
        lambda w: w.update(pick, position=(0.0, 1e9, 0.0)),
        lambda w: w.update(pick, openness=2.0),
        lambda w: setattr(w, "agent", w.agent.__class__(INF, w.agent.y, 0.0, 0.0, 0.0, True)),
        lambda w: setattr(w, "agent", w.agent.__class__(1e5, w.agent.y, 0.0, 0.0, 0.0, True)),
        lambda w: setattr(w, "held", "Ghost|+00.00|+00.00|+00.00"),
    ]
    for fn in bad_writes:
        monkeypatch.setitem(ACTIONS, "Pass", ActionSpec("Pass", fn, {}, False, {}))
        _clean_failure(c.step("Pass"))
        assert _state(c.last_event) == before
        _read_every_property(c.last_event)


def test_every_parameter_declares_a_kind():
    for name, spec in ACTIONS.items():
        assert set(spec.kinds) == set(spec.params), name
    with pytest.raises(TypeError, match="no declared kind"):
        action("Nope", mysteryParam=1)(lambda w, mysteryParam=1: None)
    assert resolve_kinds("X", {"degrees": None}, {})["degrees"].problem(NAN)


def _read_every_property(ev):
    for n in (
        "frame",
        "cv2img",
        "depth_frame",
        "instance_segmentation_frame",
        "instance_ids_frame",
        "semantic_segmentation_frame",
        "class_segmentation_frame",
        "normals_frame",
        "flow_frame",
        "color_to_object_id",
        "object_id_to_color",
        "screen_width",
        "screen_height",
        "pose",
        "pose_discrete",
        "events",
        "third_party_camera_frames",
        "third_party_depth_frames",
        "image_data",
    ):
        getattr(ev, n)
    for n in ("instance_masks", "class_masks", "class_detections2D"):
        dict(getattr(ev, n))
    m = ev.metadata
    for k in list(m.keys()):
        m[k]
    repr(ev), bool(ev), ev.cv2image(), ev.get_object("x"), ev.objects_by_type("Apple")


def test_event_properties_never_raise_after_hostile_actions():
    from thor_lite import Controller

    c = Controller(
        scene="FloorPlan1",
        width=48,
        height=48,
        renderDepthImage=True,
        renderInstanceSegmentation=True,
        renderSemanticSegmentation=True,
    )
    try:
        pick, opn = _ids(c)
        for name, build, _ in BAD_CASES:
            ev = c.step(name, **build(pick, opn))
            _read_every_property(ev)
            for o in ev.metadata["objects"]:
                for k in ("x", "y", "z"):
                    assert math.isfinite(o["position"][k]) and math.isfinite(o["rotation"][k])
            assert math.isfinite(ev.metadata["agent"]["cameraHorizon"])
            assert ev.frame.shape == (48, 48, 3)
    finally:
        c.stop()


# --- rearrangement dataset loader --------------------------------------------------------
def _episode():
    pose = {
        "name": "Apple_1",
        "objectName": "Apple_1",
        "position": {"x": 0.5, "y": 1.0, "z": -0.25},
        "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
    }
    ep = {k: 0 for k in EPISODE_KEYS}
    ep.update(
        agent_position={"x": 0.25, "y": 0.9, "z": -1.0},
        agent_rotation=90,
        object_rearrangement_count=1,
        openable_data=[],
        starting_poses=[dict(pose)],
        target_poses=[copy.deepcopy(pose)],
        pose_diff_energy=1.0,
    )
    return ep


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda ep: ep["agent_position"].update(x=NAN), "agent_position.x"),
        (lambda ep: ep["agent_position"].update(z=-INF), "agent_position.z"),
        (lambda ep: ep.update(agent_rotation=NAN), "agent_rotation"),
        (
            lambda ep: ep["starting_poses"][0]["position"].update(y=INF),
            "starting_poses[0].position.y",
        ),
        (lambda ep: ep["target_poses"][0]["rotation"].update(y=NAN), "target_poses[0].rotation.y"),
        (lambda ep: ep["agent_position"].update(y=True), "agent_position"),
    ],
)
def test_dataset_loader_rejects_non_finite_poses(tmp_path, mutate, field):
    good = tmp_path / "val.pkl.gz"
    save_dataset({"FloorPlan21": [_episode(), _episode()]}, good)
    assert len(load_dataset(good)["FloorPlan21"]) == 2
    eps = [_episode(), _episode()]
    mutate(eps[1])
    bad = tmp_path / "bad.pkl.gz"
    save_dataset({"FloorPlan21": eps}, bad)
    with pytest.raises(DatasetError) as exc:
        load_dataset(bad)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{bad}: FloorPlan21 episode 1: field '{field}'"), msg
