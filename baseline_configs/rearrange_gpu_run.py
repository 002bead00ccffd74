"""The options of ``scripts/train_rearrange_gpu.sh`` (config, steps, samplers, frame size, seed) as
one frozen dataclass read from a JSON file, so the script's environment keeps only machine settings.

    python -m baseline_configs.rearrange_gpu_run [OPTIONS.json] [--dry-run]

prints the options as shell assignments the script evaluates, or one line naming the bad field
and value (exit 2). ``--dry-run`` gives the tiny CPU sizes of ``DRY_RUN=1``; a file's values win
over either set of defaults.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from common.run_options import (
    GpuRunOptionsError,
    check_whole_numbers,
    load_options,
    options_main,
)

__all__ = ["RearrangeGpuRunOptions", "GpuRunOptionsError", "main"]

REPO = Path(__file__).resolve().parents[1]

#: the ``DRY_RUN=1`` sizes: every stage in seconds on a CPU
DRY_RUN_DEFAULTS = {
    "training_steps": 128,
    "samplers": 2,
    "screen_size": 64,
    "train_split": "train_subset",
    "episodes_per_scene": 1,
    "num_steps": 16,
    "test_processes": 1,
    "test_episodes_per_scene": 1,
    "test_scenes": ["FloorPlan21"],
}


@dataclass(frozen=True, kw_only=True)
class RearrangeGpuRunOptions:
    """What one run of the GPU script trains and evaluates (the 1-phase SimpleConv DAgger run)."""

    seed: int = 0
    #: the allenact config, relative to baseline_configs/
    config: str = "one_phase/one_phase_rgb_dagger.py"
    training_steps: int = 5_000_000
    #: thor_lite training samplers (one per CPU core of a 16-core GPU node)
    samplers: int = 16
    screen_size: int = 224
    train_split: str = "train"
    #: 0 = every episode of the split
    episodes_per_scene: int = 0
    #: rollout length (0 = the config's, 64 as in the official pipelines)
    num_steps: int = 0
    #: evaluation of the last checkpoint on val: processes, episodes per scene (0 = all), scenes
    test_processes: int = 8
    test_episodes_per_scene: int = 2
    test_scenes: tuple = ()

    def __post_init__(self) -> None:
        check_whole_numbers(
            self,
            (
                "seed",
                "training_steps",
                "samplers",
                "screen_size",
                "episodes_per_scene",
                "num_steps",
                "test_processes",
                "test_episodes_per_scene",
            ),
        )
        for name in ("training_steps", "samplers", "screen_size", "test_processes"):
            if getattr(self, name) < 1:
                raise GpuRunOptionsError(f"{name}: {getattr(self, name)!r} is not at least 1")
        if (
            not isinstance(self.config, str)
            or not (REPO / "baseline_configs" / self.config).is_file()
        ):
            raise GpuRunOptionsError(
                f"config: {self.config!r} is not a file under baseline_configs/"
            )
        if self.train_split not in ("train", "train_subset"):
            raise GpuRunOptionsError(
                f"train_split: {self.train_split!r} is not one of train,train_subset"
            )
        scenes = self.test_scenes
        if isinstance(scenes, str) or not isinstance(scenes, (list, tuple)):
            raise GpuRunOptionsError(f"test_scenes: {json.dumps(scenes)} is not a list")
        if not all(isinstance(s, str) and s.startswith("FloorPlan") for s in scenes):
            raise GpuRunOptionsError(f"test_scenes: {json.dumps(scenes)} are not scene names")
        object.__setattr__(self, "test_scenes", tuple(scenes))

    @classmethod
    def load(cls, path: Optional[Path], dry_run: bool = False) -> "RearrangeGpuRunOptions":
        """The options of a JSON file (absent: all defaults) over the (dry-run) defaults."""
        return load_options(cls, path, DRY_RUN_DEFAULTS if dry_run else {})

    def train_kwargs(self) -> Dict[str, Any]:
        """The allenact --config_kwargs of the training run."""
        kw: Dict[str, Any] = {
            "num_train_processes": self.samplers,
            "training_steps": self.training_steps,
            "save_interval": max(1, self.training_steps // 10),
            "screen_size": self.screen_size,
            "train_split": self.train_split,
            # one approx_fps reading per round of rollouts
            "metric_accumulate_interval": self.samplers * (self.num_steps or 64),
        }
        if self.episodes_per_scene:
            kw["episodes_per_scene"] = self.episodes_per_scene
        if self.num_steps:
            kw["num_steps"] = self.num_steps
        return kw

    def test_kwargs(self) -> Dict[str, Any]:
        """The allenact --config_kwargs of the evaluation of the last checkpoint on val."""
        kw: Dict[str, Any] = {
            "num_test_processes": self.test_processes,
            "screen_size": self.screen_size,
            "test_stage": "val",
        }
        if self.test_episodes_per_scene:
            kw["max_test_episodes_per_scene"] = self.test_episodes_per_scene
        if self.test_scenes:
            kw["test_scenes"] = list(self.test_scenes)
        return kw

    def shell(self) -> List[str]:
        """``NAME=value`` lines, quoted for bash, in the script's variable names."""
        values = {
            "SEED": self.seed,
            "CONFIG": self.config,
            "SAMPLERS": self.samplers,
            "TRAIN_KW": json.dumps(self.train_kwargs()),
            "TEST_KW": json.dumps(self.test_kwargs()),
        }
        return [f"{k}={shlex.quote(str(v))}" for k, v in values.items()]


def main(argv: Optional[List[str]] = None) -> int:
    return options_main(RearrangeGpuRunOptions.load, "baseline_configs.rearrange_gpu_run", argv)


if __name__ == "__main__":
    sys.exit(main())
