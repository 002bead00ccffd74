"""Settings of the Active Neural SLAM (ANM) map baselines (§6.4 "ANM map settings"); one source.

The walkthrough mapping config trains the map with these values and the frozen-map configs load
it, so a map checkpoint only fits models built from the same numbers.
"""

from __future__ import annotations

from typing import Tuple

from .constants import OPENABLE_OBJECTS, PICKUPABLE_OBJECTS
from .official_files import CHECKPOINT_DIR, MAP_WEIGHTS

MAP_FRAME_SIZE = (
    224  # the ANM's LayerNorm is over 512x7x7 ResNet-18 features, i.e. 193..224 px frames
)
MAP_RESOLUTION_CM = 5
MAP_VISION_RANGE_CM = 200  # 40x40 egocentric cells
MAP_SIZE_CM = 1050  # 210x210 allocentric cells (official value with ReachableBoundsTHORSensor)
MAP_SCENE_MARGIN_M = 1.0  # ReachableBoundsTHORSensor margin around the reachable positions
MAP_HEIGHT_BINS: Tuple[float, ...] = (0.02, 2.0)  # BinnedPointCloudMap bins -> 3 height channels
HEIGHT_MAP_CHANNELS = len(MAP_HEIGHT_BINS) + 1
MAP_OBJECT_TYPES: Tuple[str, ...] = tuple(
    sorted(PICKUPABLE_OBJECTS + OPENABLE_OBJECTS)
)  # 72 semantic channels
SEMANTIC_MAP_CHANNELS = len(MAP_OBJECT_TYPES)

# Where `python -m rearrange.download checkpoints --configs map` saves the official map weights.
MAP_CHECKPOINT_NAME = MAP_WEIGHTS.local_path
MAP_CHECKPOINT_PATH = CHECKPOINT_DIR / MAP_CHECKPOINT_NAME
DOWNLOAD_COMMAND = "python -m rearrange.download checkpoints --configs map"

# Observation uuids shared by the map sensors, models and losses.
REL_POSITION_UUID = "rel_position_change"
SCENE_BOUNDS_UUID = "scene_bounds"
BINNED_PC_MAP_UUID = "binned_pc_map"
SEMANTIC_MAP_UUID = "semantic_map"
HEIGHT_LOGITS_KEY = "ego_height_binned_map_logits"
SEMANTIC_LOGITS_KEY = "ego_semantic_map_logits"


def map_size_cells() -> int:
    return MAP_SIZE_CM // MAP_RESOLUTION_CM


def vision_range_cells() -> int:
    return MAP_VISION_RANGE_CM // MAP_RESOLUTION_CM
