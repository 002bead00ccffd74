"""Determinism and image outputs of thor_lite (AI2-THOR 5.0 reference §2, §4)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from thor_lite import Controller

SIZE = 224
INIT = dict(width=SIZE, height=SIZE, renderDepthImage=True, renderInstanceSegmentation=True)
NAV = [
    "MoveAhead",
    "MoveBack",
    "MoveLeft",
    "MoveRight",
    "RotateLeft",
    "RotateRight",
    "LookUp",
    "LookDown",
    "Crouch",
    "Stand",
]


@pytest.fixture(scope="module")
def pair():
    a = Controller(scene="FloorPlan1", **INIT)
    b = Controller(scene="FloorPlan1", **INIT)
    yield a, b
    a.stop()
    b.stop()


def _next_action(rng: random.Random, ev):
    """A random action built only from the event's metadata and the rng."""
    objs = ev.metadata["objects"]
    r = rng.random()
    if r < 0.55:
        return {"action": rng.choice(NAV)}
    pick = lambda pred: sorted(o["objectId"] for o in objs if pred(o))  # noqa: E731
    held = ev.metadata["inventoryObjects"]
    if held:
        recs = pick(lambda o: o["receptacle"] and o["objectType"] != "Floor")
        if rng.random() < 0.7 and recs:
            return {"action": "PutObject", "objectId": rng.choice(recs), "forceAction": True}
        return {"action": "DropHandObject"}
    choices = [
        ("PickupObject", lambda o: o["pickupable"] and not o["isSliced"]),
        ("OpenObject", lambda o: o["openable"] and not o["isOpen"]),
        ("CloseObject", lambda o: o["openable"] and o["isOpen"]),
        ("ToggleObjectOn", lambda o: o["toggleable"] and not o["isToggled"]),
        ("ToggleObjectOff", lambda o: o["toggleable"] and o["isToggled"]),
        ("SliceObject", lambda o: o["sliceable"] and not o["isSliced"]),
        ("DirtyObject", lambda o: o["dirtyable"]),
        ("BreakObject", lambda o: o["breakable"] and not o["isBroken"]),
    ]
    name, pred = rng.choice(choices)
    ids = pick(pred)
    if not ids:
        return {"action": "Pass"}
    return {"action": name, "objectId": rng.choice(ids), "forceAction": True}


def _run(ctrl, seed, n):
    ev = ctrl.reset("FloorPlan1")
    rng = random.Random(seed)
    out = [ev]
    for _ in range(n):
        ev = ctrl.step(_next_action(rng, ev))
        out.append(ev)
    return out


def _dump(ev):
    return json.dumps(ev.metadata, sort_keys=True)


def test_two_controllers_identical(pair):
    a, b = pair
    rng_a, rng_b = random.Random(11), random.Random(11)
    ev_a, ev_b = a.reset("FloorPlan1"), b.reset("FloorPlan1")
    n_ok = n_interactions = 0
    for i in range(40):
        act_a, act_b = _next_action(rng_a, ev_a), _next_action(rng_b, ev_b)
        assert act_a == act_b
        ev_a, ev_b = a.step(act_a), b.step(act_b)
        assert _dump(ev_a) == _dump(ev_b), (i, act_a)
        if i % 4 == 0 or "objectId" in act_a:
            assert np.array_equal(ev_a.frame, ev_b.frame), (i, act_a)
            assert np.array_equal(ev_a.depth_frame, ev_b.depth_frame), (i, act_a)
            assert np.array_equal(
                ev_a.instance_segmentation_frame, ev_b.instance_segmentation_frame
            ), (i, act_a)
        n_ok += ev_a.metadata["lastActionSuccess"]
        n_interactions += "objectId" in act_a and ev_a.metadata["lastActionSuccess"]
    assert n_ok >= 15 and n_interactions >= 5  # the sequence really changed the scene


def test_replay_after_reset_is_identical(pair):
    a, _ = pair
    first = [(_dump(e), e.frame.tobytes()) for e in _run(a, 5, 25)]
    second = [(_dump(e), e.frame.tobytes()) for e in _run(a, 5, 25)]
    assert first == second


def test_different_seeds_diverge(pair):
    a, _ = pair
    x = _dump(_run(a, 1, 20)[-1])
    y = _dump(_run(a, 2, 20)[-1])
    assert x != y


