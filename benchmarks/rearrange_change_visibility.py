"""Can an agent see what a rearrangement episode changed? Pixel differences between the goal
(walkthrough) view and the start (unshuffle) view at the same pose, per changed object.

    python benchmarks/rearrange_change_visibility.py --data ../shared/data/rearrangement/2023_val.pkl.gz \
        --episodes-per-scene 10 [--processes 2] [--max-poses 16] [--seed 0]
    python benchmarks/rearrange_change_visibility.py --stage val      # data/rearrange/val.pkl.gz

For each episode the two states are built by the task code itself
(`RearrangeTHOREnvironment.reset` for the goal, `reset` + `shuffle` for the start), so they are
exactly what agents see. An object "changed" when its start pose is not equal to its goal pose
under the metric's own test (`are_poses_equal`: IoU / openness thresholds); its kind is
`opened` when the openness differs by more than the threshold, else `moved`. The poses tried
are the object's interactable poses in the goal state and in the start state (for a moved
object: at its goal and at its start position), deduplicated and, above `--max-poses`, a
seeded sample. At each pose both views are rendered at 224² with instance segmentation; the
object's mask is the union of its masks in the two views. A change is visible when, at some
pose, at least 20 pixels inside that mask differ (pixels outside the mask are counted too:
other changed objects and what an opened door reveals land there).

Writes `benchmarks/results/rearrange_change_visibility_<split>.md` (per type x kind: changes,
share visible, median of the best pose's in-mask count, median out-of-mask count) and a PNG
grid of example pairs next to it.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown
from common.cli import OneLineArgumentParser, check_int, check_output_file, report_usage_errors
from common.procs import ignore_sigint, stop_children_on_signals

SIZE = 224
VISIBLE_PX = 20
EXAMPLES_PER_KIND = 6
KEEP_FRAMES_PER_SCENE = 2  # per (kind, visible): bounds the memory the example grid needs


def changed_objects(gps: Sequence[Dict[str, Any]], ips: Sequence[Dict[str, Any]]) -> List[Dict]:
    """The objects whose start pose differs from the goal pose by the metric's rule, with kind."""
    from rearrange.constants import OPENNESS_THRESHOLD
    from rearrange.pose_metrics import are_poses_equal, compare_poses

    out = []
    for g, i in zip(gps, ips):
        if are_poses_equal(g, i, treat_broken_as_unequal=True):
            continue
        cmp = compare_poses(g, i)
        opened = (cmp["openness_diff"] or 0.0) > OPENNESS_THRESHOLD
        out.append({"name": g["name"], "type": g["type"], "kind": "opened" if opened else "moved"})
    return out


def _pose_key(p: Dict[str, Any]) -> Tuple:
    return (
        round(p["x"], 2),
        round(p["z"], 2),
        int(round(p["rotation"])) % 360,
        int(round(p["horizon"])),
        bool(p["standing"]),
    )


def interactable_poses(env, name: str) -> List[Dict[str, Any]]:
    """`GetInteractablePoses` of the object called `name` where it stands in `env` now."""
    from backends import find_object

    obj = find_object(env.last_event.metadata["objects"], name=name)
    if obj is None:
        return []
    ev = env.controller.step(
        "GetInteractablePoses", objectId=obj["objectId"], positions=env.reachable_positions()
    )
    return list(ev.metadata["actionReturn"] or [])


def _teleport(env, pose: Dict[str, Any]):
    from backends import teleport_kwargs

    return env.controller.step("TeleportFull", **teleport_kwargs(pose))


def _mask(ev, name: str) -> np.ndarray:
    from backends import find_object

    obj = find_object(ev.metadata["objects"], name=name)
    m = ev.instance_masks.get(obj["objectId"]) if obj is not None else None
    return np.zeros((SIZE, SIZE), dtype=bool) if m is None else np.asarray(m, dtype=bool)


class _View:
    """One rendered view at a pose: RGB and the object's instance mask."""

    __slots__ = ("frame", "mask")

    def __init__(self, ev, name: str) -> None:
        self.frame = np.ascontiguousarray(ev.frame)
        self.mask = _mask(ev, name)


def _views(env, name: str, poses: Sequence[Dict[str, Any]]) -> List[Optional[_View]]:
    out: List[Optional[_View]] = []
    for p in poses:
        ev = _teleport(env, p)
        out.append(_View(ev, name) if ev.metadata["lastActionSuccess"] else None)
    return out


