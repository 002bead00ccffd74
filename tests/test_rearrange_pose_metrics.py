"""Pose comparison, lattice IoU, energy and unshuffle metrics (reference §3.1–§3.6, §10.6)."""

from __future__ import annotations

import copy
import logging
import math
from typing import Optional, Sequence

import numpy as np
import pytest

from rearrange.pose_metrics import (
    PoseComparisonError,
    angle_between_rotations,
    are_poses_equal,
    compare_poses,
    extract_pose,
    iou_box_3d,
    pose_difference_energy,
    poses_list,
    tracked_poses,
    unshuffle_metrics,
)

# THOR's OOBB corner order in the box's local frame.
CORNER_SIGNS = np.array(
    [
        (+1, -1, +1),
        (-1, -1, +1),
        (-1, -1, -1),
        (+1, -1, -1),
        (+1, +1, +1),
        (-1, +1, +1),
        (-1, +1, -1),
        (+1, +1, -1),
    ],
    dtype=np.float64,
)

SIZE = (0.2, 0.1, 0.1)


def make_box(centre: Sequence[float], size: Sequence[float] = SIZE, yaw: float = 0.0) -> list:
    """8 THOR-ordered OOBB corners of a box with the given centre, size (x, y, z) and yaw (deg)."""
    t = math.radians(yaw)
    rot_y = np.array(
        [[math.cos(t), 0.0, math.sin(t)], [0.0, 1.0, 0.0], [-math.sin(t), 0.0, math.cos(t)]]
    )
    local = CORNER_SIGNS * np.asarray(size, dtype=np.float64) / 2.0
    return (local @ rot_y.T + np.asarray(centre, dtype=np.float64)).tolist()


def make_pose(
    name: str,
    centre: Sequence[float] = (0.0, 0.0, 0.0),
    size: Sequence[float] = SIZE,
    yaw: float = 0.0,
    obj_type: str = "Mug",
    pickupable: bool = True,
    openness: Optional[float] = None,
    broken: bool = False,
    with_box: bool = True,
) -> dict:
    return {
        "type": obj_type,
        "position": {"x": centre[0], "y": centre[1], "z": centre[2]},
        "rotation": {"x": 0.0, "y": yaw, "z": 0.0},
        "openness": openness,
        "pickupable": pickupable,
        "broken": broken,
        "objectId": f"{obj_type}|{name}",
        "name": name,
        "parentReceptacles": [],
        "bounding_box": make_box(centre, size, yaw) if with_box else None,
    }


# --------------------------------------------------------------------------- IoU (§3.3)


@pytest.mark.parametrize(
    "centre, yaw, expected",
    [
        ((0.0, 0.0, 0.0), 0.0, 1.0),  # identical
        ((0.1, 0.0, 0.0), 0.0, 0.3684),  # shifted by half its length along x (exact 1/3)
        ((0.05, 0.0, 0.0), 0.0, 0.6250),  # shifted by a quarter (exact 0.6)
        ((0.0, 0.0, 0.0), 90.0, 0.3684),  # same centre, yawed 90°
        ((0.0, 0.0, 0.0), 45.0, 0.5434),  # yawed 45°
        ((1.0, 0.0, 0.0), 0.0, 0.0),  # disjoint
    ],
)
def test_iou_reference_values(centre, yaw, expected):
    b1 = make_box((0.0, 0.0, 0.0))
    b2 = make_box(centre, yaw=yaw)
    assert round(iou_box_3d(b1, b2), 4) == pytest.approx(expected, abs=1e-9)
    # The lattice lives in box 1's frame, so a common rigid translation changes nothing.
    off = np.array([3.7, -1.2, 5.3])
    moved = iou_box_3d((np.asarray(b1) + off).tolist(), (np.asarray(b2) + off).tolist())
    assert round(moved, 4) == pytest.approx(expected, abs=1e-9)


def test_iou_is_asymmetric_and_uses_lattice():
    big = make_box((0.0, 0.0, 0.0), size=(0.4, 0.2, 0.2))
    small = make_box((0.05, 0.0, 0.0), size=(0.2, 0.1, 0.2))
    # small sampled inside big: every lattice point is inside -> V_small / V_big exactly.
    assert iou_box_3d(big, small) == pytest.approx(0.25)
    # big sampled inside small: only a subset of the lattice is inside (approximation).
    assert iou_box_3d(small, big) != pytest.approx(iou_box_3d(big, small))


