"""thor_lite environment steps per second, in one process.

    python benchmarks/thor_lite_fps.py [--steps 500] [--repeats 3] [--scene FloorPlan1]

Cases: resolution (224, 300) x action mix x image mode.

- mixes:  ``nav``      seeded MoveAhead/RotateLeft/RotateRight/LookUp/LookDown
          ``interact`` navigation alternating with Open/Close/Pickup/Put/DropHandObject on
                       objects that the last event lists as visible (failures are fine)
- modes:  ``all``      renderDepthImage + renderInstanceSegmentation on; every step reads
                       event.frame, event.depth_frame and event.instance_segmentation_frame
          ``rgb``      depth/segmentation off; every step reads event.frame
          ``none``     depth/segmentation off; frames never read (the interaction mix still
                       reads metadata["objects"] to choose targets)
          ``all+objects`` as ``all``, and every step also reads metadata["objects"] and each
                       object's ``visible`` (what task code does: sensors, rewards, experts)

Prints the median over ``--repeats`` runs of ``--steps`` steps (steps/s and ms/step), then a
cProfile of the 224 / nav / all case, and writes the table to
``benchmarks/results/thor_lite_fps.md``.
"""

from __future__ import annotations

import os

os.environ.setdefault("LP_NUM_THREADS", "0")

import argparse
import cProfile
import io
import platform
import pstats
import random
import statistics
import time
from pathlib import Path
from typing import Dict, List, Tuple

from thor_lite import Controller

from _common import RESULTS_DIR, markdown_table, write_markdown

NAV_ACTIONS = ("MoveAhead", "RotateLeft", "RotateRight", "LookUp", "LookDown")
NAV_WEIGHTS = (0.4, 0.2, 0.2, 0.1, 0.1)
INTERACT_ACTIONS = ("OpenObject", "CloseObject", "PickupObject", "PutObject", "DropHandObject")
RESOLUTIONS = (224, 300)
MIXES = ("nav", "interact")
MODES = ("all", "all+objects", "rgb", "none")


def make_controller(scene: str, res: int, mode: str) -> Controller:
    full = mode.startswith("all")
    return Controller(
        scene=scene, width=res, height=res, renderDepthImage=full, renderInstanceSegmentation=full
    )


def _read_frames(event, mode: str) -> None:
    if mode.startswith("all"):
        event.frame, event.depth_frame, event.instance_segmentation_frame
    if mode == "all+objects":
        sum(o["visible"] for o in event.metadata["objects"])
    elif mode == "rgb":
        event.frame


def _interaction(rng: random.Random, event) -> Dict:
    """One interaction on a visible object that fits the action (may still fail)."""
    objs = [o for o in event.metadata["objects"] if o.get("visible")]
    held = event.metadata.get("inventoryObjects") or []
    action = rng.choice(INTERACT_ACTIONS)
    if action == "DropHandObject":
        return {"action": action}
    key = {
        "OpenObject": "openable",
        "CloseObject": "openable",
        "PickupObject": "pickupable",
        "PutObject": "receptacle",
    }[action]
    if action == "PickupObject" and held:
        key = "receptacle"
        action = "PutObject"
    cands = [o for o in objs if o.get(key)] or objs
    if not cands:
        return {"action": rng.choice(NAV_ACTIONS)}
    return {"action": action, "objectId": rng.choice(cands)["objectId"]}


def run_steps(
    controller: Controller, steps: int, mix: str, mode: str, seed: int
) -> Tuple[float, float, int, int]:
    """Run `steps` steps; returns (wall seconds, CPU seconds of this process, interactions tried,
    interactions that succeeded).

    CPU seconds barely move when other processes share the cores (wall time does, by tens of
    percent on a shared VM); llvmpipe renders in this thread (LP_NUM_THREADS=0), so they cover
    the rendering too.
    """
    rng = random.Random(seed)
    event = controller.last_event
    tried = ok = 0
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(steps):
        if mix == "interact" and i % 2 == 1:
            event = controller.step(_interaction(rng, event))
            tried += 1
            ok += bool(event.metadata["lastActionSuccess"])
        else:
            event = controller.step(action=rng.choices(NAV_ACTIONS, weights=NAV_WEIGHTS)[0])
        if mix == "interact" and mode == "none":
            event.metadata["objects"]
        _read_frames(event, mode)
    return time.perf_counter() - t0, time.process_time() - c0, tried, ok


