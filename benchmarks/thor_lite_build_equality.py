"""Equality of thor_lite in-process and thor_lite through ai2thor's client (thor_lite.build).

    python benchmarks/thor_lite_build_equality.py [--data data/rearrange/val.pkl.gz] [--episodes 20]

Runs the same rearrangement episodes (1-phase, greedy expert) on backend="thor_lite" and on
backend="thor" with thor_executable="thor_lite", with RGB + depth + instance segmentation on,
and compares per episode: the metrics, every action's success, and the RGB, depth and
instance-segmentation frames after every step (SHA-1 of the raw bytes). Episodes are taken
round-robin over the file's scenes. Writes benchmarks/results/thor_lite_build_equality.{md,json}.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

from _common import RESULTS_DIR, markdown_table, run_cli, write_json, write_markdown
from common.cli import OneLineArgumentParser, check_input_file, check_int, report_usage_errors


def _digest(a: Any) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


def _pick(data: "OrderedDict[str, List[Dict[str, Any]]]", n: int) -> "OrderedDict[str, List[Dict[str, Any]]]":
    """The first n episodes taken round-robin over scenes (one per scene before a second)."""
    out: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    depth = 0
    while sum(len(v) for v in out.values()) < n and any(len(v) > depth for v in data.values()):
        for scene, eps in data.items():
            if len(eps) > depth and sum(len(v) for v in out.values()) < n:
                out.setdefault(scene, []).append(eps[depth])
        depth += 1
    return out


def run_episodes(episodes, env_kwargs: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Per episode: metrics, action successes and per-step frame digests."""
    from allenact.base_abstractions.sensor import SensorSuite

    from rearrange.tasks import RearrangeTaskSampler

    sampler = RearrangeTaskSampler(
        run_walkthrough_phase=False, run_unshuffle_phase=True, stage="val", scenes_to_task_spec_dicts=episodes,
        rearrange_env_kwargs=env_kwargs, sensors=SensorSuite([]), max_steps={"walkthrough": 250, "unshuffle": 500},
        epochs=1, seed=0)
    out = []
    try:
        while (task := sampler.next_task()) is not None:
            ok, frames = [], []
            while not task.is_done():
                action, _ = task.query_expert()
                task.step(action)
                ev = task.env.last_event
                ok.append(bool(ev.metadata["lastActionSuccess"]))
                frames.append((_digest(ev.frame), _digest(ev.depth_frame.astype(np.float32)),
                               _digest(ev.instance_segmentation_frame)))
            m = task.metrics()
            out.append({"scene": m["task_info"]["scene"], "index": m["task_info"]["index"],
                        "metrics": _plain({k: v for k, v in m.items() if k != "task_info"}),
                        "success": ok, "frames": frames})
    finally:
        sampler.close()
    return out


def main() -> int:
    from rearrange.dataset import dataset_path, load_dataset

    p = OneLineArgumentParser(prog="benchmarks/thor_lite_build_equality.py", description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=dataset_path("val"), help="a rearrangement .pkl.gz split")
    p.add_argument("--episodes", type=int, default=20)
    args = p.parse_args()
    with report_usage_errors(p.prog):
        check_int("--episodes", args.episodes, 1)
        check_input_file("--data", args.data)
    episodes = _pick(load_dataset(args.data), args.episodes)
    render = {"renderDepthImage": True, "renderInstanceSegmentation": True}
    lite = run_episodes(episodes, {"controller_kwargs": dict(render)})
    thor = run_episodes(episodes, {"backend": "thor", "controller_kwargs": dict(render, thor_executable="thor_lite")})
    rows, equal = [], 0
    for a, b in zip(lite, thor):
        same_frames = sum(x == y for x, y in zip(a["frames"], b["frames"]))
        same = a["metrics"] == b["metrics"] and a["success"] == b["success"] and same_frames == len(a["frames"]) \
            and len(a["frames"]) == len(b["frames"])
        equal += same
        rows.append((f"{a['scene']}/{a['index']}", len(a["frames"]), "yes" if a["metrics"] == b["metrics"] else "NO",
                     "yes" if a["success"] == b["success"] else "NO", f"{same_frames}/{len(a['frames'])}",
                     f"{a['metrics'].get('unshuffle/success', '')}"))
    lines = [f"# thor_lite in-process vs through ai2thor's client: {len(lite)} episodes of {args.data.name}", ""]
    lines += markdown_table(("episode", "steps", "metrics equal", "successes equal", "steps with equal frames",
                             "success"), rows, "lrllrr")
    lines += ["", f"{equal}/{len(lite)} episodes identical (metrics, action successes, RGB/depth/instance frames)."]
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "thor_lite_build_equality.md", text)
    write_json(RESULTS_DIR / "thor_lite_build_equality.json", {"data": str(args.data), "lite": lite, "thor": thor})
    return 0 if equal == len(lite) else 1


if __name__ == "__main__":
    run_cli(main)
