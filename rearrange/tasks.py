"""Walkthrough and unshuffle tasks, the episode iterator and the task sampler (§3-§4, §7.5)."""

from __future__ import annotations

import copy
import hashlib
import logging
import random
from collections import OrderedDict
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import canonicaljson
import gym
import numpy as np
from allenact.base_abstractions.misc import RLStepResult
from allenact.base_abstractions.sensor import SensorSuite
from allenact.base_abstractions.task import Task, TaskSampler


from .constants import (
    MAX_UNSHUFFLE_STEPS,
    MAX_WALKTHROUGH_STEPS,
    REARRANGE_ACTIONS,
    STEP_SIZE,
    pascal_case,
)
from .environment import RearrangeTaskSpec, RearrangeTHOREnvironment
from .pose_metrics import are_poses_equal, compare_poses, pose_difference_energy, unshuffle_metrics

log = logging.getLogger(__name__)

_NAV_TO_THOR = {
    "move_ahead": "MoveAhead",
    "move_left": "MoveLeft",
    "move_right": "MoveRight",
    "move_back": "MoveBack",
    "rotate_right": "RotateRight",
    "rotate_left": "RotateLeft",
    "stand": "Stand",
    "crouch": "Crouch",
    "look_up": "LookUp",
    "look_down": "LookDown",
}


def round_to_factor(v: float, factor: float) -> float:
    return round(v / factor) * factor


def agent_location_tuple(loc: Dict[str, Any]) -> Tuple:
    """(x, z, rotation, standing, horizon) rounded as the official tasks do."""
    return (
        round(loc["x"], 2),
        round(loc["z"], 2),
        int(round_to_factor(loc["rotation"], 90)) % 360,
        int(bool(loc["standing"])),
        int(round_to_factor(loc["horizon"], 30)) % 360,
    )


def open_toggle_seed(spec: RearrangeTaskSpec) -> int:
    """The 2023 open toggle's RNG seed: md5 of the spec's canonical JSON, as the official code.

    The official code hashes `canonicaljson.encode_canonical_json(task_spec.__dict__)` after
    reset (agent_rotation already axis-rounded); we use the same package, so float formatting,
    key order and non-ASCII handling agree by construction.
    """
    return int(hashlib.md5(canonicaljson.encode_canonical_json(_spec_dict(spec))).hexdigest(), 16)


class AbstractRearrangeTask(Task[RearrangeTHOREnvironment]):
    @classmethod
    def class_action_names(cls, **kwargs) -> Tuple[str, ...]:
        return REARRANGE_ACTIONS

    def __init__(
        self,
        env: RearrangeTHOREnvironment,
        sensors,
        task_info: Dict[str, Any],
        max_steps: int,
        discrete_actions: Sequence[str] = REARRANGE_ACTIONS,
    ) -> None:
        super().__init__(env=env, sensors=sensors, task_info=task_info, max_steps=max_steps)
        self.discrete_actions = tuple(discrete_actions)
        self.actions_taken: List[str] = []
        self.actions_taken_success: List[bool] = []

    @property
    def action_space(self) -> gym.spaces.Discrete:
        return gym.spaces.Discrete(len(self.discrete_actions))

    def action_names(self) -> Tuple[str, ...]:
        return self.discrete_actions

    def render(self, mode: str = "rgb", *args, **kwargs) -> np.ndarray:
        return self.env.observation

    def close(self) -> None:
        pass

    def agent_location_tuple(self) -> Tuple:
        return agent_location_tuple(self.env.get_agent_location())

    def _navigate(self, name: str) -> bool:
        ev = self.env.controller.step(_NAV_TO_THOR[name], **self.env.physics_step_kwargs)
        return bool(ev.metadata["lastActionSuccess"])


