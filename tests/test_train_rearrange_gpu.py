"""scripts/train_rearrange_gpu.sh, the 1-phase DAgger run for a GPU node: its DRY_RUN (tiny, CPU)
goes through every stage (training, FPS summary, evaluation of the last checkpoint), its options
come from a checked JSON file (`baseline_configs.rearrange_gpu_run`), and without a GPU the real
run stops at once with one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "train_rearrange_gpu.sh"


def _run(out: Path, timeout: int, options=None, **env: str) -> subprocess.CompletedProcess:
    args = ["bash", str(SCRIPT), str(out)]
    if options is not None:
        path = out.parent / f"{out.name}_options.json"
        path.write_text(options if isinstance(options, str) else json.dumps(options))
        args.append(str(path))
    return subprocess.run(
        args,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "SKIP_SETUP": "1", "PYTHON": sys.executable, **env},
    )


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU"
)
def test_without_a_gpu_the_real_run_stops_at_once_in_one_line(tmp_path):
    proc = _run(tmp_path / "run", 120)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "train_rearrange_gpu: no CUDA device here (DRY_RUN=1 runs a tiny CPU version)"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "options, line",
    [
        ({"samplers": 0}, "samplers: 0 is not at least 1"),
        ({"training_steps": -5}, "training_steps: -5 is not a whole number >= 0"),
        ({"train_split": "val"}, "train_split: 'val' is not one of train,train_subset"),
        ({"config": "nope.py"}, "config: 'nope.py' is not a file under baseline_configs/"),
        ({"test_scenes": "FloorPlan1"}, 'test_scenes: "FloorPlan1" is not a list'),
        (
            {"sampler": 4},
            "unknown option 'sampler' (options: seed, config, training_steps, "
            "samplers, screen_size, train_split, episodes_per_scene, num_steps, test_processes, "
            "test_episodes_per_scene, test_scenes)",
        ),
        ("[1, 2]", "options file {path}: not a JSON object"),
    ],
)
def test_bad_option_file_is_one_line(tmp_path, options, line):
    proc = _run(tmp_path / "run", 120, options, DRY_RUN="1")
    assert proc.returncode == 2
    path = tmp_path / "run_options.json"
    assert proc.stderr.strip() == line.format(path=path)
    assert proc.stdout == "" and not (tmp_path / "run").exists()


def test_dry_run_trains_reports_fps_and_evaluates(tmp_path):
    out = tmp_path / "run"
    proc = _run(out, 900, {"seed": 3}, DRY_RUN="1")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ckpts = sorted((out / "train" / "checkpoints").rglob("*__steps_*.pt"))
    assert ckpts and ckpts[-1].name.endswith("__steps_000000000128.pt")
    assert list((out / "train" / "tb").rglob("events.out.tfevents.*"))
    fps = json.loads((out / "fps.json").read_text())
    assert fps["samplers"] == 2 and fps["median_fps"] > 0 and len(fps["fps_readings"]) >= 2
    metrics = list((out / "test" / "metrics").rglob("*.json"))
    assert metrics
    rows = json.loads(metrics[0].read_text())
    tasks = rows[0]["tasks"]
    assert len(tasks) == 1 and tasks[0]["task_info"]["scene"] == "FloorPlan21"
    assert "training: one_phase/one_phase_rgb_dagger.py, 2 samplers" in proc.stdout


def _checkpoint(root: Path, step: int) -> dict:
    (path,) = list(root.rglob(f"*__steps_{step:012d}.pt"))
    return torch.load(path, map_location="cpu", weights_only=False)


def test_sigterm_then_the_same_command_continues_the_schedule(tmp_path):
    """A run stopped by SIGTERM after its second checkpoint leaves no process; the same command
    resumes from the newest checkpoint that loads (a truncated newer file is skipped) and ends
    at the same step as an uninterrupted run, with the same optimizer and pipeline counters.
    Up to the interruption the weights are identical; after it they differ (the samplers restart
    their episodes and the recurrent state and RNG streams are not in the checkpoint), which
    docs/rearrangement.md states."""
    options = {"seed": 3, "samplers": 1, "training_steps": 192, "num_steps": 16}
    whole = tmp_path / "whole"
    assert _run(whole, 900, options, DRY_RUN="1").returncode == 0

    cut = tmp_path / "cut"
    opts_path = tmp_path / "cut_options.json"
    opts_path.write_text(json.dumps(options))
    cmd = ["bash", str(SCRIPT), str(cut), str(opts_path)]
    env = {**os.environ, "SKIP_SETUP": "1", "PYTHON": sys.executable, "DRY_RUN": "1"}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not list(cut.rglob("*__steps_000000000064.pt")):
        assert proc.poll() is None and time.monotonic() < deadline, "no second checkpoint"
        time.sleep(0.2)
    time.sleep(0.5)  # let the checkpoint's write finish
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 143
    left = subprocess.run(["pgrep", "-f", str(cut)], capture_output=True, text=True).stdout
    assert left == ""
    done = sorted(cut.rglob("*__steps_*.pt"))
    assert done and not any(p.name.endswith("__steps_000000000192.pt") for p in done)
    last = max(int(p.name[-15:-3]) for p in done)
    (done[-1].parent / done[-1].name.replace(f"{last:012d}", f"{last + 1:012d}")).write_bytes(
        done[-1].read_bytes()[:100]
    )

    again = _run(cut, 900, options, DRY_RUN="1")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"resuming from {done[-1]}" in again.stdout
    for step in (32, last):
        a, b = _checkpoint(whole, step), _checkpoint(cut, step)
        for k, v in a["model_state_dict"].items():
            assert torch.equal(v, b["model_state_dict"][k]), (step, k)
    for step in range(last + 32, 193, 32):
        a, b = _checkpoint(whole, step), _checkpoint(cut, step)
        assert a["total_steps"] == b["total_steps"] == step
        assert a["training_pipeline_state_dict"] == b["training_pipeline_state_dict"]
        sa, sb = a["optimizer_state_dict"]["state"], b["optimizer_state_dict"]["state"]
        assert [float(s["step"]) for s in sa.values()] == [float(s["step"]) for s in sb.values()]