def compare_views(
    change: Dict[str, Any], goal: Sequence[Optional[_View]], start: Sequence[Optional[_View]]
) -> Dict[str, Any]:
    """Best pose of one changed object: the in-mask count is maximised over its poses."""
    best = {**change, "poses": len(goal), "inside": 0, "outside": 0, "visible_poses": 0}
    best_frames = None
    for g, s in zip(goal, start):
        if g is None or s is None:
            continue
        diff = np.any(g.frame != s.frame, axis=2)
        mask = g.mask | s.mask
        inside, outside = int((diff & mask).sum()), int((diff & ~mask).sum())
        best["visible_poses"] += inside >= VISIBLE_PX
        if best_frames is None or inside > best["inside"]:
            best.update(inside=inside, outside=outside)
            best_frames = (g.frame, s.frame)
    best["visible"] = best["inside"] >= VISIBLE_PX
    best["frames"] = best_frames
    return best


def make_env():
    """The task environment with instance segmentation at 224²."""
    from rearrange.environment import RearrangeTHOREnvironment

    kw = {"width": SIZE, "height": SIZE, "renderInstanceSegmentation": True}
    return RearrangeTHOREnvironment(controller_kwargs=kw)


def measure_episode(
    env,
    episode: Dict[str, Any],
    max_poses: int,
    seed: int,
    same_start: bool = False,
    also: Sequence[Dict[str, Any]] = (),
) -> List[Dict[str, Any]]:
    """Every changed object of one episode, measured (frames kept for the example grid).

    One environment, driven as the unshuffle task drives it: `reset` builds the goal state,
    `shuffle` the start state. The start state is built first to list the changes and their
    start-state poses, then the goal state (its poses, its views), then the start state again
    (its views at the same poses). `same_start` compares the goal state with itself and `also`
    adds objects to measure (name, type, kind) whether they changed or not: the check that
    an unchanged object differs nowhere."""
    from rearrange.environment import RearrangeTaskSpec

    def shuffled():
        env.reset(RearrangeTaskSpec(**episode))
        if not same_start:
            env.shuffle()

    shuffled()
    ips, gps, _ = env.poses
    if same_start:
        ips = gps
    changes = changed_objects(gps, ips) + list(also)
    poses: Dict[str, Dict[Tuple, Dict[str, Any]]] = {c["name"]: {} for c in changes}
    for c in changes:
        for p in interactable_poses(env, c["name"]):
            poses[c["name"]].setdefault(_pose_key(p), p)
    env.reset(RearrangeTaskSpec(**episode))
    rng = random.Random(f"{seed}:{episode['scene']}:{episode.get('index')}")
    chosen: Dict[str, List[Dict[str, Any]]] = {}
    goal_views: Dict[str, List[Optional[_View]]] = {}
    for c in changes:
        for p in interactable_poses(env, c["name"]):
            poses[c["name"]].setdefault(_pose_key(p), p)
        ps = [poses[c["name"]][k] for k in sorted(poses[c["name"]])]
        chosen[c["name"]] = rng.sample(ps, max_poses) if len(ps) > max_poses else ps
        goal_views[c["name"]] = _views(env, c["name"], chosen[c["name"]])
    shuffled()
    out = []
    for c in changes:
        r = compare_views(c, goal_views[c["name"]], _views(env, c["name"], chosen[c["name"]]))
        r.update(scene=episode["scene"], index=episode.get("index"))
        out.append(r)
    return out


def run_scene(job: Tuple[str, List[Dict[str, Any]], int, int]) -> List[Dict[str, Any]]:
    scene, episodes, max_poses, seed = job
    env = make_env()
    rows: List[Dict[str, Any]] = []
    kept: Dict[Tuple[str, bool], int] = defaultdict(int)
    try:
        for ep in episodes:
            for r in measure_episode(env, {**ep, "scene": scene}, max_poses, seed):
                key = (r["kind"], r["visible"])
                if kept[key] >= KEEP_FRAMES_PER_SCENE:  # frames only for the example grid
                    r["frames"] = None
                kept[key] += r["frames"] is not None
                rows.append(r)
    finally:
        env.stop()
    return rows


def spread(episodes: List[Dict[str, Any]], n: Optional[int]) -> List[Dict[str, Any]]:
    """`n` episodes evenly spaced over a scene's list (all when `n` is None): the official splits
    order a scene's episodes by how many objects they change, so the first few change one."""
    if n is None or n >= len(episodes):
        return list(episodes)
    return [episodes[(2 * k + 1) * len(episodes) // (2 * n)] for k in range(n)]


def summary_rows(rows: List[Dict[str, Any]]) -> List[List[Any]]:
    groups: Dict[Tuple[str, str], List[Dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["type"])].append(r)
        groups[(r["kind"], "(all)")].append(r)
    out = []
    for (kind, typ), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "(all)", kv[0][1])
    ):
        vis = sum(r["visible"] for r in rs)
        out.append(
            [
                kind,
                typ,
                len(rs),
                f"{100 * vis / len(rs):.1f}%",
                f"{statistics.median(r['inside'] for r in rs):.0f}",
                f"{statistics.median(r['outside'] for r in rs):.0f}",
                sum(r["poses"] == 0 for r in rs),
            ]
        )
    return out