class WalkthroughTask(AbstractRearrangeTask):
    """Explore the goal-state room; reward = 5 x increase in the share of objects seen."""

    def __init__(
        self,
        sensors,
        walkthrough_env: RearrangeTHOREnvironment,
        max_steps: int = MAX_WALKTHROUGH_STEPS,
        discrete_actions: Sequence[str] = REARRANGE_ACTIONS,
        disable_metrics: bool = False,
        task_info: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(walkthrough_env, sensors, task_info or {}, max_steps, discrete_actions)
        self.disable_metrics = disable_metrics
        self.num_reachable = len(walkthrough_env.reachable_positions())
        objs = walkthrough_env.last_event.metadata["objects"]
        self.trackable = {
            o["name"] for o in objs if o["pickupable"] or (o["openable"] and not o["pickupable"])
        }
        self.visited_xz: set = set()
        self.visited_xzr: set = set()
        self.seen: set = set()
        self.visited_locations: set = set()  # full (x, z, rot, standing, horizon) tuples
        self._did_done = False
        self._update_visited()
        self.prop_seen = self._prop_seen()

    def _update_visited(self) -> None:
        loc = self.env.get_agent_location()
        self.visited_locations.add(agent_location_tuple(loc))
        self.visited_xz.add((round(loc["x"], 2), round(loc["z"], 2)))
        self.visited_xzr.add(
            (
                round(loc["x"], 2),
                round(loc["z"], 2),
                int(round_to_factor(loc["rotation"], 90)) % 360,
            )
        )
        for o in self.env.last_event.metadata["objects"]:
            if o["visible"] and o["name"] in self.trackable:
                self.seen.add(o["name"])

    def _prop_seen(self) -> float:
        return len(self.seen) / max(len(self.trackable), 1)

    def reached_terminal_state(self) -> bool:
        return self._did_done

    def _step(self, action: int) -> RLStepResult:
        name = self.discrete_actions[int(action)]
        if name == "done":
            self._did_done, ok = True, True
        elif name in _NAV_TO_THOR:
            ok = self._navigate(name)
        elif name == "pass":
            raise RuntimeError("'pass' is not a walkthrough action")
        else:
            ok = False  # pickups, opens and drops do nothing during the walkthrough
        self.actions_taken.append(name)
        self.actions_taken_success.append(ok)
        before = self.prop_seen
        self._update_visited()
        self.prop_seen = self._prop_seen()
        reward = 5.0 * (self.prop_seen - before)
        if self._did_done and self.prop_seen > 0.5:
            reward += 5.0 * (self.prop_seen + float(self.prop_seen > 0.98))
        return RLStepResult(
            observation=self.get_observations(),
            reward=reward,
            done=self.is_done(),
            info={"action_name": name, "action_success": ok},
        )

    def metrics(self, force_return: bool = False) -> Dict[str, Any]:
        if (not self.is_done() or self.disable_metrics) and not force_return:
            return {}
        return {
            "walkthrough/ep_length": self.num_steps_taken(),
            "walkthrough/reward": float(self.cumulative_reward),
            "walkthrough/num_explored_xz": len(self.visited_xz),
            "walkthrough/num_explored_xzr": len(self.visited_xzr),
            "walkthrough/prop_visited_xz": len(self.visited_xz) / max(self.num_reachable, 1),
            "walkthrough/prop_visited_xzr": len(self.visited_xzr) / max(4 * self.num_reachable, 1),
            "walkthrough/num_obj_seen": len(self.seen),
            "walkthrough/prop_obj_seen": self._prop_seen(),
        }

    def query_expert(self, **kwargs) -> Tuple[int, bool]:
        return 0, False


class UnshuffleTask(AbstractRearrangeTask):
    """Restore the room: pick up, open and snap-drop objects back to their goal poses."""

    def __init__(
        self,
        sensors,
        unshuffle_env: RearrangeTHOREnvironment,
        walkthrough_env: Optional[RearrangeTHOREnvironment],
        max_steps: int = MAX_UNSHUFFLE_STEPS,
        discrete_actions: Sequence[str] = REARRANGE_ACTIONS,
        require_done_action: bool = True,
        locations_visited_in_walkthrough: Optional[set] = None,
        object_names_seen_in_walkthrough: Optional[set] = None,
        metrics_from_walkthrough: Optional[Dict[str, Any]] = None,
        walkthrough_task_info: Optional[Dict[str, Any]] = None,
        task_spec_in_metrics: bool = False,
        task_info: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(unshuffle_env, sensors, task_info or {}, max_steps, discrete_actions)
        self.unshuffle_env = unshuffle_env
        self.walkthrough_env = walkthrough_env
        self.require_done_action = require_done_action
        self.locations_visited_in_walkthrough = locations_visited_in_walkthrough
        self.object_names_seen_in_walkthrough = object_names_seen_in_walkthrough
        self.metrics_from_walkthrough = metrics_from_walkthrough
        self.walkthrough_task_info = walkthrough_task_info or {}
        self.task_spec_in_metrics = task_spec_in_metrics
        self._did_done = False
        ips, gps, cps = unshuffle_env.poses
        self.start_energies = np.array([pose_difference_energy(g, i) for g, i in zip(gps, ips)])
        self.last_energy = float(self.start_energies.sum())
        self._init_open_toggles(ips, gps)
        self._expert = None
        self.greedy_expert = None

    # --- the 2023 open toggle -----------------------------------------------------------
    def _init_open_toggles(self, ips: List[Dict[str, Any]], gps: List[Dict[str, Any]]) -> None:
        self.open_toggle_seed = open_toggle_seed(self.unshuffle_env.current_task_spec)
        rng = random.Random(self.open_toggle_seed)
        self.open_toggle_values: Dict[str, Tuple[float, float]] = {}
        self.open_toggle_uses: Dict[str, int] = {}
        priority, other = [], []
        for i, g in zip(ips, gps):
            if i["openness"] is None:
                continue
            o = float(i["openness"])
            if abs(g["openness"] - o) > 1e-6:
                self.open_toggle_values[i["name"]] = (float(g["openness"]), o)
                priority.append(i["name"])
            else:
                lo_len, hi_len = max(o - 0.2, 0.0), 1.0 - min(o + 0.2, 1.0)
                if rng.random() * (lo_len + hi_len) < lo_len:
                    v = rng.uniform(0.0, max(o - 0.2, 0.0))
                else:
                    v = rng.uniform(min(o + 0.2, 1.0), 1.0)
                self.open_toggle_values[i["name"]] = (v, o)
                other.append(i["name"])
        priority, other = sorted(priority), sorted(other)
        rng.shuffle(priority)
        rng.shuffle(other)
        self.open_priority = {n: k for k, n in enumerate(priority + other)}

    def _open_by_type(self, object_type: str) -> bool:
        cands = [
            o
            for o in self.env.last_event.metadata["objects"]
            if o["visible"]
            and o["objectType"] == object_type
            and o["openable"]
            and o["name"] in self.open_priority
        ]
        if not cands:
            return False
        obj = min(cands, key=lambda o: self.open_priority[o["name"]])
        uses = self.open_toggle_uses.get(obj["name"], 0)
        self.open_toggle_uses[obj["name"]] = uses + 1
        target = self.open_toggle_values[obj["name"]][uses % 2]
        ev = self.env.open_object(obj["objectId"], target, currently_open=obj["openness"] > 0)
        return bool(ev.metadata["lastActionSuccess"])

    def _pickup(self, object_type: str) -> bool:
        if self.env.held_object is not None:
            return False
        cands = sorted(
            (
                o
                for o in self.env.last_event.metadata["objects"]
                if o["visible"] and o["objectType"] == object_type
            ),
            key=lambda o: (o["distance"], o["name"]),
        )
        if not cands:
            return False
        ev = self.env.pickup_object(cands[0]["objectId"])
        ok = bool(ev.metadata["lastActionSuccess"])
        if ok and self.env.held_object is None:
            log.warning("pickup reported success but nothing is held")
            ok = False
        return ok

    # --- stepping -------------------------------------------------------------------------
    def reached_terminal_state(self) -> bool:
        if self.require_done_action:
            return self._did_done
        return self._did_done or self.all_rearranged_or_broken

    @property
    def all_rearranged_or_broken(self) -> bool:
        ips, gps, cps = self.unshuffle_env.poses
        return all(c["broken"] or are_poses_equal(g, c) for g, c in zip(gps, cps))

    def _step(self, action: int) -> RLStepResult:
        name = self.discrete_actions[int(action)]
        if name == "done":
            self._did_done, ok = True, True
        elif name == "pass":
            ok = True
        elif name in _NAV_TO_THOR:
            ok = self._navigate(name)
        elif name == "drop_held_object_with_snap":
            ok = self.env.drop_held_object_with_snap()
        elif name.startswith("open_by_type_"):
            ok = self._open_by_type(pascal_case(name[len("open_by_type_") :]))
        elif name.startswith("pickup_"):
            ok = self._pickup(pascal_case(name[len("pickup_") :]))
        else:
            raise ValueError(f"unknown action '{name}'")
        self.actions_taken.append(name)
        self.actions_taken_success.append(ok)
        # The reward first: it reads the new event's poses, which the expert then reuses, so the
        # expert's planning time (benchmarks/rearrange_expert.py) is its own work only.
        reward = self._judge()
        if self.greedy_expert is not None:
            self.greedy_expert.update(name, ok)
        return RLStepResult(
            observation=self.get_observations(),
            reward=reward,
            done=self.is_done(),
            info={"action_name": name, "action_success": ok},
        )

    def _judge(self) -> float:
        ips, gps, cps = self.unshuffle_env.poses
        energy = float(sum(pose_difference_energy(g, c) for g, c in zip(gps, cps)))
        if self.is_done():
            return -energy
        reward = self.last_energy - energy
        self.last_energy = energy
        return reward

    def metrics(self) -> Dict[str, Any]:
        if not self.is_done():
            return {}
        ips, gps, cps = self.unshuffle_env.poses
        m = {f"unshuffle/{k}": v for k, v in unshuffle_metrics(gps, ips, cps).items()}
        m["unshuffle/ep_length"] = self.num_steps_taken()
        m["unshuffle/reward"] = float(self.cumulative_reward)
        spec = self.unshuffle_env.current_task_spec
        info = {
            "scene": spec.scene,
            "index": spec.metrics.get("index"),
            "stage": spec.stage,
            "unshuffle_actions": list(self.actions_taken),
            "unshuffle_action_successes": list(self.actions_taken_success),
            "unique_id": spec.unique_id,
        }
        if self.task_spec_in_metrics:
            info["task_spec"] = copy.deepcopy(_spec_dict(spec))
            info["poses"] = {"ips": ips, "gps": gps, "cps": cps}
            info["gps_vs_cps"] = [compare_poses(g, c) for g, c in zip(gps, cps)]
            info["ips_vs_cps"] = [compare_poses(i, c) for i, c in zip(ips, cps)]
            info["gps_vs_ips"] = [compare_poses(g, i) for g, i in zip(gps, ips)]
        if self.metrics_from_walkthrough is not None:
            m.update(self.metrics_from_walkthrough)
            m["ep_length"] = m["unshuffle/ep_length"] + self.metrics_from_walkthrough.get(
                "walkthrough/ep_length", 0
            )
            info["walkthrough_actions"] = self.walkthrough_task_info.get("walkthrough_actions", [])
            info["walkthrough_action_successes"] = self.walkthrough_task_info.get(
                "walkthrough_action_successes", []
            )
        m["task_info"] = info
        return m

    # --- expert ---------------------------------------------------------------------------
    def query_expert(self, **kwargs) -> Tuple[int, bool]:
        if self.greedy_expert is None:
            from .expert import GreedyUnshuffleExpert

            self.greedy_expert = GreedyUnshuffleExpert(
                task=self, shortest_path_navigator=kwargs.get("navigator")
            )
        action = self.greedy_expert.expert_action
        if action is None:
            return 0, False
        return action, True


def _spec_dict(spec: RearrangeTaskSpec) -> Dict[str, Any]:
    d = dict(spec.__dict__)
    return d


class RearrangeTaskSpecIterable:
    """Scenes -> episodes in the official order: shuffled epochs for training, descending for eval."""

    def __init__(
        self,
        scenes_to_task_spec_dicts: "OrderedDict[str, List[Dict[str, Any]]]",
        seed: int,
        epochs: Union[int, float],
        shuffle: bool = True,
    ) -> None:
        self.scenes_to_task_spec_dicts = OrderedDict(
            (k, scenes_to_task_spec_dicts[k])
            for k in sorted(scenes_to_task_spec_dicts, key=_scene_number)
        )
        self.seed = seed
        self.random = random.Random(seed)
        self.epochs = epochs
        self.shuffle = shuffle
        self.remaining_epochs = epochs
        self.remaining_scenes: List[str] = []
        self.task_spec_dicts_for_current_scene: List[Dict[str, Any]] = []
        self.current_scene: Optional[str] = None
        self.reset()

    @property
    def length(self) -> Union[int, float]:
        if self.epochs == float("inf"):
            return float("inf")
        per_epoch = sum(len(v) for v in self.scenes_to_task_spec_dicts.values())
        return (
            len(self.task_spec_dicts_for_current_scene)
            + sum(len(self.scenes_to_task_spec_dicts[s]) for s in self.remaining_scenes)
            + per_epoch * max(self.remaining_epochs, 0)
        )

    @property
    def total_unique(self) -> int:
        return sum(len(v) for v in self.scenes_to_task_spec_dicts.values())

    def reset(self) -> None:
        self.random.seed(self.seed)
        self.remaining_epochs = self.epochs
        self.remaining_scenes = []
        self.task_spec_dicts_for_current_scene = []
        self.current_scene = None

    def _next_epoch(self) -> None:
        if self.remaining_epochs <= 0:
            raise StopIteration
        self.remaining_epochs -= 1
        self.remaining_scenes = list(self.scenes_to_task_spec_dicts)
        if self.shuffle:
            self.random.shuffle(self.remaining_scenes)

    def __iter__(self) -> Iterator[RearrangeTaskSpec]:
        return self

    def __next__(self) -> RearrangeTaskSpec:
        while not self.task_spec_dicts_for_current_scene:
            if not self.remaining_scenes:
                self._next_epoch()
            self.current_scene = self.remaining_scenes.pop()
            dicts = [dict(d) for d in self.scenes_to_task_spec_dicts[self.current_scene]]
            if self.shuffle:
                self.random.shuffle(dicts)
            self.task_spec_dicts_for_current_scene = dicts
        d = self.task_spec_dicts_for_current_scene.pop()
        return RearrangeTaskSpec(**d)


def _scene_number(scene: str) -> int:
    return int(scene.replace("FloorPlan", "").split("_")[0])


class RearrangeTaskSampler(TaskSampler):
    """Owns a walkthrough env and (for unshuffling) an unshuffle env; chains 2-phase tasks."""

    def __init__(
        self,
        run_walkthrough_phase: bool,
        run_unshuffle_phase: bool,
        stage: str,
        scenes_to_task_spec_dicts: "OrderedDict[str, List[Dict[str, Any]]]",
        rearrange_env_kwargs: Optional[Dict[str, Any]],
        sensors: SensorSuite,
        max_steps: Union[Dict[str, int], int],
        discrete_actions: Sequence[str] = REARRANGE_ACTIONS,
        require_done_action: bool = True,
        force_axis_aligned_start: bool = True,
        epochs: Union[int, float] = float("inf"),
        seed: Optional[int] = None,
        task_spec_in_metrics: bool = False,
        expert_kwargs: Optional[Dict[str, Any]] = None,
        randomize_start_rotation: bool = False,
        **_: Any,
    ) -> None:  # allenact adds mp_ctx etc.
        if not (run_walkthrough_phase or run_unshuffle_phase):
            raise ValueError("at least one of the two phases must run")
        self.run_walkthrough_phase = run_walkthrough_phase
        self.run_unshuffle_phase = run_unshuffle_phase
        self.stage = stage
        self.sensors = sensors
        self.discrete_actions = tuple(discrete_actions)
        self.require_done_action = require_done_action
        self.force_axis_aligned_start = force_axis_aligned_start
        # The official walkthrough configs start training episodes at a uniform random yaw from
        # an RNG seeded with 1 (the same sequence in every sampler); None: the dataset's rotation.
        self._start_rotation_rng = random.Random(1) if randomize_start_rotation else None
        self.task_spec_in_metrics = task_spec_in_metrics
        self.max_steps = (
            max_steps
            if isinstance(max_steps, dict)
            else {"walkthrough": max_steps, "unshuffle": max_steps}
        )
        seed = seed if seed is not None else random.randint(0, 2**30 - 1)
        self.seed = seed
        self.task_spec_iterator = RearrangeTaskSpecIterable(
            scenes_to_task_spec_dicts, seed=seed, epochs=epochs, shuffle=epochs == float("inf")
        )
        env_kwargs = rearrange_env_kwargs or {}
        self.walkthrough_env = RearrangeTHOREnvironment(**env_kwargs)
        self.unshuffle_env = RearrangeTHOREnvironment(**env_kwargs) if run_unshuffle_phase else None
        self.expert_kwargs = expert_kwargs or {}
        self._last_sampled_task: Optional[Task] = None
        self._last_walkthrough_task: Optional[WalkthroughTask] = None
        self.was_in_exploration_phase = False
        self.current_task_spec: Optional[RearrangeTaskSpec] = None
        self._navigators: Dict[str, Any] = {}

    @property
    def length(self) -> Union[int, float]:
        n = self.task_spec_iterator.length
        if self.run_walkthrough_phase and self.run_unshuffle_phase:
            return 2 * n + (1 if self.was_in_exploration_phase else 0)
        return n

    @property
    def total_unique(self) -> int:
        return self.task_spec_iterator.total_unique

    @property
    def last_sampled_task(self) -> Optional[Task]:
        return self._last_sampled_task

    @property
    def all_observation_spaces_equal(self) -> bool:
        return True

    def close(self) -> None:
        for env in (self.walkthrough_env, self.unshuffle_env):
            if env is not None:
                env.stop()

    def reset(self) -> None:
        self.task_spec_iterator.reset()
        self._last_sampled_task = None
        self.was_in_exploration_phase = False

    def set_seed(self, seed: int) -> None:
        self.seed = seed
        self.task_spec_iterator.seed = seed
        self.task_spec_iterator.reset()

    def navigator(self, scene: str):
        """One shortest-path graph per scene, shared by every episode of this sampler."""
        from .expert import ShortestPathNavigatorTHOR

        nav = self._navigators.get(scene)
        if nav is None:
            nav = ShortestPathNavigatorTHOR(
                self.unshuffle_env.controller,
                grid_size=STEP_SIZE,
                include_move_left_right="move_left" in self.discrete_actions,
            )
            self._navigators = {scene: nav}
        return nav

    def next_task(self, force_advance_scene: bool = False) -> Optional[Task]:
        if (
            self.run_walkthrough_phase
            and self.run_unshuffle_phase
            and self.was_in_exploration_phase
        ):
            return self._unshuffle_after_walkthrough()
        try:
            spec = next(self.task_spec_iterator)
        except StopIteration:
            return None
        spec.stage = spec.stage or self.stage
        self.current_task_spec = spec
        axis_aligned = self.force_axis_aligned_start
        if self._start_rotation_rng is not None:
            spec.agent_rotation, axis_aligned = 360.0 * self._start_rotation_rng.random(), False
        self.walkthrough_env.reset(spec, force_axis_aligned_start=axis_aligned)
        if self.run_unshuffle_phase:
            self.unshuffle_env.reset(spec, force_axis_aligned_start=axis_aligned)
            self.unshuffle_env.shuffle()
        if self.run_walkthrough_phase:
            task = WalkthroughTask(
                sensors=self.sensors,
                walkthrough_env=self.walkthrough_env,
                max_steps=self.max_steps["walkthrough"],
                discrete_actions=self.discrete_actions,
                disable_metrics=self.run_unshuffle_phase,
                task_info={
                    "scene": spec.scene,
                    "index": spec.metrics.get("index"),
                    "stage": spec.stage,
                    "unique_id": spec.unique_id,
                },
            )
            self.was_in_exploration_phase = self.run_unshuffle_phase
            self._last_walkthrough_task = task
        else:
            task = self._make_unshuffle_task(spec, None)
        self._last_sampled_task = task
        return task

    def _make_unshuffle_task(
        self, spec: RearrangeTaskSpec, walkthrough: Optional[WalkthroughTask]
    ) -> UnshuffleTask:
        kwargs: Dict[str, Any] = {}
        if walkthrough is not None:
            kwargs.update(
                locations_visited_in_walkthrough=set(walkthrough.visited_locations),
                object_names_seen_in_walkthrough=set(walkthrough.seen),
                metrics_from_walkthrough=walkthrough.metrics(force_return=True),
                walkthrough_task_info={
                    "walkthrough_actions": list(walkthrough.actions_taken),
                    "walkthrough_action_successes": list(walkthrough.actions_taken_success),
                },
            )
        task = UnshuffleTask(
            sensors=self.sensors,
            unshuffle_env=self.unshuffle_env,
            walkthrough_env=self.walkthrough_env,
            max_steps=self.max_steps["unshuffle"],
            discrete_actions=self.discrete_actions,
            require_done_action=self.require_done_action,
            task_spec_in_metrics=self.task_spec_in_metrics,
            task_info={
                "scene": spec.scene,
                "index": spec.metrics.get("index"),
                "stage": spec.stage,
                "unique_id": spec.unique_id,
            },
            **kwargs,
        )
        task.sampler = self
        return task

    def _unshuffle_after_walkthrough(self) -> UnshuffleTask:
        self.was_in_exploration_phase = False
        task = self._make_unshuffle_task(self.current_task_spec, self._last_walkthrough_task)
        self._last_sampled_task = task
        return task
