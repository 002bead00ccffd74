"""Generate ALFRED demonstrations on thor_lite: ``python -m alfred_task.gen --out data/alfred_lite``.

For each demonstration index (seeded by ``(seed, index)`` only, so any subset of indices can
be regenerated identically and runs resume where they stopped):

1. sample a task balanced over the 7 task types (§3.1): type, object (sliced or not),
   receptacle / movable receptacle / lamp and a scene of a matching room type, then scatter
   the objects with ``InitialRandomSpawn`` and pick a random agent start (horizon 30°);
2. record the scene in ALFRED's form (``object_poses``, ``object_toggles``,
   ``dirty_and_empty``, ``init_action``) and restore it from that record, so replays start
   from exactly the state the demonstration was made in;
3. plan and expand with :class:`alfred_task.planning.expert.AlfredExpert`, executing every step
   through ``va_interact`` with its mask (the same path replay and evaluation use);
4. keep it only if the goal holds and a fresh replay of the recorded discrete actions and
   masks also reaches it (ALFRED's replay check);
5. write ``<split>/<task dir>/<trial>/traj_data.json`` with templated language
   (:mod:`alfred_task.gen.language`), optional frames and ResNet features, then the split file.

Floor plans decide the split as in ALFRED: valid_unseen and tests_unseen use ALFRED's unseen
scenes; demonstrations in the other scenes go to train / valid_seen / tests_seen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from common.atomic_io import write_json_atomic
from common.cli import OneLineArgumentParser, UsageError, check_int, check_output_dir, print_error
from common.procs import stop_children_on_signals

from backends import (
    BACKENDS,
    DEFAULT_BACKEND,
    ROOM_TYPE_OFFSETS,
    SCENES_PER_ROOM_TYPE,
    ThorUnavailableError,
    check_thor,
    placement_allowed,
)

from alfred_task import constants as C
from alfred_task.env.environment import AlfredEnv
from alfred_task.planning.expert import AlfredExpert, ExpertError
from alfred_task.env.goal_conditions import goal_satisfied
from alfred_task.data.dataset_meta import record_run
from alfred_task.gen.language import SubgoalContext, make_annotations
from alfred_task.data.masks import compress_mask
from alfred_task.planning import PlanningError

VALID_UNSEEN_SCENES = (10, 219, 308, 424)
TESTS_UNSEEN_SCENES = (9, 29, 215, 226, 315, 325, 404, 425)
#: room types each task type was generated in (§3.1)
TASK_ROOMS = {
    "pick_and_place_simple": ("kitchen", "living", "bedroom", "bathroom"),
    "look_at_obj_in_light": ("living", "bedroom"),
    "pick_clean_then_place_in_recep": ("kitchen", "bathroom"),
    "pick_heat_then_place_in_recep": ("kitchen",),
    "pick_cool_then_place_in_recep": ("kitchen",),
    "pick_two_obj_and_place": ("kitchen", "living", "bedroom", "bathroom"),
    "pick_and_place_with_movable_recep": ("kitchen", "living", "bedroom"),
}
ROOM_SCENES = {
    room: range(ROOM_TYPE_OFFSETS[key] + 1, ROOM_TYPE_OFFSETS[key] + SCENES_PER_ROOM_TYPE + 1)
    for room, key in (
        ("kitchen", "kitchens"),
        ("living", "living_rooms"),
        ("bedroom", "bedrooms"),
        ("bathroom", "bathrooms"),
    )
}
SLICED_PROBABILITY = 0.3
ATTEMPTS_PER_DEMO = 12
SEEN_SPLIT_WEIGHTS = (("train", 0.8), ("valid_seen", 0.1), ("tests_seen", 0.1))
MAX_LOW_ACTIONS = 400


class GenerationError(RuntimeError):
    """A sampled task could not be turned into a valid demonstration (try another)."""


@dataclass(frozen=True)
class TaskSpec:
    task_type: str
    scene_num: int
    object_target: str
    object_sliced: bool
    parent_target: str
    toggle_target: str
    mrecep_target: str
    spawn_seed: int

    @property
    def pddl_params(self) -> Dict[str, Any]:
        return {
            "object_target": self.object_target,
            "object_sliced": self.object_sliced,
            "parent_target": self.parent_target,
            "toggle_target": self.toggle_target,
            "mrecep_target": self.mrecep_target,
        }

    @property
    def task_dir(self) -> str:
        obj = self.object_target + ("Sliced" if self.object_sliced else "")
        last = (
            self.toggle_target if self.task_type == "look_at_obj_in_light" else self.parent_target
        )
        return f"{self.task_type}-{obj}-{self.mrecep_target or 'None'}-{last}-{self.scene_num}"


def split_for_scene(scene_num: int, rng: np.random.Generator) -> str:
    if scene_num in VALID_UNSEEN_SCENES:
        return "valid_unseen"
    if scene_num in TESTS_UNSEEN_SCENES:
        return "tests_unseen"
    names, weights = zip(*SEEN_SPLIT_WEIGHTS)
    return str(rng.choice(names, p=np.array(weights) / sum(weights)))


def scene_pool(task_type: str, split: Optional[str]) -> List[int]:
    """Floor plans a task type may use; with `split`, only that split's floor plans."""
    scenes = [n for room in TASK_ROOMS[task_type] for n in ROOM_SCENES[room]]
    if split is None:
        return scenes
    if split == "valid_unseen":
        return [n for n in scenes if n in VALID_UNSEEN_SCENES]
    if split == "tests_unseen":
        return [n for n in scenes if n in TESTS_UNSEEN_SCENES]
    if split in ("train", "valid_seen", "tests_seen"):
        return [n for n in scenes if n not in VALID_UNSEEN_SCENES and n not in TESTS_UNSEEN_SCENES]
    raise ValueError(f"unknown split {split!r}; expected one of {C.SPLITS}")