def test_images_are_frozen_per_step(pair):
    """Frames read long after their step equal frames read right away (lazy rendering)."""
    a, b = pair
    now = []
    ev = a.reset("FloorPlan1")
    rng = random.Random(21)
    for _ in range(15):
        ev = a.step(_next_action(rng, ev))
        now.append((ev.frame.copy(), ev.depth_frame.copy(), ev.instance_segmentation_frame.copy()))
    later = _run(b, 21, 15)[1:]
    for i, (e, (f, d, s)) in enumerate(zip(later, now)):
        assert np.array_equal(e.frame, f), i
        assert np.array_equal(e.depth_frame, d), i
        assert np.array_equal(e.instance_segmentation_frame, s), i


# --- images ----------------------------------------------------------------------------
@pytest.fixture
def ctrl(pair):
    a, _ = pair
    a.reset("FloorPlan1")
    return a


def test_image_types_and_shapes(ctrl):
    ev = ctrl.step("Pass")
    assert ev.frame.shape == (SIZE, SIZE, 3) and ev.frame.dtype == np.uint8
    assert ev.depth_frame.shape == (SIZE, SIZE) and ev.depth_frame.dtype == np.float32
    assert np.all(np.isfinite(ev.depth_frame))
    assert ev.depth_frame.min() > 0 and ev.depth_frame.max() <= 20.0
    seg = ev.instance_segmentation_frame
    assert seg.shape == (SIZE, SIZE, 3) and seg.dtype == np.uint8
    assert ev.frame.std() > 1.0  # not a blank image
    assert ev.metadata["colors"] and all(set(c) == {"color", "name"} for c in ev.metadata["colors"])


def test_instance_masks_consistent(ctrl):
    rng = random.Random(2)
    reach = ctrl.step("GetReachablePositions").metadata["actionReturn"]
    for _ in range(4):
        p = rng.choice(reach)
        ev = ctrl.step(
            "TeleportFull",
            position=p,
            rotation=rng.choice([0, 90, 180, 270]),
            horizon=rng.choice([0, 30]),
            standing=True,
        )
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        ids = {o["objectId"] for o in ev.metadata["objects"]}
        masks = ev.instance_masks
        dets = ev.instance_detections2D
        seg = ev.instance_segmentation_frame
        assert len(masks) > 0
        covered = np.zeros((SIZE, SIZE), dtype=int)
        for k, m in masks.items():
            assert "|" in k
            # sim objects, or named structure (walls / ceiling)
            assert k in ids or k.split("|")[0] in ("StandardWallSize", "Ceiling"), k
            assert m.shape == (SIZE, SIZE) and m.dtype == bool and m.any()
            col = np.array(ev.object_id_to_color[k], dtype=np.uint8)
            assert np.array_equal(np.all(seg == col, axis=-1), m), k
            rows, cols = np.flatnonzero(m.any(1)), np.flatnonzero(m.any(0))
            assert dets[k] == (cols[0], rows[0], cols[-1], rows[-1])  # inclusive (x1, y1, x2, y2)
            x1, y1, x2, y2 = dets[k]
            assert m[y1, :].any() and m[y2, :].any() and m[:, x1].any() and m[:, x2].any()
            covered += m
        assert covered.max() == 1  # masks do not overlap
        assert set(dets) == set(masks)
        # class masks are unions of instance masks
        for cls, cm in ev.class_masks.items():
            union = np.zeros((SIZE, SIZE), dtype=bool)
            for k, m in masks.items():
                if k.split("|")[0] == cls:
                    union |= m
            assert np.array_equal(cm, union), cls


def test_visible_objects_appear_in_the_frame(ctrl):
    rng = random.Random(4)
    reach = ctrl.step("GetReachablePositions").metadata["actionReturn"]
    seen = shown = 0
    for _ in range(12):
        p = rng.choice(reach)
        ev = ctrl.step(
            "TeleportFull",
            position=p,
            rotation=rng.choice([0, 90, 180, 270]),
            horizon=rng.choice([0, 30, 60]),
            standing=rng.random() < 0.7,
        )
        masks = ev.instance_masks
        for o in ev.metadata["objects"]:
            if o["visible"]:
                seen += 1
                shown += o["objectId"] in masks
    assert seen >= 20
    assert shown >= 0.95 * seen


