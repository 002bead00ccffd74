"""Does opening an object show? RGB pixels that change between openness 0 and 1, per openable type.

    python benchmarks/thor_lite_openness_pixels.py [--per-type 8] [--poses 2] [--seed 0]

For every type THOR marks openable in the 120 iTHOR floor plans, up to `--per-type` instances
(drawn with a seeded RNG) are closed (openness 0) and, from up to `--poses` of their
interactable poses (GetInteractablePoses at the closed state), rendered at 224x224 closed and
opened (openness 1). Differing RGB pixels are counted inside the object's instance mask (the
union of both frames' masks) and outside it. An instance counts as visible when some pose
changes at least 20 pixels inside its mask. Writes `results/thor_lite_openness_pixels.md` and
a PNG grid of one closed / open pair per type (`results/thor_lite_openness_pixels.png`).
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from _common import RESULTS_DIR, markdown_table, run_cli, write_markdown

SIZE = 224
MIN_PIXELS = 20


def openable_instances() -> Dict[str, List[Tuple[str, str]]]:
    """type -> [(scene, objectId)] over the 120 floor plans, from thor_lite's scene data."""
    from thor_lite.constants import ithor_scene_names
    from thor_lite.scene_data import all_scene_records

    recs = all_scene_records()
    out: Dict[str, List[Tuple[str, str]]] = defaultdict(list)
    for scene in ithor_scene_names():
        for r in recs[scene].objects:
            if r.flags.get("openable"):
                out[r.object_type].append((scene, r.object_id))
    return dict(sorted(out.items()))


def _set_open(c, oid: str, openness: float):
    ev = c.step("OpenObject", objectId=oid, openness=openness, forceAction=True)
    if not ev.metadata["lastActionSuccess"] and openness == 0:
        ev = c.step("CloseObject", objectId=oid, forceAction=True)
    return ev


def measure(c, oid: str, poses: int, rng: random.Random):
    """[(inside px, outside px, closed rgb, open rgb)] for up to `poses` interactable poses."""
    c.step("ToggleObjectOff", objectId=oid, forceAction=True)  # a microwave must be off to open
    if not _set_open(c, oid, 0.0).metadata["lastActionSuccess"]:
        return []
    cand = c.step("GetInteractablePoses", objectId=oid).metadata["actionReturn"] or []
    out = []
    for p in rng.sample(cand, min(poses, len(cand))):
        c.step(
            "TeleportFull",
            x=p["x"],
            y=p["y"],
            z=p["z"],
            rotation=dict(x=0, y=p["rotation"], z=0),
            horizon=p["horizon"],
            standing=p["standing"],
            forceAction=True,
        )
        ev0 = _set_open(c, oid, 0.0)
        ev1 = _set_open(c, oid, 1.0)
        if not ev1.metadata["lastActionSuccess"]:
            continue
        diff = (ev0.frame != ev1.frame).any(-1)
        mask = np.zeros_like(diff)
        for ev in (ev0, ev1):
            m = ev.instance_masks.get(oid)
            if m is not None:
                mask |= m
        out.append((int((diff & mask).sum()), int((diff & ~mask).sum()), ev0.frame, ev1.frame))
    return out


def run(per_type: int, poses: int, seed: int):
    from tqdm import tqdm

    from backends import make_controller

    rng = random.Random(seed)
    chosen = []
    for t, inst in openable_instances().items():
        chosen += [(s, t, oid) for s, oid in rng.sample(inst, min(per_type, len(inst)))]
    chosen.sort()
    c = make_controller(
        "thor_lite", width=SIZE, height=SIZE, renderInstanceSegmentation=True, quality="Low"
    )
    stats: Dict[str, list] = defaultdict(list)
    example: Dict[str, tuple] = {}
    try:
        scene = None
        for s, t, oid in tqdm(chosen, desc="openables"):
            if s != scene:
                c.reset(scene=s)
                scene = s
            res = measure(c, oid, poses, rng)
            inside = max((r[0] for r in res), default=0)
            outside = max((r[1] for r in res), default=0)
            stats[t].append((len(res) > 0, inside, outside))
            best = max(res, key=lambda r: r[0], default=None)
            if best is not None and (t not in example or best[0] > example[t][0]):
                example[t] = (best[0], best[2], best[3], oid)
    finally:
        c.stop()
    return stats, example


def table(stats) -> List[str]:
    rows = []
    for t, st in sorted(stats.items()):
        posed = [x for x in st if x[0]]
        ins = [x[1] for x in posed]
        rows.append(
            (
                t,
                len(st),
                len(posed),
                f"{np.mean([v >= MIN_PIXELS for v in ins]):.0%}" if ins else "-",
                int(np.median(ins)) if ins else "-",
                int(np.median([x[2] for x in posed])) if posed else "-",
            )
        )
    header = ("type", "instances", "with a pose", f"share >= {MIN_PIXELS} px", "median px in mask")
    return markdown_table(header + ("median px outside",), rows, "lrrrrr")


def grid_png(example, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    types = sorted(example)
    fig, axes = plt.subplots(len(types), 2, figsize=(4, 2 * len(types)), squeeze=False)
    for row, t in zip(axes, types):
        px, closed, opened, oid = example[t]
        for ax, img, lab in zip(row, (closed, opened), ("closed", "open")):
            ax.imshow(img)
            ax.set_axis_off()
            ax.set_title(f"{t} {lab}" + (f" ({px} px)" if lab == "open" else ""), fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-type", type=int, default=12, help="instances per type (seeded sample)")
    ap.add_argument("--poses", type=int, default=2, help="interactable poses per instance")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "thor_lite_openness_pixels.md")
    a = ap.parse_args()
    if a.per_type < 1 or a.poses < 1:
        ap.error("--per-type and --poses must be >= 1")
    stats, example = run(a.per_type, a.poses, a.seed)
    lines = table(stats)
    print("\n".join(lines))
    write_markdown(a.out, "\n".join([f"# {__doc__.splitlines()[0]}", ""] + lines))
    grid_png(example, a.out.with_suffix(".png"))
    print(f"wrote {a.out} and {a.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    run_cli(main)
