"""The ``traj_data.json`` schema (reference §2.3, §2.4) as dataclasses with validation.

Every object keeps the keys it does not model in an ``extra`` dict, so `TrajData.to_dict()`
reproduces the input field by field, in ALFRED's key names. Train/valid files have
``task_id, task_type, pddl_params, scene, plan, images, turk_annotations``; test files have
only ``task_id, scene, turk_annotations`` (no plan, and annotations without
``votes``/``assignment_id``). Fields absent from the input stay absent on output (``None``
in the dataclasses).

Errors are `TrajDataError` (a ValueError) whose message names the file and the field path,
e.g. ``.../traj_data.json: plan.low_actions[3].discrete_action.action: unknown action 'Jump'``.
Reading and writing files is :mod:`alfred_task.data.traj_data`.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from alfred_task import constants as C
from alfred_task.data.masks import decompress_mask


class TrajDataError(ValueError):
    """Invalid traj_data.json / split file; the message names the file and the field."""

    def __init__(self, source: str | os.PathLike | None, field_path: str, problem: str):
        self.source = str(source) if source is not None else "<traj_data>"
        self.field = field_path
        self.problem = problem
        super().__init__(f"{self.source}: {field_path}: {problem}")


# ---------------------------------------------------------------------------
# small validation helpers
# ---------------------------------------------------------------------------
class _V:
    """Validation context: knows the source file for error messages."""

    def __init__(self, source):
        self.source = source

    def err(self, path: str, problem: str) -> TrajDataError:
        return TrajDataError(self.source, path, problem)

    def dict_(self, d, path: str) -> dict:
        if not isinstance(d, dict):
            raise self.err(path, f"expected an object, got {type(d).__name__}")
        return d

    def req(self, d: dict, key: str, path: str):
        if key not in d:
            where = f"{path}.{key}" if path else key
            raise self.err(where, "required field is missing")
        return d[key]

    def typed(self, value, types, path: str, what: str):
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.err(path, f"expected {what}, got bool")
        if not isinstance(value, types):
            raise self.err(path, f"expected {what}, got {type(value).__name__}")
        return value

    def str_(self, d, key, path):
        return self.typed(self.req(d, key, path), str, _j(path, key), "a string")

    def int_(self, d, key, path):
        return self.typed(self.req(d, key, path), int, _j(path, key), "an integer")

    def bool_(self, d, key, path):
        return self.typed(self.req(d, key, path), bool, _j(path, key), "a boolean")

    def num(self, d, key, path):
        x = self.typed(self.req(d, key, path), (int, float), _j(path, key), "a number")
        if not math.isfinite(x):  # Python's json reads NaN/Infinity; a pose must not hold them
            raise self.err(_j(path, key), f"must be finite (got {x!r})")
        return x

    def list_(self, d, key, path):
        return self.typed(self.req(d, key, path), list, _j(path, key), "a list")


def _j(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _extra(d: dict, known) -> dict:
    return {k: v for k, v in d.items() if k not in known}


def _merge(known: dict, extra: dict) -> dict:
    out = dict(extra)
    out.update(known)
    return out


# ---------------------------------------------------------------------------
# dataclasses
# ---------------------------------------------------------------------------
@dataclass
class PddlParams:
    object_target: str
    object_sliced: bool
    parent_target: str
    toggle_target: str
    mrecep_target: str
    extra: dict = field(default_factory=dict)

    KEYS = ("object_target", "object_sliced", "parent_target", "toggle_target", "mrecep_target")

    @property
    def goal_object(self) -> str:
        """Target object class as evaluated (§3.6): object_target + 'Sliced' if object_sliced."""
        return self.object_target + ("Sliced" if self.object_sliced else "")

    @classmethod
    def from_dict(cls, d, v: _V, path="pddl_params") -> "PddlParams":
        v.dict_(d, path)
        return cls(
            object_target=v.str_(d, "object_target", path),
            object_sliced=v.bool_(d, "object_sliced", path),
            parent_target=v.str_(d, "parent_target", path),
            toggle_target=v.str_(d, "toggle_target", path),
            mrecep_target=v.str_(d, "mrecep_target", path),
            extra=_extra(d, cls.KEYS),
        )

    def to_dict(self) -> dict:
        return _merge({k: getattr(self, k) for k in self.KEYS}, self.extra)


@dataclass
class ObjectPose:
    objectName: str
    position: dict
    rotation: dict
    extra: dict = field(default_factory=dict)

    KEYS = ("objectName", "position", "rotation")

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "ObjectPose":
        v.dict_(d, path)
        pos = v.dict_(v.req(d, "position", path), f"{path}.position")
        rot = v.dict_(v.req(d, "rotation", path), f"{path}.rotation")
        for name, vec in (("position", pos), ("rotation", rot)):
            for axis in "xyz":
                v.num(vec, axis, f"{path}.{name}")
        return cls(v.str_(d, "objectName", path), pos, rot, _extra(d, cls.KEYS))

    def to_dict(self) -> dict:
        return _merge({"objectName": self.objectName, "position": self.position, "rotation": self.rotation}, self.extra)


@dataclass
class ObjectToggle:
    objectType: str
    isOn: bool
    extra: dict = field(default_factory=dict)

    KEYS = ("objectType", "isOn")

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "ObjectToggle":
        v.dict_(d, path)
        return cls(v.str_(d, "objectType", path), v.bool_(d, "isOn", path), _extra(d, cls.KEYS))

    def to_dict(self) -> dict:
        return _merge({"objectType": self.objectType, "isOn": self.isOn}, self.extra)


@dataclass
class Scene:
    floor_plan: str
    scene_num: int
    init_action: dict  # TeleportFull kwargs: action, x, y, z, rotation, horizon, rotateOnTeleport
    object_poses: list[ObjectPose]
    object_toggles: list[ObjectToggle]
    dirty_and_empty: bool
    random_seed: int | None = None  # not needed for replay; absent -> omitted on write
    extra: dict = field(default_factory=dict)

    KEYS = ("floor_plan", "scene_num", "init_action", "object_poses", "object_toggles", "dirty_and_empty", "random_seed")

    @classmethod
    def from_dict(cls, d, v: _V, path="scene") -> "Scene":
        v.dict_(d, path)
        floor_plan = v.str_(d, "floor_plan", path)
        scene_num = v.int_(d, "scene_num", path)
        if floor_plan != f"FloorPlan{scene_num}":
            raise v.err(f"{path}.floor_plan", f"{floor_plan!r} does not match scene_num {scene_num}")
        ia_path = f"{path}.init_action"
        init_action = v.dict_(v.req(d, "init_action", path), ia_path)
        v.str_(init_action, "action", ia_path)
        for k in ("x", "y", "z", "rotation", "horizon"):
            v.num(init_action, k, ia_path)
        poses = v.list_(d, "object_poses", path)
        toggles = v.list_(d, "object_toggles", path)
        seed = d.get("random_seed")
        if seed is not None:
            v.typed(seed, int, f"{path}.random_seed", "an integer")
        return cls(
            floor_plan=floor_plan,
            scene_num=scene_num,
            init_action=init_action,
            object_poses=[ObjectPose.from_dict(p, v, f"{path}.object_poses[{i}]") for i, p in enumerate(poses)],
            object_toggles=[ObjectToggle.from_dict(t, v, f"{path}.object_toggles[{i}]") for i, t in enumerate(toggles)],
            dirty_and_empty=v.bool_(d, "dirty_and_empty", path),
            random_seed=seed,
            extra=_extra(d, cls.KEYS),
        )

    def to_dict(self) -> dict:
        out = {
            "floor_plan": self.floor_plan,
            "scene_num": self.scene_num,
            "init_action": self.init_action,
            "object_poses": [p.to_dict() for p in self.object_poses],
            "object_toggles": [t.to_dict() for t in self.object_toggles],
            "dirty_and_empty": self.dirty_and_empty,
        }
        if self.random_seed is not None:
            out["random_seed"] = self.random_seed
        return _merge(out, self.extra)


@dataclass
class DiscreteAction:
    action: str
    args: Any  # list[str] for high_pddl; dict ({} or {bbox, point, mask}) for low_actions
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return _merge({"action": self.action, "args": self.args}, self.extra)


@dataclass
class HighPddl:
    high_idx: int
    discrete_action: DiscreteAction  # action in constants.HIGH_ACTIONS, args = lower-case class names
    planner_action: dict
    extra: dict = field(default_factory=dict)

    KEYS = ("high_idx", "discrete_action", "planner_action")

    @property
    def action(self) -> str:
        return self.discrete_action.action

    @property
    def is_end(self) -> bool:
        return self.planner_action.get("action") == C.END_PLANNER_ACTION or self.action == C.END_HIGH_ACTION

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "HighPddl":
        v.dict_(d, path)
        dpath = f"{path}.discrete_action"
        da = v.dict_(v.req(d, "discrete_action", path), dpath)
        action = v.str_(da, "action", dpath)
        if action not in C.HIGH_ACTION_SET:
            raise v.err(f"{dpath}.action", f"unknown high-level action {action!r}")
        args = v.list_(da, "args", dpath)
        for i, a in enumerate(args):
            v.typed(a, str, f"{dpath}.args[{i}]", "a string")
        pa = v.dict_(v.req(d, "planner_action", path), f"{path}.planner_action")
        v.str_(pa, "action", f"{path}.planner_action")
        return cls(
            high_idx=v.int_(d, "high_idx", path),
            discrete_action=DiscreteAction(action, args, _extra(da, ("action", "args"))),
            planner_action=pa,
            extra=_extra(d, cls.KEYS),
        )

    def to_dict(self) -> dict:
        return _merge(
            {"high_idx": self.high_idx, "discrete_action": self.discrete_action.to_dict(), "planner_action": self.planner_action},
            self.extra,
        )


@dataclass
class LowAction:
    high_idx: int
    api_action: dict  # THOR command as executed
    discrete_action: DiscreteAction  # action in constants.LOW_ACTIONS
    extra: dict = field(default_factory=dict)

    KEYS = ("high_idx", "api_action", "discrete_action")

    @property
    def action(self) -> str:
        return self.discrete_action.action

    @property
    def is_interaction(self) -> bool:
        return self.action in C.INTERACT_ACTION_SET

    @property
    def mask_rle(self) -> list | None:
        return self.discrete_action.args.get("mask") if self.is_interaction else None

    @property
    def bbox(self) -> list | None:
        return self.discrete_action.args.get("bbox") if self.is_interaction else None

    @property
    def point(self) -> list | None:
        return self.discrete_action.args.get("point") if self.is_interaction else None

    def mask(self) -> np.ndarray | None:
        """Decoded 300x300 boolean interaction mask (None for navigation actions)."""
        rle = self.mask_rle
        return None if rle is None else decompress_mask(rle)

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "LowAction":
        v.dict_(d, path)
        dpath = f"{path}.discrete_action"
        da = v.dict_(v.req(d, "discrete_action", path), dpath)
        action = v.str_(da, "action", dpath)
        if action not in C.LOW_ACTION_SET:
            raise v.err(f"{dpath}.action", f"unknown low-level action {action!r} (expected one of {list(C.LOW_ACTIONS)})")
        args = v.dict_(v.req(da, "args", dpath), f"{dpath}.args")
        if action in C.INTERACT_ACTION_SET:
            apath = f"{dpath}.args"
            mask = v.req(args, "mask", apath)
            if not isinstance(mask, list):
                raise v.err(f"{apath}.mask", f"expected an RLE list, got {type(mask).__name__}")
            for key, n in (("bbox", 4), ("point", 2)):
                if key in args:
                    val = args[key]
                    if not (isinstance(val, list) and len(val) == n and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in val)):
                        raise v.err(f"{apath}.{key}", f"expected {n} numbers, got {val!r}")
        api = v.dict_(v.req(d, "api_action", path), f"{path}.api_action")
        v.str_(api, "action", f"{path}.api_action")
        return cls(
            high_idx=v.int_(d, "high_idx", path),
            api_action=api,
            discrete_action=DiscreteAction(action, args, _extra(da, ("action", "args"))),
            extra=_extra(d, cls.KEYS),
        )

    def to_dict(self) -> dict:
        return _merge(
            {"high_idx": self.high_idx, "api_action": self.api_action, "discrete_action": self.discrete_action.to_dict()},
            self.extra,
        )


@dataclass
class Plan:
    high_pddl: list[HighPddl]
    low_actions: list[LowAction]
    extra: dict = field(default_factory=dict)

    KEYS = ("high_pddl", "low_actions")

    @property
    def has_end(self) -> bool:
        """Whether the last subgoal is the End/NoOp one (missing in ~1,150 real trajectories)."""
        return bool(self.high_pddl) and self.high_pddl[-1].is_end

    @property
    def num_subgoals(self) -> int:
        """Number of subgoals excluding a trailing End (§4 `num_subgoals`)."""
        return len(self.high_pddl) - (1 if self.has_end else 0)

    @classmethod
    def from_dict(cls, d, v: _V, path="plan") -> "Plan":
        v.dict_(d, path)
        hp = v.list_(d, "high_pddl", path)
        la = v.list_(d, "low_actions", path)
        if not hp:
            raise v.err(f"{path}.high_pddl", "must not be empty")
        high = [HighPddl.from_dict(h, v, f"{path}.high_pddl[{i}]") for i, h in enumerate(hp)]
        for i, h in enumerate(high):
            if h.high_idx != i:
                raise v.err(f"{path}.high_pddl[{i}].high_idx", f"is {h.high_idx}, expected {i}")
        low = [LowAction.from_dict(a, v, f"{path}.low_actions[{i}]") for i, a in enumerate(la)]
        prev = 0
        for i, a in enumerate(low):
            if not 0 <= a.high_idx < len(high):
                raise v.err(f"{path}.low_actions[{i}].high_idx", f"{a.high_idx} is not a high_pddl index (0..{len(high) - 1})")
            if a.high_idx < prev:
                raise v.err(f"{path}.low_actions[{i}].high_idx", f"{a.high_idx} decreases (previous {prev})")
            prev = a.high_idx
        return cls(high, low, _extra(d, cls.KEYS))

    def to_dict(self) -> dict:
        return _merge(
            {"high_pddl": [h.to_dict() for h in self.high_pddl], "low_actions": [a.to_dict() for a in self.low_actions]},
            self.extra,
        )


@dataclass
class ImageEntry:
    low_idx: int
    high_idx: int
    image_name: str
    extra: dict = field(default_factory=dict)

    KEYS = ("low_idx", "high_idx", "image_name")

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "ImageEntry":
        v.dict_(d, path)
        return cls(v.int_(d, "low_idx", path), v.int_(d, "high_idx", path), v.str_(d, "image_name", path), _extra(d, cls.KEYS))

    def to_dict(self) -> dict:
        return _merge({"low_idx": self.low_idx, "high_idx": self.high_idx, "image_name": self.image_name}, self.extra)


@dataclass
class Annotation:
    task_desc: str
    high_descs: list[str]
    assignment_id: str | None = None  # absent in test splits
    votes: list[int] | None = None  # absent in test splits
    extra: dict = field(default_factory=dict)

    KEYS = ("task_desc", "high_descs", "assignment_id", "votes")

    @classmethod
    def from_dict(cls, d, v: _V, path) -> "Annotation":
        v.dict_(d, path)
        descs = v.list_(d, "high_descs", path)
        for i, s in enumerate(descs):
            v.typed(s, str, f"{path}.high_descs[{i}]", "a string")
        aid = d.get("assignment_id")
        if aid is not None:
            v.typed(aid, str, f"{path}.assignment_id", "a string")
        votes = d.get("votes")
        if votes is not None:
            v.typed(votes, list, f"{path}.votes", "a list")
            for i, x in enumerate(votes):
                v.typed(x, int, f"{path}.votes[{i}]", "an integer")
        return cls(v.str_(d, "task_desc", path), descs, aid, votes, _extra(d, cls.KEYS))

    def to_dict(self) -> dict:
        out = {"task_desc": self.task_desc, "high_descs": self.high_descs}
        if self.assignment_id is not None:
            out["assignment_id"] = self.assignment_id
        if self.votes is not None:
            out["votes"] = self.votes
        return _merge(out, self.extra)


@dataclass
class TurkAnnotations:
    anns: list[Annotation]
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d, v: _V, path="turk_annotations") -> "TurkAnnotations":
        v.dict_(d, path)
        anns = v.list_(d, "anns", path)
        if not anns:
            raise v.err(f"{path}.anns", "must hold at least one annotation")
        return cls([Annotation.from_dict(a, v, f"{path}.anns[{i}]") for i, a in enumerate(anns)], _extra(d, ("anns",)))

    def to_dict(self) -> dict:
        return _merge({"anns": [a.to_dict() for a in self.anns]}, self.extra)


_TOP_KEYS = ("task_id", "task_type", "pddl_params", "scene", "plan", "images", "turk_annotations")
#: keys that train/valid files have and test files lack (§2.3)
_PLAN_GROUP = ("task_type", "pddl_params", "plan", "images")


@dataclass
class TrajData:
    task_id: str
    scene: Scene
    turk_annotations: TurkAnnotations
    task_type: str | None = None  # None in test splits
    pddl_params: PddlParams | None = None
    plan: Plan | None = None
    images: list[ImageEntry] | None = None
    extra: dict = field(default_factory=dict)  # e.g. pp fields (root, split, repeat_idx, ann, num)
    source: str | None = field(default=None, compare=False)  # path it was loaded from

    # -- convenience -----------------------------------------------------
    @property
    def is_test(self) -> bool:
        """True for test-split files (no plan / task_type / pddl_params / images)."""
        return self.plan is None

    @property
    def anns(self) -> list[Annotation]:
        return self.turk_annotations.anns

    @property
    def high_pddl(self) -> list[HighPddl]:
        return [] if self.plan is None else self.plan.high_pddl

    @property
    def low_actions(self) -> list[LowAction]:
        return [] if self.plan is None else self.plan.low_actions

    @property
    def floor_plan(self) -> str:
        return self.scene.floor_plan

    @property
    def scene_num(self) -> int:
        return self.scene.scene_num

    def iter_masks(self) -> Iterator[tuple[int, LowAction, np.ndarray]]:
        """(low_idx, low_action, decoded mask) for every interaction step."""
        for i, a in enumerate(self.low_actions):
            if a.is_interaction:
                yield i, a, a.mask()

    # -- conversion --------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict, source: str | os.PathLike | None = None) -> "TrajData":
        v = _V(source)
        v.dict_(d, "<root>")
        task_id = v.str_(d, "task_id", "")
        scene = Scene.from_dict(v.req(d, "scene", ""), v)
        turk = TurkAnnotations.from_dict(v.req(d, "turk_annotations", ""), v)
        present = [k for k in _PLAN_GROUP if k in d]
        if present and len(present) != len(_PLAN_GROUP):
            missing = [k for k in _PLAN_GROUP if k not in d][0]
            raise v.err(missing, f"required field is missing (train/valid files need all of {list(_PLAN_GROUP)}; "
                                 f"test files have none)")
        task_type = pddl = plan = images = None
        if present:
            task_type = v.str_(d, "task_type", "")
            if task_type not in C.TASK_TYPE_SET:
                raise v.err("task_type", f"unknown task type {task_type!r} (expected one of {list(C.TASK_TYPES)})")
            pddl = PddlParams.from_dict(d["pddl_params"], v)
            plan = Plan.from_dict(d["plan"], v)
            imgs = v.list_(d, "images", "")
            images = [ImageEntry.from_dict(x, v, f"images[{i}]") for i, x in enumerate(imgs)]
            for i, im in enumerate(images):
                if not 0 <= im.low_idx < max(len(plan.low_actions), 1):
                    raise v.err(f"images[{i}].low_idx", f"{im.low_idx} is not a low_actions index")
        return cls(
            task_id=task_id,
            scene=scene,
            turk_annotations=turk,
            task_type=task_type,
            pddl_params=pddl,
            plan=plan,
            images=images,
            extra=_extra(d, _TOP_KEYS),
            source=None if source is None else str(source),
        )

    def to_dict(self) -> dict:
        """Plain JSON-able dict in ALFRED's key names (absent optional fields stay absent)."""
        out: dict[str, Any] = {"task_id": self.task_id, "scene": self.scene.to_dict(), "turk_annotations": self.turk_annotations.to_dict()}
        if self.task_type is not None:
            out["task_type"] = self.task_type
        if self.pddl_params is not None:
            out["pddl_params"] = self.pddl_params.to_dict()
        if self.plan is not None:
            out["plan"] = self.plan.to_dict()
        if self.images is not None:
            out["images"] = [im.to_dict() for im in self.images]
        return _merge(out, self.extra)


__all__ = [
    "TrajDataError",
    "TrajData",
    "PddlParams",
    "Scene",
    "ObjectPose",
    "ObjectToggle",
    "Plan",
    "HighPddl",
    "LowAction",
    "DiscreteAction",
    "ImageEntry",
    "Annotation",
    "TurkAnnotations",
]
