"""`RearrangeTHOREnvironment`: one controller, a task spec, and the rearrangement state.

Sets up the goal (walkthrough) state and the shuffled (unshuffle) state from a dataset
episode in the official order (§2.4), extracts poses, and implements the snap drop. It only
talks to the Controller API, so thor_lite and the real AI2-THOR run the same code.
"""

from __future__ import annotations

import enum
import logging
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from backends import DEFAULT_BACKEND, find_object, make_controller

from .constants import PHYSICS_STEP_KWARGS, default_controller_kwargs
from .pose_metrics import are_poses_equal, compare_poses, tracked_poses

log = logging.getLogger(__name__)


class RearrangeMode(enum.Enum):
    MANIPULATE = "MANIPULATE"
    SNAP = "SNAP"


class PoseMismatchError(RuntimeError):
    """The shuffled scene does not contain the same objects as the goal scene."""


class RearrangeTaskSpec:
    """One dataset episode. Unknown dataset keys land in `metrics` (as in the official code)."""

    def __init__(
        self,
        scene: str,
        stage: Optional[str] = None,
        agent_position: Optional[Dict[str, float]] = None,
        agent_rotation: Optional[float] = None,
        openable_data: Optional[Sequence[Dict[str, Any]]] = None,
        starting_poses: Optional[Sequence[Dict[str, Any]]] = None,
        target_poses: Optional[Sequence[Dict[str, Any]]] = None,
        runtime_sample: bool = False,
        runtime_data: Optional[Dict[str, Any]] = None,
        **metrics: Any,
    ) -> None:
        self.scene = scene
        self.stage = stage
        self.agent_position = agent_position
        self.agent_rotation = agent_rotation
        self.openable_data = openable_data
        self.starting_poses = starting_poses
        self.target_poses = target_poses
        self.runtime_sample = runtime_sample
        self.runtime_data = runtime_data or {}
        self.metrics = metrics

    @property
    def unique_id(self) -> str:
        return f"{self.scene}__{self.stage}__{self.metrics.get('index')}"


class ObjectInteractablePosesCache:
    """LRU cache of GetInteractablePoses results keyed by (scene, type, rounded position)."""

    def __init__(self, max_size: int = 20000) -> None:
        self.max_size = max_size
        self._cache: "OrderedDict[Tuple, List[Dict[str, Any]]]" = OrderedDict()
        # the reachable positions the poses were computed over (an episode's start can add
        # some): poses computed in one episode are never reused where those differ
        self.scope: Optional[frozenset] = None

    def reset_cache(self) -> None:
        self._cache.clear()

    def _key(self, scene: str, obj: Dict[str, Any]) -> Tuple:
        p = obj["position"]
        return (
            scene,
            obj["type"],
            round(p["x"], 2),
            round(p["y"], 2),
            round(p["z"], 2),
            self.scope,
        )

    def get(
        self,
        scene: str,
        obj: Dict[str, Any],
        controller,
        reachable_positions=None,
        force_cache_refresh: bool = False,
    ) -> List[Dict[str, Any]]:
        """Poses from which `obj` (a pose dict, possibly not where the object is now) is visible."""
        key = self._key(scene, obj)
        if not force_cache_refresh and key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        poses = self._compute(obj, controller, reachable_positions)
        self._cache[key] = poses
        while len(self._cache) > self.max_size:
            self._cache.popitem(last=False)
        return poses

    @staticmethod
    def _compute(obj: Dict[str, Any], controller, reachable_positions) -> List[Dict[str, Any]]:
        md = controller.last_event.metadata
        cur = find_object(md["objects"], name=obj["name"])
        if cur is None:
            return []
        moved = (
            np.linalg.norm(_vec(cur["position"]) - _vec(obj["position"])) >= 1e-3
            or np.abs(_vec(cur["rotation"]) - _vec(obj["rotation"])).sum() >= 1
        )
        held = cur["isPickedUp"]
        if moved:
            if held:
                controller.step("PausePhysicsAutoSim")
            ev = controller.step(
                "TeleportObject",
                objectId=cur["objectId"],
                position=obj["position"],
                rotation=obj["rotation"],
                forceAction=True,
                allowTeleportOutOfHand=True,
                forceKinematic=True,
            )
            if not ev.metadata["lastActionSuccess"]:
                return []
        ev = controller.step(
            "GetInteractablePoses", objectId=cur["objectId"], positions=reachable_positions
        )
        poses = list(ev.metadata["actionReturn"] or [])
        if moved:
            controller.step(
                "TeleportObject",
                objectId=cur["objectId"],
                position=cur["position"],
                rotation=cur["rotation"],
                forceAction=True,
                allowTeleportOutOfHand=True,
                forceKinematic=True,
            )
            if held:
                controller.step("PickupObject", objectId=cur["objectId"], forceAction=True)
                controller.step("UnpausePhysicsAutoSim")
        return poses


