"""Equality of thor_lite in-process and thor_lite through ai2thor's client (thor_lite.build).

    python benchmarks/thor_lite_build_equality.py [--data data/rearrange/val.pkl.gz] [--episodes 20]
        [--alfred ../shared/data/alfred/json_2.1.0 --trajectories 10]

Runs the same rearrangement episodes (1-phase, greedy expert) on backend="thor_lite" and on
backend="thor" with thor_executable="thor_lite", with RGB + depth + instance segmentation on,
and compares per episode: the metrics, every action's success, and the RGB, depth and
instance-segmentation frames after every step (SHA-1 of the raw bytes). Episodes are taken
round-robin over the file's scenes. With --alfred, real ALFRED trajectories (traj_data.json
with a plan under that folder, sorted) are replayed both ways too (alfred_task.evaluation.replay.replay_trajectory: recorded
navigation, interactions through their recorded masks), comparing every step's success and
frames and the replay's result. Writes benchmarks/results/thor_lite_build_equality.{md,json}.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np

from _common import RESULTS_DIR, markdown_table, run_cli, write_json, write_markdown
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_dir,
    check_input_file,
    check_int,
    report_usage_errors,
)


def _digest(a: Any) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


def _pick(
    data: "OrderedDict[str, List[Dict[str, Any]]]", n: int
) -> "OrderedDict[str, List[Dict[str, Any]]]":
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
        run_walkthrough_phase=False,
        run_unshuffle_phase=True,
        stage="val",
        scenes_to_task_spec_dicts=episodes,
        rearrange_env_kwargs=env_kwargs,
        sensors=SensorSuite([]),
        max_steps={"walkthrough": 250, "unshuffle": 500},
        epochs=1,
        seed=0,
    )
    out = []
    try:
        while (task := sampler.next_task()) is not None:
            ok, frames = [], []
            while not task.is_done():
                action, _ = task.query_expert()
                task.step(action)
                ev = task.env.last_event
                ok.append(bool(ev.metadata["lastActionSuccess"]))
                frames.append(
                    (
                        _digest(ev.frame),
                        _digest(ev.depth_frame.astype(np.float32)),
                        _digest(ev.instance_segmentation_frame),
                    )
                )
            m = task.metrics()
            out.append(
                {
                    "scene": m["task_info"]["scene"],
                    "index": m["task_info"]["index"],
                    "metrics": _plain({k: v for k, v in m.items() if k != "task_info"}),
                    "success": ok,
                    "frames": frames,
                }
            )
    finally:
        sampler.close()
    return out


class _Recorder:
    """An AlfredEnv that remembers each step's success and frame digests."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self.steps: List[tuple] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def _note(self) -> None:
        ev = self._env.last_event
        self.steps.append(
            (
                bool(ev.metadata["lastActionSuccess"]),
                _digest(ev.frame),
                _digest(ev.depth_frame.astype(np.float32)),
                _digest(ev.instance_segmentation_frame),
            )
        )

    def step(self, *args: Any, **kwargs: Any) -> Any:
        out = self._env.step(*args, **kwargs)
        self._note()
        return out

    def va_interact(self, *args: Any, **kwargs: Any) -> Any:
        out = self._env.va_interact(*args, **kwargs)
        self._note()
        return out


def replay_alfred(paths: List[Path], backend: str) -> List[Dict[str, Any]]:
    """Per trajectory: the replay's result and every step's success and frame digests."""
    from alfred_task.evaluation.replay import replay_trajectory
    from alfred_task import constants as C
    from alfred_task.env.environment import AlfredEnv

    env = AlfredEnv(backend=backend, width=C.SCREEN_WIDTH, height=C.SCREEN_HEIGHT)
    out = []
    try:
        for path in paths:
            rec = _Recorder(env)
            result = replay_trajectory(rec, json.loads(path.read_text()))
            out.append({"trial": path.parent.name, "result": _plain(result), "steps": rec.steps})
    finally:
        env.controller.stop()
    return out


def _alfred_rows(lite: List[Dict[str, Any]], thor: List[Dict[str, Any]]) -> Tuple[List[tuple], int]:
    rows, equal = [], 0
    for a, b in zip(lite, thor):
        same_steps = sum(x == y for x, y in zip(a["steps"], b["steps"]))
        same = a["result"] == b["result"] and a["steps"] == b["steps"]
        equal += same
        rows.append(
            (
                a["trial"],
                len(a["steps"]),
                "yes" if a["result"] == b["result"] else "NO",
                f"{same_steps}/{len(a['steps'])}",
                f"{a['result']['ok_steps']}/{a['result']['steps']}",
            )
        )
    return rows, equal