def demo_rng(
    seed: int, index: int, attempt: int = 0, split: Optional[str] = None
) -> np.random.Generator:
    digest = hashlib.sha256(f"alfred-gen:{seed}:{split or ''}:{index}:{attempt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def trial_id(seed: int, index: int, split: Optional[str] = None) -> str:
    """ALFRED's ``trial_T<YYYYMMDD_HHMMSS_ffffff>`` shape, derived from (seed, split, index) only."""
    h = int.from_bytes(
        hashlib.sha256(f"trial:{seed}:{split or ''}:{index}".encode()).digest()[:8], "little"
    )
    return (
        f"trial_T2026{1 + h % 12:02d}{1 + (h >> 4) % 28:02d}_{(h >> 9) % 24:02d}{(h >> 14) % 60:02d}"
        f"{(h >> 20) % 60:02d}_{(h >> 26) % 1000000:06d}"
    )


# --- task sampling ---------------------------------------------------------------------------
def _types_present(objects: Sequence[Mapping]) -> Tuple[set, set, set]:
    pick = {o["objectType"] for o in objects if o.get("pickupable") and not o.get("receptacle")}
    mrec = {
        o["objectType"]
        for o in objects
        if o.get("pickupable") and o.get("receptacle") and o["objectType"] in C.MOVABLE_RECEPTACLES
    }
    fixed = {
        o["objectType"]
        for o in objects
        if o.get("receptacle")
        and not o.get("pickupable")
        and o["objectType"] in C.RECEPTACLE_CLASS_SET
    }
    return pick, mrec, fixed


def sample_task(
    task_type: str, objects: Sequence[Mapping], scene_num: int, rng: np.random.Generator
) -> Optional[TaskSpec]:
    """A task of `task_type` that the scene's object types allow, or None."""
    pick, mrec, fixed = _types_present(objects)
    all_types = {o["objectType"] for o in objects}
    has_knife = bool(all_types & C.KNIVES)
    parents = sorted(fixed - {"Toaster"} - set(C.FORBIDDEN_GOAL_RECEPTACLES.get(task_type, ())))
    objs = sorted(pick | (mrec if task_type != "pick_and_place_with_movable_recep" else set()))
    state_table = {
        "pick_clean_then_place_in_recep": C.CLEANABLE,
        "pick_heat_then_place_in_recep": C.HEATABLE,
        "pick_cool_then_place_in_recep": C.COOLABLE,
    }
    need = {
        "pick_clean_then_place_in_recep": "SinkBasin",
        "pick_heat_then_place_in_recep": "Microwave",
        "pick_cool_then_place_in_recep": "Fridge",
    }
    if task_type in need and need[task_type] not in fixed:
        return None
    if task_type in state_table:
        objs = [o for o in objs if o in state_table[task_type]]
    if task_type == "look_at_obj_in_light":
        lamps = sorted(all_types & C.TOGGLEABLE)
        if not lamps or not objs:
            return None
        obj = str(rng.choice(objs))
        return TaskSpec(
            task_type,
            scene_num,
            obj,
            False,
            "",
            str(rng.choice(lamps)),
            "",
            int(rng.integers(2**31)),
        )
    if not objs or not parents:
        return None
    obj = str(rng.choice(objs))
    sliced = bool(obj in C.SLICEABLE and has_knife and rng.random() < SLICED_PROBABILITY)
    goal_obj = obj + "Sliced" if sliced else obj
    mrecep = ""
    if task_type == "pick_and_place_with_movable_recep":
        holders = [m for m in sorted(mrec) if placement_allowed(goal_obj, m)]
        if not holders:
            return None
        mrecep = str(rng.choice(holders))
        parents = [p for p in parents if placement_allowed(mrecep, p)]
    else:
        parents = [
            p
            for p in parents
            if placement_allowed(goal_obj, p) and C.receptacle_accepts(p, goal_obj) is not False
        ]
    if not parents:
        return None
    return TaskSpec(
        task_type,
        scene_num,
        obj,
        sliced,
        str(rng.choice(parents)),
        "",
        mrecep,
        int(rng.integers(2**31)),
    )


# --- one demonstration -------------------------------------------------------------------------
def _scene_record(env: AlfredEnv, spec: TaskSpec, rng: np.random.Generator) -> Dict[str, Any]:
    """Spawn objects, choose the agent start and return ALFRED's ``scene`` dict."""
    c = env.controller
    env.reset(f"FloorPlan{spec.scene_num}")
    present = {o["objectType"] for o in env.last_event.metadata["objects"]}
    dup = []
    if (
        spec.task_type == "pick_two_obj_and_place"
    ):  # ALFRED spawns 2-4 instances of the target class
        dup = [{"objectType": spec.object_target, "count": int(rng.integers(2, 5))}]
    ev = c.step(
        "InitialRandomSpawn",
        randomSeed=spec.spawn_seed,
        forceVisible=False,
        numPlacementAttempts=5,
        placeStationary=True,
        excludedReceptacles=sorted({"Toaster"} & present),
        numDuplicatesOfType=dup,
    )
    if not ev.metadata["lastActionSuccess"]:
        raise GenerationError(f"InitialRandomSpawn failed: {ev.metadata['errorMessage']}")
    objects = ev.metadata["objects"]
    poses = [
        {"objectName": o["name"], "position": dict(o["position"]), "rotation": dict(o["rotation"])}
        for o in objects
        if o.get("pickupable")
    ]
    toggles = []
    if spec.task_type == "look_at_obj_in_light":
        toggles = [{"objectType": spec.toggle_target, "isOn": False}]
    cells = c.step("GetReachablePositions").metadata["actionReturn"]
    start = cells[int(rng.integers(len(cells)))]
    init = {
        "action": "TeleportFull",
        "x": start["x"],
        "y": start["y"],
        "z": start["z"],
        "rotation": int(90 * rng.integers(4)),
        "horizon": 30,
        "rotateOnTeleport": True,
    }
    return {
        "floor_plan": f"FloorPlan{spec.scene_num}",
        "scene_num": spec.scene_num,
        "random_seed": spec.spawn_seed,
        "init_action": init,
        "object_poses": poses,
        "object_toggles": toggles,
        "dirty_and_empty": spec.task_type == "pick_clean_then_place_in_recep",
    }


def _goal_holds(env: AlfredEnv, spec: TaskSpec) -> bool:
    md = env.last_event.metadata
    return goal_satisfied(
        spec.task_type,
        spec.pddl_params,
        md["objects"],
        env.cleaned_objects,
        env.heated_objects,
        env.cooled_objects,
        md["inventoryObjects"],
    )


def _landmarks(env: AlfredEnv, exclude: Sequence[str], k: int = 3) -> Tuple[str, ...]:
    """Visible object types nearest the agent, nearest first (`exclude`: lower-case class names)."""
    md = env.last_event.metadata
    a = md["agent"]["position"]
    skip = {e.lower() for e in exclude} | {"floor", "wall"}
    vis = [o for o in md["objects"] if o.get("visible") and o["objectType"].lower() not in skip]
    vis.sort(
        key=lambda o: (
            (o["position"]["x"] - a["x"]) ** 2 + (o["position"]["z"] - a["z"]) ** 2,
            o["objectId"],
        )
    )
    out: List[str] = []
    for o in vis:
        if o["objectType"] not in out:
            out.append(o["objectType"])
        if len(out) == k:
            break
    return tuple(out)


def run_expert(
    env: AlfredEnv,
    spec: TaskSpec,
    frames: Optional[List[np.ndarray]] = None,
    planner: str = "fast_downward",
) -> Tuple[List[dict], List[dict], List[SubgoalContext]]:
    """Execute the expert from the env's current state: (high_pddl, low_actions, contexts)."""
    expert = AlfredExpert(env, spec.task_type, spec.pddl_params, planner=planner)
    low: List[dict] = []
    nav: Dict[int, List[str]] = {}
    where: Dict[int, Optional[str]] = {}
    landmarks: Dict[int, Tuple[str, ...]] = {}
    while True:
        if frames is not None:
            frames.append(env.last_event.frame)
        act = expert.next_action()
        if act.is_stop:
            break
        if len(low) >= MAX_LOW_ACTIONS:
            raise GenerationError(f"more than {MAX_LOW_ACTIONS} low-level actions")
        if act.action == "PickupObject" and act.high_idx not in where:
            meta = next(
                (o for o in env.last_event.metadata["objects"] if o["objectId"] == act.object_id),
                None,
            )
            parents = [
                p for p in (meta or {}).get("parentReceptacles") or [] if not p.startswith("Floor|")
            ]
            where[act.high_idx] = parents[0].split("|")[0] if parents else None
        ok, _, target, err, api = env.va_interact(act.action, act.mask)
        if not ok:
            raise GenerationError(f"expert step {act.action} on {act.object_id} failed: {err}")
        args: Dict[str, Any] = {}
        if act.mask is not None:
            args = _mask_args(act.mask)
        low.append(
            {
                "api_action": api,
                "discrete_action": {"action": act.action, "args": args},
                "high_idx": act.high_idx,
            }
        )
        if act.action in C.NAV_ACTION_SET:
            nav.setdefault(act.high_idx, []).append(act.action)
            goto = expert.plan[act.high_idx]
            landmarks[act.high_idx] = _landmarks(env, goto.args)
    if expert.replans != 1:
        raise GenerationError("the expert had to replan; demonstrations must follow one plan")
    high = expert.high_pddl()
    contexts = [
        SubgoalContext(i, tuple(nav.get(i, ())), landmarks.get(i, ()), where.get(i))
        for i, h in enumerate(high)
        if h["discrete_action"]["action"] != "NoOp"
    ]
    return high, low, contexts


def _mask_args(mask: np.ndarray) -> Dict[str, Any]:
    rows, cols = np.nonzero(mask)
    r0, r1, c0, c1 = int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())
    cy, cx = (r0 + r1) // 2, (c0 + c1) // 2
    if not mask[cy, cx]:
        j = int(np.argmin((rows - cy) ** 2 + (cols - cx) ** 2))
        cy, cx = int(rows[j]), int(cols[j])
    # THOR's instance_detections2D rows are one more than the mask's (mask_fixture_expectations.json)
    return {"bbox": [c0, r0 + 1, c1, r1 + 1], "point": [cx, cy], "mask": compress_mask(mask)}


