"""THOR 2.1.0 layout-mode navigation and open/close rules, each on a real ALFRED trajectory.

Rules (see README "Fidelity on real ALFRED trajectories"): cells beside furniture join the
room (`thor_lite.furniture_sides`); openables face, and cabinet doors hang away from, ALFRED's
recorded opening pose (`thor_lite.open_poses`); posed objects resting on the Floor lower no
furniture surface. Real cases skip when ../shared is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import ALFRED_SAMPLE

from thor_lite.furniture_sides import touching_cells, with_furniture_sides

REPO = Path(__file__).resolve().parents[1]


def _trial(task: str, trial: str) -> dict:
    p = ALFRED_SAMPLE / task / trial / "traj_data.json"
    if not p.is_file():
        pytest.skip(f"{task}/{trial} not in ../shared")
    return json.loads(p.read_text())


@pytest.fixture(scope="module")
def bench(alfred_env):
    """The replay every fidelity benchmark runs."""
    from alfred_task.evaluation import replay

    return replay


def test_touching_cells_are_those_the_body_reaches_from_the_box():
    """A 1 m x 0.5 m box at the origin: cells within 0.2 m of it (or in it), nothing else."""
    foot = (np.zeros(2), np.array([0.5, 0.25]), np.eye(2))
    cells = touching_cells([foot], 0.25, 0.2, (-5, -5), (5, 5))
    assert (0, 0) in cells and (2, 0) in cells and (2, 1) in cells  # x = 0.5: on the edge
    assert (3, 0) not in cells  # x = 0.75 is 0.25 from the box
    assert (0, 1) in cells and (0, 2) not in cells  # z = 0.25 on the edge, z = 0.5 too far
    room = with_furniture_sides(frozenset({(10, 10)}), [foot], 0.25, 0.2, 1, (-5, -5), (5, 5))
    assert (10, 10) in room and (3, 0) in room and (4, 0) not in room  # grown by one cell
    clipped = touching_cells([foot], 0.25, 0.2, (0.1, -5), (5, 5))
    assert min(i for i, _ in clipped) == 1  # nothing outside the floor rectangle


def _replay(bench, env, task: str, trial: str) -> dict:
    return bench.replay_trajectory(env, _trial(task, trial))


def test_strip_beside_a_bed_is_walkable(bench, alfred_env):
    """FloorPlan329: the recorded path walks x = -1.25 m between the bed and the window wall,
    two to six cells from ALFRED's layout; it was a wall before."""
    r = _replay(
        bench,
        alfred_env,
        "pick_and_place_simple-CD-None-SideTable-329",
        "trial_T20190908_002257_064845",
    )
    assert r["first_failure"] is None and r["goal"]


def test_close_finds_the_door_on_the_recorded_hinge_side(bench, alfred_env):
    """FloorPlan428: ALFRED opened the cabinet standing towards its low-z edge, so the door
    hangs on the high-z edge; the recorded CloseObject mask found the floor beside the door
    drawn on the other edge."""
    r = _replay(
        bench,
        alfred_env,
        "pick_two_obj_and_place-SoapBottle-None-Toilet-428",
        "trial_T20190906_225647_716768",
    )
    assert r["first_failure"] is None and r["goal"]


def test_drawer_front_faces_the_recorded_opening_pose(bench, alfred_env):
    """FloorPlan319: the dresser's drawers face -x, where ALFRED stood to open them; the
    free-space guess put their fronts on their sides and the OpenObject mask found the dresser."""
    traj = _trial("pick_two_obj_and_place-CD-None-Drawer-319", "trial_T20190907_145438_983650")
    alfred_env.init_episode(traj)
    w = alfred_env.controller._world
    drawers = [o for o in w.objects.values() if o.object_type == "Drawer" and o.position[0] > 2.4]
    assert len(drawers) == 10 and all(o.front == (-1.0, 0.0) for o in drawers)
    r = bench.replay_trajectory(alfred_env, traj)
    assert r["first_failure"] is None and r["goal"]


