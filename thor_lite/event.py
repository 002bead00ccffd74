"""`Event`: ai2thor's per-step result, computed lazily from a frozen view of the world.

Steps whose images or object metadata nobody reads cost nothing beyond the action itself:
frames are rendered and `metadata["objects"]` is built on first access, from the object
table captured when the step finished (later steps never leak into an older Event).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

import numpy as np

from .constants import GRID_SIZE

if TYPE_CHECKING:  # pragma: no cover
    pass


class LazyMetadata(dict):
    """A dict whose 'objects' (and 'colors', ...) entries are filled on first use: either all at
    once by `build`, or, given `parts` (key -> builder, in key order), each one when it is first
    read and the rest when the whole dict is used."""

    def __init__(
        self,
        base: Dict[str, Any],
        build: Optional[Callable[[], Dict[str, Any]]] = None,
        parts: Optional[Dict[str, Callable[[], Any]]] = None,
    ) -> None:
        super().__init__(base)
        self._parts = parts
        self._made: Dict[str, Any] = {}
        if parts is not None:
            build = self._build_parts
        self._build: Optional[Callable[[], Dict[str, Any]]] = build

    def _build_parts(self) -> Dict[str, Any]:
        made = self._made
        return {k: made[k] if k in made else fn() for k, fn in self._parts.items()}

    def _part(self, key):
        made = self._made
        if key not in made:
            made[key] = self._parts[key]()
        return made[key]

    def _materialize(self) -> None:
        if self._build is not None:
            build, self._build = self._build, None
            super().update(build())

    def __getitem__(self, key):
        if self._build is not None and not dict.__contains__(self, key):
            if self._parts is not None and key in self._parts:
                return self._part(key)
            self._materialize()
        if key == "reachablePositions" and not dict.__contains__(self, key):
            if dict.get(self, "lastAction") == "GetReachablePositions":
                return dict.__getitem__(self, "actionReturn")
            raise IndexError("reachablePositions is only available after GetReachablePositions")
        return super().__getitem__(key)

    def get(self, key, default=None):
        if self._build is not None and not dict.__contains__(self, key):
            if self._parts is not None and key in self._parts:
                return self._part(key)
            self._materialize()
        return super().get(key, default)

    def __contains__(self, key) -> bool:
        self._materialize()
        return super().__contains__(key)

    def __iter__(self) -> Iterator:
        self._materialize()
        return super().__iter__()

    def __len__(self) -> int:
        self._materialize()
        return super().__len__()

    def keys(self):
        self._materialize()
        return super().keys()

    def items(self):
        self._materialize()
        return super().items()

    def values(self):
        self._materialize()
        return super().values()

    def copy(self) -> dict:
        self._materialize()
        return dict(super().items())

    def __eq__(self, other) -> bool:
        self._materialize()
        return dict(super().items()) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._materialize()
        return super().__repr__()

    def __reduce__(self):
        self._materialize()
        return (dict, (dict(super().items()),))


class _LazyMasks(Mapping):
    def __init__(self, compute: Callable[[], Dict[str, Any]]) -> None:
        self._compute = compute
        self._data: Optional[Dict[str, Any]] = None

    def _d(self) -> Dict[str, Any]:
        if self._data is None:
            self._data = self._compute()
        return self._data

    def __getitem__(self, k):
        return self._d()[k]

    def __iter__(self):
        return iter(self._d())

    def __len__(self) -> int:
        return len(self._d())


class Event:
    """What one `Controller.step` returns (the subset of ai2thor.server.Event task code uses)."""

    def __init__(
        self,
        metadata: LazyMetadata,
        render: Callable[[], Tuple],
        flags: Dict[str, bool],
        id_colors: Tuple[Tuple[str, ...], np.ndarray],
    ) -> None:
        self.metadata = metadata
        self._render = render
        self._flags = flags
        self._images: Optional[Tuple] = None
        self._seg_cache: Optional[np.ndarray] = None
        self._id_names, self._id_palette = id_colors
        self.events = [self]
        # ai2thor attributes thor_lite has no pass for: present (None / empty) so that code
        # written for THOR can read them without an AttributeError.
        self.normals_frame: Optional[np.ndarray] = None
        self.flow_frame: Optional[np.ndarray] = None
        self.image_data = None
        self.third_party_camera_frames: list = []
        self.third_party_depth_frames: list = []
        self.third_party_instance_segmentation_frames: list = []
        self.third_party_semantic_segmentation_frames: list = []
        self.third_party_instance_masks: list = []
        self.third_party_class_masks: list = []
        self.third_party_normals_frames: list = []
        self.third_party_flows_frames: list = []
        self.instance_masks = _LazyMasks(self._instance_masks)
        self.class_masks = _LazyMasks(self._class_masks)
        self.instance_detections2D = _LazyMasks(self._detections) if self._seg_on else None
        self.class_detections2D = _LazyMasks(self._class_detections)

    # --- images ------------------------------------------------------------------------
    @property
    def _seg_on(self) -> bool:
        return self._flags.get("renderInstanceSegmentation", False) or self._flags.get(
            "renderSemanticSegmentation", False
        )

    def _imgs(self) -> Tuple:
        if self._images is None:
            self._images = self._render()
        return self._images

    @property
    def frame(self) -> Optional[np.ndarray]:
        if not self._flags.get("renderImage", True):
            return None
        return self._imgs()[0]

    @property
    def cv2img(self) -> Optional[np.ndarray]:
        f = self.frame
        return None if f is None else f[..., ::-1]

    @property
    def depth_frame(self) -> Optional[np.ndarray]:
        if not self._flags.get("renderDepthImage", False):
            return None
        return self._imgs()[1]

    @property
    def object_ids_by_index(self) -> Tuple[str, ...]:
        """Object id of each index of `instance_ids_frame` ("" for 0, the background; the
        room's walls, floor and ceiling last)."""
        return tuple(self._id_names)

    @property
    def instance_ids_frame(self) -> Optional[np.ndarray]:
        """Integer instance ids (0 = background); index i names `object_ids_by_index[i]`."""
        return self._imgs()[2] if self._seg_on else None

    @property
    def instance_segmentation_frame(self) -> Optional[np.ndarray]:
        ids = self.instance_ids_frame
        if ids is None:
            return None
        if self._seg_cache is None:
            # one gather of whole palette rows (half the time of packing to uint32 and
            # copying the RGB channels out)
            self._seg_cache = np.take(np.asarray(self._id_palette, dtype=np.uint8), ids, axis=0)
        return self._seg_cache

    @property
    def semantic_segmentation_frame(self) -> Optional[np.ndarray]:
        if not self._flags.get("renderSemanticSegmentation", False):
            return None
        ids = self._imgs()[2]
        palette = np.zeros_like(self._id_palette)
        for i, oid in enumerate(self._id_names):
            if i:
                palette[i] = class_color(oid.split("|")[0])
        return palette[ids]

    @property
    def class_segmentation_frame(self) -> Optional[np.ndarray]:
        """Deprecated ai2thor alias of `semantic_segmentation_frame`."""
        return self.semantic_segmentation_frame

    def cv2image(self) -> Optional[np.ndarray]:
        """Deprecated ai2thor alias of `cv2img`."""
        return self.cv2img

    @property
    def color_to_object_id(self) -> Dict[Tuple[int, int, int], str]:
        if not self._seg_on:
            return {}
        out = {
            tuple(int(v) for v in self._id_palette[i]): oid
            for i, oid in enumerate(self._id_names)
            if i
        }
        for oid in self._id_names[1:]:
            t = oid.split("|")[0]
            out.setdefault(class_color(t), t)
        return out

    @property
    def object_id_to_color(self) -> Dict[str, Tuple[int, int, int]]:
        return {v: k for k, v in self.color_to_object_id.items()}

    def _instance_masks(self) -> Dict[str, np.ndarray]:
        ids = self.instance_ids_frame
        if ids is None:
            return {}
        out = {}
        present = np.unique(ids)
        for i in present:
            if i == 0:
                continue
            m = ids == i
            m.setflags(write=False)
            out[self._id_names[i]] = m
        return out

    def _class_masks(self) -> Dict[str, np.ndarray]:
        out: Dict[str, np.ndarray] = {}
        for oid, m in self._instance_masks().items():
            t = oid.split("|")[0]
            out[t] = m if t not in out else (out[t] | m)
        return out

    def _detections(self) -> Dict[str, Tuple[int, int, int, int]]:
        out = {}
        for oid, m in self._instance_masks().items():
            rows = np.flatnonzero(m.any(1))
            cols = np.flatnonzero(m.any(0))
            out[oid] = (int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1]))
        return out

    def _class_detections(self) -> Dict[str, tuple]:
        out: Dict[str, list] = {}
        for oid, box in self._detections().items():
            out.setdefault(oid.split("|")[0], []).append(box)
        return {k: tuple(v) for k, v in out.items()}

    # --- conveniences ------------------------------------------------------------------
    @property
    def screen_width(self) -> int:
        return self.metadata["screenWidth"]

    @property
    def screen_height(self) -> int:
        return self.metadata["screenHeight"]

    @property
    def pose(self) -> Tuple[int, int, int, int]:
        a = self.metadata["agent"]
        return (
            int(round(a["position"]["x"] * 1000)),
            int(round(a["position"]["z"] * 1000)),
            int(round(a["rotation"]["y"] * 1000)),
            int(round(a["cameraHorizon"] * 1000)),
        )

    @property
    def pose_discrete(self) -> Tuple[int, int, int, int]:
        a = self.metadata["agent"]
        return (
            int(a["position"]["x"] / GRID_SIZE),
            int(a["position"]["z"] / GRID_SIZE),
            int(a["rotation"]["y"] / 90.0),
            int(round(a["cameraHorizon"])),
        )

    def get_object(self, object_id: str) -> Optional[Dict[str, Any]]:
        for o in self.metadata["objects"]:
            if o["objectId"] == object_id:
                return o
        return None

    def objects_by_type(self, object_type: str) -> list:
        return [o for o in self.metadata["objects"] if o["objectType"] == object_type]

    def __bool__(self) -> bool:
        return bool(self.metadata["lastActionSuccess"])

    def __repr__(self) -> str:
        m = self.metadata
        ret = str(m.get("actionReturn"))[:100]
        return (
            f"<thor_lite.Event lastAction={m.get('lastAction')} "
            f"lastActionSuccess={m.get('lastActionSuccess')} "
            f"errorMessage={m.get('errorMessage')!r} actionReturn={ret}>"
        )


def _hash_rgb(key: str, salt: int = 0) -> Tuple[int, int, int]:
    import zlib

    h = zlib.crc32(f"{salt}:{key}".encode())
    return ((h >> 16) & 255, (h >> 8) & 255, h & 255)


def class_color(object_type: str) -> Tuple[int, int, int]:
    """A stable colour per object type (semantic segmentation and the RGB base colour)."""
    r, g, b = _hash_rgb(object_type, 7)
    return (64 + r // 2, 64 + g // 2, 64 + b // 2)
