"""Generate rearrangement episodes in the official 2023 schema on thor_lite (§7.3-7.4).

    python -m rearrange.gen --stage val            # 20 scenes x 50 episodes
    python -m rearrange.gen --stage combined       # from train/val/test files

Each scene is seeded from the stage seed, and each try from (scene, index, try, offset), so the
output is identical for every run and every number of worker processes. Scenes run in a
process pool with a progress bar; results are written atomically at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import multiprocessing as mp
import random
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tqdm import tqdm

from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_int,
    check_output_file,
    report_usage_errors,
)
from common.procs import ignore_sigint, stop_children_on_signals

from .constants import (
    IOU_THRESHOLD,
    OBJECT_TYPES_THAT_CAN_HAVE_IDENTICAL_MESHES,
    OBJECT_TYPES_TO_NOT_MOVE,
    OPENABLE_OBJECTS,
    OPENNESS_THRESHOLD,
    scenes_for_stage,
)
from .dataset import GENERATED_STAGES, DatasetError, dataset_path, load_dataset, save_dataset

log = logging.getLogger(__name__)

STAGE_SEEDS = {"train": 1329328939, "val": 3348958620, "test": 289123396, "debug": 239084231}
EPISODES_PER_SCENE = 50
MAX_TRIES = 300


def _md5_int(s: str) -> int:
    return int(hashlib.md5(s.encode()).hexdigest(), 16) % (2**32)


def stage_seed(stage: str) -> int:
    r = random.Random(STAGE_SEEDS[stage])
    return r.randint(0, 10**8 - 1)


def _irs(
    controller,
    seed: int,
    excluded_ids: Sequence[str] = (),
    receptacle_ids: Optional[Sequence[str]] = None,
) -> bool:
    kwargs = {} if receptacle_ids is None else {"receptacleObjectIds": list(receptacle_ids)}
    ev = controller.step(
        "InitialRandomSpawn",
        randomSeed=seed,
        forceVisible=True,
        placeStationary=False,
        excludedReceptacles=["ToiletPaperHanger"],
        excludedObjectIds=list(excluded_ids),
        **kwargs,
    )
    return bool(ev.metadata["lastActionSuccess"])


def _poses(objects: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = [
        {
            "name": o["name"],
            "objectName": o["name"],
            "position": dict(o["position"]),
            "rotation": dict(o["rotation"]),
        }
        for o in objects
        if o["pickupable"] and o["objectType"] not in OBJECT_TYPES_TO_NOT_MOVE
    ]
    return sorted(out, key=lambda p: p["name"])


def _random_openness(rng: random.Random, current: float) -> Optional[float]:
    for _ in range(100):
        v = rng.random()
        if abs(v - current) > OPENNESS_THRESHOLD:
            return round(v, 6)
    return None


class EpisodeGenerator:
    """Builds one scene's 50 episodes with a thor_lite controller (one per worker)."""

    def __init__(self, stage: str, seed: Optional[int] = None) -> None:
        """`seed` replaces the stage's seed (extra episodes of the same scenes, e.g. a curriculum)."""
        from .environment import RearrangeTHOREnvironment

        self.stage = stage
        self.seed = stage_seed(stage) if seed is None else int(seed)
        self.env = RearrangeTHOREnvironment(
            force_cache_reset=True, controller_kwargs={"width": 300, "height": 300}
        )
        self.c = self.env.controller
        self.rejections: "Counter[str]" = Counter()

    def scene_episodes(
        self, scene: str, indices: Optional[Sequence[int]] = None
    ) -> List[Dict[str, Any]]:
        self.c.reset(scene)
        objs = self.c.last_event.metadata["objects"]
        # Only openables an agent can actually reach count (the official generator assumed all can).
        self.openable_names = sorted(
            o["name"]
            for o in objs
            if o["openable"]
            and not o["pickupable"]
            and o["objectType"] in OPENABLE_OBJECTS
            and self.c.step("GetInteractablePoses", objectId=o["objectId"], maxPoses=1).metadata[
                "actionReturn"
            ]
        )
        has_openable = bool(self.openable_names)
        # Spawn only on receptacles an agent can see from somewhere: otherwise most episodes
        # with several moved objects hide one of them and are rejected (thor_lite's visibility
        # is stricter than THOR's in cluttered rooms).
        self.receptacle_ids = sorted(
            o["objectId"]
            for o in objs
            if o["receptacle"]
            and not o["pickupable"]
            and self.c.step("GetInteractablePoses", objectId=o["objectId"], maxPoses=1).metadata[
                "actionReturn"
            ]
        )
        reachable = sorted(
            (
                (p["x"], p["z"])
                for p in self.c.step("GetReachablePositions").metadata["actionReturn"]
            )
        )
        eps = []
        for i in range(EPISODES_PER_SCENE) if indices is None else indices:
            n_open = int(has_openable) * (i % 2)
            n_move = (1 - n_open) + (5 * i) // EPISODES_PER_SCENE
            ep = self._episode(scene, i, n_move, n_open, reachable)
            ep["index"] = i
            eps.append(ep)
        return eps

    def _episode(
        self, scene: str, index: int, n_move: int, n_open: int, reachable
    ) -> Dict[str, Any]:
        offset = 0
        for t in range(MAX_TRIES):
            rng = random.Random(
                _md5_int(f"{scene}|ind_{index}|tries_{t}|counts_{offset}|seed_{self.seed}")
            )
            spec, counts = self._try(
                scene, rng, n_move + offset, n_open, reachable, extra_irs=t >= 30
            )
            if spec is None:
                self.rejections[counts] += 1
                continue
            npos, nopen, energy = counts
            if npos != n_move:
                self.rejections["moved count"] += 1
                offset = max(offset + (1 if npos < n_move else -1), 0)
                continue
            if nopen != n_open or npos + nopen == 0 or energy <= 0 or npos > 5 or nopen > 1:
                self.rejections["open count"] += 1
                continue
            spec.update(
                position_diff_count=npos,
                open_diff_count=nopen,
                pose_diff_energy=energy,
                object_rearrangement_count=n_move + n_open,
            )
            return spec
        raise RuntimeError(
            f"{scene} episode {index}: no valid episode after {MAX_TRIES} tries "
            f"(rejections: {dict(self.rejections)})"
        )

    def _try(
        self, scene: str, rng: random.Random, n_move: int, n_open: int, reachable, extra_irs: bool
    ):
        """One attempt: (spec, (moved, opened, energy)) or (None, why it was rejected)."""
        try:
            pos, rot, start_seed, target_seed = self._start_scene(scene, rng, reachable)
            openable_data = self._open_start(rng, n_open)
            moved, fixed = self._choose_moved(rng, n_move)
            if extra_irs:
                _irs(
                    self.c,
                    start_seed + 1,
                    excluded_ids=[o["objectId"] for o in moved],
                    receptacle_ids=self.receptacle_ids,
                )
            starting = _poses(self.c.last_event.metadata["objects"])
            target = self._target_state(rng, target_seed, fixed, openable_data)
            if [p["name"] for p in target] != [p["name"] for p in starting]:
                raise _Rejected("object set changed")
            spec = {
                "agent_position": pos,
                "agent_rotation": rot,
                "openable_data": openable_data,
                "starting_poses": starting,
                "target_poses": target,
            }
            return spec, self._validate(scene, spec)
        except _Rejected as r:
            return None, r.reason

    def _start_scene(self, scene: str, rng: random.Random, reachable):
        """Agent pose and spawn seeds drawn, duplicates of identical meshes removed, start spawn."""
        c = self.c
        x, z = rng.choice(reachable)
        rot = rng.choice(range(0, 360, 30))
        start_seed, target_seed = rng.randint(0, 10**7 - 1), rng.randint(0, 10**7 - 1)
        c.reset(scene)
        y = c.last_event.metadata["agent"]["position"]["y"]
        pos = {"x": x, "y": y, "z": z}
        c.step(
            "TeleportFull",
            position=pos,
            rotation={"x": 0, "y": rot, "z": 0},
            horizon=0,
            standing=True,
            forceAction=True,
        )
        objs = c.last_event.metadata["objects"]
        for t in OBJECT_TYPES_THAT_CAN_HAVE_IDENTICAL_MESHES:
            same = sorted((o["objectId"] for o in objs if o["objectType"] == t))
            if len(same) > 1:
                keep = rng.choice(same)
                c.step("RemoveFromScene", objectIds=[s for s in same if s != keep])
        c.step("MakeAllObjectsUnbreakable")
        if not _irs(c, start_seed, receptacle_ids=self.receptacle_ids):
            raise _Rejected("start spawn failed")
        if any(o["isBroken"] for o in c.last_event.metadata["objects"]):
            raise _Rejected("broken after start spawn")
        return pos, rot, start_seed, target_seed

    def _open_start(self, rng: random.Random, n_open: int) -> List[Dict[str, Any]]:
        """Choose `n_open` openables that open and close, and give each a start openness."""
        c = self.c
        objs = c.last_event.metadata["objects"]
        openables = sorted(
            (o for o in objs if o["name"] in self.openable_names), key=lambda o: o["name"]
        )
        rng.shuffle(openables)
        chosen = []
        for o in openables:
            if len(chosen) >= n_open:
                break
            a = c.step("OpenObject", objectId=o["objectId"], openness=1.0, forceAction=True)
            b = c.step("CloseObject", objectId=o["objectId"], forceAction=True)
            if a.metadata["lastActionSuccess"] and b.metadata["lastActionSuccess"]:
                chosen.append(o)
        if len(chosen) < n_open:
            raise _Rejected("no openable opens and closes")
        openable_data = []
        for o in chosen:
            v = _random_openness(rng, 0.0)
            if v is None or not c.step(
                "OpenObject", objectId=o["objectId"], openness=v, forceAction=True
            ):
                raise _Rejected("open failed")
            openable_data.append(
                {
                    "name": o["name"],
                    "objectName": o["name"],
                    "objectId": o["objectId"],
                    "start_openness": v,
                }
            )
        return openable_data

    def _choose_moved(self, rng: random.Random, n_move: int):
        """Split the movable pickupables into the `n_move` to move and the rest to keep."""
        objs = self.c.last_event.metadata["objects"]
        movable = sorted(
            (
                o
                for o in objs
                if o["pickupable"] and o["objectType"] not in OBJECT_TYPES_TO_NOT_MOVE
            ),
            key=lambda o: o["name"],
        )
        if len(movable) < n_move:
            raise _Rejected("too few movable objects")
        rng.shuffle(movable)
        return movable[len(movable) - n_move :], movable[: len(movable) - n_move]

    def _target_state(
        self, rng: random.Random, target_seed: int, fixed, openable_data
    ) -> List[Dict[str, Any]]:
        """Target spawn of the moved objects and target openness; returns the target poses."""
        c = self.c
        not_to_move = [
            o["objectId"]
            for o in c.last_event.metadata["objects"]
            if o["pickupable"] and o["objectType"] in OBJECT_TYPES_TO_NOT_MOVE
        ]
        if not _irs(
            c,
            target_seed,
            excluded_ids=[o["objectId"] for o in fixed] + not_to_move,
            receptacle_ids=self.receptacle_ids,
        ):
            raise _Rejected("target spawn failed")
        for od in openable_data:
            cur = next(o for o in c.last_event.metadata["objects"] if o["name"] == od["name"])
            v = _random_openness(rng, cur["openness"])
            if v is None:
                raise _Rejected("no target openness")
            c.step("CloseObject", objectId=cur["objectId"], forceAction=True)
            c.step("OpenObject", objectId=cur["objectId"], openness=v, forceAction=True)
            od["target_openness"] = v
        objs = c.last_event.metadata["objects"]
        if any(o["isBroken"] for o in objs):
            raise _Rejected("broken after target spawn")
        return _poses(objs)

    def _validate(self, scene: str, spec: Dict[str, Any]) -> Tuple[int, int, float]:
        """Check the episode the way an agent meets it (goal state, then shuffled state)."""
        from .environment import PoseMismatchError, RearrangeTaskSpec
        from .pose_metrics import compare_poses, pose_difference_energy

        try:
            task_spec = RearrangeTaskSpec(scene=scene, stage=self.stage, **spec)
            self.env.reset(task_spec)
            self.env.shuffle()
        except PoseMismatchError:
            raise _Rejected("reset/shuffle mismatch")
        ips, gps, cps = self.env.poses
        npos = nopen = 0
        energy = 0.0
        for g, i in zip(gps, ips):
            if i["broken"]:
                raise _Rejected("broken at start")
            cmp = compare_poses(g, i)
            d = pose_difference_energy(g, i)
            energy += d
            if cmp["iou"] is not None and cmp["iou"] < IOU_THRESHOLD:
                npos += 1
            open_diff = cmp["openness_diff"]
            if open_diff is not None and open_diff >= OPENNESS_THRESHOLD and not g["pickupable"]:
                nopen += 1
            if d > 0:
                for pose in (i, g):  # the object must be reachable where it is and where it goes
                    if not self.env.interactable_cache.get(
                        scene, pose, self.c, force_cache_refresh=True
                    ):
                        raise _Rejected("changed object unreachable")
        return npos, nopen, float(energy)


