"""Agent navigation of thor_lite (AI2-THOR 5.0 reference §4, §5.1)."""

from __future__ import annotations

import math
import random

import pytest


AGENT_Y = 0.9009992
GRID = 0.25


def _pos(ev):
    p = ev.metadata["agent"]["position"]
    return p["x"], p["z"]


def _on_grid(v, g=GRID):
    return abs(v / g - round(v / g)) < 1e-6


def _reachable(c):
    ev = c.step("GetReachablePositions")
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    return ev.metadata["actionReturn"]


def _cell(p):
    return round(p["x"] / GRID), round(p["z"] / GRID)


def _open_cell(c):
    """A reachable cell whose four neighbours are all reachable too."""
    reach = _reachable(c)
    cells = {_cell(p) for p in reach}
    for p in reach:
        i, k = _cell(p)
        if all(n in cells for n in ((i + 1, k), (i - 1, k), (i, k + 1), (i, k - 1))):
            return p
    pytest.fail("no open cell in FloorPlan1")


def _teleport(c, p, yaw=0.0, horizon=0.0, standing=True):
    ev = c.step(
        "TeleportFull",
        position=dict(x=p["x"], y=p["y"], z=p["z"]),
        rotation=dict(x=0, y=yaw, z=0),
        horizon=horizon,
        standing=standing,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    return ev


# --- moves -----------------------------------------------------------------------------
@pytest.mark.parametrize("yaw", [0.0, 90.0, 180.0, 270.0])
@pytest.mark.parametrize(
    "action,fwd,right",
    [("MoveAhead", 1, 0), ("MoveBack", -1, 0), ("MoveRight", 0, 1), ("MoveLeft", 0, -1)],
)
def test_move_directions(fresh, yaw, action, fwd, right):
    c = fresh
    start = _open_cell(c)
    _teleport(c, start, yaw=yaw)
    ev = c.step(action)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    th = math.radians(yaw)
    # forward = (sin, cos), right = (cos, -sin)
    dx = GRID * (fwd * math.sin(th) + right * math.cos(th))
    dz = GRID * (fwd * math.cos(th) - right * math.sin(th))
    x, z = _pos(ev)
    assert x == pytest.approx(start["x"] + dx, abs=1e-6)
    assert z == pytest.approx(start["z"] + dz, abs=1e-6)
    assert ev.metadata["agent"]["position"]["y"] == pytest.approx(AGENT_Y, abs=1e-4)
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(yaw)


def test_blocked_moves_fail_without_moving(fresh):
    c = fresh
    reach = _reachable(c)
    cells = {_cell(p) for p in reach}
    # find a reachable cell with a blocked neighbour in +z (yaw 0 forward)
    for p in reach:
        i, k = _cell(p)
        if (i, k + 1) not in cells:
            break
    else:
        pytest.fail("no blocked neighbour")
    _teleport(c, p, yaw=0.0)
    version = c._world.version
    ev = c.step("MoveAhead")
    assert ev.metadata["lastActionSuccess"] is False
    # nothing changed, so the caches keyed on the world version (grid, drawn instances) stay
    assert c._world.version == version
    assert "is blocking" in ev.metadata["errorMessage"]
    assert ev.metadata["errorMessage"].endswith("from moving by (0.0000, 0.0000, 0.2500).")
    assert _pos(ev) == (p["x"], p["z"])
    # a failed action never raises and leaves the pose exactly as it was
    assert ev.metadata["agent"]["rotation"]["y"] == 0.0


def test_blocked_message_names_the_obstacle(fresh):
    c = fresh
    ev = c.last_event
    stools = {o["name"] for o in ev.metadata["objects"] if o["objectType"] == "Stool"}
    # FloorPlan1's start cell sits between the two stools of the kitchen island
    x, z = _pos(ev)
    blocked = [c.step(a) for a in ("MoveAhead", "MoveBack")]
    msgs = [e.metadata["errorMessage"] for e in blocked if not e.metadata["lastActionSuccess"]]
    assert msgs, "expected the island stools to block the start cell"
    for m in msgs:
        name = m.split(" is blocking")[0]
        assert name in stools
    assert _pos(c.last_event) == (x, z)


def test_moves_into_walls_fail(fresh):
    c = fresh
    reach = _reachable(c)
    xmax = max(p["x"] for p in reach)
    p = next(q for q in reach if q["x"] == xmax)
    _teleport(c, p, yaw=90.0)
    for _ in range(3):
        ev = c.step("MoveAhead")
    assert ev.metadata["lastActionSuccess"] is False
    assert "is blocking Agent 0" in ev.metadata["errorMessage"]
    assert _pos(ev)[0] == pytest.approx(xmax)


def test_moves_stay_on_reachable_grid(fresh):
    c = fresh
    cells = {_cell(p) for p in _reachable(c)}
    rng = random.Random(3)
    for _ in range(40):
        ev = c.step(
            rng.choice(
                ["MoveAhead", "MoveBack", "MoveLeft", "MoveRight", "RotateLeft", "RotateRight"]
            )
        )
        x, z = _pos(ev)
        assert _on_grid(x) and _on_grid(z)
        assert (round(x / GRID), round(z / GRID)) in cells


def test_grid_snapping_and_move_magnitude(fresh):
    c = fresh
    start = _open_cell(c)
    _teleport(c, start, yaw=0.0)
    ev = c.step("MoveAhead", moveMagnitude=0.1)  # rounds back onto the start cell, yet succeeds
    assert ev.metadata["lastActionSuccess"]
    assert _pos(ev) == pytest.approx((start["x"], start["z"]))
    ev = c.step("MoveAhead", moveMagnitude=0.2)  # rounds to a full cell
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert _pos(ev) == pytest.approx((start["x"], start["z"] + GRID))
    ev = c.step("MoveBack", moveMagnitude=0.0)
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "moveMagnitude must be > 0"


# --- rotation and looking -------------------------------------------------------------
def test_rotate_yaw_mod_360(fresh):
    c = fresh
    y = c.last_event.metadata["agent"]["rotation"]["y"]
    for _ in range(5):
        ev = c.step("RotateLeft")
        y = (y - 90) % 360
        assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(y)
        assert 0 <= ev.metadata["agent"]["rotation"]["y"] < 360
    for _ in range(6):
        ev = c.step("RotateRight")
        y = (y + 90) % 360
        assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(y)
    ev = c.step("RotateRight", degrees=450)
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx((y + 450) % 360)
    ev = c.step("RotateLeft", degrees=0)
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"].startswith("Cannot rotate by 0 degrees")


def test_look_limits(fresh):
    c = fresh
    assert c.step("LookUp").metadata["agent"]["cameraHorizon"] == pytest.approx(-30)
    ev = c.step("LookUp")
    assert ev.metadata["lastActionSuccess"] is False
    assert (
        ev.metadata["errorMessage"] == "can't look up beyond 30 degrees above the forward horizon"
    )
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(-30)
    for h in (0, 30, 60):
        ev = c.step("LookDown")
        assert ev.metadata["lastActionSuccess"]
        assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(h)
    ev = c.step("LookDown")
    assert ev.metadata["lastActionSuccess"] is False
    assert (
        ev.metadata["errorMessage"] == "can't look down beyond 60 degrees below the forward horizon"
    )
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(60)
    ev = c.step("LookUp", degrees=15)
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(45)
    ev = c.step("LookUp", degrees=-5)
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"].startswith(
        "LookUp action requires positive degree value. Invalid value used: -5"
    )
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(45)


