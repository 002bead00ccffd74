"""What the build does with each action: thor_lite's Controller behind THOR's AgentManager.

Unity's AgentManager answers Reset, Initialize, ChangeResolution, ChangeQuality and
GetScenesInBuild itself and hands every other action to the agent; here the agent is an
in-process thor_lite Controller, so an action behaves exactly as it does in-process.
Reset only names the scene: ai2thor always follows it with Initialize (which carries every
parameter), and loading the world once there halves the cost of a reset.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, List, Optional, Tuple

from ..constants import CAMERA_FAR, CAMERA_NEAR
from . import encode

_LOG = logging.getLogger(__name__)
DEFAULT_SIZE = 300  # ai2thor's default width and height; headless launches pass no size


def complete_rotation(req: Dict[str, Any]) -> Dict[str, Any]:
    """ai2thor's client sends a scalar `rotation` as {"y": value}; Unity reads the missing x and z
    of that Vector3 as 0, and so does the build (thor_lite itself wants all three)."""
    rot = req.get("rotation")
    if (
        isinstance(rot, dict)
        and set(rot) == {"y"}
        and isinstance(rot["y"], (int, float))
        and not isinstance(rot["y"], bool)
    ):
        req = dict(req, rotation={"x": 0.0, "y": float(rot["y"]), "z": 0.0})
    return req


#: environment variable: the THOR build whose object names the build's scenes carry
COMMIT_ID_ENV = "THOR_LITE_COMMIT_ID"


class BuildSession:
    """State between messages: screen size, the scene Reset named, the thor_lite Controller."""

    def __init__(
        self, width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, screenshots: bool = True
    ) -> None:
        self.width, self.height = int(width), int(height)
        self.screenshots = screenshots
        self.scene = "FloorPlan1_physics"
        self.controller: Any = None
        self._scenes: Optional[List[str]] = None

    # --- replies -------------------------------------------------------------------------
    def first_reply(self) -> Tuple[Dict[str, Any], list]:
        """The frame Unity emits at start-up, before any action."""
        return encode.bare_metadata(self.width, self.height, self.scene, ""), []

    def _bare(
        self,
        action: str,
        ok: bool = True,
        error: str = "",
        code: Optional[str] = None,
        ret: Any = None,
    ) -> Tuple[Dict[str, Any], list]:
        return encode.bare_metadata(
            self.width, self.height, self.scene, action, ok, error, code, ret
        ), []

    def _from_event(self, event: Any, render: bool, overrides: Optional[Dict[str, Any]] = None):
        meta = encode.agent_metadata(event.metadata, overrides)
        return meta, encode.image_fields(event, render, event.metadata.get("colors"))

    def _manager_reply(
        self,
        action: str,
        render: bool,
        ok: bool = True,
        error: str = "",
        code: Optional[str] = None,
        ret: Any = None,
    ):
        """A manager action's reply: the current scene state with this action's outcome."""
        if self.controller is None or self.controller.last_event is None:
            return self._bare(action, ok, error, code, ret)
        over = {
            "lastAction": action,
            "lastActionSuccess": ok,
            "errorMessage": error,
            "errorCode": code,
            "actionReturn": ret,
        }
        return self._from_event(self.controller.last_event, render, over)

    def error_reply(
        self, request: Dict[str, Any], error: BaseException
    ) -> Tuple[Dict[str, Any], list]:
        """A failed action for anything the build itself could not answer (never a dead pipe)."""
        message = " ".join(f"{type(error).__name__}: {error}".split())
        return self._bare(str(request.get("action")), False, message[:500])

    # --- dispatch ------------------------------------------------------------------------
    def handle(self, request: Dict[str, Any]) -> Tuple[Dict[str, Any], list]:
        """(per-agent metadata, image fields) answering one action (sequenceId already removed)."""
        req = dict(request)
        name = req.get("action")
        render = self.screenshots and req.get("renderImage", True) is not False
        if name == "GetScenesInBuild":
            return self._manager_reply(name, render, ret=self.scenes())
        if name == "ChangeQuality":
            return self._manager_reply(name, render)
        if name == "ChangeResolution":
            return self._change_resolution(req, render)
        if name == "Reset":
            return self._reset(req)
        if name == "Initialize":
            return self._initialize(req, render)
        if self.controller is None:  # a client that skips Initialize gets THOR's defaults
            self._start({})
        return self._step(req, render)

    def scenes(self) -> List[str]:
        """The scenes in this build, named as ai2thor names them ("FloorPlan1_physics")."""
        if self._scenes is None:
            from ..scene_data import all_scene_records

            self._scenes = sorted(f"{s}_physics" for s in all_scene_records())
        return self._scenes

    def _change_resolution(self, req: Dict[str, Any], render: bool):
        try:
            x, y = int(req["x"]), int(req["y"])
            if x <= 0 or y <= 0:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            return self._manager_reply(
                "ChangeResolution",
                render,
                False,
                "ChangeResolution needs positive integers x and y",
                "InvalidArgument",
            )
        self.width, self.height = x, y
        if self.controller is not None:  # thor_lite's world is built for one size: reload it
            self.controller.reset(self.scene, width=x, height=y)
        return self._manager_reply("ChangeResolution", render)

    def _reset(self, req: Dict[str, Any]):
        scene = str(req.get("sceneName", ""))
        if scene not in self.scenes():
            return self._bare(
                "Reset", False, f"Scene '{scene}' is not in this build", "InvalidArgument"
            )
        self.scene = scene
        return self._bare("Reset")

    def _start(self, params: Dict[str, Any]) -> Any:
        params = dict(params, width=self.width, height=self.height)
        # ai2thor's client keeps its commit_id to itself; the environment names the build whose
        # object names the scenes should carry (thor_lite.names), if any
        if os.environ.get(COMMIT_ID_ENV):
            params.setdefault("commit_id", os.environ[COMMIT_ID_ENV])
        if self.controller is None:
            from ..controller import Controller

            self.controller = Controller(scene=self.scene, **params)
        else:
            self.controller.reset(self.scene, **params)
        return self.controller.last_event

    def _initialize(self, req: Dict[str, Any], render: bool):
        params = {k: v for k, v in req.items() if k not in ("action", "renderImage")}
        try:
            event = self._start(params)
        except Exception as e:  # THOR reports a bad Initialize as a failed action
            return self._manager_reply(
                "Initialize", render, False, " ".join(f"{e}".split()), "InvalidArgument"
            )
        planes = {"cameraNearPlane": CAMERA_NEAR, "cameraFarPlane": CAMERA_FAR}
        return self._from_event(event, render, {"actionReturn": planes})

    def _step(self, req: Dict[str, Any], render: bool):
        c = self.controller
        before = c.last_event
        try:
            event = c.step(complete_rotation(req))
        except (
            Exception
        ) as e:  # thor_lite raises after recording the failed Event (ai2thor's codes)
            event = c.last_event
            if event is before or event.metadata["lastActionSuccess"]:
                _LOG.debug("action %r raised", req.get("action"), exc_info=True)
                return self._manager_reply(
                    str(req.get("action")),
                    render,
                    False,
                    " ".join(f"{type(e).__name__}: {e}".split()),
                )
        return self._from_event(event, render)