def test_floor_objects_do_not_lower_a_toilet(alfred_env):
    """FloorPlan428: a plunger and a scrub brush on the floor inside the toilet's box rest on
    the Floor; the toilet is no longer drawn as a 2 cm slab at their bottoms (the floor)."""
    traj = _trial(
        "pick_two_obj_and_place-SoapBottle-None-Toilet-428", "trial_T20190906_225647_716768"
    )
    alfred_env.init_episode(traj)
    w = alfred_env.controller._world
    toilet = next(o for o in w.objects.values() if o.object_type == "Toilet")
    top = max(float(p.center[1] + (np.abs(p.rot) @ p.half)[1]) for p in w.render_parts(toilet))
    assert top > w.floor_y + 0.3


def test_desk_drawer_front_is_the_face_the_pose_stands_out_from(bench, alfred_env):
    """FloorPlan307: ALFRED opened the desk drawer looking along -x from beside and in front of
    it; its front is +z (towards the room), not the face its view direction meets."""
    traj = _trial(
        "pick_two_obj_and_place-KeyChain-None-Drawer-307", "trial_T20190919_014613_455486"
    )
    alfred_env.init_episode(traj)
    w = alfred_env.controller._world
    top = w.objects["Drawer|-01.39|+00.73|-02.26"]  # the one the trajectory opens
    assert top.front == (0.0, 1.0)
    r = bench.replay_trajectory(alfred_env, traj)
    assert r["first_failure"] is None and r["goal"]


def test_chair_the_layout_walks_past_does_not_block(bench, alfred_env):
    """FloorPlan16: a recorded layout cell is 4 cm from today's chair box, so 2.1.0's chair
    was not there as drawn; the recorded MoveAhead past it (step 21) succeeds."""
    r = _replay(
        bench,
        alfred_env,
        "pick_cool_then_place_in_recep-LettuceSliced-None-DiningTable-16",
        "trial_T20190908_135706_513332",
    )
    assert r["first_failure"] is None or r["first_failure"]["step"] > 21


def test_body_steps_ten_cm_into_a_counter_off_the_layout(bench, alfred_env):
    """FloorPlan30: the recorded path stands at (0.25, -1.0), two cells off ALFRED's layout and
    10 cm inside today's counter box (deeper than the 7 cm layout-mode overlap); in THOR 2.1.0
    mode the body may overlap a box by THOR2_BOX_OVERLAP, so the MoveAhead at step 14 succeeds."""
    from thor_lite.constants import LAYOUT_MODE_BOX_OVERLAP, THOR2_BOX_OVERLAP

    traj = _trial("pick_two_obj_and_place-Egg-None-Microwave-30", "trial_T20190907_163255_256147")
    alfred_env.init_episode(traj)
    w = alfred_env.controller._world
    assert w.box_overlap == THOR2_BOX_OVERLAP and w.position_free(0.25, -1.0)
    w.box_overlap = LAYOUT_MODE_BOX_OVERLAP
    assert not w.position_free(0.25, -1.0)  # the counter blocks it with the general overlap
    r = bench.replay_trajectory(alfred_env, traj)
    assert r["first_failure"] is None or r["first_failure"]["step"] > 14


def test_thor_lite_trajectories_keep_the_rules_they_were_made_with(alfred_env):
    """Data generated on thor_lite names today's objectIds: no THOR 2.1.0 rule applies (the
    shipped data/alfred_lite regenerates byte for byte, tests/test_alfred_dataset.py)."""
    traj = _trial("pick_two_obj_and_place-CD-None-Drawer-319", "trial_T20190907_145438_983650")
    alfred_env.init_episode(traj)
    thor2_room = alfred_env.controller._world.room_cells
    alfred_env.reset(traj["scene"]["floor_plan"])
    alfred_env.restore_scene(traj["scene"]["object_poses"], [], False)  # no thor2 flag
    w = alfred_env.controller._world
    assert w.room_cells < thor2_room and w.moveable_layout_reach == 0.0
    assert w.box_overlap < 0.1  # LAYOUT_MODE_BOX_OVERLAP, not THOR2_BOX_OVERLAP
    assert any(o.front != (-1.0, 0.0) for o in w.objects.values() if o.object_type == "Drawer")