def test_look_limit_error_code(fresh):
    c = fresh
    c.step("LookUp")
    ev = c.step("LookUp")
    assert ev.metadata["errorCode"] == "LookDownCantExceedMin"


def test_crouch_stand_camera_height(fresh):
    c = fresh
    ev = c.last_event
    floor_y = ev.metadata["agent"]["position"]["y"] - AGENT_Y
    assert ev.metadata["cameraPosition"]["y"] - floor_y == pytest.approx(1.576, abs=1e-3)
    ev = c.step("Stand")
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "Already standing."
    ev = c.step("Crouch")
    assert ev.metadata["lastActionSuccess"]
    assert ev.metadata["agent"]["isStanding"] is False
    assert ev.metadata["cameraPosition"]["y"] - floor_y == pytest.approx(0.901, abs=1e-3)
    assert ev.metadata["agent"]["position"]["y"] == pytest.approx(AGENT_Y, abs=1e-4)
    ev = c.step("Crouch")
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "Already crouching."
    ev = c.step("Stand")
    assert ev.metadata["lastActionSuccess"]
    assert ev.metadata["agent"]["isStanding"] is True
    assert ev.metadata["cameraPosition"]["y"] - floor_y == pytest.approx(1.576, abs=1e-3)


# --- teleport ----------------------------------------------------------------------
def test_teleport_and_teleport_full(fresh):
    c = fresh
    reach = _reachable(c)
    target = reach[len(reach) // 3]
    ev = c.step("Teleport", position=dict(x=target["x"], y=target["y"], z=target["z"]))
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert _pos(ev) == pytest.approx((target["x"], target["z"]))
    # omitted values keep their current value
    ev = c.step("Teleport", rotation=dict(x=0, y=180, z=0), horizon=30)
    assert _pos(ev) == pytest.approx((target["x"], target["z"]))
    assert ev.metadata["agent"]["rotation"]["y"] == pytest.approx(180)
    assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(30)
    t2 = reach[2 * len(reach) // 3]
    ev = c.step(
        "TeleportFull",
        position=dict(x=t2["x"], y=t2["y"], z=t2["z"]),
        rotation=dict(x=0, y=270, z=0),
        horizon=-30,
        standing=False,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    a = ev.metadata["agent"]
    assert (a["position"]["x"], a["position"]["z"]) == pytest.approx((t2["x"], t2["z"]))
    assert a["rotation"]["y"] == pytest.approx(270)
    assert a["cameraHorizon"] == pytest.approx(-30)
    assert a["isStanding"] is False
    # deprecated x/y/z overload
    ev = c.step(
        "TeleportFull",
        x=target["x"],
        y=target["y"],
        z=target["z"],
        rotation=90,
        horizon=0,
        standing=True,
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert _pos(ev) == pytest.approx((target["x"], target["z"]))


def test_teleport_off_grid_fails(fresh):
    c = fresh
    x0, z0 = _pos(c.last_event)
    ev = c.step("Teleport", position=dict(x=x0 + 0.1, y=AGENT_Y, z=z0))
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == (
        f"Teleport position ({x0 + 0.1:.6f}, {AGENT_Y:.6f}, {z0:.6f}) is not on the grid of size 0.25."
    )
    assert _pos(ev) == (x0, z0)


def test_teleport_out_of_bounds_fails(fresh):
    c = fresh
    x0, z0 = _pos(c.last_event)
    ev = c.step(
        "TeleportFull",
        position=dict(x=25.0, y=AGENT_Y, z=z0),
        rotation=dict(x=0, y=0, z=0),
        horizon=0,
        standing=True,
    )
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == (
        f"Teleport position (25.000000, {AGENT_Y:.6f}, {z0:.6f}) out of scene bounds! "
        "Ignore this by setting forceAction=true."
    )
    assert _pos(ev) == (x0, z0)


def test_teleport_bad_rotation_and_horizon(fresh):
    c = fresh
    pos = c.last_event.metadata["agent"]["position"]
    ev = c.step(
        "TeleportFull", position=pos, rotation=dict(x=10, y=0, z=0), horizon=0, standing=True
    )
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"].startswith(
        "No agents currently can change in pitch or roll."
    )
    ev = c.step(
        "TeleportFull", position=pos, rotation=dict(x=0, y=0, z=0), horizon=75, standing=True
    )
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "Each horizon must be in [-30:60]. You gave 75.0."


def test_teleport_into_furniture_collides(fresh):
    c = fresh
    ev = c.last_event
    stool = next(o for o in ev.metadata["objects"] if o["objectType"] == "Stool")
    x = round(stool["position"]["x"] / GRID) * GRID
    z = round(stool["position"]["z"] / GRID) * GRID
    x0, z0 = _pos(ev)
    ev = c.step("Teleport", position=dict(x=x, y=AGENT_Y, z=z))
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"].startswith("Collided with: ")
    assert _pos(ev) == (x0, z0)
    # ... and no reachable position is inside furniture
    assert (round(x / GRID), round(z / GRID)) not in {_cell(p) for p in _reachable(c)}


def test_teleport_force_action_skips_grid_check(fresh):
    c = fresh
    x0, z0 = _pos(c.last_event)
    ev = c.step("Teleport", position=dict(x=x0 + 0.1, y=AGENT_Y, z=z0), forceAction=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    assert _pos(ev)[0] == pytest.approx(x0 + 0.1)


# --- reachable positions ---------------------------------------------------------------
def test_get_reachable_positions(fresh):
    c = fresh
    reach = _reachable(c)
    assert len(reach) > 10
    assert all(set(p) == {"x", "y", "z"} for p in reach)
    assert all(_on_grid(p["x"]) and _on_grid(p["z"]) for p in reach)
    assert all(p["y"] == pytest.approx(AGENT_Y, abs=1e-4) for p in reach)
    cells = {_cell(p) for p in reach}
    assert len(cells) == len(reach)  # no duplicates
    assert (round(_pos(c.last_event)[0] / GRID), round(_pos(c.last_event)[1] / GRID)) in cells
    # 4-connected: a BFS from the agent reaches all of them
    start = next(iter(cells))
    seen, todo = {start}, [start]
    while todo:
        i, k = todo.pop()
        for n in ((i + 1, k), (i - 1, k), (i, k + 1), (i, k - 1)):
            if n in cells and n not in seen:
                seen.add(n)
                todo.append(n)
    assert seen == cells
    # all inside the scene bounds
    sb = c.last_event.metadata["sceneBounds"]
    for p in reach:
        assert abs(p["x"] - sb["center"]["x"]) <= sb["size"]["x"] / 2
        assert abs(p["z"] - sb["center"]["z"]) <= sb["size"]["z"] / 2


def test_teleport_to_sample_of_reachable_positions(fresh):
    c = fresh
    reach = _reachable(c)
    rng = random.Random(0)
    for p in rng.sample(reach, min(15, len(reach))):
        ev = c.step(
            "TeleportFull",
            position=p,
            rotation=dict(x=0, y=rng.choice([0, 90, 180, 270]), z=0),
            horizon=0,
            standing=True,
        )
        assert ev.metadata["lastActionSuccess"], (p, ev.metadata["errorMessage"])
        assert _pos(ev) == pytest.approx((p["x"], p["z"]))


def test_reachable_positions_max_step_count(fresh):
    ev = fresh.step("GetReachablePositions", maxStepCount=3)
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"] == "Too many steps taken in GetReachablePositions."


# --- interactable poses ----------------------------------------------------------------
@pytest.mark.parametrize("object_type", ["Apple", "Fridge", "Microwave", "StoveKnob", "Mug"])
def test_get_interactable_poses(fresh, object_type):
    c = fresh
    obj = next(o for o in c.last_event.metadata["objects"] if o["objectType"] == object_type)
    ev = c.step("GetInteractablePoses", objectId=obj["objectId"])
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    poses = ev.metadata["actionReturn"]
    assert poses, object_type
    assert {p["horizon"] for p in poses} <= {-30.0, 0.0, 30.0, 60.0}
    assert {p["rotation"] for p in poses} <= {0.0, 90.0, 180.0, 270.0}
    reach = {_cell(p) for p in _reachable(c)}
    for p in poses:
        assert set(p) == {"x", "y", "z", "rotation", "standing", "horizon"}
        assert isinstance(p["standing"], bool)
        assert _cell(p) in reach
    rng = random.Random(1)
    for p in rng.sample(poses, min(12, len(poses))):
        ev = c.step("TeleportFull", **p)
        assert ev.metadata["lastActionSuccess"], (p, ev.metadata["errorMessage"])
        assert ev.metadata["agent"]["isStanding"] == p["standing"]
        assert ev.metadata["agent"]["cameraHorizon"] == pytest.approx(p["horizon"])
        assert ev.get_object(obj["objectId"])["visible"], (object_type, p)


def test_interactable_poses_filters(fresh):
    c = fresh
    apple = next(o for o in c.last_event.metadata["objects"] if o["objectType"] == "Apple")
    ev = c.step(
        "GetInteractablePoses",
        objectId=apple["objectId"],
        horizons=[0],
        standings=[True],
        rotations=[90],
        maxPoses=3,
    )
    poses = ev.metadata["actionReturn"]
    assert 0 < len(poses) <= 3
    assert all(p["horizon"] == 0 and p["standing"] is True and p["rotation"] == 90 for p in poses)
    full = c.step("GetInteractablePoses", objectId=apple["objectId"]).metadata["actionReturn"]
    near = c.step("GetInteractablePoses", objectId=apple["objectId"], maxDistance=0.75).metadata[
        "actionReturn"
    ]
    assert len(near) < len(full)
    for p in near:
        assert (
            math.hypot(p["x"] - apple["position"]["x"], p["z"] - apple["position"]["z"])
            < 0.75 + 0.3
        )


def test_interactable_poses_errors(fresh):
    c = fresh
    apple = next(o for o in c.last_event.metadata["objects"] if o["objectType"] == "Apple")
    oid = apple["objectId"]
    cases = [
        (dict(horizons=[90]), "Each horizon must be in [-30:60]. You gave 90."),
        (dict(maxPoses=0), "maxPoses must be > 0."),
        (dict(maxDistance=-1), "maxDistance must be >= 0 meters from the object."),
        (dict(standings=[]), "Every degree of freedom must have at least 1 valid value."),
    ]
    for kw, msg in cases:
        ev = c.step("GetInteractablePoses", objectId=oid, **kw)
        assert ev.metadata["lastActionSuccess"] is False, kw
        assert ev.metadata["errorMessage"].startswith(msg.split(" You gave")[0]), (
            kw,
            ev.metadata["errorMessage"],
        )
    ev = c.step("GetInteractablePoses", objectId="Apple|+09.00|+09.00|+09.00")
    assert ev.metadata["lastActionSuccess"] is False
    with pytest.raises(ValueError, match="objectId"):
        c.step("GetInteractablePoses")


def test_interactable_poses_restore_agent(fresh):
    c = fresh
    before = c.last_event.metadata["agent"]
    apple = next(o for o in c.last_event.metadata["objects"] if o["objectType"] == "Apple")
    ev = c.step("GetInteractablePoses", objectId=apple["objectId"])
    assert ev.metadata["agent"] == before


@pytest.mark.parametrize("scene", ["FloorPlan1", "FloorPlan2"])
def test_every_object_outside_containers_has_interactable_poses(c, scene):
    ev = c.reset(scene)
    try:
        missing = []
        for o in ev.metadata["objects"]:
            pr = o["parentReceptacles"]
            if (
                not o["pickupable"]
                or not pr
                or pr[0].split("|")[0] in ("Drawer", "Cabinet", "Fridge", "Microwave")
            ):
                continue
            if not c.step("GetInteractablePoses", objectId=o["objectId"]).metadata["actionReturn"]:
                missing.append(o["objectId"])
        assert missing == []
    finally:
        c.reset("FloorPlan1")


def test_teleport_height_mismatch_fails(fresh):
    c = fresh
    x0, z0 = _pos(c.last_event)
    ev = c.step(
        "TeleportFull",
        position=dict(x=x0, y=AGENT_Y + 1.0, z=z0),
        rotation=dict(x=0, y=0, z=0),
        horizon=0,
        standing=True,
    )
    assert ev.metadata["lastActionSuccess"] is False
    assert ev.metadata["errorMessage"].startswith(
        "After teleporting and adjusting agent position to floor, there was too large a change("
    )
    assert ev.metadata["agent"]["position"]["y"] == pytest.approx(AGENT_Y, abs=1e-4)