def _vec(d: Dict[str, float]) -> np.ndarray:
    return np.array([d["x"], d["y"], d["z"]], dtype=float)


class RearrangeTHOREnvironment:
    """Wraps one controller; `backend` picks thor_lite (default) or the real AI2-THOR."""

    def __init__(
        self,
        mode: RearrangeMode = RearrangeMode.SNAP,
        force_cache_reset: bool = False,
        controller_kwargs: Optional[Dict[str, Any]] = None,
        backend: str = DEFAULT_BACKEND,
        enhanced_physics_determinism: bool = True,
    ) -> None:
        if mode != RearrangeMode.SNAP:
            raise NotImplementedError(
                "only RearrangeMode.SNAP is supported (as in every official config)"
            )
        self.mode = mode
        self.backend = backend
        self.force_cache_reset = force_cache_reset
        self.physics_step_kwargs = dict(PHYSICS_STEP_KWARGS) if enhanced_physics_determinism else {}
        kwargs = default_controller_kwargs()
        kwargs.update(controller_kwargs or {})
        self._controller_kwargs = kwargs
        self.controller = make_controller(backend, **kwargs)
        self.interactable_cache = ObjectInteractablePosesCache()
        self.current_task_spec: Optional[RearrangeTaskSpec] = None
        self.obj_name_to_walkthrough_start_pose: Dict[str, Dict[str, Any]] = {}
        self.obj_name_to_unshuffle_start_pose: Dict[str, Dict[str, Any]] = {}
        self._reachable: Optional[List[Dict[str, float]]] = None
        self._poses_cache: Optional[Tuple[Any, Tuple]] = None

    # --- basic accessors --------------------------------------------------------------
    @property
    def last_event(self):
        return self.controller.last_event

    @property
    def observation(self) -> np.ndarray:
        return self.last_event.frame

    @property
    def scene(self) -> str:
        return self.last_event.metadata["sceneName"].replace("_physics", "")

    @property
    def held_object(self) -> Optional[Dict[str, Any]]:
        inv = self.last_event.metadata["inventoryObjects"]
        if not inv:
            return None
        return find_object(self.last_event.metadata["objects"], object_id=inv[0]["objectId"])

    def get_agent_location(self) -> Dict[str, Any]:
        md = self.last_event.metadata
        a = md["agent"]
        standing = md.get("isStanding", a.get("isStanding", True))
        return {
            "x": a["position"]["x"],
            "y": a["position"]["y"],
            "z": a["position"]["z"],
            "rotation": a["rotation"]["y"],
            "horizon": a["cameraHorizon"],
            "standing": bool(standing),
        }

    def reachable_positions(self) -> List[Dict[str, float]]:
        if self._reachable is None:
            ev = self.controller.step("GetReachablePositions")
            self._reachable = list(ev.metadata["actionReturn"])
        return self._reachable

    def step(self, action: str, **kwargs: Any):
        return self.controller.step(action, **kwargs)

    # --- episode setup ----------------------------------------------------------------
    def _open_to(self, entry: Dict[str, Any], openness: float, physics: bool) -> None:
        obj = find_object(
            self.last_event.metadata["objects"],
            name=entry.get("objectName") or entry.get("name"),
            object_id=entry.get("objectId"),
        )
        if obj is None:
            raise PoseMismatchError(
                f"{self.scene}: openable '{entry.get('objectName')}' ({entry.get('objectId')}) not found"
            )
        if obj["openness"] > 0:
            self.controller.step("CloseObject", objectId=obj["objectId"], forceAction=True)
        if openness > 0:
            extra = self.physics_step_kwargs if physics else {}
            ev = self.controller.step(
                "OpenObject", objectId=obj["objectId"], openness=openness, forceAction=True, **extra
            )
            if not ev.metadata["lastActionSuccess"]:
                raise PoseMismatchError(
                    f"{self.scene}: cannot open {obj['name']}: {ev.metadata['errorMessage']}"
                )

    def _teleport_to_start(self, spec: RearrangeTaskSpec) -> None:
        ev = self.controller.step(
            "TeleportFull",
            position=spec.agent_position,
            rotation={"x": 0.0, "y": spec.agent_rotation, "z": 0.0},
            horizon=0.0,
            standing=True,
            forceAction=True,
        )
        if not ev.metadata["lastActionSuccess"]:
            raise PoseMismatchError(
                f"{spec.unique_id}: cannot teleport the agent to its start: "
                f"{ev.metadata['errorMessage']}"
            )
        self._reachable = None
        self.interactable_cache.scope = frozenset(
            (round(p["x"], 2), round(p["z"], 2)) for p in self.reachable_positions()
        )

    def _set_poses(self, poses: Sequence[Dict[str, Any]], spec: RearrangeTaskSpec) -> None:
        ev = self.controller.step(
            "SetObjectPoses",
            objectPoses=list(poses),
            placeStationary=False,
            enablePhysicsJitter=True,
            forceRigidbodySleep=True,
            skipMoveable=True,
        )
        if not ev.metadata["lastActionSuccess"]:
            raise PoseMismatchError(
                f"{spec.unique_id}: SetObjectPoses failed: {ev.metadata['errorMessage']}"
            )

    def reset(self, task_spec: RearrangeTaskSpec, force_axis_aligned_start: bool = False) -> None:
        """Goal (walkthrough) state: teleport, open to target openness, set target poses."""
        if task_spec.runtime_sample:
            raise NotImplementedError(
                "runtime-sampled episodes are not supported (the official path is broken too)"
            )
        if force_axis_aligned_start:
            task_spec.agent_rotation = round(task_spec.agent_rotation / 90.0) * 90
        self.current_task_spec = task_spec
        self.controller.reset(task_spec.scene)
        self.controller.step("PausePhysicsAutoSim")
        self._reachable = None
        self._teleport_to_start(task_spec)
        for entry in task_spec.openable_data or []:
            self._open_to(entry, entry["target_openness"], physics=True)
        self._set_poses(task_spec.target_poses, task_spec)
        self.obj_name_to_walkthrough_start_pose = tracked_poses(self.last_event.metadata["objects"])
        if self.force_cache_reset:
            self.interactable_cache.reset_cache()

    def shuffle(self, require_reset: bool = False) -> None:
        """Unshuffle start state in the same controller: teleport, start openness, start poses."""
        spec = self.current_task_spec
        if spec is None:
            raise RuntimeError("shuffle() before reset()")
        for attempt in range(2):
            if require_reset or attempt:
                self.controller.reset(spec.scene)
                self.controller.step("PausePhysicsAutoSim")
            self._teleport_to_start(spec)
            entries = spec.openable_data or []
            for i, entry in enumerate(entries):
                self._open_to(entry, entry["start_openness"], physics=i == len(entries) - 1)
            self._set_poses(spec.starting_poses, spec)
            self.obj_name_to_unshuffle_start_pose = tracked_poses(
                self.last_event.metadata["objects"]
            )
            if len(self.obj_name_to_unshuffle_start_pose) == len(
                self.obj_name_to_walkthrough_start_pose
            ):
                return
        raise PoseMismatchError(
            f"{spec.unique_id}: {len(self.obj_name_to_unshuffle_start_pose)} tracked objects after shuffle, "
            f"{len(self.obj_name_to_walkthrough_start_pose)} in the goal state"
        )

    # --- poses --------------------------------------------------------------------------
    @property
    def poses(self) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[Dict[str, Any]]]:
        """(unshuffle_start, walkthrough_start, current), parallel lists ordered by name.

        Computed once per simulator event (the expert, reward and metrics all ask for it);
        callers get fresh shallow copies of the pose dicts.
        """
        ev = self.last_event
        if self._poses_cache is None or self._poses_cache[0] is not ev:
            self._poses_cache = (ev, self._compute_poses())
        return tuple([dict(p) for p in lst] for lst in self._poses_cache[1])  # type: ignore[return-value]

    def _compute_poses(self):
        gps = self.obj_name_to_walkthrough_start_pose
        ips = self.obj_name_to_unshuffle_start_pose
        cur = tracked_poses(self.last_event.metadata["objects"])
        out_i, out_g, out_c = [], [], []
        for n in sorted(gps):
            g = dict(gps[n])
            i = dict(ips.get(n, g))
            if g["broken"]:  # "pretend not broken", as the official code does
                g["broken"] = False
                i["broken"] = False
            c = cur.get(n)
            if c is None:
                c = dict(g)
                c.update(broken=True, position=None, rotation=None, openness=None)
            out_i.append(i)
            out_g.append(g)
            out_c.append(c)
        return out_i, out_g, out_c

    # --- actions used by the tasks -------------------------------------------------------
    def pickup_object(self, object_id: str):
        return self.controller.step("PickupObject", objectId=object_id, **self.physics_step_kwargs)

    def open_object(self, object_id: str, openness: float, currently_open: bool):
        if currently_open:
            self.controller.step("CloseObject", objectId=object_id, **self.physics_step_kwargs)
        return self.controller.step(
            "OpenObject", objectId=object_id, openness=openness, **self.physics_step_kwargs
        )

    @staticmethod
    def _agent_pose_key(p: Dict[str, Any]) -> Tuple:
        return (
            round(p["x"], 2),
            round(p["y"], 2),
            round(p["z"], 2),
            int(round(p["rotation"] / 90.0) * 90) % 360,
            int(bool(p["standing"])),
            int(round(p["horizon"])),
        )

    def drop_held_object_with_snap(self) -> bool:
        """Snap the held object to its goal pose if the agent stands where it can see the goal."""
        held = self.held_object
        if held is None:
            return False
        self.controller.step("MakeObjectBreakable", objectId=held["objectId"])
        goal = self.obj_name_to_walkthrough_start_pose.get(held["name"])
        if goal is not None and goal["position"] is not None:
            poses = self.interactable_cache.get(
                self.scene, goal, self.controller, force_cache_refresh=self.force_cache_reset
            )
            agent_key = self._agent_pose_key(self.get_agent_location())
            if any(self._agent_pose_key(p) == agent_key for p in poses):
                gp = goal["position"]
                positions = [
                    {
                        "x": gp["x"] + 0.001 * dx,
                        "y": gp["y"] + 0.001 * dy,
                        "z": gp["z"] + 0.001 * dz,
                    }
                    for dx in (0, -1, 1)
                    for dz in (0, -1, 1)
                    for dy in (0, 1, 2)
                ]
                self.controller.step(
                    "TeleportObject",
                    objectId=held["objectId"],
                    rotation=goal["rotation"],
                    positions=positions,
                    forceKinematic=True,
                    allowTeleportOutOfHand=True,
                    makeUnbreakable=True,
                )
        if self.held_object is None:
            cur = tracked_poses(self.last_event.metadata["objects"]).get(held["name"])
            if cur is None or goal is None:
                return False
            return are_poses_equal(goal, cur, treat_broken_as_unequal=True)
        # Not at a snapping pose: put it into the nearest visible receptacle, else drop it.
        recs = sorted(
            (
                o
                for o in self.last_event.metadata["objects"]
                if o["visible"] and o["receptacle"] and o["objectId"] != held["objectId"]
            ),
            key=lambda o: (o["distance"], o["objectId"]),
        )
        for r in recs:
            if self.controller.step(
                "PutObject", objectId=r["objectId"], **self.physics_step_kwargs
            ).metadata["lastActionSuccess"]:
                return False
        self.controller.step(
            "DropHeldObjectAhead",
            forceAction=True,
            autoSimulation=False,
            actionSimulationSeconds=1.5,
            fixedDeltaTime=0.02,
        )
        return False

    def compare_all(self) -> List[Dict[str, Any]]:
        ips, gps, cps = self.poses
        return [compare_poses(g, c) for g, c in zip(gps, cps)]

    def stop(self) -> None:
        try:
            self.controller.stop()
        except Exception:  # stopping a dead Unity process must not mask the real error
            log.exception("error while stopping the controller")
