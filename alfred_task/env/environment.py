"""ALFRED's interaction environment over a THOR-compatible controller (§4).

Restores a `traj_data.json` scene, runs ALFRED's action set (LookUp/LookDown as ±15° horizon
teleports), resolves interaction masks to objects by IoU against the instance segmentation,
and tracks the cleaned/heated/cooled sets that goal conditions need.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Set, Tuple

import numpy as np

from backends import DEFAULT_BACKEND, make_controller, thor2_pose_kwargs

from alfred_task.constants import (
    AGENT_HORIZON_ADJ,
    AGENT_STEP_SIZE,
    FIELD_OF_VIEW,
    SCREEN_SIZE,
    VISIBILITY_DISTANCE,
)
from alfred_task.env.furniture_poses import furniture_poses
from alfred_task.env.thor_version import recorded_in_thor2

INTERACTABLE_KEYS = ("pickupable", "receptacle", "openable", "toggleable", "sliceable")


def query(controller, action: str, **kwargs):
    """Run an information-only action (GetReachablePositions, GetInteractablePoses, ...) and
    put the controller's ``last_event`` back, so an expert's questions never replace the
    agent's observation. Works on thor_lite and ai2thor (both keep ``last_event`` as an
    attribute)."""
    before = controller.last_event
    try:
        return controller.step(action, **kwargs)
    finally:
        controller.last_event = before


class InteractionError(Exception):
    """ALFRED's `va_interact` failure (bad mask, invalid action, ...)."""


