"""Speed of ALFRED's AllenAct task on thor_lite with online expert labels (what DAgger samplers do).

    python benchmarks/alfred_online_sampler.py --episodes 4 --follow 0.7

Runs episodes of ``alfred_task.alfred_task_samplers.AlfredTaskSampler`` over data/alfred_lite valid_seen. At
each step the learner takes the expert's label with probability --follow, else a random
navigation or interaction action (DAgger with partial teacher forcing). Every step queries
the expert (``expert_action`` + ``expert_mask`` sensors). Reports steps per second and CPU
milliseconds per step, without and with the inline ResNet-18 feature sensor, plus expert
label availability. Writes benchmarks/results/alfred_online_sampler.{json,md}.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from alfred_task.data.il_dataset import build_vocab
from alfred_task.alfred_tasks import ACTION_NAMES
from alfred_task.alfred_task_samplers import AlfredTaskSampler
from alfred_task.alfred_sensors import (
    AlfredExpertActionSensor,
    ExpertMaskSensor,
    GoalTokensSensor,
    InstructionTokensSensor,
    PrevActionSensor,
    ResnetFeatureSensor,
)
from alfred_task.data.traj_data import load_split_file

from _common import REPO, RESULTS_DIR, markdown_table, write_json, write_markdown

ROOT = REPO / "data" / "alfred_lite"


def run(episodes: int, follow: float, features: bool, seed: int) -> dict:
    splits = load_split_file(ROOT / "splits.json")
    sensors = [
        GoalTokensSensor(),
        InstructionTokensSensor(),
        AlfredExpertActionSensor(),
        ExpertMaskSensor(),
        PrevActionSensor(),
    ] + ([ResnetFeatureSensor("random_resnet18")] if features else [])
    sampler = AlfredTaskSampler(
        ROOT, splits, "valid_seen", sensors, build_vocab(ROOT, splits), seed=seed, max_steps=200
    )
    rng = np.random.default_rng(seed)
    steps = labelled = successes = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(episodes):
        task = sampler.next_task()
        obs = task.get_observations()
        while not task.is_done():
            action, ok = obs["expert_action"]
            labelled += int(ok)
            if not ok or rng.random() > follow:
                action = int(rng.integers(3, len(ACTION_NAMES)))
            obs = task.step(int(action)).observation
            steps += 1
        successes += int(task.metrics()["success"])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sampler.close()
    return {
        "features": features,
        "episodes": episodes,
        "steps": steps,
        "steps_per_s": round(steps / wall, 1),
        "cpu_ms_per_step": round(1000 * cpu / steps, 1),
        "labelled": round(labelled / steps, 3),
        "success": successes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument(
        "--follow", type=float, default=0.7, help="probability of taking the expert's action"
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)  # one core per sampler, as in training
    rows = [run(args.episodes, args.follow, f, args.seed) for f in (False, True)]
    header = list(rows[0])
    table = "\n".join(
        markdown_table(
            header, [[r[k] for k in header] for r in rows], "l" + "r" * (len(header) - 1)
        )
    )
    print(table)
    RESULTS_DIR.mkdir(exist_ok=True)
    write_json(RESULTS_DIR / "alfred_online_sampler.json", {"follow": args.follow, "rows": rows})
    write_markdown(
        RESULTS_DIR / "alfred_online_sampler.md",
        f"# ALFRED online sampler speed (follow {args.follow})\n\n" + table,
    )


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