class _Rejected(Exception):
    """An attempt that cannot become an episode; `reason` is counted in the rejection stats."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_GEN: Optional[EpisodeGenerator] = None


def _worker_scene(
    args: Tuple[str, str, Optional[Tuple[int, ...]]],
) -> Tuple[str, List[Dict[str, Any]]]:
    global _GEN
    stage, scene, indices = args
    if _GEN is None or _GEN.stage != stage:
        _GEN = EpisodeGenerator(stage)
    return scene, _GEN.scene_episodes(scene, indices)


# The train episodes that the combined split keeps: 2 per difficulty chunk (§7.4).
COMBINED_TRAIN_INDICES = (0, 1, 10, 11, 20, 21, 30, 31, 40, 41)


def generate_stage(
    stage: str,
    out_path: Optional[Path] = None,
    scenes: Optional[Sequence[str]] = None,
    processes: Optional[int] = None,
    indices: Optional[Sequence[int]] = None,
) -> Path:
    """Generate a train/val/test split on thor_lite and write it atomically.

    Every episode depends only on (stage, scene, index), so `indices` selects a subset of a
    split that is identical to the same episodes of the full split.
    """
    if stage not in ("train", "val", "test", "debug"):
        raise ValueError(f"cannot generate stage '{stage}'")
    scenes = list(scenes or scenes_for_stage("train" if stage == "debug" else stage))
    out_path = Path(out_path or dataset_path(stage))
    processes = processes or max(1, min(mp.cpu_count(), len(scenes)))
    jobs = [(stage, s, tuple(indices) if indices is not None else None) for s in scenes]
    results: Dict[str, List[Dict[str, Any]]] = {}
    if processes == 1:
        it = map(_worker_scene, jobs)
        for scene, eps in tqdm(it, total=len(jobs), desc=f"gen {stage}", unit="scene"):
            results[scene] = eps
    else:
        ctx = mp.get_context("forkserver")
        with ctx.Pool(processes, initializer=ignore_sigint) as pool:
            for scene, eps in tqdm(
                pool.imap_unordered(_worker_scene, jobs),
                total=len(jobs),
                desc=f"gen {stage}",
                unit="scene",
            ):
                results[scene] = eps
    ordered = OrderedDict((s, results[s]) for s in scenes)
    save_dataset(ordered, out_path)
    return out_path


def combine(data_dir: Optional[Path] = None, limit: int = 10) -> Path:
    """combined = 10 train episodes per scene (2 per difficulty chunk) + all val + all test."""
    out: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    from .dataset import load_dataset

    for stage in ("train", "val", "test"):
        path = dataset_path(stage, data_dir)
        if stage == "train" and not path.is_file():
            path = dataset_path("train_subset", data_dir)
        data = load_dataset(path, stage=stage)
        for scene, eps in data.items():
            if stage == "train":
                by_index = {e["index"]: e for e in eps}
                keep = [by_index[i] for i in COMBINED_TRAIN_INDICES if i in by_index]
                if len(keep) != len(COMBINED_TRAIN_INDICES):
                    raise ValueError(
                        f"{path}: {scene} lacks some of the train episodes {COMBINED_TRAIN_INDICES}"
                    )
            else:
                keep = eps
                if len(keep) != EPISODES_PER_SCENE:
                    raise ValueError(
                        f"{path}: {scene}: expected {EPISODES_PER_SCENE} episodes, found {len(keep)}"
                    )
            out[scene] = [dict(e, scene=scene, stage=stage) for e in keep]
    path = dataset_path("combined", data_dir)
    save_dataset(out, path)
    return path


def _check_args(args: argparse.Namespace) -> Path:
    """Every user error before any work: processes, scenes, the output path; returns the output."""
    check_int("--processes", args.processes, 1)
    known = set(scenes_for_stage("combined"))
    if args.scenes is not None:
        if args.stage == "combined":
            raise UsageError(
                "--scenes cannot restrict --stage combined (it is made from the whole splits)"
            )
        if not args.scenes:
            raise UsageError("--scenes needs at least one scene name")
        unknown = [s for s in args.scenes if s not in known]
        if unknown:
            raise UsageError(
                f"--scenes: unknown scene {unknown[0]!r} (expected FloorPlan1-30, 201-230, 301-330 "
                f"or 401-430)"
            )
    if args.stage == "combined":
        if args.out is not None and args.out.name != "combined.pkl.gz":
            raise UsageError(
                f"--out {args.out}: --stage combined writes <folder>/combined.pkl.gz next to its "
                f"train/val/test inputs; name the file combined.pkl.gz"
            )
        out = args.out or dataset_path("combined")
    elif args.stage == "train_subset":
        out = args.out or dataset_path("train_subset")
    else:
        out = args.out or dataset_path(args.stage)
    return check_output_file("--out", out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    prog = "python -m rearrange.gen"
    ap = OneLineArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--stage",
        required=True,
        choices=[*GENERATED_STAGES, "debug"],
        help="train_subset = the 10 train episodes per scene that 'combined' uses",
    )
    ap.add_argument(
        "--scenes", nargs="*", help="restrict to these scenes (default: the stage's scenes)"
    )
    ap.add_argument(
        "--out", type=Path, help="output .pkl.gz (default: data/rearrange/<stage>.pkl.gz)"
    )
    ap.add_argument("--processes", type=int, default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with report_usage_errors(prog, DatasetError):
        out = _check_args(args)
    with stop_children_on_signals(prog), report_usage_errors(prog, DatasetError):
        if args.stage == "combined":
            path = combine(out.parent)
        elif args.stage == "train_subset":
            path = generate_stage(
                "train",
                out_path=out,
                scenes=args.scenes,
                processes=args.processes,
                indices=COMBINED_TRAIN_INDICES,
            )
        else:
            path = generate_stage(
                args.stage, out_path=out, scenes=args.scenes, processes=args.processes
            )
    data = load_dataset(path)
    print(f"wrote {path}: {len(data)} scenes, {sum(len(v) for v in data.values())} episodes")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
