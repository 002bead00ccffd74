"""Can `visible` come from the instance-id image? Two image rules against THOR's ray rule.

    python benchmarks/thor_lite_visibility_from_ids.py [--states 40] [--size 224] [--seed 0]

THOR's `visible` is a ray rule (ai2thor_api.md 4.5): some visibility point of the object is in
range and in frame, and no other collider crosses its sight line. An object can show in the image
while every point is hidden, so the image alone gives a different rule. On seeded random states
(a reachable pose, and two openables set to a random openness before each) this compares:

- ``pixels``: visible when some pixel of the object lies within `visibilityDistance` of the
  agent's axis (the depth image places each pixel in the room): the image read as the answer.
- ``drawn occluders``: the ray rule, but a point whose pixel shows another object is first cast
  against that object's boxes only; hidden there means hidden (a subset of the boxes cannot hide
  less than all of them), and the other points are cast in one pass. Equal to the ray rule by
  construction: the image only saves casts, so the question is whether it saves time. Timed
  against ``rays, one pass`` (the same pass over every point) and the shipped two-pass rule.

Prints and writes (markdown + a PNG of disagreements) the agreement with the ray rule over the
object states that either rule calls visible, the median time per pose of each rule (the state's
point and box tables built first, the pose's cached point selection dropped before each run), and
the share of hidden points the image settles.
"""

from __future__ import annotations

import os

os.environ.setdefault("LP_NUM_THREADS", "0")

import platform
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from _common import RESULTS_DIR, markdown_table, run_cli, write_markdown

SCENES = (
    "FloorPlan1",
    "FloorPlan5",
    "FloorPlan201",
    "FloorPlan212",
    "FloorPlan301",
    "FloorPlan305",
    "FloorPlan401",
    "FloorPlan420",
)
YAWS = (0.0, 90.0, 180.0, 270.0)
HORIZONS = (-30.0, 0.0, 30.0, 60.0)
#: openables given a random openness before each state
OPENED_PER_STATE = 2
#: timing repeats per state and rule (the median is kept)
REPEATS = 3

Visibility = Dict[str, Tuple[bool, bool]]


def random_states(c, rng: random.Random, n: int):
    """Yield `n` events of seeded random states of the controller's scene."""
    positions = c.step("GetReachablePositions").metadata["actionReturn"]
    openables = sorted(o["objectId"] for o in c.last_event.metadata["objects"] if o["openable"])
    for _ in range(n):
        for oid in rng.sample(openables, min(OPENED_PER_STATE, len(openables))):
            c.step("OpenObject", objectId=oid, openness=round(rng.random(), 2), forceAction=True)
        p = rng.choice(positions)
        yield c.step(
            "TeleportFull",
            x=p["x"],
            y=p["y"],
            z=p["z"],
            rotation=dict(x=0, y=rng.choice(YAWS), z=0),
            horizon=rng.choice(HORIZONS),
            standing=True,
            forceAction=True,
        )


def ray_rule(w) -> Visibility:
    """The shipped rule (`thor_lite.visibility.object_visibility`)."""
    from thor_lite import visibility

    return visibility.object_visibility(w)


def pixel_rule(w, ids_img: np.ndarray, depth: np.ndarray, names: Sequence[str]) -> Visibility:
    """Visible: some pixel of the object within range of the agent's axis (not interactable:
    the image says nothing of glass)."""
    from thor_lite.constants import AGENT_HEIGHT
    from thor_lite.geometry import camera_tan_aspect

    a, dist = w.agent, w.visibility_distance
    h, wd = ids_img.shape
    tan_v, aspect = camera_tan_aspect(w.fov, wd, h)
    v = (1.0 - (np.arange(h) + 0.5) * 2.0 / h)[:, None] * tan_v
    u = ((np.arange(wd) + 0.5) * 2.0 / wd - 1.0)[None, :] * tan_v * aspect
    local = np.stack([u * depth, v * depth, depth], axis=-1)
    world = w.camera_position(a) + local @ w.camera_rotation(a).T
    near = np.hypot(world[..., 0] - a.x, world[..., 2] - a.z) <= dist
    near &= world[..., 1] <= a.y + AGENT_HEIGHT / 2 + dist
    shown = {names[i] for i in np.unique(ids_img[near])}
    return {oid: (oid in shown and oid != w.held, False) for oid in w.objects}


