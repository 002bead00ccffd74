"""Subgoal augmentation: one start state, several "go there and pick up X" sequences.

``python -m alfred_task.gen.augment --source out/alfred_s2s_big --out out/alfred_s2s_aug --per-demo 3``

Why: in the generated demonstrations the scene and the agent's start pose decide the whole
action sequence, so a decoder trained on them never needs the instructions (session 8/9: the
same behaviour for all three annotations on 38 of 38 valid_seen trajectories), and its mask
head only ever sees one target per frame. Here each *train* demonstration's start state (its
recorded ``scene``: object poses, toggles, ``init_action``) is replayed with other pickupable
targets: the expert (:func:`alfred_task.gen.generate.run_expert`, a ``pick_and_place_simple`` task for
that object) acts from the same pose and the sequence is cut right after its first
``PickupObject`` subgoal (high_pddl = GotoLocation ..., PickupObject, End). The same first
frame thus leads to different actions and, at the pickup, a different mask, and only the
language (templated as the generator does; the goal sentence names the object to pick up)
tells them apart.

The output is a dataset root the trainers read unchanged: ``valid_*`` splits and every source
train trial are linked from `source` (nothing is written there), the augmentation trials are
real folders under ``train/``, and ``splits.json`` lists both. Features come from the encoder
recorded in the source's ``dataset_meta.json`` (same name and seed), so all ``feat_conv.pt``
are comparable. Seeded by (seed, source task) only, resumable (a marker per source demo).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from common.atomic_io import write_json_atomic
from common.cli import OneLineArgumentParser, UsageError, check_int, check_output_dir, print_error
from common.procs import stop_children_on_signals

from alfred_task import constants as C
from alfred_task.data.dataset_meta import META_FILE, read_meta
from alfred_task.env.environment import AlfredEnv
from alfred_task.planning.expert import ExpertError
from alfred_task.gen.generate import (
    GenerationError,
    TaskSpec,
    _image_entries,
    _types_present,
    run_expert,
    trial_id,
    write_demo,
    write_splits,
)
from alfred_task.gen.language import humanize, make_annotations
from alfred_task.planning import PlanningError
from alfred_task.data.traj_data import load_split_file

AUG_TASK_TYPE = "pick_and_place_simple"
PROGRESS_KEY = "augment"
MAX_KEPT_STEPS = 60
#: goal sentences of a go-and-pick-up sequence (our wording; the object is the only slot)
GOAL_TEMPLATES = (
    "Pick up the {obj}.",
    "Find the {obj} and pick it up.",
    "Grab the {obj}.",
    "Go get the {obj}.",
)


def aug_rng(seed: int, task: str) -> np.random.Generator:
    digest = hashlib.sha256(f"alfred-augment:{seed}:{task}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def candidate_targets(objects: Sequence[Dict[str, Any]], exclude: str) -> List[Tuple[str, str]]:
    """(object type, a parent it may go to) for every pickupable type of the scene but `exclude`;
    the parent only lets the task planner run, the sequence stops before it matters."""
    from backends import placement_allowed

    pick, _, fixed = _types_present(objects)
    parents = sorted(fixed - {"Toaster"})
    out = []
    for obj in sorted(pick - {exclude}):
        ok = [
            p
            for p in parents
            if placement_allowed(obj, p) and C.receptacle_accepts(p, obj) is not False
        ]
        if ok:
            out.append((obj, ok[0]))
    return out


def _first_pickup(high: Sequence[Dict[str, Any]], obj: str) -> int:
    for h in high:
        d = h["discrete_action"]
        if d["action"] == "PickupObject" and d["args"] and d["args"][0] == obj.lower():
            return int(h["high_idx"])
    raise GenerationError(f"the plan never picks up {obj}")


def truncate_at_pickup(
    high: List[dict], low: List[dict], contexts: List[Any], obj: str
) -> Tuple[List[dict], List[dict], List[Any]]:
    """The plan up to and including the first pickup of `obj`, then ALFRED's End subgoal."""
    k = _first_pickup(high, obj)
    end = {
        "discrete_action": {"action": C.END_HIGH_ACTION, "args": []},
        "high_idx": k + 1,
        "planner_action": {"action": C.END_PLANNER_ACTION, "value": 1},
    }
    return (
        high[: k + 1] + [end],
        [la for la in low if la["high_idx"] <= k],
        [c for c in contexts if c.high_idx <= k],
    )


def _holds(env: AlfredEnv, obj: str) -> bool:
    return any(o["objectType"] == obj for o in env.last_event.metadata["inventoryObjects"])