def replay(env: AlfredEnv, traj: Mapping) -> Tuple[bool, int]:
    """Replay recorded discrete actions and masks through va_interact: (goal reached, steps ok)."""
    from alfred_task.data.masks import decompress_mask

    env.init_episode(traj)
    n_ok = 0
    for la in traj["plan"]["low_actions"]:
        d = la["discrete_action"]
        mask = decompress_mask(d["args"]["mask"]) if d["args"].get("mask") else None
        ok = env.va_interact(d["action"], mask)[0]
        if not ok:
            return False, n_ok
        n_ok += 1
    md = env.last_event.metadata
    return goal_satisfied(
        traj["task_type"],
        traj["pddl_params"],
        md["objects"],
        env.cleaned_objects,
        env.heated_objects,
        env.cooled_objects,
        md["inventoryObjects"],
    ), n_ok


def generate_one(
    env: AlfredEnv,
    seed: int,
    index: int,
    want_frames: bool = False,
    planner: str = "fast_downward",
    split: Optional[str] = None,
) -> Tuple[str, Dict[str, Any], Optional[List[np.ndarray]]]:
    """(split, traj_data dict, frames) of demonstration `index`; raises GenerationError."""
    task_type = C.TASK_TYPES[_balanced_type(seed, index)]
    last = "no attempt"
    for attempt in range(ATTEMPTS_PER_DEMO):
        rng = demo_rng(seed, index, attempt, split)
        if split is None:  # room type first, then a floor plan of that room type (as ALFRED)
            rooms = TASK_ROOMS[task_type]
            scene_num = int(rng.choice(list(ROOM_SCENES[str(rng.choice(rooms))])))
        else:
            scene_num = int(rng.choice(scene_pool(task_type, split)))
        env.reset(f"FloorPlan{scene_num}")
        spec = sample_task(task_type, env.last_event.metadata["objects"], scene_num, rng)
        if spec is None:
            last = f"FloorPlan{scene_num} has no objects for {task_type}"
            continue
        try:
            scene = _scene_record(env, spec, rng)
            traj = {
                "task_id": trial_id(seed, index, split),
                "task_type": spec.task_type,
                "pddl_params": spec.pddl_params,
                "scene": scene,
            }
            env.init_episode(traj)
            if _goal_holds(env, spec):
                raise GenerationError("goal already satisfied at the start")
            frames: Optional[List[np.ndarray]] = [] if want_frames else None
            high, low, contexts = run_expert(env, spec, frames, planner)
            if not _goal_holds(env, spec):
                raise GenerationError("goal not satisfied after the expert's plan")
        except (GenerationError, ExpertError, PlanningError) as e:
            last = f"{spec.task_dir}: {e}"
            continue
        traj["plan"] = {"high_pddl": high, "low_actions": low}
        traj["images"] = _image_entries(low)
        traj["turk_annotations"] = {
            "anns": make_annotations(
                spec.task_type, spec.pddl_params, high, contexts, seed=int(rng.integers(2**31))
            )
        }
        ok, n = replay(env, traj)
        if not ok:
            last = f"{spec.task_dir}: replay check failed after {n} of {len(low)} steps"
            continue
        if split is None:
            split = split_for_scene(scene_num, rng)
        traj["_task_dir"] = spec.task_dir
        return split, traj, frames
    raise GenerationError(
        f"demonstration {index}: no valid {task_type} task in {ATTEMPTS_PER_DEMO} attempts "
        f"(last: {last})"
    )


