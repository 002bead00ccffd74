"""Draw the README's picture: a thor_lite rearrangement start view beside its goal view.

    python scripts/make_readme_figure.py [--out docs/images/rearrange_start_vs_goal.png]

One val episode (FloorPlan21, index 5: several objects moved) is reset on thor_lite at 300x300;
the picture is `rearrange.harness.side_by_side` of the unshuffle phase's first frame (left,
what the agent sees) and the walkthrough phase's view of the goal state (right). Seconds on a CPU.
"""

from __future__ import annotations

import argparse
from collections import OrderedDict
from pathlib import Path

from PIL import Image

from rearrange.eval import load_config
from rearrange.harness import side_by_side

CONFIG = "baseline_configs/one_phase/one_phase_rgb_dagger.py"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/images/rearrange_start_vs_goal.png"))
    ap.add_argument("--scene", default="FloorPlan21")
    ap.add_argument("--index", type=int, default=5)
    args = ap.parse_args()
    config = load_config(CONFIG, {"screen_size": 300})
    sampler_args = config.stagewise_task_sampler_args("val", 0, 1)
    episodes = sampler_args["scenes_to_task_spec_dicts"][args.scene]
    sampler_args["scenes_to_task_spec_dicts"] = OrderedDict([(args.scene, [episodes[args.index]])])
    sampler = config.make_sampler_fn(**sampler_args)
    try:
        task = sampler.next_task()
        image = Image.fromarray(side_by_side(task))
    finally:
        sampler.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    image.save(args.out, optimize=True)
    print(f"wrote {args.out} ({image.width}x{image.height}, {args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
