"""Cost of driving thor_lite through ai2thor's client (thor_lite.build) instead of in-process.

    python benchmarks/thor_lite_build_fps.py [--steps 200] [--repeats 5] [--size 224] [--scene FloorPlan1]

Both controllers run the same seeded navigation actions (MoveAhead/RotateLeft/RotateRight/
LookUp/LookDown) with RGB + depth + instance segmentation on; every step reads the frame, the
depth frame, the instance-segmentation frame, the instance masks (ai2thor's Event computes them
all on arrival) and metadata["objects"] (thor_lite builds these
lazily in-process; through the build every one crosses the pipe). Rounds alternate between the
two, so machine load hits both alike; the table gives the median steps/s over rounds, the
per-step overhead (wall-clock, and CPU time of client plus build process, which machine
load does not distort), and the start-up time (constructor until the first frame is readable).
Writes benchmarks/results/thor_lite_build_fps.{md,json}.
"""

from __future__ import annotations

import os

os.environ.setdefault(
    "LP_NUM_THREADS", "0"
)  # as thor_lite_fps.py: one render thread (inherited by the build)

import platform
import random
import statistics
import time
from typing import Any, Dict, List, Tuple

from _common import RESULTS_DIR, markdown_table, run_cli, write_json, write_markdown
from common.cli import OneLineArgumentParser, check_int, report_usage_errors

ACTIONS = ("MoveAhead", "RotateLeft", "RotateRight", "LookUp", "LookDown")


def _read_all(event: Any) -> int:
    """Touch everything the benchmark counts as an observation."""
    n = (
        event.frame.shape[0]
        + event.depth_frame.shape[0]
        + event.instance_segmentation_frame.shape[0]
    )
    return n + len(event.instance_masks) + len(event.metadata["objects"])


def _start(kind: str, scene: str, size: int) -> Tuple[Any, float]:
    """A started controller of `kind` ("in-process" or "build") and its start-up seconds."""
    init = dict(width=size, height=size, renderDepthImage=True, renderInstanceSegmentation=True)
    t = time.perf_counter()
    if kind == "in-process":
        from thor_lite import Controller

        c = Controller(scene=scene, **init)
    else:
        from ai2thor.controller import Controller  # type: ignore

        from thor_lite.build import executable_path

        c = Controller(local_executable_path=executable_path(), scene=scene, x_display=":0", **init)
    _read_all(c.last_event)
    return c, time.perf_counter() - t


def _child_cpu(controller: Any) -> float:
    """CPU seconds used so far by the build process of an ai2thor controller (0 in-process)."""
    proc = getattr(getattr(controller, "server", None), "unity_proc", None)
    if proc is None:
        return 0.0
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _round(controller: Any, steps: int, seed: int) -> Tuple[float, float]:
    """(steps per second, CPU ms per step of client and build together) over seeded actions.

    CPU time does not depend on what else the machine runs; wall-clock steps/s does."""
    rng = random.Random(seed)
    cpu0 = time.process_time() + _child_cpu(controller)
    t = time.perf_counter()
    for _ in range(steps):
        _read_all(controller.step(action=rng.choice(ACTIONS)))
    wall = time.perf_counter() - t
    cpu = time.process_time() + _child_cpu(controller) - cpu0
    return steps / wall, 1000 * cpu / steps


def main() -> int:
    p = OneLineArgumentParser(
        prog="benchmarks/thor_lite_build_fps.py", description=__doc__.splitlines()[0]
    )
    p.add_argument("--steps", type=int, default=200, help="steps per round")
    p.add_argument("--repeats", type=int, default=5, help="rounds per controller (interleaved)")
    p.add_argument("--size", type=int, default=224, help="frame width and height")
    p.add_argument("--scene", default="FloorPlan1")
    args = p.parse_args()
    with report_usage_errors(p.prog):
        check_int("--steps", args.steps, 1)
        check_int("--repeats", args.repeats, 1)
        check_int("--size", args.size, 16)
    kinds = ("in-process", "build")
    ctrl: Dict[str, Any] = {}
    startup: Dict[str, float] = {}
    try:
        for k in kinds:
            ctrl[k], startup[k] = _start(k, args.scene, args.size)
        fps: Dict[str, List[float]] = {k: [] for k in kinds}
        cpu: Dict[str, List[float]] = {k: [] for k in kinds}
        for r in range(args.repeats):
            for k in kinds if r % 2 == 0 else kinds[::-1]:
                rate, ms = _round(ctrl[k], args.steps, seed=r)
                fps[k].append(rate)
                cpu[k].append(ms)
    finally:
        for c in ctrl.values():
            c.stop()
    med = {k: statistics.median(v) for k, v in fps.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    overhead = med["in-process"] / med["build"] - 1.0
    cpu_overhead = cpu_med["build"] / cpu_med["in-process"] - 1.0
    rows = [
        (
            k,
            f"{med[k]:.1f}",
            f"{1000 / med[k]:.2f}",
            f"{cpu_med[k]:.2f}",
            " ".join(f"{x:.1f}" for x in fps[k]),
            f"{startup[k]:.2f}",
        )
        for k in kinds
    ]
    lines = [
        f"# thor_lite through ai2thor's client vs in-process ({args.size}x{args.size}, RGB+depth+instance+"
        f"metadata, {args.scene}, {args.repeats} interleaved rounds of {args.steps} steps, "
        f"{platform.processor() or platform.machine()})",
        "",
    ]
    lines += markdown_table(
        (
            "controller",
            "median steps/s",
            "ms/step",
            "CPU ms/step",
            "rounds (steps/s)",
            "start-up s",
        ),
        rows,
        "lrrrrr",
    )
    lines += [
        "",
        f"Per-step overhead of the build: {100 * overhead:+.1f} % wall-clock, {100 * cpu_overhead:+.1f} % "
        "CPU (client + build process) (target: at most +20 %).",
    ]
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "thor_lite_build_fps.md", text)
    write_json(
        RESULTS_DIR / "thor_lite_build_fps.json",
        {
            "args": vars(args),
            "steps_per_s": fps,
            "median": med,
            "cpu_ms_per_step": cpu,
            "startup_s": startup,
            "overhead": overhead,
            "cpu_overhead": cpu_overhead,
        },
    )
    return 0


if __name__ == "__main__":
    run_cli(main)