def pixel_of(w, cam: np.ndarray, points: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the pixels in-frame `points` fall in, top row first (the renderer's
    layout: `thor_lite.render.BoxRenderer._view_projection`)."""
    from thor_lite.geometry import camera_tan_aspect

    local = (points - cam) @ w.camera_rotation()
    tan_v, aspect = camera_tan_aspect(w.fov, w.width, w.height)
    u = local[:, 0] / (local[:, 2] * tan_v * aspect)
    v = local[:, 1] / (local[:, 2] * tan_v)
    cols = np.clip(((u + 1.0) * 0.5 * w.width).astype(np.int64), 0, w.width - 1)
    rows = np.clip(((1.0 - v) * 0.5 * w.height).astype(np.int64), 0, w.height - 1)
    return rows, cols


def hidden_by_drawn(w, ids_img: np.ndarray, names: Sequence[str], sel: np.ndarray) -> np.ndarray:
    """Per visibility point `sel` (in range and in frame): hidden by the object its pixel shows.
    Sound whatever the image holds: a wrong image only settles fewer points."""
    from thor_lite import visibility as V

    ids, pts, owner, static = V.visibility_points(w)
    occ = w.occluders()
    index = {oid: i for i, oid in enumerate(occ.ids)}
    of_name = np.array([index.get(n, -1) for n in names], dtype=np.int64)
    cam = w.camera_position()
    rows, cols = pixel_of(w, cam, pts[sel])
    drawn = of_name[ids_img[rows, cols]]
    mine = V._occluder_of_owner(w, occ, ids)[owner[sel]]
    named = (drawn >= 0) & (drawn != mine)
    hidden = np.zeros(len(sel), dtype=bool)
    if not named.any():
        return hidden
    pick = np.zeros(len(occ.ids), dtype=bool)
    pick[drawn[named]] = True
    pick[mine[named & (mine >= 0)]] = True  # the own boxes: where THOR 2.1.0's segment stops
    boxes = np.flatnonzero(pick[occ.owners])
    seen, _ = V._sight_lines(w, cam, pts, owner, static, ids, sel[named], boxes)
    hidden[np.flatnonzero(named)[~seen]] = True
    return hidden


def drawn_occluders_rule(
    w, ids_img: np.ndarray, names: Sequence[str], settled: Counter = None, use_image: bool = True
) -> Visibility:
    """The ray rule with the points the image settles left out of the casts (`hidden_by_drawn`),
    the rest cast in one pass; `settled` counts the points in frame and those settled. Without
    `use_image`, the same single pass over every point (the baseline the image must beat)."""
    from thor_lite import visibility as V

    a = w.agent
    result = {oid: (False, False) for oid in w.objects}
    ids, pts, owner, static = V.visibility_points(w)
    sel = V._points_in_reach(
        w, ids, pts, owner, tuple(w.objects), a.x, a.y, a.z, w.visibility_distance
    )
    sel = sel[w.in_viewport(pts[sel], a)]
    if len(sel) == 0:
        return result
    if use_image:
        hidden = hidden_by_drawn(w, ids_img, names, sel)
    else:
        hidden = np.zeros(len(sel), dtype=bool)
    if settled is not None:
        settled["in frame"] += len(sel)
        settled["settled hidden"] += int(hidden.sum())
    rest = sel[~hidden]
    if len(rest):
        seen, clear = V._sight_lines(w, w.camera_position(), pts, owner, static, ids, rest)
        seen_obj = np.zeros(len(ids), dtype=bool)
        clear_obj = np.zeros(len(ids), dtype=bool)
        seen_obj[owner[rest[seen]]] = True
        clear_obj[owner[rest[clear]]] = True
        for k in np.flatnonzero(seen_obj | clear_obj):
            if ids[k] in result:
                result[ids[k]] = (bool(seen_obj[k]), bool(clear_obj[k]))
    return result


def _timed(fn, *args) -> Tuple[float, Visibility]:
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def compare_state(w, ev, stats: dict, settled: Counter) -> List[tuple]:
    """Time the three rules on one state (interleaved) and count where the image rules differ
    from the ray rule; returns the disagreements as (rule, object id, ray answer)."""
    ids_img, depth, names = ev.instance_ids_frame, ev.depth_frame, ev.object_ids_by_index
    rules = {
        "rays": lambda: ray_rule(w),
        "pixels": lambda: pixel_rule(w, ids_img, depth, names),
        "drawn occluders": lambda: drawn_occluders_rule(w, ids_img, names),
        "rays, one pass": lambda: drawn_occluders_rule(w, ids_img, names, use_image=False),
    }
    answers: Dict[str, Visibility] = {}
    ray_rule(w)  # build the state's point and box tables (cached per state) before timing
    for rep in range(REPEATS):
        order = list(rules) if rep % 2 == 0 else list(rules)[::-1]
        for name in order:
            w._cache.pop("vis_reach", None)  # a new pose each step: its point selection is new
            dt, answers[name] = _timed(rules[name])
            stats["ms"][name].append(dt * 1000.0)
    drawn_occluders_rule(w, ids_img, names, settled)
    rays = answers["rays"]
    out = []
    for oid, (vis, inter) in rays.items():
        otype = oid.split("|")[0]
        for name in ("pixels", "drawn occluders", "rays, one pass"):
            other = answers[name][oid]
            if vis or other[0]:
                stats["pairs"][name] += 1
                if other[0] != vis:
                    stats["differ"][name][("image only" if other[0] else "rays only", otype)] += 1
                    out.append((name, oid, vis))
            if name == "drawn occluders" and other[1] != inter:
                stats["differ"]["drawn occluders (interactable)"][("-", otype)] += 1
    return out


def run(scenes: Sequence[str], states: int, size: int, seed: int):
    from tqdm import tqdm

    from thor_lite import Controller

    stats = {
        "ms": defaultdict(list),
        "pairs": Counter(),
        "differ": defaultdict(Counter),
        "states": 0,
    }
    settled: Counter = Counter()
    examples: Dict[bool, List[tuple]] = {True: [], False: []}
    rng = random.Random(seed)
    c = Controller(
        scene=scenes[0],
        width=size,
        height=size,
        renderDepthImage=True,
        renderInstanceSegmentation=True,
    )
    try:
        with tqdm(total=len(scenes) * states, desc="states") as bar:
            for scene in scenes:
                c.reset(scene=scene)
                for ev in random_states(c, rng, states):
                    w = c._world
                    for rule, oid, vis in compare_state(w, ev, stats, settled):
                        mask = ev.instance_masks.get(oid)
                        if rule == "pixels" and mask is not None:
                            keep_example(examples, (scene, oid, vis, ev.frame, mask), w)
                    stats["states"] += 1
                    bar.update()
    finally:
        c.stop()
    return stats, settled, examples


def report(stats, settled: Counter, size: int, seed: int, scenes: Sequence[str]) -> List[str]:
    ms = {k: statistics.median(v) for k, v in stats["ms"].items()}
    mean = {k: statistics.fmean(v) for k, v in stats["ms"].items()}
    lines = [
        f"`python benchmarks/{Path(__file__).name} {' '.join(sys.argv[1:])}`".replace(" `", "`"),
        f"({time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, one process).",
        "",
        f"{stats['states']} states ({len(scenes)} scenes: {', '.join(scenes)}), {size}², "
        f"seed {seed}; an object state counts when either rule calls the object visible.",
        "",
    ]
    rows = []
    for name in ("pixels", "drawn occluders", "rays, one pass"):
        d = stats["differ"][name]
        n = stats["pairs"][name]
        img = sum(v for (k, _), v in d.items() if k == "image only")
        ray = sum(v for (k, _), v in d.items() if k == "rays only")
        rows.append(
            (
                name,
                n,
                f"{(img + ray) / max(n, 1):.1%}",
                img,
                ray,
                f"{ms[name]:.3f}",
                f"{ms[name] / ms['rays']:.2f}",
                f"{mean[name]:.3f}",
                f"{mean[name] / mean['rays']:.2f}",
            )
        )
    rows.append(
        (
            "rays (shipped)",
            "-",
            "-",
            "-",
            "-",
            f"{ms['rays']:.3f}",
            "1.00",
            f"{mean['rays']:.3f}",
            "1.00",
        )
    )
    lines += markdown_table(
        (
            "rule",
            "object states",
            "differ from rays",
            "image says visible, rays not",
            "rays say visible, image not",
            "median ms per pose",
            "median / rays",
            "mean ms per pose",
            "mean / rays",
        ),
        rows,
        "lrrrrrrrr",
    )
    inter = sum(stats["differ"]["drawn occluders (interactable)"].values())
    lines += [
        "",
        f"`drawn occluders` interactable answers differing from the ray rule: {inter}.",
        f"Points in range and in frame: {settled['in frame']}; settled as hidden by the object "
        f"drawn at their pixel: {settled['settled hidden']} "
        f"({settled['settled hidden'] / max(settled['in frame'], 1):.1%}).",
        "",
        "Types where `pixels` differs most:",
        "",
    ]
    by_type = Counter()
    for (_, otype), v in stats["differ"]["pixels"].items():
        by_type[otype] += v
    lines += markdown_table(("type", "object states that differ"), by_type.most_common(12), "lr")
    return lines


#: examples kept per kind of disagreement for the PNG (the largest masks, one per scene)
EXAMPLES_PER_KIND = 4


def point_marks(w, oid: str) -> List[Tuple[int, int, str]]:
    """(row, col, verdict) of `oid`'s in-frame visibility points: seen, hidden or out of range."""
    from thor_lite import visibility as V

    a = w.agent
    ids, pts, owner, static = V.visibility_points(w)
    if oid not in ids:
        return []
    mine = np.flatnonzero(owner == ids.index(oid))
    mine = mine[w.in_viewport(pts[mine], a)]
    if len(mine) == 0:
        return []
    reach = V._points_in_reach(w, ids, pts, owner, (oid,), a.x, a.y, a.z, w.visibility_distance)
    verdict = np.full(len(mine), "out of range", dtype=object)
    near = np.isin(mine, reach)
    if near.any():
        seen, _ = V._sight_lines(w, w.camera_position(), pts, owner, static, ids, mine[near])
        verdict[near] = np.where(seen, "seen", "hidden")
    rows, cols = pixel_of(w, w.camera_position(), pts[mine])
    return list(zip(rows.tolist(), cols.tolist(), verdict.tolist()))


def keep_example(examples: Dict[bool, List[tuple]], ex: tuple, w) -> None:
    """Keep, per kind of disagreement, the largest-mask example of each scene, for at most
    `EXAMPLES_PER_KIND` scenes (the largest)."""
    scene, oid, vis, frame, mask = ex
    kept, size = examples[vis], int(mask.sum())
    old = next((k for k in kept if k[0] == scene), None)
    if old is None and len(kept) >= EXAMPLES_PER_KIND:
        old = min(kept, key=lambda k: int(k[4].sum()))
    if old is not None:
        if int(old[4].sum()) >= size:
            return
        kept.remove(old)
    kept.append(ex + (point_marks(w, oid),))


def examples_png(examples: Dict[bool, List[tuple]], path: Path) -> None:
    """Frames where the pixel rule and the ray rule disagree: the object tinted magenta, its
    visibility points green (seen), red (hidden) or white (out of range)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    picks = sorted(examples[False]) + sorted(examples[True])
    if not picks:
        return
    colour = {"seen": "lime", "hidden": "red", "out of range": "white"}
    fig, axes = plt.subplots(1, len(picks), figsize=(2.2 * len(picks), 2.9), squeeze=False)
    for ax, (scene, oid, vis, frame, mask, marks) in zip(axes[0], picks):
        img = frame.copy()
        img[mask] = (0.4 * img[mask] + 0.6 * np.array([255, 0, 255])).astype(np.uint8)
        ax.imshow(img)
        for verdict in colour:
            rc = [(r, c) for r, c, v in marks if v == verdict]
            if rc:
                ax.scatter([c for _, c in rc], [r for r, _ in rc], s=6, c=colour[verdict])
        ax.set_axis_off()
        verdict = "rays: visible, pixels: not" if vis else "pixels: visible, rays: not"
        ax.set_title(f"{scene}\n{oid.split('|')[0]} ({int(mask.sum())} px)\n{verdict}", fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    from common.cli import OneLineArgumentParser, check_output_file, report_usage_errors
    from thor_lite.scene_data import ithor_scene_names

    ap = OneLineArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", nargs="+", default=list(SCENES))
    ap.add_argument("--states", type=int, default=40, help="random states per scene")
    ap.add_argument("--size", type=int, default=224, help="frame width and height")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "thor_lite_visibility_from_ids.md")
    a = ap.parse_args(argv)
    if a.states < 1 or a.size < 16:
        ap.error(f"--states must be >= 1 and --size >= 16, got {a.states} and {a.size}")
    unknown = [s for s in a.scenes if s not in ithor_scene_names()]
    if unknown:
        ap.error(f"--scenes: not an iTHOR floor plan: {', '.join(unknown)}")
    with report_usage_errors(ap.prog):
        check_output_file("--out", a.out)
        check_output_file("--out (the PNG next to it)", a.out.with_suffix(".png"))
    stats, settled, examples = run(a.scenes, a.states, a.size, a.seed)
    lines = report(stats, settled, a.size, a.seed, a.scenes)
    print("\n".join(lines))
    write_markdown(a.out, "\n".join([f"# {__doc__.splitlines()[0]}", ""] + lines))
    examples_png(examples, a.out.with_suffix(".png"))
    print(f"wrote {a.out} and {a.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    run_cli(main)
