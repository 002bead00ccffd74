"""Write the trained map of a walkthrough_rgb_mapping_ppo checkpoint as a frozen-map weight file.

    python -m rearrange.export_map --checkpoint <exp_WalkthroughRGBMappingPPO...pt> \
        [--out pretrained_model_ckpts/pretrained_active_neural_slam_via_walkthrough_75m.pt]

The output is a plain Active Neural SLAM state dict, the format of the official
`pretrained_active_neural_slam_via_walkthrough_75m.pt`, which the frozen-map configs load (by
default from the path above). It is checked against the official map settings before it is
written, and written atomically.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Dict, Optional, Sequence

import torch

from common.atomic_io import write_bytes_atomic
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_file,
    check_output_file,
    report_usage_errors,
)

from .map_settings import MAP_CHECKPOINT_PATH
from .map_weights import PretrainedWeightsError, build_active_neural_slam, extract_map_state_dict

PROG = "python -m rearrange.export_map"


def map_state_from_checkpoint(path: Path) -> Dict[str, torch.Tensor]:
    """The `map.` parameters of an allenact checkpoint, checked to load strictly into the ANM."""
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UsageError(f"--checkpoint {path}: cannot load it ({type(e).__name__}: {e})") from None
    if not isinstance(ckpt, dict) or "model_state_dict" not in ckpt:
        raise UsageError(f"--checkpoint {path}: not an allenact checkpoint (no model_state_dict)")
    try:
        state = extract_map_state_dict(ckpt["model_state_dict"])
        build_active_neural_slam(seed=0).load_state_dict(state)
    except (PretrainedWeightsError, RuntimeError) as e:
        raise UsageError(f"--checkpoint {path}: {' '.join(str(e).split())[:300]}") from None
    return state


def export_map(checkpoint: Path, out: Path) -> Path:
    state = map_state_from_checkpoint(checkpoint)
    buf = io.BytesIO()
    torch.save(state, buf)
    return write_bytes_atomic(out, buf.getvalue())


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--checkpoint",
        type=Path,
        required=True,
        help="allenact checkpoint of walkthrough_rgb_mapping_ppo",
    )
    ap.add_argument("--out", type=Path, default=MAP_CHECKPOINT_PATH)
    args = ap.parse_args(argv)
    with report_usage_errors(PROG):
        check_input_file("--checkpoint", args.checkpoint)
        check_output_file("--out", args.out)
        out = export_map(args.checkpoint, args.out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)