def _balanced_type(seed: int, index: int) -> int:
    """Each block of 7 consecutive indices covers every task type once, in a seeded order."""
    block = np.random.default_rng(
        int.from_bytes(hashlib.sha256(f"types:{seed}:{index // 7}".encode()).digest()[:8], "little")
    ).permutation(7)
    return int(block[index % 7])


def _image_entries(low: Sequence[Mapping]) -> List[dict]:
    """One frame per low action (the observation before it). As in ALFRED, the final frame is
    written to disk (and featurised as the stop frame) but not listed."""
    return [
        {"high_idx": la["high_idx"], "low_idx": i, "image_name": f"{i:09d}.png"}
        for i, la in enumerate(low)
    ]


# --- writing ------------------------------------------------------------------------------------
def public_view(split: str, traj: Mapping) -> Dict[str, Any]:
    """What the split releases: tests keep only task_id, scene and annotations without votes."""
    traj = {k: v for k, v in traj.items() if not k.startswith("_")}
    if split in C.TEST_SPLITS:
        anns = [
            {"task_desc": a["task_desc"], "high_descs": a["high_descs"]}
            for a in traj["turk_annotations"]["anns"]
        ]
        return {
            "task_id": traj["task_id"],
            "scene": traj["scene"],
            "turk_annotations": {"anns": anns},
        }
    return traj