def test_iou_rejects_bad_boxes():
    with pytest.raises(ValueError):
        iou_box_3d([[0.0, 0.0, 0.0]] * 8, make_box((0, 0, 0)))  # degenerate
    with pytest.raises(ValueError):
        iou_box_3d(make_box((0, 0, 0))[:7], make_box((0, 0, 0)))  # wrong shape
    with pytest.raises(ValueError):
        iou_box_3d(None, make_box((0, 0, 0)))
    # Flat box: corners coincide with corner 0 (zero-length edge) -> degenerate.
    flat = make_box((0, 0, 0), size=(0.2, 0.1, 0.0))
    with pytest.raises(ValueError):
        iou_box_3d(make_box((0, 0, 0)), flat)


# --------------------------------------------------------------------------- rotation distance


def test_angle_between_rotations():
    zero = {"x": 0.0, "y": 0.0, "z": 0.0}
    assert angle_between_rotations(zero, zero) == pytest.approx(0.0)
    # 90° yaw: rotvec norm π/2, times 180/(2π) -> 45.
    assert angle_between_rotations({"x": 0.0, "y": 90.0, "z": 0.0}, zero) == pytest.approx(45.0)
    assert angle_between_rotations(zero, {"x": 0.0, "y": 270.0, "z": 0.0}) == pytest.approx(45.0)
    # L1 over components: 90° about x then (extrinsic) 90° about y.
    a = {"x": 90.0, "y": 90.0, "z": 0.0}
    from scipy.spatial.transform import Rotation

    rv = Rotation.from_euler("xyz", [90, 90, 0], degrees=True).as_rotvec() * 180 / (2 * math.pi)
    assert angle_between_rotations(a, zero) == pytest.approx(np.abs(rv).sum())


# --------------------------------------------------------------------------- compare_poses (§3.2)


def test_compare_poses_fields_and_short_circuit():
    goal = make_pose("a")
    cur = make_pose("a", centre=(0.005, 0.0, 0.0), yaw=5.0)
    cmp = compare_poses(goal, cur)
    assert cmp["broken"] is False
    assert cmp["iou"] == 1.0  # position < 0.01 and rotation < 10 -> IoU forced to 1
    assert cmp["position_dist"] == pytest.approx(0.005)
    assert cmp["rotation_dist"] == pytest.approx(2.5)
    assert cmp["openness_diff"] is None

    shifted = compare_poses(goal, make_pose("a", centre=(0.1, 0.0, 0.0)))
    assert round(shifted["iou"], 4) == 0.3684

    broken = compare_poses(goal, make_pose("a", broken=True))
    assert broken == {
        "broken": True,
        "iou": None,
        "openness_diff": None,
        "position_dist": None,
        "rotation_dist": None,
    }

    g = make_pose("d", obj_type="Drawer", pickupable=False, openness=0.3, with_box=False)
    c = make_pose("d", obj_type="Drawer", pickupable=False, openness=0.8, with_box=False)
    cmp = compare_poses(g, c)
    assert cmp["iou"] is None and cmp["position_dist"] is None and cmp["rotation_dist"] is None
    assert cmp["openness_diff"] == pytest.approx(0.5)


def test_compare_poses_iou_failure_logs_and_gives_zero(caplog):
    goal = make_pose("a")
    cur = make_pose("a", centre=(0.5, 0.0, 0.0))
    cur["bounding_box"] = [[0.5, 0.0, 0.0]] * 8  # degenerate
    with caplog.at_level(logging.WARNING, logger="rearrange.pose_metrics"):
        cmp = compare_poses(goal, cur)
    assert cmp["iou"] == 0.0
    assert any("iou_box_3d" in r.getMessage() for r in caplog.records)


def test_compare_poses_preconditions():
    with pytest.raises(PoseComparisonError):
        compare_poses(make_pose("a", obj_type="Mug"), make_pose("a", obj_type="Cup"))
    with pytest.raises(PoseComparisonError):
        compare_poses(make_pose("a", broken=True), make_pose("a"))
    assert issubclass(PoseComparisonError, AssertionError)


# --------------------------------------------------------------------------- equality (§3.4)


def test_are_poses_equal():
    goal = make_pose("a")
    assert are_poses_equal(goal, make_pose("a"))
    assert are_poses_equal(goal, make_pose("a", centre=(0.05, 0.0, 0.0)))  # IoU 0.625
    assert not are_poses_equal(goal, make_pose("a", centre=(0.1, 0.0, 0.0)))  # IoU 0.368
    assert not are_poses_equal(goal, make_pose("a", broken=True), treat_broken_as_unequal=True)
    with pytest.raises(PoseComparisonError):
        are_poses_equal(goal, make_pose("a", broken=True))

    drawer = dict(obj_type="Drawer", pickupable=False)
    assert are_poses_equal(
        make_pose("d", openness=0.0, **drawer), make_pose("d", openness=0.2, **drawer)
    )
    assert not are_poses_equal(
        make_pose("d", openness=0.0, **drawer), make_pose("d", openness=0.21, **drawer)
    )
    # Openness is also checked for pickupable openables (unlike the energy).
    laptop = dict(obj_type="Laptop", pickupable=True)
    assert not are_poses_equal(
        make_pose("l", openness=0.0, **laptop), make_pose("l", openness=1.0, **laptop)
    )


