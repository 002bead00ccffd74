"""Observation sensors of the rearrangement tracks (§4.4)."""

from __future__ import annotations

from typing import Any, Tuple

import gym
import numpy as np
from allenact.base_abstractions.sensor import Sensor
from allenact.embodiedai.sensors.vision_sensors import DepthSensor, RGBSensor

from backends import teleport_kwargs

from .environment import RearrangeTHOREnvironment


def _phase_env(task) -> RearrangeTHOREnvironment:
    return task.env


class RGBRearrangeSensor(RGBSensor):
    """The current phase's egocentric frame."""

    def frame_from_env(self, env, task) -> np.ndarray:
        return _phase_env(task).last_event.frame.copy()


class DepthRearrangeSensor(DepthSensor):
    def frame_from_env(self, env, task) -> np.ndarray:
        depth = _phase_env(task).last_event.depth_frame
        if depth is None:
            raise RuntimeError(
                "DepthRearrangeSensor needs renderDepthImage=True in the controller kwargs"
            )
        return depth.copy()


def _teleport_walkthrough_agent(task, loc) -> None:
    wenv = task.walkthrough_env
    ev = wenv.controller.step("TeleportFull", **teleport_kwargs(loc))
    if not ev.metadata["lastActionSuccess"]:
        raise RuntimeError(f"could not align the walkthrough agent: {ev.metadata['errorMessage']}")


class UnshuffledRGBRearrangeSensor(RGBSensor):
    """1-phase: the goal-state room seen from the unshuffle agent's current pose."""

    def frame_from_env(self, env, task) -> np.ndarray:
        from .tasks import UnshuffleTask, agent_location_tuple

        if not isinstance(task, UnshuffleTask):
            return _phase_env(task).last_event.frame.copy()
        uloc = task.unshuffle_env.get_agent_location()
        wloc = task.walkthrough_env.get_agent_location()
        if agent_location_tuple(uloc) != agent_location_tuple(wloc):
            _teleport_walkthrough_agent(task, uloc)
        return task.walkthrough_env.last_event.frame.copy()


class ClosestUnshuffledRGBRearrangeSensor(RGBSensor):
    """2-phase: the goal-state frame from the walkthrough pose closest to the agent's pose."""

    ROT_COST = {0: 0.0, 90: 2.0, 180: 100.0, 270: 2.0}

    def frame_from_env(self, env, task) -> np.ndarray:
        from .tasks import UnshuffleTask, agent_location_tuple

        if not isinstance(task, UnshuffleTask) or not task.locations_visited_in_walkthrough:
            return _phase_env(task).last_event.frame.copy()
        cur = agent_location_tuple(task.unshuffle_env.get_agent_location())
        best = min(task.locations_visited_in_walkthrough, key=lambda v: self._cost(cur, v))
        wcur = agent_location_tuple(task.walkthrough_env.get_agent_location())
        if wcur != best:
            _teleport_walkthrough_agent(
                task,
                {
                    "x": best[0],
                    "y": task.walkthrough_env.get_agent_location()["y"],
                    "z": best[1],
                    "rotation": best[2],
                    "standing": bool(best[3]),
                    "horizon": best[4] if best[4] <= 180 else best[4] - 360,
                },
            )
        return task.walkthrough_env.last_event.frame.copy()

    def _cost(self, a: Tuple, b: Tuple) -> float:
        xz = float(np.hypot(a[0] - b[0], a[1] - b[1]))
        rot = self.ROT_COST[int(abs(a[2] - b[2])) % 360]
        return xz + rot + 0.125 * abs(a[3] - b[3]) + 0.125 * abs(a[4] - b[4])


class InWalkthroughPhaseSensor(Sensor):
    """1 while the agent is in the walkthrough phase (bool; numpy-2 safe dtype)."""

    def __init__(self, uuid: str = "in_walkthrough_phase", **kwargs: Any) -> None:
        space = gym.spaces.Box(low=False, high=True, shape=(1,), dtype=np.bool_)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env, task, *args: Any, **kwargs: Any) -> np.ndarray:
        from .tasks import WalkthroughTask

        return np.array([isinstance(task, WalkthroughTask)], dtype=np.bool_)