def rel_task_path(split: str, traj: Mapping) -> str:
    return traj["task_id"] if split in C.TEST_SPLITS else f"{traj['_task_dir']}/{traj['task_id']}"


def write_demo(
    out: Path,
    split: str,
    traj: Mapping,
    frames: Optional[List[np.ndarray]],
    features: Optional[Any] = None,
) -> Path:
    """Write one trajectory directory atomically (temp dir, then rename)."""
    final = out / split / rel_task_path(split, traj)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp_", dir=final.parent))
    try:
        write_json_atomic(
            tmp / "traj_data.json", public_view(split, traj), indent=None, separators=(",", ":")
        )
        if frames is not None:
            import imageio.v3 as iio

            (tmp / "raw_images").mkdir()
            for i, f in enumerate(frames):
                iio.imwrite(tmp / "raw_images" / f"{i:09d}.png", f)
        if features is not None:
            import torch

            torch.save(features, tmp / "feat_conv.pt")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


# --- driver ---------------------------------------------------------------------------------------
_WORKER: Dict[str, Any] = {}


def _worker_init(
    backend: str,
    want_frames: bool,
    features: Optional[str],
    planner: str,
    encoder_seed: int = 0,
    torch_threads: int = 0,
) -> None:
    if torch_threads > 0:  # several workers on few cores: one BLAS thread each, no oversubscription
        import torch

        torch.set_num_threads(torch_threads)
    _WORKER["env"] = AlfredEnv(backend=backend, width=C.SCREEN_WIDTH, height=C.SCREEN_HEIGHT)
    _WORKER["planner"] = planner
    _WORKER["frames"] = want_frames or features is not None
    _WORKER["features"] = None
    if features is not None:
        from alfred_task.data.features import ResnetFeatures, seeded_spec

        _WORKER["features"] = ResnetFeatures(seeded_spec(features, encoder_seed))


