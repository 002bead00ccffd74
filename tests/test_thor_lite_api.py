"""Controller / step / reset / Event surface of thor_lite (AI2-THOR 5.0 reference §1, §2)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from thor_lite import Controller, Event

from conftest import controller_fixture


c = controller_fixture("FloorPlan1", width=160, height=120)


def _obj(ev, object_type):
    return next(o for o in ev.metadata["objects"] if o["objectType"] == object_type)


# --- construction ------------------------------------------------------------------
def test_thor_only_kwargs_are_accepted_and_ignored():
    ctrl = Controller(
        scene="FloorPlan1",
        quality="Very Low",
        commit_id="f0825767cd50d69f666c7f282e54abfe58f1e917",
        x_display="0",
        platform=object,
        gpu_device=0,
        headless=False,
        local_build=False,
        server_timeout=5.0,
        width=64,
        height=48,
    )
    try:
        params = ctrl.initialization_parameters
        for k in ("quality", "commit_id", "x_display", "platform", "gpu_device"):
            assert k not in params
        ev = ctrl.last_event
        assert ev.metadata["lastActionSuccess"]
        assert ev.metadata["sceneName"] == "FloorPlan1_physics"
    finally:
        ctrl.stop()


def test_width_height_shape_frame_and_metadata():
    with Controller(scene="FloorPlan1", width=64, height=48) as ctrl:
        ev = ctrl.last_event
        assert (ctrl.width, ctrl.height) == (64, 48)
        assert (ev.metadata["screenWidth"], ev.metadata["screenHeight"]) == (64, 48)
        assert (ev.screen_width, ev.screen_height) == (64, 48)
        assert ev.frame.shape == (48, 64, 3)


def test_zero_resolution_raises():
    with pytest.raises(Exception, match=r"Screen resolution must be > 0x0"):
        Controller(scene="FloorPlan1", width=0, height=100)


@pytest.mark.parametrize("name", ["FloorPlan1", "FloorPlan1_physics"])
def test_scene_name_with_and_without_physics_suffix(c, name):
    ev = c.reset(name)
    assert ev.metadata["sceneName"] == "FloorPlan1_physics"
    assert c.scene in ("FloorPlan1", "FloorPlan1_physics")


@pytest.mark.parametrize("bad", ["FloorPlan999", "floorplan1", "FloorPlan_Train1_1x", "Kitchen"])
def test_bad_scene_name_raises_value_error_naming_it(bad):
    with pytest.raises(ValueError) as exc:
        Controller(scene=bad)
    msg = str(exc.value)
    assert f"Scene '{bad}' not contained in build" in msg
    assert "FloorPlan1_physics" in msg  # the list of valid scenes is offered


def test_bad_scene_on_reset_keeps_controller_usable(c):
    c.reset("FloorPlan1")
    with pytest.raises(ValueError, match="FloorPlan31"):
        c.reset("FloorPlan31")
    assert c.step("Pass").metadata["sceneName"] == "FloorPlan1_physics"


def test_other_room_types_load():
    with Controller(scene="FloorPlan201", width=32, height=32) as ctrl:
        assert ctrl.last_event.metadata["sceneName"] == "FloorPlan201_physics"
        for scene, must_have in (
            ("FloorPlan301", "Bed"),
            ("FloorPlan401", "Toilet"),
            ("FloorPlan201", "Sofa"),
        ):
            ev = ctrl.reset(scene)
            assert ev.metadata["sceneName"] == f"{scene}_physics"
            assert any(o["objectType"] == must_have for o in ev.metadata["objects"])


# --- step() request forms -----------------------------------------------------------
def test_step_string_and_dict_forms(c):
    c.reset("FloorPlan1")
    y0 = c.last_event.metadata["agent"]["rotation"]["y"]
    ev = c.step("RotateRight")
    assert ev.metadata["lastAction"] == "RotateRight"
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx((y0 + 90) % 360)
    ev = c.step(dict(action="RotateLeft"))
    assert ev.metadata["lastAction"] == "RotateLeft"
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(y0)
    ev = c.step(action="RotateRight", degrees=180)
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx((y0 + 180) % 360)


def test_step_dict_is_not_mutated_and_kwargs_override(c):
    c.reset("FloorPlan1")
    y0 = c.last_event.metadata["agent"]["rotation"]["y"]
    req = {"action": "RotateRight", "degrees": 180}
    snapshot = copy.deepcopy(req)
    ev = c.step(req, degrees=90)
    assert req == snapshot
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx((y0 + 90) % 360)
    ev = c.step({"action": "RotateLeft", "degrees": 90, "raise_for_failure": False})
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(y0)


def test_scalar_rotation_is_converted(c):
    c.reset("FloorPlan1")
    a = c.last_event.metadata["agent"]
    ev = c.step("Teleport", rotation=270)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert ev.metadata["agent"]["rotation"] == {"x": 0.0, "y": 270.0, "z": 0.0}
    ev = c.step("TeleportFull", position=a["position"], rotation=90, horizon=0, standing=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(90.0)
    ev = c.step("Teleport", rotation={"x": 0, "y": 180, "z": 0})
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(180.0)


# --- errors -------------------------------------------------------------------------
def test_unknown_action_raises_value_error(c):
    with pytest.raises(ValueError, match=r"^Invalid action: NotARealAction$"):
        c.step("NotARealAction")
    with pytest.raises(ValueError, match="Invalid action"):
        c.step(dict(action="DropHeldObjectAheadNope"))


def test_unknown_kwarg_on_strict_action_raises(c):
    with pytest.raises(ValueError) as exc:
        c.step("MoveAhead", notAnArg=1)
    msg = str(exc.value)
    assert 'Action: "MoveAhead" called with invalid argument(s)' in msg
    assert "'notAnArg'" in msg
    with pytest.raises(ValueError, match="invalid argument"):
        c.step("PickupObject", objectId="x", speedy=True)


def test_unknown_kwarg_on_lenient_action_is_ignored(c):
    c.reset("FloorPlan1")
    ev = c.step("LookDown", notAnArg=1)
    assert ev.metadata["lastActionSuccess"]
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(30.0)


def test_tolerated_extra_keys_on_strict_action(c):
    ev = c.step("Pass", renderImage=True, sequenceId=7, agentId=0)
    assert ev.metadata["lastActionSuccess"]


def test_teleport_full_missing_standing_raises(c):
    c.reset("FloorPlan1")
    pos = c.last_event.metadata["agent"]["position"]
    with pytest.raises(
        ValueError, match=r"action: TeleportFull is missing the following arguments: standing"
    ):
        c.step("TeleportFull", position=pos, rotation=dict(x=0, y=0, z=0), horizon=0)


def test_value_error_leaves_state_unchanged(c):
    c.reset("FloorPlan1")
    before = c.last_event.metadata["agent"]["position"]
    with pytest.raises(ValueError):
        c.step("MoveAhead", moveMagnitude=0.25, bogus=1)
    assert c.step("Pass").metadata["agent"]["position"] == before


def test_ordinary_failure_does_not_raise(c):
    ev = c.step("PickupObject", objectId="Apple|+99.00|+99.00|+99.00")
    assert isinstance(ev, Event)
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == (
        "objectId: Apple|+99.00|+99.00|+99.00 is not the objectId on any object in the scene!"
    )
    assert c.last_event is ev


def test_raise_for_failure_raises_runtime_error(c):
    with pytest.raises(RuntimeError, match="is not the objectId on any object"):
        c.step("PickupObject", objectId="Nope|1", raise_for_failure=True)
    # a successful action with raise_for_failure does not raise
    ev = c.step("Pass", raise_for_failure=True)
    assert ev.metadata["lastActionSuccess"]


# --- reset --------------------------------------------------------------------------
def test_reset_restores_object_and_agent_state(c):
    ev = c.reset("FloorPlan1")
    apple = _obj(ev, "Apple")
    fridge = _obj(ev, "Fridge")
    agent0 = copy.deepcopy(ev.metadata["agent"])
    n0 = len(ev.metadata["objects"])

    c.step("MoveBack")
    c.step("RotateRight")
    ev = c.step(
        "TeleportObject",
        objectId=apple["objectId"],
        position=dict(
            x=apple["position"]["x"] + 0.2, y=apple["position"]["y"] + 0.3, z=apple["position"]["z"]
        ),
        forceAction=True,
        forceKinematic=True,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    c.step("OpenObject", objectId=fridge["objectId"], forceAction=True)
    c.step("SliceObject", objectId=apple["objectId"], forceAction=True)
    moved = c.last_event
    assert moved.get_object(apple["objectId"])["isSliced"]
    assert moved.get_object(fridge["objectId"])["isOpen"]
    assert len(moved.metadata["objects"]) > n0

    ev = c.reset("FloorPlan1")
    a2 = ev.get_object(apple["objectId"])
    assert a2["position"] == apple["position"]
    assert a2["isSliced"] is False
    assert ev.get_object(fridge["objectId"])["isOpen"] is False
    assert len(ev.metadata["objects"]) == n0
    assert ev.metadata["agent"] == agent0
    # the event returned by reset is the controller's last_event
    assert c.last_event is ev


def test_reset_without_scene_reloads_current_scene(c):
    c.reset("FloorPlan1")
    ev0 = c.last_event
    apple = _obj(ev0, "Apple")
    c.step("PickupObject", objectId=apple["objectId"], forceAction=True)
    assert c.last_event.metadata["inventoryObjects"]
    ev = c.reset()
    assert ev.metadata["sceneName"] == "FloorPlan1_physics"
    assert ev.metadata["inventoryObjects"] == []
    assert ev.get_object(apple["objectId"])["position"] == apple["position"]


def test_reset_init_params_persist(c):
    try:
        ev = c.reset("FloorPlan1", gridSize=0.5)
        assert c.initialization_parameters["gridSize"] == 0.5
        p0 = ev.metadata["agent"]["position"]
        ev = c.step("MoveRight")
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        p1 = ev.metadata["agent"]["position"]
        assert abs(p1["x"] - p0["x"]) + abs(p1["z"] - p0["z"]) == pytest.approx(0.5)
        ev = c.reset("FloorPlan1")  # no params: the 0.5 grid persists
        assert c.initialization_parameters["gridSize"] == 0.5
        reach = c.step("GetReachablePositions").metadata["actionReturn"]
        assert reach
        assert all(abs(p["x"] / 0.5 - round(p["x"] / 0.5)) < 1e-6 for p in reach)
        assert all(abs(p["z"] / 0.5 - round(p["z"] / 0.5)) < 1e-6 for p in reach)
    finally:
        c.reset("FloorPlan1", gridSize=0.25)


def test_scene_name_metadata(c):
    assert c.reset("FloorPlan1").metadata["sceneName"] == "FloorPlan1_physics"
    assert c.step("Pass").metadata["sceneName"] == "FloorPlan1_physics"


# --- Event --------------------------------------------------------------------------
def test_event_bool_and_helpers(c):
    c.reset("FloorPlan1")
    ok = c.step("Pass")
    assert bool(ok) is True
    bad = c.step("OpenObject", objectId="Nope|0", forceAction=True)
    assert bool(bad) is False
    assert "lastActionSuccess=False" in repr(bad)
    apple = _obj(ok, "Apple")
    assert ok.get_object(apple["objectId"]) is not None
    assert ok.get_object("Nope|0") is None
    apples = ok.objects_by_type("Apple")
    assert apples and all(o["objectType"] == "Apple" for o in apples)
    assert ok.events == [ok]


def test_event_cv2img_is_bgr_of_frame(c):
    ev = c.step("Pass")
    assert np.array_equal(ev.cv2img, ev.frame[..., ::-1])


def test_reachable_positions_alias_in_metadata(c):
    c.reset("FloorPlan1")
    ev = c.step("GetReachablePositions")
    assert ev.metadata["reachablePositions"] == ev.metadata["actionReturn"]
    ev = c.step("Pass")
    with pytest.raises(IndexError):
        ev.metadata["reachablePositions"]


def test_default_scene_is_floorplan10():
    with Controller(width=32, height=32) as ctrl:
        assert ctrl.last_event.metadata["sceneName"] == "FloorPlan10_physics"


def test_per_step_instance_segmentation(c):
    c.reset("FloorPlan1")
    ev = c.step("Pass", renderInstanceSegmentation=True)
    assert ev.instance_segmentation_frame is not None
    assert ev.metadata["colors"]


def test_headless_has_no_frame():
    with Controller(scene="FloorPlan1", width=32, height=32, headless=True) as ctrl:
        assert ctrl.last_event.frame is None
