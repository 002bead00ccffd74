"""Cost of the Seq2Seq training set (``scripts/gen_alfred_dataset.sh``): demonstrations with features.

    python benchmarks/alfred_dataset_gen.py --demos 10 --encoder random_resnet18

Runs ``alfred_task.gen.generate`` in this process (one worker, Fast Downward as a child
process) on a small sample and measures CPU seconds, not only wall time: on a shared machine
the wall clock mostly measures the other jobs, while CPU seconds per demonstration (this
process plus its children) predict a dedicated run, ``total CPU / cores``. The ResNet-18 part
is timed on its own (median of 3 batches of 32 frames, one thread). Prints a table and writes
benchmarks/results/alfred_dataset_gen.{json,md} with the full-run estimate.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from alfred_task.data.features import ResnetFeatures
from alfred_task.gen.generate import generate

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown


def _cpu() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def encoder_ms_per_frame(encoder: str) -> float:
    net = ResnetFeatures(encoder)
    frames = list(np.random.default_rng(0).integers(0, 256, (32, 300, 300, 3), dtype=np.uint8))
    times = []
    for _ in range(3):
        t = time.process_time()
        net(frames)
        times.append((time.process_time() - t) / len(frames))
    return 1000 * statistics.median(times)


def bench(demos: int, split: str, encoder: str, seed: int, out: Path) -> dict:
    wall, cpu = time.perf_counter(), _cpu()
    summary = generate(out, demos, seed=seed, workers=1, features=encoder, split=split)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    markers = [json.loads(p.read_text()) for p in (out / ".progress" / split).glob("*.json")]
    ok = [m for m in markers if "error" not in m]
    frames = sum(m["n_low"] + 1 for m in ok)
    disk = sum(p.stat().st_size for p in (out / split).rglob("*") if p.is_file())
    return {
        "demos": demos,
        "ok": len(ok),
        "failed": summary["failed"],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_s_per_demo": round(cpu / max(len(ok), 1), 2),
        "frames_per_demo": round(frames / max(len(ok), 1), 1),
        "mb_per_demo": round(disk / 2**20 / max(len(ok), 1), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--demos", type=int, default=10)
    ap.add_argument("--split", default="train")
    ap.add_argument("--encoder", default="random_resnet18")
    ap.add_argument("--seed", type=int, default=1000, help="not the dataset's seed: a fresh sample")
    ap.add_argument(
        "--full", type=int, default=2200, help="demonstrations of the full run (2000 + 2 x 100)"
    )
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)  # as each generation worker does
    with tempfile.TemporaryDirectory() as d:
        r = bench(args.demos, args.split, args.encoder, args.seed, Path(d))
    r["encoder"] = args.encoder
    r["encoder_cpu_ms_per_frame"] = round(encoder_ms_per_frame(args.encoder), 1)
    r["full_run_demos"] = args.full
    r["full_run_hours_on_cores"] = round(args.full * r["cpu_s_per_demo"] / args.cores / 3600, 2)
    r["cores"] = args.cores
    r["full_run_disk_gb"] = round(args.full * r["mb_per_demo"] / 1024, 1)
    rows = [(k, v) for k, v in r.items()]
    table = "\n".join(markdown_table(["what", "value"], rows, "lr"))
    print(table)
    RESULTS_DIR.mkdir(exist_ok=True)
    write_json(RESULTS_DIR / "alfred_dataset_gen.json", r)
    write_markdown(
        RESULTS_DIR / "alfred_dataset_gen.md", "# ALFRED dataset generation cost\n\n" + table
    )


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