def bench_case(
    scene: str, res: int, mix: str, mode: str, steps: int, repeats: int, seed: int
) -> Tuple[float, List[float], float, float]:
    """(median wall seconds, every repeat's wall seconds, interaction success rate, median CPU
    seconds) of `repeats` runs of `steps` steps."""
    controller = make_controller(scene, res, mode)
    try:
        run_steps(controller, min(20, steps), mix, mode, seed + 999)  # warm-up (GL context, caches)
        times, cpu, tried, ok = [], [], 0, 0
        for r in range(repeats):
            controller.reset(scene)
            t, c, n, k = run_steps(controller, steps, mix, mode, seed + r)
            times.append(t)
            cpu.append(c)
            tried, ok = tried + n, ok + k
    finally:
        controller.stop()
    return (
        statistics.median(times),
        times,
        (ok / tried if tried else float("nan")),
        statistics.median(cpu),
    )


def profile_case(scene: str, steps: int, seed: int, top: int = 15) -> str:
    controller = make_controller(scene, 224, "all")
    try:
        run_steps(controller, min(20, steps), "nav", "all", seed + 999)
        controller.reset(scene)
        prof = cProfile.Profile()
        prof.enable()
        run_steps(controller, steps, "nav", "all", seed)
        prof.disable()
    finally:
        controller.stop()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=500, help="steps per repeat (default 500)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scene", default="FloorPlan1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--res", type=int, nargs="+", default=list(RESOLUTIONS), help="resolutions")
    p.add_argument("--mixes", nargs="+", choices=MIXES, default=list(MIXES))
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "thor_lite_fps.md")
    args = p.parse_args(argv)

    rows = []
    header, sep = markdown_table(
        [
            "res",
            "mix",
            "images read",
            "steps/s",
            "ms/step",
            "interactions ok",
            "repeats (s)",
            "CPU ms/step",
        ],
        [],
        "rllrrrlr",
    )
    print(
        f"thor_lite FPS: scene={args.scene} steps={args.steps} repeats={args.repeats} "
        f"python={platform.python_version()} cpus={os.cpu_count()} "
        f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS')}"
    )
    print(header)
    print(sep)
    for res in args.res:
        for mix in args.mixes:
            for mode in args.modes:
                med, times, ok, cpu = bench_case(
                    args.scene, res, mix, mode, args.steps, args.repeats, args.seed
                )
                ok_s = "-" if ok != ok else f"{100 * ok:.0f}%"
                row = (
                    f"| {res} | {mix} | {mode} | {args.steps / med:.1f} | {1000 * med / args.steps:.2f} "
                    f"| {ok_s} | {', '.join(f'{t:.3f}' for t in times)} | {1000 * cpu / args.steps:.3f} |"
                )
                rows.append(row)
                print(row, flush=True)

    md = [
        "# thor_lite steps per second",
        "",
        f"Scene {args.scene}, {args.steps} steps x {args.repeats} repeats (median), one process, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS')}.",
        "`images read`: all = RGB + depth + instance segmentation rendered and read every step; "
        'all+objects = all, and metadata["objects"] with each `visible` read every step; '
        "rgb = RGB only; none = frames never read. `interactions ok`: share of the "
        "interaction-mix Open/Close/Pickup/Put/Drop actions that succeeded. `CPU ms/step`: "
        "median CPU time of this process per step (robust to other processes on the cores).",
        "",
        header,
        sep,
        *rows,
        "",
    ]
    write_markdown(args.out, "\n".join(md))
    print(f"\ntable written to {args.out}")

    if not args.no_profile:
        print("\n## where the time goes (224, nav, all images; top 15 by cumulative time)\n")
        print(profile_case(args.scene, args.steps, args.seed))
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