def example_grid(rows: List[Dict[str, Any]], path: Path, seed: int) -> Optional[Path]:
    """A PNG: per kind, a few changes (seeded pick, invisible ones first) as goal | start | diff."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    picks = []
    for kind in ("opened", "moved"):
        rs = [r for r in rows if r["kind"] == kind and r["frames"] is not None]
        hidden = [r for r in rs if not r["visible"]]
        shown = [r for r in rs if r["visible"]]
        k = EXAMPLES_PER_KIND // 2
        picks += rng.sample(hidden, min(k, len(hidden)))
        picks += rng.sample(shown, min(EXAMPLES_PER_KIND - min(k, len(hidden)), len(shown)))
    if not picks:
        return None
    label_h = 14
    grid = Image.new("RGB", (3 * SIZE, len(picks) * (SIZE + label_h)), "white")
    draw = ImageDraw.Draw(grid)
    for i, r in enumerate(picks):
        a, b = r["frames"]
        d = np.where(np.any(a != b, axis=2, keepdims=True), 255, 0).astype(np.uint8).repeat(3, 2)
        y = i * (SIZE + label_h)
        for j, img in enumerate((a, b, d)):
            grid.paste(Image.fromarray(np.ascontiguousarray(img)), (j * SIZE, y + label_h))
        draw.text(
            (2, y + 1),
            f"{r['kind']} {r['type']} ({r['scene']} #{r['index']}): goal | start | diff: "
            f"{r['inside']} px in mask, {r['outside']} outside",
            fill="black",
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    grid.save(path)
    return path


def main(argv=None) -> int:
    ap = OneLineArgumentParser(
        prog="benchmarks/rearrange_change_visibility.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--stage", default="val", help="thor_lite split (data/rearrange/<stage>.pkl.gz)"
    )
    ap.add_argument("--data", type=Path, help="explicit .pkl.gz (e.g. the official 2023 val)")
    ap.add_argument(
        "--episodes-per-scene", type=int, default=None, help="N per scene, evenly spaced"
    )
    ap.add_argument("--max-poses", type=int, default=16, help="poses tried per change (seeded)")
    ap.add_argument("--processes", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from rearrange.dataset import DatasetError, load_dataset, load_stage

    name = args.data.name.split(".")[0] if args.data else args.stage
    out = args.out or RESULTS_DIR / f"rearrange_change_visibility_{name}.md"
    with report_usage_errors(ap.prog, DatasetError):
        check_int("--processes", args.processes, 1)
        check_int("--episodes-per-scene", args.episodes_per_scene, 1)
        check_int("--max-poses", args.max_poses, 1)
        check_output_file("--out", out)
        data = load_dataset(args.data) if args.data else load_stage(args.stage)
    with stop_children_on_signals(ap.prog):
        return _run(args, data, out, str(args.data or f"data/rearrange/{args.stage}.pkl.gz"))


def _run(args: argparse.Namespace, data, out: Path, label: str) -> int:
    jobs = [
        (
            s,
            spread(eps, args.episodes_per_scene),
            args.max_poses,
            args.seed,
        )
        for s, eps in sorted(data.items())
    ]
    t0 = time.perf_counter()
    rows: List[Dict[str, Any]] = []
    ctx = mp.get_context("forkserver")
    with ctx.Pool(args.processes, initializer=ignore_sigint) as pool:
        for rs in tqdm(pool.imap(run_scene, jobs), total=len(jobs), desc="scenes"):
            rows.extend(rs)
    wall = time.perf_counter() - t0
    episodes = sum(len(j[1]) for j in jobs)
    png = example_grid(rows, out.with_suffix(".png"), args.seed)
    header = [
        "kind",
        "type",
        "changes",
        "visible (≥ 20 px)",
        "median px in mask",
        "median px outside",
        "no pose",
    ]
    table = markdown_table(header, summary_rows(rows), "llrrrrr")
    md = [
        f"# Change visibility on {label}",
        "",
        f"{episodes} episodes, {len(rows)} changed objects, at most {args.max_poses} poses per "
        f"change (seed {args.seed}), {SIZE}² frames, {wall:.0f} s with {args.processes} processes.",
        "Per change the best pose counts: `visible` = at least one pose with ≥ 20 differing RGB "
        "pixels inside the object's mask (union of its goal and start masks); the medians are of "
        "the best pose's in-mask count and of that pose's out-of-mask count; `no pose` = changes "
        "with no interactable pose.",
        "",
        *table,
        "",
        f"Example pairs: `{png.name}`." if png else "",
    ]
    write_markdown(out, "\n".join(md))
    write_json(
        out.with_suffix(".json"),
        [{k: v for k, v in r.items() if k != "frames"} for r in rows],
    )
    print("\n".join(table))
    print(f"\nwritten {out}" + (f" and {png}" if png else ""))
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