# --------------------------------------------------------------------------- energy (§3.5, §10.6)


def test_energy_reference_values():
    goal = make_pose("a")
    assert pose_difference_energy(goal, make_pose("a", broken=True)) == 1.0
    assert pose_difference_energy(goal, make_pose("a")) == 0.0

    # IoU 0.25: a quarter-volume box fully inside the (bigger) goal box, off-centre.
    big_goal = make_pose("b", size=(0.4, 0.2, 0.2))
    small = make_pose("b", centre=(0.05, 0.0, 0.0), size=(0.2, 0.1, 0.2))
    assert compare_poses(big_goal, small)["iou"] == pytest.approx(0.25)
    assert pose_difference_energy(big_goal, small) == pytest.approx(0.25)

    # IoU 0, nearest corners 1 m apart -> 0.5 + 0.5 * 1/2.
    assert pose_difference_energy(goal, make_pose("a", centre=(1.2, 0.0, 0.0))) == pytest.approx(
        0.75
    )
    # IoU 0, gap >= 2 m -> saturates at 1.
    assert pose_difference_energy(goal, make_pose("a", centre=(2.2, 0.0, 0.0))) == pytest.approx(
        1.0
    )
    assert pose_difference_energy(goal, make_pose("a", centre=(0.0, 0.0, 7.0))) == pytest.approx(
        1.0
    )
    # Minimum over 64 corner pairs (diagonal offset, gap along x and z).
    cur = make_pose("a", centre=(0.2 + 0.3, 0.0, 0.1 + 0.4))
    assert pose_difference_energy(goal, cur) == pytest.approx(0.5 + 0.5 * 0.5 / 2.0)


def test_energy_openables():
    drawer = dict(obj_type="Drawer", pickupable=False)
    g = make_pose("d", openness=0.0, **drawer)
    assert pose_difference_energy(g, make_pose("d", openness=0.21, **drawer)) == 1.0
    assert pose_difference_energy(g, make_pose("d", openness=0.2, **drawer)) == 0.0
    # Openness of a moved drawer is what counts, not its box.
    assert (
        pose_difference_energy(g, make_pose("d", centre=(3.0, 0.0, 0.0), openness=0.1, **drawer))
        == 0.0
    )
    # Pickupable openables: openness ignored, IoU energy used.
    laptop = dict(obj_type="Laptop", pickupable=True)
    gl = make_pose("l", openness=0.0, **laptop)
    assert pose_difference_energy(gl, make_pose("l", openness=1.0, **laptop)) == 0.0
    assert pose_difference_energy(
        gl, make_pose("l", centre=(1.2, 0, 0), openness=0.0, **laptop)
    ) == pytest.approx(0.75)


# --------------------------------------------------------------------------- metrics (§3.6)


def _scenario():
    goal = [
        make_pose("Apple_1", centre=(3.0, 0.0, 0.0), obj_type="Apple"),
        make_pose(
            "Drawer_1", obj_type="Drawer", pickupable=False, openness=0.0, centre=(0.0, 0.0, 3.0)
        ),
        make_pose("Mug_1", centre=(0.0, 0.0, 0.0)),
    ]
    start = copy.deepcopy(goal)
    start[2] = make_pose("Mug_1", centre=(1.0, 0.0, 0.0))  # misplaced at start: gap 0.8 -> 0.7
    cur = copy.deepcopy(goal)
    cur[0] = make_pose(
        "Apple_1", centre=(5.0, 0.0, 0.0), obj_type="Apple"
    )  # newly misplaced: gap 1.8 -> 0.95
    return goal, start, cur


def test_unshuffle_metrics_fixed_newly_misplaced_untouched():
    goal, start, cur = _scenario()
    m = unshuffle_metrics(goal, start, cur)
    expected = {
        "start_energy": 0.7,
        "end_energy": 0.95,
        "success": 0.0,
        "num_initially_misplaced": 1,
        "num_misplaced": 1,
        "num_fixed": 1,
        "num_newly_misplaced": 1,
        "prop_fixed": 1.0,
        "prop_fixed_strict": 0.0,
        "num_broken": 0,
        "change_energy": 0.7 + 0.95,
        "num_changed": 2,
        "prop_misplaced": 1.0,
        "energy_prop": 0.95 / 0.7,
    }
    assert set(m) == set(expected)
    for k, v in expected.items():
        assert m[k] == pytest.approx(v), k


