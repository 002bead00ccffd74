"""The online expert from real ALFRED initial states (../shared train sample; skipped without it).

Each test names the general expert rule and the real trajectory that failed without it; the
benchmark (``benchmarks/alfred_fidelity.py --mode expert``) gives the before -> after numbers.
The expert runs under the evaluation harness (1000 steps, 10 failed actions), as there.
"""

from __future__ import annotations

import pytest
from conftest import ALFRED_SAMPLE, alfred_sample_traj

SAMPLE = ALFRED_SAMPLE
pytestmark = pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared ALFRED train sample absent")


_traj = alfred_sample_traj


@pytest.fixture(scope="module")
def env(alfred_env):
    return alfred_env


class _Counting:
    """The env as the harness sees it, counting the expert's failed actions by name."""

    def __init__(self, env) -> None:
        self._env = env
        self.failed: list = []

    def __getattr__(self, name: str):
        return getattr(self._env, name)

    def va_interact(self, action: str, mask=None):
        out = self._env.va_interact(action, mask)
        if not out[0]:
            self.failed.append((action, out[2]))
        return out


def _run(env, task_dir: str):
    from alfred_task.evaluation.cli import run_task_episode
    from alfred_task.planning.expert import ExpertAgent

    counting = _Counting(env)
    rec = run_task_episode(counting, ExpertAgent(), _traj(task_dir), 0)
    return rec, counting.failed


def test_target_too_small_in_the_frame_sends_the_expert_to_the_next_spot(env):
    """GetInteractablePoses accepts the nearest pose for a CellPhone on a shelf, but the frame
    shows none of its pixels there; the expert must try the next-ranked spot, not give up."""
    rec, failed = _run(env, "look_at_obj_in_light-CellPhone-None-DeskLamp-320")
    assert rec["success"], rec["failure"]
    assert failed == []


def test_furniture_the_pose_query_misses_gets_spots_near_its_box(env):
    """The Dresser of FloorPlan317 has no pose from GetInteractablePoses (its test points are
    covered by its contents) though the frame shows it: spots next to its box let the expert plan
    and put the CellPhone on it."""
    rec, _ = _run(env, "pick_and_place_simple-CellPhone-None-Dresser-317")
    assert rec["success"], rec["failure"]


def test_an_interaction_that_keeps_failing_is_given_up_for_another_instance(env):
    """A DishSponge in the sink basin shows 40+ pixels but PickupObject fails ("not found within
    the specified visibility") from every pose; after 3 failed tries the expert uses another
    sponge instead of spending the episode's 10 failures on it."""
    rec, failed = _run(env, "pick_clean_then_place_in_recep-DishSponge-None-CounterTop-403")
    assert rec["success"], rec["failure"]
    assert len(failed) <= 3 and {a for a, _ in failed} <= {"PickupObject"}


class _Wall(_Counting):
    """The env with an obstacle the grid does not know: a MoveAhead into `cell` fails there (the
    agent stays put), as a MoveAhead into a wall or a piece of furniture does in the simulator."""

    def __init__(self, env, cell) -> None:
        super().__init__(env)
        self.cell = tuple(cell)
        self.hits = 0

    def va_interact(self, action: str, mask=None):
        from alfred_task.env.navigation import FORWARD, agent_node

        if action == "MoveAhead_25":
            i, k, r = agent_node(self._env.last_event.metadata["agent"])
            di, dk = FORWARD[r]
            if (i + di, k + dk) == self.cell:
                self.hits += 1
                self._env.num_actions += 1
                self._env.last_interaction = (action, "", False)
                self.failed.append((action, "blocked by the test's wall"))
                return False, self._env.last_event, "", "blocked by the test's wall", {}
        return super().va_interact(action, mask)


def test_a_failed_move_that_cuts_the_path_replans_from_the_cells_left(env):
    """A MoveAhead into a wall removes that cell; the spot behind it becomes unreachable, and the
    expert must plan from the reachable grid (another spot) instead of stopping with "no path".

    Built deterministically (real scenes' geometry changes with simulator fixes): the cell of the
    expert's first interaction spot is walled off, so the last MoveAhead onto it fails, the grid
    loses the cell and no path reaches that spot any more."""
    from alfred_task.evaluation.cli import run_task_episode
    from alfred_task.planning.expert import AlfredExpert, ExpertAgent
    from alfred_task.env.navigation import agent_node, parse_location

    traj = _traj("pick_and_place_with_movable_recep-LettuceSliced-Plate-SideTable-28")
    env.init_episode(traj)
    start = agent_node(env.last_event.metadata["agent"])[:2]
    plan = AlfredExpert(env, traj["task_type"], traj["pddl_params"]).plan
    spots = [
        parse_location(a.location)[:2] for a in plan if a.action == "GotoLocation" and a.location
    ]
    cell = next(c for c in spots if c != start)

    wall = _Wall(env, cell)
    agent = ExpertAgent()
    rec = run_task_episode(wall, agent, traj, 0)
    assert wall.hits >= 1, "the expert never walked into the walled cell"
    assert cell not in agent.expert.nav.cells  # the failed MoveAhead cut the spot off the grid
    assert rec["success"], rec["failure"]
    assert agent_node(env.last_event.metadata["agent"])[:2] != cell


def test_an_unsolvable_episode_records_why(env):
    """When the expert gives an object up (seen from no spot) and no plan avoids it, the episode's
    record names the object and the reason instead of a bare "no plan"."""
    import re

    # (FloorPlan204's Box-on-CoffeeTable episode was this case until the television stopped
    # hiding the coffee table; FloorPlan421's counter under the second soap bar is one now)
    rec, _ = _run(env, "pick_two_obj_and_place-SoapBar-None-CounterTop-421")
    if rec["success"]:
        pytest.skip("solved now (the simulator shows the counter top)")
    assert "CounterTop|" in rec["failure"] and re.search(
        r"from each of \d+ interaction spots", rec["failure"]
    )
    assert rec["failure"].endswith("no plan without it")


def test_a_start_pose_just_off_the_grid_counts_as_reachable(env):
    """FloorPlan421's recorded start (-2.00, 3.25) is not among GetReachablePositions, so nothing
    was reachable and the expert found no plan; the cell the agent stands on is reachable."""
    from alfred_task.env.navigation import GridNavigator, agent_node

    traj = _traj("pick_and_place_simple-SprayBottle-None-GarbageCan-421")
    env.init_episode(traj)
    start = agent_node(env.last_event.metadata["agent"])
    assert len(GridNavigator.from_controller(env.controller).distances_from(start)) > 4
    rec, _ = _run(env, "pick_and_place_simple-SprayBottle-None-GarbageCan-421")
    assert rec["success"], rec["failure"]
