"""Sensors of the Active Neural SLAM baselines: egomotion, scene bounds and map targets (§4.4).

The egomotion (`RelativePositionChangeTHORSensor`), bounds (`ReachableBoundsTHORSensor`) and
free-space target (`BinnedPointCloudMapTHORSensor`) sensors are AllenAct's and work on both
backends as they are. The semantic target needs per-object 2D hulls, which AI2-THOR returns from
its `Get2DSemanticHulls` action; simulators without that action (thor_lite) get the convex hull
of each object's bounding-box corners instead, so the same sensor runs on either backend.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import cv2
import numpy as np
from allenact.base_abstractions.sensor import Sensor
from allenact.embodiedai.mapping.mapping_utils.map_builders import ObjectHull2d
from allenact_plugins.ithor_plugin.ithor_sensors import (
    BinnedPointCloudMapTHORSensor,
    ReachableBoundsTHORSensor,
    RelativePositionChangeTHORSensor,
    SemanticMapTHORSensor,
)

from .map_settings import (
    BINNED_PC_MAP_UUID,
    MAP_HEIGHT_BINS,
    MAP_OBJECT_TYPES,
    MAP_RESOLUTION_CM,
    MAP_SCENE_MARGIN_M,
    MAP_SIZE_CM,
    MAP_VISION_RANGE_CM,
    REL_POSITION_UUID,
    SCENE_BOUNDS_UUID,
    SEMANTIC_MAP_UUID,
)


def _box_corners(obj: Dict[str, Any]) -> Optional[np.ndarray]:
    box = obj.get("objectOrientedBoundingBox") or obj.get("axisAlignedBoundingBox")
    if not box or not box.get("cornerPoints"):
        return None
    return np.asarray(box["cornerPoints"], dtype=np.float64)


def box_hulls(
    objects: Sequence[Dict[str, Any]], object_types: Sequence[str]
) -> Dict[str, List[List[float]]]:
    """objectId -> [[x, z], ...]: the convex hull of the object's box corners on the floor plane."""
    wanted = set(object_types)
    hulls: Dict[str, List[List[float]]] = {}
    for obj in objects:
        corners = _box_corners(obj) if obj["objectType"] in wanted else None
        if corners is None:
            continue
        xz = corners[:, [0, 2]].astype(np.float32)
        hulls[obj["objectId"]] = cv2.convexHull(xz).reshape(-1, 2).astype(float).tolist()
    return hulls


def object_hulls(controller, object_types: Sequence[str]) -> List[ObjectHull2d]:
    """2D hulls of the objects of `object_types`: THOR's own when it has the action, else boxes."""
    objects = controller.last_event.metadata["objects"]
    try:
        ev = controller.step("Get2DSemanticHulls", objectTypes=list(object_types))
        hulls = ev.metadata["actionReturn"] if ev.metadata["lastActionSuccess"] else None
    except ValueError:  # thor_lite: "Invalid action"
        hulls = None
    if not isinstance(hulls, dict):
        hulls = box_hulls(objects, object_types)
    return [
        ObjectHull2d(
            object_id=o["objectId"], object_type=o["objectType"], hull_points=hulls[o["objectId"]]
        )
        for o in objects
        if o["objectId"] in hulls
    ]


class SemanticMapRearrangeSensor(SemanticMapTHORSensor):
    """AllenAct's semantic map target with backend-independent hulls and the simulator's FOV."""

    def get_observation(self, env, task, *args: Any, **kwargs: Any) -> Any:
        controller = env.controller
        if task.num_steps_taken() == 0:
            hulls = object_hulls(controller, self.ordered_object_types)
            bounds = self.map_range_sensor.get_observation(env=env, task=task)
            self.semantic_map_builder.fov = float(controller.last_event.metadata["fov"])
            self.semantic_map_builder.reset(
                min_xyz=np.array([bounds["x_range"][0], 0.0, bounds["z_range"][0]]),
                object_hulls=hulls,
            )
        ev = controller.last_event
        md = ev.metadata
        if ev.depth_frame is None:
            raise RuntimeError("the semantic map target needs depth frames (renderDepthImage=True)")
        out = self.semantic_map_builder.update(
            depth_frame=ev.depth_frame,
            camera_xyz=np.array([md["cameraPosition"][k] for k in "xyz"]),
            camera_rotation=md["agent"]["rotation"]["y"],
            camera_horizon=md["agent"]["cameraHorizon"],
        )
        return {
            k: out[k] if out[k].dtype == np.bool_ else out[k] > 0.001
            for k in self.observation_space.spaces
        }


def egomotion_sensors() -> List[Sensor]:
    """Ground-truth egomotion and the map's origin (allowed at inference, §4.4)."""
    return [
        RelativePositionChangeTHORSensor(uuid=REL_POSITION_UUID),
        ReachableBoundsTHORSensor(margin=MAP_SCENE_MARGIN_M, uuid=SCENE_BOUNDS_UUID),
    ]


def map_target_sensors(range_sensor: Sensor) -> List[Sensor]:
    """Training-only targets: 3 height bins of free space and 72 object-type channels (40x40 cells)."""
    info = dict(
        map_range_sensor=range_sensor,
        vision_range_in_cm=MAP_VISION_RANGE_CM,
        map_size_in_cm=MAP_SIZE_CM,
        resolution_in_cm=MAP_RESOLUTION_CM,
    )
    return [
        BinnedPointCloudMapTHORSensor(
            fov=None, height_bins=MAP_HEIGHT_BINS, uuid=BINNED_PC_MAP_UUID, **info
        ),
        SemanticMapRearrangeSensor(
            fov=90.0, ordered_object_types=list(MAP_OBJECT_TYPES), uuid=SEMANTIC_MAP_UUID, **info
        ),
    ]


MAP_TARGET_SENSOR_TYPES = (BinnedPointCloudMapTHORSensor, SemanticMapTHORSensor)