def make_variant(
    env: AlfredEnv,
    source: Dict[str, Any],
    obj: str,
    parent: str,
    task_id: str,
    ann_seed: int,
    want_frames: bool,
) -> Tuple[Dict[str, Any], Optional[List[np.ndarray]]]:
    """One augmentation trajectory from `source`'s start state; GenerationError when unusable."""
    scene = source["scene"]
    spec = TaskSpec(
        AUG_TASK_TYPE,
        int(scene["scene_num"]),
        obj,
        False,
        parent,
        "",
        "",
        int(scene["random_seed"]),
    )
    traj: Dict[str, Any] = {
        "task_id": task_id,
        "task_type": AUG_TASK_TYPE,
        "pddl_params": spec.pddl_params,
        "scene": scene,
    }
    env.init_episode(traj)
    frames: Optional[List[np.ndarray]] = [] if want_frames else None
    try:
        high, low, contexts = run_expert(env, spec, frames, planner="template")
    except (ExpertError, PlanningError) as e:
        raise GenerationError(f"{obj}: {e}") from None
    high, low, contexts = truncate_at_pickup(high, low, contexts, obj)
    if len(low) > MAX_KEPT_STEPS:
        raise GenerationError(f"{obj}: {len(low)} steps to the pickup (> {MAX_KEPT_STEPS})")
    traj["plan"] = {"high_pddl": high, "low_actions": low}
    traj["images"] = _image_entries(low)
    anns = make_annotations(AUG_TASK_TYPE, spec.pddl_params, high, contexts, seed=ann_seed)
    pick = random.Random(f"{ann_seed}:goal")
    for a in anns:
        a["task_desc"] = pick.choice(GOAL_TEMPLATES).format(obj=humanize(obj))
    traj["turk_annotations"] = {"anns": anns}
    _check_replay(env, traj, obj)
    traj["_task_dir"] = f"{AUG_TASK_TYPE}-{obj}-None-{parent}-{spec.scene_num}"
    return traj, (frames[: len(low) + 1] if frames is not None else None)


def _check_replay(env: AlfredEnv, traj: Dict[str, Any], obj: str) -> None:
    """ALFRED's replay check, for a sequence whose goal is holding `obj`."""
    from alfred_task.data.masks import decompress_mask

    env.init_episode(traj)
    for i, la in enumerate(traj["plan"]["low_actions"]):
        d = la["discrete_action"]
        mask = decompress_mask(d["args"]["mask"]) if d["args"].get("mask") else None
        ok = env.va_interact(d["action"], mask)[0]
        if not ok:
            raise GenerationError(f"{obj}: replay failed at step {i} ({d['action']})")
    if not _holds(env, obj):
        raise GenerationError(f"{obj}: replay does not end holding it")


# --- dataset root -------------------------------------------------------------------------------
def symlink(src: Path, dst: Path) -> None:
    """`dst` -> `src`; a link another augmentation call made first is fine (calls run side by side)."""
    try:
        os.symlink(src, dst)
    except FileExistsError:
        if not (dst.is_symlink() and Path(os.readlink(dst)) == src):
            raise


def link_source(source: Path, out: Path) -> None:
    """Make `out` a dataset root that shows `source`'s trials (links, idempotent) and its markers."""
    out.mkdir(parents=True, exist_ok=True)
    for split in C.SPLITS:
        src = source / split
        if not src.is_dir() or split == "train":
            continue
        if not (out / split).exists():
            symlink(src.resolve(), out / split)
    for trial in sorted((source / "train").glob("*/*")):
        if trial.name.startswith(".") or not (trial / "traj_data.json").is_file():
            continue
        dst = out / "train" / trial.parent.name / trial.name
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            symlink(trial.resolve(), dst)
    for marker in sorted((source / ".progress").glob("*/*.json")):
        dst = out / ".progress" / marker.parent.name / marker.name
        if marker.parent.name != PROGRESS_KEY and not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(marker, dst)
    if not (out / META_FILE).exists() and (source / META_FILE).exists():
        shutil.copyfile(source / META_FILE, out / META_FILE)


def encoder_spec(meta: Optional[Dict[str, Any]]) -> Optional[str]:
    """The `ResnetFeatures` spec that made a dataset's features (None: it has none)."""
    enc = (meta or {}).get("visual_encoder")
    if enc is None:
        return None
    if enc.get("weights") == "random":
        return f"{enc['name']}:{int(enc.get('seed', 0))}"
    return "imagenet" if enc.get("weights") == "imagenet" else str(enc["file"])


def source_trials(source: Path) -> List[str]:
    """Train trials of `source` (``task_dir/trial``) in split-file order, each once."""
    seen: Dict[str, None] = {}
    for e in load_split_file(source / "splits.json").get("train", []):
        seen.setdefault(e.task, None)
    return list(seen)


