"""Run the greedy unshuffle expert (1-phase) over a rearrangement split and report metrics.

    python benchmarks/rearrange_expert.py --stage val                       # shipped thor_lite split
    python benchmarks/rearrange_expert.py --data ../shared/data/rearrangement/2023_val.pkl.gz
    python benchmarks/rearrange_expert.py --stage val --episodes-per-scene 5 --processes 2

Prints % Fixed Strict, success and energy per room type and overall, expert steps/s, and a
failure taxonomy (each object wrong at the end, by the expert's last failure on it), and
writes the markdown tables, plus per-episode JSON with those reasons, to benchmarks/results/.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
from tqdm import tqdm

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown
from common.cli import OneLineArgumentParser, check_int, check_output_file, report_usage_errors
from common.procs import ignore_sigint, stop_children_on_signals

ROOMS = {0: "kitchen", 2: "living room", 3: "bedroom", 4: "bathroom"}


def room_of(scene: str) -> str:
    n = int(scene.replace("FloorPlan", ""))
    return ROOMS[n // 100]


def _nearest_reachable(task, pos: Dict[str, float]) -> float:
    """Horizontal distance from `pos` to the closest reachable grid cell (tells hidden from out of reach)."""
    cells = task.unshuffle_env.reachable_positions()
    return min(
        (float(np.hypot(c["x"] - pos["x"], c["z"] - pos["z"])) for c in cells), default=float("inf")
    )


def unfixed_reasons(task, steps: int) -> List[Dict[str, str]]:
    """Why each object that is wrong at the end is wrong: the expert's own note, else a time limit/never tried.

    Objects that were right at the start and wrong at the end are 'disturbed' (they break Fixed Strict).
    """
    from rearrange.pose_metrics import pose_difference_energy

    ips, gps, cps = task.unshuffle_env.poses
    notes = task.greedy_expert.failure_reasons if task.greedy_expert is not None else {}
    timed_out = steps >= task.max_steps and not task._did_done
    out = []
    for i, g, c in zip(ips, gps, cps):
        if pose_difference_energy(g, c) <= 0:
            continue
        if pose_difference_energy(g, i) <= 0:
            reason = "disturbed (newly misplaced)"
        elif g["name"] in notes:
            reason = notes[g["name"]]
        else:
            reason = "time limit" if timed_out else "expert never tried"
        if reason.endswith("(hidden/unreachable)"):
            where = g if reason.startswith("goal") else c
            far = (
                where["position"] is not None and _nearest_reachable(task, where["position"]) > 1.5
            )
            reason = reason.replace(
                "(hidden/unreachable)", "(no reachable cell within 1.5 m)" if far else "(hidden)"
            )
        out.append({"name": g["name"], "type": g["type"], "reason": reason})
    return out


def run_scene(args: Tuple[str, List[Dict[str, Any]], str]) -> List[Dict[str, Any]]:
    scene, episodes, stage = args
    from allenact.base_abstractions.sensor import SensorSuite

    from rearrange.tasks import RearrangeTaskSampler

    sampler = RearrangeTaskSampler(
        run_walkthrough_phase=False,
        run_unshuffle_phase=True,
        stage=stage,
        scenes_to_task_spec_dicts=OrderedDict({scene: episodes}),
        rearrange_env_kwargs={},
        sensors=SensorSuite([]),
        max_steps=500,
        epochs=1,
        seed=0,
    )
    out = []
    try:
        while True:
            task = sampler.next_task()
            if task is None:
                break
            t0, n = time.perf_counter(), 0
            while not task.is_done():
                action, ok = task.query_expert()
                task.step(action)
                n += 1
            m = task.metrics()
            info = m.pop("task_info")
            out.append(
                {
                    "scene": scene,
                    "unique_id": info["unique_id"],
                    "steps": n,
                    "seconds": time.perf_counter() - t0,
                    "plan_ms": [1e3 * x for x in task.greedy_expert.plan_seconds[1:]],
                    "setup_ms": 1e3 * task.greedy_expert.plan_seconds[0],
                    "unfixed": unfixed_reasons(task, n),
                    **m,
                }
            )
    finally:
        sampler.close()
    return out


def main(argv=None) -> int:
    ap = OneLineArgumentParser(
        prog="benchmarks/rearrange_expert.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--stage", default="val", help="thor_lite split to load (data/rearrange/<stage>.pkl.gz)"
    )
    ap.add_argument(
        "--data", type=Path, help="explicit .pkl.gz file (e.g. the official 2023 val split)"
    )
    ap.add_argument(
        "--year",
        type=int,
        help="the official split of that year, data/<year>/<stage>.pkl.gz "
        "(python -m rearrange.download data --years <year>)",
    )
    ap.add_argument("--episodes-per-scene", type=int, default=None)
    ap.add_argument("--processes", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from rearrange.dataset import DatasetError, load_dataset, load_stage

    name = (
        args.data.stem.replace(".pkl", "")
        if args.data
        else (f"{args.year}_" if args.year else "") + args.stage
    )
    out = args.out or RESULTS_DIR / f"rearrange_expert_{name}.md"
    with report_usage_errors(ap.prog, DatasetError):
        check_int("--processes", args.processes, 1)
        check_int("--episodes-per-scene", args.episodes_per_scene, 1)
        check_output_file("--out", out)
        check_output_file("--out (json next to it)", out.with_suffix(".json"))
        data = load_dataset(args.data) if args.data else load_stage(args.stage, year=args.year)
    with stop_children_on_signals(ap.prog):
        return _run(args, data, out)


def _run(args: argparse.Namespace, data, out: Path) -> int:
    label = (
        args.data.name
        if args.data
        else (f"official {args.year} {args.stage}" if args.year else f"thor_lite {args.stage}")
    )
    jobs = [
        (s, eps[: args.episodes_per_scene] if args.episodes_per_scene else eps, args.stage)
        for s, eps in data.items()
    ]
    t0 = time.perf_counter()
    results: List[Dict[str, Any]] = []
    ctx = mp.get_context("forkserver")
    with ctx.Pool(args.processes, initializer=ignore_sigint) as pool:
        for rows in tqdm(pool.imap_unordered(run_scene, jobs), total=len(jobs), desc="scenes"):
            results.extend(rows)
    wall = time.perf_counter() - t0

    by_room: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_room[room_of(r["scene"])].append(r)
    lines = [
        f"# Greedy expert, 1-phase, on {label}",
        "",
        "| rooms | episodes | % Fixed Strict | success | start energy | end energy | steps (mean) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, rs: List[Dict[str, Any]]) -> str:
        f = lambda k: float(np.mean([r[f"unshuffle/{k}"] for r in rs]))
        return (
            f"| {name} | {len(rs)} | {100 * f('prop_fixed_strict'):.1f} | {100 * f('success'):.1f} | "
            f"{f('start_energy'):.2f} | {f('end_energy'):.2f} | {np.mean([r['steps'] for r in rs]):.1f} |"
        )

    for room in ROOMS.values():
        if by_room.get(room):
            lines.append(row(room, by_room[room]))
    lines.append(row("**all**", results))
    steps = sum(r["steps"] for r in results)
    plan = [ms for r in results for ms in r["plan_ms"]] or [float("nan")]
    env_seconds = sum(r["seconds"] for r in results)
    lines += [
        "",
        f"{steps} expert steps in {wall:.0f} s wall on {args.processes} processes "
        f"({steps / max(env_seconds, 1e-9):.1f} steps/s per process, median episode "
        f"{np.median([r['seconds'] for r in results]):.2f} s)",
        f"expert planning per step (after the first): median "
        f"{np.median(plan):.2f} ms, mean {np.mean(plan):.2f} ms, p90 {np.percentile(plan, 90):.2f} ms "
        f"over {len(plan)} steps; first action of an episode: median "
        f"{np.median([r['setup_ms'] for r in results]):.1f} ms",
    ]
    lines += ["", *taxonomy_lines(results, by_room)]
    text = "\n".join(lines)
    print(text)
    write_markdown(out, text)
    write_json(out.with_suffix(".json"), results, indent=None, default=float)
    return 0


def taxonomy_lines(
    results: List[Dict[str, Any]], by_room: Dict[str, List[Dict[str, Any]]]
) -> List[str]:
    """Failure taxonomy: unfixed (or newly misplaced) objects by reason, overall and per room type."""
    rooms = [r for r in ROOMS.values() if by_room.get(r)]
    counts: Dict[str, Dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in results:
        for u in r["unfixed"]:
            counts[u["reason"]]["all"] += 1
            counts[u["reason"]][room_of(r["scene"])] += 1
    order = sorted(counts, key=lambda k: (-counts[k]["all"], k))
    rows = [[k, counts[k]["all"], *(counts[k][room] for room in rooms)] for k in order]
    rows.append(
        [
            "**total**",
            sum(counts[k]["all"] for k in order),
            *(sum(counts[k][room] for k in order) for room in rooms),
        ]
    )
    return [
        "## Failure taxonomy (objects wrong at the end, by the expert's last failure)",
        "",
        *markdown_table(["reason", "objects", *rooms], rows, "l" + "r" * (1 + len(rooms))),
    ]


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
