"""The options of ``scripts/train_alfred_gpu.sh`` (data sizes, frames, mask decoders, ablations,
inference options, seed) as one frozen dataclass read from a JSON file, instead of a dozen
environment variables; the script keeps only machine settings in its environment.

    python -m baseline_configs.alfred.gpu_run [OPTIONS.json] [--dry-run]

prints the options as shell assignments the script evaluates, or one line naming the bad field
and value (exit 2). ``--dry-run`` gives the tiny CPU defaults of ``DRY_RUN=1``; a file's values
win over either set of defaults. ``alfred_seq2seq_pm_lite_gpu_run.json`` (next to this module)
holds the options of the run that made ``pretrained_model_ckpts/alfred_seq2seq_pm_gpu/``.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Mapping, Optional, Tuple

from common.run_options import (
    GpuRunOptionsError,
    check_whole_numbers,
    load_options,
    options_main,
)

__all__ = ["ABLATION_RUNS", "AlfredGpuRunOptions", "GpuRunOptionsError", "main"]

#: the imitation runs that may train beside Seq2Seq+PM (`AlfredSeq2SeqILConfig`, ``ablation``)
ABLATION_RUNS = ("seq2seq", "no_language")

#: the ``DRY_RUN=1`` sizes: every stage in seconds on a CPU
DRY_RUN_DEFAULTS = {
    "train": 2,
    "valid": 1,
    "il_frames": 60,
    "dagger_frames": 32,
    "samplers": 1,
    "aug_per_demo": 1,
}


@dataclass(frozen=True, kw_only=True)
class AlfredGpuRunOptions:
    """What one run of the GPU script trains; defaults are the script's historical ones."""

    seed: int = 0
    #: demonstration indices generated for train and for each of valid_seen / valid_unseen
    train: int = 260
    valid: int = 40
    aug_per_demo: int = 3
    il_frames: int = 400_000
    #: 0 = no DAgger: only the imitation checkpoints ship
    dagger_frames: int = 65_536
    #: thor_lite samplers of the DAgger run
    samplers: int = 16
    spatial_mask: bool = False
    subcell_mask: bool = False
    #: imitation runs trained beside Seq2Seq+PM, of `ABLATION_RUNS`
    ablations: Tuple[str, ...] = ()
    #: the learned agents' inference options, written into the shipped checkpoints
    agent_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_whole_numbers(
            self,
            (
                "seed",
                "train",
                "valid",
                "aug_per_demo",
                "il_frames",
                "dagger_frames",
                "samplers",
            ),
        )
        for name in ("spatial_mask", "subcell_mask"):
            if not isinstance(getattr(self, name), bool):
                raise GpuRunOptionsError(f"{name}: {getattr(self, name)!r} is not true or false")
        if isinstance(self.ablations, str) or not isinstance(self.ablations, (list, tuple)):
            raise GpuRunOptionsError(f"ablations: {self.ablations!r} is not a list")
        for a in self.ablations:
            if a not in ABLATION_RUNS:
                raise GpuRunOptionsError(
                    f"ablations: {a!r} is not one of {','.join(ABLATION_RUNS)}"
                )
        object.__setattr__(self, "ablations", tuple(self.ablations))
        if not isinstance(self.agent_kwargs, dict):
            raise GpuRunOptionsError(
                f"agent_kwargs: {json.dumps(self.agent_kwargs)} is not a JSON object"
            )

    @classmethod
    def load(cls, path: Optional[Path], dry_run: bool = False) -> "AlfredGpuRunOptions":
        """The options of a JSON file (absent: all defaults) over the (dry-run) defaults."""
        return load_options(cls, path, DRY_RUN_DEFAULTS if dry_run else {})

    def shell(self) -> List[str]:
        """``NAME=value`` lines, quoted for bash, in the script's variable names."""
        values = {
            "SEED": self.seed,
            "TRAIN": self.train,
            "VALID": self.valid,
            "AUG_PER_DEMO": self.aug_per_demo,
            "IL_FRAMES": self.il_frames,
            "DAGGER_FRAMES": self.dagger_frames,
            "SAMPLERS": self.samplers,
            "SPATIAL_MASK": json.dumps(self.spatial_mask),
            "SUBCELL_MASK": json.dumps(self.subcell_mask),
            "ABLATIONS": ",".join(self.ablations),
            "AGENT_KWARGS": json.dumps(dict(self.agent_kwargs)),
        }
        return [f"{k}={shlex.quote(str(v))}" for k, v in values.items()]


def main(argv: Optional[List[str]] = None) -> int:
    return options_main(AlfredGpuRunOptions.load, "baseline_configs.alfred.gpu_run", argv)


if __name__ == "__main__":
    sys.exit(main())