def test_unshuffle_metrics_perfect_and_undefined_keys():
    goal, start, _ = _scenario()
    # Fixing everything: success, strict = prop_fixed = 1.
    m = unshuffle_metrics(goal, start, copy.deepcopy(goal))
    assert m["success"] == 1.0 and m["end_energy"] == 0.0
    assert m["prop_fixed"] == 1.0 and m["prop_fixed_strict"] == 1.0
    assert m["prop_misplaced"] == 0.0 and m["energy_prop"] == 0.0
    # Nothing misplaced at start: prop_fixed 1, prop_misplaced / energy_prop absent.
    m = unshuffle_metrics(goal, copy.deepcopy(goal), copy.deepcopy(goal))
    assert m["start_energy"] == 0.0 and m["prop_fixed"] == 1.0 and m["prop_fixed_strict"] == 1.0
    assert "prop_misplaced" not in m and "energy_prop" not in m
    assert m["change_energy"] == 0.0 and m["num_changed"] == 0


def test_unshuffle_metrics_broken():
    goal, start, cur = _scenario()
    cur[2] = make_pose("Mug_1", broken=True)
    m = unshuffle_metrics(goal, start, cur)
    assert m["num_broken"] == 1
    assert m["end_energy"] == pytest.approx(0.95 + 1.0)
    assert m["num_fixed"] == 0 and m["prop_fixed"] == 0.0
    # A broken unshuffle-start pose makes D(start, cur) assert: change keys skipped.
    start[2]["broken"] = True
    m = unshuffle_metrics(goal, start, cur)
    assert "change_energy" not in m and "num_changed" not in m
    assert m["start_energy"] == pytest.approx(1.0)

    with pytest.raises(ValueError):
        unshuffle_metrics(goal, start, cur[:2])


# --------------------------------------------------------------------------- extraction (§3.1)


def _thor_obj(name, obj_type, openable, pickupable, box=True, parents=None, openness=0.0):
    return {
        "name": name,
        "objectId": f"{obj_type}|{name}",
        "objectType": obj_type,
        "position": {"x": 1.0, "y": 2.0, "z": 3.0},
        "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
        "openable": openable,
        "openness": openness,
        "pickupable": pickupable,
        "isBroken": False,
        "parentReceptacles": parents,
        "objectOrientedBoundingBox": {"cornerPoints": make_box((1.0, 2.0, 3.0))} if box else None,
    }


def test_extract_and_tracked_poses():
    objs = [
        _thor_obj("Mug_b", "Mug", False, True, parents=["CounterTop|1"]),
        _thor_obj("Cabinet_a", "Cabinet", True, False, box=False, openness=0.4),
        _thor_obj("Wall_c", "Wall", False, False, box=False),
        _thor_obj("Apple_z", "Apple", False, True),
    ]
    poses = tracked_poses(objs)
    assert list(poses) == ["Apple_z", "Cabinet_a", "Mug_b"]
    cab = poses["Cabinet_a"]
    assert cab["openness"] == 0.4 and cab["bounding_box"] is None and cab["parentReceptacles"] == []
    mug = poses["Mug_b"]
    assert set(mug) == {
        "type",
        "position",
        "rotation",
        "openness",
        "pickupable",
        "broken",
        "objectId",
        "name",
        "parentReceptacles",
        "bounding_box",
    }
    assert mug["type"] == "Mug" and mug["openness"] is None and mug["pickupable"] is True
    assert mug["broken"] is False and mug["parentReceptacles"] == ["CounterTop|1"]
    assert np.allclose(mug["bounding_box"], make_box((1.0, 2.0, 3.0)))
    # No aliasing with the metadata.
    objs[0]["position"]["x"] = 99.0
    objs[0]["objectOrientedBoundingBox"]["cornerPoints"][0][0] = 99.0
    assert mug["position"]["x"] == 1.0 and mug["bounding_box"][0][0] != 99.0
    assert extract_pose(objs[0])["position"]["x"] == 99.0
    assert [p["name"] for p in poses_list(poses)] == ["Apple_z", "Cabinet_a", "Mug_b"]
    with pytest.raises(ValueError):
        tracked_poses(objs + [_thor_obj("Mug_b", "Mug", False, True)])
