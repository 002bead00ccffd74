"""How well thor_lite's reachable grid agrees with real AI2-THOR.

    python benchmarks/thor_lite_layouts.py [--layouts ../shared/data/ithor_layouts]
                                           [--episodes ../shared/data/rearrangement/2023_val.pkl.gz]

1. Per scene, IoU between thor_lite's reachable cells and the real reachable positions recorded
   by ALFRED (THOR 2.1.0) in `FloorPlanN-layout.npy`, plus the share of real cells we block
   and of our cells that real THOR lacked.
2. The share of the official 2023 val episodes' agent start positions (recorded on THOR 5.0)
   that are reachable in thor_lite.
Both are run with the walls from the layout data (default) and with geometry only.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from _common import RESULTS_DIR, SHARED, markdown_table, write_markdown


def reachable(scene: str) -> set:
    from thor_lite.scene_data import all_scene_records
    from thor_lite.scene_build import build_world

    return set(build_world(all_scene_records()[scene]).reachable_cells())


def run(layouts: Path, episodes: Path) -> list:
    from thor_lite.constants import ithor_scene_names

    rows = []
    ious, blocked, extra = [], [], []
    for s in ithor_scene_names():
        real = {
            (int(round(x / 0.25)), int(round(z / 0.25)))
            for x, z in np.load(layouts / f"{s}-layout.npy")
        }
        ours = reachable(s)
        ious.append(len(real & ours) / len(real | ours))
        blocked.append(len(real - ours) / len(real))
        extra.append(len(ours - real) / max(len(ours), 1))
    rows.append(("layout IoU (mean over 120 scenes)", float(np.mean(ious))))
    rows.append(("real cells thor_lite blocks", float(np.mean(blocked))))
    rows.append(("thor_lite cells real THOR lacked", float(np.mean(extra))))
    if episodes.is_file():
        from rearrange.dataset import load_dataset

        data = load_dataset(episodes)
        hits = total = 0
        for s, eps in data.items():
            cells = reachable(s)
            for e in eps:
                total += 1
                hits += (
                    round(e["agent_position"]["x"] / 0.25),
                    round(e["agent_position"]["z"] / 0.25),
                ) in cells
        rows.append(("official val agent starts reachable", hits / total))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--layouts", type=Path, default=SHARED / "data" / "ithor_layouts")
    ap.add_argument(
        "--episodes", type=Path, default=SHARED / "data" / "rearrangement" / "2023_val.pkl.gz"
    )
    args = ap.parse_args(argv)
    if not args.layouts.is_dir():
        print(f"no layout files at {args.layouts}; nothing to compare", file=sys.stderr)
        return 2
    with_walls = run(args.layouts, args.episodes)
    os.environ["THOR_LITE_LAYOUTS"] = (
        "/nonexistent"  # read per World: walls now from the Floor box only
    )
    geometry = run(args.layouts, args.episodes)
    lines = markdown_table(
        ["measure", "walls from layouts", "geometry only"],
        [(name, f"{a:.3f}", f"{b:.3f}") for (name, a), (_, b) in zip(with_walls, geometry)],
        "lrr",
    )
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "thor_lite_layouts.md", text)
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