def test_depth_to_wall_equals_planar_distance(ctrl):
    ev = ctrl.last_event
    reach = ctrl.step("GetReachablePositions").metadata["actionReturn"]
    sb = ev.metadata["sceneBounds"]
    east = max(p["x"] for p in reach)
    wall_x = sb["center"]["x"] + sb["size"]["x"] / 2
    for p in sorted((q for q in reach if q["x"] == east), key=lambda q: q["z"]):
        ev = ctrl.step("TeleportFull", position=p, rotation=90, horizon=0, standing=True)
        assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
        masks = ev.instance_masks
        wall = next((k for k in masks if k.startswith("StandardWallSize")), None)
        if (
            wall is None
            or not masks[wall][SIZE // 2 - 1 : SIZE // 2 + 1, SIZE // 2 - 1 : SIZE // 2 + 1].all()
        ):
            continue  # something stands between the agent and the wall here
        d = ev.depth_frame[SIZE // 2 - 1 : SIZE // 2 + 1, SIZE // 2 - 1 : SIZE // 2 + 1]
        assert d == pytest.approx(np.full((2, 2), wall_x - p["x"]), abs=0.01)
        # planar (z-buffer) depth: constant along the wall's rows, not the euclidean ray length
        row = ev.depth_frame[SIZE // 2, :]
        wall_row = masks[wall][SIZE // 2, :]
        assert np.allclose(row[wall_row], wall_x - p["x"], atol=0.01)
        return
    pytest.fail("no reachable east-side cell with a clear view of the wall")


def test_depth_matches_camera_height_looking_down(ctrl):
    """Looking 60 degrees down at open floor: depth of the floor along the view axis."""
    ev = ctrl.last_event
    reach = ctrl.step("GetReachablePositions").metadata["actionReturn"]
    cells = {(round(p["x"] / 0.25), round(p["z"] / 0.25)) for p in reach}
    floor_id = ev.objects_by_type("Floor")[0]["objectId"]
    for p in reach:
        i, k = round(p["x"] / 0.25), round(p["z"] / 0.25)
        if not all((i, k + j) in cells for j in (1, 2, 3)):
            continue
        ev = ctrl.step("TeleportFull", position=p, rotation=0, horizon=60, standing=True)
        m = ev.instance_masks.get(floor_id)
        if m is None or not m[SIZE // 2 - 1 : SIZE // 2 + 1, SIZE // 2 - 1 : SIZE // 2 + 1].all():
            continue
        cam_h = ev.metadata["cameraPosition"]["y"] - (
            ev.metadata["agent"]["position"]["y"] - 0.9009992
        )
        expected = cam_h / np.sin(np.radians(60))  # along the optical axis to the floor plane
        d = float(
            ev.depth_frame[SIZE // 2 - 1 : SIZE // 2 + 1, SIZE // 2 - 1 : SIZE // 2 + 1].mean()
        )
        assert d == pytest.approx(expected, abs=0.02)
        return
    pytest.fail("no open floor in front of any reachable cell")


def test_segmentation_off_by_default():
    with Controller(scene="FloorPlan1", width=32, height=32) as c:
        ev = c.last_event
        assert ev.depth_frame is None
        assert ev.instance_segmentation_frame is None
        assert ev.instance_detections2D is None
        assert len(ev.instance_masks) == 0
        assert ev.metadata["colors"] is None
        assert ev.frame.shape == (32, 32, 3)


def test_controllers_in_one_process_render_only_their_own_state():
    """Two controllers share a process (a task's unshuffle and walkthrough environments): a
    change in one must not show in the other's frames, however their renders interleave."""
    a = Controller(scene="FloorPlan1", width=128, height=128)
    before = a.last_event.frame.copy()
    b = Controller(scene="FloorPlan1", width=128, height=128)
    target = next(o for o in b.last_event.metadata["objects"] if o["visible"] and o["pickupable"])
    changed = b.step("DisableObject", objectId=target["objectId"]).frame
    assert (changed != before).any(), "the change must be in view for this test to mean anything"
    assert np.array_equal(a.step("Pass").frame, before)
    a.stop()
    b.stop()