def main() -> int:
    from rearrange.dataset import dataset_path, load_dataset

    p = OneLineArgumentParser(
        prog="benchmarks/thor_lite_build_equality.py", description=__doc__.splitlines()[0]
    )
    p.add_argument(
        "--data", type=Path, default=dataset_path("val"), help="a rearrangement .pkl.gz split"
    )
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument(
        "--alfred",
        type=Path,
        default=None,
        help="a folder of ALFRED traj_data.json files to replay",
    )
    p.add_argument("--trajectories", type=int, default=10, help="how many of them (sorted by path)")
    args = p.parse_args()
    with report_usage_errors(p.prog):
        check_int("--episodes", args.episodes, 1)
        check_int("--trajectories", args.trajectories, 1)
        check_input_file("--data", args.data)
        trajs = (
            sorted(
                p
                for p in check_input_dir("--alfred", args.alfred).rglob("traj_data.json")
                if {"plan", "task_type"} <= set(json.loads(p.read_text()))
            )
            if args.alfred
            else []
        )
        if args.alfred and not trajs:
            raise UsageError(f"--alfred {args.alfred}: no traj_data.json below it")
    episodes = _pick(load_dataset(args.data), args.episodes)
    render = {"renderDepthImage": True, "renderInstanceSegmentation": True}
    lite = run_episodes(episodes, {"controller_kwargs": dict(render)})
    thor = run_episodes(
        episodes,
        {"backend": "thor", "controller_kwargs": dict(render, thor_executable="thor_lite")},
    )
    rows, equal = [], 0
    for a, b in zip(lite, thor):
        same_frames = sum(x == y for x, y in zip(a["frames"], b["frames"]))
        same = (
            a["metrics"] == b["metrics"]
            and a["success"] == b["success"]
            and same_frames == len(a["frames"])
            and len(a["frames"]) == len(b["frames"])
        )
        equal += same
        rows.append(
            (
                f"{a['scene']}/{a['index']}",
                len(a["frames"]),
                "yes" if a["metrics"] == b["metrics"] else "NO",
                "yes" if a["success"] == b["success"] else "NO",
                f"{same_frames}/{len(a['frames'])}",
                f"{a['metrics'].get('unshuffle/success', '')}",
            )
        )
    lines = [
        f"# thor_lite in-process vs through ai2thor's client: {len(lite)} episodes of {args.data.name}",
        "",
    ]
    lines += markdown_table(
        (
            "episode",
            "steps",
            "metrics equal",
            "successes equal",
            "steps with equal frames",
            "success",
        ),
        rows,
        "lrllrr",
    )
    lines += [
        "",
        f"{equal}/{len(lite)} episodes identical (metrics, action successes, RGB/depth/instance frames).",
    ]
    alfred: Dict[str, Any] = {}
    ok = equal == len(lite)
    if trajs:
        import os

        paths = trajs[: args.trajectories]
        alfred["lite"] = replay_alfred(paths, "thor_lite")
        os.environ["THOR_EXECUTABLE"] = (
            "thor_lite"  # also selects thor_lite's THOR 2.1.0 pose rules
        )
        alfred["thor"] = replay_alfred(paths, "thor")
        arows, aequal = _alfred_rows(alfred["lite"], alfred["thor"])
        lines += ["", f"## ALFRED replays ({len(paths)} trajectories of {args.alfred})", ""]
        lines += markdown_table(
            (
                "trial",
                "steps",
                "result equal",
                "steps equal (success + frames)",
                "steps that succeed",
            ),
            arows,
            "lrlrr",
        )
        lines += [
            "",
            f"{aequal}/{len(paths)} replays identical (result, every step's success and frames).",
        ]
        ok = ok and aequal == len(paths)
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "thor_lite_build_equality.md", text)
    write_json(
        RESULTS_DIR / "thor_lite_build_equality.json",
        {"data": str(args.data), "lite": lite, "thor": thor, "alfred": alfred},
    )
    return 0 if ok else 1


if __name__ == "__main__":
    run_cli(main)