def augment_trial(
    env: AlfredEnv, out: Path, task: str, seed: int, per_demo: int, encoder: Any
) -> List[dict]:
    """Up to `per_demo` variants of train trial `task`, written under `out`: their progress records
    (targets tried in a seeded order; a target the expert cannot reach is skipped and noted)."""
    source = json.loads((out / "train" / task / "traj_data.json").read_text())
    rng = aug_rng(seed, task)
    env.init_episode(source)
    cands = candidate_targets(
        env.last_event.metadata["objects"], source["pddl_params"]["object_target"]
    )
    made: List[dict] = []
    skipped: List[str] = []
    for j in rng.permutation(len(cands)):
        if len(made) == per_demo:
            break
        obj, parent = cands[int(j)]
        tid = trial_id(seed, len(made), f"augment:{task}")
        try:
            traj, frames = make_variant(
                env, source, obj, parent, tid, int(rng.integers(2**31)), encoder is not None
            )
        except GenerationError as e:
            skipped.append(str(e))
            continue
        write_demo(out, "train", traj, None, encoder(frames) if encoder is not None else None)
        made.append(
            {
                "split": "train",
                "task": f"{traj['_task_dir']}/{tid}",
                "source": task,
                "target": obj,
                "n_anns": len(traj["turk_annotations"]["anns"]),
                "n_low": len(traj["plan"]["low_actions"]),
            }
        )
    for r in made:
        r["skipped"] = skipped
    return made


def _done_marker(out: Path, index: int) -> Path:
    return out / ".augment_done" / f"{index:06d}.json"


def augment(
    source: Path,
    out: Path,
    start: int = 0,
    num: int = 10,
    per_demo: int = 3,
    seed: int = 0,
    features: bool = True,
) -> Dict[str, Any]:
    """Augment source train trials [start, start+num) (resumable) and rewrite ``out/splits.json``."""
    from tqdm import tqdm

    from alfred_task.data.dataset_meta import record_run
    from alfred_task.data.features import ResnetFeatures

    source, out = Path(source), Path(out)
    if source.resolve() == out.resolve():
        raise ValueError(
            f"--out {out} must differ from --source (nothing is written into the source)"
        )
    if not (source / "splits.json").is_file():
        raise FileNotFoundError(
            f"{source / 'splits.json'}: not found (--source must be a generated dataset root)"
        )
    spec = encoder_spec(read_meta(source))
    if spec is not None and not features:
        raise ValueError(
            f"{source / META_FILE}: the source has features ({spec}); the augmentation must have them too"
        )
    link_source(source, out)
    encoder = ResnetFeatures(spec) if spec is not None else None
    record_run(
        out,
        PROGRESS_KEY,
        {"seed": seed, "per_demo": per_demo, "planner": "template", "source": str(source)},
        encoder.describe() if encoder is not None else read_meta(out).get("visual_encoder"),
    )
    trials = source_trials(source)
    todo = [
        i for i in range(start, min(start + num, len(trials))) if not _done_marker(out, i).exists()
    ]
    env = AlfredEnv(width=C.SCREEN_WIDTH, height=C.SCREEN_HEIGHT) if todo else None
    try:
        for i in tqdm(todo, desc="augmented start states", unit="demo"):
            made = augment_trial(env, out, trials[i], seed, per_demo, encoder)
            for k, r in enumerate(made):
                write_json_atomic(
                    out / ".progress" / PROGRESS_KEY / f"{i:06d}_{k}.json", r, indent=None
                )
            write_json_atomic(
                _done_marker(out, i),
                {"index": i, "task": trials[i], "made": len(made)},
                indent=None,
            )
    finally:
        if env is not None:
            env.stop()
    summary = write_splits(out)
    summary["augmented_trials"] = len(list((out / ".progress" / PROGRESS_KEY).glob("*.json")))
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="python -m alfred_task.gen.augment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--source", type=Path, required=True, help="generated dataset root (read only)")
    ap.add_argument(
        "--out", type=Path, required=True, help="new dataset root: source linked + augmentation"
    )
    ap.add_argument(
        "--start", type=int, default=0, help="first source train trial (split-file order)"
    )
    ap.add_argument("--num", type=int, default=10, help="number of source train trials to augment")
    ap.add_argument(
        "--per-demo", type=int, default=3, help="variants (other targets) per start state"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-features", action="store_true", help="write no feat_conv.pt (tests)")
    args = ap.parse_args(argv)
    try:
        check_int("--start", args.start, 0)
        check_int("--num", args.num, 1)
        check_int("--per-demo", args.per_demo, 1)
        check_output_dir("--out", args.out)
        with stop_children_on_signals(ap.prog):  # Ctrl-C / SIGTERM: one line, exit 130 / 143
            summary = augment(
                args.source,
                args.out,
                args.start,
                args.num,
                args.per_demo,
                args.seed,
                not args.no_features,
            )
    except (UsageError, FileNotFoundError, ValueError) as e:
        return print_error(ap.prog, e)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