class AlfredEnv:
    """One controller (thor_lite by default) with ALFRED's state tracking."""

    def __init__(
        self,
        backend: str = DEFAULT_BACKEND,
        width: int = SCREEN_SIZE,
        height: int = SCREEN_SIZE,
        field_of_view: float = FIELD_OF_VIEW,
    ) -> None:
        self.backend = backend
        # ALFRED ran on THOR 2.1.0, whose reachable grid is the recorded layout (§4)
        self.controller = make_controller(
            backend,
            layout_clears_moveables=True,
            width=width,
            height=height,
            gridSize=AGENT_STEP_SIZE,
            visibilityDistance=VISIBILITY_DISTANCE,
            fieldOfView=float(field_of_view),
            renderDepthImage=True,
            renderInstanceSegmentation=True,
            snapToGrid=True,
        )
        self.cleaned_objects: Set[str] = set()
        self.heated_objects: Set[str] = set()
        self.cooled_objects: Set[str] = set()
        #: number of agent actions taken since reset (va_interact calls, failed ones included)
        self.num_actions = 0
        #: (ALFRED action name, target objectId or "", success) of the last va_interact call
        self.last_interaction: Tuple[str, str, bool] = ("", "", True)

    @property
    def last_event(self):
        return self.controller.last_event

    # --- episode setup ----------------------------------------------------------------
    def reset(self, scene: str):
        self.controller.reset(scene)
        self.cleaned_objects, self.heated_objects, self.cooled_objects = set(), set(), set()
        self.num_actions = 0
        self.last_interaction = ("", "", True)
        return self.last_event

    def restore_scene(
        self, object_poses, object_toggles, dirty_and_empty: bool, furniture=(), thor2: bool = False
    ):
        """ALFRED's restore; `furniture`: extra SetObjectPoses entries for moveable furniture
        (see `furniture_poses`), posed in the same call; `thor2`: the trajectory was recorded
        in THOR 2.1.0 (thor_lite then applies its rules for those, `thor_lite/thor2_rules.py`)."""
        if object_toggles:
            self.controller.step("SetObjectToggles", objectToggles=list(object_toggles))
        if dirty_and_empty:
            self.controller.step("SetStateOfAllObjects", StateChange="CanBeDirty", forceAction=True)
            self.controller.step(
                "SetStateOfAllObjects", StateChange="CanBeFilled", forceAction=False
            )
        # ALFRED's poses list pickupables only (THOR 2.1.0 moved nothing else); THOR 5 would
        # remove every unlisted moveable (microwaves, chairs, ...) without skipMoveable.
        extra = thor2_pose_kwargs(self.backend) if thor2 else {}
        return self.controller.step(
            "SetObjectPoses",
            objectPoses=list(object_poses) + list(furniture),
            skipMoveable=True,
            **extra,
        )

    def init_episode(self, traj: Dict[str, Any]) -> Any:
        """reset + restore_scene + init_action for a traj_data.json dict."""
        scene = traj["scene"]
        self.reset(scene["floor_plan"])
        # furniture the recorded actions name stands where THOR 2.1.0 had it (no-op for data
        # generated on this simulator: its ids are today's)
        objects = self.last_event.metadata["objects"]
        furniture = furniture_poses(traj, objects)
        thor2 = recorded_in_thor2(traj, objects)  # ids or asset names of an older scene build
        self.restore_scene(
            scene["object_poses"],
            scene.get("object_toggles") or [],
            bool(scene.get("dirty_and_empty")),
            furniture,
            thor2,
        )
        init = dict(scene["init_action"])
        init.pop("rotateOnTeleport", None)
        action = init.pop("action")
        return self.controller.step(action, standing=True, forceAction=True, **init)

    # --- stepping -------------------------------------------------------------------------
    def step(self, action: Dict[str, Any]):
        a = dict(action)
        name = a.pop("action")
        if name in ("LookUp", "LookDown"):
            ag = self.last_event.metadata["agent"]
            delta = -AGENT_HORIZON_ADJ if name == "LookUp" else AGENT_HORIZON_ADJ
            ev = self.controller.step(
                "TeleportFull",
                position=ag["position"],
                rotation=ag["rotation"],
                horizon=ag["cameraHorizon"] + delta,
                standing=ag["isStanding"],
                forceAction=True,
            )
        else:
            ev = self.controller.step(name, **a)
        if ev.metadata["lastActionSuccess"]:
            self._update_states(name, a)
        return ev

    def _objects(self):
        return self.last_event.metadata["objects"]

    def _update_states(self, name: str, args: Dict[str, Any]) -> None:
        """ALFRED's env-side sets (§11.3): the appliance's contents join the set when it acts;
        objects that leave the appliance stay in it; a None content list empties it."""
        oid = args.get("objectId", "")

        def merge(current: Set[str], contents) -> Set[str]:
            return set() if contents is None else current | set(contents)

        if name == "ToggleObjectOn" and "Faucet" in oid:
            faucet = next((o for o in self._objects() if o["objectId"] == oid), None)
            basins = [o for o in self._objects() if o["objectType"] == "SinkBasin" and o["visible"]]
            if faucet is not None and basins:
                p = np.array([faucet["position"][k] for k in "xyz"])
                basin = min(
                    basins,
                    key=lambda b: np.linalg.norm(np.array([b["position"][k] for k in "xyz"]) - p),
                )
                self.cleaned_objects = merge(self.cleaned_objects, basin["receptacleObjectIds"])
        elif name == "ToggleObjectOn" and "Microwave" in oid:
            mw = next((o for o in self._objects() if o["objectType"] == "Microwave"), None)
            if mw is not None:
                self.heated_objects = merge(self.heated_objects, mw["receptacleObjectIds"])
        elif name == "CloseObject" and "Fridge" in oid:
            fr = next((o for o in self._objects() if o["objectType"] == "Fridge"), None)
            if fr is not None:
                self.cooled_objects = merge(self.cooled_objects, fr["receptacleObjectIds"])

    def to_thor_api(self, action: str, object_id: str) -> Dict[str, Any]:
        """ALFRED's `to_thor_api_exec`: the THOR call an ALFRED action name maps to."""
        inv = self.last_event.metadata["inventoryObjects"]
        if "Rotate" in action or "Move" in action or "Look" in action:
            return {"action": action.split("_")[0], "forceAction": True}
        if "OpenObject" in action:
            return {"action": "OpenObject", "objectId": object_id, "moveMagnitude": 1.0}
        if "CloseObject" in action:
            return {"action": "CloseObject", "objectId": object_id, "forceAction": True}
        if "PickupObject" in action:
            return {"action": "PickupObject", "objectId": object_id}
        if "PutObject" in action:
            if not inv:
                raise InteractionError("PutObject with nothing in hand")
            return {
                "action": "PutObject",
                "objectId": inv[0]["objectId"],
                "receptacleObjectId": object_id,
                "forceAction": True,
                "placeStationary": True,
            }
        if action in ("ToggleObjectOn", "ToggleObjectOff"):
            return {"action": action, "objectId": object_id}
        if "SliceObject" in action:
            if not inv or "Knife" not in inv[0]["objectType"]:
                raise InteractionError("SliceObject needs a knife in hand")
            return {"action": "SliceObject", "objectId": object_id}
        raise InteractionError(f"Invalid action: {action}")

    def mask_to_object(self, mask: np.ndarray) -> Optional[str]:
        """The object whose instance mask has the highest IoU with `mask` (no threshold)."""
        ev = self.last_event
        masks = ev.instance_masks
        inv = {o["objectId"] for o in ev.metadata["inventoryObjects"]}
        meta = {o["objectId"]: o for o in ev.metadata["objects"]}
        m = np.asarray(mask, dtype=bool)
        scored = []
        for oid, om in masks.items():
            inter = int(np.logical_and(om, m).sum())
            if inter == 0 or oid in inv or oid not in meta:
                continue
            if not any(meta[oid].get(k) for k in INTERACTABLE_KEYS):
                continue
            scored.append((inter / int(np.logical_or(om, m).sum()), oid))
        if not scored:
            return None
        return max(scored)[1]

    def va_interact(
        self, action: str, mask: Optional[np.ndarray] = None
    ) -> Tuple[bool, Any, str, str, Dict]:
        """(success, event, target objectId, error message, api action) as ALFRED's harness."""
        ok, ev, target, err, api = self._va_interact(action, mask)
        self.num_actions += 1
        self.last_interaction = (action, target, bool(ok))
        return ok, ev, target, err, api

    def _va_interact(
        self, action: str, mask: Optional[np.ndarray]
    ) -> Tuple[bool, Any, str, str, Dict]:
        try:
            target = ""
            if mask is not None:
                target = self.mask_to_object(mask)
                if target is None:
                    return (
                        False,
                        self.last_event,
                        "",
                        "Bad interact mask. Couldn't locate target object",
                        {},
                    )
            api = self.to_thor_api(action, target)
            ev = self.step(api)
            ok = bool(ev.metadata["lastActionSuccess"])
            return ok, ev, target, "" if ok else ev.metadata["errorMessage"], api
        except InteractionError as e:
            return False, self.last_event, "", str(e), {}

    def stop(self) -> None:
        self.controller.stop()