def _work(job: Tuple[int, int, str, bool, Optional[str]]) -> Dict[str, Any]:
    seed, index, out, save_frames, want_split = job
    env: AlfredEnv = _WORKER["env"]
    try:
        split, traj, frames = generate_one(
            env, seed, index, _WORKER["frames"], _WORKER["planner"], want_split
        )
    except GenerationError as e:
        return {"index": index, "error": str(e)}
    feats = _WORKER["features"](frames) if _WORKER["features"] is not None else None
    write_demo(Path(out), split, traj, frames if save_frames else None, feats)
    return {
        "index": index,
        "split": split,
        "task": rel_task_path(split, traj),
        "n_anns": len(traj["turk_annotations"]["anns"]),
        "n_low": len(traj["plan"]["low_actions"]),
    }


def _done_marker(out: Path, index: int, split: Optional[str] = None) -> Path:
    return out / ".progress" / (split or "any") / f"{index:06d}.json"


def generate(
    out: Path,
    num: int,
    seed: int = 0,
    workers: int = 1,
    backend: str = DEFAULT_BACKEND,
    save_frames: bool = False,
    features: Optional[str] = None,
    start: int = 0,
    planner: str = "fast_downward",
    split: Optional[str] = None,
    encoder_seed: int = 0,
    torch_threads: int = 1,
) -> Dict[str, Any]:
    """Generate demonstrations [start, start+num) into `out` (resumable) and write splits.json.

    `features`: None (no feat_conv.pt), "imagenet", "random_resnet18" (seeded by
    `encoder_seed`) or a resnet18 state_dict path; recorded in ``dataset_meta.json``.
    `torch_threads`: torch's intra-op threads in each worker, the in-process one included (the
    simulator needs the cores: torch's default of one per core made one in-process worker
    5-10x slower on a loaded 2-core machine).
    """
    from tqdm import tqdm

    out = Path(out)
    if backend == "thor":  # fail here, in seconds, with the reason (no build / display / GPU)
        check_thor({})
    if split is not None:
        scene_pool(C.TASK_TYPES[0], split)  # validates the name before any work
    encoder = _encoder_record(features, encoder_seed)
    record_run(out, split or "any", {"seed": seed, "planner": planner, "backend": backend}, encoder)
    _remove_stale_temp_dirs(out)
    _done_marker(out, 0, split).parent.mkdir(parents=True, exist_ok=True)
    todo = [i for i in range(start, start + num) if not _done_marker(out, i, split).exists()]
    jobs = [(seed, i, str(out), save_frames, split) for i in todo]
    if not jobs:  # everything asked for is finished: no simulator or encoder to start
        return write_splits(out)
    results: List[Dict[str, Any]] = []

    def record(r: Dict[str, Any]) -> None:
        write_json_atomic(_done_marker(out, r["index"], split), r, indent=None)

    restore_threads = None
    if workers <= 1:
        if features is not None:  # only the encoder uses torch; the caller's setting comes back
            import torch

            restore_threads = torch.get_num_threads()
        _worker_init(
            backend,
            save_frames,
            features,
            planner,
            encoder_seed,
            torch_threads if features is not None else 0,
        )
        it = map(_work, jobs)
        pool = None
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # ProcessPoolExecutor, not mp.Pool: a worker that cannot start breaks the pool (an
        # error here) instead of being respawned forever. map() keeps the input order.
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=mp.get_context("forkserver"),
            initializer=_worker_init,
            initargs=(backend, save_frames, features, planner, encoder_seed, torch_threads),
        )
        it = pool.map(_work, jobs)
    try:
        for r in tqdm(it, total=len(jobs), desc="demonstrations", unit="demo"):
            record(r)
            results.append(r)
    except Exception as e:
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(e, BrokenProcessPool):
            raise RuntimeError(
                f"a generation worker died or could not start its simulator: {e}"
            ) from None
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if restore_threads is not None:
            import torch

            torch.set_num_threads(restore_threads)
    return write_splits(out)


