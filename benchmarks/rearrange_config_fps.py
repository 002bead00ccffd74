"""Training speed (allenact's approx_fps, environment steps per second) of the baseline config families.

    python benchmarks/rearrange_config_fps.py                          # SimpleConv and ResNet-18, 64 px
    python benchmarks/rearrange_config_fps.py --screen-size 224 --training-steps 512
    python benchmarks/rearrange_config_fps.py --family simpleconv=one_phase/one_phase_rgb_ppo.py

Each family trains its representative config with the real `allenact` runner on thor_lite
(`--processes` samplers, the shipped train_subset split, random-init visual trunks so no weights
are needed) for `--training-steps` steps and reports the median of the approx_fps values the runner
logs (the first interval, which includes start-up, is dropped). Writes
benchmarks/results/rearrange_config_fps.{md,json}; the allenact logs go under --work-dir.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from tqdm import tqdm

from _common import REPO, RESULTS_DIR, markdown_table, write_json, write_markdown
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_int,
    check_output_file,
    report_usage_errors,
)
from common.procs import stop_children_on_signals

FAMILIES = {  # family -> representative config under baseline_configs/ (the map family: its own helper)
    "simpleconv": "one_phase/one_phase_rgb_dagger.py",
    "resnet18": "one_phase/one_phase_rgb_resnet_dagger.py",
}
ROLLOUT_STEPS = 64  # the official num_steps of every baseline pipeline


def approx_fps(log_text: str) -> List[float]:
    """The approx_fps values of an allenact training log, in order."""
    return [float(v) for v in re.findall(r"approx_fps ([0-9.eE+-]+)", log_text)]


def run_family(name: str, config: str, args: Any, work: Path) -> Dict[str, Any]:
    """Train `config` briefly; its fps readings, wall time and exit status."""
    kwargs: Dict[str, Any] = {
        "num_train_processes": args.processes,
        "training_steps": args.training_steps,
        "screen_size": args.screen_size,
        "train_split": "train_subset",
        "metric_accumulate_interval": args.processes * ROLLOUT_STEPS,
        "save_interval": args.training_steps,
    }
    if "resnet" in config:  # the configs on frozen ResNet/CLIP features: no weights on our machines
        kwargs["pretrained"] = False
    log = work / f"{name}.log"
    cmd = [
        str(Path(sys.executable).with_name("allenact")),
        "-b",
        ".",
        f"baseline_configs/{config}",
        "-o",
        str(work / name),
        "-s",
        str(args.seed),
        "--config_kwargs",
        json.dumps(kwargs),
    ]
    start = time.monotonic()
    env = dict(os.environ)
    if args.torch_threads:  # torch's OpenMP threads spin against each other on a few busy cores
        env.update(OMP_NUM_THREADS=str(args.torch_threads), MKL_NUM_THREADS=str(args.torch_threads))
    with open(log, "w") as f:
        rc = subprocess.run(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    fps = approx_fps(log.read_text())
    steady = fps[1:] if len(fps) > 1 else fps
    return {
        "family": name,
        "config": config,
        "exit_status": rc,
        "wall_s": round(time.monotonic() - start, 1),
        "fps_readings": fps,
        "median_fps": round(statistics.median(steady), 2) if steady else None,
        "log": str(log),
    }


def write_report(out: Path, setting: str, results: List[Dict[str, Any]]) -> List[str]:
    """The markdown table (median fps, and its ratio to the first family's) and the JSON next to it."""
    base = results[0]["median_fps"] if results else None
    rows = [
        (
            r["family"],
            r["config"],
            r["median_fps"],
            f"{r['median_fps'] / base:.2f}" if base and r["median_fps"] else "-",
            len(r["fps_readings"]),
            r["wall_s"],
            r["exit_status"],
        )
        for r in results
    ]
    table = markdown_table(
        ["family", "config", "median fps", "ratio", "readings", "wall s", "exit"], rows, "llrrrrr"
    )
    write_markdown(
        out, "\n".join([f"# Training speed of the baseline configs ({setting})", "", *table])
    )
    write_json(out.with_suffix(".json"), {"setting": setting, "results": results})
    return table


def parse_args(argv: List[str]) -> Any:
    p = OneLineArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="NAME=CONFIG",
        help="family and config (relative to baseline_configs/); default: " + ", ".join(FAMILIES),
    )
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--training-steps", type=int, default=1024)
    p.add_argument("--screen-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="OMP/MKL threads per allenact process (0: torch's default, one per core)",
    )
    p.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="allenact outputs and logs (default: a temp dir)",
    )
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "rearrange_config_fps.md")
    args = p.parse_args(argv)
    for flag, value, low in (
        ("--processes", args.processes, 1),
        ("--training-steps", args.training_steps, 1),
        ("--screen-size", args.screen_size, 32),
        ("--torch-threads", args.torch_threads, 0),
    ):
        check_int(flag, value, low)
    families = dict(FAMILIES)
    if args.family:
        families = {}
        for item in args.family:
            name, sep, config = item.partition("=")
            if not sep or not (REPO / "baseline_configs" / config).is_file():
                raise UsageError(
                    f"--family {item!r}: expected NAME=CONFIG with CONFIG a file under baseline_configs/"
                )
            families[name] = config
    args.families = families
    check_output_file("--out", args.out)
    return args


def main(argv: List[str]) -> int:
    with report_usage_errors("rearrange_config_fps"):
        args = parse_args(argv)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="rearrange_fps_"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    with stop_children_on_signals("rearrange_config_fps"):
        for name, config in tqdm(args.families.items(), desc="config families"):
            results.append(run_family(name, config, args, work))
            print(
                f"{name}: median approx_fps {results[-1]['median_fps']} "
                f"(readings {results[-1]['fps_readings']}, exit {results[-1]['exit_status']})",
                flush=True,
            )
    setting = (
        f"{args.processes} samplers, {args.screen_size} px, {args.training_steps} steps, "
        f"rollouts of {ROLLOUT_STEPS}, {args.torch_threads or 'default'} torch thread(s) per process, "
        f"random-init trunks, thor_lite, train_subset"
    )
    print("\n".join(write_report(args.out, setting, results)))
    return 0 if all(r["exit_status"] == 0 and r["median_fps"] for r in results) else 1


if __name__ == "__main__":
    from common.cli import run_main

    run_main(lambda: main(sys.argv[1:]))
