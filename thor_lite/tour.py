"""A thor_lite tour: `python -m thor_lite.tour`.

Renders one scene of each iTHOR room type (kitchen, living room, bedroom, bathroom)
with thor_lite.view into out/tour/ and prints where the files are.
"""

from __future__ import annotations

import sys
from pathlib import Path

from thor_lite.view import render_scene

SCENES = ("FloorPlan1", "FloorPlan201", "FloorPlan301", "FloorPlan401")
OUT = Path.cwd() / "out" / "tour"


def main() -> int:
    for scene in SCENES:
        try:
            paths = render_scene(scene, OUT, width=300, height=300, steps=20, seed=0)
        except Exception as exc:  # report which scene failed, then fail the job
            print(f"thor_lite tour: {scene} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        print(f"{scene}:")
        for kind, path in paths.items():
            print(f"  {kind:8s} {path}")
    print(f"thor_lite tour: {len(SCENES)} scenes rendered into {OUT}")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