def _encoder_record(features: Optional[str], encoder_seed: int) -> Optional[Dict[str, Any]]:
    """The encoder's ``describe()`` record; fails fast (FileNotFoundError) on missing weights."""
    if features is None:
        return None
    from alfred_task.data.features import ResnetFeatures, check_encoder, seeded_spec

    spec = seeded_spec(features, encoder_seed)
    check_encoder(spec)
    return ResnetFeatures(spec).describe()


def _remove_stale_temp_dirs(out: Path) -> None:
    """Trajectory folders of a killed run (``.tmp_*`` next to the final ones) never became
    visible; remove them so the dataset holds finished demonstrations only."""
    for split in C.SPLITS:
        for tmp in (out / split).glob("**/.tmp_*"):
            shutil.rmtree(tmp, ignore_errors=True)


def write_splits(out: Path) -> Dict[str, Any]:
    """splits.json (oct21 form: one entry per annotation) from every finished demonstration."""
    splits: Dict[str, List[dict]] = {s: [] for s in C.SPLITS}
    failed = 0
    for m in sorted((out / ".progress").glob("*/*.json")):
        r = json.loads(m.read_text())
        if "error" in r:
            failed += 1
            continue
        for k in range(r["n_anns"]):
            splits[r["split"]].append({"repeat_idx": k, "task": r["task"]})
    write_json_atomic(out / "splits.json", splits, indent=2, sort_keys=False)
    return {"splits": {k: len(v) for k, v in splits.items()}, "failed": failed}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="python -m alfred_task.gen",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--out", type=Path, required=True, help="dataset root (json_2.1.0-style layout)"
    )
    ap.add_argument(
        "--num", type=int, default=70, help="number of demonstration indices to generate"
    )
    ap.add_argument("--start", type=int, default=0, help="first demonstration index")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--split",
        default=None,
        choices=C.SPLITS,
        help="generate only in this split's floor plans (default: any floor plan; the split "
        "follows from it as in ALFRED)",
    )
    ap.add_argument("--workers", type=int, default=max(1, min(os.cpu_count() or 1, 8)))
    ap.add_argument("--backend", default=DEFAULT_BACKEND, choices=BACKENDS)
    ap.add_argument(
        "--planner",
        default="fast_downward",
        choices=("fast_downward", "template"),
        help="high-level planner: Fast Downward on the PDDL problem (as ALFRED used a real "
        "planner) or the millisecond template planner",
    )
    ap.add_argument("--save-frames", action="store_true", help="write raw_images/*.png")
    ap.add_argument(
        "--features",
        "--visual-encoder",
        dest="features",
        default=None,
        metavar="ENCODER",
        help="write feat_conv.pt with ResNet-18 conv features; ENCODER = 'imagenet' (torchvision's "
        "cached weights; fails at once naming the file when absent), 'random_resnet18' (seeded "
        "by --encoder-seed) or a path to a resnet18 state_dict; recorded in dataset_meta.json",
    )
    ap.add_argument(
        "--encoder-seed", type=int, default=0, help="seed of the random_resnet18 encoder"
    )
    ap.add_argument(
        "--torch-threads", type=int, default=1, help="torch intra-op threads per worker (default 1)"
    )
    args = ap.parse_args(argv)
    try:
        check_int("--num", args.num, 1)
        check_int("--start", args.start, 0)
        check_int("--workers", args.workers, 1)
        check_int("--torch-threads", args.torch_threads, 1)
        check_output_dir("--out", args.out)
        if args.features is not None:
            from alfred_task.data.features import check_encoder, seeded_spec

            check_encoder(seeded_spec(args.features, args.encoder_seed))
    except (UsageError, FileNotFoundError, ValueError) as e:
        return print_error(ap.prog, e)
    try:
        with stop_children_on_signals(ap.prog):
            summary = generate(
                args.out,
                args.num,
                args.seed,
                args.workers,
                args.backend,
                args.save_frames,
                args.features,
                args.start,
                args.planner,
                args.split,
                args.encoder_seed,
                args.torch_threads,
            )
    except (ThorUnavailableError, RuntimeError, FileNotFoundError, ValueError) as e:
        return print_error(ap.prog, e)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
